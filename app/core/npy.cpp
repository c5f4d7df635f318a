#include "npy.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

namespace ts {

namespace {

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw ValidationError(path + ": " + what);
}

// Value of `key` in the header dict, as its raw text (up to the next top-level comma or closing brace).
std::string dict_value(const std::string& header, const std::string& key, const std::string& path) {
  std::regex re("['\"]" + key + "['\"]\\s*:\\s*");
  std::smatch m;
  if (!std::regex_search(header, m, re)) bad(path, "the .npy header has no '" + key + "' entry");
  size_t pos = size_t(m.position(0) + m.length(0));
  int depth = 0;
  size_t end = pos;
  for (; end < header.size(); ++end) {
    char c = header[end];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
    if (depth < 0) break;
  }
  return header.substr(pos, end - pos + (end < header.size() && header[end] == ')' ? 1 : 0));
}

std::string strip_quotes(std::string s) {
  while (!s.empty() && (s.back() == ' ')) s.pop_back();
  if (s.size() >= 2 && (s.front() == '\'' || s.front() == '"')) s = s.substr(1, s.size() - 2);
  return s;
}

}  // namespace

HostMatrix read_npy(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) bad(path, std::string("cannot open (") + std::strerror(errno) + ")");
  f.seekg(0, std::ios::end);
  const std::streamoff file_size = f.tellg();
  f.seekg(0);
  unsigned char pre[10];
  if (file_size < 10 || !f.read(reinterpret_cast<char*>(pre), 10))
    bad(path, "too short to be a .npy file (" + std::to_string(file_size) + " bytes)");
  if (std::memcmp(pre, "\x93NUMPY", 6) != 0)
    bad(path, "not a .npy file (the magic string \\x93NUMPY is missing)");
  const int major = pre[6];
  uint64_t header_len = 0;
  std::streamoff header_start = 0;
  if (major == 1) {
    header_len = uint64_t(pre[8]) | (uint64_t(pre[9]) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    unsigned char more[2];
    if (!f.read(reinterpret_cast<char*>(more), 2)) bad(path, "truncated .npy header");
    header_len =
        uint64_t(pre[8]) | (uint64_t(pre[9]) << 8) | (uint64_t(more[0]) << 16) | (uint64_t(more[1]) << 24);
    header_start = 12;
  } else {
    bad(path, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(pre[7]));
  }
  if (std::streamoff(header_len) > file_size - header_start)
    bad(path, "truncated .npy header (needs " + std::to_string(header_len) + " bytes)");
  std::string header(size_t(header_len), '\0');
  f.read(header.data(), std::streamsize(header_len));

  const std::string descr = strip_quotes(dict_value(header, "descr", path));
  const std::string fortran = dict_value(header, "fortran_order", path);
  const std::string shape = dict_value(header, "shape", path);
  bool swap = false;
  if (descr == "<f4" || descr == "=f4" || descr == "f4") {
  } else if (descr == ">f4") {
    swap = true;
  } else {
    bad(path, "dtype '" + descr + "' is not float32 ('<f4'); convert with numpy: a.astype(np.float32)");
  }
  bool is_fortran;
  if (fortran.find("True") != std::string::npos)
    is_fortran = true;
  else if (fortran.find("False") != std::string::npos)
    is_fortran = false;
  else
    bad(path, "fortran_order '" + fortran + "' is neither True nor False");

  std::vector<int64_t> dims;
  {
    std::regex num("\\d+");
    for (auto it = std::sregex_iterator(shape.begin(), shape.end(), num); it != std::sregex_iterator();
         ++it) {
      const std::string d = it->str();
      if (d.size() > 12) bad(path, "dimension " + d + " is too large");
      dims.push_back(std::stoll(d));
    }
    if (shape.find('(') == std::string::npos) bad(path, "shape '" + shape + "' does not parse");
  }
  if (dims.size() != 2)
    bad(path,
        "the array is " + std::to_string(dims.size()) + "-D (shape " + shape + "); a 2-D matrix is needed");
  const int64_t rows = dims[0], cols = dims[1];
  if (rows < 1 || cols < 1) bad(path, "empty matrix (shape " + shape + ")");
  if (rows > kMaxDim || cols > kMaxDim)
    bad(path, "shape " + shape + " is above the limit of " + std::to_string(kMaxDim) + " per dimension");
  const uint64_t need = uint64_t(rows) * uint64_t(cols) * 4u;
  const uint64_t have = uint64_t(file_size - header_start - std::streamoff(header_len));
  if (have < need)
    bad(path, "truncated: shape " + shape + " needs " + std::to_string(need) + " data bytes, the file has " +
                  std::to_string(have));
  if (have > need)
    bad(path, "corrupt: " + std::to_string(have - need) + " bytes follow the data of shape " + shape);

  HostMatrix m(rows, cols);
  std::vector<float> raw(size_t(rows) * size_t(cols));
  if (!f.read(reinterpret_cast<char*>(raw.data()), std::streamsize(need)))
    bad(path, "read error in the data");
  if (swap) {
    for (float& v : raw) {
      uint32_t u;
      std::memcpy(&u, &v, 4);
      u = __builtin_bswap32(u);
      std::memcpy(&v, &u, 4);
    }
  }
  if (is_fortran) {  // column-major on disk: element (r, c) at c * rows + r
    for (int64_t c = 0; c < cols; ++c)
      for (int64_t r = 0; r < rows; ++r) m.at(r, c) = raw[size_t(c) * size_t(rows) + size_t(r)];
  } else {
    m.data = std::move(raw);
  }
  return m;
}

void write_npy(const std::string& path, const HostMatrix& m) {
  std::ostringstream h;
  h << "{'descr': '<f4', 'fortran_order': False, 'shape': (" << m.rows << ", " << m.cols << "), }";
  std::string header = h.str();
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 65535) throw std::runtime_error(path + ": .npy header too long");

  const std::string tmp = path + ".part";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) throw std::runtime_error(path + ": cannot write (" + std::strerror(errno) + ")");
    const unsigned char pre[10] = {0x93,
                                   'N',
                                   'U',
                                   'M',
                                   'P',
                                   'Y',
                                   1,
                                   0,
                                   (unsigned char)(header.size() & 0xff),
                                   (unsigned char)(header.size() >> 8)};
    f.write(reinterpret_cast<const char*>(pre), 10);
    f.write(header.data(), std::streamsize(header.size()));
    f.write(reinterpret_cast<const char*>(m.data.data()), std::streamsize(m.data.size() * sizeof(float)));
    f.flush();
    if (!f) {
      f.close();
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": write failed (disk full?)");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot move the finished file into place (" + std::strerror(errno) +
                             ")");
  }
}

}  // namespace ts
