// Occupancy. On a GPU: the timed launch's resources, blocks per SM by each limit, the limiter, occupancy,
// waves and the tail, whether the build's figures (ptxas, recorded at build time) match the driver's, and
// occupancy against every tile the kernel supports. Without a GPU (and as "what if" on one): a calculator for
// a chosen GPU of the catalog, THEORETICAL, from the build-time registers and shared memory, with block size,
// registers and shared memory to change.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <imgui.h>
#include <implot.h>

#include "core/io/csv.hpp"
#include "ui/panels/panel.hpp"
#include "ui/plots/plots.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

std::string occupancy_csv(const std::string& kernel, const std::vector<std::pair<int, OccupancyReport>>& rows,
                          const std::string& gpu, bool theoretical) {
  CsvWriter w({"gpu",           "theoretical",       "kernel",
               "tile",          "threads_per_block", "regs_per_thread",
               "static_smem",   "dynamic_smem",      "by_threads",
               "by_regs",       "by_smem",           "by_blocks",
               "blocks_per_sm", "api_blocks_per_sm", "limiter",
               "occupancy",     "grid_blocks",       "waves",
               "tail_fill",     "k_segments"});
  for (const auto& [tile, o] : rows)
    w.row({gpu,
           theoretical ? "1" : "0",
           kernel,
           std::to_string(tile),
           std::to_string(o.res.threads_per_block),
           std::to_string(o.res.regs_per_thread),
           std::to_string(o.res.static_smem),
           std::to_string(o.res.dynamic_smem),
           std::to_string(o.by_threads),
           std::to_string(o.by_regs),
           std::to_string(o.by_smem),
           std::to_string(o.by_blocks),
           std::to_string(o.blocks_per_sm),
           std::to_string(o.api_blocks_per_sm),
           o.limiter,
           CsvWriter::num(o.occupancy),
           std::to_string(o.grid_blocks),
           CsvWriter::num(o.waves),
           CsvWriter::num(o.tail_fill),
           o.k_segments ? "1" : "0"});
  return w.str();
}

std::string lim(int v) {
  return v < 0 ? std::string("no limit") : std::to_string(v);
}

// The facts of one occupancy report, as drawn (key -> text); `api`: show the CUDA API's blocks per SM.
std::vector<std::pair<const char*, std::string>> facts_of(const OccupancyReport& o, bool api) {
  std::vector<std::pair<const char*, std::string>> f;
  f.emplace_back("threads / block", std::to_string(o.res.threads_per_block));
  f.emplace_back("registers / thread", std::to_string(o.res.regs_per_thread));
  f.emplace_back("shared memory / block", std::to_string(o.res.static_smem + o.res.dynamic_smem) + " B (" +
                                              std::to_string(o.res.dynamic_smem) + " dynamic)");
  f.emplace_back("blocks/SM by threads", lim(o.by_threads));
  f.emplace_back("blocks/SM by registers", lim(o.by_regs));
  f.emplace_back("blocks/SM by shared mem", lim(o.by_smem));
  f.emplace_back("blocks/SM limit", lim(o.by_blocks));
  f.emplace_back("resident blocks / SM",
                 std::to_string(o.blocks_per_sm) +
                     (api ? "  (CUDA API: " + std::to_string(o.api_blocks_per_sm) + ")" : ""));
  f.emplace_back("limited by", o.limiter);
  f.emplace_back("occupancy", CsvWriter::num(100 * o.occupancy, "%.1f") + " % of the SM's warps");
  // Stream-K and wgmma_tf32's tail (a measured launch: the calculator knows no plan) are planned for the SMs.
  f.emplace_back("grid",
                 std::to_string(o.grid_blocks) + (o.k_segments ? " blocks, planned for the SMs" : " blocks"));
  f.emplace_back("waves", waves_text(o));
  return f;
}

void draw_facts(const char* id, const std::vector<std::pair<const char*, std::string>>& f) {
  if (begin_facts(id, {"threads / block", "registers / thread", "shared memory / block",
                       "blocks/SM by registers", "resident blocks / SM"})) {
    for (const auto& [k, v] : f) fact(k, v);
    end_facts();
  }
}

