#include "core/plots/rung_suggest.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "core/plots/figure.hpp"
#include "core/plots/tile_suggest.hpp"

namespace ts {

namespace {

// 103, 92.5, 4.2, 0.41: as many digits as a margin of a few per cent deserves.
std::string pct(double x) {
  char b[32];
  const double a = std::fabs(x);
  std::snprintf(b, sizeof b, a >= 99.5 ? "%.0f" : a >= 0.995 ? "%.1f" : "%.2f", x);
  return b;
}

// "4.2 % ahead of splitk 2"; from twice the speed on, "20.3x as fast as coalesced 32".
std::string ahead_of(double percent, const std::string& other) {
  if (percent < 100) return pct(percent) + " % ahead of " + other;
  char b[32];
  std::snprintf(b, sizeof b, "%.3gx", 1 + percent / 100);
  return b + std::string(" as fast as ") + other;
}

bool quartiles_overlap(double a25, double a75, double b25, double b75) {
  return std::max(a25, b25) <= std::min(a75, b75);
}

RungMargin margin(const RungTiming& best, double median, double p25, double p75, const std::string& against) {
  RungMargin out;
  out.against = against;
  out.percent = 100.0 * (median / best.median_ms - 1.0);
  out.within_noise = quartiles_overlap(best.p25_ms, best.p75_ms, p25, p75);
  return out;
}

// The policy's name, the first word of MeasurePolicy::describe() ("quick", "bench", "fixed").
std::string policy_name(const std::string& described) {
  return described.substr(0, described.find(':'));
}

RungTiming timing_of(const MeasurementRecord& r, size_t index, const std::string& cublas) {
  RungTiming t;
  t.config = {r.spec.kernel, r.spec.tile};
  t.median_ms = r.stats.median;
  t.p25_ms = r.stats.p25;
  t.p75_ms = r.stats.p75;
  t.tflops = r.tflops();
  t.samples = r.stats.count;
  t.noise = r.noise();
  t.stop = r.stop;
  t.policy = r.policy;
  t.date = r.date;
  t.record = index;
  // Only the cuBLAS of the ranking's precision: a kernel is never held against the other one.
  if (r.interleaved.measured() && r.interleaved.kernel == cublas) {
    t.cublas_ms = r.interleaved.stats.median;
    t.cublas_p25_ms = r.interleaved.stats.p25;
    t.cublas_p75_ms = r.interleaved.stats.p75;
    t.clocks_differ = clocks_differ(r.clock, r.interleaved.clock);
  } else if (r.interleaved.measured()) {
    t.cublas_note = "the cuBLAS timed with it is " + r.interleaved.kernel + ", not " + cublas;
  } else if (!r.interleaved_note.empty()) {
    t.cublas_note = r.interleaved_note;
  } else {
    t.cublas_note = "none timed with it (" + policy_name(r.policy) + " policy)";
  }
  return t;
}

std::string shape_text(int64_t m, int64_t n, int64_t k) {
  return std::to_string(m) + " x " + std::to_string(n) + " x " + std::to_string(k);
}

std::string config_list(const std::vector<KernelTile>& configs) {
  std::string out;
  for (const KernelTile& c : configs) out += (out.empty() ? "" : ", ") + rung_label(c);
  return out;
}

}  // namespace

const char* cublas_for(bool tf32) {
  return tf32 ? "cublas_tf32" : "cublas";
}

std::string rung_label(const KernelTile& c) {
  return c.tile ? c.kernel + " " + std::to_string(c.tile) : c.kernel;
}

std::vector<const KernelInfo*> ladder_rungs(const std::vector<KernelInfo>& registry, bool tf32,
                                            const DeviceInfo& device) {
  std::vector<const KernelInfo*> out;
  for (const KernelInfo& k : registry) {
    if (k.id == cublas_for(false) || k.id == cublas_for(true) || k.is_reference || k.teaching || k.user)
      continue;
    if (k.tf32 != tf32) continue;
    if (!device.backend.empty() && !k.runs_on(device.backend)) continue;
    if (device.backend == "cuda" && device.sm > 0 && k.min_sm > device.sm) continue;
    out.push_back(&k);
  }
  return out;
}

RungRanking rank_rungs(const Session& s, const std::vector<KernelInfo>& registry, int64_t m, int64_t n,
                       int64_t k, bool tf32) {
  RungRanking out;
  out.m = m;
  out.n = n;
  out.k = k;
  out.tf32 = tf32;
  out.cublas = cublas_for(tf32);
  const auto points = standing_points(s, m, n, k);
  for (const KernelInfo* rung : ladder_rungs(registry, tf32, s.device)) {
    const std::vector<int> tiles = rung->tiles.empty() ? std::vector<int>{0} : rung->tiles;
    for (int t : tiles) {
      ++out.configurations;
      const auto it = points.find({rung->id, t});
      if (it == points.end())
        out.missing.push_back({rung->id, t});
      else if (it->second.failed)
        out.failed.push_back({rung->id, t});
      else if (impossible_point(s.records[it->second.record]))
        out.impossible.push_back({rung->id, t});
      else
        out.measured.push_back(timing_of(s.records[it->second.record], it->second.record, out.cublas));
    }
  }
  std::stable_sort(out.measured.begin(), out.measured.end(),
                   [](const RungTiming& a, const RungTiming& b) { return a.median_ms < b.median_ms; });
  if (out.measured.empty()) return out;
  const RungTiming& best = out.measured.front();
  for (size_t i = 1; i < out.measured.size(); ++i) {
    const RungTiming& o = out.measured[i];
    if (o.config.kernel != best.config.kernel && !out.next_kernel)
      out.next_kernel = margin(best, o.median_ms, o.p25_ms, o.p75_ms, rung_label(o.config));
    if (o.config.kernel == best.config.kernel && !out.next_tile)
      out.next_tile = margin(best, o.median_ms, o.p25_ms, o.p75_ms, "tile " + std::to_string(o.config.tile));
  }
  if (best.cublas_ms > 0)
    out.to_cublas = margin(best, best.cublas_ms, best.cublas_p25_ms, best.cublas_p75_ms, out.cublas);
  return out;
}

std::string RungRanking::missing_text() const {
  std::string out;
  for (size_t i = 0; i < missing.size();) {
    size_t j = i;
    std::string tiles;
    for (; j < missing.size() && missing[j].kernel == missing[i].kernel; ++j)
      if (missing[j].tile) tiles += (tiles.empty() ? "" : ", ") + std::to_string(missing[j].tile);
    out += (out.empty() ? "" : ", ") + missing[i].kernel + (tiles.empty() ? "" : " (" + tiles + ")");
    i = j;
  }
  return out;
}

std::string RungRanking::line() const {
  if (!fastest()) return body();
  return std::string(complete() ? "fastest here: " : "fastest ") + body();
}

std::string RungRanking::body() const {
  const std::string precision = tf32 ? "TF32" : "FP32";
  if (configurations == 0) return "no " + precision + " rung runs on this device";
  const RungTiming* best = fastest();
  if (!best) {
    if (missing.empty())
      return impossible.empty() ? "every " + precision + " rung failed verification at " + shape_text(m, n, k)
                                : "no " + precision + " rung has a possible timing at " + shape_text(m, n, k);
    return "no " + precision + " rung measured at " + shape_text(m, n, k) + " yet (" +
           std::to_string(configurations) + " configuration" + (configurations == 1 ? "" : "s") + ")";
  }
  std::string text = std::string(complete() ? "" : "so far: ") + rung_label(best->config) + ", " +
                     format_flops(best->tflops * 1e12);
  if (to_cublas) text += ", " + pct(best->percent_of_cublas()) + " % of cuBLAS";
  // The margin to the fastest other kernel; where it is the only kernel here, to its own next tile.
  if (const auto& g = next_kernel ? next_kernel : next_tile)
    text += g->within_noise ? "; within noise of " + g->against + " (" + pct(g->percent) + " % ahead)"
                            : "; " + ahead_of(g->percent, g->against);
  if (!complete())
    text += "; " + std::to_string(missing.size()) + " of " + std::to_string(configurations) + " not measured";
  return text;
}

std::vector<std::string> RungRanking::notes() const {
  std::vector<std::string> out;
  const RungTiming* best = fastest();
  if (best) {
    const std::string name = rung_label(best->config);
    auto said = [&](const RungMargin& g, const std::string& what) {
      return g.within_noise ? name + " is within noise of " + what + " (" + pct(g.percent) +
                                  " % ahead; their quartiles overlap)"
                            : name + " is " + ahead_of(g.percent, what) + " (their quartiles do not overlap)";
    };
    if (next_kernel) out.push_back(said(*next_kernel, next_kernel->against + ", the fastest other kernel"));
    if (next_tile) out.push_back(said(*next_tile, "its own " + next_tile->against));
    if (to_cublas) {
      const std::string of =
          pct(best->percent_of_cublas()) + " % of " + cublas + " timed interleaved with it";
      out.push_back(to_cublas->within_noise ? name + " reaches " + of + ", within noise (quartiles overlap)"
                                            : name + " reaches " + of);
      if (best->clocks_differ)
        out.push_back("their SM clocks differ by more than 1 %: the ratio compares more than the kernels");
    } else {
      out.push_back("no " + cublas + " to compare " + name + " with: " + best->cublas_note);
    }
    if (!complete()) out.push_back("the fastest of those measured: the others may be faster");
  }
  if (!failed.empty()) out.push_back("failed verification (never the fastest): " + config_list(failed));
  if (!impossible.empty())
    out.push_back("impossible timing, faster than the device can go (never the fastest): " +
                  config_list(impossible));
  if (!missing.empty()) out.push_back("not measured at " + shape_text(m, n, k) + ": " + missing_text());
  return out;
}

std::vector<ProblemSpec> rung_search_points(const RungRanking& ranking, const ProblemSpec& at) {
  std::vector<ProblemSpec> out;
  for (const KernelTile& c : ranking.missing) {
    ProblemSpec p = at;
    p.m = ranking.m;
    p.n = ranking.n;
    p.k = ranking.k;
    p.kernel = c.kernel;
    p.tile = c.tile;
    out.push_back(p);
  }
  return out;
}

}  // namespace ts
