#include "core/plots/plot_data.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace ts {

int ladder_index(const std::vector<KernelInfo>& ladder, const KernelTile& c) {
  int i = 0;
  for (const auto& k : ladder) {
    if (k.tiles.empty()) {
      if (k.id == c.kernel) return i;
      ++i;
      continue;
    }
    for (int t : k.tiles) {
      if (k.id == c.kernel && t == c.tile) return i;
      ++i;
    }
  }
  return -1;
}

bool is_reference(const std::string& kernel) {
  return kernel == "cublas" || kernel == "cublas_tf32";
}

namespace {

// A colour for every configuration: its ladder index, or one after the ladder for those it does not know.
class Colours {
 public:
  explicit Colours(const std::vector<KernelInfo>& ladder) : m_ladder(ladder) {
    for (const auto& k : ladder) m_size += std::max<int>(1, int(k.tiles.size()));
  }
  int of(const KernelTile& c) {
    const int i = ladder_index(m_ladder, c);
    if (i >= 0) return i;
    auto it = m_extra.find({c.kernel, c.tile});
    if (it != m_extra.end()) return it->second;
    const int n = m_size + int(m_extra.size());
    m_extra[{c.kernel, c.tile}] = n;
    return n;
  }

 private:
  const std::vector<KernelInfo>& m_ladder;
  int m_size = 0;
  std::map<std::pair<std::string, int>, int> m_extra;
};

std::string shape_text(const ProblemSpec& s) {
  return std::to_string(s.m) + " x " + std::to_string(s.n) + " x " + std::to_string(s.k);
}

// An overlay's curves carry its session's label. The current session's do too while another of the set is a
// connected engine's (the window measuring on several devices): every curve then names its device.
std::string overlay_suffix(const SessionSet& sessions, size_t i) {
  bool engines = false;
  for (size_t j = 1; j < sessions.size(); ++j) engines = engines || sessions.all()[j].engine != 0;
  return i == 0 && !engines ? "" : " [" + sessions.all()[i].label + "]";
}

}  // namespace

// [SECTION] Wave marks.
WaveMarkSet measured_wave_marks(const Session& s, ScaleAxis axis, const ProblemSpec& at, const KernelTile& c,
                                int64_t from, int64_t to) {
  WaveMarkSet w;
  w.config = c;
  w.gpu = s.device.name;
  w.source = s.device.name + ": measured device";
  SweepSpec sweep;
  if (s.device.sm_count <= 0) {
    w.note = "no wave marks: the CPU backend has no SMs (pick a GPU for theoretical marks)";
    return w;
  }
  if (is_reference(c.kernel)) {
    w.note = "no wave marks for " + c.label() + ": cuBLAS picks its own tiling";
    return w;
  }
  if (!sweep_shape_of(axis, at, &sweep.shape, &sweep.fixed)) {
    w.note = axis == ScaleAxis::K ? "no wave marks along K: the grid does not depend on K"
                                  : "wave marks are drawn along M = N = K, N = K or M = N";
    return w;
  }
  // The launch as recorded at the largest size on the axis (aligned sizes first: the ragged variants of some
  // kernels launch differently).
  const MeasurementRecord* best = nullptr;
  double best_x = -1;
  bool best_aligned = false;
  for (const auto& series : scaling_series(s, axis, at)) {
    if (!(series.config == c)) continue;
    for (const auto& p : series.points) {
      const MeasurementRecord& r = s.records[p.record];
      if (r.blocks_per_sm <= 0 || r.tile_m <= 0 || r.tile_n <= 0) continue;
      const bool aligned = r.spec.m % 4 == 0 && r.spec.n % 4 == 0 && r.spec.k % 4 == 0;
      if ((aligned && !best_aligned) || (aligned == best_aligned && p.x > best_x)) {
        best = &r;
        best_x = p.x;
        best_aligned = aligned;
      }
    }
  }
  if (!best) {
    w.note = "no wave marks for " + c.label() + ": no measured point of it records its launch";
    return w;
  }
  if (best->k_segments) {
    w.note = "no wave marks for " + c.label() + ": its launch at " + std::to_string(int64_t(best_x)) +
             " plans its blocks for the SMs, in whole tiles and K segments, not in waves";
    return w;
  }
  w.marks = wave_marks(sweep, from, to, best->tile_m, best->tile_n, best->blocks_per_sm, s.device.sm_count,
                       best->blocks_per_tile);
  if (w.marks.empty())
    w.note = "no wave marks: the grid of " + c.label() + " stays within one wave up to " + std::to_string(to);
  return w;
}

