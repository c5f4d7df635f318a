// The plots of issue #11, one drawing function each (panels and figures call the same one), and their data
// from the window's state.
#include "ui/plots/plots.hpp"

#include <algorithm>
#include <array>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <map>

#include <imgui.h>
#include <imgui_internal.h>
#include <implot.h>
#include <implot_internal.h>

#include "core/io/csv.hpp"
#include "core/plots/heatmap.hpp"
#include "ui/panels/panel.hpp"
#include "core/plots/axis_ticks.hpp"
#include "core/engine/stats.hpp"
#include "core/base/text_wrap.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

constexpr ImPlotFlags kFigureFlags = ImPlotFlags_NoMenus | ImPlotFlags_NoBoxSelect | ImPlotFlags_NoMouseText;

ImPlotFlags plot_flags(const PlotStyle& st) {
  return ImPlotFlags_NoMouseText | (st.interactive ? 0 : kFigureFlags);
}

ImVec4 with_alpha(ImVec4 c, float a) {
  c.w = a;
  return c;
}

ImVec4 text_colour() {
  return ImGui::GetStyleColorVec4(ImGuiCol_Text);
}

std::string num(double v, const char* fmt = "%.4g") {
  return CsvWriter::num(v, fmt);
}

// Markers tell sessions apart (the current one: circles).
ImPlotMarker session_marker(size_t session) {
  static const ImPlotMarker kMarkers[] = {ImPlotMarker_Circle, ImPlotMarker_Square, ImPlotMarker_Diamond,
                                          ImPlotMarker_Up,     ImPlotMarker_Down,   ImPlotMarker_Left,
                                          ImPlotMarker_Right,  ImPlotMarker_Cross,  ImPlotMarker_Plus};
  return kMarkers[session % (sizeof kMarkers / sizeof kMarkers[0])];
}

Rect plot_area() {
  const ImVec2 p = ImPlot::GetPlotPos(), z = ImPlot::GetPlotSize();
  return Rect{p.x, p.y, z.x, z.y};
}

// Text in a plot: a label, never data. ImPlot fits an axis to the pixel extent of PlotText, so a label placed
// at the plot's own limits (the wave marks' "k waves" at the top edge) pushed the limits out by its own size
// in every frame, and on a short plot the axis ran away to 1e204. Labels never take part in a fit.
void plot_label(const char* text, double x, double y, ImVec2 pixel_offset = ImVec2(0, 0),
                ImPlotTextFlags flags = 0) {
  ImPlot::PlotText(text, x, y, pixel_offset, flags | ImPlotItemFlags_NoFit);
}

// [SECTION] Axes that show their data whole and labels that never run together.
// The plot area's size in pixels while a plot is set up, before ImPlot lays it out this frame: last frame's
// when the plot's frame kept its size (exact), else an estimate from the frame less its tick and axis labels.
ImVec2 plot_area_px() {
  const ImPlotPlot* p = ImPlot::GetCurrentPlot();
  const ImVec2 pad = ImPlot::GetStyle().PlotPadding, frame = p->FrameRect.GetSize(),
               canvas = p->CanvasRect.GetSize();
  if (p->PlotRect.GetWidth() > 0 && p->PlotRect.GetHeight() > 0 &&
      std::abs(canvas.x - (frame.x - 2 * pad.x)) < 0.5f && std::abs(canvas.y - (frame.y - 2 * pad.y)) < 0.5f)
    return p->PlotRect.GetSize();
  return ImVec2(std::max(1.0f, frame.x - 2 * pad.x - 5 * ImGui::GetFontSize()),
                std::max(1.0f, frame.y - 2 * pad.y - 2.5f * ImGui::GetTextLineHeightWithSpacing()));
}

// Limits that show [lo, hi] with `margin` pixels free at both ends of an axis `px` pixels long, so a marker
// at an end (the ringed current point, a launch's dot) is drawn whole rather than cut by the plot's edge.
// Explicit limits, set every frame from the data: right in the very frame new data arrive (AutoFit fits to
// the previous frame's data). log: a log10 axis (lo > 0).
ImPlotRange padded(double lo, double hi, float px, float margin, bool log) {
  if (log) {
    const ImPlotRange r = padded(std::log10(lo), std::log10(hi), px, margin, false);
    return ImPlotRange(std::pow(10.0, r.Min), std::pow(10.0, r.Max));
  }
  // One value, or values that differ only in their last digits (speeds of a flat curve computed from
  // different sizes): room around it, as for one value.
  if (!(hi - lo > std::max(std::abs(lo), std::abs(hi)) * 1e-9)) {
    const double room = lo != 0 ? std::abs(lo) * 0.1 : 1.0;
    lo -= room;
    hi += room;
  }
  const double pad = (hi - lo) * double(margin) / double(std::max(px - 2 * margin, margin));
  return ImPlotRange(lo - pad, hi + pad);
}

void setup_padded(ImAxis axis, double lo, double hi, float margin, bool log = false) {
  const ImVec2 px = plot_area_px();
  const ImPlotRange r = padded(lo, hi, axis < ImAxis_Y1 ? px.x : px.y, margin, log);
  ImPlot::SetupAxisLimits(axis, r.Min, r.Max, ImPlotCond_Always);
}

// Ticks 1, 2 or 5 x 10^k apart, as dense as their labels allow with a gap of an em between neighbours
// (axis_ticks.hpp; ImPlot's own locator let "100", "120" and "140" run together on a narrow plot), half an
// em on a vertical axis (tick_label_gap), and four unlabelled ticks between labelled ones.
void locator_readable(ImPlotTicker& ticker, const ImPlotRange& range, float pixels, bool vertical,
                      ImPlotFormatter formatter, void* data) {
  char buf[64];
  const double step = readable_tick_step(
      range.Min, range.Max, pixels, tick_label_gap(vertical, ImGui::GetFontSize()), [&](double v) {
        formatter(v, buf, sizeof buf, data);
        return vertical ? ImGui::GetTextLineHeight() : ImGui::CalcTextSize(buf).x;
      });
  if (!(step > 0)) return;
  // Counted (at most a few hundred labels, readable_tick_step says), never `v += step` until past the end.
  const double first = std::floor(range.Min / step) * step;
  const int count = int(std::min(1000.0, std::floor((range.Max - first) / step + 1e-9) + 1));
  for (int t = 0; t < count; ++t) {
    const double v = first + t * step;
    const double major = std::abs(v) < step * 1e-9 ? 0.0 : v;
    if (range.Contains(major)) ticker.AddTick(major, true, 0, true, formatter, data);
    for (int m = 1; m < 5; ++m)
      if (range.Contains(major + m * step / 5))
        ticker.AddTick(major + m * step / 5, false, 0, false, nullptr);
  }
}

// For a linear axis with ImPlot's own tick values (call after the axis is set up).
void readable_ticks(ImAxis axis) {
  ImPlot::GetCurrentPlot()->Axes[axis].Locator = locator_readable;
}

// A note inside a plot (no data yet), broken at spaces to the plot's width and centred at a plot point:
// never cut by the plot's edges ("none yet" was clipped to "one ye" in the narrow launch strip).
void plot_note(const std::string& text, double x, double y) {
  const float width = std::max(1.0f, plot_area_px().x - ImGui::GetFontSize());
  const auto lines =
      wrap_at_spaces(text, width, [](const char* b, const char* e) { return ImGui::CalcTextSize(b, e).x; });
  const float h = ImGui::GetTextLineHeight();
  for (size_t i = 0; i < lines.size(); ++i)
    plot_label(lines[i].c_str(), x, y, ImVec2(0, (float(i) - 0.5f * float(lines.size() - 1)) * h));
}

// Text drawn left-aligned at a plot point (PlotText centres it).
void plot_text_right_of(const char* text, double x, double y, float gap) {
  const float w = ImGui::CalcTextSize(text).x;
  plot_label(text, x, y, ImVec2(w * 0.5f + gap, 0));
}

// Ticks for `count` cells of unit width from 0 (tiles of C): each label names a cell and sits at its centre
// (cell i spans [i, i + 1]), as many as fit labels in px pixels (labelled_cells).
void cell_ticks(ImAxis axis, int count, float px, bool vertical) {
  if (count <= 0 || px <= 0) return;
  const float label =
      vertical ? ImGui::GetTextLineHeight() : ImGui::CalcTextSize(std::to_string(count - 1).c_str()).x;
  std::vector<double> pos;
  std::vector<std::string> labels;
  for (int i : labelled_cells(
           count, std::max(2.0, std::floor(double(px) / (double(label) * (vertical ? 2.2 : 1.8)))))) {
    pos.push_back(i + 0.5);
    labels.push_back(std::to_string(i));
  }
  std::vector<const char*> lp;
  for (const auto& l : labels) lp.push_back(l.c_str());
  ImPlot::SetupAxisTicks(axis, pos.data(), int(pos.size()), lp.data());
}

// Ticks at powers of two inside [lo, hi] for a log-scaled size axis.
void power_of_two_ticks(ImAxis axis, double lo, double hi) {
  std::vector<double> pos;
  std::vector<std::string> labels;
  for (double v = 1; v <= hi * 1.01; v *= 2)
    if (v >= lo * 0.99) {
      pos.push_back(v);
      labels.push_back(num(v, "%.0f"));
    }
  if (pos.size() < 2) return;
  std::vector<const char*> lp;
  for (const auto& l : labels) lp.push_back(l.c_str());
  ImPlot::SetupAxisTicks(axis, pos.data(), int(pos.size()), lp.data());
}

}  // namespace

