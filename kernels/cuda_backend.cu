// The CUDA backend: inputs generated on the device, the chosen kernel verified against cuBLAS, then timed
// with cudaEvents on the backend's own stream. Only small summaries (error statistics, heatmap views) and,
// when asked, the output C come back to the host.
#include <sstream>

#include "cuda_backend.hpp"
#include "cuda_check.cuh"
#include "cuda_raii.cuh"
#include "matrix_ops.cuh"
#include "registry.hpp"
#include "stats.hpp"

namespace ts {

int cuda_devices(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    if (why) *why = std::string("the CUDA runtime says: ") + cudaGetErrorString(e);
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  if (n == 0 && why) *why = "no CUDA-capable device is detected";
  return n;
}

namespace {

std::string mib(double bytes) {
  std::ostringstream os;
  os.precision(0);
  os << std::fixed << bytes / (1024.0 * 1024.0) << " MiB";
  return os.str();
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int device) : m_device(device) {
    CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    std::ostringstream os;
    os << p.name << " (sm_" << p.major << p.minor << ", " << p.multiProcessorCount << " SMs)";
    m_name = os.str();
    m_sm = p.major * 10 + p.minor;
    for (const auto& e : register_kernels()) m_infos.push_back(e.info);
  }

  std::string kind() const override { return "cuda"; }
  std::string device_name() const override { return m_name; }
  const std::vector<KernelInfo>& kernels() const override { return m_infos; }

  void validate(RunRequest& req, bool tile_given) const override {
    adopt_given_inputs(req);
    validate_shape(req.spec);
    validate_kernel(req.spec, m_infos, tile_given);
    const KernelEntry* e = find_entry(req.spec.kernel);
    if (!e->cuda) throw ValidationError("kernel '" + req.spec.kernel + "' has no CUDA implementation");
    if (e->info.min_sm > m_sm)
      throw ValidationError("kernel '" + req.spec.kernel + "' needs compute capability " +
                            std::to_string(e->info.min_sm / 10) + "." + std::to_string(e->info.min_sm % 10) +
                            " or newer; " + m_name + " is " + std::to_string(m_sm / 10) + "." +
                            std::to_string(m_sm % 10));
    CUDA_CHECK(cudaSetDevice(m_device));
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    const auto& s = req.spec;
    const double need =
        4.0 * (double(s.m) * double(s.k) + double(s.k) * double(s.n) + 2.0 * double(s.m) * double(s.n));
    // Keep a margin for cuBLAS workspace and the display.
    if (need > 0.9 * double(free_b)) {
      std::ostringstream os;
      os << "M x N x K = " << s.m << " x " << s.n << " x " << s.k << " needs " << mib(need)
         << " of GPU memory for A, B, C and the reference, but " << m_name << " has " << mib(double(free_b))
         << " free (limit: 90% of free memory)";
      throw ValidationError(os.str());
    }
  }

  RunResult run(const RunRequest& in, const CancelToken& cancel) override {
    RunRequest req = in;
    validate(req, false);
    const ProblemSpec& s = req.spec;
    const KernelEntry* entry = find_entry(s.kernel);
    CUDA_CHECK(cudaSetDevice(m_device));
    if (!m_stream) m_stream = std::make_unique<CudaStream>();
    cudaStream_t st = m_stream->get();

    DeviceBuffer<float> A(size_t(s.m * s.k)), B(size_t(s.k * s.n)), C(size_t(s.m * s.n)),
        R(size_t(s.m * s.n));
    if (s.input == InputKind::File) {
      CUDA_CHECK(cudaMemcpyAsync(A.get(), req.a->data.data(), A.bytes(), cudaMemcpyHostToDevice, st));
      CUDA_CHECK(cudaMemcpyAsync(B.get(), req.b->data.data(), B.bytes(), cudaMemcpyHostToDevice, st));
    } else {
      device_generate(A.get(), s.m, s.k, gen_kind(s.input), s.seed, 0, st);
      device_generate(B.get(), s.k, s.n, gen_kind(s.input), s.seed, 1, st);
    }
    GemmArgs ref_args{A.get(), B.get(), R.get(), s.m, s.n, s.k};
    GemmArgs args{A.get(), B.get(), C.get(), s.m, s.n, s.k};
    launch_cublas(ref_args, 0, st);
    // Poison C so that a kernel which skips elements cannot pass on stale data.
    CUDA_CHECK(cudaMemsetAsync(C.get(), 0xff, C.bytes(), st));
    entry->cuda(args, s.tile, st);  // the verification launch
    CUDA_CHECK(cudaStreamSynchronize(st));
    cancel.throw_if_cancelled();

    RunResult r;
    r.spec = s;
    r.backend = kind();
    r.device = m_name;
    r.reference = "cuBLAS SGEMM (FP32)";
    const double tol = tolerance_for(s.k, device_max_abs(A.get(), A.size(), st),
                                     device_max_abs(B.get(), B.size(), st), entry->info.tf32);
    r.error = device_compare(C.get(), R.get(), s.m, s.n, tol, st);
    if (req.view_size > 0) {
      auto v = std::make_shared<MatrixViews>();
      const int vs = req.view_size;
      v->a = device_view(A.get(), nullptr, s.m, s.k, vs, vs, Reduce::Mean, st);
      v->b = device_view(B.get(), nullptr, s.k, s.n, vs, vs, Reduce::Mean, st);
      v->c = device_view(C.get(), nullptr, s.m, s.n, vs, vs, Reduce::Mean, st);
      v->err = device_view(C.get(), R.get(), s.m, s.n, vs, vs, Reduce::AbsMax, st);
      r.views = std::move(v);
    }
    if (req.keep_output) {
      auto c = std::make_shared<HostMatrix>(s.m, s.n);
      CUDA_CHECK(cudaMemcpyAsync(c->data.data(), C.get(), C.bytes(), cudaMemcpyDeviceToHost, st));
      CUDA_CHECK(cudaStreamSynchronize(st));
      r.c = std::move(c);
    }

    // Timing: warm-up launches, then one event pair per launch on our stream.
    const int warmup = req.warmup >= 0 ? req.warmup : 2;
    const int samples = req.samples > 0 ? req.samples : 10;
    CudaEvent start, stop;
    for (int i = 0; i < warmup; ++i) entry->cuda(args, s.tile, st);
    for (int i = 0; i < samples; ++i) {
      cancel.throw_if_cancelled();
      CUDA_CHECK(cudaEventRecord(start.get(), st));
      entry->cuda(args, s.tile, st);
      CUDA_CHECK(cudaEventRecord(stop.get(), st));
      CUDA_CHECK(cudaEventSynchronize(stop.get()));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      r.times_ms.push_back(ms);
    }
    r.median_ms = summarize(r.times_ms).median;
    r.tflops = tflops(s.flops(), r.median_ms);
    return r;
  }

 private:
  static const KernelEntry* find_entry(const std::string& id) {
    for (const auto& e : register_kernels())
      if (e.info.id == id) return &e;
    return nullptr;
  }

  int m_device;
  std::string m_name;
  std::vector<KernelInfo> m_infos;
  int m_sm = 0;
  std::unique_ptr<CudaStream> m_stream;
};

}  // namespace

std::shared_ptr<Backend> make_cuda_backend(int device) {
  return std::make_shared<CudaBackend>(device);
}

}  // namespace ts