class OccupancyPanel final : public Panel {
 public:
  const char* name() const override { return "Occupancy"; }

 protected:
  void draw_content(AppState& s, FrameReport& out) override {
    const bool gpu = s.backend_kind() == "cuda";
    if (gpu)
      measured(s, out);
    else
      calculator(s, out, true);
  }

 private:
  // [SECTION] A GPU: the measured launch, and the build's figures against the driver's.
  void measured(AppState& s, FrameReport& out) {
    out.panels[name()].state = "shown";
    if (!s.result) {
      ImGui::TextDisabled("no run yet");
      return;
    }
    const RunResult& r = *s.result;
    if (!r.occupancy) {
      ImGui::TextDisabled("%s", r.trace_note.empty() ? "no occupancy for this run" : r.trace_note.c_str());
      if (ImGui::CollapsingHeader("What if (calculator on this GPU)")) calculator(s, out, false);
      return;
    }
    export_button(s, name(), "occupancy",
                  [&] { return occupancy_csv(r.spec.kernel, r.occupancy_by_tile, s.device().name, false); });
    same_line_if_fits(small_button_width("Export figure..."));
    figure_button(s, PlotKind::Occupancy, "occupancy", m_size);
    text_fit("Measured device: " + s.device().name);
    const OccupancyReport& o = *r.occupancy;
    const auto facts = facts_of(o, true);
    out.panels[name()].facts.clear();
    for (const auto& [key, v] : facts) out.panels[name()].facts[key] = v;
    draw_facts("occ", facts);
    // The build-time table (ptxas) against what the driver reports for the launch that was timed: the row of
    // the function it ran.
    const bool aligned = r.spec.m % 4 == 0 && r.spec.n % 4 == 0 && r.spec.k % 4 == 0;
    const ResourceLookup lk =
        lookup_resources(build_resources(), r.spec.kernel, r.spec.tile, aligned, s.device().sm, o.function);
    const BuildComparison cmp = compare_with_build(lk, o.res, r.blocks_per_tile, build_resources_note());
    static constexpr const char* kKinds[] = {"no row", "another launch", "match", "differ"};
    out.panels[name()].state = std::string("shown; build's figures: ") + kKinds[int(cmp.kind)];
    out.panels[name()].text = cmp.text;
    const ImVec4* colour = cmp.kind == BuildComparison::Kind::match    ? &palette().good
                           : cmp.kind == BuildComparison::Kind::differ ? &palette().warn
                                                                       : &palette().muted;
    text_lines(cmp.text, colour);
    if (ImGui::CollapsingHeader("What if (calculator on this GPU)")) calculator(s, out, false);
    if (r.occupancy_by_tile.size() > 1) plot(out, occupancy_of(s));
  }

