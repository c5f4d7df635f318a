#pragma once
// Private to app/core: the colour tables that CMake generates from assets/colormaps/*.csv
// (cmake/Colormaps.cmake writes <build>/generated/colormaps_embedded.cpp); colormap.cpp turns them into
// Colormap.
#include <cstddef>
#include <cstdint>

namespace ts::detail {

struct EmbeddedColormap {
  const char* name;
  const char* kind;      // "sequential" | "diverging"
  uint8_t rgb[256 * 3];  // r, g, b of entry 0, then entry 1, ...
};
extern const EmbeddedColormap kEmbeddedColormaps[];
extern const size_t kEmbeddedColormapCount;

}  // namespace ts::detail
