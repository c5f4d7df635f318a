// Occupancy: the timed launch's resources, blocks per SM by each limit, the limiter, occupancy, waves and the
// tail; and occupancy against every tile the kernel supports.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <imgui.h>
#include <implot.h>

#include "csv.hpp"
#include "panel.hpp"

namespace ts::ui {

namespace {

std::string occupancy_csv(const RunResult& r) {
  CsvWriter w({"kernel", "tile", "threads_per_block", "regs_per_thread", "static_smem", "dynamic_smem",
               "by_threads", "by_regs", "by_smem", "by_blocks", "blocks_per_sm", "api_blocks_per_sm",
               "limiter", "occupancy", "grid_blocks", "waves", "tail_fill"});
  for (const auto& [tile, o] : r.occupancy_by_tile)
    w.row({r.spec.kernel, std::to_string(tile), std::to_string(o.res.threads_per_block),
           std::to_string(o.res.regs_per_thread), std::to_string(o.res.static_smem),
           std::to_string(o.res.dynamic_smem), std::to_string(o.by_threads), std::to_string(o.by_regs),
           std::to_string(o.by_smem), std::to_string(o.by_blocks), std::to_string(o.blocks_per_sm),
           std::to_string(o.api_blocks_per_sm), o.limiter, CsvWriter::num(o.occupancy),
           std::to_string(o.grid_blocks), CsvWriter::num(o.waves), CsvWriter::num(o.tail_fill)});
  return w.str();
}

class OccupancyPanel final : public Panel {
 public:
  const char* name() const override { return "Occupancy"; }

 protected:
  void draw_content(AppState& s) override {
    if (needs_gpu_notice(s, name(), "Occupancy")) return;
    if (!s.result) {
      ImGui::TextDisabled("no run yet");
      return;
    }
    const RunResult& r = *s.result;
    if (!r.occupancy) {
      ImGui::TextDisabled("%s", r.trace_note.empty() ? "no occupancy for this run" : r.trace_note.c_str());
      return;
    }
    export_button(s, name(), "occupancy", [&] { return occupancy_csv(r); });
    const OccupancyReport& o = *r.occupancy;
    if (begin_facts("occ", {"threads / block", "registers / thread", "shared memory / block",
                            "blocks/SM by registers", "resident blocks / SM"})) {
      auto row = [](const char* k, const std::string& v) { fact(k, v); };
      auto lim = [](int v) { return v < 0 ? std::string("no limit") : std::to_string(v); };
      row("threads / block", std::to_string(o.res.threads_per_block));
      row("registers / thread", std::to_string(o.res.regs_per_thread));
      row("shared memory / block", std::to_string(o.res.static_smem + o.res.dynamic_smem) + " B (" +
                                       std::to_string(o.res.dynamic_smem) + " dynamic)");
      row("blocks/SM by threads", lim(o.by_threads));
      row("blocks/SM by registers", lim(o.by_regs));
      row("blocks/SM by shared mem", lim(o.by_smem));
      row("blocks/SM limit", lim(o.by_blocks));
      row("resident blocks / SM",
          std::to_string(o.blocks_per_sm) + "  (CUDA API: " + std::to_string(o.api_blocks_per_sm) + ")");
      row("limited by", o.limiter);
      row("occupancy", CsvWriter::num(100 * o.occupancy, "%.1f") + " % of the SM's warps");
      row("grid", std::to_string(o.grid_blocks) + " blocks");
      row("waves", CsvWriter::num(o.waves, "%.2f"));
      row("last wave", std::to_string(o.full_waves) + " full waves, then one " +
                           CsvWriter::num(100 * o.tail_fill, "%.0f") + " % full");
      end_facts();
    }
    if (r.occupancy_by_tile.size() > 1 && ImPlot::BeginPlot("occupancy by tile", ImVec2(-1, -1))) {
      std::vector<double> pos, occ;
      std::vector<std::string> labels;
      for (const auto& [t, rep] : r.occupancy_by_tile) {
        pos.push_back(double(pos.size()));
        occ.push_back(100 * rep.occupancy);
        labels.push_back("tile " + std::to_string(t));
      }
      std::vector<const char*> lp;
      for (auto& l : labels) lp.push_back(l.c_str());
      ImPlot::SetupAxes(nullptr, "occupancy %", ImPlotAxisFlags_AutoFit, ImPlotAxisFlags_None);
      ImPlot::SetupAxisLimits(ImAxis_Y1, 0, 105, ImPlotCond_Always);
      ImPlot::SetupAxisTicks(ImAxis_X1, pos.data(), int(pos.size()), lp.data());
      ImPlot::PlotBars("occupancy", occ.data(), int(occ.size()), 0.6);
      if (ImPlot::IsPlotHovered()) {
        const int i = int(std::lround(ImPlot::GetPlotMousePos().x));
        if (i >= 0 && i < int(occ.size())) {
          const auto& rep = r.occupancy_by_tile[size_t(i)].second;
          ImGui::SetTooltip("%s: %d blocks/SM (%s), %.1f %%", labels[size_t(i)].c_str(), rep.blocks_per_sm,
                            rep.limiter.c_str(), occ[size_t(i)]);
        }
      }
      ImPlot::EndPlot();
    }
  }
};

}  // namespace

std::unique_ptr<Panel> make_occupancy_panel() {
  return std::make_unique<OccupancyPanel>();
}

}  // namespace ts::ui
