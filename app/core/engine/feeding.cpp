#include "core/engine/feeding.hpp"

#include <algorithm>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>

namespace ts {

namespace {

int64_t ceil_div(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

// [row0, row0 + rows) x [col0, col0 + cols) clipped to [0, m) x [0, n).
Rect64 clip(int64_t row0, int64_t col0, int64_t rows, int64_t cols, int64_t m, int64_t n) {
  Rect64 r;
  r.row0 = std::clamp<int64_t>(row0, 0, m);
  r.col0 = std::clamp<int64_t>(col0, 0, n);
  r.rows = std::max<int64_t>(0, std::min(row0 + rows, m) - r.row0);
  r.cols = std::max<int64_t>(0, std::min(col0 + cols, n) - r.col0);
  return r;
}

std::string format(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
std::string format(const char* fmt, ...) {
  char text[512];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(text, sizeof text, fmt, args);
  va_end(args);
  return text;
}

}  // namespace

FeedPlan feeding_plan(const TileGeometry& g, int64_t m, int64_t n, int64_t k, int64_t tile_row,
                      int64_t tile_col, int slice) {
  FeedPlan p;
  p.bug = g.bug;
  p.stages = std::max(1, g.stages);
  if (g.block_m <= 0 || g.block_n <= 0) {
    p.problem = "this kernel has no tile description";
    return p;
  }
  if (m <= 0 || n <= 0 || k <= 0) {
    p.problem = "an empty problem";
    return p;
  }
  const int64_t tiles_y = ceil_div(m, g.block_m), tiles_x = ceil_div(n, g.block_n);
  if (tile_row < 0 || tile_row >= tiles_y || tile_col < 0 || tile_col >= tiles_x) {
    p.problem = format("tile (%" PRId64 ", %" PRId64 ") is outside C's %" PRId64 " x %" PRId64 " tiles",
                       tile_row, tile_col, tiles_y, tiles_x);
    return p;
  }
  const int slices = std::max(1, g.k_slices);
  if (slice < 0 || slice >= slices) {
    p.problem = format("slice %d of K does not exist (K in %d slices)", slice, slices);
    return p;
  }
  p.c_tile = clip(tile_row * g.block_m, tile_col * g.block_n, g.block_m, g.block_n, m, n);
  // The rows of A and the columns of B the values come from: the tile's own, or for a mirrored tile those
  // of the tile above the diagonal that writes it.
  int64_t from_row = tile_row, from_col = tile_col;
  if (g.bug == StagingBug::Mirror && tile_row > tile_col) {
    p.mirrored = true;
    p.source_row = from_row = tile_col;
    p.source_col = from_col = tile_row;
  }
  p.staged = g.block_k > 0;
  const int64_t bk = p.staged ? g.block_k : k;
  const int64_t k_steps = ceil_div(k, bk);
  const int64_t t_first = int64_t(slice) * k_steps / slices, t_end = int64_t(slice + 1) * k_steps / slices;
  p.slice_k0 = std::min(k, t_first * bk);
  p.slice_k1 = std::min(k, t_end * bk);
  const Rect64 rows = clip(from_row * g.block_m, 0, g.block_m, 1, m, 1);
  const Rect64 cols = clip(0, from_col * g.block_n, 1, g.block_n, 1, n);
  p.a_panel = Rect64{rows.row0, p.slice_k0, rows.rows, p.slice_k1 - p.slice_k0};
  p.b_panel = Rect64{p.slice_k0, cols.col0, p.slice_k1 - p.slice_k0, cols.cols};
  if (p.staged) {
    const int64_t visited = g.bug == StagingBug::FloorK ? k / bk : t_end;
    for (int64_t t = t_first; t < t_end; ++t) {
      FeedStep s;
      s.k0 = t * bk;
      s.k1 = std::min(k, s.k0 + bk);
      s.a = Rect64{p.a_panel.row0, s.k0, p.a_panel.rows, s.k1 - s.k0};
      s.b = Rect64{s.k0, p.b_panel.col0, s.k1 - s.k0, p.b_panel.cols};
      s.visited = t < visited;
      p.steps.push_back(s);
    }
  }
  // A mirrored tile's block does nothing: it has no warps or threads of its own to draw.
  if (g.warp_m > 0 && g.warp_n > 0 && !p.mirrored)
    p.warp = clip(p.c_tile.row0, p.c_tile.col0, std::min<int64_t>(g.warp_m, g.block_m),
                  std::min<int64_t>(g.warp_n, g.block_n), m, n);
  if (g.piece_m > 0 && g.piece_n > 0 && !p.mirrored)
    for (int i = 0; i < std::max(1, g.pieces_m); ++i)
      for (int j = 0; j < std::max(1, g.pieces_n); ++j) {
        const Rect64 r = clip(p.c_tile.row0 + int64_t(i) * g.step_m, p.c_tile.col0 + int64_t(j) * g.step_n,
                              g.piece_m, g.piece_n, m, n);
        if (!r.empty()) p.thread.push_back(r);
      }

  // The words.
  const std::string slice_words = slices > 1 ? format(" (slice %d of %d: K %" PRId64 "-%" PRId64 ")",
                                                      slice + 1, slices, p.slice_k0, p.slice_k1 - 1)
                                             : "";
  if (!p.staged) {
    p.note =
        "Nothing is staged in shared memory: each thread reads its row of A and its column of B from "
        "global memory, one k at a time.";
  } else if (p.mirrored) {
    p.note = format(
        "Below the diagonal: this tile's block does nothing. Its values are the transpose of tile "
        "(%" PRId64 ", %" PRId64 "), made from A's rows %" PRId64 "-%" PRId64 " and B's columns %" PRId64
        "-%" PRId64 ", not this tile's own panels.",
        p.source_row, p.source_col, p.a_panel.row0, p.a_panel.row0 + p.a_panel.rows - 1, p.b_panel.col0,
        p.b_panel.col0 + p.b_panel.cols - 1);
  } else {
    p.note = format("%" PRId64 " steps of K %" PRId64 " deep%s; %s.", int64_t(p.steps.size()), bk,
                    slice_words.c_str(),
                    p.stages > 1 ? format("%d pieces of A and of B are in shared memory at once (cp.async: "
                                          "the next ones load while this one is computed)",
                                          p.stages)
                                       .c_str()
                                 : "one piece of A and one of B are in shared memory at a time");
  }
  // What the teaching kernel gets wrong comes first: the panel shows the note on one line.
  std::string bug;
  if (g.bug == StagingBug::FloorK) {
    if (k % bk != 0)
      bug = format("K %" PRId64 "-%" PRId64 " is never loaded: the kernel makes K / TILE = %" PRId64
                   " steps and K = %" PRId64 " is not a multiple of %" PRId64
                   ", so every element of the tile misses those products.",
                   (k / bk) * bk, k - 1, k / bk, k, bk);
    else
      bug = format("K = %" PRId64 " is a multiple of %" PRId64 ": nothing is dropped at this shape.", k, bk);
  } else if (g.bug == StagingBug::NoSecondSync) {
    bug =
        "No barrier after each step's products: the next step's load can overwrite the pieces slower warps "
        "still read (a race).";
  } else if (g.bug == StagingBug::Mirror && tile_row == tile_col) {
    bug = "On the diagonal: the upper triangle is computed and mirrored into the lower one.";
  }
  if (!bug.empty()) p.note = bug + " " + p.note;
  return p;
}

std::vector<int> resident_steps(const FeedPlan& p, int step) {
  std::vector<int> out;
  if (step < 0 || step >= int(p.steps.size())) return out;
  for (int s = step; s < int(p.steps.size()) && s < step + p.stages; ++s)
    if (p.steps[size_t(s)].visited) out.push_back(s);
  return out;
}

bool overwrites_in_use(const FeedPlan& p, int step) {
  return p.bug == StagingBug::NoSecondSync && step >= 0 && step + 1 < int(p.steps.size()) &&
         p.steps[size_t(step) + 1].visited;
}

std::string describe_step(const FeedPlan& p, int step) {
  if (step < 0 || step >= int(p.steps.size())) return "";
  const FeedStep& s = p.steps[size_t(step)];
  const bool partial = s.k1 - s.k0 < (p.steps.size() > 1 ? p.steps[0].k1 - p.steps[0].k0 : s.k1 - s.k0);
  std::string text = format("step %d of %d: K %" PRId64 "-%" PRId64 "%s", step + 1, int(p.steps.size()), s.k0,
                            s.k1 - 1, partial ? " (a partial piece)" : "");
  if (!s.visited) text += ": never loaded (the kernel stops before it)";
  if (overwrites_in_use(p, step))
    text += format(": step %d's load may overwrite these pieces while slow warps still read them", step + 2);
  return text;
}

}  // namespace ts
