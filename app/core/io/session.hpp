#pragma once
// [SECTION] Sessions: every measured point, with everything needed to read it later or on another machine
// (spec, device, driver and CUDA versions, policy, every sample, median and IQR, SM clock and throttle
// reasons, date, TileScope version and commit). Saved as JSON (a temporary file renamed over the target),
// reloaded on the next launch, and opened beside the current session to overlay another GPU's points.
//   Session            one device's points; add(RunResult)
//   save_session       JSON, atomic replace; load_session refuses a damaged or foreign file with its reason
//   SessionSet         the current session and the ones opened beside it, for overlays
//   scaling_series     a session's points as plot series: time and TFLOP/s against the size that varies
//   ladder_bars        the latest point of every kernel x tile at one shape, in ladder (registry) order
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/engine/backend.hpp"
#include "core/engine/sweep.hpp"

namespace ts {

// A session file that cannot be used: its path and the reason. Input from a person (exit code 2).
class SessionError : public ValidationError {
 public:
  using ValidationError::ValidationError;
};

inline constexpr int kSessionFormat = 1;
inline constexpr int64_t kMaxSessionBytes = int64_t(64) << 20;  // a session file larger than this is refused
inline constexpr int kMaxSessionRecords = 100000;
inline constexpr int kMaxRecordSamples = 100000;
// Reading is bounded by these too (a session nests 5 levels; a record holds about 90 values besides its
// samples, its interleaved reference's and its changing-input timing's): past them a file is refused while it
// is parsed, before more of it is held in memory.
inline constexpr int kMaxSessionDepth = 16;
inline constexpr int64_t kMaxRecordValues = 3 * int64_t(kMaxRecordSamples) + 1000;
inline constexpr int64_t kMaxHeaderValues = 10000;

// One measured point: the run's record (RunRecord: its sources), with the launch's occupancy and the
// TileScope that measured it.
struct MeasurementRecord : RunRecord {
  int blocks_per_sm = 0;  // of the timed launch (0: not a GPU run)
  double waves = 0;
  bool k_segments = false;  // the timed launch's OccupancyReport::k_segments: `waves` is no real wave
  std::string program_version, commit;

  static MeasurementRecord from(const RunResult& r);
  double iqr_ms() const { return stats.p75 - stats.p25; }
};

// [SECTION] What `tilescope bench` adds to the session it writes (--session-out): which part of which sweep
// its points are, and what its table says besides the points, so that `tilescope merge` (merge.hpp) can join
// the parts of a sweep measured on several machines (bench --shard I/N) into the table one run prints. A
// whole run is part 1 of 1. The window's sessions have none.
inline constexpr int kMaxPartWaveMarks = 10000;
// Values in a session's "sweep_part" (counted apart from the rest of its fields: a part of 4096 points that
// all failed, with its wave marks, holds about 160000).
inline constexpr int64_t kMaxPartValues = 200000;

// A point of the sweep that ended without a result (the backend refused it or the device failed): a row of
// the table, no record.
struct FailedPoint {
  int64_t point = 0;  // index in the whole sweep
  ProblemSpec spec;
  std::string error;
};

struct SweepPart {
  int shard = 1,
      shards = 1;            // part `shard` (1-based) of `shards`: the points p with p mod shards = shard - 1
  std::string sweep;         // the whole sweep in words: its configurations and shapes
  std::string sweep_sha256;  // its identity (sweep_sha256(), sweep.hpp)
  int64_t points = 0;        // in the whole sweep
  std::vector<int64_t> record_points;  // the whole sweep's index of each record, in record order
  std::vector<FailedPoint> failed;     // in the order measured
  // The table's header (BenchMeta, bench.hpp) besides the session's device, versions and bandwidth.
  std::string policy;  // MeasurePolicy::describe()
  bool cold_l2 = false, interleave_reference = false;
  std::string sizes;    // SweepSpec::describe() of a --sizes sweep, "" for --shapes
  std::string started;  // UTC ISO 8601
  double wall_seconds = 0;
  bool interrupted = false;
  std::vector<ConfigWaveMark> wave_marks;
  // Written by `tilescope merge` (then the part is 1 of 1): how many parts it joined, and those it lacked.
  int merged_parts = 0;
  std::vector<int> missing_shards;
};

struct Session {
  std::string label;                    // shown in legends, e.g. "NVIDIA H100 80GB HBM3, 2025-01-31"
  std::string created;                  // UTC ISO 8601
  std::string program_version, commit;  // of the TileScope that created it
  DeviceInfo device;                    // the device its points were measured on
  double dram_gbs = 0;                  // measured DRAM bandwidth (copy kernel), 0: not measured
  std::vector<MeasurementRecord> records;
  // Written by `tilescope bench` (then its record_points and records go together); absent elsewhere.
  std::optional<SweepPart> part;
  // The window's engine whose points this session takes (0: none, e.g. a session opened beside the current
  // one, or read from a file). Not saved: it names an engine of this window only.
  uint64_t engine = 0;

