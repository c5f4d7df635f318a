#include "csv.hpp"

#include "files.hpp"

#include <cstdio>
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
  write_file(path, text, Replace::Never);
}

}  // namespace ts
