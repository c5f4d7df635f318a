#include <cstdio>
#include <algorithm>
#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>

#include "core/plots/axis_ticks.hpp"
#include "core/base/text_wrap.hpp"
#include "kernels/engine/registry.hpp"

using namespace ts;

namespace {
// One unit per character, as a monospace font would measure.
std::vector<std::string> wrap(const std::string& text, float width) {
  return wrap_at_spaces(text, width, [](const char* b, const char* e) { return float(e - b); });
}
}  // namespace

TEST(TextWrap, BreaksOnlyAtSpacesSoNumbersStayWhole) {
  // The Result panel's fastest-tile row: a break after "71." would split the time.
  const auto lines = wrap("fastest of the tiles timed here: 2 (71.17 us); not timed yet: 1, 3", 38);
  const std::vector<std::string> want = {"fastest of the tiles timed here: 2",
                                         "(71.17 us); not timed yet: 1, 3"};
  EXPECT_EQ(lines, want);
  for (const auto& l : lines) EXPECT_LE(l.size(), 38u) << l;
}

TEST(TextWrap, KeepsShortTextNewlinesAndOverlongWords) {
  EXPECT_EQ(wrap("PASS", 40), std::vector<std::string>{"PASS"});
  EXPECT_EQ(wrap("", 40), std::vector<std::string>{""});
  EXPECT_EQ(wrap("a b\nc", 40), (std::vector<std::string>{"a b", "c"}));
  // A word wider than the line stays whole on a line of its own.
  EXPECT_EQ(wrap("x abcdefghij y", 5), (std::vector<std::string>{"x", "abcdefghij", "y"}));
  EXPECT_EQ(wrap("a  b", 1), (std::vector<std::string>{"a", "b"}));
}

TEST(TextWrap, KeepsANumberWithItsUnit) {
  // The Occupancy panel's last wave: "6" and "%" on two lines read as a different number.
  EXPECT_EQ(wrap("62 full waves, then one 6 % full", 25),
            (std::vector<std::string>{"62 full waves, then one", "6 % full"}));
  EXPECT_EQ(wrap("median 15.36 ms", 13), (std::vector<std::string>{"median", "15.36 ms"}));
  // A time with its unit stays whole even on a line too narrow for it.
  EXPECT_EQ(wrap("tile 16 (54.08 ms)", 8), (std::vector<std::string>{"tile 16", "(54.08 ms)"}));
  // Not glued: a number followed by punctuation.
  EXPECT_EQ(wrap("timed: 1, 3, 4", 9), (std::vector<std::string>{"timed: 1,", "3, 4"}));
}

TEST(TextWrap, ARefusalKeepsItsRangeWholeAtEveryWidth) {
  // The Occupancy calculator's refusal wrapped as "outside 1." / ".1024" with ImGui's own wrapping.
  const std::string text = "refused: threads per block = 2000 is outside 1..1024";
  for (float w = 4; w <= float(text.size()); ++w) {
    bool whole = false;
    for (const auto& l : wrap(text, w)) {
      EXPECT_NE(l.back(), '.') << "width " << w << ": " << l;
      EXPECT_NE(l.front(), '.') << "width " << w << ": " << l;
      whole |= l.find("1..1024") != std::string::npos;
    }
    EXPECT_TRUE(whole) << "width " << w;
  }
}

// [SECTION] Tick labels of a plot's axis never run together.
namespace {
// 8 pixels per character of the label as "%g" writes it (ImPlot's default format).
float label_px(double v) {
  char b[32];
  return 8.0f * float(std::snprintf(b, sizeof b, "%g", v));
}
}  // namespace

