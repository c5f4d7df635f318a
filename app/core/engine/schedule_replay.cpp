#include "core/engine/schedule_replay.hpp"

#include <algorithm>
#include <cstdio>

namespace ts {

namespace {

// Stream-K's rows of cells per tile: its K steps, kept to about kMaxCellRows down the picture (the texture's
// height), never fewer than grid_z (every segment a row at least). K unknown: 60 (equal shares of 2 to 6).
constexpr int64_t kMaxCellRows = 2048;

int64_t segment_cell_rows(const TileTrace& t) {
  const int64_t steps = k_steps_of(t);
  const int64_t cap = std::max<int64_t>(t.grid_z, kMaxCellRows / std::max(1, t.grid_y));
  return steps > 0 ? std::min(steps, cap) : std::max<int64_t>(t.grid_z, std::min<int64_t>(cap, 60));
}

}  // namespace

ScheduleReplay::ScheduleReplay(const TileTrace& t) {
  m_problem = check_trace(t);
  if (!m_problem.empty()) return;
  m_k_segments = t.k_segments;
  m_grid_x = t.grid_x;
  m_grid_y = t.grid_y;
  m_grid_z = std::max(1, t.grid_z);
  m_tile_m = t.tile_m;
  m_tile_n = t.tile_n;
  m_z_cols = t.z_splits_columns;
  m_per_x = m_z_cols ? m_grid_z : 1;
  m_per_y = m_z_cols ? 1 : m_grid_z;
  const size_t tiles = size_t(m_grid_x) * size_t(m_grid_y);
  std::vector<uint32_t> row0, rows;  // stream-K: per record, its rows of cells in its tile
  if (m_k_segments) {
    const int64_t per = segment_cell_rows(t), steps = k_steps_of(t);
    m_per_y = int(per);
    row0.assign(t.records.size(), 0);
    rows.assign(t.records.size(), 0);
    std::vector<int64_t> edge;
    for (size_t tile = 0; tile < tiles; ++tile) {
      const int n = tile_segments(t, tile);
      edge.assign(size_t(n) + 1, per);
      edge[0] = 0;
      for (int z = 1; z < n; ++z) {
        const int64_t first = t.records[size_t(z) * tiles + tile].k_first;
        const int64_t ideal = steps > 0 ? (2 * first * per + steps) / (2 * steps) : int64_t(z) * per / n;
        edge[size_t(z)] = std::clamp(ideal, edge[size_t(z) - 1] + 1, per - (n - z));
      }
      for (int z = 0; z < n; ++z) {
        row0[size_t(z) * tiles + tile] = uint32_t(edge[size_t(z)]);
        rows[size_t(z) * tiles + tile] = uint32_t(edge[size_t(z) + 1] - edge[size_t(z)]);
      }
    }
  }
  m_cells_x = m_grid_x * m_per_x;
  m_cells_y = m_grid_y * m_per_y;
  uint64_t t0 = UINT64_MAX, t1 = 0;
  size_t n = 0;
  for (const TileRecord& r : t.records) {
    if (!present(r)) continue;  // a stream-K tile's segments past its last: nothing ran
    t0 = std::min(t0, r.start_ns);
    t1 = std::max(t1, r.end_ns);
    ++n;
  }
  if (n == 0) t0 = t1 = 0;
  m_duration = t1 - t0;
  m_start.reserve(n);
  m_end.reserve(n);
  m_sm.reserve(n);
  for (size_t i = 0; i < t.records.size(); ++i) {
    const TileRecord& r = t.records[i];
    if (!present(r)) continue;
    m_start.push_back(r.start_ns - t0);
    m_end.push_back(r.end_ns - t0);
    m_sm.push_back(r.smid);
    if (m_k_segments) {
      m_record.push_back(uint32_t(i));
      m_row0.push_back(row0[i]);
      m_rows.push_back(rows[i]);
    }
  }
  m_sorted_start = m_start;
  m_sorted_end = m_end;
  std::sort(m_sorted_start.begin(), m_sorted_start.end());
  std::sort(m_sorted_end.begin(), m_sorted_end.end());
}

BlockState ScheduleReplay::state(size_t block, uint64_t t_ns) const {
  if (t_ns >= m_end[block]) return BlockState::Done;
  return t_ns >= m_start[block] ? BlockState::Running : BlockState::Waiting;
}

void ScheduleReplay::states(uint64_t t_ns, std::vector<BlockState>& out) const {
  out.resize(m_start.size());
  for (size_t i = 0; i < m_start.size(); ++i) out[i] = state(i, t_ns);
}

ScheduleReplay::Counts ScheduleReplay::counts(uint64_t t_ns) const {
  // Started: start <= t; done: end <= t (every done block has started, since start <= end).
  const auto started =
      int64_t(std::upper_bound(m_sorted_start.begin(), m_sorted_start.end(), t_ns) - m_sorted_start.begin());
  const auto done =
      int64_t(std::upper_bound(m_sorted_end.begin(), m_sorted_end.end(), t_ns) - m_sorted_end.begin());
  Counts c;
  c.done = done;
  c.running = started - done;
  c.waiting = int64_t(m_start.size()) - started;
  return c;
}

uint64_t ScheduleReplay::next_start(uint64_t t_ns) const {
  const auto it = std::upper_bound(m_sorted_start.begin(), m_sorted_start.end(), t_ns);
  return it == m_sorted_start.end() ? m_duration : *it;
}

uint64_t ScheduleReplay::previous_start(uint64_t t_ns) const {
  const auto it = std::lower_bound(m_sorted_start.begin(), m_sorted_start.end(), t_ns);
  return it == m_sorted_start.begin() ? 0 : *(it - 1);
}

int ScheduleReplay::waves(int64_t slots) const {
  if (slots < 1 || m_start.empty()) return 0;
  return int((int64_t(m_start.size()) + slots - 1) / slots);
}

uint64_t ScheduleReplay::wave_start(int wave, int64_t slots) const {
  if (slots < 1 || wave < 0 || m_sorted_start.empty()) return 0;
  const int64_t first = int64_t(wave) * slots;
  if (first >= int64_t(m_sorted_start.size())) return m_duration;
  return m_sorted_start[size_t(first)];
}

CellSpan ScheduleReplay::cell_span(size_t block) const {
  const size_t tiles = size_t(std::max(1, m_grid_x)) * size_t(std::max(1, m_grid_y));
  const size_t rec = record(block);
  const int z = int(rec / tiles);
  const size_t tile = rec % tiles;
  const int x = int(tile % size_t(std::max(1, m_grid_x))), y = int(tile / size_t(std::max(1, m_grid_x)));
  if (m_k_segments) return {x, y * m_per_y + int(m_row0[block]), 1, int(m_rows[block])};
  if (m_z_cols) return {x * m_grid_z + z, y, 1, 1};
  return {x, y * m_grid_z + z, 1, 1};
}

std::pair<int, int> ScheduleReplay::cell(size_t block) const {
  const CellSpan c = cell_span(block);
  return {c.x, c.y};
}

BlockRect ScheduleReplay::rect(size_t block, int64_t m, int64_t n) const {
  const CellSpan c = cell_span(block);
  // Cell edges at a fraction of the tile, so strips that do not divide the tile still tile it.
  auto edge = [](int cell, int64_t per, int64_t tile) {
    return (int64_t(cell / per) * tile) + (cell % per) * tile / per;
  };
  const int64_t c0 = edge(c.x, m_per_x, m_tile_n), c1 = edge(c.x + c.w, m_per_x, m_tile_n);
  const int64_t r0 = edge(c.y, m_per_y, m_tile_m), r1 = edge(c.y + c.h, m_per_y, m_tile_m);
  BlockRect r;
  r.row0 = std::min(r0, m);
  r.col0 = std::min(c0, n);
  r.rows = std::max<int64_t>(0, std::min(r1, m) - r.row0);
  r.cols = std::max<int64_t>(0, std::min(c1, n) - r.col0);
  return r;
}

std::string describe_replay_time(uint64_t t_ns, uint64_t duration_ns) {
  char text[96];
  const double d_us = double(duration_ns) * 1e-3, t_us = double(t_ns) * 1e-3;
  if (d_us >= 10000)
    std::snprintf(text, sizeof text, "%.3f ms of %.3f ms", t_us * 1e-3, d_us * 1e-3);
  else
    std::snprintf(text, sizeof text, "%.1f us of %.1f us", t_us, d_us);
  return text;
}

}  // namespace ts
