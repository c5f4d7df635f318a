#include "ui/plots/figure_render.hpp"

#include <algorithm>
#include <cmath>
#include <ctime>
#include <stdexcept>

#include <imgui.h>
#include <imgui_impl_opengl3.h>
#include <implot.h>
#include <nlohmann/json.hpp>

#include "core/io/csv.hpp"
#include "gfx/gl.hpp"
#include "gfx/gl_check.hpp"
#include "ui/gl_health.hpp"
#include "ui/panels/panel.hpp"
#include "core/io/settings.hpp"
#include "gfx/texture.hpp"
#include "gfx/webp.hpp"
#include "ui/plots/replay_plot.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace fs = std::filesystem;

namespace {

// A Dear ImGui + ImPlot context for one figure, sharing the fonts of the context current when it was made;
// the previous contexts and palette come back when it goes.
class FigureContext {
 public:
  explicit FigureContext(const FigureJob& job) {
    if (!m_prev) throw std::runtime_error("figure rendering needs a Dear ImGui context to share fonts with");
    ImFontAtlas* atlas = ImGui::GetIO().Fonts;
    ImFont* font = ImGui::GetIO().FontDefault;
    m_ctx = ImGui::CreateContext(atlas);
    ImGui::SetCurrentContext(m_ctx);
    m_plot = ImPlot::CreateContext();
    ImPlot::SetCurrentContext(m_plot);
    ImGuiIO& io = ImGui::GetIO();
    io.IniFilename = nullptr;
    io.LogFilename = nullptr;
    io.FontDefault = font;
    ImGui_ImplOpenGL3_Init("#version 330 core");
    apply_theme(job.data.meta.theme == FigureTheme::Light ? Theme::Light : Theme::Dark, 16.0f, job.scale);
  }
  ~FigureContext() {
    ImGui_ImplOpenGL3_Shutdown();
    ImPlot::DestroyContext(m_plot);
    ImGui::DestroyContext(m_ctx);
    ImGui::SetCurrentContext(m_prev);
    ImPlot::SetCurrentContext(m_prev_plot);
    set_palette(m_palette);
  }
  FigureContext(const FigureContext&) = delete;
  FigureContext& operator=(const FigureContext&) = delete;

 private:
  ImGuiContext* m_prev = ImGui::GetCurrentContext();
  ImPlotContext* m_prev_plot = ImPlot::GetCurrentContext();
  Palette m_palette = palette();
  ImGuiContext* m_ctx = nullptr;
  ImPlotContext* m_plot = nullptr;
};

// The figure's one window: title, subtitle, the plot, the caption line.
PlotReport figure_window(const FigureJob& job, ImVec2 size) {
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(size);
  PlotReport rep;
  const ImGuiWindowFlags flags = ImGuiWindowFlags_NoDecoration | ImGuiWindowFlags_NoMove |
                                 ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoScrollWithMouse |
                                 ImGuiWindowFlags_NoBringToFrontOnFocus;
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(ImGui::GetFontSize(), ImGui::GetFontSize() * 0.8f));
  if (ImGui::Begin("##figure", nullptr, flags)) {
    const FigureMeta& m = job.data.meta;
    ImGui::PushFont(nullptr, ImGui::GetStyle().FontSizeBase * 1.45f);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(m.title.c_str());
    ImGui::PopTextWrapPos();
    ImGui::PopFont();
    if (!job.subtitle.empty()) text_muted_wrapped(job.subtitle.c_str());
    ImGui::Spacing();
    const std::string caption = caption_line(m);
    const float wrap = ImGui::GetContentRegionAvail().x;
    const float caption_h = ImGui::CalcTextSize(caption.c_str(), nullptr, false, wrap).y;
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const ImVec2 plot(avail.x, std::max(100.0f, avail.y - caption_h - 2 * ImGui::GetStyle().ItemSpacing.y));
    rep = job.draw(plot);
    text_muted_wrapped(caption.c_str());
  }
  ImGui::End();
  ImGui::PopStyleVar();
  return rep;
}

