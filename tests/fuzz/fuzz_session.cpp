// libFuzzer target: the session reader (load_session) on arbitrary bytes. Every input must either be refused
// with a SessionError (any other exception, a crash, a sanitizer report, a hang or running out of the RSS
// limit is a finding) or give a session whose values a plot can use and that reads back, saved, as the same
// session. The bytes are handed over as a file (a memfd, through /proc/self/fd), as the window reads one.
// Seeds: TILESCOPE_FUZZ_SEEDS=DIR writes two valid sessions into DIR at start (scripts/fuzz.sh does).
#include <sys/mman.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <nlohmann/json.hpp>

#include "core/io/session.hpp"

namespace {

int g_fd = -1;

std::string as_file(const void* data, size_t size) {
  if (g_fd < 0) g_fd = ::memfd_create("fuzz-session.json", MFD_CLOEXEC);
  if (g_fd < 0 || ::ftruncate(g_fd, 0) != 0 || ::pwrite(g_fd, data, size, 0) != ssize_t(size)) std::abort();
  return "/proc/self/fd/" + std::to_string(g_fd);
}

bool drawable(const ts::SampleStats& s) {
  if (s.count == 0) return true;
  return std::isfinite(s.median) && s.median > 0 && s.min <= s.p25 && s.p25 <= s.median &&
         s.median <= s.p75 && s.p75 <= s.max && s.max <= 1e9;
}

ts::RunResult point(int64_t n, double ms, bool interleaved) {
  ts::RunResult r;
  r.spec.kernel = "tiled";
  r.spec.tile = 16;
  r.spec.m = r.spec.n = r.spec.k = n;
  r.backend = "cpu";
  r.device = "fuzz";
  r.samples_ms = {ms, ms * 1.01, ms * 0.99};
  r.stats = ts::summarize(r.samples_ms);
  r.error.passed = true;
  r.date = "2025-01-01T00:00:00Z";
  if (interleaved) {
    r.interleaved.kernel = "cublas";
    r.interleaved.samples_ms = {ms / 2, ms / 3};
    r.interleaved.stats = ts::summarize(r.interleaved.samples_ms);
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* dir = std::getenv("TILESCOPE_FUZZ_SEEDS")) {
    ts::DeviceInfo d;
    d.backend = "cpu";
    d.name = d.label = "fuzz";
    ts::Session s = ts::Session::for_device(d);
    s.add(point(64, 0.5, false));
    ts::save_session(std::string(dir) + "/one.json", s, true);
    s.add(point(128, 2.5, true));
    ts::save_session(std::string(dir) + "/two.json", s, true);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > size_t(ts::kMaxSessionBytes)) return 0;
  ts::Session s;
  try {
    s = ts::load_session(as_file(data, size));
  } catch (const ts::SessionError&) {
    return 0;  // refused, with a reason: what every malformed file must get
  }
  for (const auto& r : s.records)
    if (!drawable(r.stats) || !drawable(r.interleaved.stats) || r.samples_ms.size() != size_t(r.stats.count))
      std::abort();
  // Saved and read again: the same session, field for field.
  const std::string text = ts::session_text(s);
  try {
    const ts::Session back = ts::load_session(as_file(text.data(), text.size()));
    if (ts::to_json(back) != ts::to_json(s)) std::abort();
  } catch (const ts::SessionError&) {
    std::abort();
  }
  return 0;
}
