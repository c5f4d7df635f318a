#pragma once
// [SECTION] Which tiles of A and B feed a tile of C. A blocked kernel computes a tile of C from the tile's
// row panel of A and column panel of B, a block_k-deep piece of each at a time, staged in shared memory; the
// pipelined rungs keep `stages` pieces there at once. The registry describes each rung's tiles (TileGeometry,
// beside its launcher); this file turns that description and a problem's shape into the rectangles the
// Matrices panel outlines, step by step, including what the teaching kernels get wrong. Pure arithmetic: no
// drawing, no CUDA. Indices are 64-bit.
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

// What a teaching kernel gets wrong in its staging (the picture shows it).
enum class StagingBug : uint8_t {
  None = 0,
  FloorK,        // K / TILE steps: the last, partial piece of K is never loaded
  NoSecondSync,  // no barrier after the compute loop: the next step's load overwrites the pieces in use
  Mirror,        // blocks below the diagonal do nothing; their tiles are copied, transposed, from above it
};

// One tile size of a kernel, as its launcher builds it. 0 in block_k: the kernel stages nothing in shared
// memory (each thread reads A and B from global memory).
struct TileGeometry {
  int block_m = 0, block_n = 0, block_k = 0;  // C tile of one block, and the K depth of one staged step
  int stages = 1;              // pieces of K in shared memory at once (cp.async pipelines: 2, 3, 4)
  int k_slices = 1;            // split-K: blocks per tile of C, each summing a slice of the K steps
  int warp_m = 0, warp_n = 0;  // warp 0's tile of C (0: no warp tile)
  bool warpgroup = false;      // the warp tile is a warpgroup's (4 warps: Hopper wgmma)
  // Thread 0's outputs: pieces_m x pieces_n pieces of piece_m x piece_n elements, piece (i, j) at rows
  // i * step_m and columns j * step_n from the tile's corner (0 pieces: not drawn, e.g. tensor-core
  // fragments).
  int piece_m = 0, piece_n = 0, pieces_m = 1, pieces_n = 1, step_m = 0, step_n = 0;
  StagingBug bug = StagingBug::None;
};

struct Rect64 {
  int64_t row0 = 0, col0 = 0, rows = 0, cols = 0;
  bool empty() const { return rows <= 0 || cols <= 0; }
  bool operator==(const Rect64& o) const {
    return row0 == o.row0 && col0 == o.col0 && rows == o.rows && cols == o.cols;
  }
};

struct FeedStep {
  int64_t k0 = 0, k1 = 0;  // the K range of this step's pieces, clipped to K
  Rect64 a, b;             // the piece of A (the tile's rows x [k0, k1)) and of B ([k0, k1) x its columns)
  bool visited = true;     // false: the kernel never loads it (tiled_floork's last, partial piece)
};

struct FeedPlan {
  std::string problem;                 // non-empty: no plan (the reason), e.g. a tile outside C
  Rect64 c_tile;                       // the tile of C, clipped to M x N
  Rect64 a_panel, b_panel;             // the rows of A and the columns of B it reads, over the K it sums
  int64_t slice_k0 = 0, slice_k1 = 0;  // split-K: the slice of K this block sums (else 0 to K)
  std::vector<FeedStep> steps;         // in order; never-visited pieces included, marked
  int stages = 1;
  Rect64 warp;                 // warp 0's tile inside the tile (empty: none)
  std::vector<Rect64> thread;  // thread 0's outputs (one rectangle per piece)
  bool staged = true;          // false: nothing is staged in shared memory (naive, coalesced)
  StagingBug bug = StagingBug::None;
  // Mirror: the tile is below the diagonal, its block does nothing, and its values are the transpose of
  // tile (source_row, source_col), made from that tile's panels (a_panel and b_panel say which).
  bool mirrored = false;
  int64_t source_row = 0, source_col = 0;
  std::string note;  // what the picture shows, in a sentence or two
};

// The plan for tile (tile_row, tile_col) of C = A B (M x N, K deep), slice `slice` of split-K.
FeedPlan feeding_plan(const TileGeometry& g, int64_t m, int64_t n, int64_t k, int64_t tile_row,
                      int64_t tile_col, int slice = 0);

// The steps whose pieces are in shared memory while step s is computed: s and the stages - 1 after it (in
// flight), never-visited ones left out.
std::vector<int> resident_steps(const FeedPlan& p, int step);

// NoSecondSync: true when step s + 1's load can land in the buffers step s still reads (every step but the
// last).
bool overwrites_in_use(const FeedPlan& p, int step);

// "step 2 of 3: K 64-69 (a partial piece)" and the bug's words when it shows at this step.
std::string describe_step(const FeedPlan& p, int step);

}  // namespace ts
