// The engine's path for a person's kernel (see user_run.hpp).
#include "user_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "cuda_check.cuh"
#include "cuda_raii.cuh"
#include "heatmap_lod.cuh"
#include "launch.hpp"
#include "matrix_ops.cuh"
#include "files.hpp"
#include "nvrtc_compile.hpp"
#include "stats.hpp"
#include "user_sanitize.hpp"
#include "your_kernel.hpp"

namespace ts {

namespace {

using namespace wire;

IpcHandle ipc_handle(void* p) {
  cudaIpcMemHandle_t h;
  CUDA_CHECK(cudaIpcGetMemHandle(&h, p));
  IpcHandle out;
  static_assert(sizeof h == 64, "cudaIpcMemHandle_t is 64 bytes");
  std::memcpy(out.data(), &h, 64);
  return out;
}

std::string dims(const std::array<int64_t, 3>& d) {
  std::string s = std::to_string(d[0]) + " x " + std::to_string(d[1]);
  if (d[2] != 1) s += " x " + std::to_string(d[2]);
  return s;
}

// What the worker answered: the reply of the type asked for, or the error it sent (as an exception).
Message expect(Message m, Type t, const std::string& doing) {
  if (m.type == t) return m;
  if (m.type == Type::Error) {
    const ErrorMsg e = decode_error(m);
    if (e.kind == ErrorKind::Refused)
      throw std::runtime_error("the device refused " + doing + ": " + e.message);
    throw std::runtime_error("the kernel worker failed while " + doing + ": " + e.message);
  }
  throw std::runtime_error(std::string("the kernel worker answered ") + to_string(m.type) + " while " +
                           doing);
}

// The device's limits for one launch, checked before anything is tried.
void check_fits(const UserRunDevice& d, const LaunchGeometry& g, const PtxasResources& r,
                const std::string& who) {
  std::ostringstream os;
  if (g.threads() > d.max_threads_per_block) {
    os << who << ": block = " << dims(g.block) << " = " << g.threads() << " threads, but " << d.name
       << " allows at most " << d.max_threads_per_block << " threads per block";
    throw ValidationError(os.str());
  }
  const int64_t smem = int64_t(r.static_smem) + g.smem;
  if (d.max_smem_per_block_optin > 0 && smem > d.max_smem_per_block_optin) {
    os << who << ": " << r.static_smem << " bytes of static and " << g.smem
       << " bytes of dynamic shared memory per block = " << smem << " bytes, but " << d.name
       << " allows at most " << d.max_smem_per_block_optin << " per block";
    throw ValidationError(os.str());
  }
  // Registers are given to warps in units of 256: what one block needs.
  const int64_t warps = (g.threads() + 31) / 32;
  const int64_t regs = warps * ((int64_t(r.regs) * 32 + 255) / 256 * 256);
  if (r.regs > 0 && regs > d.regs_per_block) {
    os << who << ": " << r.regs << " registers per thread x " << g.threads() << " threads = " << regs
       << " registers per block (allocated per warp), but " << d.name << " has " << d.regs_per_block
       << " per block: the launch would fail with \"too many resources requested\"";
    throw ValidationError(os.str());
  }
}

std::string who(const UserKernel& k, const ProblemSpec& s) {
  return "yours: " + k.decl().name + " (" + (k.spec().tile_symbol.empty() ? "TILE" : k.spec().tile_symbol) +
         " = " + std::to_string(s.tile) + ", M x N x K = " + std::to_string(s.m) + " x " +
         std::to_string(s.n) + " x " + std::to_string(s.k) + ")";
}

}  // namespace

UserRunner::UserRunner(UserRunDevice d)
    : m_dev(std::move(d)), m_worker(std::make_unique<WorkerClient>(m_dev.device)) {}
UserRunner::~UserRunner() = default;

void UserRunner::validate(const ProblemSpec& s, const UserKernel& k) const {
  const ExprVars v{s.m, s.n, s.k, s.tile};
  const LaunchGeometry g = launch_geometry(k.spec(), v);
  kernel_args(k.decl(), k.spec(), v);
  const auto mod = k.build(s.tile, m_dev.sm, v);
  check_fits(m_dev, g, mod->resources, who(k, s));
}

std::optional<LaunchInfo> UserRunner::launch_info(const ProblemSpec& s, const UserKernel& k) const {
  const ExprVars v{s.m, s.n, s.k, s.tile};
  LaunchGeometry g;
  try {
    g = launch_geometry(k.spec(), v);
  } catch (const ValidationError&) {
    return std::nullopt;
  }
  const auto mod = k.cached_build(s.tile, m_dev.sm, v);
  if (!mod || !mod->ok) return std::nullopt;
  LaunchInfo li;
  const bool rows_x = k.spec().x_covers_rows;
  li.tile_n = int((s.n + (rows_x ? g.grid[1] : g.grid[0]) - 1) / (rows_x ? g.grid[1] : g.grid[0]));
  li.tile_m = int((s.m + (rows_x ? g.grid[0] : g.grid[1]) - 1) / (rows_x ? g.grid[0] : g.grid[1]));
  li.grid_blocks = g.blocks();
  const KernelResources res{int(g.threads()), mod->resources.regs, mod->resources.static_smem, int(g.smem)};
  li.occupancy = compute_occupancy(m_dev.limits, res, li.grid_blocks);
  return li;
}

std::string UserRunner::check_new_build(const UserKernel& k, const ProblemSpec& s,
                                        const std::string& build_key, const CancelToken& cancel) {
  // Checked before: in this process, or by an earlier one (a marker beside the build in the module cache).
  const std::string dir = module_cache_dir();
  const std::filesystem::path marker =
      dir.empty() ? std::filesystem::path() : std::filesystem::path(dir) / (build_key + ".memcheck-ok");
  std::error_code ec;
  if (m_checked.count(build_key) || (!marker.empty() && std::filesystem::is_regular_file(marker, ec)))
    return "";
  // memcheck slows a kernel down about a hundredfold, which at this shape is still well under a second; a
  // kernel that does not finish is stopped after this (and then meets the watchdog on the GPU).
  const double timeout_s = std::max(30.0, 20 + 4 * k.spec().hang_limit_s);
  const std::vector<SanitizerReport> reps =
      sanitize_user_kernel(k, s, m_dev.sm, m_dev.device, {"memcheck"}, timeout_s, &cancel);
  cancel.throw_if_cancelled();
  const SanitizerReport& rep = reps.front();
  const std::string shape =
      std::to_string(rep.shape.m) + " x " + std::to_string(rep.shape.n) + " x " + std::to_string(rep.shape.k);
  char secs[32];
  std::snprintf(secs, sizeof secs, "%.1f s", rep.seconds);
  if (!rep.ran) {  // no tool here, or it did not finish: the run goes on unguarded, and says so (once)
    m_checked.insert(build_key);
    return "not checked under compute-sanitizer memcheck before its first launch: " + rep.problem;
  }
  if (rep.issues > 0) {
    const std::string errors = first_sanitizer_errors(rep.output);
    throw MemcheckRefusal(
        who(k, s) + " was not run on the GPU: compute-sanitizer memcheck found " +
        std::to_string(rep.issues) + (rep.issues == 1 ? " error" : " errors") + " in its first launch at " +
        shape + " (" + secs +
        "), which on the GPU itself would fault it (and a fault can leave OpenGL on the GPU drawing wrong "
        "pictures until it is reset)" +
        (errors.empty() ? std::string(". ") : ":\n" + errors + "\n") +
        "Fix the kernel (Check with compute-sanitizer shows the whole report), or turn 'Check each new "
        "build under compute-sanitizer first' off (--no-guard) to run it anyway.");
  }
  m_checked.insert(build_key);
  if (!marker.empty()) {
    try {
      write_file(marker, "memcheck: no errors at " + shape + " on " + m_dev.name + "\n",
                 Replace::RegularFile);
    } catch (const std::exception&) {  // a cache that cannot be written: checked again by the next process
    }
  }
  return "its first launch was checked under compute-sanitizer memcheck at " + shape + ": no errors (" +
         secs + ")";
}

RunResult UserRunner::run(const RunRequest& req, const UserKernel& k, void* stream_ptr,
                          const MeasurePolicy& policy, const CancelToken& cancel) {
  const ProblemSpec& s = req.spec;
  const ExprVars v{s.m, s.n, s.k, s.tile};
  const std::string name = who(k, s);
  cudaStream_t st = static_cast<cudaStream_t>(stream_ptr);
  // [SECTION] Build and check everything before the worker or the device is asked for anything.
  const LaunchGeometry g = launch_geometry(k.spec(), v);
  const std::vector<KernelArg> args = kernel_args(k.decl(), k.spec(), v);
  const auto mod = k.build(s.tile, m_dev.sm, v, &cancel);
  check_fits(m_dev, g, mod->resources, name);
  const std::string memcheck_note =
      req.memcheck_new_builds ? check_new_build(k, s, mod->key, cancel) : std::string();
  std::shared_ptr<const CompiledModule> traced;
  std::string trace_note;
  if (req.profile) {
    if (g.grid[2] != 1) {
      trace_note = "the grid is 3-D (grid z = " + std::to_string(g.grid[2]) + "): the tile picture is 2-D";
    } else {
      std::string why;
      const auto job = k.traced_job(s.tile, m_dev.sm, v, mod->resources.regs, &why);
      if (!job) {
        trace_note = "cannot trace this kernel without changing it: " + why;
      } else {
        traced = compile_module(*job, &cancel);
        if (!traced->ok) {
          const auto errs = describe_errors(traced->diagnostics, 0, 1);
          trace_note =
              "the traced build (the kernel's body called from a stamping kernel) did not compile: " +
              (errs.empty() ? traced->log.substr(0, 300) : errs);
          traced.reset();
        }
      }
    }
  }
  cancel.throw_if_cancelled();

  // [SECTION] The app's matrices: A and B (generated or copied), C for the worker to write, the reference.
  PoolBuffer<float> A = PoolBuffer<float>::shareable(size_t(s.m * s.k));
  PoolBuffer<float> B = PoolBuffer<float>::shareable(size_t(s.k * s.n));
  PoolBuffer<float> C = PoolBuffer<float>::shareable(size_t(s.m * s.n));
  PoolBuffer<float> R(size_t(s.m * s.n), st);
  if (s.input == InputKind::File) {
    CUDA_CHECK(cudaMemcpyAsync(A.get(), req.a->data.data(), A.bytes(), cudaMemcpyHostToDevice, st));
    CUDA_CHECK(cudaMemcpyAsync(B.get(), req.b->data.data(), B.bytes(), cudaMemcpyHostToDevice, st));
  } else {
    device_generate(A.get(), s.m, s.k, gen_kind(s.input), s.seed, 0, st);
    device_generate(B.get(), s.k, s.n, gen_kind(s.input), s.seed, 1, st);
  }
  const GemmArgs ref_args{A.get(), B.get(), R.get(), s.m, s.n, s.k};
  launch_cublas(ref_args, 0, st);
  CUDA_CHECK(cudaStreamSynchronize(st));  // A and B are complete before the worker copies them

  // [SECTION] The worker: load, map, verify.
  WorkerClient& w = *m_worker;
  LoadMsg load{mod->cubin, mod->lowered_name, traced ? traced->cubin : "",
               traced ? traced->lowered_name : ""};
  const double hang = k.spec().hang_limit_s;
  const Message loaded =
      expect(w.call(encode(load), 60, &cancel, {}, "loading the kernel"), Type::Loaded, "loading the kernel");
  (void)decode_loaded(loaded);
  struct EndRun {  // the worker lets go of C whatever happens next
    WorkerClient& w;
    bool begun = false;
    ~EndRun() {
      if (!begun || !w.running()) return;
      try {
        w.call(empty(Type::End), 10);
      } catch (const std::exception&) {
      }
    }
  } end_run{w};
  expect(
      w.call(encode(BeginMsg{s.m, s.n, s.k, ipc_handle(A.get()), ipc_handle(B.get()), ipc_handle(C.get())}),
             30, &cancel, {}, "mapping A, B and C"),
      Type::Ok, "mapping A, B and C");
  end_run.begun = true;
  LaunchSpec launch;
  launch.grid = g.grid;
  launch.block = g.block;
  launch.smem = g.smem;
  launch.args = args;
  launch.poison_c = true;  // elements the kernel never writes stay NaN, and show
  // The first launch may take long for a slow kernel: allow its time at 0.5 % of the device's peak, plus the
  // hang limit.
  const double peak = (k.spec().tf32 ? m_dev.peak_tf32_tflops : m_dev.peak_fp32_tflops) * 1e12;
  const double expected_s = peak > 0 ? s.flops() / (0.005 * peak) : 10.0;
  const std::string running = "running " + name + " once to verify it (expected well under " +
                              std::to_string(int(std::ceil(expected_s))) + " s; hang limit " +
                              std::to_string(int(std::round(hang))) + " s beyond that)";
  const LaunchedMsg first =
      decode_launched(expect(w.call(encode(LaunchMsg{launch}), hang + expected_s, &cancel, {}, running),
                             Type::Launched, "verifying the kernel"));
  cancel.throw_if_cancelled();

  RunResult r;
  r.spec = s;
  r.backend = "cuda";
  r.device = m_dev.label;
  r.reference = "cuBLAS SGEMM (FP32)";
  r.note = memcheck_note;
  r.tf32 = k.spec().tf32;
  const Tolerance tol = tolerance_for(s.k, device_max_abs(A.get(), A.size(), st),
                                      device_max_abs(B.get(), B.size(), st), k.spec().tf32);
  r.error = device_compare(C.get(), R.get(), s.m, s.n, tol, st);
  const int64_t unwritten = device_count_bits(C.get(), C.size(), 0xffffffffu, st);
  const std::string checked = r.note.empty() ? std::string() : "; " + r.note;
  if (unwritten == s.m * s.n)
    r.note =
        "C was left untouched: every element still holds the NaN it was filled with before the launch. Does "
        "the kernel write C, and is the right parameter mapped to C?";
  else if (unwritten > 0)
    r.note =
        std::to_string(unwritten) + " of " + std::to_string(s.m * s.n) +
        " elements of C were never written (they still hold the NaN C was filled with before the launch)";
  if (unwritten > 0) r.note += checked;
  if (req.keep_output) {
    auto c = std::make_shared<HostMatrix>(s.m, s.n);
    CUDA_CHECK(cudaMemcpyAsync(c->data.data(), C.get(), C.bytes(), cudaMemcpyDeviceToHost, st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    r.c = std::move(c);
  }

  // [SECTION] Timing in the worker: the same policy and sampling loop, a Progress after every launch.
  if (r.error.passed || policy.time_failed) {
    MeasureMsg mm;
    mm.launch = launch;
    mm.launch.poison_c = false;
    mm.policy = policy;
    mm.already_warm = 1;
    mm.l2_bytes = m_dev.l2_bytes;
    double longest_ms = first.ms;
    auto next_wait = [&](const ProgressMsg& p) {
      longest_ms = std::max(longest_ms, p.last_ms);
      return hang + 4 * longest_ms / 1000.0;
    };
    // The worker samples in its own process; the window that pauses its drawing is in this one.
    TimingGate::Hold hold;
    const int64_t frames0 = TimingGate::instance().frames();
    const Message measured =
        expect(w.call(encode(mm), hang + 4 * first.ms / 1000.0 + 30, &cancel, next_wait,
                      "timing " + name + " (hang limit " + std::to_string(int(hang)) + " s)"),
               Type::Measured, "timing the kernel");
    Measurement m = decode_measured(measured).m;
    m.frames_drawn = TimingGate::instance().frames() - frames0;
    record_measurement(r, m, policy, m_dev.clock_mhz);
    if (r.clock.available == false) r.clock.note = "NVML unavailable in the worker: SM clock not recorded";
  } else {
    r.policy = policy.describe();
    r.timed = false;
    r.stop = "not timed";
    r.date = utc_now();
  }
  r.peak_tflops = k.spec().tf32 ? m_dev.peak_tf32_tflops : m_dev.peak_fp32_tflops;

  // [SECTION] Occupancy: the loaded function's attributes and the occupancy API, in the worker.
  const bool rows_x = k.spec().x_covers_rows;
  const int64_t gx = rows_x ? g.grid[1] : g.grid[0], gy = rows_x ? g.grid[0] : g.grid[1];
  r.tile_n = int((s.n + gx - 1) / gx);
  r.tile_m = int((s.m + gy - 1) / gy);
  {
    const Message occ = expect(w.call(encode(OccupancyMsg{false, int32_t(g.threads()), g.smem}), 30, &cancel),
                               Type::OccupancyReply, "asking the occupancy API");
    const OccupancyReplyMsg o = decode_occupancy_reply(occ);
    const KernelResources res{int(g.threads()), o.attrs.regs, o.attrs.static_smem, int(g.smem)};
    OccupancyReport rep = compute_occupancy(m_dev.limits, res, g.blocks());
    rep.api_blocks_per_sm = o.blocks_per_sm;
    r.occupancy = rep;
  }

  const float* pa = A.get();
  const float* pb = B.get();
  if (req.keep_store) {
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
    r.store = make_device_store(m_dev.device, std::move(dm));
  }

  // [SECTION] Profile: cuBLAS at the same shape, occupancy per tile, one traced launch.
  if (req.profile) {
    CudaEvent start, stop;
    auto time_once = [&](const std::function<void()>& f) {
      CUDA_CHECK(cudaEventRecord(start.get(), st));
      f();
      CUDA_CHECK(cudaEventRecord(stop.get(), st));
      CUDA_CHECK(cudaEventSynchronize(stop.get()));
      float ms = 0;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
      return double(ms);
    };
    // cuBLAS of the same precision at the same shape, into the reference buffer (no longer needed). A and B
    // may have moved into the store: their memory is the same.
    const CudaLaunchFn ref = k.spec().tf32 ? &launch_cublas_tf32 : &launch_cublas;
    const GemmArgs ra{pa, pb, R.get(), s.m, s.n, s.k};
    ref(ra, 0, st, nullptr);
    std::vector<double> ref_ms;
    for (int i = 0; i < 5; ++i) ref_ms.push_back(time_once([&] { ref(ra, 0, st, nullptr); }));
    r.reference_ms = quantile(ref_ms, 0.5);
    cancel.throw_if_cancelled();
    // Occupancy at every tile value from ptxas's report of each tile's build (theoretical; the tile being run
    // has the occupancy API's answer too).
    for (int t : k.spec().tiles) {
      try {
        const ExprVars vt{s.m, s.n, s.k, t};
        const LaunchGeometry gt = launch_geometry(k.spec(), vt);
        if (t == s.tile) {
          r.occupancy_by_tile.emplace_back(t, *r.occupancy);
          continue;
        }
        const auto mt = k.build(t, m_dev.sm, vt, &cancel);
        const KernelResources res{int(gt.threads()), mt->resources.regs, mt->resources.static_smem,
                                  int(gt.smem)};
        r.occupancy_by_tile.emplace_back(t, compute_occupancy(m_dev.limits, res, gt.blocks()));
      } catch (const ValidationError&) {
        // a tile whose block does not fit or whose build fails: no bar for it
      }
    }
    if (!traced) {
      r.trace_note = trace_note;
    } else {
      // C may have moved into the store: the worker still has it mapped (the store holds the same memory).
      const size_t tiles = size_t(g.grid[0] * g.grid[1]);
      PoolBuffer<TileRecord> rec = PoolBuffer<TileRecord>::shareable(tiles);
      std::vector<double> plain_ms, traced_ms;
      LaunchSpec tl = launch;
      tl.poison_c = false;
      tl.traced = true;
      tl.trace = ipc_handle(rec.get());
      LaunchSpec pl = launch;
      pl.poison_c = false;
      for (int i = 0; i < 3; ++i) {
        plain_ms.push_back(
            decode_launched(expect(w.call(encode(LaunchMsg{pl}), hang + 4 * first.ms / 1000.0, &cancel),
                                   Type::Launched, "timing a plain launch"))
                .ms);
        CUDA_CHECK(cudaMemsetAsync(rec.get(), 0, rec.bytes(), st));
        CUDA_CHECK(cudaStreamSynchronize(st));
        traced_ms.push_back(decode_launched(expect(w.call(encode(LaunchMsg{tl}), hang + 8 * first.ms / 1000.0,
                                                          &cancel, {}, "running the traced build of " + name),
                                                   Type::Launched, "running the traced build"))
                                .ms);
      }
      auto t = std::make_shared<TileTrace>();
      t->sm_count = m_dev.limits.sm_count;
      t->tile_m = r.tile_m;
      t->tile_n = r.tile_n;
      std::vector<TileRecord> raw(tiles);
      CUDA_CHECK(cudaMemcpyAsync(raw.data(), rec.get(), rec.bytes(), cudaMemcpyDeviceToHost, st));
      CUDA_CHECK(cudaStreamSynchronize(st));
      if (rows_x) {
        t->grid_y = int(g.grid[0]);
        t->grid_x = int(g.grid[1]);
        t->records.resize(tiles);
        for (int64_t by = 0; by < g.grid[1]; ++by)
          for (int64_t bx = 0; bx < g.grid[0]; ++bx)
            t->records[size_t(bx * g.grid[1] + by)] = raw[size_t(by * g.grid[0] + bx)];
      } else {
        t->grid_x = int(g.grid[0]);
        t->grid_y = int(g.grid[1]);
        t->records = std::move(raw);
      }
      t->plain_ms = quantile(plain_ms, 0.5);
      t->traced_ms = quantile(traced_ms, 0.5);
      t->timer_resolution_ns = timer_resolution(*t);
      r.trace = std::move(t);
    }
  }
  return r;
}

}  // namespace ts
