#include "ui/plots/replay_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <imgui.h>

#include "ui/theme.hpp"

namespace ts::ui {

ReplayColours replay_figure_colours(bool light) {
  ReplayColours c;
  c.waiting = light ? IM_COL32(38, 38, 48, 255) : IM_COL32(10, 10, 14, 255);
  c.done = light ? IM_COL32(212, 212, 218, 255) : IM_COL32(150, 150, 158, 255);
  c.running_alpha = 255;
  return c;
}

namespace {

// A panel's two header lines: "t = 120.0 us: 132 running, 900 done of 1024" and why the moment was chosen,
// or, where that is too wide, the time (and why) over the counts.
struct Header {
  std::string first, second;
  bool second_muted = false;  // the second line says why, not the counts
};
// The counts in the fewest words: "116 run, 677 done" (a small figure's narrow pictures).
std::string compact_counts(const ScheduleReplay::Counts& c) {
  return std::to_string(c.running) + " run, " + std::to_string(c.done) + " done";
}

Header header_lines(const ScheduleReplay& r, const ReplayMoment& m, float width) {
  const std::string when = replay_time_label(m.t_ns, r.duration_ns());
  const ScheduleReplay::Counts c = r.counts(m.t_ns);
  const std::string counts = replay_counts_label(c, r.blocks(), r.k_segments() ? "segments" : nullptr);
  const std::string one = when + ": " + counts;
  if (ImGui::CalcTextSize(one.c_str()).x <= width) return {one, m.why, true};
  const std::string with_why = m.why.empty() ? when : when + " (" + m.why + ")";
  const std::string first = ImGui::CalcTextSize(with_why.c_str()).x <= width ? with_why : when;
  return {first, ImGui::CalcTextSize(counts.c_str()).x <= width ? counts : compact_counts(c), false};
}

// The narrowest a header can be: its time over its compact counts.
float header_least_width(const ScheduleReplay& r, const ReplayMoment& m) {
  return std::max(ImGui::CalcTextSize(replay_time_label(m.t_ns, r.duration_ns()).c_str()).x,
                  ImGui::CalcTextSize(compact_counts(r.counts(m.t_ns)).c_str()).x);
}

}  // namespace

PlotReport ReplayStrip::draw(const ReplayStripData& d, ImVec2 size, bool light) {
  PlotReport rep;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float W = size.x > 0 ? size.x : avail.x, H = size.y > 0 ? size.y : avail.y;
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImGui::Dummy(ImVec2(W, H));  // the region, for the window's layout
  if (!d.replay || d.replay->empty() || d.moments.empty()) return rep;
  const ScheduleReplay& r = *d.replay;
  const ReplayColours colours = replay_figure_colours(light);
  const int n = int(d.moments.size());
  const float font = ImGui::GetFontSize(), line = ImGui::GetTextLineHeightWithSpacing();
  const float gap = font * 1.2f, header_h = 2 * line + font * 0.25f;
  const float timeline_h = d.timeline ? line * 1.6f : 0, legend_h = line * 1.8f + timeline_h;
  const int rows_of_tiles = r.tiles_y();
  char last_row[48];
  std::snprintf(last_row, sizeof last_row, "row %d", std::max(0, rows_of_tiles - 1));
  const float left = ImGui::CalcTextSize(last_row).x + font * 0.5f;
  // The picture keeps C's shape: the cells cover cover_cols x cover_rows elements.
  const double aspect =
      double(std::max<int64_t>(1, r.cover_cols())) / double(std::max<int64_t>(1, r.cover_rows()));
  // The rows that make the pictures largest, among those whose columns leave room for every header (any,
  // where none does: the headers are then cut at their column's edge).
  float need_w = 0;
  for (const ReplayMoment& m : d.moments) need_w = std::max(need_w, header_least_width(r, m));
  int best_rows = 1;
  float best_w = 0, best_h = 0, cell_w = 0;
  bool best_fits = false;
  for (int rows = 1; rows <= n; ++rows) {
    const int cols = (n + rows - 1) / rows;
    const float cw = (W - left - float(cols - 1) * gap) / float(cols);
    const float ch = (H - legend_h - float(rows - 1) * gap) / float(rows) - header_h;
    if (cw <= 4 || ch <= 4) continue;
    float pw = cw, ph = float(double(cw) / aspect);
    if (ph > ch) ph = ch, pw = float(double(ch) * aspect);
    const bool fits = cw >= need_w;
    if ((fits && !best_fits) || (fits == best_fits && pw * ph > best_w * best_h))
      best_rows = rows, best_w = pw, best_h = ph, best_fits = fits, cell_w = cw;
  }
  if (best_w <= 0) return rep;
  // Headers stand over their pictures, as wide as the picture or the header's least width.
  cell_w = std::min(cell_w, std::max(best_w, need_w));
  const int cols = (n + best_rows - 1) / best_rows;
  // Centre the strip in the region: the rows' total height and the columns' total width.
  const float used_w = left + float(cols) * cell_w + float(cols - 1) * gap;
  const float used_h = float(best_rows) * (header_h + best_h) + float(best_rows - 1) * gap + legend_h;
  const ImVec2 at(origin.x + std::max(0.0f, (W - used_w) * 0.5f),
                  origin.y + std::max(0.0f, (H - used_h) * 0.5f));
  if (m_layers.size() != d.moments.size()) {
    m_layers.clear();
    m_layers.resize(d.moments.size());
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text),
              muted = ImGui::ColorConvertFloat4ToU32(palette().muted);
  for (int i = 0; i < n; ++i) {
    const int row = i / cols, col = i % cols;
    const float x0 = at.x + left + float(col) * (cell_w + gap);
    const float y0 = at.y + float(row) * (header_h + best_h + gap);
    const float px = x0, py = y0 + header_h;
    const Header h = header_lines(r, d.moments[size_t(i)], cell_w);
    dl->PushClipRect(ImVec2(x0, y0), ImVec2(x0 + cell_w, y0 + header_h), true);
    dl->AddText(ImVec2(x0, y0), text, h.first.c_str());
    dl->AddText(ImVec2(x0, y0 + line), h.second_muted ? muted : text, h.second.c_str());
    dl->PopClipRect();
    ReplayLayer& layer = m_layers[size_t(i)];
    layer.update(r, 1, d.moments[size_t(i)].t_ns, d.sm_count, colours);
    dl->AddImage(ImTextureID(intptr_t(layer.texture())), ImVec2(px, py), ImVec2(px + best_w, py + best_h),
                 ImVec2(0, 0), ImVec2(1, 1));
    // The tiles' edges, faintly, where a tile is many pixels (split-K's strips, stream-K's segments and a
    // cluster's columns are not edges of C's tiles).
    const int tiles_x = r.tiles_x();
    const float tile_w = best_w / float(std::max(1, tiles_x)),
                tile_h = best_h / float(std::max(1, rows_of_tiles));
    if (tile_w >= 6 && tile_h >= 6) {
      const ImU32 edge = ImGui::GetColorU32(ImGuiCol_WindowBg, 0.45f);
      for (int k = 1; k < tiles_x; ++k)
        dl->AddLine(ImVec2(px + float(k) * tile_w, py), ImVec2(px + float(k) * tile_w, py + best_h), edge);
      for (int k = 1; k < rows_of_tiles; ++k)
        dl->AddLine(ImVec2(px, py + float(k) * tile_h), ImVec2(px + best_w, py + float(k) * tile_h), edge);
    }
    dl->AddRect(ImVec2(px - 1, py - 1), ImVec2(px + best_w + 1, py + best_h + 1), muted);
    if (col == 0) {  // which way is up: row 0 of C at the top
      dl->AddText(ImVec2(px - left, py), muted, "row 0");
      dl->AddText(ImVec2(px - left, py + best_h - font), muted, last_row);
    }
    const Rect area{px, py, best_w, best_h};
    if (i == 0) rep.area = area;
    rep.panels.push_back(area);
  }
  if (d.timeline) {  // a bar across the launch, filled to the first moment
    const float bx = at.x + left, by = at.y + used_h - legend_h + font * 0.6f, bw = used_w - left;
    const float bh = font * 0.45f;
    const double f = r.duration_ns() ? double(d.moments[0].t_ns) / double(r.duration_ns()) : 1.0;
    dl->AddRectFilled(ImVec2(bx, by), ImVec2(bx + bw, by + bh), ImGui::GetColorU32(ImGuiCol_FrameBg));
    dl->AddRectFilled(ImVec2(bx, by), ImVec2(bx + bw * float(f), by + bh),
                      ImGui::ColorConvertFloat4ToU32(palette().accent));
    const std::string end = describe_replay_time(r.duration_ns(), r.duration_ns());
    const std::string whole = "the launch: " + end.substr(end.find(" of ") + 4);
    dl->AddText(ImVec2(bx + bw - ImGui::CalcTextSize(whole.c_str()).x, by + bh + font * 0.15f), muted,
                whole.c_str());
  }
  // The legend: waiting, running (a few SM colours), done.
  float lx = at.x + left, ly = at.y + used_h - legend_h + timeline_h + font * 0.5f;
  const float sw = font * 0.9f;
  auto swatch = [&](ImU32 c, const char* label) {
    dl->AddRectFilled(ImVec2(lx, ly), ImVec2(lx + sw, ly + sw), c);
    dl->AddRect(ImVec2(lx - 1, ly - 1), ImVec2(lx + sw + 1, ly + sw + 1), muted);
    lx += sw + font * 0.4f;
    dl->AddText(ImVec2(lx, ly + (sw - font) * 0.5f), text, label);
    lx += ImGui::CalcTextSize(label).x + font * 1.5f;
  };
  swatch(colours.waiting, "waiting");
  const int shown_sms = std::min(8, std::max(1, d.sm_count));
  for (int k = 0; k < shown_sms; ++k) {
    const uint32_t sm = uint32_t(int64_t(k) * std::max(1, d.sm_count) / shown_sms);
    dl->AddRectFilled(ImVec2(lx, ly), ImVec2(lx + sw * 0.5f, ly + sw), sm_colour(sm, d.sm_count));
    lx += sw * 0.5f;
  }
  lx += font * 0.4f;
  char running[96];
  std::snprintf(running, sizeof running, "running, coloured by its SM (%d SMs)", d.sm_count);
  dl->AddText(ImVec2(lx, ly + (sw - font) * 0.5f), text, running);
  lx += ImGui::CalcTextSize(running).x + font * 1.5f;
  swatch(colours.done, "done");
  rep.colours.emplace_back("waiting", ImGui::ColorConvertU32ToFloat4(colours.waiting));
  rep.colours.emplace_back("done", ImGui::ColorConvertU32ToFloat4(colours.done));
  for (int k = 0; k < d.sm_count; ++k)
    rep.colours.emplace_back("SM " + std::to_string(k),
                             ImGui::ColorConvertU32ToFloat4(sm_colour(uint32_t(k), d.sm_count)));
  return rep;
}

}  // namespace ts::ui
