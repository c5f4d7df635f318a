#include "core/engine/schedule_replay.hpp"

#include <algorithm>
#include <cstdio>

namespace ts {

ScheduleReplay::ScheduleReplay(const TileTrace& t) {
  m_problem = check_trace(t);
  if (!m_problem.empty()) return;
  uint64_t t0 = UINT64_MAX, t1 = 0;
  for (const TileRecord& r : t.records) {
    t0 = std::min(t0, r.start_ns);
    t1 = std::max(t1, r.end_ns);
  }
  if (t.records.empty()) t0 = t1 = 0;
  m_duration = t1 - t0;
  const size_t n = t.records.size();
  m_start.resize(n);
  m_end.resize(n);
  m_sm.resize(n);
  for (size_t i = 0; i < n; ++i) {
    m_start[i] = t.records[i].start_ns - t0;
    m_end[i] = t.records[i].end_ns - t0;
    m_sm[i] = t.records[i].smid;
  }
  m_sorted_start = m_start;
  m_sorted_end = m_end;
  std::sort(m_sorted_start.begin(), m_sorted_start.end());
  std::sort(m_sorted_end.begin(), m_sorted_end.end());
  m_grid_x = t.grid_x;
  m_grid_y = t.grid_y;
  m_grid_z = std::max(1, t.grid_z);
  m_tile_m = t.tile_m;
  m_tile_n = t.tile_n;
  m_z_cols = t.z_splits_columns;
  m_cells_x = m_grid_x * (m_z_cols ? m_grid_z : 1);
  m_cells_y = m_grid_y * (m_z_cols ? 1 : m_grid_z);
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

std::pair<int, int> ScheduleReplay::cell(size_t block) const {
  const size_t tiles = size_t(std::max(1, m_grid_x)) * size_t(std::max(1, m_grid_y));
  const int z = int(block / tiles);
  const size_t tile = block % tiles;
  const int x = int(tile % size_t(std::max(1, m_grid_x))), y = int(tile / size_t(std::max(1, m_grid_x)));
  return m_z_cols ? std::pair<int, int>{x * m_grid_z + z, y} : std::pair<int, int>{x, y * m_grid_z + z};
}

BlockRect ScheduleReplay::rect(size_t block, int64_t m, int64_t n) const {
  const auto [cx, cy] = cell(block);
  // Cell edges at a fraction of the tile, so grid_z strips that do not divide the tile still tile it.
  const int64_t per_x = m_z_cols ? m_grid_z : 1, per_y = m_z_cols ? 1 : m_grid_z;
  auto edge = [](int c, int64_t per, int64_t tile) {
    return (int64_t(c / per) * tile) + (c % per) * tile / per;
  };
  const int64_t c0 = edge(cx, per_x, m_tile_n), c1 = edge(cx + 1, per_x, m_tile_n);
  const int64_t r0 = edge(cy, per_y, m_tile_m), r1 = edge(cy + 1, per_y, m_tile_m);
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
