// Timings: every launch's time per configuration, the running median and p10-p90 band of the current one,
// cuBLAS at the same shape as a reference line, and a bar chart of this shape across kernels.
#include <algorithm>
#include <cmath>
#include <vector>

#include <imgui.h>
#include <implot.h>

#include "panel.hpp"
#include "csv.hpp"
#include "stats.hpp"
#include "theme.hpp"

namespace ts::ui {

namespace {

class TimingsPanel final : public Panel {
 public:
  const char* name() const override { return "Timings"; }

 protected:
  void draw_content(AppState& s) override {
    const SeriesKey cur = SeriesKey::of(s.result ? s.result->spec : s.settings.spec);
    const TimingSeries* series = s.history.find(cur);
    ImGui::Checkbox("Repeat", &s.repeat);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Keep re-running the current problem (Ctrl+R)");
    ImGui::SameLine();
    if (ImGui::SmallButton("Clear")) s.history.clear();
    ImGui::SameLine();
    export_button(s, name(), "timings", [&] { return s.history.to_csv(); });
    if (!series || series->ms.empty()) {
      ImGui::TextDisabled("no launches timed yet for %s", cur.label().c_str());
      return;
    }
    const double last = series->ms.back();
    text_fit(cur.label());
    ImGui::TextWrapped("last %.4g ms, median %.4g ms, p10-p90 %.4g-%.4g ms, %.3g TFLOP/s", last,
                       series->median_ms, series->p10_ms, series->p90_ms,
                       tflops(series->flops, series->median_ms));
    if (s.result && s.result->peak_tflops > 0)
      ImGui::TextWrapped(
          "%.1f %% of the %s peak (%.1f TFLOP/s)%s",
          100.0 * tflops(series->flops, series->median_ms) / s.result->peak_tflops,
          series->tf32 ? "TF32" : "FP32", s.result->peak_tflops,
          series->reference_ms > 0
              ? (", " + CsvWriter::num(100.0 * series->reference_ms / series->median_ms, "%.1f") +
                 " % of cuBLAS")
                    .c_str()
              : "");

    const float plot_h = std::max(120.0f, ImGui::GetContentRegionAvail().y * 0.55f);
    if (ImPlot::BeginPlot("##launches", ImVec2(-1, plot_h))) {
      ImPlot::SetupAxes("launch", "ms", ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
      ImPlot::SetupLegend(ImPlotLocation_NorthEast, ImPlotLegendFlags_Outside);  // never over the data
      // The current configuration's band and median first, under the lines.
      const double x0 = series->launch[0], x1 = series->launch.back();
      const double xs[2] = {x0, x1}, lo[2] = {series->p10_ms, series->p10_ms},
                   hi[2] = {series->p90_ms, series->p90_ms};
      ImPlot::SetNextFillStyle(palette().plot_current, 0.25f);
      ImPlot::PlotShaded("p10-p90", xs, lo, hi, 2);
      const double med[2] = {series->median_ms, series->median_ms};
      ImPlot::SetNextLineStyle(palette().plot_current, 2.0f);
      ImPlot::PlotLine("median", xs, med, 2);
      if (series->reference_ms > 0) {
        const double ref[2] = {series->reference_ms, series->reference_ms};
        ImPlot::SetNextLineStyle(palette().plot_reference, 2.0f);
        ImPlot::PlotLine("cuBLAS", xs, ref, 2);
      }
      for (const auto& [key, ser] : s.history.series()) {
        if (key.m != cur.m || key.n != cur.n || key.k != cur.k) continue;  // one shape at a time
        ImPlot::SetNextMarkerStyle(ImPlotMarker_Circle, 2.0f);
        ImPlot::PlotLine(key.label().c_str(), ser.launch.data(), ser.ms.data(), int(ser.ms.size()), 0,
                         int(ser.ms.offset()), sizeof(double));
      }
      ImPlot::EndPlot();
    }
    // This shape across kernels: medians as bars (hover for exact values).
    const auto same = s.history.same_shape(cur.m, cur.n, cur.k);
    std::vector<double> medians;
    std::vector<std::string> labels;
    for (const auto& [key, ser] : same) {
      medians.push_back(ser->median_ms);
      labels.push_back(key.kernel + (key.tile ? " " + std::to_string(key.tile) : ""));
    }
    std::vector<const char*> label_ptrs;
    for (const auto& l : labels) label_ptrs.push_back(l.c_str());
    if (!medians.empty() && ImPlot::BeginPlot("##bars", ImVec2(-1, -1))) {
      std::vector<double> pos(medians.size());
      for (size_t i = 0; i < pos.size(); ++i) pos[i] = double(i);
      ImPlot::SetupAxes(nullptr, "median ms", ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_AutoFit);
      ImPlot::SetupAxisTicks(ImAxis_X1, pos.data(), int(pos.size()), label_ptrs.data());
      ImPlot::PlotBars("median", medians.data(), int(medians.size()), 0.6);
      if (ImPlot::IsPlotHovered()) {
        const int i = int(std::lround(ImPlot::GetPlotMousePos().x));
        if (i >= 0 && i < int(medians.size()))
          ImGui::SetTooltip("%s\nmedian %.5g ms, %.4g TFLOP/s", labels[size_t(i)].c_str(), medians[size_t(i)],
                            tflops(same[size_t(i)].second->flops, medians[size_t(i)]));
      }
      ImPlot::EndPlot();
    }
  }
};

}  // namespace

std::unique_ptr<Panel> make_timings_panel() {
  return std::make_unique<TimingsPanel>();
}

}  // namespace ts::ui
