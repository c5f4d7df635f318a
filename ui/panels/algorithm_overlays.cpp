#include "ui/panels/algorithm_overlays.hpp"

#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>

#include <imgui.h>
#include <implot.h>

#include "ui/panels/panel.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

uint32_t with_alpha(uint32_t c, uint8_t a) {
  return (c & ~IM_COL32_A_MASK) | (uint32_t(a) << IM_COL32_A_SHIFT);
}

// The result's kernel's entry (nullptr: not in the list, e.g. an engine that went away).
const KernelInfo* result_kernel(const AppState& s) {
  return s.result ? find_kernel(s.kernels(), s.result->spec.kernel) : nullptr;
}

// A plot rectangle [x0, x1) x [y0, y1) on the screen, at least `least` pixels each way (a 4 x 4 piece of a
// 4096^2 matrix is under a pixel).
void outline(ImDrawList* dl, double x0, double y0, double x1, double y1, ImU32 colour, float thickness,
             ImU32 fill = 0, float least = 3) {
  ImVec2 a = ImPlot::PlotToPixels(x0, y0), b = ImPlot::PlotToPixels(x1, y1);
  ImVec2 lo(std::min(a.x, b.x), std::min(a.y, b.y)), hi(std::max(a.x, b.x), std::max(a.y, b.y));
  if (hi.x - lo.x < least) {
    const float c = 0.5f * (lo.x + hi.x);
    lo.x = c - least / 2, hi.x = c + least / 2;
  }
  if (hi.y - lo.y < least) {
    const float c = 0.5f * (lo.y + hi.y);
    lo.y = c - least / 2, hi.y = c + least / 2;
  }
  if (fill) dl->AddRectFilled(lo, hi, fill);
  dl->AddRect(lo, hi, colour, 0, 0, thickness);
}

void outline(ImDrawList* dl, const Rect64& r, ImU32 colour, float thickness, ImU32 fill = 0,
             float least = 3) {
  if (r.empty()) return;
  outline(dl, double(r.col0), double(r.row0), double(r.col0 + r.cols), double(r.row0 + r.rows), colour,
          thickness, fill, least);
}

// A word in the plot at the middle of r, when r has room for it (the colour and the panel's words say the
// rest).
void label(ImDrawList* dl, const Rect64& r, const char* text, ImU32 colour) {
  const ImVec2 a = ImPlot::PlotToPixels(double(r.col0), double(r.row0));
  const ImVec2 b = ImPlot::PlotToPixels(double(r.col0 + r.cols), double(r.row0 + r.rows));
  const ImVec2 size = ImGui::CalcTextSize(text);
  if (std::fabs(b.x - a.x) < size.x + 6 || std::fabs(b.y - a.y) < size.y + 4) return;
  const ImVec2 mid(0.5f * (a.x + b.x), 0.5f * (a.y + b.y));
  const ImVec2 at(mid.x - size.x / 2, mid.y - size.y / 2);
  dl->AddRectFilled(ImVec2(at.x - 2, at.y - 1), ImVec2(at.x + size.x + 2, at.y + size.y + 1),
                    IM_COL32(0, 0, 0, 190));
  dl->AddText(at, colour, text);
}

constexpr ImU32 kPanel = IM_COL32(255, 255, 255, 230);  // the row panel of A, the column panel of B
constexpr ImU32 kPiece = IM_COL32(255, 200, 0, 255);    // the pieces in shared memory at this step
constexpr ImU32 kPieceFill = IM_COL32(255, 200, 0, 70);
constexpr ImU32 kInFlight = IM_COL32(255, 200, 0, 150);  // loading (cp.async stages ahead)
constexpr ImU32 kWrong = IM_COL32(255, 60, 60, 255);     // what a teaching kernel gets wrong
constexpr ImU32 kWrongFill = IM_COL32(255, 60, 60, 80);
constexpr ImU32 kWarp = IM_COL32(0, 230, 255, 255);
constexpr ImU32 kThread = IM_COL32(255, 80, 255, 255);

}  // namespace

// [SECTION] The replay.

