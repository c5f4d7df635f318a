#pragma once
// [SECTION] The fastest tile of a kernel at one shape, from measurements only. A suggestion names a tile only
// when every tile of the kernel has a verified, timed point at exactly that M x N x K on this session's
// device; until then it says which tiles are measured and which are not, and tile_search_points() gives the
// runs that would complete it (the window's "Time every tile here", `tilescope run --suggest-tile`).
#include <optional>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/io/session.hpp"

namespace ts {

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

// From the session's records of `kernel` at spec's M x N x K (any input and seed: the timing of a GEMM does
// not depend on the values), each tile's newest point: timed and verified, or failed (a teaching kernel's
// tile that does not divide K), or impossible: a failed or impossible tile is reported, never suggested, and
// not asked to be timed again.
TileSuggestion suggest_tile(const Session& s, const KernelInfo& kernel, const ProblemSpec& spec);

// The runs that measure the tiles `suggestion` is missing (all of the kernel's tiles when `all`), at spec's
// shape, input and seed.
std::vector<ProblemSpec> tile_search_points(const KernelInfo& kernel, const ProblemSpec& spec,
                                            const TileSuggestion* suggestion = nullptr);

}  // namespace ts
