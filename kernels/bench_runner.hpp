#pragma once
// `tilescope bench` on the GPU: every (kernel, tile) on every shape, verified against cuBLAS first, then
// timed with cudaEvents on one stream under the BenchPolicy (app/core/bench.hpp). Plain C++ interface.
#include <atomic>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench.hpp"

namespace ts {

struct BenchConfig {
  std::string kernel;
  int tile = 0;
};

struct BenchRequest {
  std::vector<BenchConfig> configs;
  std::vector<Shape> shapes;
  BenchPolicy policy;
  bool cold = false;  // flush L2 (write a buffer of twice its size) before every sample, outside the timing
};

// Called after each point with the point and (done, total).
using BenchProgress = std::function<void(const BenchPoint&, int, int)>;

// Fills `meta` (device, versions, peaks) and returns the points measured. Stops after the current sample when
// *stop becomes true, returning what is complete (meta->interrupted = true). Throws ValidationError for
// configurations the device cannot run, std::runtime_error when there is no CUDA device.
std::vector<BenchPoint> run_bench(const BenchRequest& req, BenchMeta* meta, const std::atomic<bool>* stop,
                                  const BenchProgress& progress);

}  // namespace ts