std::string point_tooltip(const TimingsCurve& c, const ScalingPoint& p, const TimingsData& d) {
  char b[512];
  std::snprintf(
      b, sizeof b, "%s at %s = %.0f\nmedian %s %s (%s %s)\nIQR %s - %s ms\n%d samples, %s\n%s",
      c.label.c_str(), to_string(d.axis), p.x, num(p.median_ms * d.time.scale).c_str(), d.time.name.c_str(),
      num(p.tflops * 1e12 * d.flops.scale).c_str(), d.flops.name.c_str(), num(p.p25_ms).c_str(),
      num(p.p75_ms).c_str(), p.samples,
      p.clock_mhz > 0
          ? ("SM " + num(p.clock_mhz, "%.0f") + " MHz" + (p.throttled ? " (throttled)" : "")).c_str()
          : "no SM clock",
      p.date.c_str());
  std::string t = b;
  if (p.cublas_ms > 0) {
    t += "\ncuBLAS " + num(p.cublas_ms * d.time.scale) + " " + d.time.name + " (" +
         (p.cublas_interleaved ? "timed interleaved" : "timed on its own") + "): this point reaches " +
         num(100 * p.cublas_ms / p.median_ms, "%.1f") + " % of it";
    if (p.cublas_interleaved)
      t += "\nSM clocks: kernel " + (p.clock_mhz > 0 ? num(p.clock_mhz, "%.0f") + " MHz" : "unknown") +
           (p.throttled ? " (throttled)" : "") + ", cuBLAS " +
           (p.cublas_clock_mhz > 0 ? num(p.cublas_clock_mhz, "%.0f") + " MHz" : "unknown") +
           (p.cublas_throttled ? " (throttled)" : "") +
           (p.clocks_differ
                ? "\nthe two clocks differ by more than 1 %: the ratio compares more than the kernels"
                : "");
  }
  if (p.frames_drawn > 0)
    t += "\nthe window drew " + std::to_string(p.frames_drawn) +
         " frames while it was timed (at most 4 a second: drawing shares the GPU)";
  if (!p.impossible.empty()) {  // on lines of their own: the figures, then what they mean
    std::string why = p.impossible;
    if (const size_t at = why.find(": the timing cannot be right"); at != std::string::npos)
      why.replace(at, 2, ":\n");
    t += "\nIMPOSSIBLE, not a record: " + why;
  }
  return t;
}

namespace {

// The distribution of the current point's launches: a box (IQR, median, whiskers to min and max) and every
// launch as a dot.
// `label_room`: the height of the plot area beside it in its row (the subplots align their plot areas), which
// the axis label runs along.
void draw_distribution(const TimingsData& d, TimingsY q, const ImVec4& colour, const PlotStyle& st, int row,
                       float label_room, PlotReport* rep) {
  char id[32];
  std::snprintf(id, sizeof id, "##launches%d", row);
  if (!ImPlot::BeginPlot(id, ImVec2(-1, -1), plot_flags(st) | ImPlotFlags_NoLegend)) return;
  const bool flops = q == TimingsY::Flops;
  std::vector<double> v;
  for (double ms : d.current_samples_ms)
    v.push_back(flops ? (ms > 0 ? d.current_flops / (ms * 1e-3) * d.launch_flops.scale : 0)
                      : ms * d.launch_time.scale);
  // Launches that spread over more than a decade (a noisy CPU, a first cold launch) on a log axis, so the
  // box of the typical ones stays visible.
  double lo = 0, hi = 0;
  if (!v.empty()) {
    lo = *std::min_element(v.begin(), v.end());
    hi = *std::max_element(v.begin(), v.end());
  }
  const bool log_y = lo > 0 && hi / lo > 10;
  // Its values on the right (next to the legend), so the plots' left edges stay aligned with the curves'.
  // Its own unit on its own axis: the values beside it are not read against the curves' axis (none without
  // launches: there is nothing to read).
  // The label runs up the axis: the longest form that fits the plot's height (at 1366 x 768 "launches
  // (GFLOP/s)" stood out above the frame), else the unit alone, else none.
  std::string unit =
      v.empty() ? "launches" : "launches (" + (flops ? d.launch_flops.name : d.launch_time.name) + ")";
  if (ImGui::CalcTextSize(unit.c_str()).x > label_room)
    unit = v.empty() ? "" : (flops ? d.launch_flops.name : d.launch_time.name);
  if (ImGui::CalcTextSize(unit.c_str()).x > label_room) unit.clear();
  if (row == 0) {
    rep->launches_label = unit;
    rep->launches_label_px = ImGui::CalcTextSize(unit.c_str()).x;
  }
  ImPlot::SetupAxes(
      nullptr, unit.c_str(), ImPlotAxisFlags_NoTickLabels | ImPlotAxisFlags_NoTickMarks,
      ImPlotAxisFlags_Opposite | (v.empty() ? ImPlotAxisFlags_NoTickLabels : ImPlotAxisFlags_None));
  ImPlot::SetupAxisLimits(ImAxis_X1, -1, 1, ImPlotCond_Always);
  if (v.empty()) {
    ImPlot::SetupAxisLimits(ImAxis_Y1, 0, 1, ImPlotCond_Always);
    plot_note("none yet", 0, 0.5);
    if (row == 0) rep->launches_area = plot_area();
    ImPlot::EndPlot();
    return;
  }
  // The launches of this very frame, every dot whole (AutoFit would show the previous frame's: the last
  // run's).
  const float dot = 2.5f * ImGui::GetFontSize() / 16;
  if (log_y) ImPlot::SetupAxisScale(ImAxis_Y1, ImPlotScale_Log10);
  setup_padded(ImAxis_Y1, lo, hi, dot + 2, log_y);
  if (!log_y) readable_ticks(ImAxis_Y1);
  const SampleStats stats = summarize(v);
  // At most 2000 dots (every k-th launch of a long bench point; the box is of all of them), spread
  // deterministically so dots of equal times stay visible.
  const size_t stride = std::max<size_t>(1, (v.size() + 1999) / 2000);
  std::vector<double> xs, ys;
  for (size_t i = 0; i < v.size(); i += stride) {
    xs.push_back(0.55 * (double((i * 7919) % 101) / 100.0 - 0.5));
    ys.push_back(v[i]);
  }
  ImPlot::SetNextMarkerStyle(ImPlotMarker_Circle, 2.5f * ImGui::GetFontSize() / 16, with_alpha(colour, 0.55f),
                             0);
  ImPlot::PlotScatter("launch", xs.data(), ys.data(), int(xs.size()), ImPlotItemFlags_NoLegend);
  ImDrawList* dl = ImPlot::GetPlotDrawList();
  ImPlot::PushPlotClipRect();
  const ImU32 line = ImGui::GetColorU32(text_colour());
  const float w = 1.5f * ImGui::GetFontSize() / 16;
  const ImVec2 a = ImPlot::PlotToPixels(-0.4, stats.p75), b = ImPlot::PlotToPixels(0.4, stats.p25);
  dl->AddRectFilled(a, b, ImGui::GetColorU32(with_alpha(colour, 0.25f)));
  dl->AddRect(a, b, line, 0, 0, w);
  dl->AddLine(ImPlot::PlotToPixels(-0.4, stats.median), ImPlot::PlotToPixels(0.4, stats.median), line, 2 * w);
  dl->AddLine(ImPlot::PlotToPixels(0, stats.p75), ImPlot::PlotToPixels(0, stats.max), line, w);
  dl->AddLine(ImPlot::PlotToPixels(0, stats.p25), ImPlot::PlotToPixels(0, stats.min), line, w);
  dl->AddLine(ImPlot::PlotToPixels(-0.15, stats.max), ImPlot::PlotToPixels(0.15, stats.max), line, w);
  dl->AddLine(ImPlot::PlotToPixels(-0.15, stats.min), ImPlot::PlotToPixels(0.15, stats.min), line, w);
  ImPlot::PopPlotClipRect();
  if (st.interactive && ImPlot::IsPlotHovered()) {
    const std::string unit = flops ? d.launch_flops.name : d.launch_time.name;
    ImGui::SetTooltip("%zu launches of %s\nmedian %s %s, IQR %s - %s\nmin %s, max %s", v.size(),
                      d.current_label.c_str(), num(stats.median).c_str(), unit.c_str(),
                      num(stats.p25).c_str(), num(stats.p75).c_str(), num(stats.min).c_str(),
                      num(stats.max).c_str());
  }
  if (row == 0) rep->launches_area = plot_area();
  ImPlot::EndPlot();
}

}  // namespace

ImVec4 series_colour(int index, bool reference) {
  if (reference) return palette().plot_reference;
  // Twelve colours that read on both themes, none grey (the muted text) or orange (cuBLAS).
  static const ImVec4 kColours[] = {
      {0.30f, 0.58f, 0.90f, 1}, {0.30f, 0.72f, 0.38f, 1}, {0.88f, 0.30f, 0.33f, 1}, {0.62f, 0.44f, 0.86f, 1},
      {0.15f, 0.72f, 0.74f, 1}, {0.90f, 0.42f, 0.72f, 1}, {0.72f, 0.72f, 0.18f, 1}, {0.42f, 0.45f, 0.98f, 1},
      {0.62f, 0.85f, 0.30f, 1}, {0.80f, 0.25f, 0.60f, 1}, {0.35f, 0.82f, 0.62f, 1}, {0.70f, 0.52f, 0.36f, 1}};
  constexpr int n = int(sizeof kColours / sizeof kColours[0]);
  ImVec4 c = kColours[((index % n) + n) % n];
  if (ImGui::GetStyleColorVec4(ImGuiCol_WindowBg).x > 0.5f) {  // a light background: a little darker
    c.x *= 0.82f;
    c.y *= 0.82f;
    c.z *= 0.82f;
  }
  return c;
}

