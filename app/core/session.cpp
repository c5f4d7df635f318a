#include "session.hpp"

#include "files.hpp"
#include "settings.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iterator>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_set>

#include "csv.hpp"
#include "tilescope/version.hpp"

namespace ts {

namespace fs = std::filesystem;
using json = nlohmann::json;

MeasurementRecord MeasurementRecord::from(const RunResult& r) {
  MeasurementRecord m;
  m.spec = r.spec;
  m.backend = r.backend;
  m.device = r.device;
  m.tf32 = r.tf32;
  m.policy = r.policy;
  m.timed = r.timed;
  m.samples_ms = r.times_ms;
  m.stats = r.stats;
  m.tflops = r.tflops;
  m.noise = r.noise;
  m.stop = r.stop;
  m.passed = r.error.passed;
  m.max_abs_err = r.error.max_abs_err;
  m.tolerance = r.error.tolerance;
  m.clock = r.clock;
  m.frames_drawn = r.frames_drawn;
  m.tile_m = r.tile_m;
  m.tile_n = r.tile_n;
  m.blocks_per_tile = r.blocks_per_tile;
  if (r.occupancy) {
    m.blocks_per_sm = r.occupancy->blocks_per_sm;
    m.waves = r.occupancy->waves;
  }
  m.reference_ms = r.reference_ms;
  m.interleaved = r.interleaved;
  m.interleaved_note = r.interleaved_note;
  m.date = r.date.empty() ? utc_now() : r.date;
  m.program_version = kVersion;
  m.commit = kGitCommit;
  return m;
}

Session Session::for_device(const DeviceInfo& d) {
  Session s;
  s.created = utc_now();
  s.label = d.name + ", " + s.created.substr(0, 10);
  s.program_version = kVersion;
  s.commit = kGitCommit;
  s.device = d;
  return s;
}

void Session::add(const RunResult& r) {
  records.push_back(MeasurementRecord::from(r));
}

// [SECTION] JSON. Doubles are written with round-trip precision; a non-finite value (never expected) is
// written as null and read back as NaN.
namespace {

json num(double v) {
  return std::isfinite(v) ? json(v) : json(nullptr);
}

json stats_json(const SampleStats& s) {
  return {{"count", s.count},  {"median", num(s.median)}, {"p25", num(s.p25)},   {"p75", num(s.p75)},
          {"min", num(s.min)}, {"max", num(s.max)},       {"mean", num(s.mean)}, {"stddev", num(s.stddev)}};
}

json device_json(const DeviceInfo& d) {
  const DeviceLimits& l = d.limits;
  return {{"backend", d.backend},
          {"name", d.name},
          {"label", d.label},
          {"compute_capability", d.sm},
          {"sm_count", d.sm_count},
          {"max_sm_clock_mhz", num(d.max_sm_clock_mhz)},
          {"driver", d.driver},
          {"cuda_runtime", d.cuda_runtime},
          {"l2_bytes", d.l2_bytes},
          {"memory_bytes", d.memory_bytes},
          {"datasheet_bandwidth_gbs", num(d.datasheet_bandwidth_gbs)},
          {"peak_fp32_tflops", num(d.peak_fp32_tflops)},
          {"peak_tf32_tflops", num(d.peak_tf32_tflops)},
          {"limits",
           {{"max_threads_per_sm", l.max_threads_per_sm},
            {"max_blocks_per_sm", l.max_blocks_per_sm},
            {"regs_per_sm", l.regs_per_sm},
            {"reg_alloc_unit", l.reg_alloc_unit},
            {"max_regs_per_thread", l.max_regs_per_thread},
            {"smem_per_sm", l.smem_per_sm},
            {"reserved_smem_per_block", l.reserved_smem_per_block},
            {"smem_alloc_unit", l.smem_alloc_unit},
            {"warp_size", l.warp_size}}}};
}

json samples_json(const std::vector<double>& v) {
  json samples = json::array();
  for (double x : v) samples.push_back(num(x));
  return samples;
}

json clock_json(const ClockRecord& c) {
  return {{"available", c.available},
          {"min_mhz", num(c.min_mhz)},
          {"median_mhz", num(c.median_mhz)},
          {"max_mhz", num(c.max_mhz)},
          {"device_max_mhz", num(c.device_max_mhz)},
          {"throttled", c.throttled},
          {"throttle_reasons", c.throttle_reasons},
          {"note", c.note}};
}

json record_json(const MeasurementRecord& r) {
  const json samples = samples_json(r.samples_ms);
  json j = problem_json(r.spec);
  j.update({{"backend", r.backend},
            {"device", r.device},
            {"tf32", r.tf32},
            {"policy", r.policy},
            {"timed", r.timed},
            {"samples_ms", samples},
            {"stats_ms", stats_json(r.stats)},
            {"tflops", num(r.tflops)},
            {"noise", num(r.noise)},
            {"stop", r.stop},
            {"passed", r.passed},
            {"max_abs_err", num(r.max_abs_err)},
            {"tolerance", num(r.tolerance)},
            {"clock", clock_json(r.clock)},
            {"frames_drawn", r.frames_drawn},
            {"tile_m", r.tile_m},
            {"tile_n", r.tile_n},
            {"blocks_per_sm", r.blocks_per_sm},
            {"blocks_per_tile", r.blocks_per_tile},
            {"waves", num(r.waves)},
            {"reference_ms", num(r.reference_ms)},
            {"interleaved_reference",
             {{"kernel", r.interleaved.kernel},
              {"samples_ms", samples_json(r.interleaved.times_ms)},
              {"stats_ms", stats_json(r.interleaved.stats)},
              {"noise", num(r.interleaved.noise)},
              {"clock", clock_json(r.interleaved.clock)},
              {"note", r.interleaved_note}}},
            {"date", r.date},
            {"tilescope", r.program_version},
            {"commit", r.commit}});
  return j;
}

// Typed, named access to a JSON object: every failure says where and what.
class Reader {
 public:
  Reader(const json& j, std::string where) : m_j(j), m_where(std::move(where)) {
    if (!m_j.is_object()) throw SessionError(m_where + " is not an object");
  }
  const json& at(const char* key) const {
    auto it = m_j.find(key);
    if (it == m_j.end()) throw SessionError(m_where + ": '" + key + "' is missing");
    return *it;
  }
  std::string str(const char* key) const {
    const json& v = at(key);
    if (!v.is_string()) bad(key, "is not text");
    return v.get<std::string>();
  }
  bool flag(const char* key) const {
    const json& v = at(key);
    if (!v.is_boolean()) bad(key, "is not true or false");
    return v.get<bool>();
  }
  double number(const char* key) const { return to_double(at(key), key); }
  // A number in lo..hi, or null (read as NaN: a value that was never measured) when `null_ok`.
  double number(const char* key, double lo, double hi, bool null_ok = true) const {
    return checked(at(key), key, lo, hi, null_ok);
  }
  double checked(const json& v, const std::string& key, double lo, double hi, bool null_ok) const {
    if (v.is_null()) {
      if (!null_ok) bad(key, "is null, not a number");
      return std::numeric_limits<double>::quiet_NaN();
    }
    const double x = to_double(v, key);
    if (!(x >= lo && x <= hi))
      throw SessionError(m_where + ": '" + key + "' = " + v.dump() + " is outside " + fmt(lo) + ".." +
                         fmt(hi));
    return x;
  }
  int64_t integer(const char* key, int64_t lo, int64_t hi) const {
    const json& v = at(key);
    if (!v.is_number_integer()) bad(key, "is not a whole number");
    const bool huge = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX);
    const int64_t x = huge ? 0 : v.get<int64_t>();
    if (huge || x < lo || x > hi)
      throw SessionError(m_where + ": '" + key + "' = " + v.dump() + " is outside " + std::to_string(lo) +
                         ".." + std::to_string(hi));
    return x;
  }
  uint64_t unsigned_integer(const char* key) const {
    const json& v = at(key);
    if (!v.is_number_unsigned()) bad(key, "is not a whole number >= 0");
    return v.get<uint64_t>();
  }
  Reader object(const char* key) const { return Reader(at(key), m_where + "." + key); }
  bool has(const char* key) const { return m_j.contains(key); }
  double to_double(const json& v, const std::string& key) const {
    if (v.is_null()) return std::numeric_limits<double>::quiet_NaN();
    if (!v.is_number()) bad(key, "is not a number");
    return v.get<double>();
  }
  const std::string& where() const { return m_where; }
  static std::string fmt(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return b;
  }

