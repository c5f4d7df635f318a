// Controls: the problem (M, N, K, kernel, tile, inputs, seed) and when to run it. A size changes the problem
// only when it is committed (the slider let go, Enter pressed or the field left), so one gesture is one run.
#include <algorithm>
#include <array>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <string>

#include <imgui.h>

#include "core/base/text_wrap.hpp"
#include "core/engine/input_gen.hpp"
#include "core/engine/matrix.hpp"
#include "ui/panels/panel.hpp"
#include "ui/shortcuts.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

// What the Seed field seeds (input_gen.hpp: seeded_matrices), for its tooltip.
std::string seed_tooltip(int seeded, const char* input) {
  if (seeded == (kSeedsA | kSeedsB))
    return std::string("Seeds A and B (") + input +
           "): the same seed gives the same matrices, on the GPU and on the CPU.";
  if (seeded == kSeedsB)
    return std::string("Seeds B (") + input + ": A is the identity, B is random), so C reproduces B.";
  if (seeded == kSeedsA) return std::string("Seeds A (") + input + ").";
  return std::string("Nothing to seed: ") + input +
         (std::strcmp(input, "files") == 0 ? " are read as they are." : " inputs have no random element.");
}

const char* dim_name(Dim d) {
  return d == Dim::M ? "M" : d == Dim::N ? "N" : "K";
}

// The device runs go to, chosen like the kernel (shown once the window has more than one engine: File >
// Connect to engine...). Each row: the device and the engine that reaches it.
void device_row(AppState& s) {
  ImGui::SeparatorText("Device");
  const AppState::EngineRow* cur = s.current_engine();
  auto label = [](const AppState::EngineRow& e) {
    return e.device + " - " + e.name + (e.lost.empty() ? "" : " (lost)");
  };
  ImGui::SetNextItemWidth(-1);
  if (ImGui::BeginCombo("##device", cur ? label(*cur).c_str() : "")) {
    for (const AppState::EngineRow& e : s.engines) {
      ImGui::PushID(int(e.id));
      if (ImGui::Selectable(label(e).c_str(), e.current) && !e.current) s.ask(rq::ChooseEngine{e.id});
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("%s", e.command.empty() ? "this machine's own engine" : e.command.c_str());
      ImGui::PopID();
    }
    ImGui::Separator();
    if (ImGui::Selectable("Connect to engine...")) s.connect.open = true;
    ImGui::EndCombo();
  }
}

class ControlsPanel final : public Panel {
 public:
  const char* name() const override { return "Controls"; }

 protected:
  void draw_content(AppState& s, FrameReport& /*out*/) override {
    ProblemSpec& p = s.settings.spec;
    const bool files = p.input == InputKind::File && s.file_a && s.file_b;
    if (s.engines.size() > 1) device_row(s);
    ImGui::SeparatorText("Shape");
    text_fit("C (M x N) = A (M x K) B (K x N)", &palette().muted);
    ImGui::BeginDisabled(files);
    // On: M and K follow N. Off stays off unless the kernel is told one size only.
    if (ImGui::Checkbox("Square (M = N = K)", &s.settings.square)) keep_square(s);
    const KernelInfo* cur = current_kernel(s);
    const int step = cur && !cur->tiles.empty() && p.tile > 0 ? p.tile : 8;
    if (s.settings.square) {
      dim_row(s, Dim::N, step);
    } else {
      for (Dim d : {Dim::M, Dim::N, Dim::K}) dim_row(s, d, step);
    }
    ImGui::EndDisabled();
    if (files) text_muted_wrapped("The sizes come from the .npy files (File > Open A and B).");
    if (!m_error.empty()) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(palette().bad, "%s", m_error.c_str());
      ImGui::PopTextWrapPos();
    }

