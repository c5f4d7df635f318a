#pragma once
// The CPU backend: the same kernels' algorithms run on host threads, checked against a double-accumulating
// reference and timed under the same MeasurePolicy and sampling loop as the GPU (wall-clock time per launch;
// no SM clock). Slow but faithful, so laptops and CI exercise everything but the GPU itself. Requests bigger
// than it can serve in a few seconds are refused (kCpuMaxWork) instead of freezing the window, and so are
// those whose matrices do not fit the host memory available.
#include <memory>
#include <mutex>

#include "core/engine/backend.hpp"

namespace ts {

// Largest M * N K the CPU backend accepts: 2048^3 (about a second for a whole run on two cores: the twins are
// SIMD fused multiply-adds on every core, the reference OpenBLAS's dgemm).
inline constexpr int64_t kCpuMaxWork = int64_t(1) << 33;

class CpuBackend final : public Backend {
 public:
  // `workshop`: where a person's own kernels are built and registered (listed here so the window can say
  // they need a GPU; null: none). `cuda_build`: what this build has of CUDA (registry.hpp: cuda_build_note),
  // for version_info().
  explicit CpuBackend(std::vector<KernelInfo> registry, std::shared_ptr<KernelWorkshop> workshop = nullptr,
                      std::string cuda_build = "");
  std::string kind() const override { return "cpu"; }
  // "CUDA: not used (CPU backend); built with the CUDA 12.4 toolkit" (Help > About's CUDA line).
  std::string version_info() const override;
  std::string device_name() const override;
  std::vector<KernelInfo> kernels() const override;
  KernelWorkshop* workshop() const override { return m_workshop.get(); }
  DeviceInfo device_info() const override;
  // quick, with 3 samples after the verification launch (which doubles as the warm-up).
  MeasurePolicy default_policy() const override;
  // MeasurePolicy::cpu_bench(): a noise target a CPU can reach and a cap counted in launches.
  MeasurePolicy bench_policy() const override { return MeasurePolicy::cpu_bench(); }
  // Up to M N K = 2048^3, with A, B, C, the reference and C - reference in the host memory available.
  Capacity capacity() const override;
  void validate(RunRequest& req, bool tile_given = false) const override;
  RunResult run(const RunRequest& req, const CancelToken& cancel) override;
  // A threaded copy of 256 MiB (host memory bandwidth, as a CPU roofline would use).
  BandwidthResult measure_bandwidth(const CancelToken& cancel) override;

 private:
  std::vector<KernelInfo> m_registry;
  std::shared_ptr<KernelWorkshop> m_workshop;
  std::string m_cuda_build;
  std::mutex m_run;  // one measurement at a time
};

}  // namespace ts
