// Sweep: many sizes x kernels x tiles in one go. N from, to and step (or powers of two), optionally every
// size
// + an offset (a partial tile at every size), square or with M or K fixed, the configurations from the
// registry, the measuring policy (all remembered for the next launch: Settings::sweep); then a progress bar
// with the point in flight and the time left, and Cancel (the finished points stay). The sweep runs on a
// thread of its own (SweepRunner, started by app.cpp); its points land in the session and fill Timings and
// Roofline. Every field is checked before anything runs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>

#include <imgui.h>

#include "ui/panels/panel.hpp"
#include "ui/plots/plots.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

class SweepPanel final : public Panel {
 public:
  const char* name() const override { return "Sweep"; }

 protected:
  void draw_content(AppState& s, FrameReport& out) override {
    if (!m_init) init(s);
    const bool running = s.sweeping();
    out.panels[name()].state = to_string(s.sweep_progress.state);
    // Start / Cancel and where the sweep stands, first: they are what matters while it runs.
    ImGui::BeginDisabled(running);
    if (ImGui::Button("Start sweep")) start(s);
    ImGui::EndDisabled();
    same_line_if_fits(button_width("Cancel"));
    ImGui::BeginDisabled(!running);
    if (ImGui::Button("Cancel")) s.ask(rq::CancelSweep{});
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip("Stops after the current sample; the finished points are kept");
    if (!m_error.empty()) {
      ImGui::PushTextWrapPos(0);
      ImGui::TextColored(palette().bad, "%s", m_error.c_str());
      ImGui::PopTextWrapPos();
    }
    progress(s);
    ImGui::BeginDisabled(running);
    if (s.engines.size() > 1) {
      // Several engines (File > Connect to engine...): where the plan runs.
      ImGui::SeparatorText("Devices");
      int where = int(m_where);
      ImGui::RadioButton("this device", &where, int(SweepWhere::ThisDevice));
      ImGui::RadioButton("every connected device", &where, int(SweepWhere::EveryDevice));
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Every point on each device, each under its own bench policy, into its own session: "
            "the curves and the ladder show the devices side by side");
      ImGui::RadioButton("split across identical devices", &where, int(SweepWhere::SplitIdentical));
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "The devices identical to this one take the points one at a time, to finish "
            "sooner; every point goes into this device's session");
      m_where = SweepWhere(where);
    }
    ImGui::SeparatorText("Sizes");
    field("from", m_from, sizeof m_from);
    field("to", m_to, sizeof m_to);
    ImGui::RadioButton("step", &m_spacing, 0);
    if (m_spacing == 0) {
      ImGui::SameLine();
      ImGui::SetNextItemWidth(-FLT_MIN);
      ImGui::InputText("##step", m_step, sizeof m_step, ImGuiInputTextFlags_CharsNoBlank);
    }
    ImGui::RadioButton("powers of two (x2)", &m_spacing, 1);
    ImGui::Checkbox("also + offset", &m_ragged_on);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("Every size s also as s + offset: a partial tile at every size (ragged shapes)");
    if (m_ragged_on) {
      ImGui::SameLine();
      ImGui::SetNextItemWidth(-FLT_MIN);
      ImGui::InputText("##ragged", m_ragged, sizeof m_ragged, ImGuiInputTextFlags_CharsNoBlank);
    }
    ImGui::SeparatorText("Shape");
    ImGui::RadioButton("M = N = K", &m_shape, 0);
    ImGui::RadioButton("M fixed, N = K", &m_shape, 1);
    ImGui::RadioButton("K fixed, M = N", &m_shape, 2);
    if (m_shape != 0) field(m_shape == 1 ? "M" : "K", m_fixed, sizeof m_fixed);

    ImGui::SeparatorText("Kernels");
    for (const auto& k : s.kernels()) {
      if (!sweepable(s, k)) continue;
      ImGui::PushID(k.id.c_str());
      if (k.tiles.empty()) {
        bool on = m_chosen.count({k.id, 0}) > 0;
        if (ImGui::Checkbox(k.id.c_str(), &on)) toggle({k.id, 0}, on);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", k.description.c_str());
      } else {
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted(k.id.c_str());
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", k.description.c_str());
        for (int t : k.tiles) {
          char label[24];
          std::snprintf(label, sizeof label, "%d##t%d", t, t);
          same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize(label, nullptr, true).x +
                            ImGui::GetStyle().ItemInnerSpacing.x);
          bool on = m_chosen.count({k.id, t}) > 0;
          if (ImGui::Checkbox(label, &on)) toggle({k.id, t}, on);
        }
      }
      ImGui::PopID();
    }

    ImGui::SeparatorText("Measuring");
    int quick = s.sweep_quick ? 1 : 0;
    ImGui::RadioButton("bench", &quick, 0);
    if (ImGui::IsItemHovered()) {
      const MeasurePolicy b = s.bench_policy();
      // The device's own: nvbench-style on a GPU; on a CPU a noise target it reaches and a cap in launches.
      ImGui::SetTooltip(
          "%s: warm-up, at least %d samples and the seconds below per point, until the noise is under "
          "%.3g %% (or %d samples, or the time below)",
          s.backend_kind() == "cuda" ? "nvbench-style" : "CPU benchmark", b.min_samples, 100 * b.max_noise,
          std::min(b.max_samples, int(AppState::kWindowSweepMaxSamples)));
    }
    same_line_if_fits(ImGui::GetFrameHeight() + ImGui::CalcTextSize("quick").x +
                      ImGui::GetStyle().ItemInnerSpacing.x);
    ImGui::RadioButton("quick", &quick, 1);
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip("The window's policy: a few samples per point, a fast look");
    s.sweep_quick = quick == 1;
    if (!s.sweep_quick) {
      text_muted_wrapped("seconds per point:");
      field("at least", m_min_s, sizeof m_min_s);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip("Seconds of kernel time per point (and at least %d samples)",
                          s.bench_policy().min_samples);
      field("at most", m_max_s, sizeof m_max_s);
      if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "Seconds per point before giving up on the noise target: a bound on the sweep's time");
    }
    ImGui::Checkbox("changing inputs", &s.settings.changing_inputs);
    if (ImGui::BeginItemTooltip()) {  // wrapped: a sentence, not one line across the screen
      ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30.0f);
      ImGui::Text(
          "Every measurement of this window (Run, sweeps, tile searches) is also timed on %d sets of A and B "
          "that change between samples, and C is checked against their reference: a kernel that caches its "
          "answer fails. The Result panel shows both timings.",
          MeasurePolicy::kChangingInputSets);
      ImGui::PopTextWrapPos();
      ImGui::EndTooltip();
    }
    if (s.backend_kind() != "cuda") {
      // No SMs here: the wave marks are those a catalog GPU would show, and say so.
      ImGui::AlignTextToFramePadding();
      ImGui::TextUnformatted("marks for");
      ImGui::SameLine();
      ImGui::SetNextItemWidth(-FLT_MIN);
      const GpuModel gpu = calculator_gpu(s);
      if (ImGui::BeginCombo("##gpu", gpu.name.c_str())) {
        for (const auto& g : gpu_catalog())
          if (ImGui::Selectable(g.name.c_str(), g.id == gpu.id)) s.marks_gpu = g.id;
        ImGui::EndCombo();
      }
      text_muted_wrapped(
          "Wave marks on the CPU backend are THEORETICAL: where this GPU's grid would need one "
          "more wave (build-time registers, no GPU used).");
    }
    ImGui::EndDisabled();
    remember(s);
  }

 private:
  // A kernel the panel lists (and a sweep may take): one this backend runs, not a teaching variant.
  static bool sweepable(const AppState& s, const KernelInfo& k) {
    const bool usable = k.runs_on(s.backend_kind());
    return usable && !k.teaching;
  }

  void init(AppState& s) {
    m_init = true;
    if (s.settings.sweep) {  // as the panel was left at the last launch
      const SweepSettings& w = *s.settings.sweep;
      std::snprintf(m_from, sizeof m_from, "%lld", (long long)w.from);
      std::snprintf(m_to, sizeof m_to, "%lld", (long long)w.to);
      std::snprintf(m_step, sizeof m_step, "%lld", (long long)w.step);
      std::snprintf(m_fixed, sizeof m_fixed, "%lld", (long long)w.fixed);
      std::snprintf(m_ragged, sizeof m_ragged, "%d", w.offset);
      m_spacing = w.powers_of_two ? 1 : 0;
      m_ragged_on = w.offset_on;
      m_shape = w.shape == SweepShape::Square ? 0 : w.shape == SweepShape::FixedM ? 1 : 2;
      // Configurations this backend does not list (another machine's, a kernel file not built yet) stay
      // remembered; a sweep takes only those the panel shows.
      for (const KernelTile& c : w.configs) m_chosen.insert({c.kernel, c.tile});
      s.sweep_quick = w.quick;
      std::snprintf(m_min_s, sizeof m_min_s, "%g", w.min_s);
      std::snprintf(m_max_s, sizeof m_max_s, "%g", w.max_s);
      s.sweep_min_s = w.min_s;
      s.sweep_max_s = w.max_s;
      return;
    }
    const bool cpu = s.backend_kind() != "cuda";
    std::snprintf(m_from, sizeof m_from, "%s", cpu ? "32" : "256");
    std::snprintf(m_to, sizeof m_to, "%s", cpu ? "256" : "8192");
    std::snprintf(m_step, sizeof m_step, "%s", cpu ? "32" : "256");
    std::snprintf(m_fixed, sizeof m_fixed, "%s", cpu ? "128" : "4096");
    std::snprintf(m_ragged, sizeof m_ragged, "1");
    std::snprintf(m_min_s, sizeof m_min_s, "%g", s.sweep_min_s);  // the device's bench policy
    std::snprintf(m_max_s, sizeof m_max_s, "%g", s.sweep_max_s);
    const ProblemSpec& p = s.settings.spec;
    m_chosen.insert({p.kernel, p.tile});
    if (!cpu) m_chosen.insert({"cublas", 0});
  }

  void toggle(const std::pair<std::string, int>& c, bool on) {
    if (on)
      m_chosen.insert(c);
    else
      m_chosen.erase(c);
  }

  // A label and a text field filling the rest of the line.
  void field(const char* label, char* buf, size_t size) {
    ImGui::PushID(label);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(label);
    ImGui::SameLine(ImGui::GetFontSize() * 4.2f);
    ImGui::SetNextItemWidth(-FLT_MIN);
    ImGui::InputText("##v", buf, size, ImGuiInputTextFlags_CharsNoBlank);
    ImGui::PopID();
  }

  // Every field checked here (names the field and the value); the sizes, shape and point limits by app/core.
  void start(AppState& s) {
    m_error.clear();
    try {
      SweepSpec sp;
      const int64_t from = parse_dim(m_from, "sweep 'from'"), to = parse_dim(m_to, "sweep 'to'");
      if (from > to)
        throw ValidationError("sweep 'from' = " + std::to_string(from) +
                              " is larger than 'to' = " + std::to_string(to));
      std::string sizes = std::to_string(from) + ":" + std::to_string(to) + ":";
      if (m_spacing == 0)
        sizes += std::to_string(parse_dim(m_step, "sweep 'step'"));
      else
        sizes += "x2";
      sp.sizes = parse_sizes(sizes);
      if (m_ragged_on) {
        const int64_t r = parse_dim(m_ragged, "sweep offset");
        if (r > 1024) throw ValidationError("sweep offset = " + std::to_string(r) + " is above 1024");
        sp.ragged = int(r);
      }
      if (m_shape != 0) {
        sp.shape = m_shape == 1 ? SweepShape::FixedM : SweepShape::FixedK;
        sp.fixed = parse_dim(m_fixed, m_shape == 1 ? "fixed M" : "fixed K");
      }
      for (const auto& k : s.kernels())  // registry order, as listed
        if (sweepable(s, k))
          for (int t : k.tiles.empty() ? std::vector<int>{0} : k.tiles)
            if (m_chosen.count({k.id, t})) sp.configs.push_back({k.id, t});
      if (sp.configs.empty()) throw ValidationError("choose at least one kernel x tile to sweep");
      const ProblemSpec& p = s.settings.spec;
      sp.input = p.input == InputKind::File ? InputKind::Random : p.input;
      sp.seed = p.seed;
      expand_sweep(sp);  // the point limit and the shape, before asking the engine
      if (!s.sweep_quick) {
        const double lo = seconds(m_min_s, "'at least'"), hi = seconds(m_max_s, "'at most'");
        if (lo > hi)
          throw ValidationError("'at least' " + std::string(m_min_s) + " s is more than 'at most' " +
                                m_max_s + " s");
        s.sweep_min_s = lo;
        s.sweep_max_s = hi;
      }
      s.ask(rq::StartSweep{sp, s.engines.size() > 1 ? m_where : SweepWhere::ThisDevice});
    } catch (const ValidationError& e) {
      m_error = e.what();
      s.say(Severity::Warning, std::string("sweep refused: ") + e.what());
    }
  }

  // The fields into the settings (remembered for the next launch): each one as last valid.
  void remember(AppState& s) {
    SweepSettings w = s.settings.sweep.value_or(SweepSettings{});
    auto dim = [](const char* text, int64_t* out) {
      try {
        *out = parse_dim(text, "");
      } catch (const ValidationError&) {
      }
    };
    dim(m_from, &w.from);
    dim(m_to, &w.to);
    dim(m_step, &w.step);
    dim(m_fixed, &w.fixed);
    int64_t offset = 0;
    dim(m_ragged, &offset);
    if (offset >= 1 && offset <= 1024) w.offset = int(offset);
    w.powers_of_two = m_spacing == 1;
    w.offset_on = m_ragged_on;
    w.shape = m_shape == 0 ? SweepShape::Square : m_shape == 1 ? SweepShape::FixedM : SweepShape::FixedK;
    w.configs.clear();
    for (const auto& [kernel, tile] : m_chosen)
      if (w.configs.size() < SweepSettings::kMaxSweepConfigs) w.configs.push_back({kernel, tile});
    w.quick = s.sweep_quick;
    for (auto [text, field] : {std::pair<const char*, double*>{m_min_s, &w.min_s}, {m_max_s, &w.max_s}}) try {
        *field = seconds(text, "");
      } catch (const ValidationError&) {
      }
    if (s.settings.sweep != w) s.settings.sweep = w;
  }

  // A positive number of seconds (up to an hour), or ValidationError naming the field.
  static double seconds(const char* text, const char* what) {
    return parse_seconds(text, std::string("sweep ") + what, 0, 3600);
  }

  void progress(AppState& s) {
    const SweepProgress& p = s.sweep_progress;
    if (p.state == SweepProgress::State::Idle) {
      text_muted_wrapped(
          "Each point is verified, then measured; the results fill Timings and Roofline and stay "
          "in the session.");
      return;
    }
    char over[64];
    std::snprintf(over, sizeof over, "%d / %d", p.done, p.total);
    ImGui::ProgressBar(float(p.fraction()), ImVec2(-FLT_MIN, 0), over);
    std::string line;
    if (p.running()) {
      if (p.in_flight)
        line = "measuring " + KernelTile{p.in_flight->kernel, p.in_flight->tile}.label() + " at " +
               std::to_string(p.in_flight->m) + " x " + std::to_string(p.in_flight->n) + " x " +
               std::to_string(p.in_flight->k) + "; ";
      line += format_duration(p.elapsed_s) + " so far, " + describe_time_left(p) +
              ". While a kernel is timed the window redraws 4 times a second, so that drawing does not "
              "slow the kernel it measures.";
    } else if (p.state == SweepProgress::State::Done) {
      line = "done: " + std::to_string(p.done) + " points in " + format_duration(p.elapsed_s);
    } else if (p.state == SweepProgress::State::Cancelled) {
      line = cancelled_note(p.done - p.failed);
    }
    if (p.failed > 0) line += " (" + std::to_string(p.failed) + " without a result: see Messages)";
    if (!line.empty()) text_muted_wrapped(line.c_str());
    if (p.state == SweepProgress::State::Refused) text_lines("refused: " + p.error, &palette().bad);
  }

  bool m_init = false;
  char m_from[16] = "", m_to[16] = "", m_step[16] = "", m_fixed[16] = "", m_ragged[16] = "";
  char m_min_s[16] = "0.5", m_max_s[16] = "10";
  int m_spacing = 0, m_shape = 0;
  SweepWhere m_where = SweepWhere::ThisDevice;
  bool m_ragged_on = false;
  std::set<std::pair<std::string, int>> m_chosen;
  std::string m_error;
};

}  // namespace

std::unique_ptr<Panel> make_sweep_panel() {
  return std::make_unique<SweepPanel>();
}

}  // namespace ts::ui
