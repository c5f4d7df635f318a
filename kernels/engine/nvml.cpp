#include "kernels/engine/nvml.hpp"

#include <dlfcn.h>

#include <cuda_runtime.h>

namespace ts {

Nvml::Nvml() {
  m_lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!m_lib) return;
  m_init = reinterpret_cast<int (*)()>(dlsym(m_lib, "nvmlInit_v2"));
  m_shutdown = reinterpret_cast<int (*)()>(dlsym(m_lib, "nvmlShutdown"));
  m_by_pci = reinterpret_cast<int (*)(const char*, void**)>(dlsym(m_lib, "nvmlDeviceGetHandleByPciBusId_v2"));
  m_clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(m_lib, "nvmlDeviceGetClockInfo"));
  m_reasons = reinterpret_cast<int (*)(void*, unsigned long long*)>(
      dlsym(m_lib, "nvmlDeviceGetCurrentClocksEventReasons"));
  if (!m_reasons)
    m_reasons = reinterpret_cast<int (*)(void*, unsigned long long*)>(
        dlsym(m_lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
  m_driver = reinterpret_cast<int (*)(char*, unsigned)>(dlsym(m_lib, "nvmlSystemGetDriverVersion"));
  m_ok = m_init && m_shutdown && m_by_pci && m_clock && m_reasons && m_driver && m_init() == 0;
}

Nvml::~Nvml() {
  if (m_ok) m_shutdown();
  if (m_lib) dlclose(m_lib);
}

void* Nvml::device(int cuda_device) {
  char bus[64] = {};
  if (!m_ok || cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess) return nullptr;
  void* dev = nullptr;
  return m_by_pci(bus, &dev) == 0 ? dev : nullptr;
}

unsigned Nvml::sm_clock_mhz(void* dev) {
  unsigned mhz = 0;
  return m_ok && dev && m_clock(dev, /*NVML_CLOCK_SM*/ 1, &mhz) == 0 ? mhz : 0;
}

std::string Nvml::throttle(void* dev) {
  unsigned long long r = 0;
  if (!m_ok || !dev || m_reasons(dev, &r) != 0) return "";
  std::string s;
  auto add = [&](unsigned long long bit, const char* name) {
    if (r & bit) s += (s.empty() ? "" : "+") + std::string(name);
  };
  add(0x4, "sw_power_cap");
  add(0x8, "hw_slowdown");
  add(0x20, "sw_thermal");
  add(0x40, "hw_thermal");
  add(0x80, "hw_power_brake");
  return s;
}

std::string Nvml::driver_version() {
  char v[96] = {};
  return m_ok && m_driver(v, sizeof v) == 0 ? v : "";
}

}  // namespace ts
