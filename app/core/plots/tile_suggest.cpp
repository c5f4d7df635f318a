#include "core/plots/tile_suggest.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/plots/figure.hpp"

namespace ts {

namespace {
// In the units the plots use (figure.hpp): 74.7 us rather than 0.0747 ms, GFLOP/s below 1 TFLOP/s.
std::string fmt_ms(double ms) {
  return format_ms(ms);
}
std::string fmt_speed(double tflops) {
  return format_flops(tflops * 1e12);
}
std::string tile_list(const std::vector<int>& tiles) {
  std::string out;
  for (size_t i = 0; i < tiles.size(); ++i) out += (i ? ", " : "") + std::to_string(tiles[i]);
  return out;
}
}  // namespace

TileSuggestion suggest_tile(const Session& s, const KernelInfo& kernel, const ProblemSpec& spec) {
  TileSuggestion out;
  out.kernel = kernel.id;
  out.m = spec.m;
  out.n = spec.n;
  out.k = spec.k;
  out.current_tile = spec.tile;
  if (kernel.tiles.empty()) return out;
  std::map<int, const MeasurementRecord*> newest;
  for (const MeasurementRecord& r : s.records) {  // appended in the order measured: the last one wins
    if (r.spec.kernel != kernel.id || r.spec.m != spec.m || r.spec.n != spec.n || r.spec.k != spec.k)
      continue;
    // A verified, timed point; or a failed one (timed or not: the bench policy does not time failures).
    const bool timed_ok = r.error.passed && r.timed && r.stats.count > 0 && r.stats.median > 0;
    if (!timed_ok && r.error.passed) continue;
    if (std::find(kernel.tiles.begin(), kernel.tiles.end(), r.spec.tile) == kernel.tiles.end()) continue;
    newest[r.spec.tile] = &r;
  }
  for (int t : kernel.tiles) {
    const auto it = newest.find(t);
    if (it == newest.end()) {
      out.missing.push_back(t);
      continue;
    }
    const MeasurementRecord& r = *it->second;
    if (!r.error.passed) {
      out.failed.push_back(t);
      continue;
    }
    if (r.is_impossible()) {  // its time cannot be right: never the fastest
      out.impossible.push_back(t);
      continue;
    }
    out.measured.push_back(
        {t, r.stats.median, r.stats.p25, r.stats.p75, r.tflops(), size_t(r.stats.count), r.policy, r.date});
  }
  std::stable_sort(out.measured.begin(), out.measured.end(),
                   [](const TileTiming& a, const TileTiming& b) { return a.median_ms < b.median_ms; });
  if (out.measured.size() >= 2) out.within_noise = out.measured[0].p75_ms >= out.measured[1].p25_ms;
  if (out.missing.empty() && !out.measured.empty()) {  // every tile measured or failed
    out.fastest = out.measured.front().tile;
    for (const TileTiming& t : out.measured)
      if (t.tile == spec.tile) out.speedup = t.median_ms / out.measured.front().median_ms;
  }
  return out;
}

std::string TileSuggestion::fastest_detail() const {
  if (!fastest) return "";
  const TileTiming& best = measured.front();
  std::string text =
      std::to_string(best.tile) + " (" + fmt_ms(best.median_ms) + ", " + fmt_speed(best.tflops) + ")";
  // Against the chosen tile, or when the chosen one is the fastest, against the runner-up.
  const TileTiming* other = nullptr;
  for (const TileTiming& t : measured)
    if (t.tile == current_tile && t.tile != best.tile) other = &t;
  if (!other && measured.size() > 1) other = &measured[1];
  if (other) {
    char b[64];
    std::snprintf(b, sizeof b, ", %.2fx faster than tile %d", other->median_ms / best.median_ms, other->tile);
    text += b;
  }
  if (within_noise)
    text += "; tile " + std::to_string(measured[1].tile) + " is within its noise (the quartiles overlap)";
  if (!failed.empty()) text += "; failed verification: " + tile_list(failed);
  if (!impossible.empty()) text += "; impossible timing (not a record): " + tile_list(impossible);
  return text;
}

std::string TileSuggestion::summary() const {
  if (!applicable()) return kernel + " has no tile parameter";
  const std::string fails =
      (failed.empty() ? "" : "; failed verification: " + tile_list(failed)) +
      (impossible.empty() ? "" : "; impossible timing (not a record): " + tile_list(impossible));
  if (measured.empty() && missing.empty())
    return impossible.empty() ? "every tile of " + kernel + " failed verification here"
                              : "no tile of " + kernel + " has a possible timing here" + fails;
  if (measured.empty())
    return "no tile of " + kernel + " timed at this shape yet (tiles " + tile_list(missing) + ")" + fails;
  if (fastest) return "fastest tile here: " + fastest_detail();
  return "fastest of the tiles timed here: " + std::to_string(measured.front().tile) + " (" +
         fmt_ms(measured.front().median_ms) + "); not timed yet: " + tile_list(missing) + fails;
}

std::vector<ProblemSpec> tile_search_points(const KernelInfo& kernel, const ProblemSpec& spec,
                                            const TileSuggestion* suggestion) {
  std::vector<ProblemSpec> points;
  for (int t : kernel.tiles) {
    if (suggestion &&
        std::find(suggestion->missing.begin(), suggestion->missing.end(), t) == suggestion->missing.end())
      continue;
    ProblemSpec p = spec;
    p.kernel = kernel.id;
    p.tile = t;
    points.push_back(p);
  }
  return points;
}

}  // namespace ts