 private:
  [[noreturn]] void bad(const std::string& key, const char* what) const {
    throw SessionError(m_where + ": '" + key + "' " + what);
  }
  const json& m_j;
  std::string m_where;
};

// What a value read from a session may be (a plot computes pixels from them: an infinite or negative time,
// or a quartile on the wrong side of the median, is refused when the file is read, never drawn).
constexpr double kMaxTimeMs = 1e9;     // a launch of 11 days
constexpr double kMaxMhz = 1e6;        // clocks
constexpr double kMaxQuantity = 1e15;  // TFLOP/s, GB/s, waves, errors, noise

ClockRecord clock_from(const Reader& c) {
  ClockRecord k;
  k.available = c.flag("available");
  k.min_mhz = c.number("min_mhz", 0, kMaxMhz);
  k.median_mhz = c.number("median_mhz", 0, kMaxMhz);
  k.max_mhz = c.number("max_mhz", 0, kMaxMhz);
  k.device_max_mhz = c.number("device_max_mhz", 0, kMaxMhz);
  k.throttled = c.flag("throttled");
  k.throttle_reasons = c.str("throttle_reasons");
  k.note = c.str("note");
  return k;
}

std::vector<double> samples_from(const Reader& r, const char* key) {
  const json& samples = r.at(key);
  if (!samples.is_array()) throw SessionError(r.where() + ": '" + key + "' is not a list");
  if (samples.size() > size_t(kMaxRecordSamples))
    throw SessionError(r.where() + ": " + std::to_string(samples.size()) +
                       " samples, more than the limit of " + std::to_string(kMaxRecordSamples));
  std::vector<double> v;
  v.reserve(samples.size());
  for (size_t i = 0; i < samples.size(); ++i) {
    const json& x = samples[i];
    if (x.is_number() && x.get<double>() >= 0 && x.get<double>() <= kMaxTimeMs)
      v.push_back(x.get<double>());
    else  // the reason, with the sample's place
      r.checked(x, std::string(key) + "[" + std::to_string(i) + "]", 0, kMaxTimeMs, false);
  }
  return v;
}

// Statistics of the samples, in ms: with samples, every figure a time (no null), the median above zero and
// min <= p25 <= median <= p75 <= max.
SampleStats stats_from(const Reader& r) {
  SampleStats s;
  s.count = int(r.integer("count", 0, kMaxRecordSamples));
  const bool timed = s.count > 0;
  s.median = r.number("median", 0, kMaxTimeMs, !timed);
  s.p25 = r.number("p25", 0, kMaxTimeMs, !timed);
  s.p75 = r.number("p75", 0, kMaxTimeMs, !timed);
  s.min = r.number("min", 0, kMaxTimeMs, !timed);
  s.max = r.number("max", 0, kMaxTimeMs, !timed);
  s.mean = r.number("mean", 0, kMaxTimeMs, !timed);
  s.stddev = r.number("stddev", 0, kMaxTimeMs);
  if (timed) {
    if (!(s.median > 0))
      throw SessionError(r.where() + ": 'median' = " + Reader::fmt(s.median) + " is not above 0");
    auto order = [&](const char* a, double x, const char* b, double y) {
      if (x > y * (1 + 1e-12))
        throw SessionError(r.where() + ": '" + a + "' = " + Reader::fmt(x) + " is above '" + b +
                           "' = " + Reader::fmt(y));
    };
    order("min", s.min, "p25", s.p25);
    order("p25", s.p25, "median", s.median);
    order("median", s.median, "p75", s.p75);
    order("p75", s.p75, "max", s.max);
  }
  return s;
}

DeviceInfo device_from(const Reader& r) {
  DeviceInfo d;
  d.backend = r.str("backend");
  d.name = r.str("name");
  d.label = r.str("label");
  d.sm = int(r.integer("compute_capability", 0, 1000));
  d.sm_count = int(r.integer("sm_count", 0, 100000));
  d.max_sm_clock_mhz = r.number("max_sm_clock_mhz", 0, kMaxMhz);
  d.driver = r.str("driver");
  d.cuda_runtime = r.str("cuda_runtime");
  d.l2_bytes = r.integer("l2_bytes", 0, INT64_MAX);
  d.memory_bytes = r.integer("memory_bytes", 0, INT64_MAX);
  d.datasheet_bandwidth_gbs = r.number("datasheet_bandwidth_gbs", 0, kMaxQuantity);
  d.peak_fp32_tflops = r.number("peak_fp32_tflops", 0, kMaxQuantity);
  d.peak_tf32_tflops = r.number("peak_tf32_tflops", 0, kMaxQuantity);
  const Reader l = r.object("limits");
  DeviceLimits& x = d.limits;
  x.sm_count = d.sm_count;
  x.max_threads_per_sm = int(l.integer("max_threads_per_sm", 0, 1 << 20));
  x.max_blocks_per_sm = int(l.integer("max_blocks_per_sm", 0, 1 << 20));
  x.regs_per_sm = int(l.integer("regs_per_sm", 0, 1 << 24));
  x.reg_alloc_unit = int(l.integer("reg_alloc_unit", 0, 1 << 20));
  x.max_regs_per_thread = int(l.integer("max_regs_per_thread", 0, 1 << 20));
  x.smem_per_sm = int(l.integer("smem_per_sm", 0, 1 << 30));
  x.reserved_smem_per_block = int(l.integer("reserved_smem_per_block", 0, 1 << 30));
  x.smem_alloc_unit = int(l.integer("smem_alloc_unit", 0, 1 << 20));
  x.warp_size = int(l.integer("warp_size", 0, 1024));
  return d;
}

MeasurementRecord record_from(const Reader& r) {
  MeasurementRecord m;
  ProblemSpec& s = m.spec;
  s.kernel = r.str("kernel");
  s.tile = int(r.integer("tile", 0, 1 << 16));
  s.m = r.integer("m", 1, kMaxDim);
  s.n = r.integer("n", 1, kMaxDim);
  s.k = r.integer("k", 1, kMaxDim);
  const std::string input = r.str("input");
  if (input == "file") {
    s.input = InputKind::File;
  } else {
    try {
      s.input = parse_input_kind(input);
    } catch (const ValidationError&) {
      throw SessionError(r.where() + ": 'input' = '" + input + "' is not an input kind");
    }
  }
  s.seed = r.unsigned_integer("seed");
  m.backend = r.str("backend");
  m.device = r.str("device");
  m.tf32 = r.flag("tf32");
  m.policy = r.str("policy");
  m.timed = r.flag("timed");
  m.samples_ms = samples_from(r, "samples_ms");
  m.stats = stats_from(r.object("stats_ms"));
  if (m.stats.count != int(m.samples_ms.size()))
    throw SessionError(r.where() + ": stats_ms.count = " + std::to_string(m.stats.count) + " but " +
                       std::to_string(m.samples_ms.size()) + " samples");
  m.tflops = r.number("tflops", 0, kMaxQuantity, m.stats.count == 0);
  m.noise = r.number("noise", 0, kMaxQuantity);
  m.stop = r.str("stop");
  m.passed = r.flag("passed");
  m.max_abs_err = r.number("max_abs_err", 0, std::numeric_limits<double>::max());
  m.tolerance = r.number("tolerance", 0, std::numeric_limits<double>::max());
  m.clock = clock_from(r.object("clock"));
  if (r.has("frames_drawn")) m.frames_drawn = r.integer("frames_drawn", 0, INT64_MAX);
  m.tile_m = int(r.integer("tile_m", 0, 1 << 20));
  m.tile_n = int(r.integer("tile_n", 0, 1 << 20));
  m.blocks_per_sm = int(r.integer("blocks_per_sm", 0, 1 << 20));
  if (r.has("blocks_per_tile")) m.blocks_per_tile = int(r.integer("blocks_per_tile", 1, 1 << 20));
  m.waves = r.number("waves", 0, kMaxQuantity);
  m.reference_ms = r.number("reference_ms", 0, kMaxTimeMs);
  if (r.has("interleaved_reference")) {  // older files have none
    const Reader ir = r.object("interleaved_reference");
    InterleavedReference& x = m.interleaved;
    x.kernel = ir.str("kernel");
    x.times_ms = samples_from(ir, "samples_ms");
    x.stats = stats_from(ir.object("stats_ms"));
    if (x.stats.count != int(x.times_ms.size()))
      throw SessionError(ir.where() + ": stats_ms.count = " + std::to_string(x.stats.count) + " but " +
                         std::to_string(x.times_ms.size()) + " samples");
    x.noise = ir.number("noise", 0, kMaxQuantity);
    x.clock = clock_from(ir.object("clock"));
    m.interleaved_note = ir.str("note");
  }
  m.date = r.str("date");
  m.program_version = r.str("tilescope");
  m.commit = r.str("commit");
  return m;
}

}  // namespace