WaveMarkSet catalog_wave_marks(const std::vector<BuildResource>& table, const GpuModel& gpu, ScaleAxis axis,
                               const ProblemSpec& at, const KernelTile& c, int64_t from, int64_t to) {
  WaveMarkSet w;
  w.config = c;
  w.theoretical = true;
  w.gpu = gpu.name;
  w.source = "THEORETICAL: " + gpu.name + " (no GPU used)";
  SweepSpec sweep;
  if (is_reference(c.kernel)) {
    w.note = "no wave marks for " + c.label() + ": cuBLAS picks its own tiling";
    return w;
  }
  if (!sweep_shape_of(axis, at, &sweep.shape, &sweep.fixed)) {
    w.note = axis == ScaleAxis::K ? "no wave marks along K: the grid does not depend on K"
                                  : "wave marks are drawn along M = N = K, N = K or M = N";
    return w;
  }
  if (from > to) return w;
  const ResourceLookup l = lookup_resources(table, c.kernel, c.tile, true, gpu.sm);
  if (!l.row) {
    w.note = "no wave marks: " + c.label() + " is not in this build's resource table";
    return w;
  }
  try {
    theoretical_occupancy(gpu, inputs_from(*l.row), 1, 1);
  } catch (const ValidationError& e) {
    w.note = "no wave marks: " + c.label() + " does not fit on " + gpu.name + " (" + e.what() + ")";
    return w;
  }
  w.marks = theoretical_wave_marks(table, gpu, sweep, c, from, to);
  if (w.marks.empty())
    w.note = "no wave marks: the grid of " + c.label() + " stays within one wave up to " + std::to_string(to);
  return w;
}

// [SECTION] Timings.
const char* to_string(TimingsY y) {
  switch (y) {
    case TimingsY::Flops:
      return "flops";
    case TimingsY::Time:
      return "time";
    case TimingsY::Both:
      return "both";
  }
  return "?";
}

TimingsY parse_timings_y(const std::string& s) {
  for (TimingsY y : {TimingsY::Flops, TimingsY::Time, TimingsY::Both})
    if (s == to_string(y)) return y;
  throw ValidationError("--y '" + s + "' is not one of flops, time, both");
}

TimingsData timings_data(const SessionSet& sessions, const ProblemSpec& at,
                         const std::vector<KernelInfo>& ladder) {
  TimingsData d;
  const Session& cur = sessions.current();
  d.axis = infer_axis(cur, at);
  d.axis_label = axis_label(d.axis, at);
  d.x_current = axis_position(at, d.axis);
  Colours colours(ladder);
  double max_ms = 0, max_flops = 0;
  bool any = false;
  const KernelTile current{at.kernel, at.tile};
  for (size_t i = 0; i < sessions.size(); ++i) {
    for (auto& series : scaling_series(sessions.all()[i], d.axis, at)) {
      TimingsCurve c;
      c.session = i;
      c.line = series.latest_per_x();
      c.label = series.label + overlay_suffix(sessions, i);
      c.colour = colours.of(series.config);
      c.current = i == 0 && series.config == current;
      for (const auto& p : series.points) {
        max_ms = std::max(max_ms, p.median_ms);
        max_flops = std::max(max_flops, p.tflops * 1e12);
        d.x_lo = any ? std::min(d.x_lo, p.x) : p.x;
        d.x_hi = any ? std::max(d.x_hi, p.x) : p.x;
        any = true;
        if (i == 0) d.records.push_back(p.record);
      }
      // Impossible points are drawn (apart, so that they are seen) but are none of the curve's.
      for (const auto& p : series.impossible) {
        max_ms = std::max(max_ms, p.median_ms);
        max_flops = std::max(max_flops, p.tflops * 1e12);
        d.x_lo = any ? std::min(d.x_lo, p.x) : p.x;
        d.x_hi = any ? std::max(d.x_hi, p.x) : p.x;
        any = true;
        ++d.impossible;
      }
      c.series = std::move(series);
      d.curves.push_back(std::move(c));
    }
  }
  // Ladder order; overlays after the current session's curve of the same configuration.
  std::stable_sort(d.curves.begin(), d.curves.end(), [](const TimingsCurve& a, const TimingsCurve& b) {
    return a.colour != b.colour ? a.colour < b.colour : a.session < b.session;
  });
  for (const MeasurementRecord& r : cur.records) d.unverified += r.timed && !r.error.passed;
  // The current problem's newest timed record: its launches.
  for (size_t i = cur.records.size(); i-- > 0;) {
    const MeasurementRecord& r = cur.records[i];
    if (r.spec == at && r.timed && !r.samples_ms.empty()) {
      d.current_record = i;
      d.current_samples_ms = r.samples_ms;
      d.current_stats = r.stats;
      d.current_flops = at.flops();
      d.current_label = current.label() + " at " + shape_text(at) +
                        (!r.error.passed     ? " (failed verification)"
                         : r.is_impossible() ? " (impossible)"
                                             : "");
      break;
    }
  }
  d.time = time_unit(max_ms);
  d.flops = flops_unit(max_flops);
  double launch_ms = 0, launch_flops = 0;
  for (double ms : d.current_samples_ms)
    if (ms > 0) {
      launch_ms = std::max(launch_ms, ms);
      launch_flops = std::max(launch_flops, d.current_flops / (ms * 1e-3));
    }
  d.launch_time = time_unit(launch_ms);
  d.launch_flops = flops_unit(launch_flops);
  return d;
}

