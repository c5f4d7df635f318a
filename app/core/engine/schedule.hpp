#pragma once
// [SECTION] The measured tile schedule: for one traced launch, which SM ran each block (output tile) and
// when. Records come from the instrumented kernels (one thread per block stamps %smid and %globaltimer); this
// file checks and aggregates them for the Tile schedule panel, without drawing anything.
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ts {

// Written by the device: layout shared with kernels/rungs/trace.cuh (plain POD, 24 bytes).
struct TileRecord {
  uint64_t start_ns;
  uint64_t end_ns;
  uint32_t smid;
  // TileTrace::k_segments (stream-K): the segment's first K step (of k_step); 0 otherwise.
  uint32_t k_first;
};
static_assert(sizeof(TileRecord) == 24, "TileRecord layout is shared with the device");

// A record the launch wrote. Every record of a consistent trace is, but a stream-K trace's records past a
// tile's last segment (TileTrace::k_segments): those are all zero. Every consumer of the records skips the
// others.
inline bool present(const TileRecord& r) {
  return r.start_ns != 0;
}

struct ScheduleSummary;
struct ScheduleView;
class ScheduleReplay;

struct TileTrace {
  int grid_x = 0, grid_y = 0;  // tiles along N and along M
  // Blocks per tile (split-K: one per slice of K). Record index = (z * grid_y + y) * grid_x + x, one per
  // block.
  int grid_z = 1;
  // blockIdx.z is a block's share of the tile's columns (a cluster making one tile together: tile_n / grid_z
  // columns each, every block writes its own) instead of a slice of K.
  bool z_splits_columns = false;
  // Split-K: the length of the K steps its slices are cut in (the kernel's BK: slice z takes steps
  // [z S / grid_z, (z + 1) S / grid_z) of S = ceil(K / k_step), rounded down). 0: not known or not split.
  int k_step = 0;
  // Stream-K: blockIdx.z is not a slice of K but the tile's segments, each block's share of the tile's K in K
  // order: record z of a tile is its z-th segment, from K step records[].k_first to the next segment's
  // first step (or the tile's last). A tile has one segment or more, never more than grid_z; the records past
  // a tile's last segment are absent (start_ns = end_ns = 0, see present()).
  bool k_segments = false;
  // The launch's K (elements), 0 when not known. Stream-K needs it for where a tile's last segment ends (step
  // S = ceil(k / k_step)): the replay's strips, the K ranges of the tooltips, the CSV and the Perfetto
  // export.
  int64_t k = 0;
  int tile_m = 0, tile_n = 0;  // rows and columns of C per tile
  int sm_count = 0;
  std::vector<TileRecord> records;
  double traced_ms = 0, plain_ms = 0;  // the traced launch, and an uninstrumented one next to it
  uint64_t timer_resolution_ns = 0;    // smallest non-zero difference seen between stamps
  // The aggregates a panel draws (prepare_schedule_view), made once where the trace is recorded, off the
  // window's thread: on a 128 x 128 grid they take milliseconds, too long for a frame. Null: not made yet.
  std::shared_ptr<const ScheduleView> view;
  // The same for the replay on C (schedule_replay.hpp): the stamps sorted once. Null: not made yet.
  std::shared_ptr<const ScheduleReplay> replay;
};

// Over the present records (blocks; stream-K: segments).
struct ScheduleSummary {
  std::string problem;      // empty when the trace is consistent
  uint64_t t0 = 0, t1 = 0;  // first start, last end
  std::vector<int> tiles_per_sm;
  double mean_tile_us = 0, min_tile_us = 0, max_tile_us = 0;
  int max_concurrency = 0;
  int waves = 0;  // largest number of tiles that ran one after another on a single SM
};

// Every tile recorded exactly once (start > 0, end >= start), SM ids below sm_count. Empty string when fine.
// Stream-K (k_segments), per tile instead: segment 0 present with k_first 0; the present segments contiguous
// from z = 0, their k_first strictly increasing and below S = ceil(k / k_step) when k is known; the absent
// records after them all zero; k_step > 0 (k_first counts its steps) and z not a cluster's columns.
std::string check_trace(const TileTrace& t);
ScheduleSummary summarize_schedule(const TileTrace& t);

// Tiles resident on the GPU over time: (time_ns relative to t0, count) at every change.
std::vector<std::pair<double, int>> concurrency_curve(const TileTrace& t);

// What the Tile schedule panel draws, aggregated from a consistent trace (everything but the colours):
//   per tile, its start and duration as fractions of the launch and of the longest tile;
//   per SM and time bin (gantt_bins across the launch), how many of the SM's tiles overlap the bin;
//   the tiles resident over time, thinned to at most max_curve_points steps.
struct ScheduleView {
  ScheduleSummary summary;
  std::vector<float> start_frac, duration_frac;  // per record, in [0, 1]
  // Per tile of C (grid_x * grid_y, row-major): the tile's first start to its last end, as fractions, and
  // the SM that finished it (wrote C). With one block per tile, the record's own figures.
  std::vector<float> tile_start_frac, tile_duration_frac;
  std::vector<uint32_t> tile_sm;
  int gantt_bins = 0, gantt_sms = 0;
  std::vector<float> gantt;  // gantt_sms rows of gantt_bins counts
  float gantt_peak = 1;
  std::vector<double> curve_us;  // time since the first start, microseconds
  std::vector<double> curve_tiles;
};
// Summarises the trace; a trace that fails check_trace gives a view whose summary.problem says why (and
// nothing else). Cost: sorting the 2 x tiles stamps once.
ScheduleView prepare_schedule_view(const TileTrace& t, int gantt_bins = 1024, size_t max_curve_points = 4000);

// Stream-K: the tile's present segments (1 for a tile one block made whole; 0 when segment 0 is absent).
int tile_segments(const TileTrace& t, size_t tile);
// Stream-K: S, the K steps of a tile (ceil(k / k_step)); 0 when k or k_step is not known.
int64_t k_steps_of(const TileTrace& t);
// Stream-K: record i's K steps [first, end): from its k_first to the next present segment's of its tile, or
// to S for the tile's last (end = -1 when S is not known). Only for a present record of a k_segments trace.
std::pair<int64_t, int64_t> segment_steps(const TileTrace& t, size_t record);
// The same in elements of K, [begin, end): first * k_step to min(end * k_step, k) (end = -1 when unknown).
std::pair<int64_t, int64_t> segment_k_range(const TileTrace& t, size_t record);

// "16384 tiles of 32 x 32", with split-K "64 tiles of 128 x 128, K in 2 slices: 128 blocks", for a cluster
// "20 tiles of 256 x 256, each 2 blocks of 128 columns (a cluster): 40 blocks", for stream-K
// "288 tiles of 128 x 256, stream-K: 264 made whole, 24 shared in 52 segments" (the panel's and the
// figure's first words).
std::string describe_grid(const TileTrace& t);

// The tile map's tooltip for tile `tile` (row-major) of a trace with several blocks per tile: each block's
// columns (a cluster), slice of K or (stream-K) segment's K range, its SM and times (microseconds from t0),
// and who wrote C (writer_sm: the SM of the slice or segment that finished last, from tile_spans).
std::string describe_tile_blocks(const TileTrace& t, size_t tile, uint64_t t0, uint32_t writer_sm);

// Per tile of C (grid_x * grid_y, row-major), over its present blocks (grid_z of them; stream-K: its
// segments): the first start, the last end and the SM of the block that ended last (split-K and stream-K: the
// one that added the partial sums and wrote C).
std::vector<TileRecord> tile_spans(const TileTrace& t);

// Smallest non-zero step between any two stamps (the timer's visible resolution).
uint64_t timer_resolution(const TileTrace& t);

// What blockIdx.z is in the CSV and the figure's data: "k_slice", "cluster_block" when z splits a tile's
// columns, "k_segment" for stream-K.
const char* block_z_name(const TileTrace& t);
// What a record is, in words: "segment" (stream-K), "block" (several per tile) or "tile"; plural with 's'.
const char* record_noun(const TileTrace& t);

// CSV: tile_row,tile_col,k_slice,sm,start_us,end_us,duration_us (times relative to the first start), one row
// per present record; the third column is cluster_block instead when z splits a tile's columns. Stream-K:
// tile_row,tile_col,k_segment,k_begin,k_end,sm,... with the segment's K range [k_begin, k_end) in elements
// (k_end empty for a tile's last segment when K is not known).
std::string schedule_csv(const TileTrace& t);

}  // namespace ts
