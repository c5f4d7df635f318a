#include "core/io/npy.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <sstream>
#include <stdexcept>

namespace ts {

namespace {

[[noreturn]] void bad(const std::string& name, const std::string& what) {
  throw ValidationError(name + ": " + what);
}

// [SECTION] The header: a Python dict literal, e.g. {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3),
// } A single forward pass over at most kNpyMaxHeader bytes. Only the three keys numpy writes are accepted,
// each with the one kind of value it may hold, so nothing nests and nothing recurses.
class HeaderScanner {
 public:
  HeaderScanner(const std::string& text, const std::string& name, int major)
      : m_s(text), m_name(name), m_major(major) {}

  struct Dict {
    std::string descr;
    bool fortran_order = false;
    int64_t dims[2] = {0, 0};
    size_t ndim = 0;
    std::string shape_text;  // as written, for messages
  };

  Dict parse() {
    Dict d;
    bool has_descr = false, has_fortran = false, has_shape = false;
    skip_space();
    expect('{', "it does not start with '{' (it is not a Python dict)");
    for (;;) {
      skip_space();
      if (peek() == '}') break;
      const size_t key_at = m_i;
      const std::string key = quoted_string("a quoted key or '}'");
      skip_space();
      expect(':', "no ':' after the key '" + printable(key) + "'");
      skip_space();
      auto once = [&](bool& seen) {
        if (seen) fail_at(key_at, "the key '" + key + "' appears twice");
        seen = true;
      };
      if (key == "descr") {
        once(has_descr);
        d.descr = quoted_string("a quoted dtype string such as '<f4' for 'descr'");
      } else if (key == "fortran_order") {
        once(has_fortran);
        d.fortran_order = boolean();
      } else if (key == "shape") {
        once(has_shape);
        shape(d);
      } else {
        fail_at(key_at, "unknown key '" + printable(key) +
                            "' (a .npy header holds exactly 'descr', 'fortran_order' and 'shape')");
      }
      skip_space();
      if (peek() == ',') {
        ++m_i;
        continue;
      }
      if (peek() == '}') break;
      fail("expected ',' or '}' after the value of '" + key + "'");
    }
    ++m_i;  // '}'
    skip_space();
    if (m_i != m_s.size()) fail("more text follows the closing '}'");
    for (auto [seen, key] : {std::pair<bool, const char*>{has_descr, "descr"},
                             {has_fortran, "fortran_order"},
                             {has_shape, "shape"}})
      if (!seen) bad(m_name, std::string("bad .npy header: it has no '") + key + "' entry");
    return d;
  }

 private:
  int peek() const { return m_i < m_s.size() ? static_cast<unsigned char>(m_s[m_i]) : -1; }

  // Whitespace between tokens, as Python's tokenizer allows it inside brackets.
  void skip_space() {
    while (m_i < m_s.size() &&
           (m_s[m_i] == ' ' || m_s[m_i] == '\t' || m_s[m_i] == '\n' || m_s[m_i] == '\r' || m_s[m_i] == '\f'))
      ++m_i;
  }

  void expect(char c, const std::string& what) {
    if (peek() != static_cast<unsigned char>(c)) fail(what);
    ++m_i;
  }

  // A short, printable excerpt of the header at `at`.
  std::string found(size_t at) const {
    if (at >= m_s.size()) return "the end of the header";
    return "'" + printable(m_s.substr(at, 16)) + (m_s.size() - at > 16 ? "...'" : "'");
  }

  static std::string printable(const std::string& s) {
    std::string out;
    for (unsigned char c : s.substr(0, 40)) {
      if (c >= 0x20 && c < 0x7f) {
        out += char(c);
      } else {
        char b[8];
        std::snprintf(b, sizeof b, "\\x%02x", c);
        out += b;
      }
    }
    return s.size() > 40 ? out + "..." : out;
  }

  [[noreturn]] void fail_at(size_t at, const std::string& what) const {
    bad(m_name, "bad .npy header: " + what + " (at byte " + std::to_string(at) + ": " + found(at) + ")");
  }
  [[noreturn]] void fail(const std::string& what) const { fail_at(m_i, what); }

  // '...' or "..." without escapes (numpy never writes any).
  std::string quoted_string(const std::string& what) {
    const int q = peek();
    if (q != '\'' && q != '"') fail("expected " + what);
    const size_t start = ++m_i;
    while (m_i < m_s.size() && m_s[m_i] != char(q)) {
      if (m_s[m_i] == '\\') fail("an escape sequence in a string (numpy writes none)");
      if (m_s[m_i] == '\n' || m_s[m_i] == '\r') fail_at(start - 1, "an unterminated string");
      ++m_i;
    }
    if (m_i >= m_s.size()) fail_at(start - 1, "an unterminated string");
    return m_s.substr(start, m_i++ - start);
  }