nlohmann::json colour_json(const ImVec4& c) {
  return {int(std::lround(c.x * 255)), int(std::lround(c.y * 255)), int(std::lround(c.z * 255))};
}

}  // namespace

namespace {

void check_size(const FigureSize& sz) {
  if (sz.width < kMinFigureSide || sz.height < kMinFigureSide || sz.width > kMaxFigureSide ||
      sz.height > kMaxFigureSide)
    throw ValidationError("figure size " + std::to_string(sz.width) + " x " + std::to_string(sz.height) +
                          " is outside " + std::to_string(kMinFigureSide) + ".." +
                          std::to_string(kMaxFigureSide));
}

// One picture of the job in the current figure context, into `fbo` (of the job's size), read back.
std::vector<uint8_t> render_once(const FigureJob& job, gfx::Framebuffer& fbo, PlotReport* report) {
  const FigureSize sz = job.data.meta.size;
  PlotReport rep;
  // A few frames: ImPlot and ImGui size legends, tables and wrapped text from the previous frame. Only the
  // last one, the picture read back, is drawn in pixels (software GL spends most of a figure's time there).
  constexpr int kSettleFrames = 4;
  for (int frame = 0; frame < kSettleFrames; ++frame) {
    ImGui_ImplOpenGL3_NewFrame();
    ImGuiIO& io = ImGui::GetIO();
    io.DisplaySize = ImVec2(float(sz.width), float(sz.height));
    io.DisplayFramebufferScale = ImVec2(1, 1);
    io.DeltaTime = 1.0f / 60;
    ImGui::NewFrame();
    rep = figure_window(job, io.DisplaySize);
    ImGui::Render();
    fbo.bind();
    const ImVec4 bg = ImGui::GetStyle().Colors[ImGuiCol_WindowBg];
    glClearColor(bg.x, bg.y, bg.z, 1.0f);
    const bool settle = frame < kSettleFrames - 1;
    if (settle) glEnable(GL_RASTERIZER_DISCARD);
    glClear(GL_COLOR_BUFFER_BIT);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());
    if (settle) glDisable(GL_RASTERIZER_DISCARD);
    gfx::Framebuffer::unbind();
  }
  glFinish();
  std::vector<uint8_t> rgba = fbo.read_rgba();
  gfx::damage_readback(rgba);
  // Only a picture OpenGL drew right leaves here (after a fault on an H100 it drew garbage and said nothing).
  require_gl_ok("the figure");
  if (report) *report = rep;
  return rgba;
}

}  // namespace

std::vector<uint8_t> render_figure(const FigureJob& job, PlotReport* report) {
  check_size(job.data.meta.size);
  FigureContext ctx(job);
  gfx::Framebuffer fbo(job.data.meta.size.width, job.data.meta.size.height);
  return render_once(job, fbo, report);
}

std::string render_animation(const FigureJob& job, PlotReport* report) {
  if (!job.animation || job.animation->duration_ms.empty() || !job.animation->draw)
    throw std::invalid_argument("render_animation: the job has no animation");
  const FigureAnimation& a = *job.animation;
  check_size(a.size);
  // Each frame is the figure's window at the animation's size and scale around draw(frame).
  FigureJob frame = job;
  frame.animation = nullptr;
  frame.data.meta.size = a.size;
  frame.scale = a.scale;
  int at = 0;
  frame.draw = [&a, &at](ImVec2 plot_size) { return a.draw(at, plot_size); };
  FigureContext ctx(frame);
  gfx::Framebuffer fbo(a.size.width, a.size.height);
  gfx::WebpAnimation webp(a.size.width, a.size.height);
  for (at = 0; at < int(a.duration_ms.size()); ++at)
    webp.add(render_once(frame, fbo, report), a.duration_ms[size_t(at)]);
  return webp.finish();
}