void ReplayLayer::update(const ScheduleReplay& r, uint64_t serial, uint64_t t_ns, int sm_count,
                         const ReplayColours& colours) {
  if (m_built && serial == m_serial && t_ns == m_t && colours == m_colours) return;
  m_built = true;
  m_serial = serial;
  m_t = t_ns;
  m_colours = colours;
  r.states(t_ns, m_states);
  m_px.assign(size_t(std::max(1, r.cells_x())) * size_t(std::max(1, r.cells_y())), 0u);
  for (size_t i = 0; i < m_states.size(); ++i) {
    uint32_t colour = colours.done;
    switch (m_states[i]) {
      case BlockState::Waiting:
        colour = colours.waiting;
        break;
      case BlockState::Running:
        colour = sm_colour(r.sm(i), sm_count, colours.running_alpha);
        break;
      case BlockState::Done:
        break;
    }
    // A block's cells: one, or a stream-K segment's strip of its tile (its share of K).
    const CellSpan c = r.cell_span(i);
    for (int y = c.y; y < c.y + c.h; ++y)
      for (int x = c.x; x < c.x + c.w; ++x) m_px[size_t(y) * size_t(r.cells_x()) + size_t(x)] = colour;
  }
  m_tex.upload_rgba(std::max(1, r.cells_x()), std::max(1, r.cells_y()),
                    reinterpret_cast<const uint8_t*>(m_px.data()));
}

void ReplayLayer::draw(const char* id, double cover_x, double cover_y, double x1, double y1) const {
  if (!m_built || cover_x <= 0 || cover_y <= 0) return;
  const double fx = std::min(1.0, x1 / cover_x), fy = std::min(1.0, y1 / cover_y);
  // Row 0 at the top (the plots' row axis points down): texel row 0 at y = 0.
  ImPlot::PlotImage(id, ImTextureID(intptr_t(m_tex.id())), ImPlotPoint(0, 0),
                    ImPlotPoint(fx * cover_x, fy * cover_y), ImVec2(0, float(fy)), ImVec2(float(fx), 0));
}

const ScheduleReplay* current_replay(const AppState& s, std::string* why) {
  auto say = [&](const char* w) {
    if (why) *why = w;
    return nullptr;
  };
  if (!s.result) return say("no result yet");
  if (!s.result->trace)
    return say(s.result->trace_note.empty() ? "no traced launch (a GPU run traces one)" : "");
  const TileTrace& t = *s.result->trace;
  if (!t.replay) return say("the trace has no replay");
  if (!t.replay->problem().empty()) return say("the trace is inconsistent");
  return t.replay.get();
}