// [SECTION] The ladder at one shape.
BarsData bars_data(const SessionSet& sessions, const ProblemSpec& at, const std::vector<KernelInfo>& ladder,
                   const std::optional<KernelTile>& baseline) {
  BarsData d;
  d.shape = shape_text(at);
  std::vector<std::vector<LadderBar>> per;
  for (const auto& s : sessions.all()) per.push_back(ladder_bars(s, at, ladder));
  // Rows: ladder order over every session (ladder_bars already orders each; merge keeping first appearance
  // of configurations the ladder does not list).
  auto add_row = [&](const KernelTile& c) {
    if (std::find(d.configs.begin(), d.configs.end(), c) == d.configs.end()) d.configs.push_back(c);
  };
  for (const auto& k : ladder) {
    for (int t : k.tiles.empty() ? std::vector<int>{0} : k.tiles)
      for (const auto& bars : per)
        for (const auto& b : bars)
          if (b.config == KernelTile{k.id, t}) add_row(b.config);
  }
  for (const auto& bars : per)
    for (const auto& b : bars) add_row(b.config);
  Colours colours(ladder);
  double max_flops = 0;
  for (const auto& c : d.configs) {
    d.labels.push_back(c.label());
    d.colours.push_back(colours.of(c));
  }
  for (size_t i = 0; i < per.size(); ++i) {
    d.session_labels.push_back(sessions.all()[i].label);
    std::vector<std::optional<LadderBar>> row(d.configs.size());
    for (const auto& b : per[i]) {
      const size_t r = size_t(std::find(d.configs.begin(), d.configs.end(), b.config) - d.configs.begin());
      row[r] = b;
      max_flops = std::max(max_flops, b.tflops * 1e12);
      if (i == 0) d.records.push_back(b.record);
    }
    d.bars.push_back(std::move(row));
  }
  d.flops = flops_unit(max_flops);
  if (d.bars.empty()) return d;
  const auto& mine = d.bars[0];
  auto row_of = [&](const KernelTile& c) -> int {
    for (size_t r = 0; r < d.configs.size(); ++r)
      if (d.configs[r] == c && mine[r]) return int(r);
    return -1;
  };
  if (baseline) d.baseline = row_of(*baseline);
  if (d.baseline < 0) d.baseline = row_of({"tiled", 32});
  for (size_t r = 0; r < d.configs.size() && d.baseline < 0; ++r)
    if (d.configs[r].kernel == "tiled" && mine[r]) d.baseline = int(r);
  for (size_t r = 0; r < d.configs.size() && d.baseline < 0; ++r)
    if (mine[r]) d.baseline = int(r);
  d.current = row_of({at.kernel, at.tile});
  d.speedups.assign(d.configs.size(), "");
  if (d.baseline >= 0) {
    const LadderBar& base = *mine[size_t(d.baseline)];
    for (size_t r = 0; r < d.configs.size(); ++r)
      if (mine[r])
        d.speedups[r] =
            int(r) == d.baseline ? "baseline" : speedup_label(mine[r]->median_ms, base.median_ms, base.label);
  }
  return d;
}

