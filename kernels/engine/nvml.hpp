#pragma once
// [SECTION] NVML, loaded at run time from the driver (libnvidia-ml.so.1) so that the program still starts on
// machines without an NVIDIA driver. Only the calls the engine needs: the SM clock, the clock event
// (throttle) reasons and the driver version, declared from NVML's documented C ABI. Move-only RAII.
#include <string>

#include "core/engine/measure.hpp"

namespace ts {

class Nvml {
 public:
  Nvml();
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;
  bool ok() const { return m_ok; }
  // NVML's handle of a CUDA device (matched by PCI bus id); nullptr when NVML is unavailable.
  void* device(int cuda_device);
  unsigned sm_clock_mhz(void* dev);
  // Reasons that mean the clock was held down by power or heat (not idleness or application settings),
  // joined with '+', e.g. "sw_power_cap+sw_thermal"; empty when none.
  std::string throttle(void* dev);
  ClockReading read(void* dev) { return {double(sm_clock_mhz(dev)), throttle(dev)}; }
  std::string driver_version();

 private:
  void* m_lib = nullptr;
  bool m_ok = false;
  int (*m_init)() = nullptr;
  int (*m_shutdown)() = nullptr;
  int (*m_by_pci)(const char*, void**) = nullptr;
  int (*m_clock)(void*, int, unsigned*) = nullptr;
  int (*m_reasons)(void*, unsigned long long*) = nullptr;
  int (*m_driver)(char*, unsigned) = nullptr;
};

}  // namespace ts
