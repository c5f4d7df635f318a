#include "core/plots/colormap.hpp"

#include <cmath>
#include <cstring>

#include "core/plots/colormap_embedded.hpp"
#include "core/base/parallel.hpp"

namespace ts {

const std::vector<Colormap>& colormaps() {
  static const std::vector<Colormap> maps = [] {
    std::vector<Colormap> v;
    for (size_t m = 0; m < detail::kEmbeddedColormapCount; ++m) {
      const detail::EmbeddedColormap& e = detail::kEmbeddedColormaps[m];
      Colormap c;
      c.name = e.name;
      c.kind = e.kind;
      for (size_t i = 0; i < 256; ++i) c.rgba[i] = {e.rgb[3 * i], e.rgb[3 * i + 1], e.rgb[3 * i + 2], 255};
      v.push_back(std::move(c));
    }
    return v;
  }();
  return maps;
}

const Colormap* find_colormap(const std::string& name) {
  for (const Colormap& c : colormaps())
    if (c.name == name) return &c;
  return nullptr;
}

const Colormap& default_diverging_colormap() {
  for (const Colormap& c : colormaps())
    if (c.kind == "diverging") return c;
  return colormaps().front();  // unreachable: cmake/Colormaps.cmake insists on a diverging map
}

int colormap_index(float v, float lo, float hi) {
  if (!std::isfinite(v)) return -1;
  const float t = std::floor((v - lo) / (hi - lo) * 256.0f);
  if (!(t > 0.0f)) return 0;  // also a NaN quotient
  if (t >= 255.0f) return 255;
  return int(t);
}

std::array<uint8_t, 4> colormap_color(const Colormap& map, float v, float lo, float hi) {
  const int i = colormap_index(v, lo, hi);
  return i < 0 ? kNonFiniteColor : map.rgba[size_t(i)];
}

void colorize(const float* v, size_t n, const Colormap& map, float lo, float hi, uint8_t* rgba_out) {
  parallel_for(int64_t(n), 1 << 16, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const std::array<uint8_t, 4> c = colormap_color(map, v[i], lo, hi);
      std::memcpy(rgba_out + 4 * i, c.data(), 4);
    }
  });
}

}  // namespace ts