// [SECTION] Roofline.
RooflineData roofline_data(const SessionSet& sessions, const ProblemSpec& at,
                           const std::vector<KernelInfo>& ladder, double dram_gbs, bool this_shape_only) {
  RooflineData d;
  const Session& cur = sessions.current();
  d.roofs = roofs_for(cur.device, dram_gbs > 0 ? dram_gbs : cur.dram_gbs);
  Colours colours(ladder);
  double x_lo = 0, x_hi = 0, y_lo = 0, y_hi = 0;
  bool any = false;
  auto extend = [&](double x, double y) {
    if (!(x > 0) || !(y > 0) || !std::isfinite(x) || !std::isfinite(y)) return;
    x_lo = any ? std::min(x_lo, x) : x;
    x_hi = any ? std::max(x_hi, x) : x;
    y_lo = any ? std::min(y_lo, y) : y;
    y_hi = any ? std::max(y_hi, y) : y;
    any = true;
  };
  bool any_reference = false;
  int impossible = 0;  // points left out: their time cannot be right
  for (size_t i = 0; i < sessions.size(); ++i) {
    const Session& s = sessions.all()[i];
    d.session_labels.push_back(s.label);
    const Roofs roofs = i == 0 ? d.roofs : roofs_for(s.device, s.dram_gbs);
    for (size_t r = 0; r < s.records.size(); ++r) {
      const MeasurementRecord& rec = s.records[r];
      if (!rec.timed || !rec.error.passed || rec.stats.count == 0 || !(rec.stats.median > 0)) continue;
      if (this_shape_only && (rec.spec.m != at.m || rec.spec.n != at.n || rec.spec.k != at.k)) continue;
      if (rec.is_impossible()) {
        ++impossible;
        continue;
      }
      RoofPoint p;
      p.session = i;
      p.record = r;
      p.config = {rec.spec.kernel, rec.spec.tile};
      p.spec = rec.spec;
      p.median_ms = rec.stats.median;
      p.tf32 = rec.tf32;
      p.reference = is_reference(rec.spec.kernel);
      any_reference |= p.reference;
      p.current = i == 0 && p.config == KernelTile{at.kernel, at.tile};
      p.colour = colours.of(p.config);
      p.p = place_point(rec.spec, rec.tile_m, rec.tile_n, rec.stats.median, rec.tf32, roofs);
      extend(p.p.intensity, p.p.flops_per_s);
      extend(p.p.intensity_compulsory, p.p.flops_per_s);
      d.points.push_back(p);
      if (i == 0) d.records.push_back(r);
    }
  }
  const double peak = std::max(d.roofs.fp32_flops, d.roofs.tf32_flops);
  const double bw = d.roofs.dram_bytes_per_s;
  for (double roof : {d.roofs.fp32_flops, d.roofs.tf32_flops}) {
    if (roof > 0 && bw > 0) extend(ridge_point(roof, bw), roof);
    if (roof > 0) extend(any ? x_lo : 1.0, roof);
  }
  if (!any) {
    x_lo = 0.5;
    x_hi = 500;
    y_lo = 1e9;
    y_hi = peak > 0 ? peak : 1e14;
  }
  // A decade of room around what is drawn, on log axes.
  d.x_lo = x_lo / 4;
  d.x_hi = x_hi * 4;
  d.y_lo = y_lo / 4;
  d.y_hi = y_hi * 2;
  d.fp32 = roof_polyline(d.roofs.fp32_flops, bw, d.x_lo, d.x_hi);
  d.tf32 = roof_polyline(d.roofs.tf32_flops, bw, d.x_lo, d.x_hi);
  if (bw > 0 && d.fp32.empty() && d.tf32.empty()) d.dram = {{d.x_lo, d.x_lo * bw}, {d.x_hi, d.x_hi * bw}};
  const double ds = d.roofs.datasheet_bytes_per_s;
  if (ds > 0 && d.roofs.dram_measured) {
    const double top = peak > 0 ? std::min(peak, d.x_hi * ds) : d.x_hi * ds;
    d.dram_datasheet = {{d.x_lo, d.x_lo * ds}, {top / ds, top}};
  }
  d.flops = flops_unit(d.y_hi);
  if (!d.roofs.note.empty()) d.notes.push_back(d.roofs.note);
  d.notes.push_back(
      "Arithmetic intensity is an ESTIMATE from each kernel's block tiling (every block's A and B panels "
      "from "
      "DRAM, no reuse in the L2: a lower bound); the whisker reaches the compulsory-traffic bound (A, B and "
      "C "
      "once).");
  if (any_reference) d.notes.push_back("cuBLAS hides its tiling: its points use the compulsory traffic.");
  if (peak <= 0)
    d.notes.push_back("No compute roof: " +
                      (cur.device.backend == "cpu"
                           ? std::string("the CPU backend has no FP32 or TF32 peak figure")
                           : std::string("the device's peak is unknown")));
  if (bw <= 0) d.notes.push_back("No DRAM roof yet: the bandwidth has not been measured.");
  if (impossible > 0)
    d.notes.push_back(std::to_string(impossible) + (impossible == 1 ? " point is" : " points are") +
                      " left out: faster than the device can go (above its compute roof or under its DRAM "
                      "floor), the timing cannot be right.");
  if (sessions.size() > 1)
    d.notes.push_back(
        "Roofs are the current session's device; overlays are placed by "
        "their own measurements.");
  return d;
}

