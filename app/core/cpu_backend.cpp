#include "cpu_backend.hpp"

#include <chrono>
#include <sstream>

#include "cpu_gemm.hpp"
#include "parallel.hpp"

namespace ts {

CpuBackend::CpuBackend(std::vector<KernelInfo> registry) : m_registry(std::move(registry)) {}

std::string CpuBackend::device_name() const {
  return "CPU (" + std::to_string(worker_count()) + " threads)";
}

void CpuBackend::validate(RunRequest& req, bool tile_given) const {
  adopt_given_inputs(req);
  validate_shape(req.spec);
  validate_kernel(req.spec, m_registry, tile_given);
  const KernelInfo* k = find_kernel(m_registry, req.spec.kernel);
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
}

RunResult CpuBackend::run(const RunRequest& in, const CancelToken& cancel) {
  RunRequest req = in;
  validate(req);
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

  const int warmup = req.warmup >= 0 ? req.warmup : 0;
  const int samples = req.samples > 0 ? req.samples : 3;
  RunResult r;
  r.spec = s;
  r.backend = kind();
  r.device = device_name();
  r.reference = "CPU reference (float64 accumulation)";
  const int tile = s.tile ? s.tile : 16;
  for (int i = 0; i < warmup + samples; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    k->cpu(a.data.data(), b.data.data(), c.data.data(), s.m, s.n, s.k, tile, &cancel);
    auto t1 = std::chrono::steady_clock::now();
    if (i >= warmup) r.times_ms.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
  }
  cancel.throw_if_cancelled();
  finish_result(r, req, a, b, c, ref.data.data());
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

}  // namespace ts
