// SASS: the machine code of a kernel at a tile (the problem's, or one chosen here), as the engine answers it
// (Backend::sass_listing: the build's listings, a person's kernel disassembled at run time), with where it
// comes from, its registers, spills and stack, the main loop found and marked (a jump to it), its instruction
// mix per iteration and per k step (a table and a bar: the FFMA share first), and a compare mode: a second
// kernel and tile, the two mixes side by side with their deltas and an opcode-level diff of the main loops
// (registers made anonymous). The listings come through rq::FetchSass (off the UI thread); the analysis is
// made once per answer.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include <imgui.h>

#include "core/engine/sass.hpp"
#include "ui/panels/panel.hpp"
#include "ui/theme.hpp"

namespace ts::ui {

namespace {

ImVec4 class_colour(SassClass c) {
  const Palette& p = palette();
  switch (c) {
    case SassClass::Ffma:
      return p.good;
    case SassClass::Mma:
      return ImVec4(0.85f, 0.40f, 0.75f, 1);  // apart from LDS's blue
    case SassClass::Lds:
      return p.plot_current;
    case SassClass::Sts:
      return ImVec4(0.55f, 0.45f, 0.85f, 1);
    case SassClass::Ldg:
      return p.warn;
    case SassClass::Bar:
      return p.bad;
    default:
      return p.muted;
  }
}

std::string num(double v, int decimals) {
  char b[32];
  std::snprintf(b, sizeof b, "%.*f", decimals, v);
  return b;
}

std::string bytes_or_unknown(int v) {
  return v < 0 ? std::string("?") : std::to_string(v) + " B";
}

// A kernel and a tile chosen from the engine's list. Returns true when either changed.
bool kernel_tile_picker(const char* id, const std::vector<KernelInfo>& kernels, std::string& kernel,
                        int& tile) {
  bool changed = false;
  ImGui::PushID(id);
  const KernelInfo* k = find_kernel(kernels, kernel);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  if (ImGui::BeginCombo("##kernel", k ? k->id.c_str() : kernel.c_str())) {
    for (const KernelInfo& c : kernels) {
      if (ImGui::Selectable(c.id.c_str(), c.id == kernel)) {
        kernel = c.id;
        tile = c.default_tile;
        changed = true;
      }
      if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", c.label().c_str());
    }
    ImGui::EndCombo();
  }
  k = find_kernel(kernels, kernel);
  if (k && !k->tiles.empty()) {
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 4.5f);
    if (ImGui::BeginCombo("##tile", std::to_string(tile).c_str())) {
      for (size_t i = 0; i < k->tiles.size(); ++i) {
        const std::string label = std::to_string(k->tiles[i]);
        if (ImGui::Selectable(label.c_str(), k->tiles[i] == tile)) {
          tile = k->tiles[i];
          changed = true;
        }
        if (i < k->tile_labels.size() && ImGui::IsItemHovered())
          ImGui::SetTooltip("%s", k->tile_labels[i].c_str());
      }
      ImGui::EndCombo();
    }
  }
  ImGui::PopID();
  return changed;
}

// The mix as one bar: a segment per class, as wide as its share of an iteration's instructions.
void mix_bar(const SassMix& m, float height) {
  const float w = std::max(40.0f, ImGui::GetContentRegionAvail().x);
  const ImVec2 p = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  float x = p.x;
  for (int c = 0; c < int(SassClass::Count); ++c) {
    const float seg = m.total > 0 ? w * float(m.counts[c]) / float(m.total) : 0;
    if (seg <= 0) continue;
    dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x + seg, p.y + height),
                      ImGui::GetColorU32(class_colour(SassClass(c))));
    x += seg;
  }
  ImGui::Dummy(ImVec2(w, height));
  if (ImGui::IsItemHovered()) {
    std::string tip;
    for (int c = 0; c < int(SassClass::Count); ++c)
      if (m.counts[c] > 0)
        tip += std::string(to_string(SassClass(c))) + ": " + num(100 * m.share(SassClass(c)), 1) + " %\n";
    ImGui::SetTooltip("%s", tip.c_str());
  }
}