// [SECTION] Occupancy by tile.
OccupancyData theoretical_tiles(const std::vector<BuildResource>& table, const GpuModel& gpu,
                                const KernelInfo& k, int current_tile, int64_t m, int64_t n) {
  OccupancyData d;
  d.gpu = gpu.name;
  d.theoretical = true;
  d.kernel = k.id;
  d.current_tile = current_tile;
  d.m = m;
  d.n = n;
  for (int tile : k.tiles.empty() ? std::vector<int>{0} : k.tiles) {
    TileOccupancy t;
    t.tile = tile;
    const ResourceLookup l = lookup_resources(table, k.id, tile, true, gpu.sm);
    if (!l.row) {
      t.error = is_reference(k.id) ? "cuBLAS's kernels are closed: no registers to read"
                                   : "not in this build's resource table";
    } else if (k.min_sm > gpu.sm) {
      t.error =
          "needs compute capability " + std::to_string(k.min_sm / 10) + "." + std::to_string(k.min_sm % 10);
    } else if (k.id == "wgmma_tf32" && gpu.sm != 90) {
      t.error = "sm_90a code: runs on compute capability 9.0 only";
    } else {
      if (!l.exact_arch) d.note = l.note;
      try {
        t.report = theoretical_occupancy(gpu, inputs_from(*l.row), m, n);
      } catch (const ValidationError& e) {
        t.error = std::string("does not fit: ") + e.what();
      }
    }
    d.tiles.push_back(t);
  }
  return d;
}

OccupancyData measured_tiles(const std::string& device, const std::string& kernel, int current_tile,
                             int64_t m, int64_t n,
                             const std::vector<std::pair<int, OccupancyReport>>& by_tile) {
  OccupancyData d;
  d.gpu = device;
  d.kernel = kernel;
  d.current_tile = current_tile;
  d.m = m;
  d.n = n;
  for (const auto& [tile, rep] : by_tile) d.tiles.push_back({tile, rep, ""});
  return d;
}

