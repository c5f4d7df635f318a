#pragma once
// [SECTION] The fastest tile of a kernel at one shape, from measurements only. A suggestion names a tile only
// when every tile of the kernel has a verified, timed point at exactly that M x N x K on this session's
// device; until then it says which tiles are measured and which are not, and tile_search_points() gives the
// runs that would complete it (the window's "Time every tile here", `tilescope run --suggest-tile`).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/io/session.hpp"

namespace ts {

// [SECTION] The point that stands for one kernel x tile at one shape: shared by the tile suggestion here and
// the rung ranking (rung_suggest.hpp), so both read a session the same way. Of the configuration's records at
// exactly M x N x K (any input and seed: the timing of a GEMM does not depend on the values), taken in the
// session's order (the order measured; a merged session is ordered by date):
// - a record that failed verification makes the configuration failed, until a later record of it passes;
// - of its passing, timed records after the last failure, the newest one measured under a policy with a noise
//   target (bench: stopped "converged", at the time limit or at the sample limit) stands for it, and where
//   there is none, the newest of them. So the newest measurement wins, except that a quick run in the window
//   (10 launches, no noise target, no interleaved cuBLAS) never replaces a benchmarked point: the points the
//   person asked to be measured carefully are the ones compared. (Not the best-converged one: an older point
//   of an earlier build or driver with less noise is still an older point.)
// - records timed with a cold L2 are left out (the window and `tilescope run` time with a warm one; a
//   `bench --cold` session's points are no timing of the same thing).
// A standing point that is impossible (impossible_point(): faster than the device can go) is reported by the
// suggestions, never the fastest and not measured again, as a failed one is.
struct StandingPoint {
  size_t record = 0;    // index into the session's records
  bool failed = false;  // the configuration's newest record failed verification (record: that one)
};
// Every configuration (kernel, tile) with a record at m x n x k, by kernel id and tile.
std::map<std::pair<std::string, int>, StandingPoint> standing_points(const Session& s, int64_t m, int64_t n,
                                                                     int64_t k);
// The record was timed under a policy with a noise target (its stop is not "samples taken").
bool benchmarked(const RunRecord& r);
// The record was timed with the L2 flushed before every sample (MeasurePolicy::describe() says ", cold L2").
bool timed_cold(const RunRecord& r);
// A point faster than the device allows (RunRecord::impossible: above its compute roof or under its DRAM
// floor): never the fastest. The one place the suggestions ask.
bool impossible_point(const RunRecord& r);

struct TileTiming {
  int tile = 0;
  double median_ms = 0, p25_ms = 0, p75_ms = 0, tflops = 0;
  size_t samples = 0;
  std::string policy, date;
};

struct TileSuggestion {
  std::string kernel;
  int64_t m = 0, n = 0, k = 0;
  int current_tile = 0;
  std::vector<TileTiming> measured;  // the newest verified point of each measured tile, fastest first
  std::vector<int> failed;           // tiles whose newest point here failed verification (never suggested)
  // Tiles whose newest point here is impossible (RunRecord::impossible: faster than the device can go): no
  // record, never suggested, not asked to be timed again.
  std::vector<int> impossible;
  std::vector<int> missing;  // tiles of the kernel with no point here, in registry order
  // Set only when no tile is missing (each one measured or failed): the fastest measured tile.
  std::optional<int> fastest;
  // The current tile's median over the fastest's (1: the current tile is the fastest), when both are
  // measured.
  double speedup = 0;
  // The fastest's and the runner-up's interquartile ranges overlap: the two are within their noise.
  bool within_noise = false;
  bool applicable() const {
    return !measured.empty() || !missing.empty() || !failed.empty() || !impossible.empty();
  }  // tile-less: no
  // One line: "fastest tile here: 256 (2.71 ms, 50.6 TFLOP/s), 1.06x faster than tile 128", "fastest of the
  // tiles timed here: 128 (3.1 ms); not timed yet: 256", with "; tile T is within its noise" where it is.
  std::string summary() const;
  // With `fastest` set, what follows "fastest tile here: " ("256 (2.71 ms, ...), 1.06x faster than tile
  // 128"); else empty.
  std::string fastest_detail() const;
};

// From the session's records of `kernel` at spec's M x N x K, each tile's standing point (standing_points()):
// timed and verified, or failed (a teaching kernel's tile that does not divide K), or impossible: a failed or
// impossible tile is reported, never suggested, and not asked to be timed again.
TileSuggestion suggest_tile(const Session& s, const KernelInfo& kernel, const ProblemSpec& spec);

// The runs that measure the tiles `suggestion` is missing (all of the kernel's tiles when `all`), at spec's
// shape, input and seed.
std::vector<ProblemSpec> tile_search_points(const KernelInfo& kernel, const ProblemSpec& spec,
                                            const TileSuggestion* suggestion = nullptr);

}  // namespace ts
