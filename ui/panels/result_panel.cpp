// Result: the latest run's time, speed and accuracy against the reference; "worst at" jumps the error map to
// the worst element.
#include <algorithm>
#include <cinttypes>
#include <cstdio>

#include <imgui.h>

#include "core/plots/figure.hpp"
#include "ui/panels/panel.hpp"
#include "core/plots/rung_suggest.hpp"
#include "core/plots/tile_suggest.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

class ResultPanel final : public Panel {
 public:
  const char* name() const override { return "Result"; }

 protected:
  void draw_content(AppState& s, FrameReport& out) override {
    out.rung_line = RungLineReport{};
    if (!s.result) {
      ImGui::TextDisabled("%s", s.busy() ? "running..." : "no result yet: press Run (Space)");
      return;
    }
    const RunResult& r = *s.result;
    const auto& p = r.spec;
    const ImVec4 verdict = r.error.passed ? palette().good : palette().bad;
    ImGui::PushStyleColor(ImGuiCol_Text, verdict);
    ImGui::TextUnformatted(r.error.passed ? "PASS" : "FAIL");
    ImGui::PopStyleColor();
    ImGui::SameLine();
    text_fit("vs " + r.reference, &palette().muted);
    // A time faster than the device can go: said first, in the warning colour (impossible.hpp).
    if (r.is_impossible())
      text_lines(
          "IMPOSSIBLE: " + r.impossible +
              ". Not a record: Timings draws it as a hollow red circle, and no fastest tile or rung is "
              "chosen from it.",
          &palette().warn);
    char buf[256];
    if (begin_facts("result", {"median time", "bad elements", "max abs err", "throughput"})) {
      auto row = [&](const char* k, const std::string& v, const ImVec4* colour = nullptr) {
        fact(k, v, colour);
      };
      auto fmt = [&](const char* f, auto... v) {
        std::snprintf(buf, sizeof buf, f, v...);
        return std::string(buf);
      };
      row("kernel", p.tile ? fmt("%s, TILE %d", p.kernel.c_str(), p.tile) : p.kernel);
      row("shape", fmt("%" PRId64 " x %" PRId64 " x %" PRId64 " (M x N x K)", p.m, p.n, p.k));
      row("input", p.input == InputKind::File
                       ? std::string("files")
                       : fmt("%s, seed %llu", to_string(p.input), (unsigned long long)p.seed));
      row("backend", r.backend + ": " + r.device);
      row("median time", format_ms(r.median_ms()));  // the plots' units (figure.hpp): 74.7 us, 83.7 MFLOP/s
      row("samples", fmt("%zu launches", r.samples_ms.size()));
      row("throughput", format_flops(r.tflops() * 1e12) + (r.is_impossible() ? " (impossible)" : ""),
          r.is_impossible() ? &palette().warn : nullptr);
      if (r.changing.sets > 0) {  // the timing on inputs that change between samples, and what C showed
        const ChangingInputs& x = r.changing;
        if (x.measured())
          row("changing", fmt("inputs changed between samples: median %s over %d launches on %d sets of A "
                              "and B (%.2fx the "
                              "fixed inputs' time)",
                              format_ms(x.stats.median).c_str(), x.stats.count, x.sets,
                              r.median_ms() > 0 ? x.stats.median / r.median_ms() : 0.0));
        row(x.measured() ? "" : "changing", (x.passed ? "PASS: " : "FAIL: ") + x.verdict,
            x.passed ? nullptr : &palette().bad);
      }
      if (r.cublas_interleaved()) {
        const InterleavedReference& ref = r.interleaved;
        const bool differ = clocks_differ(r.clock, ref.clock);
        row("vs cuBLAS", fmt("%.1f %% of its speed (%s %.4g ms, timed interleaved)",
                             100.0 * ref.stats.median / r.median_ms(), ref.kernel.c_str(), ref.stats.median));
        if (r.clock.available && ref.clock.available)
          row("SM clocks",
              fmt("kernel %.0f MHz, cuBLAS %.0f MHz%s", r.clock.median_mhz, ref.clock.median_mhz,
                  differ ? ": differ by more than 1 %" : ""),
              differ ? &palette().bad : nullptr);
      } else if (r.reference_ms > 0) {
        row("vs cuBLAS",
            fmt("%.1f %% of its speed (cuBLAS timed on its own)", 100.0 * r.reference_ms / r.median_ms()));
      } else if (!r.interleaved_note.empty()) {
        row("vs cuBLAS", "not measured: " + r.interleaved_note);
      }
      tile_row(s, r);
      rung_row(s, r, out.rung_line);
      row("max abs err", fmt("%.3e", r.error.max_abs_err));
      row("max rel err", fmt("%.3e", r.error.max_rel_err));
      row("tolerance", fmt("%.3e", r.error.tolerance));
      row("bad elements", fmt("%" PRId64 " of %" PRId64, int64_t(r.error.bad_elements), p.m * p.n),
          r.error.bad_elements ? &palette().bad : nullptr);
      if (r.error.worst_row >= 0) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextDisabled("worst at");
        ImGui::TableNextColumn();
        const std::string where =
            fmt("row %" PRId64 ", col %" PRId64, int64_t(r.error.worst_row), int64_t(r.error.worst_col));
        if (ImGui::SmallButton(where.c_str())) {
          // Centre a window of about 64 x 64 elements (or the whole of a smaller C) on the worst element.
          const double rows = double(std::min<int64_t>(64, p.m)), cols = double(std::min<int64_t>(64, p.n));
          ZoomRequest z;
          z.rows = rows;
          z.cols = cols;
          z.row0 = std::clamp(double(r.error.worst_row) - rows / 2, 0.0, double(p.m) - rows);
          z.col0 = std::clamp(double(r.error.worst_col) - cols / 2, 0.0, double(p.n) - cols);
          z.all_maps = false;
          s.ask(rq::Zoom{z});
        }
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Zoom C and the error map to this element");
      }
      end_facts();
    }
    text_muted_wrapped(tolerance_formula(r.tf32));  // the precision this result was checked in
    if (r.spec != s.settings.spec)
      text_muted_wrapped(s.busy() ? "(a newer request is running)" : "(the controls changed since this run)");
  }

 private:
  // The fastest tile of this kernel at this shape, from the session's measurements (never a guess): the
  // summary, and a button that times the tiles not measured yet or one that switches to the fastest.
  void tile_row(AppState& s, const RunResult& r) {
    const KernelInfo* k = find_kernel(s.kernels(), r.spec.kernel);
    if (!k || k->tiles.size() < 2 || !r.timed) return;
    if (!m_tiles || m_tiles_serial != s.sessions_serial || m_tiles_spec != r.spec) {
      m_tiles = suggest_tile(s.sessions.current(), *k, r.spec);
      m_tiles_serial = s.sessions_serial;
      m_tiles_spec = r.spec;
    }
    const TileSuggestion& t = *m_tiles;
    fact("fastest tile", t.fastest ? "tile " + t.fastest_detail() : t.summary(),
         t.fastest && *t.fastest != r.spec.tile ? &palette().accent : nullptr);
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TableNextColumn();
    if (!t.missing.empty()) {
      ImGui::BeginDisabled(s.sweeping());
      // "Time all 3 tiles" where none has a point here, "Time the other 2 tiles" (the others measured, failed
      // or impossible), "Time tile 8" for one.
      const std::string label = t.missing.size() == 1 ? "Time tile " + std::to_string(t.missing.front())
                                : t.missing.size() == k->tiles.size()
                                    ? "Time all " + std::to_string(t.missing.size()) + " tiles"
                                    : "Time the other " + std::to_string(t.missing.size()) + " tiles";
      if (ImGui::SmallButton(label.c_str())) s.ask(rq::TimeTiles{tile_search_points(*k, r.spec, &t)});
      ImGui::EndDisabled();
      if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip(
            "Measure the tiles not timed at %lld x %lld x %lld yet (bench policy, like a sweep); "
            "the fastest is then named from the measurements",
            (long long)r.spec.m, (long long)r.spec.n, (long long)r.spec.k);
    } else if (t.fastest && *t.fastest != r.spec.tile) {
      const std::string label = "Use tile " + std::to_string(*t.fastest);
      if (ImGui::SmallButton(label.c_str())) {
        s.settings.spec.tile = *t.fastest;
        s.ask(rq::Run{});
      }
    } else {
      ImGui::TextDisabled("this is the fastest tile measured here");
    }
  }

  // Which rung for this shape: the fastest kernel and tile of the ladder at this shape and the result's
  // precision, from the session's points (rung_suggest.hpp). One line, cut short to the panel's width, the
  // whole ranking on hover, and a button that measures the configurations not measured here yet.
  void rung_row(AppState& s, const RunResult& r, RungLineReport& drawn) {
    if (!r.timed) return;
    const Session& session = s.sessions.current();
    if (!m_rungs || m_rungs_serial != s.sessions_serial || m_rungs_spec != r.spec ||
        m_rungs_device != session.device.name) {
      m_rungs = rank_rungs(session, s.kernels(), r.spec.m, r.spec.n, r.spec.k, r.tf32);
      m_rungs_serial = s.sessions_serial;
      m_rungs_spec = r.spec;
      m_rungs_device = session.device.name;
    }
    const RungRanking& g = *m_rungs;
    if (g.configurations == 0) return;  // no rung of this precision runs here (TF32 on the CPU)
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("fastest rung");
    ImGui::TableNextColumn();
    const RungTiming* best = g.fastest();
    const bool other = best && g.complete() && best->config.kernel != r.spec.kernel;
    drawn.line = g.line();
    const std::string body = g.body();  // after the key: "pipelined 256, 53.1 TFLOP/s, ..."
    drawn.elided = ImGui::CalcTextSize(body.c_str()).x > ImGui::GetContentRegionAvail().x;
    drawn.hovered = text_fit(body, other ? &palette().accent : nullptr, -1,
                             [&] { drawn.hover_rows = ranking_tooltip(g, r.spec); });
    const ImVec2 lo = ImGui::GetItemRectMin(), hi = ImGui::GetItemRectMax();
    drawn.rect = {lo.x, lo.y, hi.x - lo.x, hi.y - lo.y};
    if (g.missing.empty()) return;
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TableNextColumn();
    ImGui::BeginDisabled(s.sweeping());
    drawn.button = "Measure " + std::to_string(g.missing.size()) + " missing";
    if (ImGui::SmallButton(drawn.button.c_str())) s.ask(rq::TimeRungs{rung_search_points(g, r.spec)});
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
      ImGui::SetTooltip(
          "Measure the %s rungs not measured at %lld x %lld x %lld yet (bench policy, like a sweep): %s",
          g.tf32 ? "TF32" : "FP32", (long long)r.spec.m, (long long)r.spec.n, (long long)r.spec.k,
          g.missing_text().c_str());
  }

  // The whole ranking, fastest first, then its margins and what is missing; returns the rows listed.
  static int ranking_tooltip(const RungRanking& g, const ProblemSpec& at) {
    ImGui::Text("%s rungs at %lld x %lld x %lld, against %s:", g.tf32 ? "TF32" : "FP32", (long long)at.m,
                (long long)at.n, (long long)at.k, g.cublas.c_str());
    int rows = 0;
    if (!g.measured.empty() &&
        ImGui::BeginTable("ranking", 7, ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_RowBg)) {
      for (const char* h : {"kernel", "median", "IQR", "speed", "% cuBLAS", "noise", "stop"})
        ImGui::TableSetupColumn(h);
      ImGui::TableHeadersRow();
      char b[64];
      for (const RungTiming& t : g.measured) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(rung_label(t.config).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_ms(t.median_ms).c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_ms(t.p75_ms - t.p25_ms, "%.3g").c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(format_flops(t.tflops * 1e12).c_str());
        ImGui::TableNextColumn();
        std::snprintf(b, sizeof b, "%.1f %%", t.percent_of_cublas());
        ImGui::TextUnformatted(t.cublas_ms > 0 ? b : "-");
        ImGui::TableNextColumn();
        std::snprintf(b, sizeof b, t.noise >= 0.1 ? "%.0f %%" : "%.2g %%", 100 * t.noise);
        ImGui::TextUnformatted(b);
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(t.stop.c_str());
        ++rows;
      }
      ImGui::EndTable();
    }
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40.0f);
    for (const std::string& note : g.notes()) {
      ImGui::Bullet();
      ImGui::SameLine();
      ImGui::TextUnformatted(note.c_str());
    }
    ImGui::PopTextWrapPos();
    return rows;
  }

  std::optional<TileSuggestion> m_tiles;
  uint64_t m_tiles_serial = 0;
  ProblemSpec m_tiles_spec;
  std::optional<RungRanking> m_rungs;
  uint64_t m_rungs_serial = 0;
  ProblemSpec m_rungs_spec;
  std::string m_rungs_device;
};

}  // namespace

std::unique_ptr<Panel> make_result_panel() {
  return std::make_unique<ResultPanel>();
}

}  // namespace ts::ui
