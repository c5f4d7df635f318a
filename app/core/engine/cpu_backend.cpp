#include "core/engine/cpu_backend.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>
#include <sstream>

#include "core/engine/cpu_gemm.hpp"
#include "core/engine/engine.hpp"
#include "core/engine/input_gen.hpp"
#include "core/engine/dims.hpp"
#include "core/io/files.hpp"
#include "core/user_kernel/kernel_workshop.hpp"
#include "core/base/parallel.hpp"

namespace ts {

CpuBackend::CpuBackend(std::vector<KernelInfo> registry, std::shared_ptr<KernelWorkshop> workshop,
                       std::string cuda_build)
    : m_registry(std::move(registry)), m_workshop(std::move(workshop)), m_cuda_build(std::move(cuda_build)) {}

std::string CpuBackend::version_info() const {
  return "CUDA: not used (CPU backend)" + (m_cuda_build.empty() ? std::string() : "; " + m_cuda_build);
}

std::vector<KernelInfo> CpuBackend::kernels() const {
  std::vector<KernelInfo> all = m_registry;
  if (m_workshop)
    for (auto& k : m_workshop->infos()) all.push_back(std::move(k));
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
       << " (2048^3); use smaller sizes or a machine with an NVIDIA GPU";
    throw ValidationError(os.str());
  }
  // Changing inputs: the other input sets beside A, B, C and the reference (C's copy takes C - ref's room).
  const double sets = req.policy && req.policy->changing_inputs ? MeasurePolicy::kChangingInputSets - 1 : 0;
  const double more = sets * 4.0 * (double(req.spec.m) * req.spec.k + double(req.spec.k) * req.spec.n);
  check_host_memory(uint64_t(run_bytes(req.spec.m, req.spec.n, req.spec.k) + more),
                    "M x N x K = " + std::to_string(req.spec.m) + " x " + std::to_string(req.spec.n) + " x " +
                        std::to_string(req.spec.k));
}

