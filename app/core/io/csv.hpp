#pragma once
// CSV text with RFC 4180 quoting, cells that a spreadsheet would run as a formula defused, and writing it to
// a file that never replaces an existing one. Every CSV TileScope writes (bench --format csv, figures, panel
// exports) quotes its cells here.
#include <filesystem>
#include <string>
#include <vector>

namespace ts {

class CsvWriter {
 public:
  explicit CsvWriter(const std::vector<std::string>& header) : m_columns(header.size()) { row(header); }
  // Throws std::invalid_argument when the number of fields differs from the header's.
  void row(const std::vector<std::string>& fields);
  const std::string& str() const { return m_text; }
  // One cell. A text cell that a spreadsheet would take for a formula (one that starts with = + - @, a tab or
  // a carriage return, e.g. a kernel or session named =HYPERLINK(...)) gets a ' in front and is quoted, as
  // OWASP advises against CSV injection; a cell that is a number as num() or std::to_string write it
  // ("-1.5", "+3", "1e-05", "-inf") is a number and stays as it is. Then RFC 4180 quoting.
  static std::string quote(const std::string& field);
  // Whether the cell is a number (optional sign, digits with an optional point and exponent, or inf / nan).
  static bool is_number(const std::string& field);
  static std::string num(double v, const char* fmt = "%.6g");

 private:
  size_t m_columns;
  std::string m_text;
};

// Writes text to a new file `path` through the program's writer (files.hpp); refuses (ValidationError) when
// `path` exists, also when it appears while writing.
void write_new_file(const std::filesystem::path& path, const std::string& text);

}  // namespace ts
