// The machine code listings of a build without nvcc: no kernels were compiled, so there are none.
#include "core/engine/sass.hpp"

namespace ts {

const BuildSassArchive& build_sass_archive() {
  static const BuildSassArchive none{
      nullptr,
      0,
      nullptr,
      0,
      0,
      "",
      "",
      "no machine code listings: this build has no CUDA kernels (built without "
      "nvcc)"};
  return none;
}

}  // namespace ts
