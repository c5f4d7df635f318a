#pragma once
// CSV text with RFC 4180 quoting, and writing it to a file that never replaces an existing one.
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
  static std::string quote(const std::string& field);
  static std::string num(double v, const char* fmt = "%.6g");

 private:
  size_t m_columns;
  std::string m_text;
};

// Writes text to a new file `path` through the program's writer (files.hpp); refuses (ValidationError) when
// `path` exists, also when it appears while writing.
void write_new_file(const std::filesystem::path& path, const std::string& text);

}  // namespace ts
