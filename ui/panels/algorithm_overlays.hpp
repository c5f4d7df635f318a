#pragma once
// [SECTION] What the algorithm views draw over the matrices and the tile grid, and their controls: the
// schedule replay's layer (each block waiting, running in its SM's colour, or done) and the outlines of the
// pieces of A and B that feed a chosen tile of C. Used by the Matrices and Tile schedule panels; the state is
// AppState::views (ui/algorithm_views.hpp), the arithmetic core's (schedule_replay.hpp, feeding.hpp).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <imgui.h>

#include "core/engine/feeding.hpp"
#include "core/engine/schedule_replay.hpp"
#include "gfx/texture.hpp"
#include "ui/app_state.hpp"
#include "ui/frame_report.hpp"
#include "ui/plots/plots.hpp"  // sm_colour

namespace ts::ui {

// The replay's colours (RGBA packed as ImGui packs it). Over a heatmap (the default): waiting blocks darken
// what is under them, running ones take their SM's colour, done ones leave the heatmap as it is. A figure,
// with nothing under it, gives opaque ones (replay_plot.hpp).
struct ReplayColours {
  uint32_t waiting = IM_COL32(12, 12, 16, 185);
  uint32_t done = 0;
  uint8_t running_alpha = 235;
  bool operator==(const ReplayColours& o) const {
    return waiting == o.waiting && done == o.done && running_alpha == o.running_alpha;
  }
};

// The replay's layer: one texel per cell of the replay (replay.cells_x() x cells_y(); a block covers one, a
// stream-K segment a strip of its tile), remade when the time, the trace or the colours change.
class ReplayLayer {
 public:
  void update(const ScheduleReplay& r, uint64_t serial, uint64_t t_ns, int sm_count,
              const ReplayColours& colours = {});
  // The texture (0 before update): row 0 of texels is the replay's top row of cells.
  unsigned texture() const { return m_tex.id(); }
  // Inside a plot whose units put the layer over [0, cover_x) x [0, cover_y) (elements of C, or tiles),
  // draws the part over [0, x1) x [0, y1) (C's edge: the last tiles may hang over it).
  void draw(const char* id, double cover_x, double cover_y, double x1, double y1) const;
  void release() { *this = ReplayLayer(); }
  bool ready() const { return m_built; }

 private:
  gfx::Texture2D m_tex;
  bool m_built = false;
  uint64_t m_serial = 0, m_t = 0;
  ReplayColours m_colours;
  std::vector<BlockState> m_states;
  std::vector<uint32_t> m_px;
};

// The trace of the current result when the replay can be drawn (nullptr otherwise; why, in `why`).
const ScheduleReplay* current_replay(const AppState& s, std::string* why = nullptr);
// Play / pause, back to the start, the previous and next block start, the time slider, speed and the waves
// (from the occupancy arithmetic), then what is running now. One or two lines.
void replay_controls(AppState& s, const ScheduleReplay& r, FrameReport& out);

// The feeding plan for the chosen tile of the current result (empty when no tile is chosen, the result has
// no tile description or the tile is gone; why, in `why`).
std::optional<FeedPlan> current_feed_plan(const AppState& s, std::string* why = nullptr);
// The tile of C under (row, col) for the current result's kernel, or false.
bool tile_at(const AppState& s, int64_t row, int64_t col, int64_t& tile_row, int64_t& tile_col);
// The k-step slider, play and close, the step's words and the plan's note.
void feed_controls(AppState& s, const FeedPlan& p);
// Inside a map's plot (A, B, C or the error map): the outlines for step `step`.
enum class FeedMap { A, B, C };
void draw_feed_outlines(const FeedPlan& p, int step, FeedMap map);

}  // namespace ts::ui