FigureWritten write_figure(const FigureJob& job, const fs::path& dir) {
  fs::create_directories(dir);
  FigureWritten w;
  const std::vector<uint8_t> rgba = render_figure(job, &w.report);
  // The animation before any file: a frame that cannot be drawn leaves nothing behind.
  PlotReport frame_report;
  const std::string webp = job.animation ? render_animation(job, &frame_report) : std::string();
  const FigureMeta& m = job.data.meta;
  // The three files are a set, written whole or not at all: a write that fails (a full disk) removes those of
  // the set written before it (NewNames::written), so no PNG is left without its data.
  bool removed = false;
  try {
    NewNames names = figure_names(dir, m.plot, std::time(nullptr), bool(job.animation));  // exclusive: -2
    w.paths = figure_paths(names);
    try {
      gfx::write_png(w.paths.png.string(), m.size.width, m.size.height, rgba, Replace::Reserved);
      names.written(0);
      write_file(w.paths.csv, figure_csv(job.data), Replace::Reserved);
      names.written(1);
      nlohmann::json j = figure_sidecar(job.data);
      nlohmann::json colours = nlohmann::json::object();
      for (const auto& [label, c] : w.report.colours) colours[label] = colour_json(c);
      const Rect& a = w.report.area;
      j["render"] = {{"plot_area", {a.x, a.y, a.w, a.h}},
                     {"series_colours", colours},
                     {"scale", job.scale},
                     {"subtitle", job.subtitle},
                     {"png", w.paths.png.filename().string()}};
      auto areas = [](const std::vector<Rect>& rects) {
        nlohmann::json out = nlohmann::json::array();
        for (const Rect& r : rects) out.push_back({r.x, r.y, r.w, r.h});
        return out;
      };
      if (!w.report.panels.empty()) j["render"]["panel_areas"] = areas(w.report.panels);
      // Each plot's axis limits as drawn (x_lo, x_hi, y_lo, y_hi; the first is plot_area's), so that a reader
      // can find a value's pixel.
      if (!w.report.limits.empty()) j["render"]["limits"] = w.report.limits;
      if (job.animation) {
        const FigureAnimation& an = *job.animation;
        const Rect& fa = frame_report.area;
        j["render"]["webp"] = {{"file", w.paths.webp.filename().string()},
                               {"width", an.size.width},
                               {"height", an.size.height},
                               {"frames", an.duration_ms.size()},
                               {"duration_ms", an.duration_ms},
                               {"scale", an.scale},
                               {"plot_area", {fa.x, fa.y, fa.w, fa.h}}};
      }
      write_file(w.paths.json, j.dump(2) + "\n", Replace::Reserved);
      names.written(2);
      if (job.animation) {
        write_file(w.paths.webp, webp, Replace::Reserved);
        names.written(3);
        w.frames = int(job.animation->duration_ms.size());
      }
      names.complete();
    } catch (...) {
      removed = names.any_written();
      throw;
    }
  } catch (const ValidationError& e) {
    if (!removed) throw;
    throw ValidationError(std::string(e.what()) + "; the figure's files written before it were removed");
  } catch (const std::exception& e) {
    if (!removed) throw;
    throw std::runtime_error(std::string(e.what()) + "; the figure's files written before it were removed");
  }
  return w;
}