void replay_controls(AppState& s, const ScheduleReplay& r, FrameReport& out) {
  ReplayCursor& c = s.views.replay;
  if (c.serial != s.result_serial) {  // a new trace: from its start
    c.serial = s.result_serial;
    c.t_ns = 0;
    c.playing = false;
  }
  c.t_ns = std::min(c.t_ns, r.duration_ns());
  ImGui::PushID("replay");
  ImGui::Checkbox("Replay", &c.shown);
  if (ImGui::IsItemHovered())
    ImGui::SetTooltip(
        "Draw the traced launch over C: dark tiles wait, coloured ones run (the colour of their "
        "SM), the others are done");
  if (!c.shown) {
    ImGui::PopID();
    return;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton(c.playing ? "Pause" : "Play")) {
    if (!c.playing && c.t_ns >= r.duration_ns()) c.t_ns = 0;  // at the end: play again from the start
    c.playing = !c.playing;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("|<")) c.t_ns = 0, c.playing = false;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the launch's first block start");
  ImGui::SameLine();
  if (ImGui::SmallButton("<")) c.t_ns = r.previous_start(c.t_ns), c.playing = false;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the previous block start");
  ImGui::SameLine();
  if (ImGui::SmallButton(">")) c.t_ns = r.next_start(c.t_ns), c.playing = false;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the next block start");
  ImGui::SameLine();
  // Speed and waves first; the time slider takes the rest of the line and carries the counts, so the replay
  // costs the maps one line (at 1366 x 768 a second line of counts left them 100 px tall).
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4.5f);
  ImGui::SliderFloat("##speed", &c.speed, 0.1f, 10.0f, "x%.1f", ImGuiSliderFlags_Logarithmic);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("speed: x1 plays the whole launch in %.0f s", kReplaySeconds);
  // Waves from the occupancy arithmetic: blocks per SM x SMs resident at once.
  const OccupancyReport* occ = s.result && s.result->occupancy ? &*s.result->occupancy : nullptr;
  const int64_t slots = occ && s.result->trace ? int64_t(std::max(occ->blocks_per_sm, 0)) *
                                                     int64_t(std::max(s.result->trace->sm_count, 0))
                                               : 0;
  const int waves = r.waves(slots);
  if (waves > 0) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    if (ImGui::BeginCombo("##wave", "wave...")) {
      for (int w = 0; w < waves; ++w) {
        char item[64];
        std::snprintf(item, sizeof item, "wave %d of %d", w + 1, waves);
        if (ImGui::Selectable(item)) c.t_ns = r.wave_start(w, slots), c.playing = false;
      }
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(
          "jump to the start of a wave: %lld blocks at once (%d per SM x %d SMs, from the occupancy "
          "arithmetic); wave k starts when its first block does",
          (long long)slots, occ->blocks_per_sm, s.result->trace->sm_count);
  }
  const std::string when = describe_replay_time(c.t_ns, r.duration_ns());
  const ScheduleReplay::Counts n = r.counts(c.t_ns);
  char line[200];
  std::snprintf(line, sizeof line, "%s: %lld running, %lld done, %lld waiting of %zu %s", when.c_str(),
                (long long)n.running, (long long)n.done, (long long)n.waiting, r.blocks(), r.blocks_noun());
  char shown[200];
  std::snprintf(shown, sizeof shown, "%s: %lld running, %lld done", when.c_str(), (long long)n.running,
                (long long)n.done);
  // The slider in microseconds (a float slider over nanoseconds would round at 16.7 ms).
  ImGui::SameLine();
  const double dur_us = double(r.duration_ns()) * 1e-3;
  float t_us = float(double(c.t_ns) * 1e-3);
  ImGui::SetNextItemWidth(std::max(ImGui::GetFontSize() * 8, ImGui::GetContentRegionAvail().x));
  if (ImGui::SliderFloat("##t", &t_us, 0.0f, float(dur_us), shown)) {
    c.t_ns = uint64_t(std::clamp(double(t_us), 0.0, dur_us) * 1e3);
    c.playing = false;
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", line);
  PanelReport& rep = out.panels["replay"];
  rep.state = line;
  ImGui::PopID();
}

// [SECTION] The feeding tiles.

std::optional<FeedPlan> current_feed_plan(const AppState& s, std::string* why) {
  auto say = [&](std::string w) -> std::optional<FeedPlan> {
    if (why) *why = std::move(w);
    return std::nullopt;
  };
  if (!s.result) return say("no result yet");
  const FeedCursor& f = s.views.feed;
  if (!f.shown || f.serial != s.result_serial) return say("click a tile of C to see what feeds it");
  const KernelInfo* k = result_kernel(s);
  if (!k) return say("the result's kernel is not in the list");
  const TileGeometry* g = k->tile_geometry(s.result->spec.tile);
  if (!g) return say(k->label() + " has no tile description");
  const ProblemSpec& p = s.result->spec;
  FeedPlan plan = feeding_plan(*g, p.m, p.n, p.k, f.tile_row, f.tile_col, f.slice);
  if (!plan.problem.empty()) return say(plan.problem);
  return plan;
}

bool tile_at(const AppState& s, int64_t row, int64_t col, int64_t& tile_row, int64_t& tile_col) {
  const KernelInfo* k = result_kernel(s);
  const TileGeometry* g = k ? k->tile_geometry(s.result->spec.tile) : nullptr;
  if (!g || g->block_m <= 0 || g->block_n <= 0 || row < 0 || col < 0 || row >= s.result->spec.m ||
      col >= s.result->spec.n)
    return false;
  tile_row = row / g->block_m;
  tile_col = col / g->block_n;
  return true;
}