// [SECTION] Timings.
PlotReport draw_timings(const TimingsData& d, TimingsY y, ImVec2 size, const PlotStyle& st) {
  PlotReport rep;
  const int rows = y == TimingsY::Both ? 2 : 1;
  const float col_ratios[2] = {0.82f, 0.18f};
  ImPlotSubplotFlags sf = ImPlotSubplotFlags_ShareItems | ImPlotSubplotFlags_LinkCols;
  if (!st.interactive) sf |= ImPlotSubplotFlags_NoMenus | ImPlotSubplotFlags_NoResize;
  // The legend: beside the plots when it takes little of their width, else in rows under them (a narrow
  // panel, long overlay names); either way outside the plot area, never over the data.
  const std::string marks_label =
      "wave marks, " + d.marks.config.label() + (d.marks.theoretical ? " (THEORETICAL)" : "");
  // Each entry's priority where the rows under a low plot cannot hold them all: the current configuration,
  // then cuBLAS and impossible points, then the others, then the wave marks.
  struct Entry {
    std::string label;
    ImVec4 colour;
    int priority;
  };
  std::vector<Entry> entries;
  if (!d.marks.marks.empty()) entries.push_back({marks_label, with_alpha(palette().muted, 0.7f), 3});
  for (const auto& c : d.curves)
    entries.push_back({c.label, series_colour(c.colour, c.series.reference),
                       c.current            ? 0
                       : c.series.reference ? 1
                                            : 2});
  if (d.impossible > 0) entries.push_back({kImpossibleLabel, palette().bad, 1});
  const ImVec2 room = ImGui::GetContentRegionAvail();
  const float width = size.x > 0 ? size.x : room.x, em_ = ImGui::GetFontSize();
  float widest = 0;
  for (const auto& e : entries) widest = std::max(widest, ImGui::CalcTextSize(e.label.c_str()).x);
  const bool below = !entries.empty() && widest + 3 * em_ > 0.28f * width;
  // The rows of entries under the plots (each entry a square and its label; as the drawing below places
  // them).
  const float sq = em_ * 0.8f, gap = ImGui::GetStyle().ItemSpacing.x;
  auto entry_w = [&](const std::string& label) {
    return sq + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize(label.c_str()).x + em_ * 0.6f;
  };
  auto lines_of = [&](const std::vector<const Entry*>& shown, const std::string& last) {
    float x = -gap;
    int lines = 1;
    auto place = [&](float w) {
      if (x > 0 && x + gap + w > width) {
        ++lines;
        x = -gap;
      }
      x += gap + w;
    };
    for (const Entry* e : shown) place(entry_w(e->label));
    if (!last.empty()) place(ImGui::CalcTextSize(last.c_str()).x);
    return lines;
  };
  std::vector<const Entry*> shown, hidden;
  for (const auto& e : entries) shown.push_back(&e);
  float legend_h = 0;
  if (below) {
    // At most 40 % of the height for the legend, and 9 em kept for the plots and their axes (a laptop's low
    // Timings tab with overlays had 3 rows of legend over a plot 40 px tall): the entries that fit by
    // priority, then "+k more" (its tooltip names them all).
    const float line_h = ImGui::GetTextLineHeightWithSpacing(), total = size.y > 0 ? size.y : room.y;
    const int most = std::max(1, std::min(int(0.4f * total / line_h), int((total - 9 * em_) / line_h)));
    if (lines_of(shown, "") > most) {
      std::vector<const Entry*> order = shown;
      std::stable_sort(order.begin(), order.end(),
                       [](const Entry* a, const Entry* b) { return a->priority < b->priority; });
      shown.clear();
      const std::string more = "+" + std::to_string(entries.size()) + " more";
      for (const Entry* e : order) {
        std::vector<const Entry*> trial = shown;
        trial.push_back(e);
        if (lines_of(trial, more) <= most)
          shown = std::move(trial);
        else
          hidden.push_back(e);
      }
      // Drawn in the legend's own order.
      std::sort(shown.begin(), shown.end());
    }
    const int lines = lines_of(shown, hidden.empty() ? "" : "+" + std::to_string(hidden.size()) + " more");
    legend_h = float(lines) * line_h + ImGui::GetStyle().ItemSpacing.y;
    sf |= ImPlotSubplotFlags_NoLegend;
    size.y = std::max(6 * em_, (size.y > 0 ? size.y : room.y) - legend_h);
  }
  rep.legend_hidden = int(hidden.size());
  if (!ImPlot::BeginSubplots("##timings", rows, 2, size, sf, nullptr, const_cast<float*>(col_ratios)))
    return rep;
  // The legend sits outside the plots (the subplot grid makes room for it): it never covers data.
  // (A flag is always given: ImPlot keeps a subplot's default horizontal legend when the flags are 0.)
  ImPlot::SetupLegend(ImPlotLocation_East,
                      ImPlotLegendFlags_NoMenus | (st.interactive ? 0 : ImPlotLegendFlags_NoButtons));
  // A log size axis for geometric sweeps (powers of two): sizes whose neighbours are mostly 1.5x apart or
  // more; a linear sweep keeps a linear axis, where the wave-quantisation sawtooth reads best.
  std::vector<double> xs_all;
  for (const auto& c : d.curves)
    for (const auto& p : c.line) xs_all.push_back(p.x);
  std::sort(xs_all.begin(), xs_all.end());
  xs_all.erase(std::unique(xs_all.begin(), xs_all.end()), xs_all.end());
  int wide_steps = 0;
  for (size_t i = 1; i < xs_all.size(); ++i) wide_steps += xs_all[i] >= 1.5 * xs_all[i - 1];
  const bool log_x =
      d.x_lo > 0 && d.x_hi / d.x_lo >= 32 && xs_all.size() > 2 && 2 * wide_steps >= int(xs_all.size()) - 1;
  double min_ms = 0, max_ms = 0;
  for (const auto& c : d.curves)
    for (const auto* points : {&c.series.points, &c.series.impossible})
      for (const auto& p : *points) {
        min_ms = min_ms > 0 ? std::min(min_ms, p.median_ms) : p.median_ms;
        max_ms = std::max(max_ms, p.median_ms);
      }
  const bool log_time = min_ms > 0 && max_ms / min_ms > 100;
  const float em = ImGui::GetFontSize();
  const TimingsCurve* current = nullptr;
  for (const auto& c : d.curves)
    if (c.current) current = &c;
  const ImVec4 current_colour =
      current ? series_colour(current->colour, current->series.reference) : palette().plot_current;
  for (int row = 0; row < rows; ++row) {
    const TimingsY q = y == TimingsY::Both ? (row == 0 ? TimingsY::Flops : TimingsY::Time) : y;
    const bool flops = q == TimingsY::Flops;
    auto value = [&](const ScalingPoint& p) {
      return flops ? p.tflops * 1e12 * d.flops.scale : p.median_ms * d.time.scale;
    };
    char id[32];
    std::snprintf(id, sizeof id, "##scaling%d", row);
    float row_plot_height = 1e9f;  // the plot area's height, once drawn (the launch strip's label fits it)
    if (ImPlot::BeginPlot(id, ImVec2(-1, -1), plot_flags(st))) {
      // No unit without data: there is nothing to read on an empty plot.
      const std::string ylabel = d.empty() ? (flops ? "FLOP/s" : "time")
                                 : flops   ? d.flops.name
                                           : "time (" + d.time.name + ")";
      const bool one_size = d.x_hi <= d.x_lo, log_y = !flops && log_time;
      const ImPlotAxisFlags axis_flags = d.empty() ? ImPlotAxisFlags_NoTickLabels : ImPlotAxisFlags_None;
      ImPlot::SetupAxes(row == rows - 1 ? d.axis_label.c_str() : nullptr, ylabel.c_str(), axis_flags,
                        axis_flags);
      if (d.empty()) {
        ImPlot::SetupAxesLimits(0, 1, 0, 1, ImPlotCond_Always);
        plot_note(d.unverified > 0 ? "no verified measurements along this axis yet\n(runs that fail "
                                     "verification are not plotted)"
                                   : "no measurements along this axis yet",
                  0.5, 0.5);
      } else {
        // Both axes from this frame's points (AutoFit fits the previous frame's: stale right after a run),
        // with room at both ends for the ringed current point (radius 8, line 2) and the markers.
        const float margin = 11.0f * em / 16;
        if (log_x) {
          ImPlot::SetupAxisScale(ImAxis_X1, ImPlotScale_Log10);
          setup_padded(ImAxis_X1, d.x_lo, d.x_hi, margin, true);
          power_of_two_ticks(ImAxis_X1, d.x_lo, d.x_hi);
        } else {
          if (one_size)  // one size so far: room around it rather than a zoom into nothing
            ImPlot::SetupAxisLimits(ImAxis_X1, d.x_lo * 0.5, d.x_lo * 1.5, ImPlotCond_Always);
          else
            setup_padded(ImAxis_X1, d.x_lo, d.x_hi, margin);
          readable_ticks(ImAxis_X1);
        }
        double y_lo = HUGE_VAL, y_hi = -HUGE_VAL;
        for (const auto& c : d.curves)
          for (const auto* points : {&c.series.points, &c.series.impossible})
            for (const auto& p : *points) {
              y_lo = std::min(y_lo, value(p));
              y_hi = std::max(y_hi, value(p));
            }
        // Log axes pad in decades (padding in linear units could reach below zero).
        if (log_y) ImPlot::SetupAxisScale(ImAxis_Y1, ImPlotScale_Log10);
        setup_padded(ImAxis_Y1, y_lo, y_hi, margin, log_y);
        if (!log_y) readable_ticks(ImAxis_Y1);
      }
      // Wave marks under everything: where the grid of the highlighted configuration needs one more wave.
      // Where marks crowd (many waves at large sizes) one every few pixels is drawn, so they read as marks
      // rather than a grey block; the figure's data keep every one.
      std::vector<double> marks;
      float last_px = -1e9f;
      bool thinned = false;
      for (const auto& w : d.marks.marks) {
        if (double(w.size) < d.x_lo || double(w.size) > d.x_hi) continue;
        const float px = ImPlot::PlotToPixels(double(w.size), 0).x;
        if (px - last_px < 0.4f * em) {
          thinned = true;
          continue;
        }
        marks.push_back(double(w.size));
        last_px = px;
      }
      if (!marks.empty()) {
        ImPlot::SetNextLineStyle(with_alpha(palette().muted, 0.7f), 1.0f * em / 16);
        ImPlot::PlotInfLines(marks_label.c_str(), marks.data(), int(marks.size()));
        // The "k waves" labels stand vertically from the top edge: only where they take at most the top third
        // of the plot (a low plot, a laptop's tab row, would have them across the curves; the legend's entry
        // and the marks stay).
        const float label_h = ImGui::CalcTextSize("99 waves").x + 0.5f * em;
        if (marks.size() <= 12 && !thinned && row == 0 && ImPlot::GetPlotSize().y >= 3 * label_h) {
          const ImPlotRect lim = ImPlot::GetPlotLimits();
          for (const auto& w : d.marks.marks) {
            if (double(w.size) < d.x_lo || double(w.size) > d.x_hi) continue;
            char t[32];
            std::snprintf(t, sizeof t, "%" PRId64 " waves", w.waves);
            plot_label(t, double(w.size), lim.Y.Max, ImVec2(-0.6f * em, 3.5f * em), ImPlotTextFlags_Vertical);
            ++rep.wave_labels;
          }
        }
      }
      // Curves: every run a point, a line through the newest point at each size; the current configuration
      // last (on top) and thicker.
      for (int pass = 0; pass < 2; ++pass)
        for (const auto& c : d.curves) {
          if (c.current != (pass == 1)) continue;
          const ImVec4 col = series_colour(c.colour, c.series.reference);
          const float weight = (c.current ? 3.0f : c.series.reference ? 2.0f : 1.4f) * em / 16;
          std::vector<double> xs, ys;
          for (const auto& p : c.line) {
            xs.push_back(p.x);
            ys.push_back(value(p));
          }
          ImPlot::SetNextLineStyle(with_alpha(col, c.session ? 0.6f : 1.0f), weight);
          ImPlot::PlotLine(c.label.c_str(), xs.data(), ys.data(), int(xs.size()));
          xs.clear();
          ys.clear();
          for (const auto& p : c.series.points) {
            xs.push_back(p.x);
            ys.push_back(value(p));
          }
          ImPlot::SetNextMarkerStyle(session_marker(c.session), (c.current ? 4.0f : 2.8f) * em / 16, col,
                                     IMPLOT_AUTO, col);
          ImPlot::PlotScatter(c.label.c_str(), xs.data(), ys.data(), int(xs.size()));
          if (row == 0) rep.colours.emplace_back(c.label, col);
          // The current problem's point, ringed.
          if (c.current)
            for (const auto& p : c.line)
              if (p.x == d.x_current) {
                const double px = p.x, py = value(p);
                ImPlot::SetNextMarkerStyle(ImPlotMarker_Circle, 8.0f * em / 16, ImVec4(0, 0, 0, 0),
                                           2.0f * em / 16, palette().plot_current);
                ImPlot::PlotScatter("##current point", &px, &py, 1, ImPlotItemFlags_NoLegend);
              }
        }
      // Impossible points on top of everything, all alike: a hollow red circle, none of any curve (their
      // time cannot be right: they are no record, and nothing is chosen from them).
      if (d.impossible > 0) {
        std::vector<double> xs, ys;
        for (const auto& c : d.curves)
          for (const auto& p : c.series.impossible) {
            xs.push_back(p.x);
            ys.push_back(value(p));
          }
        ImPlot::SetNextMarkerStyle(ImPlotMarker_Circle, 6.0f * em / 16, ImVec4(0, 0, 0, 0), 2.0f * em / 16,
                                   palette().bad);
        ImPlot::PlotScatter(kImpossibleLabel, xs.data(), ys.data(), int(xs.size()));
        if (row == 0) rep.colours.emplace_back(kImpossibleLabel, palette().bad);
      }
      if (row == 0) rep.area = plot_area();
      const ImPlotRect drawn = ImPlot::GetPlotLimits();
      rep.limits.push_back({drawn.X.Min, drawn.X.Max, drawn.Y.Min, drawn.Y.Max});
      // Hover: the run under the mouse (nearest within a few pixels).
      if (st.interactive && ImPlot::IsPlotHovered()) {
        const ImVec2 mouse = ImGui::GetMousePos();
        float best = 0.6f * em;
        const TimingsCurve* bc = nullptr;
        const ScalingPoint* bp = nullptr;
        for (const auto& c : d.curves)
          for (const auto* points : {&c.series.points, &c.series.impossible})
            for (const auto& p : *points) {
              const ImVec2 px = ImPlot::PlotToPixels(p.x, value(p));
              const float dist = std::hypot(px.x - mouse.x, px.y - mouse.y);
              if (dist < best) {
                best = dist;
                bc = &c;
                bp = &p;
              }
            }
        if (bp) ImGui::SetTooltip("%s", point_tooltip(*bc, *bp, d).c_str());
      }
      row_plot_height = ImPlot::GetPlotSize().y;
      ImPlot::EndPlot();
    }
    draw_distribution(d, q, current_colour, st, row, row_plot_height, &rep);
  }
  ImPlot::EndSubplots();
  if (below) {  // a square of each colour and its label, in rows that wrap
    ImDrawList* dl = ImGui::GetWindowDrawList();
    for (size_t i = 0; i < shown.size(); ++i) {
      const Entry& e = *shown[i];
      if (i > 0) same_line_if_fits(entry_w(e.label));
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float dy = (ImGui::GetTextLineHeight() - sq) * 0.5f;
      dl->AddRectFilled(ImVec2(p.x, p.y + dy), ImVec2(p.x + sq, p.y + dy + sq), ImGui::GetColorU32(e.colour));
      ImGui::Dummy(ImVec2(sq, ImGui::GetTextLineHeight()));
      ImGui::SameLine(0, ImGui::GetStyle().ItemInnerSpacing.x);
      ImGui::TextUnformatted(e.label.c_str());
    }
    if (!hidden.empty()) {
      const std::string more = "+" + std::to_string(hidden.size()) + " more";
      if (!shown.empty()) same_line_if_fits(ImGui::CalcTextSize(more.c_str()).x);
      ImGui::TextDisabled("%s", more.c_str());
      if (st.interactive && ImGui::IsItemHovered()) {
        std::string all;
        for (const Entry* e : hidden) all += (all.empty() ? "" : "\n") + e->label;
        ImGui::SetTooltip("%s", all.c_str());
      }
    }
  }
  return rep;
}