  // [SECTION] The calculator: a catalog GPU (CPU backend) or the measured device, build-time inputs, what-if.
  void calculator(AppState& s, FrameReport& out, bool choose_gpu) {
    AppState::OccupancyCalc& c = s.occupancy_calc;
    const GpuModel gpu = calculator_gpu(s);
    if (choose_gpu) {
      out.panels[name()].state = "theoretical: " + gpu.id;
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(palette().warn,
                         "THEORETICAL: no GPU here. The figures a %s would give, from the "
                         "registers and shared memory recorded at build time.",
                         gpu.name.c_str());
      ImGui::PopTextWrapPos();
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted("GPU");
      ImGui::SameLine();
      ImGui::SetNextItemWidth(-FLT_MIN);
      if (ImGui::BeginCombo("##gpu", gpu.name.c_str())) {
        for (const auto& g : gpu_catalog())
          if (ImGui::Selectable(g.name.c_str(), g.id == gpu.id)) s.marks_gpu = g.id;
        ImGui::EndCombo();
      }
      char spec[160];
      std::snprintf(spec, sizeof spec, "sm_%d, %d SMs, %d threads, %d blocks, %d KiB shared memory per SM",
                    gpu.sm, gpu.limits.sm_count, gpu.limits.max_threads_per_sm, gpu.limits.max_blocks_per_sm,
                    gpu.limits.smem_per_sm / 1024);
      text_muted_wrapped(spec);
    }
    // Kernel and tile: the problem's (followed as it changes), unless chosen here.
    if (!c.chosen || c.kernel.empty() || !find_kernel(s.kernels(), c.kernel)) {
      c.kernel = s.settings.spec.kernel;
      c.tile = s.settings.spec.tile;
      c.chosen = false;
    }
    const KernelInfo* k = find_kernel(s.kernels(), c.kernel);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("kernel");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(std::max(ImGui::GetFontSize() * 6, ImGui::GetContentRegionAvail().x * 0.55f));
    if (ImGui::BeginCombo("##kernel", c.kernel.c_str())) {
      for (const auto& kk : s.kernels())
        if (ImGui::Selectable(kk.id.c_str(), kk.id == c.kernel)) {
          c.kernel = kk.id;
          c.tile = kk.default_tile;
          c.chosen = true;
        }
      ImGui::EndCombo();
    }
    k = find_kernel(s.kernels(), c.kernel);
    if (k && !k->tiles.empty()) {
      if (std::find(k->tiles.begin(), k->tiles.end(), c.tile) == k->tiles.end()) c.tile = k->default_tile;
      same_line_if_fits(ImGui::GetFontSize() * 5.5f);
      ImGui::SetNextItemWidth(ImGui::GetFontSize() * 5.5f);
      const std::string t = "T=" + std::to_string(c.tile);
      if (ImGui::BeginCombo("##tile", t.c_str())) {
        for (int tile : k->tiles)
          if (ImGui::Selectable(("T=" + std::to_string(tile)).c_str(), tile == c.tile)) {
            c.tile = tile;
            c.chosen = true;
          }
        ImGui::EndCombo();
      }
    } else {
      c.tile = 0;
    }
    // The build's figures for this kernel x tile on this GPU's architecture: what the what-if starts from.
    const ResourceLookup lk = lookup_resources(build_resources(), c.kernel, c.tile, true, gpu.sm);
    // A person's kernel is in no build-time table: its figures are those of its NVRTC build at this tile.
    const TileBuild* yours = nullptr;
    if (!lk.row && !s.user.id.empty() && c.kernel == s.user.id)
      for (const TileBuild& t : s.user.tiles)
        if (t.tile == c.tile && t.ok) yours = &t;
    const std::string base_key = gpu.id + "/" + c.kernel + "/" + std::to_string(c.tile) +
                                 (yours ? "/v" + std::to_string(s.user.version) : "");
    if (base_key != m_base_key) {
      m_base_key = base_key;
      m_base = lk.row ? inputs_from(*lk.row) : yours ? yours->inputs : OccupancyInputs{};
      m_in = m_base;
    }
    // What it shows, for the tests: this GPU, kernel and tile, the what-if inputs and the figures.
    OccupancyCalcReport& drawn = out.occupancy_calc;
    drawn.gpu = gpu.id;
    drawn.kernel = c.kernel;
    drawn.tile = c.tile;
    if (yours) {
      text_muted_wrapped(("Your kernel's registers and shared memory from its NVRTC build (ptxas, sm_" +
                          std::to_string(s.user.arch) + ").")
                             .c_str());
    } else if (!lk.row && c.kernel == s.user.id) {
      text_muted_wrapped(s.jobs.has(kJobBuildTiles)
                             ? "Your kernel's tiles are being built: their figures follow."
                             : ("Your kernel has no build at tile " + std::to_string(c.tile) +
                                ": type what-if figures below.")
                                   .c_str());
    } else if (!lk.row) {
      text_muted_wrapped((c.kernel == "cublas" || c.kernel == "cublas_tf32"
                              ? std::string("cuBLAS's kernels are closed: type what-if figures below.")
                              : "Not in this build's resource table (" + build_resources_note() +
                                    "): type what-if figures below.")
                             .c_str());
    } else if (!lk.exact_arch) {
      text_muted_wrapped(lk.note.c_str());
    }
    ImGui::SeparatorText("What if");
    int_field("threads", "threads / block", &m_in.threads_per_block);
    int_field("registers", "registers / thread", &m_in.regs_per_thread);
    int smem = m_in.static_smem + m_in.dynamic_smem;
    if (int_field("smem", "shared memory / block (B)", &smem)) {
      m_in.dynamic_smem = std::max(0, smem - m_in.static_smem);
      m_in.static_smem = std::min(m_in.static_smem, smem);
    }
    const bool changed = m_in.threads_per_block != m_base.threads_per_block ||
                         m_in.regs_per_thread != m_base.regs_per_thread ||
                         m_in.static_smem + m_in.dynamic_smem != m_base.static_smem + m_base.dynamic_smem;
    ImGui::BeginDisabled(!changed || (!lk.row && !yours));
    if (ImGui::SmallButton("Back to the build's figures")) m_in = m_base;
    ImGui::EndDisabled();
    // The block's output tile stays the kernel's (the grid), whatever the what-if.
    if (m_in.tile_m <= 0 || m_in.tile_n <= 0) {
      m_in.tile_m = m_base.tile_m > 0 ? m_base.tile_m : std::max(1, c.tile);
      m_in.tile_n = m_base.tile_n > 0 ? m_base.tile_n : std::max(1, c.tile);
    }
    const ProblemSpec at = plot_reference(s);
    drawn.inputs = m_in;
    drawn.report.reset();
    drawn.error.clear();
    drawn.facts.clear();
    try {
      const OccupancyReport o = theoretical_occupancy(gpu, m_in, at.m, at.n);
      drawn.report = o;
      const auto f = facts_of(o, false);
      for (const auto& [key, v] : f) drawn.facts[key] = v;
      text_muted_wrapped(("Waves for C of " + std::to_string(at.m) + " x " + std::to_string(at.n) +
                          (changed ? " (what-if figures)" : " (the build's figures)"))
                             .c_str());
      draw_facts("calc", f);
    } catch (const ValidationError& e) {
      drawn.error = e.what();
      text_lines(std::string("refused: ") + e.what(), &palette().bad);  // "1..1024" stays whole
    }
    if (choose_gpu && k) {
      const OccupancyData d = theoretical_tiles(build_resources(), gpu, *k, c.tile, at.m, at.n);
      std::vector<std::pair<int, OccupancyReport>> rows;
      for (const auto& t : d.tiles)
        if (t.error.empty()) rows.emplace_back(t.tile, t.report);
      export_button(s, name(), "occupancy", [&] { return occupancy_csv(c.kernel, rows, gpu.name, true); });
      same_line_if_fits(small_button_width("Export figure..."));
      figure_button(s, PlotKind::Occupancy, "occupancy", m_size);
      if (d.tiles.size() > 1) plot(out, d);
    }
  }