// [SECTION] Figures.
FigureData timings_figure(const TimingsData& d, FigureMeta meta) {
  FigureData f;
  meta.notes.push_back("x axis: " + d.axis_label);
  if (!d.marks.source.empty() && (!d.marks.marks.empty() || !d.marks.note.empty()))
    meta.notes.push_back("wave marks of " + d.marks.config.label() + ": " + d.marks.source +
                         (d.marks.note.empty() ? "" : " (" + d.marks.note + ")"));
  if (d.impossible > 0)
    meta.notes.push_back(std::to_string(d.impossible) + (d.impossible == 1 ? " point" : " points") +
                         " drawn as hollow red circles: " + kImpossibleLabel +
                         ", faster than the device can go (above its compute roof or under its DRAM floor); "
                         "the timing cannot be right");
  f.meta = std::move(meta);
  for (const auto& c : d.curves) {
    FigureSeries s = figure_series(c.series);
    s.label = c.label;
    f.series.push_back(std::move(s));
  }
  for (const auto& c : d.curves) {
    if (c.series.impossible.empty()) continue;
    FigureSeries s;
    s.label = c.label + ": " + kImpossibleLabel;
    s.columns = {"x", "median_ms", "tflops", "samples"};
    for (const auto& p : c.series.impossible)
      s.rows.push_back({p.x, p.median_ms, p.tflops, double(p.samples)});
    f.series.push_back(std::move(s));
  }
  if (!d.marks.marks.empty()) {
    FigureSeries s;
    s.label =
        std::string("wave marks ") + d.marks.config.label() + (d.marks.theoretical ? " (theoretical)" : "");
    s.columns = {"size", "waves", "grid_blocks"};
    for (const auto& w : d.marks.marks) s.rows.push_back({double(w.size), double(w.waves), double(w.grid)});
    f.series.push_back(std::move(s));
  }
  if (d.current_record) {
    FigureSeries s;
    s.label = "launches of " + d.current_label;
    s.columns = {"launch", "ms"};
    for (size_t i = 0; i < d.current_samples_ms.size(); ++i)
      s.rows.push_back({double(i), d.current_samples_ms[i]});
    f.series.push_back(std::move(s));
  }
  return f;
}

FigureData bars_figure(const BarsData& d, FigureMeta meta) {
  FigureData f;
  if (d.baseline >= 0) meta.notes.push_back("speedups against " + d.labels[size_t(d.baseline)]);
  f.meta = std::move(meta);
  for (size_t si = 0; si < d.bars.size(); ++si)
    for (size_t r = 0; r < d.configs.size(); ++r) {
      const auto& b = d.bars[si][r];
      if (!b) continue;
      FigureSeries s;
      s.label = d.labels[r] + (si ? " [" + d.session_labels[si] + "]" : "");
      s.columns = {"position", "tile", "median_ms", "p25_ms", "p75_ms", "tflops", "speedup_vs_baseline"};
      double speedup = 0;
      if (d.baseline >= 0 && d.bars[0][size_t(d.baseline)] && b->median_ms > 0)
        speedup = d.bars[0][size_t(d.baseline)]->median_ms / b->median_ms;
      s.rows.push_back(
          {double(r), double(b->config.tile), b->median_ms, b->p25_ms, b->p75_ms, b->tflops, speedup});
      f.series.push_back(std::move(s));
    }
  return f;
}

FigureData roofline_figure(const RooflineData& d, FigureMeta meta) {
  FigureData f;
  for (const auto& n : d.notes) meta.notes.push_back(n);
  f.meta = std::move(meta);
  auto roof = [&](const char* label, const std::vector<std::pair<double, double>>& line) {
    if (line.empty()) return;
    FigureSeries s;
    s.label = label;
    s.columns = {"intensity_flop_per_byte", "flops_per_s"};
    for (const auto& [x, y] : line) s.rows.push_back({x, y});
    f.series.push_back(std::move(s));
  };
  roof("roof FP32", d.fp32);
  roof("roof TF32", d.tf32);
  roof("roof DRAM (measured)", d.dram);
  roof("DRAM datasheet", d.dram_datasheet);
  {
    FigureSeries s;
    s.label = "roofs";
    s.columns = {"fp32_flops", "tf32_flops", "dram_bytes_per_s", "datasheet_bytes_per_s", "dram_measured"};
    s.rows.push_back({d.roofs.fp32_flops, d.roofs.tf32_flops, d.roofs.dram_bytes_per_s,
                      d.roofs.datasheet_bytes_per_s, d.roofs.dram_measured ? 1.0 : 0.0});
    f.series.push_back(std::move(s));
  }
  std::map<std::string, size_t> index;
  for (const auto& p : d.points) {
    const std::string label =
        p.config.label() + (p.session ? " [" + d.session_labels[p.session] + "]" : std::string());
    auto it = index.find(label);
    if (it == index.end()) {
      FigureSeries s;
      s.label = label;
      s.columns = {"m",
                   "n",
                   "k",
                   "median_ms",
                   "intensity",
                   "intensity_compulsory",
                   "flops_per_s",
                   "roof_flops",
                   "fraction_of_roof",
                   "memory_bound",
                   "traffic_bytes"};
      f.series.push_back(std::move(s));
      it = index.emplace(label, f.series.size() - 1).first;
    }
    f.series[it->second].rows.push_back({double(p.spec.m), double(p.spec.n), double(p.spec.k), p.median_ms,
                                         p.p.intensity, p.p.intensity_compulsory, p.p.flops_per_s, p.p.roof,
                                         p.p.fraction_of_roof, p.p.memory_bound ? 1.0 : 0.0,
                                         p.p.traffic.bytes});
  }
  return f;
}

