#pragma once
// [SECTION] Line breaking for the panels' value texts, without a window: Dear ImGui's own wrapping also
// breaks after '.' and ',', which can split a number ("71." then "17 us" on the next line).
#include <algorithm>
#include <cctype>
#include <string>
#include <utility>
#include <vector>

namespace ts {

// Greedy line breaking at spaces only, never inside a word such as "71.17" or "(sm_90,": `width` is the room
// of a line and measure(begin, end) the width of the characters [begin, end). A word wider than a line gets a
// line of its own; '\n' in text starts a new line. Spaces at the break are dropped.
template <class Measure>
std::vector<std::string> wrap_at_spaces(const std::string& text, float width, Measure measure) {
  std::vector<std::string> lines;
  size_t para = 0;
  while (para <= text.size()) {
    size_t para_end = text.find('\n', para);
    if (para_end == std::string::npos) para_end = text.size();
    std::string line;
    float line_w = 0;  // measured once per word: a frame re-wraps every description it draws
    const char space[] = " ";
    const float space_w = measure(space, space + 1);
    size_t i = para;
    while (i < para_end) {
      // A number stays with the unit or word after it ("6 %", "15.36 ms", "2 tiles"): one word for breaking.
      size_t word_end = std::min(text.find(' ', i), para_end);
      while (word_end < para_end && word_end > i && std::isdigit((unsigned char)text[word_end - 1]) &&
             word_end + 1 < para_end &&
             (std::isalpha((unsigned char)text[word_end + 1]) || text[word_end + 1] == '%'))
        word_end = std::min(text.find(' ', word_end + 1), para_end);
      const float word_w = measure(text.data() + i, text.data() + word_end);
      if (line.empty()) {
        line.assign(text, i, word_end - i);
        line_w = word_w;
      } else if (line_w + space_w + word_w <= width) {
        line.append(" ").append(text, i, word_end - i);
        line_w += space_w + word_w;
      } else {
        lines.push_back(line);
        line.assign(text, i, word_end - i);
        line_w = word_w;
      }
      i = word_end;
      while (i < para_end && text[i] == ' ') ++i;
    }
    lines.push_back(line);
    para = para_end + 1;
  }
  return lines;
}

// A description's first sentence and the rest (empty when it has one sentence): the first ". " outside
// parentheses that an upper-case letter or a digit follows ("e.g. the tile" and "1.5 ms" do not end one).
// The Controls panel shows the first sentence and the rest on request: a kernel's description can be a
// paragraph of measurements that would push the tile and the Run button below a laptop's screen.
inline std::pair<std::string, std::string> first_sentence(const std::string& text) {
  int depth = 0;
  for (size_t i = 0; i + 2 < text.size(); ++i) {
    const char c = text[i];
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == '.' && depth <= 0 && text[i + 1] == ' ' &&
        (std::isupper((unsigned char)text[i + 2]) || std::isdigit((unsigned char)text[i + 2]))) {
      size_t rest = i + 2;
      return {text.substr(0, i + 1), text.substr(rest)};
    }
  }
  return {text, std::string()};
}

}  // namespace ts
