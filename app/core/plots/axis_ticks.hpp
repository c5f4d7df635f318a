#pragma once
// [SECTION] Tick spacing for a plot's linear axis, without a window: labels that never run together. ImPlot's
// own locator labels ticks until their labels fill 80 % of the axis, so on a narrow plot "100", "120" and
// "140" were drawn touching, as "100120140".
#include <algorithm>
#include <cmath>

namespace ts {

// The step between labelled ticks over [lo, hi] on an axis `pixels` long: the smallest of 1, 2 or 5 x 10^k
// whose labels, `label_px(value)` pixels long each (their width, or their height on a vertical axis), keep
// at least `gap` pixels between neighbours. 0 when the range or the axis is empty. At most 200 labels are
// measured per step tried.
template <class LabelPx>
double readable_tick_step(double lo, double hi, float pixels, float gap, LabelPx label_px) {
  const double range = hi - lo;
  if (!(range > 0) || !std::isfinite(range) || !(pixels > 0)) return 0;
  // A range below the doubles' resolution at its values (points whose speeds differ in the 15th digit): no
  // step between ticks could be added to a tick's value and change it.
  if (range <= std::max(std::abs(lo), std::abs(hi)) * 1e-12) return 0;
  const double px_per_unit = double(pixels) / range;
  double step = std::pow(10.0, std::floor(std::log10(range / 1000.0)));
  for (int i = 0; i < 64; ++i) {
    const double first = std::ceil(lo / step) * step;
    if ((hi - first) / step <= 200) {
      float widest = 0;
      // Counted, not `v += step` until past hi: a value that a step does not change would never get there.
      const int count = int(std::floor((hi - first) / step + 1e-9)) + 1;
      for (int t = 0; t < count; ++t) {
        const double v = first + t * step;
        widest = std::max(widest, float(label_px(std::abs(v) < step * 1e-9 ? 0.0 : v)));
      }
      if (step * px_per_unit >= double(widest + gap)) return step;
    }
    step *= (i % 3 == 1) ? 2.5 : 2.0;  // 1, 2, 5, 10, 20, 50, ...
  }
  return 0;
}

// The room readable_tick_step keeps between neighbouring labels: an em along a horizontal axis, half an em
// along a vertical one, whose labels are a line tall (the Timings plot of a 1366 x 768 window is about 60 px
// tall: with an em it had one label, "20", for points from 18 to 34).
inline float tick_label_gap(bool vertical, float font_px) {
  return font_px * (vertical ? 0.5f : 1.0f);
}

}  // namespace ts