json to_json(const Session& s) {
  json records = json::array();
  for (const auto& r : s.records) records.push_back(record_json(r));
  return {{"format", "tilescope-session"},
          {"version", kSessionFormat},
          {"label", s.label},
          {"created", s.created},
          {"tilescope", s.program_version},
          {"commit", s.commit},
          {"device", device_json(s.device)},
          {"dram_gbs", num(s.dram_gbs)},
          {"records", records}};
}

namespace {
// The session's fields but its records.
Session header_from_json(const json& j) {
  if (!j.is_object() || !j.contains("format") || j["format"] != "tilescope-session")
    throw SessionError("not a TileScope session (no \"format\": \"tilescope-session\")");
  const Reader r(j, "session");
  const int64_t version = r.integer("version", 0, 1 << 30);
  if (version != kSessionFormat)
    throw SessionError("session format version " + std::to_string(version) + " is not the supported " +
                       std::to_string(kSessionFormat));
  Session s;
  s.label = r.str("label");
  s.created = r.str("created");
  s.program_version = r.str("tilescope");
  s.commit = r.str("commit");
  s.device = device_from(r.object("device"));
  s.dram_gbs = r.number("dram_gbs", 0, kMaxQuantity);
  if (!r.at("records").is_array()) throw SessionError("session: 'records' is not a list");
  return s;
}

std::string too_many_records(size_t n) {
  return "session has " + std::to_string(n) + " records, more than the limit of " +
         std::to_string(kMaxSessionRecords);
}

// The text of a nlohmann exception without its "[json.exception.out_of_range.406] " tag.
std::string json_reason(const json::exception& e) {
  std::string w = e.what();
  const size_t close = w.find("] ");
  return w.rfind("[json.exception.", 0) == 0 && close != std::string::npos ? w.substr(close + 2) : w;
}
}  // namespace