// [SECTION] The ladder.
PlotReport draw_bars(const BarsData& d, ImVec2 size, const PlotStyle& st, int* clicked_row) {
  PlotReport rep;
  const int n = int(d.configs.size());
  std::vector<size_t> drawn;  // sessions with at least one bar here
  for (size_t si = 0; si < d.bars.size(); ++si)
    if (std::any_of(d.bars[si].begin(), d.bars[si].end(), [](const auto& b) { return b.has_value(); }))
      drawn.push_back(si);
  const bool legend = drawn.size() > 1;
  if (!ImPlot::BeginPlot("##ladder", size, plot_flags(st) | (legend ? 0 : ImPlotFlags_NoLegend))) return rep;
  ImPlot::SetupLegend(ImPlotLocation_East, ImPlotLegendFlags_Outside);
  const auto scale = d.flops.scale * 1e12;
  double hi = 0;
  for (const auto& row : d.bars)
    for (const auto& b : row)
      if (b) {
        const double top = b->p25_ms > 0 ? b->tflops * b->median_ms / b->p25_ms : b->tflops;
        if (std::isfinite(top)) hi = std::max(hi, top);  // sessions are checked on read; this never trusts it
      }
  // Without a bar no unit and no numbers: an empty ladder showed "0 .. 1e-09 MFLOP/s".
  const ImPlotAxisFlags none =
      n > 0 ? ImPlotAxisFlags_None : ImPlotAxisFlags_NoTickLabels | ImPlotAxisFlags_NoTickMarks;
  ImPlot::SetupAxes(n > 0 ? d.flops.name.c_str() : nullptr, nullptr, none, ImPlotAxisFlags_Invert | none);
  // Room on the right for each bar's value and speedup.
  ImPlot::SetupAxisLimits(ImAxis_X1, 0, hi > 0 ? hi * scale * 1.6 : 1.0, ImPlotCond_Always);
  ImPlot::SetupAxisLimits(ImAxis_Y1, -0.6, std::max(0.6, n - 0.4), ImPlotCond_Always);
  if (n > 0) readable_ticks(ImAxis_X1);
  std::vector<double> pos(size_t(std::max(0, n)));
  std::vector<const char*> labels;
  for (int i = 0; i < n; ++i) {
    pos[size_t(i)] = i;
    labels.push_back(d.labels[size_t(i)].c_str());
  }
  if (n > 0) ImPlot::SetupAxisTicks(ImAxis_Y1, pos.data(), n, labels.data());
  if (n == 0) plot_note("no measurements at this shape yet", 0.5, 0);
  const float em = ImGui::GetFontSize();
  const double h = 0.8 / double(std::max<size_t>(1, drawn.size()));
  for (size_t k = 0; k < drawn.size(); ++k) {
    const size_t si = drawn[k];
    const float alpha = si == 0 ? 0.9f : 0.45f;
    if (legend) {
      ImPlot::SetNextFillStyle(with_alpha(palette().muted, alpha));
      const double zero = 0, where = -10;
      ImPlot::PlotBars(d.session_labels[si].c_str(), &zero, &where, 1, h, ImPlotBarsFlags_Horizontal);
    }
    for (int r = 0; r < n; ++r) {
      const auto& b = d.bars[si][size_t(r)];
      if (!b) continue;
      const double y = r - 0.4 + h * (double(k) + 0.5);
      const double v = b->tflops * scale;
      if (!std::isfinite(v) || v < 0) continue;  // no pixel can be computed from it
      double v_lo = b->p75_ms > 0 ? b->tflops * b->median_ms / b->p75_ms * scale : v;
      double v_hi = b->p25_ms > 0 ? b->tflops * b->median_ms / b->p25_ms * scale : v;
      if (!std::isfinite(v_lo) || v_lo > v) v_lo = v;
      if (!std::isfinite(v_hi) || v_hi < v) v_hi = v;
      const ImVec4 col = series_colour(d.colours[size_t(r)], is_reference(b->config.kernel));
      ImPlot::SetNextFillStyle(col, alpha);
      ImPlot::SetNextLineStyle(col);
      ImPlot::PlotBars("##bar", &v, &y, 1, h * 0.85, ImPlotBarsFlags_Horizontal | ImPlotItemFlags_NoLegend);
      if (si == 0) rep.colours.emplace_back(d.labels[size_t(r)], col);
      const double neg = v - v_lo, posv = v_hi - v;
      ImPlot::SetNextErrorBarStyle(text_colour(), 0.4f * float(h) * em, 1.5f * em / 16);
      ImPlot::PlotErrorBars("##iqr", &v, &y, &neg, &posv, 1,
                            ImPlotErrorBarsFlags_Horizontal | ImPlotItemFlags_NoLegend);
      std::string text = num(v, "%.3g");
      if (si == 0 && !d.speedups[size_t(r)].empty()) text += "   " + d.speedups[size_t(r)];
      ImPlot::PushStyleColor(ImPlotCol_InlayText, text_colour());
      plot_text_right_of(text.c_str(), v_hi, y, 0.4f * em);
      ImPlot::PopStyleColor();
    }
  }
  // The baseline's value as a line, so every speedup can be read against it.
  if (d.baseline >= 0 && !d.bars.empty() && d.bars[0][size_t(d.baseline)]) {
    const double bv = d.bars[0][size_t(d.baseline)]->tflops * scale;
    ImPlot::SetNextLineStyle(with_alpha(palette().muted, 0.8f), 1.0f * em / 16);
    if (std::isfinite(bv)) ImPlot::PlotInfLines("##baseline", &bv, 1, ImPlotItemFlags_NoLegend);
  }
  // The current configuration's row, outlined.
  if (d.current >= 0) {
    ImPlot::PushPlotClipRect();
    const ImVec2 a = ImPlot::PlotToPixels(ImPlot::GetPlotLimits().X.Min, d.current - 0.46);
    const ImVec2 b = ImPlot::PlotToPixels(ImPlot::GetPlotLimits().X.Max, d.current + 0.46);
    ImPlot::GetPlotDrawList()->AddRect(a, b, ImGui::GetColorU32(palette().plot_current), 0, 0,
                                       1.5f * em / 16);
    ImPlot::PopPlotClipRect();
  }
  rep.area = plot_area();
  if (st.interactive && ImPlot::IsPlotHovered() && n > 0) {
    const double my = ImPlot::GetPlotMousePos().y;
    const int r = std::isfinite(my) && my > -1 && my < n ? int(std::lround(my)) : -1;
    if (r >= 0 && r < n && !d.bars.empty()) {
      std::string tip = d.labels[size_t(r)];
      for (size_t si : drawn) {
        const auto& b = d.bars[si][size_t(r)];
        if (!b) continue;
        tip += "\n" + (drawn.size() > 1 ? d.session_labels[si] + ": " : std::string()) +
               num(b->tflops * scale) + " " + d.flops.name + ", median " + num(b->median_ms) + " ms (IQR " +
               num(b->p25_ms) + " - " + num(b->p75_ms) + ")";
      }
      if (!d.speedups[size_t(r)].empty()) tip += "\n" + d.speedups[size_t(r)];
      if (d.bars[0][size_t(r)] && r != d.baseline) tip += "\nclick to pin as the baseline";
      ImGui::SetTooltip("%s", tip.c_str());
      if (clicked_row && ImGui::IsMouseClicked(ImGuiMouseButton_Left) && d.bars[0][size_t(r)])
        *clicked_row = r;
    }
  }
  ImPlot::EndPlot();
  return rep;
}