  // id: for the ID stack (and the UI tests' paths), without the '/' of the label.
  bool int_field(const char* id, const char* label, int* v) {
    ImGui::PushID(id);
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(label);
    ImGui::PopTextWrapPos();
    ImGui::SetNextItemWidth(-FLT_MIN);
    const bool changed = ImGui::InputInt("##v", v, 1, 32);
    ImGui::PopID();
    return changed;
  }

  void plot(FrameReport& out, const OccupancyData& d) {
    const float h = std::max(ImGui::GetFontSize() * 10, ImGui::GetContentRegionAvail().y);
    const ImVec2 before = ImGui::GetCursorScreenPos();
    const PlotReport rep = draw_occupancy(d, ImVec2(-1, h), PlotStyle{true});
    m_size = ImVec2(std::max(1.0f, ImGui::GetItemRectMax().x - before.x),
                    std::max(1.0f, ImGui::GetItemRectMax().y - before.y));
    out.plot_areas["occupancy"] = rep.area;
  }

  std::string m_base_key;
  OccupancyInputs m_base, m_in;
  ImVec2 m_size{960, 540};
};

}  // namespace

std::unique_ptr<Panel> make_occupancy_panel() {
  return std::make_unique<OccupancyPanel>();
}

}  // namespace ts::ui
