#include "core/engine/schedule.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "core/io/csv.hpp"

namespace ts {

namespace {

size_t tiles_of(const TileTrace& t) {
  return size_t(std::max(0, t.grid_x)) * size_t(std::max(0, t.grid_y));
}

// "segment 2 of tile (1, 3)"
std::string segment_name(const TileTrace& t, size_t record) {
  const size_t tiles = std::max<size_t>(1, tiles_of(t)), tile = record % tiles;
  const size_t gx = size_t(std::max(1, t.grid_x));
  return "segment " + std::to_string(record / tiles) + " of tile (" + std::to_string(tile / gx) + ", " +
         std::to_string(tile % gx) + ")";
}

// The first start over the present records (UINT64_MAX when none is).
uint64_t first_start(const TileTrace& t) {
  uint64_t t0 = UINT64_MAX;
  for (const auto& r : t.records)
    if (present(r)) t0 = std::min(t0, r.start_ns);
  return t0;
}

// Stream-K's rules for record i (present or not); empty when it keeps them.
std::string check_segment(const TileTrace& t, size_t i, int64_t steps) {
  const size_t tiles = tiles_of(t);
  const TileRecord& r = t.records[i];
  const size_t z = i / tiles;
  if (!present(r)) {
    if (z == 0) return segment_name(t, i) + " was never started (every tile has a segment 0)";
    if (r.end_ns != 0 || r.smid != 0 || r.k_first != 0)
      return segment_name(t, i) + " is absent (start 0) but not all zero";
    return "";
  }
  if (z == 0 && r.k_first != 0)
    return segment_name(t, i) + " starts at K step " + std::to_string(r.k_first) + ", not 0";
  if (z > 0) {
    const TileRecord& before = t.records[i - tiles];
    if (!present(before)) return segment_name(t, i) + " follows an absent segment " + std::to_string(z - 1);
    if (r.k_first <= before.k_first)
      return segment_name(t, i) + " starts at K step " + std::to_string(r.k_first) + ", not after segment " +
             std::to_string(z - 1) + "'s " + std::to_string(before.k_first);
  }
  if (steps > 0 && int64_t(r.k_first) >= steps)
    return segment_name(t, i) + " starts at K step " + std::to_string(r.k_first) + ", past the tile's " +
           std::to_string(steps) + " steps (K = " + std::to_string(t.k) + ")";
  return "";
}

}  // namespace

std::string check_trace(const TileTrace& t) {
  if (t.grid_x <= 0 || t.grid_y <= 0 || t.grid_z <= 0) return "empty grid";
  if (t.records.size() != size_t(t.grid_x) * size_t(t.grid_y) * size_t(t.grid_z))
    return "record count differs from the grid";
  if (t.k_segments && t.z_splits_columns) return "stream-K segments and a cluster's columns at once";
  if (t.k_segments && t.k_step <= 0) return "stream-K segments without the K step they count in (k_step)";
  const int64_t steps = t.k_segments ? k_steps_of(t) : 0;
  for (size_t i = 0; i < t.records.size(); ++i) {
    const TileRecord& r = t.records[i];
    if (t.k_segments) {
      if (std::string why = check_segment(t, i, steps); !why.empty()) return why;
      if (!present(r)) continue;
    }
    auto name = [&] { return t.k_segments ? segment_name(t, i) : "tile " + std::to_string(i); };
    if (r.start_ns == 0) return name() + " was never started";
    if (r.end_ns < r.start_ns) return name() + " ends before it starts";
    if (t.sm_count > 0 && int(r.smid) >= t.sm_count) return name() + " reports SM " + std::to_string(r.smid);
  }
  return "";
}

int tile_segments(const TileTrace& t, size_t tile) {
  const size_t tiles = tiles_of(t);
  int n = 0;
  for (size_t i = tile; tiles > 0 && tile < tiles && i < t.records.size() && present(t.records[i]);
       i += tiles)
    ++n;
  return n;
}

int64_t k_steps_of(const TileTrace& t) {
  return t.k > 0 && t.k_step > 0 ? (t.k + t.k_step - 1) / t.k_step : 0;
}

std::pair<int64_t, int64_t> segment_steps(const TileTrace& t, size_t record) {
  const size_t tiles = std::max<size_t>(1, tiles_of(t));
  const int64_t first = t.records[record].k_first;
  const size_t next = record + tiles;
  if (next < t.records.size() && present(t.records[next])) return {first, int64_t(t.records[next].k_first)};
  const int64_t steps = k_steps_of(t);
  return {first, steps > 0 ? steps : -1};
}

std::pair<int64_t, int64_t> segment_k_range(const TileTrace& t, size_t record) {
  const auto [first, end] = segment_steps(t, record);
  const int64_t step = std::max(0, t.k_step);
  int64_t k_end = end < 0 ? -1 : end * step;
  if (k_end >= 0 && t.k > 0) k_end = std::min(k_end, t.k);
  return {first * step, k_end};
}

ScheduleSummary summarize_schedule(const TileTrace& t) {
  ScheduleSummary s;
  s.problem = check_trace(t);
  if (!s.problem.empty()) return s;
  s.t0 = UINT64_MAX;
  s.t1 = 0;
  s.tiles_per_sm.assign(size_t(std::max(t.sm_count, 1)), 0);
  double sum = 0;
  s.min_tile_us = 1e300;
  std::map<uint32_t, std::vector<const TileRecord*>> per_sm;
  size_t shown = 0;
  for (const auto& r : t.records) {
    if (!present(r)) continue;  // a stream-K tile's segments past its last
    ++shown;
    s.t0 = std::min(s.t0, r.start_ns);
    s.t1 = std::max(s.t1, r.end_ns);
    if (r.smid >= s.tiles_per_sm.size()) s.tiles_per_sm.resize(r.smid + 1, 0);
    ++s.tiles_per_sm[r.smid];
    const double us = double(r.end_ns - r.start_ns) * 1e-3;
    sum += us;
    s.min_tile_us = std::min(s.min_tile_us, us);
    s.max_tile_us = std::max(s.max_tile_us, us);
    per_sm[r.smid].push_back(&r);
  }
  s.mean_tile_us = sum / double(std::max<size_t>(1, shown));
  for (const auto& c : concurrency_curve(t)) s.max_concurrency = std::max(s.max_concurrency, c.second);
  // Waves: on each SM, the longest chain of tiles that ran strictly one after another (greedy by end time).
  for (auto& [sm, v] : per_sm) {
    std::sort(v.begin(), v.end(), [](auto* a, auto* b) { return a->end_ns < b->end_ns; });
    int chain = 0;
    uint64_t last_end = 0;
    for (auto* r : v)
      if (r->start_ns >= last_end) {
        ++chain;
        last_end = r->end_ns;
      }
    s.waves = std::max(s.waves, chain);
  }
  return s;
}

std::vector<std::pair<double, int>> concurrency_curve(const TileTrace& t) {
  std::vector<std::pair<uint64_t, int>> ev;
  ev.reserve(t.records.size() * 2);
  uint64_t t0 = UINT64_MAX;
  for (const auto& r : t.records) {
    if (!present(r)) continue;
    ev.emplace_back(r.start_ns, +1);
    ev.emplace_back(r.end_ns, -1);
    t0 = std::min(t0, r.start_ns);
  }
  // Ends before starts at the same instant: a tile that ends as another begins does not overlap it.
  std::sort(ev.begin(), ev.end());
  std::vector<std::pair<double, int>> curve;
  int level = 0;
  for (size_t i = 0; i < ev.size(); ++i) {
    level += ev[i].second;
    if (i + 1 == ev.size() || ev[i + 1].first != ev[i].first)
      curve.emplace_back(double(ev[i].first - t0), level);
  }
  return curve;
}

uint64_t timer_resolution(const TileTrace& t) {
  std::vector<uint64_t> stamps;
  for (const auto& r : t.records) {
    if (!present(r)) continue;
    stamps.push_back(r.start_ns);
    stamps.push_back(r.end_ns);
  }
  std::sort(stamps.begin(), stamps.end());
  uint64_t best = 0;
  for (size_t i = 1; i < stamps.size(); ++i) {
    const uint64_t d = stamps[i] - stamps[i - 1];
    if (d > 0 && (best == 0 || d < best)) best = d;
  }
  return best;
}

std::string describe_grid(const TileTrace& t) {
  const int64_t count = int64_t(t.grid_x) * t.grid_y;
  const std::string tiles = std::to_string(count) + (count == 1 ? " tile of " : " tiles of ") +
                            std::to_string(t.tile_m) + " x " + std::to_string(t.tile_n);
  if (t.k_segments) {
    int64_t whole = 0, shared = 0, pieces = 0;
    for (size_t tile = 0; tile < tiles_of(t); ++tile) {
      const int n = tile_segments(t, tile);
      if (n == 1) ++whole;
      if (n > 1) ++shared, pieces += n;
    }
    return tiles + ", stream-K: " + std::to_string(whole) + " made whole, " +
           (shared > 0 ? std::to_string(shared) + " shared in " + std::to_string(pieces) + " segments"
                       : std::string("none shared"));
  }
  if (t.grid_z <= 1) return tiles;
  if (t.z_splits_columns)
    return tiles + ", each " + std::to_string(t.grid_z) + " blocks of " +
           std::to_string(t.tile_n / t.grid_z) + " columns (a cluster): " + std::to_string(t.records.size()) +
           " blocks";
  return tiles + ", K in " + std::to_string(t.grid_z) + " slices: " + std::to_string(t.records.size()) +
         " blocks";
}

std::vector<TileRecord> tile_spans(const TileTrace& t) {
  const size_t tiles = size_t(std::max(0, t.grid_x)) * size_t(std::max(0, t.grid_y));
  std::vector<TileRecord> out(tiles, TileRecord{UINT64_MAX, 0, 0, 0});
  for (size_t i = 0; i < t.records.size() && tiles > 0; ++i) {
    const TileRecord& r = t.records[i];
    if (!present(r)) continue;
    TileRecord& o = out[i % tiles];
    o.start_ns = std::min(o.start_ns, r.start_ns);
    if (r.end_ns >= o.end_ns) {
      o.end_ns = r.end_ns;
      o.smid = r.smid;
    }
  }
  return out;
}

namespace {

std::string describe_tile_segments(const TileTrace& t, size_t tile, uint64_t t0, uint32_t writer_sm) {
  const size_t tiles = std::max<size_t>(1, tiles_of(t)), gx = size_t(std::max(1, t.grid_x));
  const int n = tile_segments(t, tile);
  std::string text = "tile (" + std::to_string(tile / gx) + ", " + std::to_string(tile % gx) +
                     "): " + (n == 1 ? "made whole by one block" : "K in " + std::to_string(n) + " segments");
  char line[160];
  for (int z = 0; z < n; ++z) {
    const size_t i = size_t(z) * tiles + tile;
    const TileRecord& r = t.records[i];
    const auto [k0, k1] = segment_k_range(t, i);
    const std::string range =
        std::to_string(k0) + "-" + (k1 < 0 ? std::string("end") : std::to_string(k1 - 1));
    std::snprintf(line, sizeof line, "\nK %s: SM %u, %.2f to %.2f us", range.c_str(), r.smid,
                  double(r.start_ns - t0) * 1e-3, double(r.end_ns - t0) * 1e-3);
    text += line;
  }
  if (n <= 1) return text;
  std::snprintf(line, sizeof line, "\nC written by SM %u (the last segment to finish)", writer_sm);
  return text + line;
}

}  // namespace

std::string describe_tile_blocks(const TileTrace& t, size_t tile, uint64_t t0, uint32_t writer_sm) {
  if (t.k_segments) return describe_tile_segments(t, tile, t0, writer_sm);
  const size_t tiles = size_t(std::max(1, t.grid_x)) * size_t(std::max(1, t.grid_y));
  const bool cols = t.z_splits_columns;
  const int per = t.tile_n / std::max(1, t.grid_z);
  std::string text = "tile (" + std::to_string(tile / size_t(std::max(1, t.grid_x))) + ", " +
                     std::to_string(tile % size_t(std::max(1, t.grid_x))) + "): " +
                     (cols ? "a cluster of " + std::to_string(t.grid_z) + " blocks"
                           : "K in " + std::to_string(t.grid_z) + " slices");
  char line[120];
  for (int z = 0; z < t.grid_z && size_t(z) * tiles + tile < t.records.size(); ++z) {
    const TileRecord& r = t.records[size_t(z) * tiles + tile];
    const double from = double(r.start_ns - t0) * 1e-3, to = double(r.end_ns - t0) * 1e-3;
    if (cols)
      std::snprintf(line, sizeof line, "\ncolumns %d-%d: SM %u, %.2f to %.2f us", z * per, (z + 1) * per - 1,
                    r.smid, from, to);
    else
      std::snprintf(line, sizeof line, "\nslice %d: SM %u, %.2f to %.2f us", z, r.smid, from, to);
    text += line;
  }
  if (cols) return text + "\neach block writes its own columns";
  std::snprintf(line, sizeof line, "\nC written by SM %u (the last slice to finish)", writer_sm);
  return text + line;
}

const char* block_z_name(const TileTrace& t) {
  return t.k_segments ? "k_segment" : t.z_splits_columns ? "cluster_block" : "k_slice";
}

const char* record_noun(const TileTrace& t) {
  return t.k_segments ? "segment" : t.grid_z > 1 ? "block" : "tile";
}

std::string schedule_csv(const TileTrace& t) {
  std::vector<std::string> columns = {"tile_row", "tile_col", block_z_name(t), "sm",
                                      "start_us", "end_us",   "duration_us"};
  if (t.k_segments) columns.insert(columns.begin() + 3, {"k_begin", "k_end"});
  CsvWriter w(columns);
  const uint64_t t0 = first_start(t);
  const size_t tiles = size_t(std::max(1, t.grid_x)) * size_t(std::max(1, t.grid_y));
  for (size_t i = 0; i < t.records.size(); ++i) {
    const TileRecord& r = t.records[i];
    if (!present(r)) continue;
    const size_t tile = i % tiles;
    std::vector<std::string> row = {std::to_string(tile / size_t(t.grid_x)),
                                    std::to_string(tile % size_t(t.grid_x)),
                                    std::to_string(i / tiles),
                                    std::to_string(r.smid),
                                    CsvWriter::num(double(r.start_ns - t0) * 1e-3, "%.3f"),
                                    CsvWriter::num(double(r.end_ns - t0) * 1e-3, "%.3f"),
                                    CsvWriter::num(double(r.end_ns - r.start_ns) * 1e-3, "%.3f")};
    if (t.k_segments) {
      const auto [k0, k1] = segment_k_range(t, i);
      row.insert(row.begin() + 3, {std::to_string(k0), k1 < 0 ? std::string() : std::to_string(k1)});
    }
    w.row(row);
  }
  return w.str();
}

ScheduleView prepare_schedule_view(const TileTrace& t, int gantt_bins, size_t max_curve_points) {
  ScheduleView v;
  v.summary = summarize_schedule(t);
  if (!v.summary.problem.empty()) return v;
  const double span = double(std::max<uint64_t>(1, v.summary.t1 - v.summary.t0));
  double max_dur = 1;
  for (const auto& r : t.records)
    if (present(r)) max_dur = std::max(max_dur, double(r.end_ns - r.start_ns));
  v.start_frac.assign(t.records.size(), 0.0f);  // absent records (stream-K): 0
  v.duration_frac.assign(t.records.size(), 0.0f);
  for (size_t i = 0; i < t.records.size(); ++i) {
    const TileRecord& r = t.records[i];
    if (!present(r)) continue;
    v.start_frac[i] = float(double(r.start_ns - v.summary.t0) / span);
    v.duration_frac[i] = float(double(r.end_ns - r.start_ns) / max_dur);
  }
  // The map of C: one value per tile (with one block per tile, the block's own figures).
  const std::vector<TileRecord> spans = tile_spans(t);
  double max_span = 1;
  for (const auto& r : spans) max_span = std::max(max_span, double(r.end_ns - r.start_ns));
  for (const auto& r : spans) {
    v.tile_start_frac.push_back(float(double(r.start_ns - v.summary.t0) / span));
    v.tile_duration_frac.push_back(float(double(r.end_ns - r.start_ns) / max_span));
    v.tile_sm.push_back(r.smid);
  }
  // Gantt: one row per SM, gantt_bins time bins; each bin counts the tiles of that SM overlapping it.
  v.gantt_bins = std::max(1, gantt_bins);
  v.gantt_sms = std::max(1, int(v.summary.tiles_per_sm.size()));
  v.gantt.assign(size_t(v.gantt_sms) * size_t(v.gantt_bins), 0.0f);
  const int nb = v.gantt_bins;
  for (const auto& r : t.records) {
    if (!present(r)) continue;
    const int b0 = std::min(nb - 1, int(double(r.start_ns - v.summary.t0) / span * nb));
    const int b1 = std::min(nb - 1, int(double(r.end_ns - v.summary.t0) / span * nb));
    for (int b = b0; b <= b1; ++b)
      v.gantt_peak = std::max(v.gantt_peak, v.gantt[size_t(r.smid) * size_t(nb) + size_t(b)] += 1.0f);
  }
  const auto curve = concurrency_curve(t);
  const size_t stride = std::max<size_t>(1, curve.size() / std::max<size_t>(1, max_curve_points));
  for (size_t i = 0; i < curve.size(); i += stride) {
    v.curve_us.push_back(curve[i].first * 1e-3);
    v.curve_tiles.push_back(curve[i].second);
  }
  return v;
}

}  // namespace ts