namespace {

// The replay's still (small multiples at the moments asked for, or the waves' starts and the end) and, when
// asked, its animation: frames at equal steps over the launch, each drawn by the same ReplayStrip::draw.
void replay_job(const AppState& s, const FigureRequest& r, FigureJob& job) {
  if (!s.result || !s.result->trace)
    throw ValidationError("no traced launch to replay (the replay needs a GPU run of a traceable kernel)");
  const std::shared_ptr<const TileTrace> trace = s.result->trace;
  std::shared_ptr<const ScheduleReplay> replay =
      trace->replay ? trace->replay : std::make_shared<const ScheduleReplay>(*trace);
  if (!replay->problem().empty())
    throw ValidationError("the traced launch is inconsistent: " + replay->problem());
  if (replay->empty()) throw ValidationError("the traced launch has no blocks to replay");
  // Waves from the occupancy arithmetic: blocks per SM x the trace's SMs resident at once.
  const int64_t slots = s.result->occupancy ? int64_t(std::max(s.result->occupancy->blocks_per_sm, 0)) *
                                                  int64_t(std::max(trace->sm_count, 0))
                                            : 0;
  std::vector<ReplayMoment> moments;
  if (r.replay_times.empty()) {
    moments = default_replay_moments(*replay, slots);
  } else {
    const std::vector<uint64_t> t =
        resolve_replay_times(r.replay_times, replay->duration_ns(), "replay moment");
    for (size_t i = 0; i < t.size(); ++i) moments.push_back({t[i], "asked for: " + r.replay_times[i].text});
  }
  std::shared_ptr<const ReplayFrames> frames;
  if (r.webp) frames = std::make_shared<const ReplayFrames>(replay_frames(replay->duration_ns(), r.frames));
  job.data = replay_figure(*trace, *replay, moments, slots, frames.get(), figure_meta_of(s, r.plot, {}));
  job.subtitle =
      "one traced launch replayed on the tiles of C (tiles down and across like C, row 0 at the top): dark "
      "blocks wait, coloured ones run (the colour of their SM), grey ones are done";
  if (trace->k_segments)
    job.subtitle +=
        "; stream-K: a shared tile's segments as strips in K order, each as tall as its share of K";
  else if (trace->grid_z > 1)
    job.subtitle += trace->z_splits_columns ? "; a cluster's blocks side by side in their tile"
                                            : "; split-K: each tile's slices as strips, slice 0 on top";
  const bool light = r.theme == FigureTheme::Light;
  const int sms = trace->sm_count;
  auto strip = std::make_shared<ReplayStrip>();
  ReplayStripData still{replay, sms, moments};
  job.draw = [strip, still, light](ImVec2 size) { return strip->draw(still, size, light); };
  if (!frames) return;
  auto anim = std::make_shared<FigureAnimation>();
  // Frames at most 1280 x 720 (the still's shape; never under the figures' smallest side): a few megabytes
  // for a few seconds.
  const double f = std::min({1.0, 1280.0 / r.size.width, 720.0 / r.size.height});
  anim->size = {std::max(kMinFigureSide, int(std::lround(r.size.width * f))),
                std::max(kMinFigureSide, int(std::lround(r.size.height * f)))};
  anim->scale = std::clamp(std::min(anim->size.width / 1280.0f, anim->size.height / 720.0f), 0.75f, 4.0f);
  anim->duration_ms = frames->duration_ms;
  auto frame_strip = std::make_shared<ReplayStrip>();
  anim->draw = [frame_strip, frames, replay, sms, light](int i, ImVec2 size) {
    const int n = int(frames->t_ns.size());
    ReplayStripData one{
        replay,
        sms,
        {{frames->t_ns[size_t(i)], "frame " + std::to_string(i + 1) + " of " + std::to_string(n)}},
        true};
    return frame_strip->draw(one, size, light);
  };
  job.animation = anim;
}

}  // namespace

