#include "core/base/message_log.hpp"

#include <ctime>

namespace ts {

void MessageLog::add(Severity s, std::string text, double time) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[16];
  std::strftime(stamp, sizeof stamp, "%H:%M:%S", &tm);
  if (!m_items.empty() && m_items.back().severity == s && m_items.back().text == text) {
    m_items.back().time = time;
    m_items.back().stamp = stamp;
    m_items.back().serial = ++m_serial;
    return;
  }
  if (m_echo) {
    const char* level = s == Severity::Error ? "error" : s == Severity::Warning ? "warning" : "info";
    std::fprintf(m_echo, "%s %s: %s\n", stamp, level, text.c_str());
    std::fflush(m_echo);
  }
  m_items.push_back(Message{s, std::move(text), time, stamp, ++m_serial});
  while (m_items.size() > m_capacity) m_items.pop_front();
}

}  // namespace ts
