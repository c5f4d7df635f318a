#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <ctime>

#include "bench_runner.hpp"
#include "cuda_backend.hpp"
#include "cuda_check.cuh"
#include "cuda_raii.cuh"
#include "matrix_ops.cuh"
#include "registry.hpp"
#include "tilescope/version.hpp"

namespace ts {

namespace {

// [SECTION] NVML, loaded at run time from the driver (libnvidia-ml.so.1) so that the program still starts on
// machines without an NVIDIA driver. Only the few calls below, declared from NVML's documented C ABI.
class Nvml {
 public:
  Nvml() {
    m_lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!m_lib) return;
    init = reinterpret_cast<int (*)()>(dlsym(m_lib, "nvmlInit_v2"));
    shutdown = reinterpret_cast<int (*)()>(dlsym(m_lib, "nvmlShutdown"));
    by_pci = reinterpret_cast<int (*)(const char*, void**)>(dlsym(m_lib, "nvmlDeviceGetHandleByPciBusId_v2"));
    clock = reinterpret_cast<int (*)(void*, int, unsigned*)>(dlsym(m_lib, "nvmlDeviceGetClockInfo"));
    reasons = reinterpret_cast<int (*)(void*, unsigned long long*)>(
        dlsym(m_lib, "nvmlDeviceGetCurrentClocksEventReasons"));
    if (!reasons)
      reasons = reinterpret_cast<int (*)(void*, unsigned long long*)>(
          dlsym(m_lib, "nvmlDeviceGetCurrentClocksThrottleReasons"));
    driver = reinterpret_cast<int (*)(char*, unsigned)>(dlsym(m_lib, "nvmlSystemGetDriverVersion"));
    m_ok = init && shutdown && by_pci && clock && reasons && driver && init() == 0;
  }
  ~Nvml() {
    if (m_ok) shutdown();
    if (m_lib) dlclose(m_lib);
  }
  bool ok() const { return m_ok; }
  void* device(int cuda_device) {
    char bus[64] = {};
    if (!m_ok || cudaDeviceGetPCIBusId(bus, sizeof bus, cuda_device) != cudaSuccess) return nullptr;
    void* dev = nullptr;
    return by_pci(bus, &dev) == 0 ? dev : nullptr;
  }
  unsigned sm_clock_mhz(void* dev) {
    unsigned mhz = 0;
    return dev && clock(dev, /*NVML_CLOCK_SM*/ 1, &mhz) == 0 ? mhz : 0;
  }
  // Reasons that mean the clock was held down by power or heat (not idleness or application settings).
  std::string throttle(void* dev) {
    unsigned long long r = 0;
    if (!dev || reasons(dev, &r) != 0) return "";
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
  std::string driver_version() {
    char v[96] = {};
    return m_ok && driver(v, sizeof v) == 0 ? v : "";
  }

 private:
  void* m_lib = nullptr;
  bool m_ok = false;
  int (*init)() = nullptr;
  int (*shutdown)() = nullptr;
  int (*by_pci)(const char*, void**) = nullptr;
  int (*clock)(void*, int, unsigned*) = nullptr;
  int (*reasons)(void*, unsigned long long*) = nullptr;
  int (*driver)(char*, unsigned) = nullptr;
};

const KernelEntry* entry_of(const std::string& id) {
  for (const auto& e : register_kernels())
    if (e.info.id == id) return &e;
  return nullptr;
}

std::string now_utc() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

std::string version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

}  // namespace

std::vector<BenchPoint> run_bench(const BenchRequest& req, BenchMeta* meta, const std::atomic<bool>* stop,
                                  const BenchProgress& progress) {
  std::string why;
  if (cuda_devices(&why) == 0) throw std::runtime_error("tilescope bench needs a CUDA device: " + why);
  const int dev = 0;
  CUDA_CHECK(cudaSetDevice(dev));
  cudaDeviceProp p{};
  CUDA_CHECK(cudaGetDeviceProperties(&p, dev));
  int clock_khz = 0, l2_bytes = 0, drv = 0, rt = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, dev));
  CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, dev));
  CUDA_CHECK(cudaDriverGetVersion(&drv));
  CUDA_CHECK(cudaRuntimeGetVersion(&rt));
  Nvml nvml;
  void* ndev = nvml.device(dev);

  BenchMeta& m = *meta;
  m.device = p.name;
  m.sm = p.major * 10 + p.minor;
  m.sm_count = p.multiProcessorCount;
  m.max_sm_clock_mhz = clock_khz / 1000.0;
  m.driver = nvml.driver_version();
  m.driver = (m.driver.empty() ? "" : m.driver + ", ") + "CUDA " + version_string(drv);
  m.cuda_runtime = version_string(rt);
  m.program_version = kVersion;
  m.commit = kGitCommit;
  m.date = now_utc();
  m.peak_fp32_tflops = peak_tflops(m.sm, m.sm_count, m.max_sm_clock_mhz, false);
  m.peak_tf32_tflops = peak_tflops(m.sm, m.sm_count, m.max_sm_clock_mhz, true);
  m.cold = req.cold;

  // Validate every configuration before measuring anything.
  for (const auto& c : req.configs) {
    const KernelEntry* e = entry_of(c.kernel);
    if (!e || !e->cuda) throw ValidationError("unknown kernel '" + c.kernel + "' (see `tilescope list`)");
    ProblemSpec s;
    s.kernel = c.kernel;
    s.tile = c.tile;
    validate_kernel(s, kernel_infos(), c.tile != 0);
    if (e->info.min_sm > m.sm)
      throw ValidationError("kernel '" + c.kernel + "' needs compute capability " +
                            std::to_string(e->info.min_sm));
  }
  for (const auto& sh : req.shapes) {
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const double need = 4.0 * (double(sh.m) * sh.k + double(sh.k) * sh.n + 2.0 * double(sh.m) * sh.n) +
                        (req.cold ? 2.0 * l2_bytes : 0.0);
    if (need > 0.9 * double(free_b))
      throw ValidationError("shape " + std::to_string(sh.m) + "x" + std::to_string(sh.n) + "x" +
                            std::to_string(sh.k) + " needs " + std::to_string(int64_t(need / 1048576)) +
                            " MiB of GPU memory; " + std::to_string(int64_t(free_b / 1048576)) +
                            " MiB are free");
  }

  CudaStream stream;
  cudaStream_t st = stream.get();
  CudaEvent start, end;
  DeviceBuffer<char> flush(req.cold ? size_t(l2_bytes) * 2 : 0);
  std::vector<BenchPoint> points;
  const int total = int(req.configs.size() * req.shapes.size());
  using clock = std::chrono::steady_clock;

  for (const auto& sh : req.shapes) {
    DeviceBuffer<float> A(size_t(sh.m * sh.k)), B(size_t(sh.k * sh.n)), C(size_t(sh.m * sh.n)),
        R(size_t(sh.m * sh.n));
    device_generate(A.get(), sh.m, sh.k, GenKind::Random, 1, 0, st);
    device_generate(B.get(), sh.k, sh.n, GenKind::Random, 1, 1, st);
    launch_cublas({A.get(), B.get(), R.get(), sh.m, sh.n, sh.k}, 0, st);
    const double max_a = device_max_abs(A.get(), A.size(), st), max_b = device_max_abs(B.get(), B.size(), st);
    const GemmArgs args{A.get(), B.get(), C.get(), sh.m, sh.n, sh.k};

    for (const auto& c : req.configs) {
      if (stop && stop->load()) {
        m.interrupted = true;
        return points;
      }
      const KernelEntry* e = entry_of(c.kernel);
      BenchPoint pt;
      pt.kernel = c.kernel;
      pt.tile = e->info.tiles.empty() ? 0 : c.tile;
      pt.tf32 = e->info.tf32;
      pt.m = sh.m;
      pt.n = sh.n;
      pt.k = sh.k;
      // Verify before timing: a wrong kernel's speed means nothing.
      CUDA_CHECK(cudaMemsetAsync(C.get(), 0xff, C.bytes(), st));
      e->cuda(args, pt.tile, st, nullptr);
      CUDA_CHECK(cudaStreamSynchronize(st));
      const ErrorStats err =
          device_compare(C.get(), R.get(), sh.m, sh.n, tolerance_for(sh.k, max_a, max_b, pt.tf32), st);
      pt.max_abs_err = err.max_abs_err;
      pt.tolerance = err.tolerance;
      pt.verified = err.passed;
      if (!err.passed) {
        pt.error = std::to_string(err.bad_elements) + " elements over the tolerance";
        pt.stop = "not timed";
        points.push_back(pt);
        if (progress) progress(pt, int(points.size()), total);
        continue;
      }
      // Warm-up: at least 3 launches and 50 ms.
      const auto w0 = clock::now();
      for (int i = 0; i < 3 || std::chrono::duration<double>(clock::now() - w0).count() < 0.05; ++i) {
        e->cuda(args, pt.tile, st, nullptr);
        CUDA_CHECK(cudaStreamSynchronize(st));
      }
      std::vector<double> samples, clocks;
      std::string reasons;
      const auto t0 = clock::now();
      StopReason why_stop = StopReason::Continue;
      while (why_stop == StopReason::Continue) {
        if (stop && stop->load()) break;
        if (req.cold) CUDA_CHECK(cudaMemsetAsync(flush.get(), int(samples.size() & 0xff), flush.bytes(), st));
        CUDA_CHECK(cudaEventRecord(start.get(), st));
        e->cuda(args, pt.tile, st, nullptr);
        CUDA_CHECK(cudaEventRecord(end.get(), st));
        CUDA_CHECK(cudaEventSynchronize(end.get()));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), end.get()));
        samples.push_back(ms);
        if (unsigned mhz = nvml.sm_clock_mhz(ndev)) clocks.push_back(mhz);
        const std::string r = nvml.throttle(ndev);
        if (!r.empty() && reasons.find(r) == std::string::npos) reasons += (reasons.empty() ? "" : ",") + r;
        why_stop =
            bench_should_stop(samples, std::chrono::duration<double>(clock::now() - t0).count(), req.policy);
      }
      if (samples.empty()) {
        m.interrupted = true;
        return points;
      }
      pt.stats = summarize(samples);
      pt.noise = noise(samples);
      pt.stop = why_stop == StopReason::Continue ? "interrupted" : to_string(why_stop);
      pt.tflops = tflops(2.0 * double(sh.m) * double(sh.n) * double(sh.k), pt.stats.median);
      const double peak = pt.tf32 ? m.peak_tf32_tflops : m.peak_fp32_tflops;
      pt.pct_peak = peak > 0 ? 100.0 * pt.tflops / peak : 0.0;
      if (!clocks.empty()) {
        pt.sm_clock_min_mhz = *std::min_element(clocks.begin(), clocks.end());
        pt.sm_clock_median_mhz = quantile(clocks, 0.5);
      }
      pt.throttle_reasons = reasons;
      pt.throttled =
          !reasons.empty() || (pt.sm_clock_min_mhz > 0 && pt.sm_clock_min_mhz < 0.9 * m.max_sm_clock_mhz);
      points.push_back(pt);
      if (progress) progress(pt, int(points.size()), total);
      if (why_stop == StopReason::Continue) {  // interrupted mid-point: keep it, but say so
        m.interrupted = true;
        return points;
      }
    }
  }
  return points;
}

}  // namespace ts