FigureData occupancy_figure(const OccupancyData& d, FigureMeta meta) {
  FigureData f;
  meta.notes.push_back(std::string(d.theoretical ? "THEORETICAL occupancy on " : "occupancy on ") + d.gpu +
                       " for " + std::to_string(d.m) + " x " + std::to_string(d.n) + " outputs");
  if (!d.note.empty()) meta.notes.push_back(d.note);
  FigureSeries s;
  s.label = d.kernel;
  s.columns = {"tile",       "threads_per_block", "regs_per_thread", "static_smem", "dynamic_smem",
               "by_threads", "by_regs",           "by_smem",         "by_blocks",   "blocks_per_sm",
               "occupancy",  "grid_blocks",       "waves",           "tail_fill",   "k_segments"};
  for (const auto& t : d.tiles) {
    if (!t.error.empty()) {
      meta.notes.push_back("tile " + std::to_string(t.tile) + ": " + t.error);
      continue;
    }
    const OccupancyReport& o = t.report;
    meta.notes.push_back("tile " + std::to_string(t.tile) + ": limited by " + o.limiter);
    s.rows.push_back({double(t.tile), double(o.res.threads_per_block), double(o.res.regs_per_thread),
                      double(o.res.static_smem), double(o.res.dynamic_smem), double(o.by_threads),
                      double(o.by_regs), double(o.by_smem), double(o.by_blocks), double(o.blocks_per_sm),
                      o.occupancy, double(o.grid_blocks), o.waves, o.tail_fill, o.k_segments ? 1.0 : 0.0});
  }
  f.meta = std::move(meta);
  f.series.push_back(std::move(s));
  return f;
}

FigureData schedule_figure(const TileTrace& t, FigureMeta meta) {
  FigureData f;
  const ScheduleSummary sum = summarize_schedule(t);
  char b[120];
  std::snprintf(b, sizeof b, " on %d SMs; traced launch %.6g ms, plain %.6g ms", t.sm_count, t.traced_ms,
                t.plain_ms);
  meta.notes.push_back(describe_grid(t) + b);
  f.meta = std::move(meta);
  FigureSeries tiles;
  tiles.label = "tiles";
  tiles.columns = {"tile_row", "tile_col", block_z_name(t), "sm", "start_us", "end_us", "duration_us"};
  if (t.k_segments) tiles.columns.insert(tiles.columns.begin() + 3, {"k_begin", "k_end"});
  const size_t n_tiles = size_t(std::max(1, t.grid_x)) * size_t(std::max(1, t.grid_y));
  for (size_t i = 0; i < t.records.size() && t.grid_x > 0; ++i) {
    const TileRecord& r = t.records[i];
    if (!present(r)) continue;  // stream-K: a tile's segments past its last
    const size_t tile = i % n_tiles;
    std::vector<double> row = {double(tile / size_t(t.grid_x)),
                               double(tile % size_t(t.grid_x)),
                               double(i / n_tiles),
                               double(r.smid),
                               double(r.start_ns - sum.t0) * 1e-3,
                               double(r.end_ns - sum.t0) * 1e-3,
                               double(r.end_ns - r.start_ns) * 1e-3};
    if (t.k_segments) {
      const auto [k0, k1] = segment_k_range(t, i);
      row.insert(row.begin() + 3, {double(k0), k1 < 0 ? NAN : double(k1)});  // NAN: K not known
    }
    tiles.rows.push_back(std::move(row));
  }
  f.series.push_back(std::move(tiles));
  FigureSeries res;
  res.label = "tiles resident";
  res.columns = {"time_us", "tiles"};
  for (const auto& [ns, n] : concurrency_curve(t)) res.rows.push_back({ns * 1e-3, double(n)});
  f.series.push_back(std::move(res));
  return f;
}

}  // namespace ts