    ImGui::SeparatorText("Kernel");
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##kernel", cur ? cur->label().c_str() : p.kernel.c_str(),
                          ImGuiComboFlags_HeightLarge)) {
      bool teaching_shown = false, user_shown = false;
      for (const auto& k : s.kernels()) {
        if (k.teaching && !teaching_shown) {
          ImGui::SeparatorText("broken on purpose");
          teaching_shown = true;
        }
        if (k.user && !user_shown) {
          ImGui::SeparatorText("yours");
          user_shown = true;
        }
        const bool usable = k.runs_on(s.backend_kind());
        ImGui::BeginDisabled(!usable);
        // Under "broken on purpose" the teaching variants need no word of their role: their titles suffice.
        if (ImGui::Selectable(k.teaching ? k.title.c_str() : k.label().c_str(), k.id == p.kernel)) {
          p.kernel = k.id;
          if (!k.tiles.empty() && std::find(k.tiles.begin(), k.tiles.end(), p.tile) == k.tiles.end())
            p.tile = k.default_tile;
          keep_square(s);  // a kernel told one size only runs on square shapes
        }
        ImGui::EndDisabled();
        if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) {
          ImGui::BeginTooltip();
          ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
          ImGui::TextUnformatted(k.description.c_str());
          if (!usable) ImGui::TextDisabled("(not available on the %s backend)", s.backend_kind().c_str());
          ImGui::PopTextWrapPos();
          ImGui::EndTooltip();
        }
      }
      ImGui::EndCombo();
    }
    cur = current_kernel(s);
    if (cur) {
      // The first sentence, the rest on request: a paragraph of measurements would push the tile and the Run
      // button below a laptop's screen.
      const auto [head, rest] = first_sentence(cur->description);
      text_muted_wrapped(m_description_open ? cur->description.c_str() : head.c_str());
      if (!rest.empty() &&
          ImGui::SmallButton(m_description_open ? "less##description" : "more...##description"))
        m_description_open = !m_description_open;
    }

    // The tile parameter: the values this kernel supports, each standing for its block / warp / thread tiles.
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Tile");
    if (!cur || cur->tiles.empty()) {
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
      // Wrapped, not cut: the block, warp and thread tiles are the point of the choice (a long one, such as
      // wgmma_tf32 tile 512's, ended in "..." at 1366 wide).
      text_muted_wrapped(cur->tile_label(p.tile).c_str());
    }

    ImGui::SeparatorText("Inputs");
    const float label_w = ImGui::CalcTextSize("Input").x + ImGui::GetStyle().ItemInnerSpacing.x;
    ImGui::SetNextItemWidth(-label_w - ImGui::GetStyle().ItemSpacing.x - ImGui::GetFontSize());
    const std::string input_label =
        files ? "files: " + s.file_a_name + ", " + s.file_b_name : to_string(p.input);
    if (ImGui::BeginCombo("Input", input_label.c_str())) {
      for (InputKind k : generated_input_kinds())
        if (ImGui::Selectable(to_string(k), k == p.input)) p.input = k;
      if (s.file_a && s.file_b &&
          ImGui::Selectable(("files: " + s.file_a_name + ", " + s.file_b_name).c_str(), files))
        p.input = InputKind::File;
      ImGui::EndCombo();
    }
    help_marker(
        "random: uniform in [-1, 1). symmetric: A and B symmetric (A B is still not symmetric unless they "
        "commute). identity: A = I, so C reproduces B. ones: every element 1, so C = K. ramp: A[i][j] = i "
        "and "
        "B[i][j] = j, so C[i][j] = K i j: row 0 is at the top and column 0 at the left of every map. Files: "
        "File > "
        "Open A and B (.npy).");
    // The seed matters wherever an input depends on it (identity: B is still random).
    const int seeded = files ? 0 : seeded_matrices(gen_kind(p.input));
    ImGui::BeginDisabled(seeded == 0);
    ImGui::SetNextItemWidth(-label_w - ImGui::GetStyle().ItemSpacing.x - ImGui::GetFontSize());
    uint64_t seed = p.seed;
    ImGui::InputScalar("Seed", ImGuiDataType_U64, &seed);
    if (ImGui::IsItemDeactivatedAfterEdit()) p.seed = seed;  // one run per committed seed
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("%s", seed_tooltip(seeded, files ? "files" : to_string(p.input)).c_str());

    ImGui::SeparatorText("Run");
    if (ImGui::Button("Run", ImVec2(ImGui::GetFontSize() * 5, 0))) s.ask(rq::Run{});
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Run the problem now (%s)", shortcut_label(Action::Run));
    ImGui::SameLine();
    ImGui::Checkbox("Auto-run", &s.settings.auto_run);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Run whenever a control's value is committed");
    ImGui::SameLine();
    ImGui::Checkbox("Repeat", &s.repeat);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Keep re-running the current problem (%s)", shortcut_label(Action::Repeat));
    ImGui::SameLine();
    spinner("busy", ImGui::GetFontSize() * 0.45f, s.busy());
    text_fit(s.busy() ? "running..." : "idle", &palette().muted);
  }

 private:
  // One dimension: a logarithmic slider that snaps (powers of two, multiples of the tile; Alt: any value) and
  // commits when let go, and a field to type an exact value (committed with Enter or when it loses focus).
  void dim_row(AppState& s, Dim d, int step) {
    ProblemSpec& p = s.settings.spec;
    const bool square = s.settings.square;
    int64_t* value = d == Dim::M ? &p.m : d == Dim::N ? &p.n : &p.k;
    const int64_t max = std::max<int64_t>(1, max_dim(s.capacity, square, d, p.m, p.n, p.k));
    const int64_t lo = std::min<int64_t>(16, max), hi = max;
    const int i = int(d);
    ImGui::PushID(i);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(dim_name(d));
    ImGui::SameLine(ImGui::GetFontSize() * 1.6f);
    const float field_w = ImGui::GetFontSize() * 4.2f;
    ImGui::SetNextItemWidth(std::max(ImGui::GetFontSize() * 4, ImGui::GetContentRegionAvail().x - field_w -
                                                                   ImGui::GetStyle().ItemSpacing.x));
    // The grab follows the hand (the raw value); the number shown, and committed, is the snapped one.
    if (!m_dragging[i]) m_draft[i] = std::clamp(*value, lo, hi);
    auto snapped = [&] {
      return ImGui::GetIO().KeyAlt ? m_draft[i] : snap_dim(double(m_draft[i]), step, lo, hi);
    };
    char shown[32];
    std::snprintf(shown, sizeof shown, "%" PRId64, m_dragging[i] ? snapped() : *value);
    ImGui::SliderScalar(
        "##slider", ImGuiDataType_S64, &m_draft[i], &lo, &hi, shown,
        ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_NoInput | ImGuiSliderFlags_AlwaysClamp);
    m_dragging[i] = ImGui::IsItemActive();
    if (ImGui::IsItemDeactivatedAfterEdit()) commit(s, d, snapped());
    if (ImGui::IsItemHovered() && !ImGui::IsItemActive()) {
      ImGui::BeginTooltip();
      ImGui::Text("%s from %" PRId64 " to %" PRId64 ": snaps to powers of two and multiples of %d",
                  dim_name(d), lo, hi, step);
      ImGui::TextDisabled("hold Alt for any value; a run starts when you let go");
      ImGui::TextDisabled("%s", s.capacity.what.empty() ? "" : ("limit: " + s.capacity.what).c_str());
      ImGui::EndTooltip();
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(field_w);
    if (!m_editing[i]) std::snprintf(m_text[i].data(), m_text[i].size(), "%" PRId64, *value);
    ImGui::InputText("##text", m_text[i].data(), m_text[i].size(),
                     ImGuiInputTextFlags_CharsDecimal | ImGuiInputTextFlags_AutoSelectAll);
    m_editing[i] = ImGui::IsItemActive();
    if (ImGui::IsItemDeactivatedAfterEdit()) {
      try {
        const int64_t v = parse_dim(m_text[i].data(), dim_name(d));
        if (v > hi) {
          char msg[256];
          std::snprintf(msg, sizeof msg, "%s = %" PRId64 " is refused: at most %" PRId64 " fits (%s)",
                        dim_name(d), v, hi, s.capacity.what.c_str());
          throw ValidationError(msg);
        }
        commit(s, d, v);
      } catch (const ValidationError& e) {
        m_error = e.what();
        s.say(Severity::Warning, m_error);
      }
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Type %s and press Enter", dim_name(d));
    ImGui::PopID();
  }

  void commit(AppState& s, Dim d, int64_t v) {
    ProblemSpec& p = s.settings.spec;
    m_error.clear();
    if (s.settings.square) {
      p.m = p.n = p.k = v;
    } else {
      (d == Dim::M ? p.m : d == Dim::N ? p.n : p.k) = v;
    }
  }

  std::array<int64_t, 3> m_draft{};
  std::array<bool, 3> m_dragging{}, m_editing{};
  std::array<std::array<char, 24>, 3> m_text{};
  std::string m_error;
  bool m_description_open = false;  // the kernel's whole description ("more..."), else its first sentence
};

}  // namespace

std::unique_ptr<Panel> make_controls_panel() {
  return std::make_unique<ControlsPanel>();
}

}  // namespace ts::ui