// [SECTION] Roofline.
PlotReport draw_roofline(const RooflineData& d, ImVec2 size, const PlotStyle& st) {
  PlotReport rep;
  if (!ImPlot::BeginPlot("##roofline", size, plot_flags(st))) return rep;
  ImPlot::SetupLegend(ImPlotLocation_East,
                      ImPlotLegendFlags_Outside | (st.interactive ? 0 : ImPlotLegendFlags_NoButtons));
  const double s = d.flops.scale;
  ImPlot::SetupAxes("arithmetic intensity, FLOP per DRAM byte (estimate)", d.flops.name.c_str());
  ImPlot::SetupAxisScale(ImAxis_X1, ImPlotScale_Log10);
  ImPlot::SetupAxisScale(ImAxis_Y1, ImPlotScale_Log10);
  ImPlot::SetupAxesLimits(d.x_lo, d.x_hi, d.y_lo * s, d.y_hi * s, ImPlotCond_Always);
  const float em = ImGui::GetFontSize();
  auto line = [&](const std::string& label, const std::vector<std::pair<double, double>>& pts, ImVec4 col,
                  float weight) {
    if (pts.empty()) return;
    std::vector<double> xs, ys;
    for (const auto& [x, y] : pts) {
      xs.push_back(x);
      ys.push_back(y * s);
    }
    ImPlot::SetNextLineStyle(col, weight * em / 16);
    ImPlot::PlotLine(label.c_str(), xs.data(), ys.data(), int(xs.size()));
    rep.colours.emplace_back(label, col);
  };
  const std::string bw = num(d.roofs.dram_bytes_per_s * 1e-9, "%.0f") + " GB/s " +
                         (d.roofs.dram_measured ? "measured" : "datasheet");
  // TF32 first: FP32's line covers the DRAM slope the two share, TF32's goes on up to its own ridge.
  line("roof TF32 " + num(d.roofs.tf32_flops * s, "%.3g") + " " + d.flops.name, d.tf32, palette().warn, 2.0f);
  line("roof FP32 " + num(d.roofs.fp32_flops * s, "%.3g") + " " + d.flops.name + ", DRAM " + bw, d.fp32,
       text_colour(), 2.0f);
  line("DRAM " + bw + " (no compute roof)", d.dram, text_colour(), 2.0f);
  line("DRAM datasheet " + num(d.roofs.datasheet_bytes_per_s * 1e-9, "%.0f") + " GB/s", d.dram_datasheet,
       with_alpha(palette().muted, 0.7f), 1.0f);
  // Points, grouped by session and configuration (one legend entry each).
  std::map<std::pair<size_t, int>, std::vector<const RoofPoint*>> groups;
  for (const auto& p : d.points) groups[{p.session, p.colour}].push_back(&p);
  for (const auto& [key, pts] : groups) {
    const RoofPoint& first = *pts.front();
    const ImVec4 col = series_colour(first.colour, first.reference);
    std::vector<double> xs, ys, neg, pos;
    for (const RoofPoint* p : pts) {
      xs.push_back(p->p.intensity);
      ys.push_back(p->p.flops_per_s * s);
      neg.push_back(0);
      pos.push_back(std::max(0.0, p->p.intensity_compulsory - p->p.intensity));
    }
    const std::string label =
        first.config.label() + (first.session ? " [" + d.session_labels[first.session] + "]" : std::string());
    ImPlot::SetNextErrorBarStyle(with_alpha(col, 0.35f), 0, 1.0f * em / 16);
    ImPlot::PlotErrorBars(label.c_str(), xs.data(), ys.data(), neg.data(), pos.data(), int(xs.size()),
                          ImPlotErrorBarsFlags_Horizontal);
    ImPlot::SetNextMarkerStyle(session_marker(first.session), (first.current ? 5.0f : 3.5f) * em / 16, col,
                               IMPLOT_AUTO, col);
    ImPlot::PlotScatter(label.c_str(), xs.data(), ys.data(), int(xs.size()));
    rep.colours.emplace_back(label, col);
    if (first.current) {  // the current configuration's points, ringed
      ImPlot::SetNextMarkerStyle(ImPlotMarker_Circle, 7.5f * em / 16, ImVec4(0, 0, 0, 0), 1.5f * em / 16,
                                 palette().plot_current);
      ImPlot::PlotScatter("##current", xs.data(), ys.data(), int(xs.size()), ImPlotItemFlags_NoLegend);
    }
  }
  if (d.points.empty())
    plot_label("no measured points yet", std::sqrt(d.x_lo * d.x_hi), std::sqrt(d.y_lo * d.y_hi) * s);
  rep.area = plot_area();
  if (st.interactive && ImPlot::IsPlotHovered()) {
    const ImVec2 mouse = ImGui::GetMousePos();
    float best = 0.6f * em;
    const RoofPoint* bp = nullptr;
    for (const auto& p : d.points) {
      const ImVec2 px = ImPlot::PlotToPixels(p.p.intensity, p.p.flops_per_s * s);
      const float dist = std::hypot(px.x - mouse.x, px.y - mouse.y);
      if (dist < best) {
        best = dist;
        bp = &p;
      }
    }
    if (bp)
      ImGui::SetTooltip("%s at %" PRId64 " x %" PRId64 " x %" PRId64
                        "%s\nachieved %s %s (median %s ms)\n%s\nintensity %s FLOP/B "
                        "(estimate from the tiling; %s with compulsory traffic)\n%s",
                        bp->config.label().c_str(), bp->spec.m, bp->spec.n, bp->spec.k,
                        bp->session ? (" [" + d.session_labels[bp->session] + "]").c_str() : "",
                        num(bp->p.flops_per_s * s).c_str(), d.flops.name.c_str(), num(bp->median_ms).c_str(),
                        bp->p.roof > 0 ? (num(100 * bp->p.fraction_of_roof, "%.0f") + " % of the " +
                                          (bp->tf32 ? "TF32" : "FP32") + " roof at this intensity")
                                             .c_str()
                                       : "no roof known",
                        num(bp->p.intensity).c_str(), num(bp->p.intensity_compulsory).c_str(),
                        bp->p.roof > 0 ? (bp->p.memory_bound ? "left of the ridge: memory-bound"
                                                             : "right of the ridge: compute-bound")
                                       : "");
  }
  ImPlot::EndPlot();
  return rep;
}