Session session_from_json(const json& j) {
  Session s = header_from_json(j);
  const json& recs = j["records"];
  if (recs.size() > size_t(kMaxSessionRecords)) throw SessionError(too_many_records(recs.size()));
  s.records.reserve(recs.size());
  for (size_t i = 0; i < recs.size(); ++i)
    s.records.push_back(record_from(Reader(recs[i], "record " + std::to_string(i + 1))));
  return s;
}

std::string session_text(const Session& s) {
  // Compact (what is counted against the limit is what is written); text that is not UTF-8 (a kernel's
  // name) is written with U+FFFD in its place instead of failing the save.
  return to_json(s).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

void save_session(const fs::path& path, const Session& s, bool replace) {
  // The program's one writer: a unique temporary file, fsync, rename; only a regular file is ever replaced.
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  try {
    write_file(path, session_text(s), replace ? Replace::RegularFile : Replace::Never);
  } catch (const ValidationError& e) {
    throw SessionError(e.what());
  }
}

namespace {

// The bytes of an open file, for nlohmann's parser (an input iterator): read in blocks, never more than
// kMaxSessionBytes (a file that grows while it is read is refused as too large).
class FileBytes {
 public:
  explicit FileBytes(int fd) : m_fd(fd) {}
  int next() {
    if (m_pos == m_len) {
      if (m_total > uint64_t(kMaxSessionBytes)) return -1;
      ssize_t n;
      do n = ::read(m_fd, m_buf, sizeof m_buf);
      while (n < 0 && (errno == EINTR || errno == EAGAIN));
      if (n < 0) {
        m_error = errno;
        return -1;
      }
      if (n == 0) return -1;
      m_pos = 0;
      m_len = size_t(n);
      m_total += uint64_t(n);
    }
    return static_cast<unsigned char>(m_buf[m_pos++]);
  }
  uint64_t total() const { return m_total; }
  int error() const { return m_error; }

 private:
  int m_fd;
  char m_buf[1 << 16];
  size_t m_pos = 0, m_len = 0;
  uint64_t m_total = 0;
  int m_error = 0;
};

class ByteIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;
  ByteIterator() = default;  // the end
  explicit ByteIterator(FileBytes* f) : m_f(f) { m_c = m_f->next(); }
  char operator*() const { return char(m_c); }
  ByteIterator& operator++() {
    m_c = m_f->next();
    return *this;
  }
  ByteIterator operator++(int) {
    ByteIterator was = *this;
    ++*this;
    return was;
  }
  bool operator==(const ByteIterator& o) const { return at_end() == o.at_end(); }
  bool operator!=(const ByteIterator& o) const { return !(*this == o); }

 private:
  bool at_end() const { return !m_f || m_c < 0; }
  FileBytes* m_f = nullptr;
  int m_c = -1;
};

// Builds the session while the text is parsed, so that what is held stays bounded: each record is read into
// its Measurement record as soon as it ends and its JSON dropped; containers nest at most
// kMaxSessionDepth deep; a record holds at most kMaxRecordValues values, the rest of the file
// kMaxHeaderValues. Past a limit the file is refused at once, before anything more is built.
class StreamingReader {
 public:
  bool event(int depth, json::parse_event_t ev, json& parsed) {
    using E = json::parse_event_t;
    if (ev == E::object_start || ev == E::array_start) {
      if (depth >= kMaxSessionDepth)
        throw SessionError("nested more than " + std::to_string(kMaxSessionDepth) +
                           " levels deep (a session nests 5)");
    }
    if (ev == E::key && depth == 1) m_root_key = parsed.get<std::string>();
    if (ev == E::array_start && depth == 1) m_in_records = m_root_key == "records";
    if (ev == E::array_end && depth == 1) m_in_records = false;
    const bool in_record = m_in_records && depth >= 2;
    if (ev != E::object_end && ev != E::array_end) {
      if (in_record) {
        if (++m_record_values > kMaxRecordValues)
          throw SessionError("record " + std::to_string(m_records + 1) + " holds more than " +
                             std::to_string(kMaxRecordValues) + " values");
      } else if (++m_header_values > kMaxHeaderValues) {
        throw SessionError("the session's fields outside its records hold more than " +
                           std::to_string(kMaxHeaderValues) + " values");
      }
    }
    // A record (an element of "records") is complete: read it, keep the record, drop its JSON.
    const bool element_done =
        m_in_records && depth == 2 && (ev == E::object_end || ev == E::array_end || ev == E::value);
    if (!element_done) return true;
    ++m_records;
    m_record_values = 0;
    if (m_records > size_t(kMaxSessionRecords)) throw SessionError(too_many_records(m_records));
    if (m_first_error.empty()) {
      try {
        records.push_back(record_from(Reader(parsed, "record " + std::to_string(m_records))));
      } catch (const SessionError& e) {
        m_first_error = e.what();  // said after the header's checks (a file that is no session says so)
        records.clear();
        records.shrink_to_fit();
      }
    }
    return false;
  }
  const std::string& first_error() const { return m_first_error; }
  std::vector<MeasurementRecord> records;

 private:
  std::string m_root_key, m_first_error;
  bool m_in_records = false;
  size_t m_records = 0;
  int64_t m_record_values = 0, m_header_values = 0;
};

}  // namespace