  static Session for_device(const DeviceInfo& d);  // empty, labelled "<device>, <date>"
  // Appends MeasurementRecord::from(r). A session that gains a point is no longer the part of a sweep that
  // bench wrote: its part is dropped.
  void add(const RunResult& r);
};

nlohmann::json to_json(const Session& s);
// Strict: throws SessionError naming the first problem ("record 3: 'median_ms' is not a number").
Session session_from_json(const nlohmann::json& j);

// The file's text: compact JSON (what is written is what counts against kMaxSessionBytes).
std::string session_text(const Session& s);

// Writes the session as JSON to a temporary file in the target folder (the project's writer: flushed and
// checked), then renames it over `path`. replace = false refuses an existing file (SessionError); a path that
// exists and is not a regular file is always refused.
void save_session(const std::filesystem::path& path, const Session& s, bool replace);
// Reads a session written by save_session. Refuses (SessionError, with the path and the reason): a missing
// file, anything but a regular file, a file over kMaxSessionBytes (before reading it), text that is not JSON
// (with the byte offset) or a number no double holds (1e309), nesting deeper than kMaxSessionDepth, another
// format or version, a missing or mistyped field, a value out of its range (a time that is null, negative or
// above 1e9 ms; a median not above 0; quartiles out of order), more than kMaxSessionRecords records or
// kMaxRecordSamples samples in one. Records are read one at a time as the text is parsed: the memory held is
// the records read plus one record's JSON, whatever the file holds.
Session load_session(const std::filesystem::path& path);

// [SECTION] The window's session file, shared by every window on one data folder.
struct SessionSave {
  std::filesystem::path written;            // the regular file written (a symbolic link's target)
  size_t points = 0;                        // points in the file now
  size_t merged = 0;                        // points another window had saved there, now in `s` too
  std::vector<MeasurementRecord> left_out;  // the oldest points that did not fit in the file's limits
};
// Saves `s` to `path` without losing what another writer saved there meanwhile: under an exclusive lock
// (flock on ".<file>.lock", hidden beside the file), the file is read again and its points that `s` lacks are
// merged into `s` (a point is the same point when every field is equal), ordered by date, then written
// atomically. A symbolic link is followed to the file it names (written there, the link stays). Points past
// kMaxSessionRecords or kMaxSessionBytes (compact) are taken out of `s`, oldest first, into left_out: the
// caller keeps them elsewhere (save_session_beside). Throws SessionError when the file there cannot be read
// as a session of the same device, or is not a regular file (nothing written), std::runtime_error when
// writing fails.
SessionSave save_session_merged(const std::filesystem::path& path, Session& s);
// Writes `s` under a new name <prefix>-<date>-<time>[-2, -3...].json in `dir`, taken exclusively (NewNames)
// and never replacing anything; returns the name.
std::filesystem::path save_session_beside(const std::filesystem::path& dir, const std::string& prefix,
                                          const Session& s);

// The file name of the session of an engine the window connected to, beside the window's own session file:
// "session-<device>-<engine>.json" in lower-case letters, digits and dashes (at most 100 characters), so the
// same device through the same engine name finds its points again at the next connection.
std::string engine_session_file_name(const std::string& device_name, const std::string& engine_name);

// Where the window keeps its session between launches: $XDG_DATA_HOME/tilescope/session.json, else
// $HOME/.local/share/tilescope/session.json.
std::filesystem::path default_session_path();

// The current session and the ones opened beside it (overlays). Index 0 is the current session.
class SessionSet {
 public:
  SessionSet() : m_sessions(1) {}
  Session& current() { return m_sessions[0]; }
  const Session& current() const { return m_sessions[0]; }
  const std::vector<Session>& all() const { return m_sessions; }
  Session& at(size_t index) { return m_sessions.at(index); }
  static constexpr size_t kMaxOverlays = 8;  // sessions drawn beside the current one
  // Adds a session to overlay; its label gets " (2)", " (3)"... when another one already has it. Returns
  // its index (>= 1). Throws ValidationError past kMaxOverlays overlays.
  size_t open(Session s);
  void close(size_t index);  // index >= 1; out of range: no-op
  // The session of the window's engine `engine` (Session::engine), if one is here.
  std::optional<size_t> of_engine(uint64_t engine) const;
  // Makes session `index` the current one (it changes places with the current one, which becomes an overlay):
  // the window measures on another of its engines. Out of range: no-op.
  void make_current(size_t index);
  size_t size() const { return m_sessions.size(); }

