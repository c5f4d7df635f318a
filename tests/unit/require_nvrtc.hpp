#pragma once
// REQUIRE_NVRTC(): skips the test, with the reason, in a build that has no NVRTC (built without the CUDA
// toolkit).
#include <string>

#include <gtest/gtest.h>

#include "kernels/user/nvrtc_compile.hpp"

#define REQUIRE_NVRTC()                                      \
  do {                                                       \
    std::string why_;                                        \
    if (!::ts::nvrtc_available(&why_)) GTEST_SKIP() << why_; \
  } while (0)
