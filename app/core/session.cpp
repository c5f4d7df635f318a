#include "session.hpp"

#include "files.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

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
  return {{"kernel", r.spec.kernel},
          {"tile", r.spec.tile},
          {"m", r.spec.m},
          {"n", r.spec.n},
          {"k", r.spec.k},
          {"input", to_string(r.spec.input)},
          {"seed", r.spec.seed},
          {"backend", r.backend},
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
          {"commit", r.commit}};
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

 private:
  [[noreturn]] void bad(const std::string& key, const char* what) const {
    throw SessionError(m_where + ": '" + key + "' " + what);
  }
  const json& m_j;
  std::string m_where;
};

ClockRecord clock_from(const Reader& c) {
  ClockRecord k;
  k.available = c.flag("available");
  k.min_mhz = c.number("min_mhz");
  k.median_mhz = c.number("median_mhz");
  k.max_mhz = c.number("max_mhz");
  k.device_max_mhz = c.number("device_max_mhz");
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
  for (const json& x : samples) v.push_back(r.to_double(x, std::string(key) + "[]"));
  return v;
}

SampleStats stats_from(const Reader& r) {
  SampleStats s;
  s.count = int(r.integer("count", 0, kMaxRecordSamples));
  s.median = r.number("median");
  s.p25 = r.number("p25");
  s.p75 = r.number("p75");
  s.min = r.number("min");
  s.max = r.number("max");
  s.mean = r.number("mean");
  s.stddev = r.number("stddev");
  return s;
}

DeviceInfo device_from(const Reader& r) {
  DeviceInfo d;
  d.backend = r.str("backend");
  d.name = r.str("name");
  d.label = r.str("label");
  d.sm = int(r.integer("compute_capability", 0, 1000));
  d.sm_count = int(r.integer("sm_count", 0, 100000));
  d.max_sm_clock_mhz = r.number("max_sm_clock_mhz");
  d.driver = r.str("driver");
  d.cuda_runtime = r.str("cuda_runtime");
  d.l2_bytes = r.integer("l2_bytes", 0, INT64_MAX);
  d.memory_bytes = r.integer("memory_bytes", 0, INT64_MAX);
  d.datasheet_bandwidth_gbs = r.number("datasheet_bandwidth_gbs");
  d.peak_fp32_tflops = r.number("peak_fp32_tflops");
  d.peak_tf32_tflops = r.number("peak_tf32_tflops");
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
  m.tflops = r.number("tflops");
  m.noise = r.number("noise");
  m.stop = r.str("stop");
  m.passed = r.flag("passed");
  m.max_abs_err = r.number("max_abs_err");
  m.tolerance = r.number("tolerance");
  m.clock = clock_from(r.object("clock"));
  if (r.has("frames_drawn")) m.frames_drawn = r.integer("frames_drawn", 0, INT64_MAX);
  m.tile_m = int(r.integer("tile_m", 0, 1 << 20));
  m.tile_n = int(r.integer("tile_n", 0, 1 << 20));
  m.blocks_per_sm = int(r.integer("blocks_per_sm", 0, 1 << 20));
  if (r.has("blocks_per_tile")) m.blocks_per_tile = int(r.integer("blocks_per_tile", 1, 1 << 20));
  m.waves = r.number("waves");
  m.reference_ms = r.number("reference_ms");
  if (r.has("interleaved_reference")) {  // older files have none
    const Reader ir = r.object("interleaved_reference");
    InterleavedReference& x = m.interleaved;
    x.kernel = ir.str("kernel");
    x.times_ms = samples_from(ir, "samples_ms");
    x.stats = stats_from(ir.object("stats_ms"));
    if (x.stats.count != int(x.times_ms.size()))
      throw SessionError(ir.where() + ": stats_ms.count = " + std::to_string(x.stats.count) + " but " +
                         std::to_string(x.times_ms.size()) + " samples");
    x.noise = ir.number("noise");
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

Session session_from_json(const json& j) {
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
  s.dram_gbs = r.number("dram_gbs");
  const json& recs = r.at("records");
  if (!recs.is_array()) throw SessionError("session: 'records' is not a list");
  if (recs.size() > size_t(kMaxSessionRecords))
    throw SessionError("session has " + std::to_string(recs.size()) + " records, more than the limit of " +
                       std::to_string(kMaxSessionRecords));
  s.records.reserve(recs.size());
  for (size_t i = 0; i < recs.size(); ++i)
    s.records.push_back(record_from(Reader(recs[i], "record " + std::to_string(i + 1))));
  return s;
}

void save_session(const fs::path& path, const Session& s, bool replace) {
  // The program's one writer: a unique temporary file, fsync, rename; only a regular file is ever replaced.
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  try {
    write_file(path, to_json(s).dump(1) + "\n", replace ? Replace::RegularFile : Replace::Never);
  } catch (const ValidationError& e) {
    throw SessionError(e.what());
  }
}

Session load_session(const fs::path& path) {
  const std::string p = path.string();
  std::error_code ec;
  const auto st = fs::status(path, ec);
  // The reason as the system gives it: a loop of symbolic links is not a missing file.
  if (ec == std::errc::too_many_symbolic_link_levels)
    throw SessionError(p + ": a loop of symbolic links (" + ec.message() + ")");
  if (ec && ec != std::errc::no_such_file_or_directory) throw SessionError(p + ": " + ec.message());
  if (ec || !fs::exists(st)) throw SessionError(p + ": no such file");
  if (!fs::is_regular_file(st)) throw SessionError(p + ": not a regular file");
  const auto size = fs::file_size(path, ec);
  if (ec) throw SessionError(p + ": cannot read its size (" + ec.message() + ")");
  if (size > uint64_t(kMaxSessionBytes))
    throw SessionError(p + ": " + format_bytes_exact(size) + " is larger than the limit of " +
                       format_bytes_exact(uint64_t(kMaxSessionBytes)) + " for a session");
  std::ifstream f(path, std::ios::binary);
  if (!f) throw SessionError(p + ": cannot be opened");
  std::string text(size_t(size), '\0');
  f.read(text.data(), std::streamsize(size));
  if (size_t(f.gcount()) != size_t(size)) throw SessionError(p + ": could not read the whole file");
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw SessionError(p + ": not JSON (byte " + std::to_string(e.byte) + ")");
  }
  try {
    return session_from_json(j);
  } catch (const SessionError& e) {
    throw SessionError(p + ": " + e.what());
  }
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