 private:
  std::vector<Session> m_sessions;
};

// [SECTION] Plot data. Which size varies along the x axis of a scaling plot.
enum class ScaleAxis {
  Square,  // M = N = K together: points with m == n == k
  M,       // M varies; N and K as in the reference problem
  N,       // N varies; M and K as in the reference problem
  K,       // K varies; M and N as in the reference problem
  NK,      // N = K vary together; M as in the reference problem (a sweep with M fixed)
  MN,      // M = N vary together; K as in the reference problem (a sweep with K fixed)
};
const char* to_string(ScaleAxis a);  // "M = N = K", "M", "N", "K", "N = K", "M = N"
// The axis the person varies: Square when the reference problem is square, else the way the session's points
// of the same kernel x tile around `at` differ from it: one dimension (M, N or K), or N and K together with
// N = K (NK), or M and N together with M = N (MN). N when that is unclear.
ScaleAxis infer_axis(const Session& s, const ProblemSpec& at);
// "N = K (M = 1024)", "N (M = 2048, K = 8192)", "M = N = K": the axis and what stays fixed along it.
std::string axis_label(ScaleAxis axis, const ProblemSpec& at);
// The sweep shape that moves along `axis` through `at` (Square, FixedM for NK, FixedK for MN), for wave
// marks; false for an axis no sweep shape follows (M, N or K alone). `fixed` receives M or K.
bool sweep_shape_of(ScaleAxis axis, const ProblemSpec& at, SweepShape* shape, int64_t* fixed);
// Where `p` lies on `axis` (its N, M or K).
double axis_position(const ProblemSpec& p, ScaleAxis axis);

struct ScalingPoint {
  double x = 0;  // the varying size
  double median_ms = 0, p25_ms = 0, p75_ms = 0, tflops = 0;
  int samples = 0;
  double clock_mhz = 0;  // median SM clock during the point (0: unknown)
  bool throttled = false;
  int64_t frames_drawn = 0;  // frames a window drew while the point was timed
  // cuBLAS at the same shape and precision (0: not measured), and whether it was timed interleaved with the
  // point; then its median SM clock (0: unknown), and whether the two clocks differ by more than 1 %.
  double cublas_ms = 0;
  bool cublas_interleaved = false;
  double cublas_clock_mhz = 0;
  bool cublas_throttled = false;
  bool clocks_differ = false;
  std::string date;
  size_t record = 0;       // index into the session's records
  std::string impossible;  // RunRecord::impossible: why this time cannot be right (empty: it can)
};

// One kernel x tile of one session: every timed, verified point on the axis, sorted by x (then date).
struct ScalingSeries {
  KernelTile config;
  std::string label;  // "tiled T=32" (plus the session's label for overlays)
  bool tf32 = false;
  bool reference = false;  // cuBLAS / cuBLAS TF32: drawn as the reference curve
  std::vector<ScalingPoint> points;
  // Verified points whose time cannot be right (RunRecord::impossible), sorted like points: drawn apart
  // (a hollow red marker), never in `points`, the line or anything chosen from them.
  std::vector<ScalingPoint> impossible;
  // The newest point at each x, sorted by x: the line through the series.
  std::vector<ScalingPoint> latest_per_x() const;
};

// The series of `s` along `axis` through the reference problem `at` (its other dimensions, its input kind).
// Failed and untimed points are left out; impossible ones go into ScalingSeries::impossible.
std::vector<ScalingSeries> scaling_series(const Session& s, ScaleAxis axis, const ProblemSpec& at);

// A bar of the ladder chart: the newest verified point of a configuration at one shape (impossible points
// are not bars).
struct LadderBar {
  KernelTile config;
  std::string label;
  double median_ms = 0, p25_ms = 0, p75_ms = 0, tflops = 0;
  bool tf32 = false;
  size_t record = 0;
};
// Bars for the shape of `at` in ladder order (the registry's order, tiles ascending).
std::vector<LadderBar> ladder_bars(const Session& s, const ProblemSpec& at,
                                   const std::vector<KernelInfo>& ladder);
// "3.1x tiled T=32": how many times faster `value_ms` is than `baseline_ms` ("0.42x ..." when slower).
std::string speedup_label(double value_ms, double baseline_ms, const std::string& baseline);

}  // namespace ts
