// The CUDA backend: inputs generated on the device, the chosen kernel verified against cuBLAS, then timed
// with cudaEvents on the backend's own stream. Only small summaries (error statistics, heatmap views) and,
// when asked, the output C come back to the host.
#include <dlfcn.h>

#include <functional>
#include <optional>
#include <sstream>

#include "cuda_backend.hpp"
#include "cuda_check.cuh"
#include "cuda_raii.cuh"
#include "heatmap_lod.cuh"
#include "matrix_ops.cuh"
#include "registry.hpp"
#include "bench.hpp"
#include "stats.hpp"

namespace ts {

int cuda_devices(std::string* why) {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess) {
    // Without the driver library the runtime reports an "insufficient driver": say what that means here.
    void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (driver) dlclose(driver);
    if (why)
      *why = e == cudaErrorNoDevice ? std::string("no NVIDIA GPU found")
             : !driver ? std::string("no NVIDIA GPU found (no NVIDIA driver: libcuda.so.1 is missing)")
                       : std::string("the CUDA runtime says: ") + cudaGetErrorString(e);
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  if (n == 0 && why) *why = "no NVIDIA GPU found";
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
    int clock_khz = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    m_clock_mhz = clock_khz / 1000.0;
    auto attr = [&](cudaDeviceAttr a) {
      int v = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
      return v;
    };
    m_limits.sm_count = p.multiProcessorCount;
    m_limits.max_threads_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor);
    m_limits.max_blocks_per_sm = attr(cudaDevAttrMaxBlocksPerMultiprocessor);
    m_limits.regs_per_sm = attr(cudaDevAttrMaxRegistersPerMultiprocessor);
    m_limits.smem_per_sm = attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
    m_limits.reserved_smem_per_block = attr(cudaDevAttrReservedSharedMemoryPerBlock);
    m_limits.warp_size = p.warpSize;
    for (const auto& e : register_kernels()) m_infos.push_back(e.info);
    configure_memory_pool(device, size_t(1) << 30);  // reuse up to 1 GiB of the last runs' matrices
  }

  std::string kind() const override { return "cuda"; }
  std::string device_name() const override { return m_name; }
  int cuda_device() const override { return m_device; }
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
    const auto& s = req.spec;
    const double need = 4.0 * (double(s.m) * double(s.k) + double(s.k) * double(s.n) +
                               (req.keep_store ? 3.0 : 2.0) * double(s.m) * double(s.n));
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (need >
        0.9 * double(free_b)) {  // memory cached by the pool counts as used: give it back and look again
      trim_memory_pool(m_device);
      CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    }
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

    PoolBuffer<float> A(size_t(s.m * s.k), st), B(size_t(s.k * s.n), st), C(size_t(s.m * s.n), st),
        R(size_t(s.m * s.n), st);
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
    entry->cuda(args, s.tile, st, nullptr);  // the verification launch
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
    for (int i = 0; i < warmup; ++i) entry->cuda(args, s.tile, st, nullptr);
    for (int i = 0; i < samples; ++i) {
      cancel.throw_if_cancelled();
      CUDA_CHECK(cudaEventRecord(start.get(), st));
      entry->cuda(args, s.tile, st, nullptr);
      CUDA_CHECK(cudaEventRecord(stop.get(), st));
      CUDA_CHECK(cudaEventSynchronize(stop.get()));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      r.times_ms.push_back(ms);
    }
    r.median_ms = summarize(r.times_ms).median;
    r.tflops = tflops(s.flops(), r.median_ms);
    r.peak_tflops = peak_tflops(m_sm, m_limits.sm_count, m_clock_mhz, entry->info.tf32);
    LaunchQuery q;
    entry->cuda(args, s.tile, st, &q);
    r.tile_m = q.tile_m;
    r.tile_n = q.tile_n;
    if (req.keep_store) {
      // C - reference from the last timed launch (what the C heatmap shows), before profile() reuses R.
      PoolBuffer<float> E(size_t(s.m * s.n), st);
      device_subtract(E.get(), C.get(), R.get(), s.m * s.n, st);
      CUDA_CHECK(cudaStreamSynchronize(st));
      DeviceMatrices dm;
      dm.m = s.m;
      dm.n = s.n;
      dm.k = s.k;
      dm.a = std::move(A);
      dm.b = std::move(B);
      dm.c = std::move(C);
      dm.err = std::move(E);
      r.store = make_device_store(m_device, std::move(dm));
    }
    if (req.profile) profile(r, *entry, args, R.get(), cancel);
    return r;
  }

  // [SECTION] Profiling: cuBLAS at the same shape, occupancy of the launch, one traced launch.
  void profile(RunResult& r, const KernelEntry& entry, const GemmArgs& args, float* scratch,
               const CancelToken& cancel) {
    cudaStream_t st = m_stream->get();
    const ProblemSpec& s = r.spec;
    CudaEvent start, stop;
    auto time_once = [&](const std::function<void()>& launch) {
      CUDA_CHECK(cudaEventRecord(start.get(), st));
      launch();
      CUDA_CHECK(cudaEventRecord(stop.get(), st));
      CUDA_CHECK(cudaEventSynchronize(stop.get()));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      return double(ms);
    };
    // The reference line of the Timings panel: cuBLAS of the same precision, into scratch (the reference
    // buffer, no longer needed).
    const GemmArgs ref_args{args.A, args.B, scratch, s.m, s.n, s.k};
    const CudaLaunchFn ref = entry.info.tf32 ? &launch_cublas_tf32 : &launch_cublas;
    ref(ref_args, 0, st, nullptr);
    std::vector<double> ref_ms;
    for (int i = 0; i < 5; ++i) ref_ms.push_back(time_once([&] { ref(ref_args, 0, st, nullptr); }));
    r.reference_ms = quantile(ref_ms, 0.5);
    cancel.throw_if_cancelled();

    // Occupancy for the launch that was timed, and for every tile the kernel supports.
    auto occupancy_of = [&](int tile) -> std::optional<OccupancyReport> {
      LaunchQuery q;
      entry.cuda(args, tile, st, &q);
      if (!q.func) return std::nullopt;
      cudaFuncAttributes fa{};
      CUDA_CHECK(cudaFuncGetAttributes(&fa, q.func));
      KernelResources res{q.threads, fa.numRegs, int(fa.sharedSizeBytes), int(q.dynamic_smem)};
      OccupancyReport rep = compute_occupancy(m_limits, res, int64_t(q.grid_x) * q.grid_y);
      CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&rep.api_blocks_per_sm, q.func, q.threads,
                                                               q.dynamic_smem));
      return rep;
    };
    r.occupancy = occupancy_of(s.tile);
    for (int t : entry.info.tiles)
      if (auto o = occupancy_of(t)) r.occupancy_by_tile.emplace_back(t, *o);

    // The tile trace: the instrumented build, launched on its own (never among the timed samples), next to
    // plain launches for the cost of instrumenting.
    if (!entry.info.traceable) {
      r.trace_note = "cuBLAS runs closed kernels: no instrumented build to trace";
      return;
    }
    LaunchQuery q;
    entry.cuda(args, s.tile, st, &q);
    const size_t tiles = size_t(q.grid_x) * q.grid_y;
    DeviceBuffer<TileRecord> rec(tiles);
    GemmArgs traced = args;
    traced.trace = rec.get();
    std::vector<double> plain_ms, traced_ms;
    for (int i = 0; i < 3; ++i) {
      plain_ms.push_back(time_once([&] { entry.cuda(args, s.tile, st, nullptr); }));
      CUDA_CHECK(cudaMemsetAsync(rec.get(), 0, rec.bytes(), st));
      traced_ms.push_back(time_once([&] { entry.cuda(traced, s.tile, st, nullptr); }));
    }
    auto t = std::make_shared<TileTrace>();
    t->sm_count = m_limits.sm_count;
    t->tile_m = q.tile_m;
    t->tile_n = q.tile_n;
    std::vector<TileRecord> raw(tiles);
    CUDA_CHECK(cudaMemcpyAsync(raw.data(), rec.get(), rec.bytes(), cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    // Records in row-major order of C's tiles, whatever the kernel's grid orientation.
    if (q.x_covers_rows) {
      t->grid_y = int(q.grid_x);
      t->grid_x = int(q.grid_y);
      t->records.resize(tiles);
      for (unsigned by = 0; by < q.grid_y; ++by)
        for (unsigned bx = 0; bx < q.grid_x; ++bx)
          t->records[size_t(bx) * q.grid_y + by] = raw[size_t(by) * q.grid_x + bx];
    } else {
      t->grid_x = int(q.grid_x);
      t->grid_y = int(q.grid_y);
      t->records = std::move(raw);
    }
    t->plain_ms = quantile(plain_ms, 0.5);
    t->traced_ms = quantile(traced_ms, 0.5);
    t->timer_resolution_ns = timer_resolution(*t);
    r.trace = std::move(t);
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
  double m_clock_mhz = 0;
  DeviceLimits m_limits;
  std::unique_ptr<CudaStream> m_stream;
};

}  // namespace

std::shared_ptr<Backend> make_cuda_backend(int device) {
  return std::make_shared<CudaBackend>(device);
}

}  // namespace ts