  std::string word() {
    const size_t start = m_i;
    while (m_i < m_s.size() && (std::isalnum(static_cast<unsigned char>(m_s[m_i])) || m_s[m_i] == '_')) ++m_i;
    return m_s.substr(start, m_i - start);
  }

  bool boolean() {
    const size_t at = m_i;
    const std::string w = word();
    if (w == "True") return true;
    if (w == "False") return false;
    fail_at(at, "fortran_order is " + (w.empty() ? found(at) : "'" + printable(w) + "'") +
                    ", which is neither True nor False");
  }

  // A Python int as numpy writes a dimension: digits, optionally signed; 'L' (Python 2) in versions 1 and 2.
  int64_t dimension() {
    const size_t at = m_i;
    bool negative = false;
    if (peek() == '+' || peek() == '-') negative = m_s[m_i++] == '-';
    const size_t digits_at = m_i;
    while (m_i < m_s.size() && std::isdigit(static_cast<unsigned char>(m_s[m_i]))) ++m_i;
    const std::string digits = m_s.substr(digits_at, m_i - digits_at);
    if (digits.empty()) fail_at(at, "a shape element that is not a whole number");
    if (m_major <= 2 && (peek() == 'L' || peek() == 'l')) ++m_i;
    if (std::isalnum(peek()) || peek() == '_' || peek() == '.')
      fail_at(at, "a shape element that is not a plain whole number");
    if (digits.size() > 1 && digits[0] == '0') fail_at(at, "a shape element with leading zeros");
    const std::string shown =
        (negative ? "-" : "") + digits.substr(0, 24) + (digits.size() > 24 ? "..." : "");
    if (negative && digits.find_first_not_of('0') != std::string::npos)
      bad(m_name, "bad .npy header: the negative dimension " + shown + " in its shape");
    if (digits.size() > 12 || std::stoll(digits) > kMaxNpyDim)
      bad(m_name, "dimension " + shown + " is above the limit of " + std::to_string(kMaxNpyDim));
    return std::stoll(digits);
  }

  void shape(Dict& d) {
    const size_t start = m_i;
    if (peek() == '[') fail("'shape' is a list; numpy writes a tuple such as (2, 3)");
    expect('(', "'shape' is not a tuple such as (2, 3)");
    size_t count = 0;
    bool trailing_comma = false;
    skip_space();
    while (peek() != ')') {
      if (peek() == ',') fail("an empty element in 'shape'");
      const int64_t v = dimension();
      if (count < 2) d.dims[count] = v;
      ++count;
      skip_space();
      trailing_comma = false;
      if (peek() == ',') {
        ++m_i;
        trailing_comma = true;
        skip_space();
      } else if (peek() != ')') {
        fail("expected ',' or ')' between the elements of 'shape'");
      }
    }
    ++m_i;  // ')'
    if (count == 1 && !trailing_comma)
      fail_at(start, "'shape' is a number in parentheses, not a tuple (a 1-element tuple is written (n,))");
    d.ndim = count;
    d.shape_text = m_s.substr(start, std::min<size_t>(m_i - start, 60));
  }

