#pragma once
// The CPU backend: the same kernels' algorithms run on host threads, checked against a double-accumulating
// reference and timed under the same MeasurePolicy and sampling loop as the GPU (wall-clock time per launch;
// no SM clock). Slow but faithful, so laptops and CI exercise everything but the GPU itself. Requests bigger
// than it can serve in a few seconds are refused (kCpuMaxWork) instead of freezing the window.
#include <functional>
#include <mutex>

#include "backend.hpp"

namespace ts {

// Largest M * N * K the CPU backend accepts: 1024^3 (about a second per pass on a laptop).
inline constexpr int64_t kCpuMaxWork = int64_t(1) << 30;

class CpuBackend final : public Backend {
 public:
  // `more`: kernels that join at run time (a person's own, listed so the window can say they need a GPU).
  explicit CpuBackend(std::vector<KernelInfo> registry, std::function<std::vector<KernelInfo>()> more = {});
  std::string kind() const override { return "cpu"; }
  std::string device_name() const override;
  std::vector<KernelInfo> kernels() const override;
  DeviceInfo device_info() const override;
  // quick, with 3 samples after the verification launch (which doubles as the warm-up).
  MeasurePolicy default_policy() const override;
  // MeasurePolicy::cpu_bench(): a noise target a CPU can reach and a cap counted in launches.
  MeasurePolicy bench_policy() const override { return MeasurePolicy::cpu_bench(); }
  Capacity capacity() const override {
    return {double(kCpuMaxWork), 0, "the CPU backend runs up to M N K = 1024^3"};
  }
  void validate(RunRequest& req, bool tile_given = false) const override;
  RunResult run(const RunRequest& req, const CancelToken& cancel) override;
  // A threaded copy of 256 MiB (host memory bandwidth, as a CPU roofline would use).
  BandwidthResult measure_bandwidth(const CancelToken& cancel) override;

 private:
  std::vector<KernelInfo> m_registry;
  std::function<std::vector<KernelInfo>()> m_more;
  std::mutex m_run;  // one measurement at a time
};

}  // namespace ts