// The legend of the bar, wrapped: a coloured square and the class's name.
void mix_legend() {
  for (int c = 0; c < int(SassClass::Count); ++c) {
    const std::string label = to_string(SassClass(c));
    const float w = ImGui::GetFontSize() + ImGui::CalcTextSize(label.c_str()).x + 12;
    if (c > 0) same_line_if_fits(w);
    ImGui::ColorButton(("##legend" + label).c_str(), class_colour(SassClass(c)),
                       ImGuiColorEditFlags_NoTooltip,
                       ImVec2(ImGui::GetFontSize() * 0.7f, ImGui::GetFontSize() * 0.7f));
    ImGui::SameLine(0, 4);
    ImGui::TextUnformatted(label.c_str());
  }
}

}  // namespace

class SassPanel final : public Panel {
 public:
  const char* name() const override { return "SASS"; }

 protected:
  void draw_content(AppState& s, FrameReport& out) override;

 private:
  void fetch_if_needed(AppState& s);
  void header(AppState& s, const std::vector<KernelInfo>& kernels);
  void headline(const SassListing& l, const SassAnalysis& an, int index);
  void summary(const SassListing& l, const SassAnalysis& an, int index);
  void mix_table(const SassAnalysis& an);
  void diff_table();
  void listing(const SassAnalysis& an, int index);
  void loop_diff();

  bool m_follow = true;  // kernel and tile follow the problem's
  std::string m_kernel;
  int m_tile = 0;
  bool m_compare = false;
  std::string m_kernel2 = "blocktile2d";
  int m_tile2 = 64;
  const Backend* m_backend_seen = nullptr;
  uint64_t m_serial_seen = ~uint64_t(0);
  std::vector<SassAnalysis> m_an;  // per listing answered
  SassDiff m_diff;
  bool m_has_diff = false;
  int m_scroll_to[2] = {-1, -1};  // an instruction to bring into view in listing A / B
  bool m_auto_jump[2] = {true, true};
};

void SassPanel::fetch_if_needed(AppState& s) {
  std::vector<std::pair<std::string, int>> want = {{m_kernel, m_tile}};
  if (m_compare) want.emplace_back(m_kernel2, m_tile2);
  const bool engine_changed = s.backend != m_backend_seen;
  if ((want != s.sass.asked || engine_changed) && !s.fetching_sass() && !s.asked.pending<rq::FetchSass>() &&
      !m_kernel.empty()) {
    m_backend_seen = s.backend;
    s.ask(rq::FetchSass{want});
  }
  if (s.sass.serial != m_serial_seen) {
    m_serial_seen = s.sass.serial;
    m_an.clear();
    for (const SassListing& l : s.sass.listings) {
      try {
        m_an.push_back(l.available ? analyse_sass(l) : SassAnalysis{});
      } catch (const std::exception& e) {
        m_an.emplace_back();
        m_an.back().main_loop_why = e.what();
      }
    }
    m_has_diff = s.sass.listings.size() == 2 && s.sass.listings[0].available && s.sass.listings[1].available;
    if (m_has_diff) m_diff = diff_sass(s.sass.listings[0], s.sass.listings[1]);
    m_auto_jump[0] = m_auto_jump[1] = true;
  }
}

