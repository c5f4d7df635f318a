#include "cpu_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <sstream>

#include "cpu_gemm.hpp"
#include "dims.hpp"
#include "files.hpp"
#include "parallel.hpp"

namespace ts {

CpuBackend::CpuBackend(std::vector<KernelInfo> registry, std::function<std::vector<KernelInfo>()> more,
                       std::string cuda_build)
    : m_registry(std::move(registry)), m_more(std::move(more)), m_cuda_build(std::move(cuda_build)) {}

std::string CpuBackend::version_info() const {
  return "CUDA: not used (CPU backend)" + (m_cuda_build.empty() ? std::string() : "; " + m_cuda_build);
}

std::vector<KernelInfo> CpuBackend::kernels() const {
  std::vector<KernelInfo> all = m_registry;
  if (m_more)
    for (auto& k : m_more()) all.push_back(std::move(k));
  return all;
}

std::string CpuBackend::device_name() const {
  return "CPU (" + std::to_string(worker_count()) + " threads)";
}

void CpuBackend::validate(RunRequest& req, bool tile_given) const {
  adopt_given_inputs(req);
  validate_shape(req.spec);
  const std::vector<KernelInfo> all = kernels();
  validate_kernel(req.spec, all, tile_given);
  const KernelInfo* k = find_kernel(all, req.spec.kernel);
  if (k->user)
    throw ValidationError(k->title +
                          " needs a GPU to run, and this is the CPU backend; without one, `tilescope "
                          "list --kernel-file` still compiles it and reports its registers, shared memory "
                          "and occupancy for a chosen GPU");
  if (!k->cpu)
    throw ValidationError("kernel '" + k->id + "' needs the CUDA backend (it has no CPU implementation)");
  const double work = double(req.spec.m) * double(req.spec.n) * double(req.spec.k);
  if (work > double(kCpuMaxWork)) {
    std::ostringstream os;
    os << "M x N x K = " << req.spec.m << " x " << req.spec.n << " x " << req.spec.k << " = " << int64_t(work)
       << " is above the CPU backend's limit of " << kCpuMaxWork
       << " (1024^3); use smaller sizes or a machine with an NVIDIA GPU";
    throw ValidationError(os.str());
  }
  check_host_memory(uint64_t(run_bytes(req.spec.m, req.spec.n, req.spec.k)),
                    "M x N x K = " + std::to_string(req.spec.m) + " x " + std::to_string(req.spec.n) + " x " +
                        std::to_string(req.spec.k));
}

Capacity CpuBackend::capacity() const {
  const double avail = double(available_host_memory());
  return {double(kCpuMaxWork), avail,
          "the CPU backend runs up to M N K = 1024^3" +
              (avail > 0 ? ", A, B and C in the " + format_bytes(avail) + " of host memory available"
                         : std::string())};
}

DeviceInfo CpuBackend::device_info() const {
  DeviceInfo d;
  d.backend = kind();
  d.name = d.label = device_name();
  d.driver = "none (CPU backend)";
  return d;
}

MeasurePolicy CpuBackend::default_policy() const {
  MeasurePolicy p = MeasurePolicy::quick();
  p.warmup_launches = 1;  // the verification launch
  p.min_samples = p.max_samples = 3;
  return p;
}

RunResult CpuBackend::run(const RunRequest& in, const CancelToken& cancel) {
  std::lock_guard<std::mutex> lock(m_run);
  cancel.throw_if_cancelled();  // superseded while another measurement held the backend
  RunRequest req = in;
  validate(req);
  const MeasurePolicy policy = req.policy ? *req.policy : default_policy();
  validate_policy(policy);
  const ProblemSpec& s = req.spec;
  const KernelInfo* k = find_kernel(m_registry, s.kernel);

  HostMatrix a_gen, b_gen;
  if (s.input != InputKind::File) {
    a_gen = generate_input(s.input, s.seed, 0, s.m, s.k);
    b_gen = generate_input(s.input, s.seed, 1, s.k, s.n);
  }
  const HostMatrix& a = req.a ? *req.a : a_gen;
  const HostMatrix& b = req.b ? *req.b : b_gen;
  cancel.throw_if_cancelled();

  HostMatrix ref(s.m, s.n), c(s.m, s.n);
  cpu_gemm_reference(a.data.data(), b.data.data(), ref.data.data(), s.m, s.n, s.k, &cancel);

  RunResult r;
  r.spec = s;
  r.backend = kind();
  r.device = device_name();
  r.reference = "CPU reference (float64 accumulation)";
  r.tf32 = k->tf32;
  const int tile = s.tile ? s.tile : 16;
  auto launch = [&] { k->cpu(a.data.data(), b.data.data(), c.data.data(), s.m, s.n, s.k, tile, &cancel); };
  // Verify before timing: C is poisoned first, so a kernel that skips elements cannot pass on stale data.
  std::fill(c.data.begin(), c.data.end(), std::numeric_limits<float>::quiet_NaN());
  launch();
  cancel.throw_if_cancelled();
  const Tolerance tol =
      tolerance_for(s.k, max_abs(a.data.data(), a.size()), max_abs(b.data.data(), b.size()), k->tf32);
  r.error = compare(c.data.data(), ref.data.data(), s.m, s.n, tol);
  if (r.error.passed || policy.time_failed) {
    MeasureHooks h;
    h.untimed = launch;
    h.timed = [&] {
      const auto t0 = std::chrono::steady_clock::now();
      launch();
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    record_measurement(r, measure(policy, h, cancel, 1), policy, 0);
    if (policy.interleave_reference) r.interleaved_note = "CPU backend: no cuBLAS to time beside the kernel";
  } else {
    r.policy = policy.describe();
    r.timed = false;
    r.stop = "not timed";
    r.date = utc_now();
  }
  r.clock.note = "CPU backend: no SM clock";
  if (k->id == "tiled" || k->id == "naive" || k->id == "coalesced" || k->id == "tiled_nosync" ||
      k->id == "tiled_floork")
    r.tile_m = r.tile_n = tile;  // the CPU versions block the output like the CUDA classic kernels
  if (req.keep_store) {
    auto err = std::make_shared<HostMatrix>(s.m, s.n);
    for (size_t i = 0; i < err->data.size(); ++i) err->data[i] = c.data[i] - ref.data[i];
    auto share = [](const std::shared_ptr<const HostMatrix>& given, HostMatrix& generated) {
      return given ? given : std::make_shared<const HostMatrix>(std::move(generated));
    };
    auto cs = std::make_shared<const HostMatrix>(c);
    r.store = make_host_store(share(req.a, a_gen), share(req.b, b_gen), cs, std::move(err));
    if (req.keep_output) r.c = cs;
  } else if (req.keep_output) {
    r.c = std::make_shared<HostMatrix>(std::move(c));
  }
  return r;
}

BandwidthResult CpuBackend::measure_bandwidth(const CancelToken& cancel) {
  std::lock_guard<std::mutex> lock(m_run);
  const size_t count = size_t(64) << 20;  // 64 Mi floats = 256 MiB per buffer
  std::vector<float> src(count, 1.0f), dst(count, 0.0f);
  MeasurePolicy p = MeasurePolicy::bench();
  p.min_seconds = 0.2;
  p.max_seconds = 2;
  p.max_noise = 0.02;
  auto copy = [&] {
    parallel_for(int64_t(count), int64_t(1) << 20, [&](int64_t b, int64_t e) {
      std::memcpy(dst.data() + b, src.data() + b, size_t(e - b) * sizeof(float));
    });
  };
  MeasureHooks h;
  h.untimed = copy;
  h.timed = [&] {
    const auto t0 = std::chrono::steady_clock::now();
    copy();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  const Measurement m = measure(p, h, cancel);
  BandwidthResult r;
  r.bytes = int64_t(count * sizeof(float));
  r.ms = m.stats;
  r.gbs = m.stats.median > 0 ? 2.0 * double(r.bytes) / (m.stats.median * 1e-3) / 1e9 : 0;
  r.best_gbs = m.stats.min > 0 ? 2.0 * double(r.bytes) / (m.stats.min * 1e-3) / 1e9 : 0;
  r.method = "threaded memcpy of 256 MiB on " + std::to_string(worker_count()) +
             " threads (host memory; read + write counted)";
  return r;
}

}  // namespace ts
