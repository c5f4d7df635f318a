#pragma once
// [SECTION] Figures: one plot rendered alone, offscreen, at a chosen size and theme, with a title, a subtitle
// (what is estimated or theoretical) and the caption line (figure.hpp), then written as PNG + CSV + JSON
// sidecar under names that never collide with an earlier export. The window's "Export figure..." and
// `tilescope figure` both come here, and the plot is drawn by the function its panel uses (plots.hpp).
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ui/app_state.hpp"
#include "core/plots/figure.hpp"
#include "gfx/headless.hpp"
#include "ui/plots/plots.hpp"

struct ImGuiContext;

namespace ts::ui {

// An animation written beside the figure's PNG (the replay's WebP): `frames` pictures of `size`, each the
// figure's window (title, subtitle, caption) around draw(frame, plot_size), shown for its duration.
struct FigureAnimation {
  FigureSize size;
  float scale = 1;
  std::vector<int> duration_ms;  // one per frame
  std::function<PlotReport(int frame, ImVec2 plot_size)> draw;
};

struct FigureJob {
  FigureData data;  // meta (title, theme, size and the caption's fields) + every number behind the plot
  std::string
      subtitle;  // under the title: what the plot's figures are (estimated, theoretical, measured where)
  float scale = 1.5f;  // text and line scale (1: as on a 96-dpi screen)
  std::function<PlotReport(ImVec2 plot_size)>
      draw;  // draws the plot at that size (PlotStyle: not interactive)
  std::shared_ptr<const FigureAnimation> animation;  // also an animated WebP (null: none)
};

// Renders the job into an RGBA image of data.meta.size (top row first) on the current GL context, in a Dear
// ImGui + ImPlot context of its own that shares the current context's fonts; the current contexts and the
// palette are restored afterwards. Needs a current ImGui context (the window's, or FigureHost's).
std::vector<uint8_t> render_figure(const FigureJob& job, PlotReport* report);
// The job's animation, frame by frame through the same window as render_figure (one Dear ImGui context for
// all frames), encoded as an animated WebP (gfx/webp.hpp). `report`: the last frame's. Throws as
// render_figure does.
std::string render_animation(const FigureJob& job, PlotReport* report);

struct FigureWritten {
  FigurePaths paths;
  PlotReport report;
  int frames = 0;  // of the WebP (0: none)
};
// render_figure, then writes tilescope-<plot>-<date>-<time>[-n].png, .csv and .json into `dir` (created if
// needed), never replacing a file; with an animation, its .webp under the same stem (rendered before any file
// is written). The sidecar holds figure_sidecar(data) and, under "render", where the plot was drawn, each
// series' colour, the small multiples' pictures and the animation's size, frames and picture. Throws
// std::runtime_error (or ValidationError) with the reason.
FigureWritten write_figure(const FigureJob& job, const std::filesystem::path& dir);

// The job for one of the window's plots, from its state (the same data its panel draws). Throws
// ValidationError when there is nothing to draw (e.g. a schedule without a traced launch).
FigureJob figure_job(AppState& s, const FigureRequest& r);

// For the command line: an offscreen GL context and a Dear ImGui context with TileScope's fonts, for
// render_figure to share. Throws gfx::DisplayError when no GL context can be made.
class FigureHost {
 public:
  FigureHost(gfx::GlChoice choice, int cuda_device);
  ~FigureHost();
  FigureHost(const FigureHost&) = delete;
  FigureHost& operator=(const FigureHost&) = delete;
  const std::string& gl_note() const { return m_gl.note; }

 private:
  gfx::HeadlessGl m_gl;
  ImGuiContext* m_ctx = nullptr;
};

}  // namespace ts::ui