Session load_session(const fs::path& path) {
  const std::string p = path.string();
  // Opened without blocking (a FIFO is refused, never waited on), then checked on the descriptor.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      std::error_code ec;
      throw SessionError(p + (fs::is_symlink(fs::symlink_status(path, ec))
                                  ? ": a symbolic link to a file that does not exist"
                                  : ": no such file"));
    }
    // The reason as the system gives it: a loop of symbolic links is not a missing file.
    if (err == ELOOP) throw SessionError(p + ": a loop of symbolic links (" + std::strerror(err) + ")");
    throw SessionError(p + ": cannot be opened (" + std::strerror(err) + ")");
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw SessionError(p + ": cannot be looked at (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode))
    throw SessionError(p + ": not a regular file (" + describe_file_type(unsigned(st.st_mode)) + ")");
  const uint64_t size = uint64_t(st.st_size);
  auto too_large = [&](uint64_t bytes) {
    return SessionError(p + ": " + format_bytes_exact(bytes) + " is larger than the limit of " +
                        format_bytes_exact(uint64_t(kMaxSessionBytes)) + " for a session");
  };
  if (size > uint64_t(kMaxSessionBytes)) throw too_large(size);
  FileBytes bytes(fd);
  StreamingReader reader;
  json j;
  try {
    j = json::parse(ByteIterator(&bytes), ByteIterator(),
                    [&reader](int depth, json::parse_event_t ev, json& parsed) {
                      return reader.event(depth, ev, parsed);
                    });
  } catch (const json::parse_error& e) {
    if (bytes.error()) throw SessionError(p + ": read error (" + std::strerror(bytes.error()) + ")");
    if (bytes.total() > uint64_t(kMaxSessionBytes)) throw too_large(bytes.total());
    throw SessionError(p + ": not JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {  // a number too large for a double (1e309), and the like
    throw SessionError(p + ": not usable JSON: " + json_reason(e));
  } catch (const SessionError& e) {
    throw SessionError(p + ": " + e.what());
  }
  if (bytes.error()) throw SessionError(p + ": read error (" + std::strerror(bytes.error()) + ")");
  if (bytes.total() > uint64_t(kMaxSessionBytes)) throw too_large(bytes.total());
  try {
    Session s = header_from_json(j);
    if (!reader.first_error().empty()) throw SessionError(reader.first_error());
    s.records = std::move(reader.records);
    return s;
  } catch (const SessionError& e) {
    throw SessionError(p + ": " + e.what());
  }
}

namespace {

// Where a write of `path` lands: a symbolic link followed (hop by hop, relative links from their folder) to
// what it names; an absent name is itself.
fs::path follow_links(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::error_code ec;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) throw SessionError(p.string() + ": the symbolic link cannot be read (" + ec.message() + ")");
    p = to.is_absolute() ? to : (p.has_parent_path() ? p.parent_path() : fs::path(".")) / to;
  }
  throw SessionError(path.string() + ": a loop of symbolic links");
}

