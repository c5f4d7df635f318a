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

struct FigureJob {
  FigureData data;  // meta (title, theme, size and the caption's fields) + every number behind the plot
  std::string
      subtitle;  // under the title: what the plot's figures are (estimated, theoretical, measured where)
  float scale = 1.5f;  // text and line scale (1: as on a 96-dpi screen)
  std::function<PlotReport(ImVec2 plot_size)>
      draw;  // draws the plot at that size (PlotStyle: not interactive)
};

// Renders the job into an RGBA image of data.meta.size (top row first) on the current GL context, in a Dear
// ImGui + ImPlot context of its own that shares the current context's fonts; the current contexts and the
// palette are restored afterwards. Needs a current ImGui context (the window's, or FigureHost's).
std::vector<uint8_t> render_figure(const FigureJob& job, PlotReport* report);

struct FigureWritten {
  FigurePaths paths;
  PlotReport report;
};
// render_figure, then writes tilescope-<plot>-<date>-<time>[-n].png, .csv and .json into `dir` (created if
// needed), never replacing a file. The sidecar holds figure_sidecar(data) and, under "render", where the plot
// was drawn and each series' colour. Throws std::runtime_error (or ValidationError) with the reason.
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
