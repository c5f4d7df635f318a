#pragma once
// A backend that passes every call to another one (the CPU backend in the tests), for tests that need to see
// or hold the engine's runs: a test overrides run() and calls ForwardingBackend::run() for the real work.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/backend.hpp"

namespace ts::test {

class ForwardingBackend : public Backend {
 public:
  explicit ForwardingBackend(std::shared_ptr<Backend> inner) : m_inner(std::move(inner)) {}
  std::string kind() const override { return m_inner->kind(); }
  std::string device_name() const override { return m_inner->device_name(); }
  int cuda_device() const override { return m_inner->cuda_device(); }
  std::vector<KernelInfo> kernels() const override { return m_inner->kernels(); }
  DeviceInfo device_info() const override { return m_inner->device_info(); }
  KernelWorkshop* workshop() const override { return m_inner->workshop(); }
  MeasurePolicy default_policy() const override { return m_inner->default_policy(); }
  MeasurePolicy bench_policy() const override { return m_inner->bench_policy(); }
  std::string version_info() const override { return m_inner->version_info(); }
  Capacity capacity() const override { return m_inner->capacity(); }
  void validate(RunRequest& req, bool tile_given = false) const override {
    m_inner->validate(req, tile_given);
  }
  RunResult run(const RunRequest& req, const CancelToken& cancel) override {
    return m_inner->run(req, cancel);
  }
  BandwidthResult measure_bandwidth(const CancelToken& cancel) override {
    return m_inner->measure_bandwidth(cancel);
  }
  std::optional<LaunchInfo> launch_info(const ProblemSpec& spec) const override {
    return m_inner->launch_info(spec);
  }

 private:
  std::shared_ptr<Backend> m_inner;
};

}  // namespace ts::test