// [SECTION] Occupancy by tile.
PlotReport draw_occupancy(const OccupancyData& d, ImVec2 size, const PlotStyle& st) {
  PlotReport rep;
  if (!ImPlot::BeginPlot("##occupancy", size, plot_flags(st) | ImPlotFlags_NoLegend)) return rep;
  const int n = int(d.tiles.size());
  std::vector<double> pos;
  std::vector<std::string> labels;
  for (int i = 0; i < n; ++i) {
    pos.push_back(i);
    labels.push_back(d.tiles[size_t(i)].tile ? "tile " + std::to_string(d.tiles[size_t(i)].tile) : d.kernel);
  }
  std::vector<const char*> lp;
  for (const auto& l : labels) lp.push_back(l.c_str());
  ImPlot::SetupAxes(nullptr, d.theoretical ? "occupancy % (theoretical)" : "occupancy %");
  ImPlot::SetupAxisLimits(ImAxis_X1, -0.6, std::max(0.6, n - 0.4), ImPlotCond_Always);
  ImPlot::SetupAxisLimits(ImAxis_Y1, 0, 118, ImPlotCond_Always);
  if (n > 0) ImPlot::SetupAxisTicks(ImAxis_X1, pos.data(), n, lp.data());
  const float em = ImGui::GetFontSize();
  // Tiles without figures: one note when every tile has the same reason (a build without the resource
  // table), wrapped to the plot; else each tile's reason, cut to what its slot can hold.
  const bool one_reason = n > 0 && std::all_of(d.tiles.begin(), d.tiles.end(), [&](const TileOccupancy& t) {
                            return !t.error.empty() && t.error == d.tiles.front().error;
                          });
  if (one_reason) plot_note(d.tiles.front().error, (n - 1) * 0.5, 59);
  for (int i = 0; i < n; ++i) {
    const TileOccupancy& t = d.tiles[size_t(i)];
    const double x = i;
    if (!t.error.empty()) {
      if (one_reason) continue;
      const float room = ImPlot::PlotToPixels(x + 0.45, 0).x - ImPlot::PlotToPixels(x - 0.45, 0).x;
      std::string shown = t.error;
      while (shown.size() > 4 && ImGui::CalcTextSize(shown.c_str()).x > room)
        shown = shown.substr(0, shown.size() - 4) + "...";
      plot_label(shown.c_str(), x, 8);
      continue;
    }
    const double v = 100 * t.report.occupancy;
    const bool cur = t.tile == d.current_tile;
    const ImVec4 col = cur ? palette().plot_current : with_alpha(palette().accent, 0.6f);
    ImPlot::SetNextFillStyle(col);
    ImPlot::PlotBars(labels[size_t(i)].c_str(), &x, &v, 1, 0.6);
    rep.colours.emplace_back(labels[size_t(i)], col);
    char b[96];
    std::snprintf(b, sizeof b, "%.0f %%, %d block%s/SM", v, t.report.blocks_per_sm,
                  t.report.blocks_per_sm == 1 ? "" : "s");
    // Labels only where they fit above their bar (the tooltip has them all).
    const float room = ImPlot::PlotToPixels(x + 0.45, 0).x - ImPlot::PlotToPixels(x - 0.45, 0).x;
    if (ImGui::CalcTextSize(b).x <= room) plot_label(b, x, v, ImVec2(0, -0.8f * em));
    const std::string lim = "limited by " + t.report.limiter;
    if (ImGui::CalcTextSize(lim.c_str()).x <= room) plot_label(lim.c_str(), x, v, ImVec2(0, -1.9f * em));
  }
  rep.area = plot_area();
  if (st.interactive && ImPlot::IsPlotHovered()) {
    const int i = int(std::lround(ImPlot::GetPlotMousePos().x));
    if (i >= 0 && i < n) {
      const TileOccupancy& t = d.tiles[size_t(i)];
      if (t.error.empty())
        ImGui::SetTooltip(
            "%s: %d blocks/SM (threads %d, registers %d, shared memory %d, block limit %d)\n"
            "limited by %s, %.1f %% of the SM's warps; at %" PRId64 " x %" PRId64 ", waves %s",
            labels[size_t(i)].c_str(), t.report.blocks_per_sm, t.report.by_threads, t.report.by_regs,
            t.report.by_smem, t.report.by_blocks, t.report.limiter.c_str(), 100 * t.report.occupancy, d.m,
            d.n, waves_text(t.report).c_str());
      else
        ImGui::SetTooltip("%s: %s", labels[size_t(i)].c_str(), t.error.c_str());
    }
  }
  ImPlot::EndPlot();
  return rep;
}

// [SECTION] Tile schedule.
namespace {
uint32_t pack(ImVec4 c) {
  return uint32_t(std::lround(c.x * 255)) | uint32_t(std::lround(c.y * 255)) << 8 |
         uint32_t(std::lround(c.z * 255)) << 16 | 0xff000000u;
}
}  // namespace

uint32_t sm_colour(uint32_t sm, int sm_count, uint8_t alpha) {
  const float x = float((sm * 37u) % uint32_t(std::max(1, sm_count))) / float(std::max(1, sm_count - 1));
  const uint32_t c = ImGui::ColorConvertFloat4ToU32(ImPlot::SampleColormap(x, ImPlotColormap_Spectral));
  return (c & ~IM_COL32_A_MASK) | (uint32_t(alpha) << IM_COL32_A_SHIFT);
}

