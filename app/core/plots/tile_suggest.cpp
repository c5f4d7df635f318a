#include "core/plots/tile_suggest.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

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

std::map<std::pair<std::string, int>, StandingPoint> standing_points(const Session& s, int64_t m, int64_t n,
                                                                     int64_t k) {
  struct Seen {
    std::optional<size_t> failed, newest, newest_benchmarked;  // since the last failure, for the two
  };
  std::map<std::pair<std::string, int>, Seen> seen;
  for (size_t i = 0; i < s.records.size(); ++i) {  // appended in the order measured
    const MeasurementRecord& r = s.records[i];
    if (r.spec.m != m || r.spec.n != n || r.spec.k != k || timed_cold(r)) continue;
    Seen& c = seen[{r.spec.kernel, r.spec.tile}];
    if (!r.error.passed) {  // timed or not (the bench policy does not time failures)
      c = Seen{};
      c.failed = i;
      continue;
    }
    if (!r.timed || r.stats.count == 0 || !(r.stats.median > 0)) continue;
    c.failed.reset();
    c.newest = i;
    if (benchmarked(r)) c.newest_benchmarked = i;
  }
  std::map<std::pair<std::string, int>, StandingPoint> out;
  for (const auto& [config, c] : seen) {
    if (c.failed)
      out[config] = {*c.failed, true};
    else if (c.newest)
      out[config] = {c.newest_benchmarked ? *c.newest_benchmarked : *c.newest, false};
  }
  return out;
}

bool benchmarked(const RunRecord& r) {
  return !r.stop.empty() && r.stop != to_string(StopReason::CountReached);
}

bool timed_cold(const RunRecord& r) {
  return r.policy.find(", cold L2") != std::string::npos;  // MeasurePolicy::describe()
}

bool impossible_point(const RunRecord& r) {
  return r.is_impossible();
}

TileSuggestion suggest_tile(const Session& s, const KernelInfo& kernel, const ProblemSpec& spec) {
  TileSuggestion out;
  out.kernel = kernel.id;
  out.m = spec.m;
  out.n = spec.n;
  out.k = spec.k;
  out.current_tile = spec.tile;
  if (kernel.tiles.empty()) return out;
  const auto points = standing_points(s, spec.m, spec.n, spec.k);
  for (int t : kernel.tiles) {
    const auto it = points.find({kernel.id, t});
    if (it == points.end()) {
      out.missing.push_back(t);
      continue;
    }
    const MeasurementRecord& r = s.records[it->second.record];
    if (it->second.failed) {
      out.failed.push_back(t);
      continue;
    }
    if (impossible_point(r)) {  // its time cannot be right: never the fastest
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