Capacity CpuBackend::capacity() const {
  const double avail = double(available_host_memory());
  return {double(kCpuMaxWork), avail,
          "the CPU backend runs up to M N K = 2048^3" +
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

namespace {

// [SECTION] A run on the CPU: the matrices in host memory, a CPU twin as the kernel (engine.hpp).
class HostRun final : public RunMatrices, public RunLauncher {
 public:
  HostRun(const KernelInfo& k, const ProblemSpec& s) : m_k(k), m_s(s), m_tile(s.tile ? s.tile : 16) {}

  void make_inputs(const RunRequest& req) override {
    const ProblemSpec& s = m_s;
    if (req.a && req.b) {
      m_a = req.a;
      m_b = req.b;
    } else {
      m_a = std::make_shared<const HostMatrix>(generate_input(s.input, s.seed, 0, s.m, s.k));
      m_b = std::make_shared<const HostMatrix>(generate_input(s.input, s.seed, 1, s.k, s.n));
    }
    m_c = std::make_shared<HostMatrix>(s.m, s.n);
  }
  void make_reference(const CancelToken& cancel) override {
    m_ref = HostMatrix(m_s.m, m_s.n);
    cpu_gemm_reference(m_a->data.data(), m_b->data.data(), m_ref.data.data(), m_s.m, m_s.n, m_s.k, &cancel);
  }
  // Changing inputs (engine.hpp): m_a and m_b are the set the next launch reads and the reference's.
  void make_input_sets(int sets) override {
    m_sets = {{m_a, m_b}};
    for (int i = 1; i < sets; ++i)
      m_sets.push_back({std::make_shared<const HostMatrix>(generate_input(
                            InputKind::Random, m_s.seed, changed_input_stream(i, 0), m_s.m, m_s.k)),
                        std::make_shared<const HostMatrix>(generate_input(
                            InputKind::Random, m_s.seed, changed_input_stream(i, 1), m_s.k, m_s.n))});
  }
  void select_inputs(int set, const CancelToken& cancel) override {
    use(set);
    make_reference(cancel);
  }
  void keep_c() override { m_kept_c = m_c->data; }
  int64_t c_unchanged() override {
    int64_t n = 0;
    for (size_t i = 0; i < m_kept_c.size(); ++i)
      n += std::memcmp(&m_kept_c[i], &m_c->data[i], sizeof(float)) == 0;
    return n;
  }
  void end_input_sets(const CancelToken& cancel) override {
    m_c->data = m_kept_c;
    select_inputs(0, cancel);
    m_sets.clear();
    m_kept_c = {};
  }
  void poison_c() override { std::memset(m_c->data.data(), 0xff, m_c->data.size() * sizeof(float)); }
  double max_abs_a() override { return max_abs(m_a->data.data(), m_a->size()); }
  double max_abs_b() override { return max_abs(m_b->data.data(), m_b->size()); }
  ErrorStats compare(const Tolerance& t) override {
    return ts::compare(m_c->data.data(), m_ref.data.data(), m_s.m, m_s.n, t);
  }
  int64_t unwritten() override {
    int64_t n = 0;
    for (float v : m_c->data) {
      uint32_t bits;
      std::memcpy(&bits, &v, sizeof bits);
      n += bits == 0xffffffffu;
    }
    return n;
  }
  std::shared_ptr<const HostMatrix> copy_c() override { return m_c; }
  std::shared_ptr<const MatrixStore> keep_store() override {
    auto err = std::make_shared<HostMatrix>(m_s.m, m_s.n);
    for (size_t i = 0; i < err->data.size(); ++i) err->data[i] = m_c->data[i] - m_ref.data[i];
    return make_host_store(m_a, m_b, m_c, std::move(err));
  }

  void verify_launch(const CancelToken& cancel) override { launch(cancel); }
  Measurement measure(const MeasurePolicy& policy, const CancelToken& cancel) override {
    return ts::measure(policy, hooks(cancel), cancel, 1);
  }
  Measurement measure_changing(const MeasurePolicy& policy, int sets, const CancelToken& cancel) override {
    return ts::measure_changing(
        policy, hooks(cancel), [&](int set) { use(set); }, sets, cancel);
  }
  void launch_on(int set, const CancelToken& cancel) override {
    use(set);
    launch(cancel);
  }
  void after_timing(RunResult& r, const MeasurePolicy& policy) override {
    if (policy.interleave_reference) r.interleaved_note = "CPU backend: no cuBLAS to time beside the kernel";
  }
  void describe_launch(RunResult& r) override {
    r.clock.note = "CPU backend: no SM clock";
    if (m_k.cpu_blocks_c) r.tile_m = r.tile_n = m_tile;  // the kernel's entry says how its CPU twin blocks C
  }

 private:
  // The twin launched untimed, and timed by the wall clock: the hooks of both measurements.
  MeasureHooks hooks(const CancelToken& cancel) {
    MeasureHooks h;
    h.untimed = [this, &cancel] { launch(cancel); };
    h.timed = [this, &cancel] {
      const auto t0 = std::chrono::steady_clock::now();
      launch(cancel);
      return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    };
    return h;
  }
  void launch(const CancelToken& cancel) {
    m_k.cpu(m_a->data.data(), m_b->data.data(), m_c->data.data(), m_s.m, m_s.n, m_s.k, m_tile, &cancel);
  }
  void use(int set) {
    m_a = m_sets.at(size_t(set)).first;
    m_b = m_sets.at(size_t(set)).second;
  }
  const KernelInfo& m_k;
  const ProblemSpec& m_s;
  const int m_tile;
  std::shared_ptr<const HostMatrix> m_a, m_b;
  HostMatrix m_ref;
  std::shared_ptr<HostMatrix> m_c;
  // Changing inputs: every set's A and B (set 0: the run's own), and C as the run's own inputs left it.
  std::vector<std::pair<std::shared_ptr<const HostMatrix>, std::shared_ptr<const HostMatrix>>> m_sets;
  std::vector<float> m_kept_c;
};

}  // namespace

RunResult CpuBackend::run(const RunRequest& in, const CancelToken& cancel) {
  std::lock_guard<std::mutex> lock(m_run);
  cancel.throw_if_cancelled();  // superseded while another measurement held the backend
  RunRequest req = in;
  validate(req);
  const MeasurePolicy policy = req.policy ? *req.policy : default_policy();
  validate_policy(policy);
  const KernelInfo* k = find_kernel(m_registry, req.spec.kernel);
  RunFacts facts;
  facts.backend = kind();
  facts.device = device_name();
  facts.reference = "CPU reference (float64 accumulation)";
  facts.tf32 = k->tf32;
  facts.device_info = device_info();  // no roofs: nothing is flagged impossible here
  HostRun run(*k, req.spec);
  return run_pipeline(req, policy, facts, run, run, cancel);
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