TEST(AxisTicks, LabelsKeepAGapBetweenNeighboursOnANarrowPlot) {
  // The Tile schedule's "tiles per SM over time", 0 .. 150 us on 190 px: ImPlot labelled every 20 us and
  // "100", "120" and "140" (24 px each, 25 px apart) read "100120140".
  const double step = readable_tick_step(0, 150, 190, 16, label_px);
  EXPECT_EQ(step, 50);
  EXPECT_GE(step * 190 / 150, 24 + 16);
  // Wider plots get denser ticks, always 1, 2 or 5 x 10^k apart, and never closer than label + gap.
  EXPECT_EQ(readable_tick_step(0, 150, 1000, 16, label_px), 10);
  for (float px : {60.0f, 190.0f, 400.0f, 1000.0f, 3000.0f})
    for (double hi : {0.7, 150.0, 4096.0, 1.5e7}) {
      const double s = readable_tick_step(0, hi, px, 16, label_px);
      ASSERT_GT(s, 0) << hi << " on " << px;
      const double mantissa = s / std::pow(10.0, std::floor(std::log10(s) + 1e-9));
      EXPECT_TRUE(std::abs(mantissa - 1) < 1e-9 || std::abs(mantissa - 2) < 1e-9 ||
                  std::abs(mantissa - 5) < 1e-9)
          << s;
      float widest = 0;
      for (double v = 0; v <= hi; v += s) widest = std::max(widest, label_px(v));
      EXPECT_GE(s * px / hi, widest + 16 - 1e-3) << hi << " on " << px;
    }
  EXPECT_EQ(readable_tick_step(1, 1, 100, 16, label_px), 0);  // an empty range: no ticks
}

// Issue 26: a timings plot whose points all had one speed (computed from different sizes, so they differed in
// their 15th digit) spent minutes in its y ticks: a step no tick's value could change was added until past
// the end. Such a range gets no ticks, and a range at large values is measured in a bounded number of labels.
TEST(AxisTicks, ARangeBelowTheResolutionOfItsValuesGetsNoTicksAndNoEndlessLoop) {
  int labels = 0;
  auto counted = [&](double v) {
    ++labels;
    return label_px(v);
  };
  EXPECT_EQ(readable_tick_step(8.9, 8.9 + 4e-15, 500, 16, counted), 0);
  EXPECT_EQ(readable_tick_step(8.9e12, 8.9e12 + 1e-3, 500, 16, counted), 0);
  EXPECT_EQ(labels, 0);
  EXPECT_GT(readable_tick_step(8.9e12, 8.9e12 + 1e3, 500, 16, counted), 0);
  EXPECT_LE(labels, 64 * 201);
}

// The Controls panel's short description: the first sentence ends at ". " before a capital or a digit,
// outside parentheses; abbreviations and decimals inside it do not end it.
TEST(FirstSentence, EndsAtAFullStopBeforeACapitalOutsideParentheses) {
  auto [head, rest] = first_sentence("Loads A once. Then B (a tile. Of K) follows.");
  EXPECT_EQ(head, "Loads A once.");
  EXPECT_EQ(rest, "Then B (a tile. Of K) follows.");
  std::tie(head, rest) = first_sentence("A tile (e.g. 16. Or 32) costs 1.5 ms. 2 stages hide it.");
  EXPECT_EQ(head, "A tile (e.g. 16. Or 32) costs 1.5 ms.");
  EXPECT_EQ(rest, "2 stages hide it.");
  std::tie(head, rest) = first_sentence("One sentence only, e.g. this one.");
  EXPECT_EQ(head, "One sentence only, e.g. this one.");
  EXPECT_EQ(rest, "");
  std::tie(head, rest) = first_sentence("");
  EXPECT_EQ(head, "");
  EXPECT_EQ(rest, "");
  // Every built-in kernel's first sentence is shorter than its description where it has more than one.
  for (const auto& k : builtin_kernel_infos()) {
    std::tie(head, rest) = first_sentence(k.description);
    EXPECT_FALSE(head.empty()) << k.id;
    EXPECT_EQ(head + (rest.empty() ? "" : " " + rest), k.description) << k.id;
    EXPECT_LE(head.size(), 400u) << k.id << ": " << head;
  }
}

// A vertical axis keeps half an em between its labels: the Timings plot of a 1366 x 768 window (about 60 px
// tall, points from 17 to 36, labels 17 px tall, a 16 px font) gets "20" and "30"; an em, as a horizontal
// axis keeps, left it one label.
TEST(AxisTicks, AShortVerticalAxisKeepsTwoLabelsWithHalfAnEmBetweenThem) {
  const auto line = [](double) { return 17.0f; };
  EXPECT_EQ(tick_label_gap(true, 16), 8.0f);
  EXPECT_EQ(tick_label_gap(false, 16), 16.0f);
  EXPECT_EQ(readable_tick_step(17, 36, 60, tick_label_gap(true, 16), line), 10);
  EXPECT_EQ(readable_tick_step(17, 36, 60, tick_label_gap(false, 16), line), 20);
}