FigureJob figure_job(AppState& s, const FigureRequest& r) {
  FigureJob job;
  job.scale = r.scale;
  const PlotStyle fig{false};
  switch (r.plot) {
    case PlotKind::Timings: {
      const TimingsData d = timings_of(s);
      if (d.empty()) throw ValidationError("nothing to plot yet: no measured points along " + d.axis_label);
      job.data = timings_figure(d, figure_meta_of(s, r.plot, d.records));
      job.subtitle =
          "x: " + d.axis_label + "; each run a point, the line through the newest run at each size";
      if (d.impossible > 0)
        job.subtitle += "; hollow red: impossible, faster than the device can go (not a record)";
      if (!d.marks.marks.empty())
        job.subtitle += "; wave marks of " + d.marks.config.label() + ": " + d.marks.source;
      else if (!d.marks.note.empty())
        job.subtitle +=
            "; " + d.marks.note + (d.marks.theoretical ? " (THEORETICAL: " + d.marks.gpu + ")" : "");
      const TimingsY y = s.timings_y;
      job.draw = [d, y, fig](ImVec2 size) { return draw_timings(d, y, size, fig); };
      break;
    }
    case PlotKind::Bars: {
      const BarsData d = bars_of(s);
      if (d.empty()) throw ValidationError("nothing to plot yet: no measured kernels at " + d.shape);
      job.data = bars_figure(d, figure_meta_of(s, r.plot, d.records));
      job.subtitle = "median FLOP/s with IQR whiskers, in ladder order" +
                     (d.baseline >= 0 ? "; speedups against " + d.labels[size_t(d.baseline)] : std::string());
      job.draw = [d, fig](ImVec2 size) { return draw_bars(d, size, fig); };
      break;
    }
    case PlotKind::Roofline: {
      const RooflineData d = roofline_of(s);
      if (d.points.empty()) throw ValidationError("nothing to plot yet: no measured points");
      job.data = roofline_figure(d, figure_meta_of(s, r.plot, d.records));
      job.subtitle =
          "Arithmetic intensity is an ESTIMATE from each kernel's block tiling (no L2 reuse; the whisker "
          "reaches the compulsory-traffic bound). ";
      if (d.roofs.dram_bytes_per_s > 0)
        job.subtitle += d.roofs.dram_measured ? "DRAM roof: bandwidth measured by a copy kernel. "
                                              : "DRAM roof: the datasheet's bandwidth (not measured). ";
      for (const auto& n : d.notes)
        if (n.rfind("No ", 0) == 0) job.subtitle += n + " ";
      job.draw = [d, fig](ImVec2 size) { return draw_roofline(d, size, fig); };
      break;
    }
    case PlotKind::Occupancy: {
      const OccupancyData d = occupancy_of(s);
      job.data = occupancy_figure(d, figure_meta_of(s, r.plot, {}));
      job.subtitle =
          (d.theoretical ? "THEORETICAL occupancy on " + d.gpu + " (no GPU used)" : "occupancy on " + d.gpu) +
          ", " + std::to_string(d.m) + " x " + std::to_string(d.n) + " outputs" +
          (d.note.empty() ? "" : "; " + d.note);
      job.draw = [d, fig](ImVec2 size) { return draw_occupancy(d, size, fig); };
      break;
    }
    case PlotKind::Schedule: {
      if (!s.result || !s.result->trace)
        throw ValidationError(
            "no traced launch to draw (the tile schedule needs a GPU run of a traceable kernel)");
      const std::shared_ptr<const TileTrace> trace = s.result->trace;
      job.data = schedule_figure(*trace, figure_meta_of(s, r.plot, {}));
      job.subtitle = "one instrumented launch (never among the timed ones): the SM of every tile and when";
      auto plot = std::make_shared<SchedulePlot>();
      job.draw = [trace, plot, fig](ImVec2 size) {
        plot->update(*trace, 1, SchedulePlot::ColorBy::Sm);
        return plot->draw(*trace, size, fig);
      };
      break;
    }
    case PlotKind::Replay:
      replay_job(s, r, job);
      break;
  }
  job.data.meta.title = r.title.empty() ? figure_title(s, r.plot) : r.title;
  job.data.meta.theme = r.theme;
  job.data.meta.size = r.size;
  return job;
}

FigureHost::FigureHost(gfx::GlChoice choice, int cuda_device)
    : m_gl(gfx::make_headless_gl(choice, cuda_device, 64, 64)) {
  IMGUI_CHECKVERSION();
  m_ctx = ImGui::CreateContext();
  ImGui::SetCurrentContext(m_ctx);
  ImGui::GetIO().IniFilename = nullptr;
  load_fonts();
}

FigureHost::~FigureHost() {
  ImGui::DestroyContext(m_ctx);
}

}  // namespace ts::ui
