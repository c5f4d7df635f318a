// The build-time occupancy table of a build without nvcc: no kernels were compiled, so there are no figures.
#include "core/engine/gpu_catalog.hpp"

namespace ts {

const std::vector<BuildResource>& build_resources() {
  static const std::vector<BuildResource> none;
  return none;
}

std::string build_resources_note() {
  return "this build has no CUDA kernels (built without nvcc): no build-time register or shared-memory "
         "figures";
}

}  // namespace ts
