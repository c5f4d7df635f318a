// Controls: the problem (M, N, K, tile, kernel, inputs, seed) and when to run it.
#include <algorithm>

#include <imgui.h>

#include "panel.hpp"

namespace ts::ui {

namespace {

// Slider with a logarithmic scale (1 .. 16384) plus exact typing (Ctrl+click). Values typed outside the
// slider range are kept and validated by the engine, which explains any refusal in the status bar.
bool dim_slider(const char* label, int64_t* v) {
  const int64_t lo = 1, hi = 16384;
  int64_t shown = *v;
  bool changed =
      ImGui::SliderScalar(label, ImGuiDataType_S64, &shown, &lo, &hi, "%lld", ImGuiSliderFlags_Logarithmic);
  if (changed) *v = std::max<int64_t>(1, shown);
  return changed;
}

class ControlsPanel final : public Panel {
 public:
  const char* name() const override { return "Controls"; }
  Rect default_rect(float w, float h) const override { return {0, 0, std::min(340.0f, w * 0.3f), h - 32}; }

 protected:
  void draw_content(AppState& s) override {
    ProblemSpec& p = s.settings.spec;
    ImGui::SeparatorText("Shape  C(M x N) = A(M x K) B(K x N)");
    if (ImGui::Checkbox("Square (M = N = K)", &s.settings.square) && s.settings.square) p.m = p.k = p.n;
    ImGui::PushItemWidth(-40);
    if (s.settings.square) {
      if (dim_slider("N", &p.n)) p.m = p.k = p.n;
    } else {
      dim_slider("M", &p.m);
      dim_slider("N", &p.n);
      dim_slider("K", &p.k);
    }
    ImGui::PopItemWidth();
    help_marker(
        "Drag, or Ctrl+click to type an exact size. Sizes that do not fit the device are refused with "
        "the reason in the status bar.");

    ImGui::SeparatorText("Kernel");
    const KernelInfo* cur = current_kernel(s);
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##kernel", cur ? cur->title.c_str() : p.kernel.c_str())) {
      bool teaching_shown = false;
      for (const auto& k : s.kernels) {
        if (k.teaching && !teaching_shown) {
          ImGui::SeparatorText("broken on purpose");
          teaching_shown = true;
        }
        const bool usable = s.backend_kind == "cuda" ? k.has_cuda : k.cpu != nullptr;
        ImGui::BeginDisabled(!usable);
        if (ImGui::Selectable(k.title.c_str(), k.id == p.kernel)) {
          p.kernel = k.id;
          if (!k.tiles.empty() && std::find(k.tiles.begin(), k.tiles.end(), p.tile) == k.tiles.end())
            p.tile = k.default_tile;
        }
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
          ImGui::SetTooltip("%s%s", k.description.c_str(), usable ? "" : "\n(not available on this backend)");
      }
      ImGui::EndCombo();
    }
    cur = current_kernel(s);
    if (cur) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextDisabled("%s", cur->description.c_str());
      ImGui::PopTextWrapPos();
    }

    // The tile parameter: the values this kernel supports, each standing for its block / warp / thread tiles.
    ImGui::Text("Tile");
    const bool has_tiles = cur && !cur->tiles.empty();
    if (!has_tiles) {
      ImGui::SameLine();
      ImGui::TextDisabled("(chosen by the library)");
    } else {
      for (int t : cur->tiles) {
        ImGui::SameLine();
        char label[16];
        std::snprintf(label, sizeof label, "%d", t);
        if (ImGui::RadioButton(label, p.tile == t)) p.tile = t;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", cur->tile_label(t).c_str());
      }
      ImGui::TextDisabled("%s", cur->tile_label(p.tile).c_str());
    }

    ImGui::SeparatorText("Inputs");
    ImGui::SetNextItemWidth(-60);
    if (ImGui::BeginCombo("Input", to_string(p.input))) {
      for (InputKind k : generated_input_kinds())
        if (ImGui::Selectable(to_string(k), k == p.input)) p.input = k;
      ImGui::EndCombo();
    }
    help_marker(
        "random: uniform in [-1, 1). symmetric: A and B symmetric (A*B is still not symmetric unless "
        "they commute). identity: A = I, so C reproduces B. ones: every element 1, so C = K.");
    ImGui::SetNextItemWidth(-60);
    ImGui::InputScalar("Seed", ImGuiDataType_U64, &p.seed);

    ImGui::SeparatorText("Run");
    if (ImGui::Button("Run", ImVec2(80, 0))) s.run_requested = true;
    ImGui::SameLine();
    ImGui::Checkbox("Auto-run on change", &s.settings.auto_run);
    ImGui::SameLine();
    spinner("busy", 7.0f, s.busy);
    if (s.busy)
      ImGui::TextDisabled("running...");
    else
      ImGui::TextDisabled("idle");
    ImGui::Spacing();
    ImGui::TextDisabled("F12: screenshot to %s", s.settings.export_dir.empty()
                                                     ? default_export_dir().c_str()
                                                     : s.settings.export_dir.c_str());
  }
};

}  // namespace

std::unique_ptr<Panel> make_controls_panel() {
  return std::make_unique<ControlsPanel>();
}

}  // namespace ts::ui
