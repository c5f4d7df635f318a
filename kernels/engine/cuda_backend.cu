// The CUDA backend and its engine: inputs generated on the device, the chosen kernel verified against cuBLAS,
// then timed with cudaEvents on the backend's own stream under the request's MeasurePolicy, with the SM clock
// and throttle reasons read through NVML after every sample. Only small summaries (error statistics) and,
// when asked, the output C come back to the host; the matrices stay on the device for the heatmaps.
#include <dlfcn.h>

#include <functional>
#include <mutex>
#include <optional>
#include <sstream>

#include "kernels/engine/bandwidth.cuh"
#include "kernels/engine/cuda_backend.hpp"
#include "kernels/engine/cuda_check.cuh"
#include "kernels/engine/cuda_raii.cuh"
#include "kernels/engine/device_run.cuh"
#include "core/engine/engine.hpp"
#include "kernels/engine/heatmap_lod.cuh"
#include "kernels/engine/mangled_names.hpp"
#include "kernels/engine/matrix_ops.cuh"
#include "kernels/engine/nvml.hpp"
#include "kernels/engine/registry.hpp"
#include "kernels/user/user_run.hpp"
#include "kernels/user/nvrtc_workshop.hpp"
#include "core/user_kernel/your_kernel.hpp"
#include "core/io/bench.hpp"
#include "core/engine/schedule_replay.hpp"
#include "core/engine/stats.hpp"

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
    auto attr = [&](cudaDeviceAttr a) {
      int v = 0;
      CUDA_CHECK(cudaDeviceGetAttribute(&v, a, device));
      return v;
    };
    m_clock_mhz = attr(cudaDevAttrClockRate) / 1000.0;
    m_limits.sm_count = p.multiProcessorCount;
    m_limits.max_threads_per_sm = attr(cudaDevAttrMaxThreadsPerMultiProcessor);
    m_limits.max_blocks_per_sm = attr(cudaDevAttrMaxBlocksPerMultiprocessor);
    m_limits.regs_per_sm = attr(cudaDevAttrMaxRegistersPerMultiprocessor);
    m_limits.smem_per_sm = attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor);
    m_limits.reserved_smem_per_block = attr(cudaDevAttrReservedSharedMemoryPerBlock);
    m_limits.warp_size = p.warpSize;
    for (const auto& e : register_kernels()) m_infos.push_back(e.info);

    DeviceInfo& d = m_info;
    d.backend = kind();
    d.name = p.name;
    d.label = m_name;
    d.sm = m_sm;
    d.sm_count = p.multiProcessorCount;
    d.max_sm_clock_mhz = m_clock_mhz;
    int drv = 0, rt = 0;
    CUDA_CHECK(cudaDriverGetVersion(&drv));
    CUDA_CHECK(cudaRuntimeGetVersion(&rt));
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); };
    const std::string nvml_driver = m_nvml.driver_version();
    d.driver = (nvml_driver.empty() ? "" : nvml_driver + ", ") + "CUDA " + version(drv);
    d.cuda_runtime = version(rt);
    d.l2_bytes = attr(cudaDevAttrL2CacheSize);
    d.memory_bytes = int64_t(p.totalGlobalMem);
    // DDR: two transfers per memory clock (HBM and GDDR report it that way through this attribute).
    d.datasheet_bandwidth_gbs =
        2.0 * attr(cudaDevAttrMemoryClockRate) * 1e3 * (attr(cudaDevAttrGlobalMemoryBusWidth) / 8.0) / 1e9;
    d.peak_fp32_tflops = peak_tflops(m_sm, d.sm_count, m_clock_mhz, false, d.name);
    d.peak_tf32_tflops = peak_tflops(m_sm, d.sm_count, m_clock_mhz, true, d.name);
    d.limits = m_limits;
    m_nvml_dev = m_nvml.device(device);
    configure_memory_pool(device, size_t(1) << 30);  // reuse up to 1 GiB of the last runs' matrices
    // A person's own kernels run in a worker process (started when the first one runs).
    UserRunDevice ud;
    ud.device = device;
    ud.sm = m_sm;
    ud.name = p.name;
    ud.label = m_name;
    ud.limits = m_limits;
    ud.clock_mhz = m_clock_mhz;
    ud.peak_fp32_tflops = d.peak_fp32_tflops;
    ud.peak_tf32_tflops = d.peak_tf32_tflops;
    ud.l2_bytes = d.l2_bytes;
    ud.max_threads_per_block = p.maxThreadsPerBlock;
    ud.max_smem_per_block_optin = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin);
    ud.regs_per_block = p.regsPerBlock;
    ud.info = d;
    m_user = std::make_unique<UserRunner>(ud);
    m_workshop = std::make_unique<NvrtcWorkshop>(device, m_sm);
  }

  std::string kind() const override { return "cuda"; }
  std::string device_name() const override { return m_name; }
  int cuda_device() const override { return m_device; }
  std::vector<KernelInfo> kernels() const override {
    std::vector<KernelInfo> all = m_infos;
    for (auto& k : m_workshop->infos()) all.push_back(std::move(k));
    return all;
  }
  DeviceInfo device_info() const override { return m_info; }
  KernelWorkshop* workshop() const override { return m_workshop.get(); }

  std::string version_info() const override {
    int drv = 0, rt = 0;
    cudaDriverGetVersion(&drv);
    cudaRuntimeGetVersion(&rt);
    auto v = [](int x) { return std::to_string(x / 1000) + "." + std::to_string((x % 1000) / 10); };
    return "CUDA driver API " + v(drv) + ", runtime " + v(rt);
  }

  // 90 % of the memory free now (memory the pool caches counts as free: validate() trims it when needed).
  Capacity capacity() const override {
    CUDA_CHECK(cudaSetDevice(m_device));
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t cached = 0;
    cudaMemPool_t pool;
    if (cudaDeviceGetDefaultMemPool(&pool, m_device) == cudaSuccess) {
      uint64_t reserved = 0, used = 0;
      if (cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved) == cudaSuccess &&
          cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &used) == cudaSuccess &&
          reserved > used)
        cached = size_t(reserved - used);
    }
    Capacity c;
    c.max_bytes = 0.9 * double(free_b + cached);
    c.what = m_name + ": A, B, C, the reference and C - reference in 90 % of its free memory (" +
             mib(double(free_b + cached)) + ")";
    return c;
  }

  void validate(RunRequest& req, bool tile_given) const override {
    adopt_given_inputs(req);
    validate_shape(req.spec);
    validate_kernel(req.spec, kernels(), tile_given);
    if (req.policy) validate_policy(*req.policy);
    const KernelEntry* e = find_entry(req.spec.kernel);
    const auto user = e ? nullptr : m_workshop->find(req.spec.kernel);
    if (!e && !user) throw ValidationError("kernel '" + req.spec.kernel + "' is not registered");
    if (user) {
      if (std::string why; !m_workshop->can_build(&why))
        throw ValidationError(user->info().title + ": it cannot be built here: " + why);
    } else if (!e->cuda) {
      throw ValidationError("kernel '" + req.spec.kernel + "' has no CUDA implementation");
    }
    if (e && e->info.min_sm > m_sm)
      throw ValidationError("kernel '" + req.spec.kernel + "' needs compute capability " +
                            std::to_string(e->info.min_sm / 10) + "." + std::to_string(e->info.min_sm % 10) +
                            " or newer; " + m_name + " is " + std::to_string(m_sm / 10) + "." +
                            std::to_string(m_sm % 10));
    // The GPU's limits are its memory and CUDA's index range (dims.hpp: check_gpu_grid, check_gpu_memory).
    const auto& s = req.spec;
    GpuRunNeeds need;
    need.matrices = run_bytes(s.m, s.n, s.k);
    // The L2 flush buffer of a cold-cache policy; a person's kernel also needs the worker's own A and B.
    if (req.policy && req.policy->cold_l2) need.l2_flush = 2.0 * double(m_info.l2_bytes);
    if (user) need.worker_copies = 4.0 * (double(s.m) * double(s.k) + double(s.k) * double(s.n));
    // Changing inputs: the other input sets (and the worker's copies of them); C's copy takes C - ref's room.
    if (req.policy && req.policy->changing_inputs)
      need.input_sets = (MeasurePolicy::kChangingInputSets - 1) * 4.0 *
                        (double(s.m) * double(s.k) + double(s.k) * double(s.n)) * (user ? 2 : 1);
    if (e) {  // the built-in kernel's launch at this shape and tile (a person's is checked below)
      LaunchQuery q;
      q.offline = true;
      q.sm_count = m_limits.sm_count;
      e->cuda(GemmArgs{nullptr, nullptr, nullptr, s.m, s.n, s.k}, s.tile, nullptr, &q);
      check_gpu_grid(s, {int64_t(q.grid_x), int64_t(q.grid_y), int64_t(q.grid_z)});
      need.workspace = double(q.workspace_bytes);  // split-K's partial tiles
      need.workspace_for = s.kernel + " tile " + std::to_string(s.tile);
    }
    CUDA_CHECK(cudaSetDevice(m_device));
    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if (!gpu_memory_fits(need, double(free_b))) {  // memory cached by the pool counts as used: give it back
      trim_memory_pool(m_device);
      CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    }
    check_gpu_memory(s, need, double(free_b), m_name);
    // The person's kernel: compiled (or found in the cache), its launch evaluated and checked against this
    // device before anything is allocated.
    if (user) m_user->validate(req.spec, *user);
  }

  // [SECTION] The engine: validate, allocate, generate, verify, then time under the policy.
  RunResult run(const RunRequest& in, const CancelToken& cancel) override {
    std::lock_guard<std::mutex> lock(m_run);
    cancel.throw_if_cancelled();  // superseded while another measurement held the device
    RunRequest req = in;
    validate(req, false);
    const MeasurePolicy policy = req.policy ? *req.policy : default_policy();
    const ProblemSpec& s = req.spec;
    const KernelEntry* entry = find_entry(s.kernel);
    CUDA_CHECK(cudaSetDevice(m_device));
    if (!m_stream) m_stream = std::make_unique<CudaStream>();
    cudaStream_t st = m_stream->get();
    if (!entry) {  // a person's own kernel: the same run, with the kernel in the worker process
      const auto user = m_workshop->find(s.kernel);
      if (!user) throw ValidationError("kernel '" + s.kernel + "' is no longer registered");
      RunResult r = [&] {
        try {
          return m_user->run(req, *user, st, policy, cancel);
        } catch (const WorkerFailure& e) {
          if (e.kind() == WorkerFailure::Kind::Fault || e.kind() == WorkerFailure::Kind::Hang ||
              e.kind() == WorkerFailure::Kind::Died) {
            std::lock_guard<std::mutex> g(m_incident_mutex);
            ++m_incidents.count;
            m_incidents.latest = e.what();
          }
          throw;
        }
      }();
      if (policy.interleave_reference && r.timed && !r.cublas_interleaved())
        r.interleaved_note =
            "a person's kernel runs in the worker process: cuBLAS is not timed between its samples";
      return r;
    }

    DeviceRunMatrices mats(m_device, s, st, false);
    BuiltinLauncher launcher(*this, *entry, s, mats, st);
    RunFacts facts;
    facts.backend = kind();
    facts.device = m_name;
    facts.reference = "cuBLAS SGEMM (FP32)";
    facts.tf32 = entry->info.tf32;
    facts.peak_tflops = entry->info.tf32 ? m_info.peak_tf32_tflops : m_info.peak_fp32_tflops;
    facts.clock_mhz = m_clock_mhz;
    facts.device_info = m_info;
    if (const KernelEntry* ref = reference_entry(*entry)) facts.reference_kernel = ref->info.id;
    return run_pipeline(req, policy, facts, mats, launcher, cancel);
  }

  // [SECTION] A built-in kernel in this process (engine.hpp's RunLauncher): launched on the engine's stream,
  // each sample timed by a cudaEvent pair with the SM clock read through NVML after it; with
  // interleave_reference, cuBLAS of the kernel's precision timed right after every sample the same way.
  class BuiltinLauncher final : public RunLauncher {
   public:
    BuiltinLauncher(CudaBackend& be, const KernelEntry& e, const ProblemSpec& s, DeviceRunMatrices& mats,
                    cudaStream_t st)
        : m_be(be), m_e(e), m_s(s), m_mats(mats), m_st(st) {}

    void verify_launch(const CancelToken& cancel) override {
      (void)cancel;
      m_args = GemmArgs{m_mats.a(), m_mats.b(), m_mats.c(), m_s.m, m_s.n, m_s.k};
      // What the kernel needs beside A, B and C (split-K: partial tiles and a count per tile), zeroed once.
      if (const size_t ws = workspace_bytes(m_e, m_s, m_be.m_limits.sm_count); ws > 0) {
        m_workspace.emplace(ws, m_st);
        CUDA_CHECK(cudaMemsetAsync(m_workspace->get(), 0, ws, m_st));
        m_args.workspace = m_workspace->get();
        m_args.workspace_bytes = ws;
      }
      m_e.cuda(m_args, m_s.tile, m_st, nullptr);
      CUDA_CHECK(cudaStreamSynchronize(m_st));
    }

    // Short launches are timed in batches (MeasurePolicy::min_sample_ms): the fastest of three single
    // launches (on the run's own inputs) says how many make a sample. Those three are warm-ups like the
    // verification launch: `probes` says how many were made, for Measurement::warmups.
    int batch_size(const MeasurePolicy& policy, StreamTimer& timer, int& probes) {
      probes = 0;
      if (!(policy.min_sample_ms > 0) || policy.cold_l2) return 1;
      double fastest = 0;
      for (; probes < 3; ++probes) {
        const double ms = timer.ms([&] { m_e.cuda(m_args, m_s.tile, m_st, nullptr); });
        fastest = probes == 0 ? ms : std::min(fastest, ms);
      }
      return policy.launches_per_sample(fastest);
    }

    Measurement measure(const MeasurePolicy& policy, const CancelToken& cancel) override {
      StreamTimer timer(m_st);
      DeviceBuffer<char> flush(policy.cold_l2 ? size_t(2 * m_be.m_info.l2_bytes) : 0);
      MeasureHooks h;
      h.untimed = [&] {
        m_e.cuda(m_args, m_s.tile, m_st, nullptr);
        CUDA_CHECK(cudaStreamSynchronize(m_st));
      };
      // The interleaved reference gets the batch's count of launches, and as many warm-ups as the probes.
      int probes = 0;
      const int batch = batch_size(policy, timer, probes);
      h.launches_per_sample = batch;
      h.timed = [&] {
        return timer.ms([&] {
          for (int i = 0; i < batch; ++i) m_e.cuda(m_args, m_s.tile, m_st, nullptr);
        }) / batch;
      };
      int flushes = 0;
      h.flush = [&] {  // a buffer of twice the L2 size, written outside the timing
        CUDA_CHECK(cudaMemsetAsync(flush.get(), ++flushes & 0xff, flush.bytes(), m_st));
      };
      h.clock = [&] { return m_be.m_nvml.read(m_be.m_nvml_dev); };
      // The interleaved reference. Its scratch buffer takes the room of C - reference, which is made only
      // after the timing (run_bytes counts A, B, C, the reference and C - reference).
      const KernelEntry* ref = reference_entry(m_e);
      std::optional<PoolBuffer<float>> scratch;
      GemmArgs ref_args{m_mats.a(), m_mats.b(), nullptr, m_s.m, m_s.n, m_s.k};
      if (policy.interleave_reference && ref) {
        scratch.emplace(size_t(m_s.m * m_s.n), m_st);
        ref_args.C = scratch->get();
        h.reference_timed = [&] {
          return timer.ms([&] {
            for (int i = 0; i < batch; ++i) ref->cuda(ref_args, 0, m_st, nullptr);
          }) / batch;
        };
        h.reference_clock = h.clock;
      }
      return ts::measure(policy, h, cancel, 1 + probes);
    }

    // Changing inputs: A and B of each launch's set in its arguments (the launch itself as measure()'s),
    // short launches in batches as measure()'s, each launch of a batch on the next set.
    Measurement measure_changing(const MeasurePolicy& policy, int sets, const CancelToken& cancel) override {
      StreamTimer timer(m_st);
      DeviceBuffer<char> flush(policy.cold_l2 ? size_t(2 * m_be.m_info.l2_bytes) : 0);
      int probes = 0;
      const int batch = batch_size(policy, timer, probes);
      GemmArgs args = m_args;
      MeasureHooks h;
      h.untimed = [&] {
        m_e.cuda(args, m_s.tile, m_st, nullptr);
        CUDA_CHECK(cudaStreamSynchronize(m_st));
      };
      h.timed = [&] { return timer.ms([&] { m_e.cuda(args, m_s.tile, m_st, nullptr); }); };
      h.launches_per_sample = batch;
      h.timed_each = [&](const std::function<void()>& before_each) {
        return timer.ms([&] {
          for (int i = 0; i < batch; ++i) {
            before_each();  // the next set's A and B in args: no GPU work between the launches
            m_e.cuda(args, m_s.tile, m_st, nullptr);
          }
        }) / batch;
      };
      int flushes = 0;
      h.flush = [&] { CUDA_CHECK(cudaMemsetAsync(flush.get(), ++flushes & 0xff, flush.bytes(), m_st)); };
      h.clock = [&] { return m_be.m_nvml.read(m_be.m_nvml_dev); };
      auto use = [&](int set) {
        args.A = m_mats.a_of(set);
        args.B = m_mats.b_of(set);
      };
      return ts::measure_changing(policy, h, use, sets, cancel, probes);
    }

    void launch_on(int set, const CancelToken& cancel) override {
      (void)cancel;
      GemmArgs args = m_args;
      args.A = m_mats.a_of(set);
      args.B = m_mats.b_of(set);
      m_e.cuda(args, m_s.tile, m_st, nullptr);
      CUDA_CHECK(cudaStreamSynchronize(m_st));
    }

    void after_timing(RunResult& r, const MeasurePolicy& policy) override {
      if (policy.interleave_reference && !reference_entry(m_e))
        r.interleaved_note = m_e.info.id + " is the reference itself";
      if (!m_be.m_nvml_dev) {
        r.clock.note = "NVML unavailable: SM clock not recorded";
        if (r.cublas_interleaved()) r.interleaved.clock.note = r.clock.note;
      }
    }

    void describe_launch(RunResult& r) override {
      if (const auto li = m_be.launch_info_locked(m_e, m_s)) {
        r.tile_m = li->tile_m;
        r.tile_n = li->tile_n;
        r.blocks_per_tile = li->blocks_per_tile;
        if (li->occupancy.res.threads_per_block > 0) r.occupancy = li->occupancy;
      }
    }

    void profile(RunResult& r, const CancelToken& cancel) override {
      m_be.profile(r, m_e, m_args, m_mats.r(), cancel);
    }

   private:
    CudaBackend& m_be;
    const KernelEntry& m_e;
    const ProblemSpec& m_s;
    DeviceRunMatrices& m_mats;
    cudaStream_t m_st;
    GemmArgs m_args{};
    std::optional<PoolBuffer<char>> m_workspace;
  };

  BandwidthResult measure_bandwidth(const CancelToken& cancel) override {
    std::lock_guard<std::mutex> lock(m_run);
    CUDA_CHECK(cudaSetDevice(m_device));
    if (!m_stream) m_stream = std::make_unique<CudaStream>();
    trim_memory_pool(m_device);  // the copy wants large buffers; cached matrices can be given back
    return measure_copy_bandwidth(m_stream->get(), m_info.l2_bytes, cancel);
  }

  std::shared_ptr<const MatrixStore> probe_store(std::shared_ptr<const HostMatrix> m) const override {
    CUDA_CHECK(cudaSetDevice(m_device));
    DeviceMatrices dm;
    dm.m = m->rows;
    dm.n = dm.k = m->cols;
    auto upload = [&](const float* src, size_t count) {
      PoolBuffer<float> d(count, nullptr);
      if (src)
        CUDA_CHECK(cudaMemcpy(d.get(), src, count * sizeof(float), cudaMemcpyHostToDevice));
      else
        CUDA_CHECK(cudaMemset(d.get(), 0, count * sizeof(float)));
      return d;
    };
    const size_t n = m->data.size();
    dm.a = upload(m->data.data(), n);
    dm.b = upload(nullptr, size_t(dm.k * dm.n));
    dm.c = upload(m->data.data(), n);
    dm.err = upload(m->data.data(), n);
    CUDA_CHECK(cudaDeviceSynchronize());
    return make_device_store(m_device, std::move(dm));
  }

  Incidents incidents() const override {
    std::lock_guard<std::mutex> g(m_incident_mutex);
    return m_incidents;
  }

  std::optional<LaunchInfo> launch_info(const ProblemSpec& spec) const override {
    ProblemSpec s = spec;
    validate_kernel(s, kernels(), false);
    const KernelEntry* e = find_entry(s.kernel);
    if (!e) {
      const auto user = m_workshop->find(s.kernel);
      return user ? m_user->launch_info(s, *user) : std::nullopt;
    }
    if (!e || !e->cuda || e->info.min_sm > m_sm) return std::nullopt;
    CUDA_CHECK(cudaSetDevice(m_device));
    return launch_info_locked(*e, s);
  }

  // Bytes of workspace the built-in kernel's launch at this shape and tile needs (0 for most).
  static size_t workspace_bytes(const KernelEntry& e, const ProblemSpec& s, int sm_count) {
    if (!e.cuda) return 0;
    LaunchQuery q;
    q.offline = true;
    q.sm_count = sm_count;  // stream-K plans its units by it
    e.cuda(GemmArgs{nullptr, nullptr, nullptr, s.m, s.n, s.k}, s.tile, nullptr, &q);
    return q.workspace_bytes;
  }

  // The launch the kernel would make for this shape and tile: grid, block, occupancy on this device.
  std::optional<LaunchInfo> launch_info_locked(const KernelEntry& e, const ProblemSpec& s,
                                               int tile = -1) const {
    LaunchQuery q;
    q.sm_count = m_limits.sm_count;
    const GemmArgs shape_only{nullptr, nullptr, nullptr, s.m, s.n, s.k};
    e.cuda(shape_only, tile >= 0 ? tile : s.tile, nullptr, &q);
    LaunchInfo li;
    li.tile_m = q.tile_m;
    li.tile_n = q.tile_n;
    li.grid_blocks = q.launch_blocks > 0 ? q.launch_blocks : int64_t(q.grid_x) * q.grid_y * q.grid_z;
    // Stream-K's grid_z counts the trace's segments, not blocks of a tile.
    li.blocks_per_tile = q.k_segments ? 1 : int(q.grid_z);
    li.k_segments = q.k_segments;
    if (!q.func) return li;  // cuBLAS: no occupancy to report
    cudaFuncAttributes fa{};
    CUDA_CHECK(cudaFuncGetAttributes(&fa, q.func));
    KernelResources res{q.threads, fa.numRegs, int(fa.sharedSizeBytes), int(q.dynamic_smem)};
    li.occupancy = compute_occupancy(m_limits, res, li.grid_blocks);
    li.occupancy.k_segments = q.shares_tiles;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&li.occupancy.api_blocks_per_sm, q.func,
                                                             q.threads, q.dynamic_smem));
    // The function's name, as the build-time table writes it: its row is found by it (the Occupancy panel).
    const char* name = nullptr;
    CUDA_CHECK(cudaFuncGetName(&name, q.func));
    if (name) li.occupancy.function = normalize_mangled(name);
    return li;
  }

  // [SECTION] Profiling: cuBLAS at the same shape, occupancy of the launch, one traced launch.
  void profile(RunResult& r, const KernelEntry& entry, const GemmArgs& args, float* scratch,
               const CancelToken& cancel) {
    cudaStream_t st = m_stream->get();
    const ProblemSpec& s = r.spec;
    StreamTimer timer(st);
    // The reference line of the Timings panel, where cuBLAS was not timed between the samples already:
    // cuBLAS of the same precision, into scratch (the reference buffer, no longer needed).
    if (!r.cublas_interleaved()) {
      const GemmArgs ref_args{args.A, args.B, scratch, s.m, s.n, s.k};
      r.reference_ms = time_cublas_alone(ref_args, entry.info.tf32, r.launches_per_sample, st);
      cancel.throw_if_cancelled();
    }

    // Occupancy against every tile the kernel supports (the timed launch's is in r.occupancy already).
    for (int t : entry.info.tiles)
      if (auto li = launch_info_locked(entry, s, t); li && li->occupancy.res.threads_per_block > 0)
        r.occupancy_by_tile.emplace_back(t, li->occupancy);

    // The tile trace: the instrumented build, launched on its own (never among the timed samples), next to
    // plain launches for the cost of instrumenting.
    if (!entry.info.traceable) {
      r.trace_note = "cuBLAS runs closed kernels: no instrumented build to trace";
      return;
    }
    LaunchQuery q;
    q.sm_count = m_limits.sm_count;
    entry.cuda(args, s.tile, st, &q);
    // Records: one per block (stream-K: one per segment of a tile, grid_z per tile, absent ones left zero).
    const size_t tiles = size_t(q.grid_x) * q.grid_y * q.grid_z;
    DeviceBuffer<TileRecord> rec(tiles);
    GemmArgs traced = args;
    traced.trace = rec.get();
    std::vector<double> plain_ms, traced_ms;
    for (int i = 0; i < 3; ++i) {
      plain_ms.push_back(timer.ms([&] { entry.cuda(args, s.tile, st, nullptr); }));
      CUDA_CHECK(cudaMemsetAsync(rec.get(), 0, rec.bytes(), st));
      traced_ms.push_back(timer.ms([&] { entry.cuda(traced, s.tile, st, nullptr); }));
    }
    auto t = std::make_shared<TileTrace>();
    t->sm_count = m_limits.sm_count;
    t->tile_m = q.tile_m;
    t->tile_n = q.tile_n;
    t->grid_z = int(q.grid_z);
    t->z_splits_columns = q.z_splits_columns;
    t->k_step = q.k_step;
    t->k_segments = q.k_segments;
    t->k = s.k;  // where a stream-K tile's last segment ends
    std::vector<TileRecord> raw(tiles);
    CUDA_CHECK(cudaMemcpyAsync(raw.data(), rec.get(), rec.bytes(), cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    // Records in row-major order of C's tiles, whatever the kernel's grid orientation.
    if (q.x_covers_rows && q.grid_z == 1) {
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
    t->view = std::make_shared<const ScheduleView>(prepare_schedule_view(*t));  // here, not in a frame
    t->replay = std::make_shared<const ScheduleReplay>(*t);
    r.trace = std::move(t);
  }

 private:
  static const KernelEntry* find_entry(const std::string& id) {
    for (const auto& e : register_kernels())
      if (e.info.id == id) return &e;
    return nullptr;
  }
  // The reference a kernel is compared with: cuBLAS of its precision (nullptr for that cuBLAS itself).
  static const KernelEntry* reference_entry(const KernelEntry& kernel) {
    const KernelEntry* ref = find_entry(kernel.info.tf32 ? "cublas_tf32" : "cublas");
    return ref == &kernel ? nullptr : ref;
  }

  int m_device;
  std::string m_name;
  std::vector<KernelInfo> m_infos;
  int m_sm = 0;
  double m_clock_mhz = 0;
  DeviceLimits m_limits;
  DeviceInfo m_info;
  Nvml m_nvml;
  void* m_nvml_dev = nullptr;
  std::mutex m_run;  // one measurement at a time on this device
  mutable std::mutex m_incident_mutex;
  Incidents m_incidents;
  std::unique_ptr<CudaStream> m_stream;
  std::unique_ptr<UserRunner> m_user;
  std::unique_ptr<NvrtcWorkshop> m_workshop;  // a person's kernels: built, checked and registered here
};

}  // namespace

std::shared_ptr<Backend> make_cuda_backend(int device) {
  return std::make_shared<CudaBackend>(device);
}

}  // namespace ts
