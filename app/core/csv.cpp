#include "csv.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

namespace ts {

std::string CsvWriter::quote(const std::string& f) {
  if (f.find_first_of(",\"\n\r") == std::string::npos) return f;
  std::string q = "\"";
  for (char c : f) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string CsvWriter::num(double v, const char* fmt) {
  char b[64];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

void CsvWriter::row(const std::vector<std::string>& fields) {
  if (fields.size() != m_columns)
    throw std::invalid_argument("CSV row has " + std::to_string(fields.size()) + " fields, the header " +
                                std::to_string(m_columns));
  for (size_t i = 0; i < fields.size(); ++i) m_text += (i ? "," : "") + quote(fields[i]);
  m_text += "\n";
}

void write_new_file(const std::filesystem::path& path, const std::string& text) {
  if (std::filesystem::exists(path))
    throw std::runtime_error(path.string() + " already exists; not replaced");
  std::filesystem::path tmp = path;
  tmp += ".part";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) {
      std::error_code ec;
      std::filesystem::remove(tmp, ec);
      throw std::runtime_error("cannot write " + path.string());
    }
  }
  std::filesystem::rename(tmp, path);
}

}  // namespace ts