void SassPanel::header(AppState& s, const std::vector<KernelInfo>& kernels) {
  if (m_follow || m_kernel.empty()) {
    m_kernel = s.settings.spec.kernel;
    m_tile = s.settings.spec.tile;
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("Kernel");
  ImGui::SameLine();
  if (kernel_tile_picker("a", kernels, m_kernel, m_tile)) m_follow = false;
  same_line_if_fits(ImGui::GetFontSize() * 9);
  ImGui::Checkbox("follow the problem", &m_follow);
  same_line_if_fits(ImGui::GetFontSize() * 7);
  ImGui::Checkbox("compare with", &m_compare);
  if (m_compare) {
    same_line_if_fits(ImGui::GetFontSize() * 15);
    kernel_tile_picker("b", kernels, m_kernel2, m_tile2);
  }
}

void SassPanel::headline(const SassListing& l, const SassAnalysis& an, int index) {
  const Palette& p = palette();
  char b[96];
  std::snprintf(b, sizeof b, "%s  %d regs, %s spilled, %s stack  ", index == 0 ? "A:" : "B:", l.regs,
                bytes_or_unknown(l.spill_bytes).c_str(), bytes_or_unknown(l.stack_bytes).c_str());
  ImGui::TextColored(l.spill_bytes > 0 ? p.warn : ImGui::GetStyle().Colors[ImGuiCol_Text], "%s", b);
  ImGui::SameLine(0, 0);
  std::string loop =
      an.main_loop < 0 ? "no main loop" : "FFMA " + num(100 * an.loop.share(SassClass::Ffma), 1) + " %";
  if (an.main_loop >= 0 && an.loop.count(SassClass::Mma) > 0)
    loop = "HMMA/HGMMA " + num(100 * an.loop.share(SassClass::Mma), 1) + " %";
  text_fit(loop + "   " + demangle(l.function), &p.muted);
}

void SassPanel::summary(const SassListing& l, const SassAnalysis& an, int index) {
  const Palette& p = palette();
  if (index > 0) ImGui::Spacing();
  text_fit((index == 0 ? "A: " : "B: ") + demangle(l.function));
  text_fit("from " + l.origin(), &p.muted);
  text_fit("registers " + (l.regs < 0 ? std::string("?") : std::to_string(l.regs)) + "   spill stores " +
               bytes_or_unknown(l.spill_bytes) + "   stack " + bytes_or_unknown(l.stack_bytes) +
               "   static shared " + bytes_or_unknown(l.static_smem),
           l.spill_bytes > 0 ? &p.warn : nullptr);
  if (!l.note.empty()) text_fit(l.note, &p.muted);
  if (an.main_loop < 0) {
    text_fit("main loop: none (" + an.main_loop_why + ")", &p.warn);
    return;
  }
  const Loop& lp = an.loops[size_t(an.main_loop)];
  char b[160];
  std::snprintf(b, sizeof b, "main loop 0x%04x .. 0x%04x: %zu instructions, FFMA %.1f %%, HMMA/HGMMA %.1f %%",
                an.code[lp.first].address, an.code[lp.last].address, lp.size(),
                100 * an.loop.share(SassClass::Ffma), 100 * an.loop.share(SassClass::Mma));
  text_fit(b);
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", an.main_loop_why.c_str());
  if (!an.k_note.empty()) text_fit(an.k_note, &p.muted);
}

void SassPanel::mix_table(const SassAnalysis& an) {
  mix_bar(an.loop, ImGui::GetFontSize() * 0.8f);
  mix_legend();
  if (!ImGui::BeginTable("mix", 4, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp)) return;
  ImGui::TableSetupColumn("class");
  ImGui::TableSetupColumn("per iteration");
  ImGui::TableSetupColumn("per k step");
  ImGui::TableSetupColumn("share");
  ImGui::TableHeadersRow();
  for (int c = 0; c < int(SassClass::Count); ++c) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextColored(class_colour(SassClass(c)), "%s", to_string(SassClass(c)));
    ImGui::TableNextColumn();
    ImGui::Text("%d", an.loop.counts[c]);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(an.per_k.empty() ? "-" : num(an.per_k[size_t(c)], 2).c_str());
    ImGui::TableNextColumn();
    ImGui::Text("%.1f %%", 100 * an.loop.share(SassClass(c)));
  }
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextUnformatted("total");
  ImGui::TableNextColumn();
  ImGui::Text("%d", an.loop.total);
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(an.k_per_iteration > 0 ? num(an.loop.total / an.k_per_iteration, 2).c_str() : "-");
  ImGui::TableNextColumn();
  ImGui::TextUnformatted("100 %");
  ImGui::EndTable();
}

