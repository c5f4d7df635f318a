#include "core/user_kernel/nvrtc_log.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <sstream>

namespace ts {

namespace {

std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> out;
  std::istringstream is(s);
  std::string l;
  while (std::getline(is, l)) {
    if (!l.empty() && l.back() == '\r') l.pop_back();
    out.push_back(l);
  }
  return out;
}

// The number written just before `word` in `text` ("32 registers" -> 32), or -1.
int number_before(const std::string& text, const std::string& word) {
  const size_t at = text.find(word);
  if (at == std::string::npos) return -1;
  size_t e = at;
  while (e > 0 && text[e - 1] == ' ') --e;
  size_t b = e;
  while (b > 0 && std::isdigit(static_cast<unsigned char>(text[b - 1]))) --b;
  if (b == e) return -1;
  return std::atoi(text.substr(b, e - b).c_str());
}

}  // namespace

std::vector<CompileDiagnostic> parse_nvrtc_log(const std::string& log) {
  std::vector<CompileDiagnostic> out;
  const std::vector<std::string> ls = lines_of(log);
  for (size_t i = 0; i < ls.size(); ++i) {
    const std::string& l = ls[i];
    // NAME(LINE): SEVERITY: MESSAGE
    const size_t close = l.find("): ");
    if (close == std::string::npos) continue;
    const size_t open = l.rfind('(', close);
    if (open == std::string::npos || open + 1 >= close) continue;
    const std::string num = l.substr(open + 1, close - open - 1);
    bool digits = !num.empty() && num.size() < 9;
    for (char c : num) digits = digits && std::isdigit(static_cast<unsigned char>(c));
    if (!digits) continue;
    const size_t colon = l.find(": ", close + 3);
    if (colon == std::string::npos) continue;
    CompileDiagnostic d;
    d.line = std::atoi(num.c_str());
    d.severity = l.substr(close + 3, colon - close - 3);
    if (d.severity.find("error") == std::string::npos && d.severity.find("warning") == std::string::npos &&
        d.severity.find("remark") == std::string::npos)
      continue;
    d.message = l.substr(colon + 2);
    // The compiler prints the offending line and a caret under it.
    for (size_t j = i + 1; j < ls.size() && j <= i + 3; ++j) {
      if (ls[j].find("): ") != std::string::npos || ls[j].empty()) break;
      d.context += ls[j] + "\n";
    }
    out.push_back(d);
  }
  return out;
}

std::string describe_errors(const std::vector<CompileDiagnostic>& d, int line_offset, size_t max_errors) {
  std::string out;
  size_t n = 0, total = 0;
  for (const auto& e : d) {
    if (e.severity.find("error") == std::string::npos) continue;
    ++total;
    if (n >= max_errors) continue;
    ++n;
    out += "line " + std::to_string(e.line + line_offset) + ": " + e.message + "\n";
  }
  if (total > n) out += "... and " + std::to_string(total - n) + " more\n";
  return out;
}

PtxasResources parse_ptxas_info(const std::string& log, const std::string& function) {
  PtxasResources r;
  const std::vector<std::string> ls = lines_of(log);
  bool in_entry = false, in_props = false;
  for (const std::string& l : ls) {
    if (l.find("Compiling entry function") != std::string::npos) {
      in_entry = l.find("'" + function + "'") != std::string::npos;
      in_props = false;
      continue;
    }
    if (l.find("Function properties for") != std::string::npos) {
      const size_t at = l.find("Function properties for ") + 24;
      std::string name = l.substr(at);
      while (!name.empty() && std::isspace(static_cast<unsigned char>(name.back()))) name.pop_back();
      in_props = name == function;
      continue;
    }
    if (in_props && l.find("stack frame") != std::string::npos) {
      r.stack_bytes = std::max(0, number_before(l, "bytes stack frame"));
      r.spill_stores = std::max(0, number_before(l, "bytes spill stores"));
      r.spill_loads = std::max(0, number_before(l, "bytes spill loads"));
      in_props = false;
      continue;
    }
    if (in_entry && l.find("Used ") != std::string::npos && l.find("registers") != std::string::npos) {
      r.found = true;
      r.regs = std::max(0, number_before(l, "registers"));
      r.barriers = std::max(0, number_before(l, "barriers"));
      r.static_smem = std::max(0, number_before(l, "bytes smem"));
      r.cmem0 = std::max(0, number_before(l, "bytes cmem[0]"));
      in_entry = false;
    }
  }
  return r;
}

}  // namespace ts
