// Reading a session holds bounded memory, counted (not timed, not the process's RSS): this program replaces
// operator new and delete with counting ones and checks the peak of live heap bytes while load_session
// refuses 64 MiB files built to swell a JSON tree (deep nesting, a million values in one record or outside
// the records, a hundred thousand records that are not records). Before issue 26 the whole text was read
// into memory and parsed into a tree first: 2.7 GB for the nested file.
#include <atomic>
#include <cstdlib>
#include <fstream>
#include <new>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/io/session.hpp"
#include "test_util.hpp"

namespace {
std::atomic<int64_t> g_live{0}, g_peak{0};
constexpr size_t kHeader = alignof(std::max_align_t);

void* counted(size_t n) {
  void* p = std::malloc(n + kHeader);
  if (!p) throw std::bad_alloc();
  *static_cast<size_t*>(p) = n;
  const int64_t live = g_live += int64_t(n);
  int64_t peak = g_peak.load();
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return static_cast<char*>(p) + kHeader;
}
void uncounted(void* q) noexcept {
  if (!q) return;
  void* p = static_cast<char*>(q) - kHeader;
  g_live -= int64_t(*static_cast<size_t*>(p));
  std::free(p);
}
}  // namespace

void* operator new(size_t n) {
  return counted(n);
}
void* operator new[](size_t n) {
  return counted(n);
}
void operator delete(void* p) noexcept {
  uncounted(p);
}
void operator delete[](void* p) noexcept {
  uncounted(p);
}
void operator delete(void* p, size_t) noexcept {
  uncounted(p);
}
void operator delete[](void* p, size_t) noexcept {
  uncounted(p);
}

using namespace ts;

namespace {
// The most heap held at once while `path` is read, and the refusal.
int64_t peak_while_loading(const std::filesystem::path& path, std::string* why) {
  const int64_t before = g_live.load();
  g_peak = before;
  try {
    load_session(path);
    *why = "accepted";
  } catch (const SessionError& e) {
    *why = e.what();
  }
  return g_peak.load() - before;
}

void write_64mib(const std::filesystem::path& p, const std::string& head, const std::string& unit,
                 const std::string& tail) {
  std::ofstream f(p, std::ios::binary);
  f << head;
  std::string block;
  while (block.size() + unit.size() <= (1u << 20)) block += unit;
  size_t left = size_t(kMaxSessionBytes) - head.size() - tail.size();
  while (left >= block.size()) {
    f << block;
    left -= block.size();
  }
  while (left >= unit.size()) {
    f << unit;
    left -= unit.size();
  }
  f << std::string(left, ' ') << tail;
}
}  // namespace

TEST(SessionMemory, SixtyFourMiBBuiltToSwellTheTreeAreRefusedHoldingUnderTwentyFourMiB) {
  test::TempDir dir;
  struct Case {
    const char* name;
    std::string head, unit, tail, reason;
  } cases[] = {
      {"nested.json", "", "[", "", "nested more than 16 levels deep"},
      {"nested-objects.json", "", "{\"a\":", "", "nested more than 16 levels deep"},
      {"record.json", "{\"format\":\"tilescope-session\",\"records\":[{\"samples_ms\":[", "0,", "0]}]}",
       "record 1 holds more than"},
      {"header.json", "{\"format\":\"tilescope-session\",\"junk\":[", "{},", "{}]}", "outside its records"},
      {"records.json", "{\"format\":\"tilescope-session\",\"records\":[", "{},", "{}]}",
       "more than the limit of 100000"},
  };
  for (const Case& c : cases) {
    const auto path = dir.path() / c.name;
    write_64mib(path, c.head, c.unit, c.tail);
    ASSERT_EQ(std::filesystem::file_size(path), uint64_t(kMaxSessionBytes)) << c.name;
    std::string why;
    const int64_t peak = peak_while_loading(path, &why);
    EXPECT_NE(why.find(c.reason), std::string::npos) << c.name << ": " << why;
    EXPECT_NE(why.find(c.name), std::string::npos) << why;
    // At most one record's JSON (301000 values of 16 bytes: its samples, its interleaved reference's and
    // its changing-input timing's; and the list's growth) and the reader's buffers.
    EXPECT_LT(peak, int64_t(24) << 20) << c.name << ": " << peak << " bytes held at once";
  }
}
