#pragma once
// [SECTION] Colour maps: the built-in 256-entry tables and the CPU colouring that the heatmap shader copies.
// The tables come from assets/colormaps/*.csv (generated from matplotlib by scripts/gen_colormaps.py) and are
// compiled into the binary by CMake (cmake/Colormaps.cmake), so nothing is read at run time.
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

struct Colormap {
  std::string name;                              // the file name without .csv: "viridis", "RdBu_r", ...
  std::string kind;                              // "sequential" | "diverging"
  std::array<std::array<uint8_t, 4>, 256> rgba;  // sRGB, alpha 255; entry 0 colours the low end of the range
};

// All built-in maps; the first is the default for sequential data (viridis), then the other sequential maps
// and the diverging ones (for signed errors), each group in case-insensitive name order. Built on first use.
const std::vector<Colormap>& colormaps();
const Colormap* find_colormap(const std::string& name);  // exact name; nullptr when unknown
// The first diverging map (the default for signed error maps); never null.
const Colormap& default_diverging_colormap();

// The table entry for v in the range [lo, hi] (lo < hi, as resolve_range guarantees):
//   clamp(int(floor((v - lo) / (hi - lo) * 256.0f)), 0, 255), in float arithmetic exactly like this, so the
// shader, which copies it, agrees; -1 for NaN/Inf v. The clamp happens on the float before the conversion to
// int (same result, and defined for huge quotients); a NaN quotient (a degenerate lo == hi) gives 0.
int colormap_index(float v, float lo, float hi);
inline constexpr std::array<uint8_t, 4> kNonFiniteColor = {255, 0, 255, 255};  // magenta
std::array<uint8_t, 4> colormap_color(const Colormap& map, float v, float lo,
                                      float hi);  // NaN/Inf -> magenta
// n values to n RGBA pixels (4 bytes each) through colormap_color. Threaded for large n.
void colorize(const float* v, size_t n, const Colormap& map, float lo, float hi, uint8_t* rgba_out);

}  // namespace ts