bool SchedulePlot::update(const TileTrace& t, uint64_t serial, ColorBy mode) {
  if (m_built && serial == m_serial && mode == m_mode) return m_summary.problem.empty();
  m_built = true;
  m_serial = serial;
  m_mode = mode;
  if (!t.view) m_local = std::make_shared<const ScheduleView>(prepare_schedule_view(t));  // from elsewhere
  m_view = t.view ? t.view : m_local;
  m_summary = m_view->summary;
  if (!m_summary.problem.empty()) return false;
  const ScheduleView& v = *m_view;
  auto table = [](ImPlotColormap cmap) {
    std::array<uint32_t, 256> l{};
    for (int i = 0; i < 256; ++i) l[size_t(i)] = pack(ImPlot::SampleColormap(float(i) / 255.0f, cmap));
    return l;
  };
  const ImPlotColormap cmap = m_mode == ColorBy::Sm      ? ImPlotColormap_Spectral
                              : m_mode == ColorBy::Start ? ImPlotColormap_Viridis
                                                         : ImPlotColormap_Plasma;
  const std::array<uint32_t, 256> lut = table(cmap), gantt_lut = table(ImPlotColormap_Viridis);
  auto colour = [](const std::array<uint32_t, 256>& l, float x) {
    return l[size_t(std::clamp(int(x * 255.0f + 0.5f), 0, 255))];
  };
  // One pixel per tile of C (split-K: its first start, its last end, the SM that wrote it).
  std::vector<uint32_t> px(v.tile_sm.size());
  for (size_t i = 0; i < px.size(); ++i) {
    if (m_mode == ColorBy::Sm) {
      px[i] = sm_colour(v.tile_sm[i], t.sm_count);  // the replay's colours too
      continue;
    }
    px[i] = colour(lut, m_mode == ColorBy::Start ? v.tile_start_frac[i] : v.tile_duration_frac[i]);
  }
  m_grid.upload_rgba(t.grid_x, t.grid_y, reinterpret_cast<const uint8_t*>(px.data()));
  m_sms = std::max(1, v.gantt_sms);
  std::vector<uint32_t> gp(v.gantt.size());
  for (size_t i = 0; i < v.gantt.size(); ++i)
    gp[i] = v.gantt[i] > 0 ? colour(gantt_lut, v.gantt[i] / v.gantt_peak) : 0xff202020u;
  m_gantt.upload_rgba(v.gantt_bins, v.gantt_sms, reinterpret_cast<const uint8_t*>(gp.data()));
  return true;
}

PlotReport SchedulePlot::draw(const TileTrace& t, ImVec2 size, const PlotStyle& st,
                              const ScheduleOverlay* overlay) {
  // The replay's time: a line across the timeline and the resident curve.
  auto cursor = [&] {
    if (!overlay || overlay->cursor_us < 0) return;
    double x = overlay->cursor_us;
    ImPlot::SetNextLineStyle(ImVec4(1, 1, 1, 0.9f), 2.0f * ImGui::GetFontSize() / 16);
    ImPlot::PlotInfLines("##now", &x, 1);
  };
  PlotReport rep;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float h = size.y > 0 ? size.y : avail.y;
  const float top_h = std::max(150.0f, h * 0.6f);
  // Tile grid (rows of tiles down, columns across, like C) beside the SM timeline.
  if (ImGui::BeginTable("sched", 2, st.interactive ? ImGuiTableFlags_Resizable : 0)) {
    ImGui::TableNextColumn();
    const float grid_w = ImGui::GetContentRegionAvail().x;
    if (ImPlot::BeginPlot("tiles of C", ImVec2(-1, top_h), plot_flags(st) | ImPlotFlags_NoLegend)) {
      ImPlot::SetupAxes("tile column", "tile row", ImPlotAxisFlags_None, ImPlotAxisFlags_Invert);
      cell_ticks(ImAxis_X1, t.grid_x, grid_w * 0.8f, false);  // whole tiles, labelled at their centres
      cell_ticks(ImAxis_Y1, t.grid_y, top_h * 0.8f, true);
      ImPlot::SetupAxesLimits(0, t.grid_x, 0, t.grid_y, st.interactive ? ImPlotCond_Once : ImPlotCond_Always);
      draw_rows_down("##grid", m_grid.id(), 0, 0, t.grid_x, t.grid_y);
      if (overlay && overlay->over_grid) overlay->over_grid();
      rep.area = plot_area();
      if (st.interactive && ImPlot::IsPlotHovered()) {
        const ImPlotPoint p = ImPlot::GetPlotMousePos();
        const int x = int(std::floor(p.x)), y = int(std::floor(p.y));
        if (x >= 0 && x < t.grid_x && y >= 0 && y < t.grid_y && t.grid_z <= 1) {
          const TileRecord& r = t.records[size_t(y) * size_t(t.grid_x) + size_t(x)];
          ImGui::SetTooltip("tile (%d, %d): SM %u\nstart %.2f us, end %.2f us, %.2f us", y, x, r.smid,
                            double(r.start_ns - m_summary.t0) * 1e-3, double(r.end_ns - m_summary.t0) * 1e-3,
                            double(r.end_ns - r.start_ns) * 1e-3);
        } else if (x >= 0 && x < t.grid_x && y >= 0 && y < t.grid_y) {
          const size_t at = size_t(y) * size_t(t.grid_x) + size_t(x);
          ImGui::SetTooltip("%s", describe_tile_blocks(t, at, m_summary.t0, m_view->tile_sm[at]).c_str());
        }
      }
      ImPlot::EndPlot();
    }
    ImGui::TableNextColumn();
    // Gantt: SMs down, time across; brightness = tiles of that SM running in the time bin.
    const double span_us = double(m_summary.t1 - m_summary.t0) * 1e-3;
    if (ImPlot::BeginPlot("tiles per SM over time", ImVec2(-1, top_h),
                          plot_flags(st) | ImPlotFlags_NoLegend)) {
      ImPlot::SetupAxes("us", "SM", ImPlotAxisFlags_None, ImPlotAxisFlags_Invert);
      ImPlot::SetupAxesLimits(0, span_us, 0, m_sms, st.interactive ? ImPlotCond_Once : ImPlotCond_Always);
      readable_ticks(ImAxis_X1);  // "100", "120", "140" apart, never "100120140"
      readable_ticks(ImAxis_Y1);
      draw_rows_down("##gantt", m_gantt.id(), 0, 0, span_us, m_sms);
      cursor();
      ImPlot::EndPlot();
    }
    ImGui::EndTable();
  }
  if (ImPlot::BeginPlot("tiles resident on the GPU",
                        ImVec2(-1, size.y > 0 ? h - top_h - ImGui::GetStyle().ItemSpacing.y : -1),
                        plot_flags(st) | ImPlotFlags_NoLegend)) {
    ImPlot::SetupAxes("us", "tiles");
    // From this trace, in the frame it arrives (AutoFit would show the previous run's extent first).
    double t_hi = 0, n_hi = 0;
    for (size_t i = 0; i < m_view->curve_us.size(); ++i) {
      t_hi = std::max(t_hi, m_view->curve_us[i]);
      n_hi = std::max(n_hi, m_view->curve_tiles[i]);
    }
    const float line = 2.0f * ImGui::GetFontSize() / 16;
    setup_padded(ImAxis_X1, 0, t_hi, line);
    setup_padded(ImAxis_Y1, 0, n_hi, line);
    readable_ticks(ImAxis_X1);
    readable_ticks(ImAxis_Y1);
    ImPlot::SetNextLineStyle(palette().accent);
    ImPlot::PlotStairs("resident", m_view->curve_us.data(), m_view->curve_tiles.data(),
                       int(m_view->curve_us.size()));
    rep.colours.emplace_back("resident", palette().accent);
    cursor();
    ImPlot::EndPlot();
  }
  return rep;
}

// [SECTION] Data from the window's state.
ProblemSpec plot_reference(const AppState& s) {
  if (s.plot_at) return *s.plot_at;
  return s.settings.spec;  // square where the square mode is on (keep_square)
}

namespace {
std::string spec_key(const ProblemSpec& p) {
  return p.kernel + "/" + std::to_string(p.tile) + "/" + std::to_string(p.m) + "x" + std::to_string(p.n) +
         "x" + std::to_string(p.k) + "/" + to_string(p.input) + "/" + std::to_string(p.seed);
}
}  // namespace

GpuModel calculator_gpu(const AppState& s) {
  if (s.backend_kind() == "cuda" && !s.catalog_gpu && s.device().sm_count > 0)
    return gpu_model_of(s.device());
  try {
    return find_gpu(s.marks_gpu);
  } catch (const ValidationError&) {
    return find_gpu("h100");
  }
}

const TimingsData& timings_of(AppState& s) {
  const ProblemSpec at = plot_reference(s);
  const std::string key = std::to_string(s.sessions_serial) + "|" + spec_key(at) + "|" + s.marks_gpu;
  if (key == s.plots.timings_key) return s.plots.timings;
  s.plots.timings_key = key;
  TimingsData d = timings_data(s.sessions, at, s.kernels());
  // Wave marks of the highlighted configuration over the range shown (the sweep's, when it leads the plots).
  int64_t from = int64_t(d.x_lo), to = int64_t(d.x_hi);
  if (s.sweep && s.plot_at && !s.sweep->sizes.empty()) {
    const auto all = s.sweep->all_sizes();
    from = std::min(from > 0 ? from : all.front(), all.front());
    to = std::max(to, all.back());
  }
  const KernelTile cfg{at.kernel, at.tile};
  if (to >= from && from > 0) {
    const Session& cur = s.sessions.current();
    d.marks = cur.device.sm_count > 0
                  ? measured_wave_marks(cur, d.axis, at, cfg, from, to)
                  : catalog_wave_marks(build_resources(), calculator_gpu(s), d.axis, at, cfg, from, to);
  }
  s.plots.timings = std::move(d);
  return s.plots.timings;
}

const BarsData& bars_of(AppState& s) {
  const ProblemSpec at = plot_reference(s);
  const std::string key = std::to_string(s.sessions_serial) + "|" + spec_key(at) + "|" +
                          (s.bars_baseline ? s.bars_baseline->label() : std::string("-"));
  if (key == s.plots.bars_key) return s.plots.bars;
  s.plots.bars_key = key;
  s.plots.bars = bars_data(s.sessions, at, s.kernels(), s.bars_baseline);
  return s.plots.bars;
}

