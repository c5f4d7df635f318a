#include "core/io/csv.hpp"

#include "core/io/files.hpp"

#include <cstdio>
#include <string_view>
#include <stdexcept>

namespace ts {

bool CsvWriter::is_number(const std::string& f) {
  size_t i = 0;
  auto digits = [&] {
    const size_t from = i;
    while (i < f.size() && f[i] >= '0' && f[i] <= '9') ++i;
    return i > from;
  };
  if (i < f.size() && (f[i] == '+' || f[i] == '-')) ++i;
  const std::string rest = f.substr(i);
  if (rest == "inf" || rest == "nan") return true;  // what printf writes for them
  const bool whole = digits();
  bool fraction = false;
  if (i < f.size() && f[i] == '.') {
    ++i;
    fraction = digits();
  }
  if (!whole && !fraction) return false;
  if (i < f.size() && (f[i] == 'e' || f[i] == 'E')) {
    ++i;
    if (i < f.size() && (f[i] == '+' || f[i] == '-')) ++i;
    if (!digits()) return false;
  }
  return i == f.size();
}

std::string CsvWriter::quote(const std::string& f) {
  // Formula injection: what a spreadsheet would evaluate starts with one of these (OWASP's list).
  const bool formula =
      !f.empty() && std::string_view("=+-@\t\r").find(f[0]) != std::string_view::npos && !is_number(f);
  const std::string cell = formula ? "'" + f : f;
  if (!formula && cell.find_first_of(",\"\n\r") == std::string::npos) return cell;
  std::string q = "\"";
  for (char c : cell) q += c == '"' ? std::string("\"\"") : std::string(1, c);
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