void feed_controls(AppState& s, const FeedPlan& p) {
  FeedCursor& f = s.views.feed;
  ImGui::PushID("feed");
  char head[160];
  std::snprintf(head, sizeof head, "Tile (%" PRId64 ", %" PRId64 ") of C", f.tile_row, f.tile_col);
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(head);
  const int steps = int(p.steps.size());
  if (steps > 0) {
    f.step = std::clamp(f.step, 0, steps - 1);
    ImGui::SameLine();
    if (ImGui::SmallButton(f.playing ? "Pause" : "Play")) {
      if (!f.playing && f.step + 1 >= steps) f.step = 0;
      f.playing = !f.playing;
      f.step_clock = 0;
    }
    ImGui::SameLine();
    ImGui::SetNextItemWidth(std::max(ImGui::GetFontSize() * 8, ImGui::GetContentRegionAvail().x * 0.3f));
    int shown = f.step + 1;
    if (ImGui::SliderInt("##step", &shown, 1, steps, "k step %d")) f.step = shown - 1, f.playing = false;
  }
  ImGui::SameLine();
  if (ImGui::SmallButton("Close")) f.shown = false, f.playing = false;
  if (steps > 0) {
    const std::string words = describe_step(p, f.step);
    const bool wrong = !p.steps[size_t(f.step)].visited || overwrites_in_use(p, f.step);
    ImGui::SameLine();
    text_fit(words, wrong ? &palette().bad : nullptr);
  }
  // One line (all of it on hover): the maps keep the panel's height.
  text_fit(p.note, p.bug != StagingBug::None ? &palette().warn : &palette().muted);
  ImGui::PopID();
}

void draw_feed_outlines(const FeedPlan& p, int step, FeedMap map) {
  ImDrawList* dl = ImPlot::GetPlotDrawList();
  ImPlot::PushPlotClipRect();
  const bool has_step = step >= 0 && step < int(p.steps.size());
  if (map == FeedMap::C) {
    outline(dl, p.c_tile, p.mirrored ? kWrong : kPiece, 2.5f);
    if (p.mirrored) {  // where its values are computed: the tile above the diagonal
      const Rect64 src{p.a_panel.row0, p.b_panel.col0, p.a_panel.rows, p.b_panel.cols};
      outline(dl, src, kWrong, 1.5f, kWrongFill);
      label(dl, src, "computed here", kWrong);
    }
    outline(dl, p.warp, kWarp, 1.5f);
    for (const Rect64& r : p.thread) outline(dl, r, kThread, 1.5f, with_alpha(kThread, 90));
  } else {
    const bool a = map == FeedMap::A;
    outline(dl, a ? p.a_panel : p.b_panel, p.mirrored ? kWrong : kPanel, 1.5f);
    // Never-visited pieces, whatever the step: the part of K the kernel drops.
    for (const FeedStep& st : p.steps)
      if (!st.visited) {
        outline(dl, a ? st.a : st.b, kWrong, 2.0f, kWrongFill);
        label(dl, a ? st.a : st.b, "never loaded", kWrong);
      }
    if (has_step) {
      const std::vector<int> resident = resident_steps(p, step);
      for (int r : resident) {
        const FeedStep& st = p.steps[size_t(r)];
        if (r == step)
          outline(dl, a ? st.a : st.b, kPiece, 2.5f, kPieceFill);
        else
          outline(dl, a ? st.a : st.b, kInFlight, 1.0f);
      }
      if (overwrites_in_use(p, step)) {
        const FeedStep& next = p.steps[size_t(step) + 1];
        outline(dl, a ? next.a : next.b, kWrong, 2.0f, kWrongFill);
        label(dl, a ? next.a : next.b, "overwrites", kWrong);
      }
    }
  }
  ImPlot::PopPlotClipRect();
}

}  // namespace ts::ui
