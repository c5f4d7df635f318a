// Your kernel: a person's own kernel file, what TileScope understood of it (a small form to correct the
// parameters' roles, the tile symbol and the launch formulas), its build (compile errors at their lines,
// ptxas's registers, spills and shared memory per tile with theoretical occupancy, the compiler log and the
// PTX), and "Check with compute-sanitizer". The controller (user_kernel_controller.cpp) does the work; this
// panel edits AppState::user only.
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <sstream>

#include <imgui.h>
#include <imgui_stdlib.h>

#include "core/engine/gpu_catalog.hpp"
#include "ui/panels/panel.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

const char* role_name(ParamRole r) {
  switch (r) {
    case ParamRole::A:
      return "A (M x K)";
    case ParamRole::B:
      return "B (K x N)";
    case ParamRole::C:
      return "C (M x N)";
    case ParamRole::Value:
      return "value";
    case ParamRole::Unmapped:
      return "not mapped";
  }
  return "?";
}

std::string tiles_text(const std::vector<int>& t) {
  std::string s;
  for (int v : t) s += (s.empty() ? "" : ", ") + std::to_string(v);
  return s;
}

class KernelPanel final : public Panel {
 public:
  const char* name() const override { return "Your kernel"; }

 protected:
  void draw_content(AppState& s, FrameReport& out) override {
    UserKernelUi& u = s.user;
    out.panels[name()].state = u.active ? "file" : "empty";
    if (!u.active) {
      empty_state(s);
      return;
    }
    header(s);
    build_status(s);
    if (!u.problem.empty()) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(palette().bad, "%s", u.problem.c_str());
      ImGui::PopTextWrapPos();
    }
    form(s);
    resources(s);
    sanitizer(s);
    details(s);
  }

 private:
  void empty_state(AppState& s) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextUnformatted(
        "Bring your own kernel: a .cu file with a __global__ matrix multiplication, or a "
        "KernelBench answer (.py). TileScope reads its kernels, proposes the launch, compiles it "
        "with NVRTC, and runs it in a worker process (a kernel that faults or hangs cannot take "
        "the window down), with everything it shows for its own kernels.");
    ImGui::PopTextWrapPos();
    if (ImGui::Button("Open kernel...")) s.ask(rq::ChooseKernelFile{});
    ImGui::SameLine();
    text_muted_wrapped(
        "or drop a file on the window, or start with tilescope --kernel-file my.cu; examples are "
        "in examples/kernels/.");
  }

  void header(AppState& s) {
    UserKernelUi& u = s.user;
    text_fit(u.path, nullptr);
    text_fit(u.watch, u.file_missing ? &palette().warn : &palette().muted);
    if (u.kernels.size() > 1) {
      ImGui::AlignTextToFramePadding();
      ImGui::Text("%zu kernels:", u.kernels.size());
      ImGui::SameLine();
      ImGui::SetNextItemWidth(-1);
      if (ImGui::BeginCombo("##kernel", u.kernel.c_str())) {
        for (const auto& k : u.kernels)
          if (ImGui::Selectable(k.c_str(), k == u.kernel) && k != u.kernel) s.ask(rq::SwitchKernel{k});
        ImGui::EndCombo();
      }
    }
    if (!u.id.empty())
      text_fit("in the kernel list as \"yours: " + u.kernel + "\" (" + u.id + ")", &palette().muted);
    if (u.square_only)
      text_fit("It is told one size only (N), so it runs on square shapes: M = N = K.", &palette().warn);
  }

  void build_status(AppState& s) {
    UserKernelUi& u = s.user;
    switch (u.build) {
      case UserKernelUi::Build::None:
        break;
      case UserKernelUi::Build::Compiling:
        spinner("compiling", ImGui::GetFontSize() * 0.4f, true);
        ImGui::SameLine();
        ImGui::TextDisabled("compiling with NVRTC...");
        break;
      case UserKernelUi::Build::Ok:
        ImGui::TextColored(palette().good, "built");
        ImGui::SameLine();
        text_fit(u.build_message, &palette().muted);
        break;
      case UserKernelUi::Build::Failed: {
        ImGui::TextColored(palette().bad, "does not compile");
        ImGui::SameLine();
        ImGui::TextDisabled(u.id.empty() ? "(no build yet)" : "(the last good build stays in use)");
        int shown = 0;
        for (const auto& d : u.errors) {
          if (d.severity.find("error") == std::string::npos || ++shown > 8) continue;
          char label[64];
          std::snprintf(label, sizeof label, "line %d##err%d", d.line, shown);
          ImGui::PushStyleColor(ImGuiCol_Text, palette().bad);
          if (ImGui::SmallButton(label)) u.jump_to_line = d.line;
          ImGui::PopStyleColor();
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("Show line %d in Kernel source", d.line);
          ImGui::SameLine();
          ImGui::PushTextWrapPos(0);
          ImGui::TextUnformatted(d.message.c_str());
          ImGui::PopTextWrapPos();
        }
        if (shown == 0) {
          ImGui::PushTextWrapPos(0);
          ImGui::TextUnformatted(u.build_message.c_str());
          ImGui::PopTextWrapPos();
        }
        break;
      }
    }
  }

  void form(AppState& s) {
    UserKernelUi& u = s.user;
    UserKernelSpec& f = u.form;
    if (u.params.empty() || f.params.size() != u.params.size()) return;
    bool changed = false;
    ImGui::SeparatorText("Parameters");
    if (ImGui::BeginTable("params", 3, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_RowBg)) {
      ImGui::TableSetupColumn("declaration", ImGuiTableColumnFlags_WidthStretch, 2.0f);
      ImGui::TableSetupColumn("role", ImGuiTableColumnFlags_WidthStretch, 1.2f);
      ImGui::TableSetupColumn("value", ImGuiTableColumnFlags_WidthStretch, 1.0f);
      for (size_t i = 0; i < u.params.size(); ++i) {
        ImGui::PushID(int(i));
        const KernelParam& p = u.params[i];
        ParamBinding& b = f.params[i];
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::AlignTextToFramePadding();
        text_fit(p.decl, b.role == ParamRole::Unmapped ? &palette().bad : nullptr);
        if (ImGui::IsItemHovered() && !b.why.empty()) ImGui::SetTooltip("%s", b.why.c_str());
        ImGui::TableNextColumn();
        ImGui::SetNextItemWidth(-1);
        const bool pointer = p.kind == ParamType::F32Ptr;
        ImGui::BeginDisabled(p.kind == ParamType::Unsupported);
        if (ImGui::BeginCombo("##role", role_name(b.role))) {
          const ParamRole pointer_roles[] = {ParamRole::A, ParamRole::B, ParamRole::C};
          if (pointer) {
            for (ParamRole r : pointer_roles)
              if (ImGui::Selectable(role_name(r), b.role == r)) {
                b.role = r;
                b.why = "set in the form";
                changed = true;
              }
          } else if (ImGui::Selectable("value", b.role == ParamRole::Value)) {
            b.role = ParamRole::Value;
            if (b.value.empty()) b.value = "N";
            changed = true;
          }
          ImGui::EndCombo();
        }
        ImGui::EndDisabled();
        ImGui::TableNextColumn();
        if (b.role == ParamRole::Value) {
          ImGui::SetNextItemWidth(-1);
          if (ImGui::InputText("##value", &b.value)) changed = true;
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("A formula over M, N, K and TILE (e.g. K for wA)");
        } else if (p.kind == ParamType::Unsupported) {
          text_fit("cannot be filled", &palette().bad);
          if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", p.why.c_str());
        }
        ImGui::PopID();
      }
      ImGui::EndTable();
    }

    ImGui::SeparatorText("Tile and launch");
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Tile sets");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
    if (ImGui::BeginCombo("##symbol", f.tile_symbol.empty() ? "(the block only)" : f.tile_symbol.c_str())) {
      if (ImGui::Selectable("(the block only)", f.tile_symbol.empty())) {
        f.tile_symbol.clear();
        changed = true;
      }
      for (const auto& sym : u.symbols)
        if (ImGui::Selectable(sym.c_str(), sym == f.tile_symbol)) {
          f.tile_symbol = sym;
          changed = true;
        }
      ImGui::EndCombo();
    }
    help_marker(
        "The macro, constant or template parameter the Tile control sets (its value in the file is replaced "
        "for each build, on the same line).");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    if (m_tiles_serial != u.version || m_tiles_text.empty()) {
      m_tiles_text = tiles_text(f.tiles);
      m_tiles_serial = u.version;
    }
    if (ImGui::InputText("##tiles", &m_tiles_text,
                         ImGuiInputTextFlags_CharsDecimal | ImGuiInputTextFlags_CharsNoBlank))
      changed = true;
    if (ImGui::IsItemDeactivatedAfterEdit()) {
      std::vector<int> t;
      std::stringstream ss(m_tiles_text);
      std::string part;
      while (std::getline(ss, part, ','))
        if (!part.empty() && part.size() < 5) t.push_back(std::stoi(part));
      if (!t.empty()) {
        std::sort(t.begin(), t.end());
        t.erase(std::unique(t.begin(), t.end()), t.end());
        f.tiles = t;
        if (std::find(t.begin(), t.end(), f.default_tile) == t.end()) f.default_tile = t[0];
      }
    }
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("The Tile control's values, comma-separated");
    const char* axis[3] = {"x", "y", "z"};
    auto formulas = [&](const char* what, std::array<std::string, 3>& v) {
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted(what);
      const float w = (ImGui::GetContentRegionAvail().x - ImGui::GetFontSize() * 3.5f) / 3.0f;
      for (int i = 0; i < 3; ++i) {
        ImGui::SameLine(i == 0 ? ImGui::GetFontSize() * 3.5f : 0.0f);
        ImGui::SetNextItemWidth(w - ImGui::GetStyle().ItemSpacing.x);
        ImGui::PushID(what);
        ImGui::PushID(i);
        if (ImGui::InputText("##f", &v[size_t(i)])) changed = true;
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("%s %s: integers, + - * /, ceil, floor, min, max, M N K TILE", what, axis[i]);
        ImGui::PopID();
        ImGui::PopID();
      }
    };
    formulas("grid", f.grid);
    formulas("block", f.block);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("smem");
    ImGui::SameLine(ImGui::GetFontSize() * 3.5f);
    ImGui::SetNextItemWidth(-1);
    if (ImGui::InputText("##smem", &f.smem)) changed = true;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Dynamic shared memory per block, in bytes (a formula)");
    // What the formulas give for the problem in the Controls panel.
    const ProblemSpec& p = s.settings.spec;
    const int tile = p.kernel == u.id ? p.tile : f.default_tile;
    try {
      const LaunchGeometry g = launch_geometry(f, ExprVars{p.m, p.n, p.k, tile});
      char b[200];
      std::snprintf(b, sizeof b,
                    "at %" PRId64 " x %" PRId64 " x %" PRId64 ", TILE %d: grid %" PRId64 " x %" PRId64
                    " x %" PRId64 ", block %" PRId64 " x %" PRId64 " x %" PRId64 " (%" PRId64
                    " threads), %" PRId64 " B dynamic",
                    p.m, p.n, p.k, tile, g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1], g.block[2],
                    g.threads(), g.smem);
      text_fit(b, &palette().muted);
    } catch (const ValidationError& e) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(palette().bad, "%s", e.what());
      ImGui::PopTextWrapPos();
    }
    int orient = f.x_covers_rows ? 1 : 0;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("blockIdx.x walks along");
    ImGui::SameLine();
    if (ImGui::RadioButton("columns (N)", &orient, 0)) changed = true;
    ImGui::SameLine();
    if (ImGui::RadioButton("rows (M)", &orient, 1)) changed = true;
    f.x_covers_rows = orient == 1;
    float hang = float(f.hang_limit_s);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    if (ImGui::SliderFloat("hang limit", &hang, 0.5f, 60.0f, "%.1f s", ImGuiSliderFlags_Logarithmic)) {
      f.hang_limit_s = hang;
      changed = true;
    }
    help_marker(
        "The watchdog stops the worker when a launch runs this long beyond its expected time (then the "
        "worker is restarted and the window says what happened).");
    float compile = float(f.compile_limit_s);
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
    if (ImGui::SliderFloat("compile limit", &compile, float(kMinCompileLimitS), float(kMaxCompileLimitS),
                           "%.0f s", ImGuiSliderFlags_Logarithmic)) {
      f.compile_limit_s = compile;
      changed = true;
    }
    help_marker(
        "NVRTC compiles in a process of its own: a build that takes longer than this is stopped, and the "
        "window says so. A crash of NVRTC (a source nested too deeply, say) ends only that process.");
    ImGui::SameLine();
    if (ImGui::Checkbox("TF32", &f.tf32)) changed = true;
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Check with the TF32 tolerance (a kernel on TF32 tensor cores)");
    m_dirty = m_dirty || changed;
    ImGui::BeginDisabled(!m_dirty);
    if (ImGui::Button("Apply")) {
      s.ask(rq::ApplyKernelForm{});
      m_dirty = false;
    }
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("Build and run with these roles and formulas");
    ImGui::SameLine();
    if (ImGui::Button("Reset to TileScope's guess")) {
      s.ask(rq::ResetKernelForm{});
      m_dirty = false;
    }
  }

  void resources(AppState& s) {
    UserKernelUi& u = s.user;
    if (u.id.empty()) return;
    ImGui::SeparatorText("Resources per tile (ptxas)");
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("occupancy on");
    ImGui::SameLine();
    ImGui::SetNextItemWidth(-1);
    const std::string current = u.gpu_choice.empty()
                                    ? (s.backend_kind() == "cuda" ? "this GPU" : "NVIDIA H100 (catalog)")
                                    : find_gpu(u.gpu_choice).name;
    if (ImGui::BeginCombo("##gpu", current.c_str())) {
      if (ImGui::Selectable(s.backend_kind() == "cuda" ? "this GPU" : "NVIDIA H100 (catalog)",
                            u.gpu_choice.empty()))
        u.gpu_choice.clear();
      for (const auto& g : gpu_catalog())
        if (ImGui::Selectable((g.name + " (sm_" + std::to_string(g.sm) + ")").c_str(), u.gpu_choice == g.id))
          u.gpu_choice = g.id;
      ImGui::EndCombo();
    }
    if (s.jobs.has(kJobBuildTiles) && u.tiles.empty()) {
      ImGui::TextDisabled("compiling every tile...");
      return;
    }
    if (ImGui::BeginTable("tiles", 7, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
      for (const char* h : {"tile", "regs", "smem st+dyn", "spill", "threads", "blocks/SM", "limited by"})
        ImGui::TableSetupColumn(h);
      ImGui::TableHeadersRow();
      for (const auto& t : u.tiles) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::Text("%d", t.tile);
        if (!t.ok) {
          ImGui::TableNextColumn();
          ImGui::TextColored(palette().bad, "%s", t.error.c_str());
          continue;
        }
        ImGui::TableNextColumn();
        ImGui::Text("%d", t.res.regs);
        ImGui::TableNextColumn();
        ImGui::Text("%d+%" PRId64, t.res.static_smem, t.dynamic_smem);
        ImGui::TableNextColumn();
        if (t.res.spill_stores > 0)
          ImGui::TextColored(palette().warn, "%d B", t.res.spill_stores);
        else
          ImGui::TextUnformatted("0");
        ImGui::TableNextColumn();
        ImGui::Text("%d", t.threads);
        ImGui::TableNextColumn();
        if (t.occupancy_ok)
          ImGui::Text("%d (%.0f %%)", t.occupancy.blocks_per_sm, 100 * t.occupancy.occupancy);
        else
          ImGui::TextColored(palette().bad, "-");
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(t.occupancy_ok ? t.occupancy.limiter.c_str() : t.error.c_str());
      }
      ImGui::EndTable();
    }
    text_fit("registers and static shared memory from ptxas (sm_" + std::to_string(u.arch) +
                 "); occupancy THEORETICAL on " + (u.gpu_name.empty() ? std::string("?") : u.gpu_name),
             &palette().muted);
  }

  void sanitizer(AppState& s) {
    UserKernelUi& u = s.user;
    if (u.id.empty()) return;
    ImGui::SeparatorText("compute-sanitizer");
    ImGui::Checkbox("Check each new build under compute-sanitizer first", &s.settings.memcheck_new_builds);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "Before a new build of your kernel runs on the GPU, it runs once under compute-sanitizer memcheck "
          "at "
          "a small shape like yours (each side at most 511, the same partial tiles). An out-of-bounds access "
          "is then reported with its line and the kernel is not run, instead of faulting the GPU: after a "
          "fault, OpenGL on an NVIDIA GPU can draw wrong pictures until the GPU is reset. Costs a few "
          "seconds "
          "per new build; it cannot catch what only happens at large shapes.");
    ImGui::BeginDisabled(s.jobs.has(kJobSanitize) || s.backend_kind() != "cuda");
    if (ImGui::Button("Check with compute-sanitizer")) s.ask(rq::SanitizeKernel{});
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(
          s.backend_kind() == "cuda"
              ? "Runs the kernel once under memcheck (out-of-bounds and misaligned accesses) and racecheck "
                "(shared-memory races, e.g. a missing __syncthreads()) in a worker of its own"
              : "compute-sanitizer runs the kernel: it needs a GPU");
    ImGui::SameLine();
    spinner("sanitizing", ImGui::GetFontSize() * 0.4f, s.jobs.has(kJobSanitize));
    for (const auto& r : u.reports) {
      const bool clean = r.ran && r.issues == 0;
      ImGui::PushID(r.tool.c_str());
      ImGui::TextColored(clean ? palette().good : palette().bad, "%s", r.tool.c_str());
      ImGui::SameLine();
      text_fit((r.ran ? r.summary : r.problem) + " (" + r.shape + ", " + std::to_string(int(r.seconds)) +
               " s)");
      if (ImGui::TreeNode("report")) {
        ImGui::PushFont(mono_font());
        std::string out = r.output;
        ImGui::InputTextMultiline("##out", &out, ImVec2(-1, ImGui::GetTextLineHeight() * 14),
                                  ImGuiInputTextFlags_ReadOnly);
        ImGui::PopFont();
        ImGui::TreePop();
      }
      ImGui::PopID();
    }
  }

  void details(AppState& s) {
    UserKernelUi& u = s.user;
    if (!u.notes.empty() && ImGui::CollapsingHeader("Guesses and what NVRTC does not get")) {
      for (const auto& n : u.notes) {
        ImGui::Bullet();
        ImGui::PushTextWrapPos(0);
        ImGui::TextUnformatted(n.c_str());
        ImGui::PopTextWrapPos();
      }
    }
    if (!u.log.empty() && ImGui::CollapsingHeader("Compiler log (NVRTC and ptxas)")) {
      ImGui::PushFont(mono_font());
      std::string log = u.log;
      ImGui::InputTextMultiline("##log", &log, ImVec2(-1, ImGui::GetTextLineHeight() * 12),
                                ImGuiInputTextFlags_ReadOnly);
      ImGui::PopFont();
    }
    if (!u.ptx.empty() && ImGui::CollapsingHeader("PTX")) {
      ImGui::PushFont(mono_font());
      ImGui::InputTextMultiline("##ptx", &u.ptx, ImVec2(-1, ImGui::GetTextLineHeight() * 20),
                                ImGuiInputTextFlags_ReadOnly);
      ImGui::PopFont();
    }
  }

  bool m_dirty = false;
  std::string m_tiles_text;
  uint64_t m_tiles_serial = ~0ull;
};

}  // namespace

std::unique_ptr<Panel> make_kernel_panel() {
  return std::make_unique<KernelPanel>();
}

}  // namespace ts::ui
