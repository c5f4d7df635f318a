#pragma once
// [SECTION] Replaying a traced launch on C: at time t (nanoseconds after the launch's first block started),
// every block of the launch is waiting, running or done. The Matrices and Tile schedule panels draw that as a
// layer over C (or its tile grid), the figure command as an animation or a strip of stills. Pure arithmetic
// on a TileTrace (schedule.hpp): no drawing, no CUDA.
#include <cstdint>
#include <string>
#include <vector>

#include "core/engine/schedule.hpp"

namespace ts {

enum class BlockState : uint8_t { Waiting = 0, Running = 1, Done = 2 };

// Where a block sits in the replay's picture of C: a rectangle of elements (64-bit, clipped to M x N). A tile
// made by several blocks is cut: split-K's slices as strips of the tile's rows (slice 0 on top), a cluster's
// blocks as their own columns (z_splits_columns), stream-K's segments (k_segments) as strips of the tile's
// rows in K order, each as tall as its share of the tile's K (segment 0 on top).
struct BlockRect {
  int64_t row0 = 0, col0 = 0, rows = 0, cols = 0;
};

// The cells a block covers in the replay's picture: w x h of them from (x, y).
struct CellSpan {
  int x = 0, y = 0, w = 1, h = 1;
};

class ScheduleReplay {
 public:
  ScheduleReplay() = default;
  // From a trace that passes check_trace; otherwise problem() says why and the replay has no blocks.
  // Cost: sorting the starts and the ends once.
  explicit ScheduleReplay(const TileTrace& t);

  const std::string& problem() const { return m_problem; }
  bool empty() const { return m_start.empty(); }
  // The blocks replayed: every record, or for stream-K every present segment (the absent records are left
  // out: nothing ran there). Block i is the trace's record record(i).
  size_t blocks() const { return m_start.size(); }
  size_t record(size_t block) const { return m_record.empty() ? block : size_t(m_record[block]); }
  bool k_segments() const { return m_k_segments; }
  // What a block is, in words: "segments" for stream-K, "blocks" otherwise.
  const char* blocks_noun() const { return m_k_segments ? "segments" : "blocks"; }
  uint64_t duration_ns() const { return m_duration; }  // last end - first start

  // Block i (the trace's record order) at t: waiting before its start, running from its start to before its
  // end, done from its end (a block that starts and ends at the same stamp is done at once).
  BlockState state(size_t block, uint64_t t_ns) const;
  void states(uint64_t t_ns, std::vector<BlockState>& out) const;  // one per block, O(blocks)
  uint32_t sm(size_t block) const { return m_sm[block]; }
  uint64_t start_ns(size_t block) const { return m_start[block]; }  // after the first start
  uint64_t end_ns(size_t block) const { return m_end[block]; }

  struct Counts {
    int64_t waiting = 0, running = 0, done = 0;
  };
  Counts counts(uint64_t t_ns) const;  // O(log blocks)

  // The first block start after t (the "next block" step); duration_ns() when none is left.
  uint64_t next_start(uint64_t t_ns) const;
  // The last block start before t; 0 when none.
  uint64_t previous_start(uint64_t t_ns) const;

  // Waves from the occupancy arithmetic: `slots` blocks are resident at once (blocks per SM x SMs), so the
  // launch takes ceil(blocks / slots) waves; wave k (0-based) begins when the (k * slots)-th block, in order
  // of start, starts. 0 waves when slots < 1.
  int waves(int64_t slots) const;
  uint64_t wave_start(int wave, int64_t slots) const;

  // Block i's rectangle in C (M x N), from the trace's grid and tile.
  BlockRect rect(size_t block, int64_t m, int64_t n) const;
  // The replay picture's cells, cells_x across and cells_y down, covering grid_x * tile_n columns and
  // grid_y * tile_m rows of C (the last tiles may hang over C's edge): each tile is cells_per_tile_x x
  // cells_per_tile_y of them. One cell per block (grid_z per tile: split-K's rows, a cluster's columns), but
  // for stream-K a tile has R rows of cells (R = its K steps S, at most what keeps cells_y near 2048, never
  // below grid_z) and segment z takes the rows of its share, from round(k_first R / S) (each at least one
  // row; when K is not known, a tile's segments share its rows equally). cell(i): block i's first (top-left)
  // cell.
  int cells_x() const { return m_cells_x; }
  int cells_y() const { return m_cells_y; }
  int cells_per_tile_x() const { return m_per_x; }
  int cells_per_tile_y() const { return m_per_y; }
  std::pair<int, int> cell(size_t block) const;
  CellSpan cell_span(size_t block) const;
  int64_t cover_rows() const { return int64_t(m_grid_y) * m_tile_m; }
  int64_t cover_cols() const { return int64_t(m_grid_x) * m_tile_n; }
  int tiles_x() const { return m_grid_x; }  // the tile grid of C
  int tiles_y() const { return m_grid_y; }
  bool z_splits_columns() const { return m_z_cols; }

 private:
  std::string m_problem;
  std::vector<uint64_t> m_start, m_end;  // per block, relative to the first start
  std::vector<uint32_t> m_sm;            // per block
  std::vector<uint64_t> m_sorted_start, m_sorted_end;
  uint64_t m_duration = 0;
  int m_grid_x = 0, m_grid_y = 0, m_grid_z = 1, m_tile_m = 0, m_tile_n = 0;
  bool m_z_cols = false, m_k_segments = false;
  int m_cells_x = 0, m_cells_y = 0, m_per_x = 1, m_per_y = 1;
  // Stream-K only (empty otherwise): per block, its record and its rows of cells within its tile.
  std::vector<uint32_t> m_record;
  std::vector<uint32_t> m_row0, m_rows;
};

// A time in the replay as a person reads it: "412.5 us of 1034 us".
std::string describe_replay_time(uint64_t t_ns, uint64_t duration_ns);

}  // namespace ts