void SassPanel::diff_table() {
  const SassDiff& d = m_diff;
  mix_bar(d.a.loop, ImGui::GetFontSize() * 0.6f);
  mix_bar(d.b.loop, ImGui::GetFontSize() * 0.6f);
  mix_legend();
  if (!ImGui::BeginTable("mixdiff", 6, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp))
    return;
  for (const char* h : {"class", "A / iter", "B / iter", "B - A", "A / k", "B / k"})
    ImGui::TableSetupColumn(h);
  ImGui::TableHeadersRow();
  const Palette& p = palette();
  for (int c = 0; c < int(SassClass::Count); ++c) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextColored(class_colour(SassClass(c)), "%s", to_string(SassClass(c)));
    ImGui::TableNextColumn();
    ImGui::Text("%d", d.a.loop.counts[c]);
    ImGui::TableNextColumn();
    ImGui::Text("%d", d.b.loop.counts[c]);
    ImGui::TableNextColumn();
    if (d.delta[c] == 0)
      ImGui::TextDisabled("0");
    else
      ImGui::TextColored(d.delta[c] > 0 ? p.accent : p.muted, "%+d", d.delta[c]);
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(d.a.per_k.empty() ? "-" : num(d.a.per_k[size_t(c)], 2).c_str());
    ImGui::TableNextColumn();
    ImGui::TextUnformatted(d.b.per_k.empty() ? "-" : num(d.b.per_k[size_t(c)], 2).c_str());
  }
  ImGui::EndTable();
  text_fit("FFMA share " + num(100 * d.a.loop.share(SassClass::Ffma), 1) + " % -> " +
           num(100 * d.b.loop.share(SassClass::Ffma), 1) + " %;  k per iteration " +
           (d.a.k_per_iteration > 0 ? num(d.a.k_per_iteration, 0) : "?") + " -> " +
           (d.b.k_per_iteration > 0 ? num(d.b.k_per_iteration, 0) : "?"));
}

void SassPanel::listing(const SassAnalysis& an, int index) {
  const Palette& p = palette();
  size_t first = SIZE_MAX, last = SIZE_MAX;
  if (an.main_loop >= 0) {
    first = an.loops[size_t(an.main_loop)].first;
    last = an.loops[size_t(an.main_loop)].last;
    if (ImGui::SmallButton("Jump to the main loop")) m_scroll_to[index] = int(first);
    ImGui::SameLine();
  }
  ImGui::TextDisabled("%zu instructions, %zu loops", an.code.size(), an.loops.size());
  if (m_auto_jump[index] && an.main_loop >= 0) {
    m_scroll_to[index] = int(first);
    m_auto_jump[index] = false;
  }
  ImFont* mono = mono_font();
  if (mono) ImGui::PushFont(mono);
  const float line = ImGui::GetTextLineHeightWithSpacing();
  if (ImGui::BeginChild(index == 0 ? "listingA" : "listingB", ImVec2(0, 0), true,
                        ImGuiWindowFlags_HorizontalScrollbar)) {
    if (m_scroll_to[index] >= 0) {
      ImGui::SetScrollY(std::max(0.0f, m_scroll_to[index] * line - line * 2));
      m_scroll_to[index] = -1;
    }
    const float op_x = ImGui::CalcTextSize("> 0x0000  @!UP0  ").x;
    const float args_x = op_x + ImGui::CalcTextSize("HGMMA.64x256x8.F32.TF32 ").x;
    ImGuiListClipper clip;
    clip.Begin(int(an.code.size()), line);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    while (clip.Step()) {
      for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
        const Instruction& in = an.code[size_t(i)];
        const bool inside = size_t(i) >= first && size_t(i) <= last;
        const ImVec2 at = ImGui::GetCursorScreenPos();
        if (inside) {
          ImVec4 bg = p.accent;
          bg.w = an.in_inner.size() > size_t(i) && an.in_inner[size_t(i)] ? 0.07f : 0.16f;
          dl->AddRectFilled(at, ImVec2(at.x + ImGui::GetWindowWidth() + ImGui::GetScrollX(), at.y + line),
                            ImGui::GetColorU32(bg));
        }
        const float x0 = ImGui::GetCursorPosX();
        char addr[32];
        std::snprintf(addr, sizeof addr, "%c %04x  %s",
                      size_t(i) == first  ? '>'
                      : size_t(i) == last ? '<'
                                          : ' ',
                      in.address, in.predicate.c_str());
        ImGui::TextColored(p.muted, "%s", addr);
        ImGui::SameLine(x0 + op_x);
        ImGui::TextColored(class_colour(classify(in)), "%s", in.opcode.c_str());
        ImGui::SameLine(x0 + args_x);
        ImGui::TextUnformatted(in.operands.c_str());
      }
    }
    clip.End();
  }
  ImGui::EndChild();
  if (mono) ImGui::PopFont();
}

