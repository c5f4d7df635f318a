#pragma once
// [SECTION] The measured tile schedule: for one traced launch, which SM ran each block (output tile) and
// when. Records come from the instrumented kernels (one thread per block stamps %smid and %globaltimer); this
// file checks and aggregates them for the Tile schedule panel, without drawing anything.
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

// Written by the device: layout shared with kernels/trace.cuh (plain POD, 24 bytes).
struct TileRecord {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t smid;
  uint32_t reserved;  // padding (keeps the record 24 bytes)
};
static_assert(sizeof(TileRecord) == 24, "TileRecord layout is shared with the device");

struct TileTrace {
  int grid_x = 0, grid_y = 0;  // blocks along N and along M; record index = y * grid_x + x
  int tile_m = 0, tile_n = 0;  // rows and columns of C per block
  int sm_count = 0;
  std::vector<TileRecord> records;
  double traced_ms = 0, plain_ms = 0;  // the traced launch, and an uninstrumented one next to it
  uint64_t timer_resolution_ns = 0;    // smallest non-zero difference seen between stamps
};

struct ScheduleSummary {
  std::string problem;      // empty when the trace is consistent
  uint64_t t0 = 0, t1 = 0;  // first start, last end
  std::vector<int> tiles_per_sm;
  double mean_tile_us = 0, min_tile_us = 0, max_tile_us = 0;
  int max_concurrency = 0;
  int waves = 0;  // largest number of tiles that ran one after another on a single SM
};

// Every tile recorded exactly once (start > 0, end >= start), SM ids below sm_count. Empty string when fine.
std::string check_trace(const TileTrace& t);
ScheduleSummary summarize_schedule(const TileTrace& t);

// Tiles resident on the GPU over time: (time_ns relative to t0, count) at every change.
std::vector<std::pair<double, int>> concurrency_curve(const TileTrace& t);

// Smallest non-zero step between any two stamps (the timer's visible resolution).
uint64_t timer_resolution(const TileTrace& t);

// CSV: tile_row,tile_col,sm,start_us,end_us,duration_us (times relative to the first start).
std::string schedule_csv(const TileTrace& t);

}  // namespace ts