const RooflineData& roofline_of(AppState& s) {
  const ProblemSpec at = plot_reference(s);
  const double gbs = s.bandwidth ? s.bandwidth->gbs : 0;
  const std::string key = std::to_string(s.sessions_serial) + "|" + spec_key(at) + "|" + num(gbs) + "|" +
                          (s.roofline_this_shape ? "shape" : "all");
  if (key == s.plots.roofline_key) return s.plots.roofline;
  s.plots.roofline_key = key;
  s.plots.roofline = roofline_data(s.sessions, at, s.kernels(), gbs, s.roofline_this_shape);
  return s.plots.roofline;
}

OccupancyData occupancy_of(const AppState& s) {
  const ProblemSpec at = plot_reference(s);
  const bool measured = s.backend_kind() == "cuda" && !s.catalog_gpu;
  if (measured && s.result && !s.result->occupancy_by_tile.empty())
    return measured_tiles(s.device().name, s.result->spec.kernel, s.result->spec.tile, s.result->spec.m,
                          s.result->spec.n, s.result->occupancy_by_tile);
  const std::string kernel = s.occupancy_calc.kernel.empty() ? at.kernel : s.occupancy_calc.kernel;
  const int tile = s.occupancy_calc.kernel.empty() ? at.tile : s.occupancy_calc.tile;
  const KernelInfo* k = find_kernel(s.kernels(), kernel);
  if (!k) throw ValidationError("unknown kernel '" + kernel + "'");
  OccupancyData d = theoretical_tiles(build_resources(), calculator_gpu(s), *k, tile, at.m, at.n);
  d.theoretical = !measured;
  return d;
}

std::string figure_title(AppState& s, PlotKind plot) {
  const ProblemSpec at = plot_reference(s);
  const std::string shape =
      std::to_string(at.m) + " x " + std::to_string(at.n) + " x " + std::to_string(at.k);
  switch (plot) {
    case PlotKind::Timings: {
      const TimingsData& d = timings_of(s);
      const char* what = s.timings_y == TimingsY::Time    ? "Time"
                         : s.timings_y == TimingsY::Flops ? d.flops.name.c_str()
                                                          : "FLOP/s and time";
      return std::string(what) + " against " + d.axis_label + ", " + KernelTile{at.kernel, at.tile}.label() +
             " highlighted";
    }
    case PlotKind::Bars:
      return "The ladder at " + shape;
    case PlotKind::Roofline:
      return s.roofline_this_shape
                 ? "Roofline at " + shape
                 : "Roofline of every measured point on " + s.sessions.current().device.name;
    case PlotKind::Occupancy: {
      const OccupancyData d = occupancy_of(s);
      return std::string(d.theoretical ? "THEORETICAL occupancy of " : "Occupancy of ") + d.kernel + " on " +
             d.gpu;
    }
    case PlotKind::Schedule:
    case PlotKind::Replay:
      return default_title(plot, at);
  }
  return default_title(plot, at);
}

FigureMeta figure_meta_of(const AppState& s, PlotKind plot, const std::vector<size_t>& records) {
  FigureMeta m = figure_meta(plot, s.sessions.current(), plot_reference(s), records);
  for (size_t i = 1; i < s.sessions.size(); ++i) m.overlays.push_back(s.sessions.all()[i].label);
  if (s.sweep) m.sweep = s.sweep->describe();
  if (m.policy.empty() && s.result) m.policy = s.result->policy;
  return m;
}

// [SECTION] Export figure.
namespace {
struct FigureDialog {
  int size_choice = 0;  // 0: 1920 x 1080, 1: 2x on screen, 2: 3x on screen, 3: typed
  char custom[32] = "2560x1440";
  int theme = -1;  // -1: the window's
  char title[256] = "";
  std::string error;
  // A panel offering a second plot (the Tile schedule: its replay): which one, and the replay's options.
  int which = 0;  // 0: the panel's plot, 1: the alternative
  char times[128] = "";
  bool webp = true;
  int frames = kDefaultReplayFrames;
};
std::map<std::string, FigureDialog>& dialogs() {
  static std::map<std::string, FigureDialog> d;
  return d;
}
}  // namespace

void figure_button(AppState& s, PlotKind panel_plot, const char* id, ImVec2 on_screen,
                   std::optional<PlotKind> also) {
  ImGui::PushID(id);
  FigureDialog& dlg = dialogs()[id];
  if (!also) dlg.which = 0;
  const PlotKind plot = dlg.which == 1 && also ? *also : panel_plot;
  if (ImGui::SmallButton("Export figure...")) {
    dlg.error.clear();
    if (dlg.theme < 0) dlg.theme = s.settings.view.theme == Theme::Light ? 1 : 0;
    std::string t;
    try {
      t = figure_title(s, plot);
    } catch (const ValidationError&) {
      t = default_title(plot, plot_reference(s));
    }
    std::snprintf(dlg.title, sizeof dlg.title, "%s", t.c_str());
    ImGui::OpenPopup("figure");
  }
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "This plot alone, rendered offscreen at the size you choose, with a title and a caption: "
        "PNG + CSV + JSON in %s (never replacing a file)",
        s.settings.export_dir.empty() ? default_export_dir().c_str() : s.settings.export_dir.c_str());
  if (ImGui::BeginPopup("figure")) {
    const FigureSize screen{int(std::lround(on_screen.x)), int(std::lround(on_screen.y))};
    if (also) {
      ImGui::TextUnformatted("Plot");
      ImGui::SameLine();
      const int before = dlg.which;
      ImGui::RadioButton(to_string(panel_plot), &dlg.which, 0);
      ImGui::SameLine();
      ImGui::RadioButton(to_string(*also), &dlg.which, 1);
      if (dlg.which != before) {  // the other plot's title
        const PlotKind now = dlg.which == 1 ? *also : panel_plot;
        std::string t;
        try {
          t = figure_title(s, now);
        } catch (const ValidationError&) {
          t = default_title(now, plot_reference(s));
        }
        std::snprintf(dlg.title, sizeof dlg.title, "%s", t.c_str());
      }
    }
    const bool replay = (dlg.which == 1 && also ? *also : panel_plot) == PlotKind::Replay;
    if (replay) {
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
      ImGui::InputTextWithHint("moments", "the waves' starts and the end", dlg.times, sizeof dlg.times);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "comma-separated times after the first block start: 120 or 120us, 500ns, 1.5ms, 50%%; "
            "empty: the start of each wave (occupancy arithmetic) and the end");
      ImGui::Checkbox("animated WebP too", &dlg.webp);
      if (dlg.webp) {
        ImGui::SameLine();
        ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
        ImGui::SliderInt("frames", &dlg.frames, kMinReplayFrames, kMaxReplayFrames, "%d",
                         ImGuiSliderFlags_AlwaysClamp);
      }
    }
    ImGui::TextUnformatted("Size");
    ImGui::RadioButton("1920 x 1080", &dlg.size_choice, 0);
    char b[64];
    std::snprintf(b, sizeof b, "2x on screen (%d x %d)", screen.width * 2, screen.height * 2);
    ImGui::RadioButton(b, &dlg.size_choice, 1);
    std::snprintf(b, sizeof b, "3x on screen (%d x %d)", screen.width * 3, screen.height * 3);
    ImGui::RadioButton(b, &dlg.size_choice, 2);
    ImGui::RadioButton("width x height:", &dlg.size_choice, 3);
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
    if (ImGui::InputText("##custom", dlg.custom, sizeof dlg.custom)) dlg.size_choice = 3;
    ImGui::TextUnformatted("Theme");
    ImGui::SameLine();
    ImGui::RadioButton("dark", &dlg.theme, 0);
    ImGui::SameLine();
    ImGui::RadioButton("light", &dlg.theme, 1);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 28);
    ImGui::InputText("title", dlg.title, sizeof dlg.title);
    if (!dlg.error.empty()) {
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 28);
      ImGui::TextColored(palette().bad, "%s", dlg.error.c_str());
      ImGui::PopTextWrapPos();
    }
    if (ImGui::Button("Export")) {
      try {
        const char* text = dlg.size_choice == 0   ? "1920x1080"
                           : dlg.size_choice == 1 ? "2x"
                           : dlg.size_choice == 2 ? "3x"
                                                  : dlg.custom;
        FigureRequest req;
        req.plot = plot;
        req.size = parse_figure_size(text, screen);
        // Text and lines: a 2x or 3x figure looks like the panel on a screen of 2 or 3 times the density; a
        // typed size scales with its area against 1280 x 720.
        const float here = ImGui::GetFontSize() / 16.0f;
        req.scale =
            dlg.size_choice == 1 ? 2 * here
            : dlg.size_choice == 2
                ? 3 * here
                : std::clamp(std::min(req.size.width / 1280.0f, req.size.height / 720.0f), 0.75f, 4.0f);
        req.theme = dlg.theme == 1 ? FigureTheme::Light : FigureTheme::Dark;
        req.title = dlg.title;
        if (replay) {
          if (dlg.times[0]) req.replay_times = parse_replay_times(dlg.times, "moments");
          req.webp = dlg.webp;
          req.frames = dlg.frames;
        }
        s.ask(rq::ExportFigure{req});
        ImGui::CloseCurrentPopup();
      } catch (const ValidationError& e) {
        dlg.error = e.what();
      }
    }
    ImGui::SameLine();
    if (ImGui::Button("Cancel")) ImGui::CloseCurrentPopup();
    ImGui::EndPopup();
  }
  ImGui::PopID();
}

}  // namespace ts::ui