void SassPanel::loop_diff() {
  const SassDiff& d = m_diff;
  if (d.a.main_loop < 0 || d.b.main_loop < 0) {
    text_muted_wrapped("No opcode diff: a listing has no main loop.");
    return;
  }
  ImGui::TextDisabled("main loops, registers made anonymous: %d same, %d only in A, %d only in B%s", d.same,
                      d.removed, d.added, d.truncated ? " (too long to align: counted only)" : "");
  ImFont* mono = mono_font();
  if (mono) ImGui::PushFont(mono);
  const Palette& p = palette();
  if (ImGui::BeginChild("loopdiff", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar)) {
    ImGuiListClipper clip;
    clip.Begin(int(d.lines.size()));
    while (clip.Step())
      for (int i = clip.DisplayStart; i < clip.DisplayEnd; ++i) {
        const SassDiffLine& l = d.lines[size_t(i)];
        const ImVec4 c = l.op == '+' ? p.good : l.op == '-' ? p.bad : ImGui::GetStyle().Colors[ImGuiCol_Text];
        ImGui::TextColored(c, "%c %s", l.op, l.text.c_str());
      }
    clip.End();
  }
  ImGui::EndChild();
  if (mono) ImGui::PopFont();
}

void SassPanel::draw_content(AppState& s, FrameReport& out) {
  (void)out;
  const std::vector<KernelInfo>& kernels = s.kernels();
  header(s, kernels);
  fetch_if_needed(s);
  ImGui::Separator();
  const Palette& p = palette();
  const bool fetching = s.fetching_sass() || s.asked.pending<rq::FetchSass>();
  if (!s.sass.error.empty()) {
    text_lines("The engine could not give the machine code: " + s.sass.error, &p.bad);
    return;
  }
  if (s.sass.listings.empty()) {
    spinner("sass-wait", ImGui::GetFontSize() * 0.4f, fetching);
    ImGui::SameLine();
    text_muted_wrapped(fetching ? "asking the engine for the machine code..." : "no listing yet");
    return;
  }
  if (fetching) {
    spinner("sass-wait", ImGui::GetFontSize() * 0.4f, true);
    ImGui::SameLine();
    ImGui::TextDisabled("updating...");
  }
  for (size_t i = 0; i < s.sass.listings.size(); ++i) {
    const SassListing& l = s.sass.listings[i];
    if (!l.available) {
      text_lines(std::string(i == 0 ? "A" : "B") + ": no machine code for " + l.kernel +
                     (l.tile ? " at tile " + std::to_string(l.tile) : std::string()) + ": " + l.why,
                 &p.warn);
      continue;
    }
    if (i < m_an.size()) headline(l, m_an[i], int(i));
  }
  if (m_an.empty() || !s.sass.listings[0].available) return;
  if (ImGui::BeginTabBar("sass-views")) {
    if (ImGui::BeginTabItem(m_has_diff ? "Mix A vs B" : "Mix")) {
      if (m_has_diff) {
        diff_table();
      } else {
        mix_table(m_an[0]);
      }
      ImGui::Spacing();
      for (size_t i = 0; i < s.sass.listings.size() && i < m_an.size(); ++i)
        if (s.sass.listings[i].available) summary(s.sass.listings[i], m_an[i], int(i));
      ImGui::EndTabItem();
    }
    if (ImGui::BeginTabItem("Listing A")) {
      listing(m_an[0], 0);
      ImGui::EndTabItem();
    }
    if (m_has_diff && m_an.size() > 1 && ImGui::BeginTabItem("Listing B")) {
      listing(m_an[1], 1);
      ImGui::EndTabItem();
    }
    if (m_has_diff && ImGui::BeginTabItem("Main loop diff")) {
      loop_diff();
      ImGui::EndTabItem();
    }
    ImGui::EndTabBar();
  }
}

std::unique_ptr<Panel> make_sass_panel() {
  return std::make_unique<SassPanel>();
}

}  // namespace ts::ui
