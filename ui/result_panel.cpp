// Result: the latest run's time, speed and accuracy against the reference.
#include <imgui.h>

#include "panel.hpp"

namespace ts::ui {

namespace {

class ResultPanel final : public Panel {
 public:
  const char* name() const override { return "Result"; }
  Rect default_rect(float w, float h) const override {
    const float pw = std::min(360.0f, w * 0.28f);
    return {w - pw, 0, pw, (h - 32) * 0.45f};
  }

 protected:
  void draw_content(AppState& s) override {
    if (!s.result) {
      ImGui::TextDisabled(s.busy ? "running..." : "no result yet: press Run");
      return;
    }
    const RunResult& r = *s.result;
    const auto& p = r.spec;
    if (ImGui::BeginTable("result", 2, ImGuiTableFlags_SizingFixedFit)) {
      auto row = [](const char* k, const char* fmt, auto... v) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("%s", k);
        ImGui::TableNextColumn();
        ImGui::Text(fmt, v...);
      };
      row("kernel", p.tile ? "%s, TILE %d" : "%s", p.kernel.c_str(), p.tile);
      row("shape", "%lld x %lld x %lld", (long long)p.m, (long long)p.n, (long long)p.k);
      row("input", "%s, seed %llu", to_string(p.input), (unsigned long long)p.seed);
      row("backend", "%s", r.backend.c_str());
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Spacing();
      row("median time", "%.4g ms", r.median_ms);
      row("samples", "%zu launches", r.times_ms.size());
      row("throughput", "%.3g TFLOP/s", r.tflops);
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Spacing();
      row("max abs err", "%.3e", r.error.max_abs_err);
      row("max rel err", "%.3e", r.error.max_rel_err);
      row("tolerance", "%.3e", r.error.tolerance);
      if (r.error.worst_row >= 0)
        row("worst at", "row %lld, col %lld", (long long)r.error.worst_row, (long long)r.error.worst_col);
      row("bad elements", "%lld", (long long)r.error.bad_elements);
      ImGui::EndTable();
    }
    ImGui::Spacing();
    const ImVec4 col = r.error.passed ? ImVec4(0.3f, 0.85f, 0.4f, 1) : ImVec4(1.0f, 0.35f, 0.3f, 1);
    ImGui::PushStyleColor(ImGuiCol_Text, col);
    ImGui::TextUnformatted(r.error.passed ? "PASS" : "FAIL");
    ImGui::PopStyleColor();
    ImGui::SameLine();
    ImGui::TextDisabled("vs %s", r.reference.c_str());
    ImGui::PushTextWrapPos(0);
    const KernelInfo* k = find_kernel(s.kernels, p.kernel);
    ImGui::TextDisabled(
        k && k->tf32 ? "Tolerance = (8 K eps32 + 4 sqrt(K) 2^-10) max|A| max|B|: TF32 inputs keep "
                       "10 mantissa bits, and their errors grow like sqrt(K)."
                     : "Tolerance = 8 K eps32 max|A| max|B|: grows with the depth K of each dot product.");
    ImGui::PopTextWrapPos();
    if (s.result->spec != s.settings.spec)
      ImGui::TextDisabled(s.busy ? "(a newer request is running)" : "(controls changed since this run)");
  }
};

}  // namespace

std::unique_ptr<Panel> make_result_panel() {
  return std::make_unique<ResultPanel>();
}

}  // namespace ts::ui
