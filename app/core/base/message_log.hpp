#pragma once
// [SECTION] The window's messages (what the status bar says), kept so a message that was replaced or elided
// can be read again in full (View > Messages). A bounded ring: the oldest message goes first.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <string>

namespace ts {

enum class Severity { Info, Warning, Error };

struct Message {
  Severity severity = Severity::Info;
  std::string text;
  double time = 0;      // seconds on the caller's clock (ImGui::GetTime() in the window)
  std::string stamp;    // wall-clock time, "HH:MM:SS"
  uint64_t serial = 0;  // increases with every message
};

class MessageLog {
 public:
  explicit MessageLog(size_t capacity = 200) : m_capacity(capacity ? capacity : 1) {}
  // Adds a message; the same text and severity twice in a row only refreshes its time.
  void add(Severity s, std::string text, double time);
  const std::deque<Message>& messages() const { return m_items; }
  const Message* latest() const { return m_items.empty() ? nullptr : &m_items.back(); }
  void clear() { m_items.clear(); }
  // Every new message is also written to `f` ("HH:MM:SS info: text"), for `tilescope --log`; nullptr: none.
  void echo_to(std::FILE* f) { m_echo = f; }
  std::FILE* echo() const { return m_echo; }

 private:
  size_t m_capacity;
  std::deque<Message> m_items;
  uint64_t m_serial = 0;
  std::FILE* m_echo = nullptr;
};

}  // namespace ts