  const std::string& m_s;
  const std::string& m_name;
  int m_major;
  size_t m_i = 0;
};

}  // namespace

NpyHeader parse_npy_header(const unsigned char* bytes, size_t n, uint64_t file_size,
                           const std::string& name) {
  if (file_size < 10 || n < 10)
    bad(name, "too short to be a .npy file (" + std::to_string(file_size) + " bytes)");
  if (std::memcmp(bytes, "\x93NUMPY", 6) != 0)
    bad(name, "not a .npy file (the magic string \\x93NUMPY is missing)");
  const int major = bytes[6], minor = bytes[7];
  if ((major != 1 && major != 2 && major != 3) || minor != 0)
    bad(name, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                  " (numpy reads and writes 1.0, 2.0 and 3.0)");
  const uint64_t prefix = major == 1 ? 10 : 12;
  if (file_size < prefix || n < prefix) bad(name, "truncated .npy header (the file ends in its preamble)");
  uint64_t header_len = uint64_t(bytes[8]) | (uint64_t(bytes[9]) << 8);
  if (major != 1) header_len |= (uint64_t(bytes[10]) << 16) | (uint64_t(bytes[11]) << 24);
  if (header_len > kNpyMaxHeader)
    bad(name, "the .npy header is " + std::to_string(header_len) +
                  " bytes long; numpy refuses headers over " + std::to_string(kNpyMaxHeader) +
                  " bytes, and so do we");
  if (prefix + header_len > file_size)
    bad(name, "truncated .npy header (needs " + std::to_string(header_len) + " bytes, the file has " +
                  std::to_string(file_size - prefix) + " after the preamble)");
  if (prefix + header_len > n) throw std::logic_error("parse_npy_header: the header was not read whole");
  const std::string text(reinterpret_cast<const char*>(bytes) + prefix, size_t(header_len));
  const HeaderScanner::Dict d = HeaderScanner(text, name, major).parse();

  NpyHeader h;
  if (d.descr == "<f4" || d.descr == "=f4" || d.descr == "f4") {
  } else if (d.descr == ">f4") {
    h.big_endian = true;
  } else {
    std::string shown = d.descr.substr(0, 40);
    for (char& c : shown)
      if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
    bad(name, "dtype '" + shown + "' is not float32 ('<f4'); convert with numpy: a.astype(np.float32)");
  }
  h.fortran_order = d.fortran_order;
  if (d.ndim != 2)
    bad(name,
        "the array is " + std::to_string(d.ndim) + "-D (shape " + d.shape_text + "); a 2-D matrix is needed");
  h.rows = d.dims[0];
  h.cols = d.dims[1];
  if (h.rows < 1 || h.cols < 1) bad(name, "empty matrix (shape " + d.shape_text + ")");
  h.data_offset = prefix + header_len;
  h.data_bytes = uint64_t(h.rows) * uint64_t(h.cols) * 4u;  // at most 2^36: no overflow
  const uint64_t have = file_size - h.data_offset;
  if (have < h.data_bytes)
    bad(name, "truncated: shape " + d.shape_text + " needs " + std::to_string(h.data_bytes) +
                  " data bytes, the file has " + std::to_string(have));
  if (have > h.data_bytes)
    bad(name, "corrupt: " + std::to_string(have - h.data_bytes) + " bytes follow the data of shape " +
                  d.shape_text);
  return h;
}

NpyHeader read_npy_header(const std::string& path) {
  InputFile f(path);
  std::vector<unsigned char> head(size_t(std::min<uint64_t>(f.size(), 12 + kNpyMaxHeader)));
  if (!f.read_at(0, head.data(), head.size())) bad(path, "the file shrank while it was read");
  return parse_npy_header(head.data(), head.size(), f.size(), path);
}

namespace {
// Rows x cols float32 values from `raw` (as on disk) into a C-order matrix.
void finish_matrix(HostMatrix& m, const NpyHeader& h, std::vector<float>& raw) {
  if (h.big_endian)
    for (float& v : raw) {
      uint32_t u;
      std::memcpy(&u, &v, 4);
      u = __builtin_bswap32(u);
      std::memcpy(&v, &u, 4);
    }
  if (h.fortran_order) {  // column-major on disk: element (r, c) at c * rows + r
    for (int64_t c = 0; c < h.cols; ++c)
      for (int64_t r = 0; r < h.rows; ++r) m.at(r, c) = raw[size_t(c) * size_t(h.rows) + size_t(r)];
  } else {
    m.data = std::move(raw);
  }
}
}  // namespace

HostMatrix read_npy(const std::string& path) {
  InputFile f(path);
  std::vector<unsigned char> head(size_t(std::min<uint64_t>(f.size(), 12 + kNpyMaxHeader)));
  if (!f.read_at(0, head.data(), head.size())) bad(path, "the file shrank while it was read");
  const NpyHeader h = parse_npy_header(head.data(), head.size(), f.size(), path);
  // Fortran order needs the file's copy and the C-order matrix at once.
  check_host_memory(h.data_bytes * (h.fortran_order ? 2 : 1), path + ": a " + std::to_string(h.rows) + " x " +
                                                                  std::to_string(h.cols) + " float32 matrix");
  std::vector<float> raw(size_t(h.rows) * size_t(h.cols));
  if (!f.read_at(h.data_offset, raw.data(), size_t(h.data_bytes)))
    bad(path, "truncated: the file shrank while it was read");
  HostMatrix m;
  m.rows = h.rows;
  m.cols = h.cols;
  if (h.fortran_order) m.data.resize(raw.size());
  finish_matrix(m, h, raw);
  return m;
}

HostMatrix decode_npy(const unsigned char* bytes, size_t n, const std::string& name) {
  const NpyHeader h = parse_npy_header(bytes, n, n, name);
  std::vector<float> raw(size_t(h.rows) * size_t(h.cols));
  std::memcpy(raw.data(), bytes + h.data_offset, size_t(h.data_bytes));
  HostMatrix m;
  m.rows = h.rows;
  m.cols = h.cols;
  if (h.fortran_order) m.data.resize(raw.size());
  finish_matrix(m, h, raw);
  return m;
}

void write_npy(const std::string& path, const HostMatrix& m, Replace replace) {
  std::ostringstream h;
  h << "{'descr': '<f4', 'fortran_order': False, 'shape': (" << m.rows << ", " << m.cols << "), }";
  std::string header = h.str();
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  if (header.size() > 65535) throw std::runtime_error(path + ": .npy header too long");
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
  AtomicWriter w(path, replace);
  w.write(pre, sizeof pre);
  w.write(header);
  w.write(m.data.data(), m.data.size() * sizeof(float));
  w.commit();
}

}  // namespace ts
