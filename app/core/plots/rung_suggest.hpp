#pragma once
// [SECTION] Which rung for this shape: the fastest TileScope kernel (and its tile) at one M x N x K and one
// precision, from a session's measured points only (never a rule of thumb, never a guess), with its margins
// to the next fastest kernel, to its own next tile and to cuBLAS of the same precision timed interleaved
// with it, each said to be "within noise" where the two points' quartiles overlap (the tile suggestion's
// standard, tile_suggest.hpp). Points are read as the tile suggestion reads them (standing_points(): the
// newest, a benchmarked one before a quick one; failed, cold-L2 and impossible points are never the
// fastest). What is missing (configurations of the ladder with no point here) is listed, and
// rung_search_points() gives the runs that measure it: the Result panel's "Measure N missing",
// `tilescope run --suggest-kernel`.
//   ladder_rungs       the kernels ranked: built in, neither cuBLAS nor teaching, of one precision, runnable
//   rank_rungs         the ranking at one shape and precision, its margins and what is missing
//   RungRanking::line  one line ("fastest here: pipelined 256, 53.1 TFLOP/s, 103 % of cuBLAS; 4.2 % ahead
//                      of splitk 2"); notes(): the margins and what is missing, in sentences
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/engine/sweep.hpp"
#include "core/io/session.hpp"

namespace ts {

// The cuBLAS that TileScope's kernels of a precision are compared with: "cublas" (SGEMM) for FP32 kernels,
// "cublas_tf32" for TF32 ones (the backend interleaves the same one: InterleavedReference::kernel).
const char* cublas_for(bool tf32);

// The ladder at one precision on `device`: the registry's kernels that are not cuBLAS (of either precision),
// not wrong on purpose (teaching) and not a person's own, whose tf32 flag is `tf32`, and that run on the
// device (its backend kind, its compute capability), in registry (ladder) order. A device whose backend is
// not named (a session read without one) takes every kernel.
std::vector<const KernelInfo*> ladder_rungs(const std::vector<KernelInfo>& registry, bool tf32,
                                            const DeviceInfo& device);

// "pipelined 256", "naive 16", "cublas": a configuration as the ranking names it.
std::string rung_label(const KernelTile& c);

// One measured configuration: its standing point (standing_points()) and the cuBLAS timed with it.
struct RungTiming {
  KernelTile config;
  double median_ms = 0, p25_ms = 0, p75_ms = 0, tflops = 0;
  int samples = 0;
  double noise = 0;  // stddev / mean of its samples
  std::string stop, policy, date;
  size_t record = 0;  // index into the session's records
  // cuBLAS of this precision timed interleaved with it (cublas_ms 0: none, cublas_note says why).
  double cublas_ms = 0, cublas_p25_ms = 0, cublas_p75_ms = 0;
  std::string cublas_note;
  bool clocks_differ = false;  // the two SM clocks differ by more than 1 % (clocks_differ(), measure.hpp)
  double percent_of_cublas() const { return cublas_ms > 0 ? 100.0 * cublas_ms / median_ms : 0.0; }
};

// How far ahead the fastest is of another point.
struct RungMargin {
  std::string against;        // "splitk 2", "tile 128", "cublas"
  double percent = 0;         // 100 (its median / the fastest's - 1): how much faster; below 0 slower
  bool within_noise = false;  // the two points' interquartile ranges overlap
};

struct RungRanking {
  int64_t m = 0, n = 0, k = 0;
  bool tf32 = false;
  std::string cublas;                // cublas_for(tf32)
  int configurations = 0;            // of the ladder (kernel x tile) at this precision on this device
  std::vector<RungTiming> measured;  // every measured configuration, fastest first
  std::vector<KernelTile> failed;    // its newest point failed verification: never the fastest
  std::vector<KernelTile>
      impossible;  // its standing point is impossible (impossible_point()): never the fastest
  std::vector<KernelTile> missing;  // no point here yet, in ladder order
  // With at least one measured configuration: the margins of the fastest (measured.front()) to the fastest
  // of another kernel, to its own kernel's next tile, and to the cuBLAS timed with it.
  std::optional<RungMargin> next_kernel, next_tile, to_cublas;

  const RungTiming* fastest() const { return measured.empty() ? nullptr : &measured.front(); }
  // Every configuration has a point here (measured, failed or impossible): the fastest is the fastest of the
  // ladder.
  bool complete() const { return missing.empty(); }
  // The kernels with configurations missing, with their tiles: "splitk (2, 4), warptile".
  std::string missing_text() const;
  // One line, for the Result panel and the end of the CLI's ranking:
  //   "fastest here: pipelined 256, 53.1 TFLOP/s, 103 % of cuBLAS; 4.2 % ahead of splitk 2"
  //   "fastest here: tiled 32, 2.1 GFLOP/s; within noise of coalesced 16 (0.4 % ahead)"
  //   "fastest so far: tiled 32, 2.1 GFLOP/s; 6 of 9 not measured"        (complete() false)
  //   "no FP32 rung measured at 256 x 256 x 256 yet (9 configurations)"   (nothing measured)
  std::string line() const;
  // The line as it reads after "fastest rung" (the Result panel's row): without "fastest here: " where the
  // ladder is complete, "so far: tiled 16, ..." where it is not; the same as line() where nothing is
  // measured.
  std::string body() const;
  // What the line leaves out, a sentence each: every margin with its noise ("4.2 % ahead of splitk 2, the
  // fastest other kernel; their quartiles do not overlap"), the cuBLAS timed with it or why there is none,
  // SM clocks that differ, the failed and the missing configurations. Below the ranking in the panel's hover
  // text and the CLI's table.
  std::vector<std::string> notes() const;
};

// The ranking of the ladder (ladder_rungs(registry, tf32, s.device)) at exactly m x n x k from the session's
// records. A configuration whose kernel is not in the ladder (cuBLAS, a teaching kernel, another precision, a
// kernel this build lacks) is never ranked.
RungRanking rank_rungs(const Session& s, const std::vector<KernelInfo>& registry, int64_t m, int64_t n,
                       int64_t k, bool tf32);

// The runs that measure what `ranking` is missing, at `at`'s shape, input and seed.
std::vector<ProblemSpec> rung_search_points(const RungRanking& ranking, const ProblemSpec& at);

}  // namespace ts