// An exclusive lock on ".<file>.lock" beside `file` (hidden, empty, left there), held while it lives (flock:
// also between two writers of one process, each with its own descriptor).
class FileLock {
 public:
  explicit FileLock(const fs::path& file) {
    const fs::path lock = (file.has_parent_path() ? file.parent_path() : fs::path(".")) /
                          ("." + file.filename().string() + ".lock");
    m_fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (m_fd < 0)
      throw SessionError(lock.string() + ": the lock file cannot be opened (" + std::strerror(errno) + ")");
    struct stat st {};
    if (::fstat(m_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(m_fd);
      throw SessionError(lock.string() + ": the lock file is not a regular file");
    }
    while (::flock(m_fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(m_fd);
      throw SessionError(lock.string() + ": cannot be locked (" + std::strerror(err) + ")");
    }
  }
  ~FileLock() { ::close(m_fd); }  // closing releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int m_fd = -1;
};

std::string record_text(const MeasurementRecord& r) {
  return record_json(r).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

SessionSave save_session_merged(const fs::path& path, Session& s) {
  SessionSave out;
  const fs::path target = follow_links(path);
  out.written = target;
  if (target == path) {
    std::error_code ec;
    fs::create_directories(path.has_parent_path() ? path.parent_path() : fs::path("."), ec);
  }
  const FileLock lock(target);
  // What another window saved since this one read the file: merged in, never replaced.
  struct stat st {};
  if (::lstat(target.c_str(), &st) == 0) {
    Session disk = load_session(target);
    if (disk.device.backend != s.device.backend || disk.device.name != s.device.name)
      throw SessionError(target.string() + " now holds the session of another device (" + disk.device.name +
                         "); it is not replaced");
    std::unordered_set<std::string> mine;
    mine.reserve(s.records.size());
    for (const auto& r : s.records) mine.insert(record_text(r));
    for (auto& r : disk.records)
      if (mine.insert(record_text(r)).second) {
        s.records.push_back(std::move(r));
        ++out.merged;
      }
    if (!(s.dram_gbs > 0) && disk.dram_gbs > 0) s.dram_gbs = disk.dram_gbs;
    if (out.merged)
      std::stable_sort(
          s.records.begin(), s.records.end(),
          [](const MeasurementRecord& a, const MeasurementRecord& b) { return a.date < b.date; });
  }
  // Within the file's limits, counted on the text written: the oldest points make room.
  size_t drop = s.records.size() > size_t(kMaxSessionRecords) ? s.records.size() - kMaxSessionRecords : 0;
  std::string text;
  for (;;) {
    if (drop) {
      out.left_out.insert(out.left_out.end(), std::make_move_iterator(s.records.begin()),
                          std::make_move_iterator(s.records.begin() + std::ptrdiff_t(drop)));
      s.records.erase(s.records.begin(), s.records.begin() + std::ptrdiff_t(drop));
    }
    text = session_text(s);
    if (text.size() <= size_t(kMaxSessionBytes)) break;
    // Records until the excess is covered (each with its comma).
    size_t excess = text.size() - size_t(kMaxSessionBytes), freed = 0;
    drop = 0;
    while (freed < excess && drop < s.records.size()) freed += record_text(s.records[drop++]).size() + 1;
  }
  try {
    write_file(target, text, Replace::RegularFile);
  } catch (const ValidationError& e) {
    throw SessionError(e.what());
  }
  out.points = s.records.size();
  return out;
}

fs::path save_session_beside(const fs::path& dir, const std::string& prefix, const Session& s) {
  NewNames names(dir, prefix, {"json"});
  try {
    write_file(names[0], session_text(s), Replace::Reserved);
  } catch (const ValidationError& e) {
    throw SessionError(e.what());
  }
  return names[0];
}

fs::path default_session_path() {
  const char* x = std::getenv("XDG_DATA_HOME");
  if (x && *x) return fs::path(x) / "tilescope" / "session.json";
  const char* h = std::getenv("HOME");
  const fs::path home = h && *h ? fs::path(h) : fs::temp_directory_path();
  return home / ".local" / "share" / "tilescope" / "session.json";
}

size_t SessionSet::open(Session s) {
  if (m_sessions.size() > kMaxOverlays)
    throw ValidationError("at most " + std::to_string(kMaxOverlays) +
                          " sessions can be overlaid; close one first");
  const std::string base = s.label;
  for (int i = 2;; ++i) {
    bool taken = false;
    for (const auto& o : m_sessions) taken |= o.label == s.label;
    if (!taken) break;
    s.label = base + " (" + std::to_string(i) + ")";
  }
  m_sessions.push_back(std::move(s));
  return m_sessions.size() - 1;
}

void SessionSet::close(size_t index) {
  if (index >= 1 && index < m_sessions.size()) m_sessions.erase(m_sessions.begin() + std::ptrdiff_t(index));
}

// [SECTION] Plot data.
const char* to_string(ScaleAxis a) {
  switch (a) {
    case ScaleAxis::Square:
      return "M = N = K";
    case ScaleAxis::M:
      return "M";
    case ScaleAxis::N:
      return "N";
    case ScaleAxis::K:
      return "K";
    case ScaleAxis::NK:
      return "N = K";
    case ScaleAxis::MN:
      return "M = N";
  }
  return "?";
}

namespace {
bool on_axis(const ProblemSpec& p, ScaleAxis axis, const ProblemSpec& at) {
  switch (axis) {
    case ScaleAxis::Square:
      return p.m == p.n && p.n == p.k;
    case ScaleAxis::M:
      return p.n == at.n && p.k == at.k;
    case ScaleAxis::N:
      return p.m == at.m && p.k == at.k;
    case ScaleAxis::K:
      return p.m == at.m && p.n == at.n;
    case ScaleAxis::NK:
      return p.m == at.m && p.n == p.k;
    case ScaleAxis::MN:
      return p.k == at.k && p.m == p.n;
  }
  return false;
}
double x_of(const ProblemSpec& p, ScaleAxis axis) {
  return double(axis == ScaleAxis::M || axis == ScaleAxis::MN ? p.m : axis == ScaleAxis::K ? p.k : p.n);
}
}  // namespace

double axis_position(const ProblemSpec& p, ScaleAxis axis) {
  return x_of(p, axis);
}

std::string axis_label(ScaleAxis axis, const ProblemSpec& at) {
  const std::string m = std::to_string(at.m), n = std::to_string(at.n), k = std::to_string(at.k);
  switch (axis) {
    case ScaleAxis::Square:
      return "M = N = K";
    case ScaleAxis::M:
      return "M (N = " + n + ", K = " + k + ")";
    case ScaleAxis::N:
      return "N (M = " + m + ", K = " + k + ")";
    case ScaleAxis::K:
      return "K (M = " + m + ", N = " + n + ")";
    case ScaleAxis::NK:
      return "N = K (M = " + m + ")";
    case ScaleAxis::MN:
      return "M = N (K = " + k + ")";
  }
  return "?";
}

bool sweep_shape_of(ScaleAxis axis, const ProblemSpec& at, SweepShape* shape, int64_t* fixed) {
  switch (axis) {
    case ScaleAxis::Square:
      *shape = SweepShape::Square;
      *fixed = 0;
      return true;
    case ScaleAxis::NK:
      *shape = SweepShape::FixedM;
      *fixed = at.m;
      return true;
    case ScaleAxis::MN:
      *shape = SweepShape::FixedK;
      *fixed = at.k;
      return true;
    default:
      return false;
  }
}

ScaleAxis infer_axis(const Session& s, const ProblemSpec& at) {
  if (at.m == at.n && at.n == at.k) return ScaleAxis::Square;
  // Votes for M, N, K (one dimension differs from the current problem), NK and MN (two differ, moving
  // together as a sweep with M or K fixed moves them).
  int votes[5] = {0, 0, 0, 0, 0};
  for (const auto& r : s.records) {
    const ProblemSpec& p = r.spec;
    if (p.kernel != at.kernel || p.tile != at.tile) continue;
    const bool dm = p.m != at.m, dn = p.n != at.n, dk = p.k != at.k;
    if (dm + dn + dk == 1) votes[dm ? 0 : dn ? 1 : 2]++;
    if (!dm && dn && dk && p.n == p.k && at.n == at.k) votes[3]++;
    if (dm && dn && !dk && p.m == p.n && at.m == at.n) votes[4]++;
  }
  const ScaleAxis axes[5] = {ScaleAxis::M, ScaleAxis::N, ScaleAxis::K, ScaleAxis::NK, ScaleAxis::MN};
  int best = 1;  // N when nothing else wins outright
  for (int i = 0; i < 5; ++i)
    if (votes[i] > votes[best]) best = i;
  return axes[best];
}

std::vector<ScalingPoint> ScalingSeries::latest_per_x() const {
  std::vector<ScalingPoint> out;
  for (const auto& p : points) {
    if (!out.empty() && out.back().x == p.x) {
      if (p.date >= out.back().date) out.back() = p;
    } else {
      out.push_back(p);
    }
  }
  return out;
}

std::vector<ScalingSeries> scaling_series(const Session& s, ScaleAxis axis, const ProblemSpec& at) {
  std::vector<ScalingSeries> out;
  for (size_t i = 0; i < s.records.size(); ++i) {
    const MeasurementRecord& r = s.records[i];
    if (!r.timed || !r.passed || r.stats.count == 0 || r.spec.input != at.input) continue;
    if (!on_axis(r.spec, axis, at)) continue;
    const KernelTile cfg{r.spec.kernel, r.spec.tile};
    auto it = std::find_if(out.begin(), out.end(), [&](const ScalingSeries& x) { return x.config == cfg; });
    if (it == out.end()) {
      ScalingSeries ns;
      ns.config = cfg;
      ns.label = cfg.label();
      ns.tf32 = r.tf32;
      ns.reference = r.spec.kernel == "cublas" || r.spec.kernel == "cublas_tf32";
      out.push_back(ns);
      it = out.end() - 1;
    }
    ScalingPoint p;
    p.x = x_of(r.spec, axis);
    p.median_ms = r.stats.median;
    p.p25_ms = r.stats.p25;
    p.p75_ms = r.stats.p75;
    p.tflops = r.tflops;
    p.samples = r.stats.count;
    p.clock_mhz = r.clock.available ? r.clock.median_mhz : 0;
    p.throttled = r.clock.throttled;
    p.frames_drawn = r.frames_drawn;
    p.cublas_ms = r.cublas_ms() > 0 ? r.cublas_ms() : 0;
    p.cublas_interleaved = r.cublas_interleaved();
    if (p.cublas_interleaved) {
      p.cublas_clock_mhz = r.interleaved.clock.available ? r.interleaved.clock.median_mhz : 0;
      p.cublas_throttled = r.interleaved.clock.throttled;
      p.clocks_differ = clocks_differ(r.clock, r.interleaved.clock);
    }
    p.date = r.date;
    p.record = i;
    it->points.push_back(p);
  }
  for (auto& ser : out)
    std::stable_sort(ser.points.begin(), ser.points.end(), [](const ScalingPoint& a, const ScalingPoint& b) {
      return a.x != b.x ? a.x < b.x : a.date < b.date;
    });
  return out;
}

std::vector<LadderBar> ladder_bars(const Session& s, const ProblemSpec& at,
                                   const std::vector<KernelInfo>& ladder) {
  std::map<std::pair<std::string, int>, size_t> newest;  // config -> record
  for (size_t i = 0; i < s.records.size(); ++i) {
    const MeasurementRecord& r = s.records[i];
    if (!r.timed || !r.passed || r.stats.count == 0) continue;
    if (r.spec.m != at.m || r.spec.n != at.n || r.spec.k != at.k || r.spec.input != at.input) continue;
    const auto key = std::make_pair(r.spec.kernel, r.spec.tile);
    auto it = newest.find(key);
    if (it == newest.end() || s.records[it->second].date <= r.date) newest[key] = i;
  }
  std::vector<LadderBar> bars;
  auto add = [&](const std::string& kernel, int tile) {
    auto it = newest.find({kernel, tile});
    if (it == newest.end()) return;
    const MeasurementRecord& r = s.records[it->second];
    LadderBar b;
    b.config = {kernel, tile};
    b.label = b.config.label();
    b.median_ms = r.stats.median;
    b.p25_ms = r.stats.p25;
    b.p75_ms = r.stats.p75;
    b.tflops = r.tflops;
    b.tf32 = r.tf32;
    b.record = it->second;
    bars.push_back(b);
    newest.erase(it);
  };
  for (const auto& k : ladder) {
    if (k.tiles.empty()) add(k.id, 0);
    for (int t : k.tiles) add(k.id, t);
  }
  // Kernels the ladder does not list (e.g. from a session of another build) come last, by name.
  std::vector<std::pair<std::string, int>> rest;
  for (const auto& [key, i] : newest) rest.push_back(key);
  for (const auto& [kernel, tile] : rest) add(kernel, tile);
  return bars;
}

std::string speedup_label(double value_ms, double baseline_ms, const std::string& baseline) {
  if (!(value_ms > 0) || !(baseline_ms > 0)) return "";
  char b[64];
  const double x = baseline_ms / value_ms;
  std::snprintf(b, sizeof b, x >= 10 ? "%.0fx " : x >= 1 ? "%.1fx " : "%.2fx ", x);
  return b + baseline;
}

}  // namespace ts
