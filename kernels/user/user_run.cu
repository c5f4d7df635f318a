// The engine's path for a person's kernel (see user_run.hpp).
#include "kernels/user/user_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <sstream>

#include "kernels/engine/cuda_check.cuh"
#include "kernels/engine/cuda_raii.cuh"
#include "kernels/engine/device_run.cuh"
#include "kernels/engine/heatmap_lod.cuh"
#include "kernels/engine/launch.hpp"
#include "kernels/engine/matrix_ops.cuh"
#include "core/io/files.hpp"
#include "kernels/user/nvrtc_compile.hpp"
#include "kernels/user/nvrtc_workshop.hpp"
#include "core/engine/stats.hpp"
#include "kernels/user/user_sanitize.hpp"
#include "core/user_kernel/your_kernel.hpp"

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
    const ErrorMsg e = decode<ErrorMsg>(m);
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
  const auto mod = build_user_kernel(k, s.tile, m_dev.sm, v);
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
  const auto mod = cached_module(k.plain_job(s.tile, m_dev.sm, v));
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

class UserRunner::WorkerLauncher final : public RunLauncher {
 public:
  WorkerLauncher(UserRunner& runner, const UserKernel& k, const ProblemSpec& s, const LaunchGeometry& g,
                 const std::vector<KernelArg>& args, std::shared_ptr<const CompiledModule> mod,
                 std::shared_ptr<const CompiledModule> traced, std::string trace_note,
                 DeviceRunMatrices& mats, void* stream);
  ~WorkerLauncher() override;
  void verify_launch(const CancelToken& cancel) override;
  Measurement measure(const MeasurePolicy& policy, const CancelToken& cancel) override;
  Measurement measure_changing(const MeasurePolicy& policy, int sets, const CancelToken& cancel) override;
  void launch_on(int set, const CancelToken& cancel) override;
  void after_timing(RunResult& r, const MeasurePolicy& policy) override;
  void describe_launch(RunResult& r) override;
  void profile(RunResult& r, const CancelToken& cancel) override;

 private:
  Measurement measure_in_worker(const MeasurePolicy& policy, int sets, const CancelToken& cancel);
  UserRunner& m_runner;
  const UserKernel& m_k;
  const ProblemSpec& m_s;
  const LaunchGeometry m_g;
  std::shared_ptr<const CompiledModule> m_mod, m_traced;
  std::string m_trace_note;
  DeviceRunMatrices& m_mats;
  void* m_st;
  std::string m_name;
  double m_hang;
  LaunchSpec m_launch;
  bool m_begun = false;  // A, B and C are mapped in the worker (End lets go of them)
  double m_first_ms = 0;
};

RunResult UserRunner::run(const RunRequest& req, const UserKernel& k, void* stream_ptr,
                          const MeasurePolicy& policy, const CancelToken& cancel) {
  const ProblemSpec& s = req.spec;
  const ExprVars v{s.m, s.n, s.k, s.tile};
  const std::string name = who(k, s);
  cudaStream_t st = static_cast<cudaStream_t>(stream_ptr);
  // [SECTION] Build and check everything before the worker or the device is asked for anything.
  const LaunchGeometry g = launch_geometry(k.spec(), v);
  const std::vector<KernelArg> args = kernel_args(k.decl(), k.spec(), v);
  const auto mod = build_user_kernel(k, s.tile, m_dev.sm, v, &cancel);
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

  // [SECTION] The run, through the engine's phases: the app's matrices (A, B and C shareable with the worker,
  // the reference), the kernel in the worker.
  DeviceRunMatrices mats(m_dev.device, s, st, true);
  WorkerLauncher launcher(*this, k, s, g, args, mod, traced, trace_note, mats, st);
  RunFacts facts;
  facts.backend = "cuda";
  facts.device = m_dev.label;
  facts.reference = "cuBLAS SGEMM (FP32)";
  facts.tf32 = k.spec().tf32;
  facts.peak_tflops = k.spec().tf32 ? m_dev.peak_tf32_tflops : m_dev.peak_fp32_tflops;
  facts.clock_mhz = m_dev.clock_mhz;
  facts.device_info = m_dev.info;
  facts.note = memcheck_note;
  return run_pipeline(req, policy, facts, mats, launcher, cancel);
}

// [SECTION] A person's kernel in the worker process (engine.hpp's RunLauncher): loaded there, A, B and C
// mapped through CUDA IPC, every launch and the whole measurement asked of the worker under the watchdog.
UserRunner::WorkerLauncher::WorkerLauncher(UserRunner& runner, const UserKernel& k, const ProblemSpec& s,
                                           const LaunchGeometry& g, const std::vector<KernelArg>& args,
                                           std::shared_ptr<const CompiledModule> mod,
                                           std::shared_ptr<const CompiledModule> traced,
                                           std::string trace_note, DeviceRunMatrices& mats, void* stream)
    : m_runner(runner),
      m_k(k),
      m_s(s),
      m_g(g),
      m_mod(std::move(mod)),
      m_traced(std::move(traced)),
      m_trace_note(std::move(trace_note)),
      m_mats(mats),
      m_st(stream),
      m_name(who(k, s)),
      m_hang(k.spec().hang_limit_s) {
  m_launch.grid = g.grid;
  m_launch.block = g.block;
  m_launch.smem = g.smem;
  m_launch.args = args;
  m_launch.poison_c = false;  // C is poisoned by the app (RunMatrices::poison_c) before the first launch
}

UserRunner::WorkerLauncher::~WorkerLauncher() {
  // The worker lets go of C whatever happened.
  WorkerClient& w = *m_runner.m_worker;
  if (!m_begun || !w.running()) return;
  try {
    w.call(empty(Type::End), 10);
  } catch (const std::exception&) {
  }
}

void UserRunner::WorkerLauncher::verify_launch(const CancelToken& cancel) {
  WorkerClient& w = *m_runner.m_worker;
  LoadMsg load{m_mod->cubin, m_mod->lowered_name, m_traced ? m_traced->cubin : "",
               m_traced ? m_traced->lowered_name : ""};
  const Message loaded =
      expect(w.call(encode(load), 60, &cancel, {}, "loading the kernel"), Type::Loaded, "loading the kernel");
  (void)decode<LoadedMsg>(loaded);
  const ProblemSpec& s = m_s;
  expect(w.call(encode(BeginMsg{s.m, s.n, s.k, ipc_handle(m_mats.a()), ipc_handle(m_mats.b()),
                                ipc_handle(m_mats.c())}),
                30, &cancel, {}, "mapping A, B and C"),
         Type::Ok, "mapping A, B and C");
  m_begun = true;
  // The first launch may take long for a slow kernel: allow its time at 0.5 % of the device's peak, plus the
  // hang limit.
  const UserRunDevice& d = m_runner.m_dev;
  const double peak = (m_k.spec().tf32 ? d.peak_tf32_tflops : d.peak_fp32_tflops) * 1e12;
  const double expected_s = peak > 0 ? s.flops() / (0.005 * peak) : 10.0;
  const std::string running = "running " + m_name + " once to verify it (expected well under " +
                              std::to_string(int(std::ceil(expected_s))) + " s; hang limit " +
                              std::to_string(int(std::round(m_hang))) + " s beyond that)";
  m_first_ms = decode<LaunchedMsg>(
                   expect(w.call(encode(LaunchMsg{m_launch}), m_hang + expected_s, &cancel, {}, running),
                          Type::Launched, "verifying the kernel"))
                   .ms;
}

Measurement UserRunner::WorkerLauncher::measure(const MeasurePolicy& policy, const CancelToken& cancel) {
  return measure_in_worker(policy, 1, cancel);
}

// Changing inputs: the app's other input sets go to the worker first (its own copies of them), then the
// worker switches between them before every launch (measure_changing, in its process: a person's kernel is
// the main suspect of caching its answer).
Measurement UserRunner::WorkerLauncher::measure_changing(const MeasurePolicy& policy, int sets,
                                                         const CancelToken& cancel) {
  WorkerClient& w = *m_runner.m_worker;
  InputsMsg in;
  for (int i = 1; i < sets; ++i) in.sets.emplace_back(ipc_handle(m_mats.a_of(i)), ipc_handle(m_mats.b_of(i)));
  expect(w.call(encode(in), 60, &cancel, {}, "copying the changing inputs"), Type::Ok,
         "copying the changing inputs");
  return measure_in_worker(policy, sets, cancel);
}

void UserRunner::WorkerLauncher::launch_on(int set, const CancelToken& cancel) {
  WorkerClient& w = *m_runner.m_worker;
  LaunchSpec l = m_launch;
  l.input_set = set;
  expect(w.call(encode(LaunchMsg{l}), m_hang + 4 * m_first_ms / 1000.0, &cancel, {},
                "running " + m_name + " on input set " + std::to_string(set)),
         Type::Launched, "running the kernel on another input set");
}

Measurement UserRunner::WorkerLauncher::measure_in_worker(const MeasurePolicy& policy, int sets,
                                                          const CancelToken& cancel) {
  // The same policy and sampling loop, in the worker: a Progress message after every launch.
  WorkerClient& w = *m_runner.m_worker;
  MeasureMsg mm;
  mm.launch = m_launch;
  mm.policy = policy;
  mm.already_warm = sets > 1 ? 0 : 1;  // measure_changing warms up on the other sets itself
  mm.l2_bytes = m_runner.m_dev.l2_bytes;
  mm.input_sets = sets;
  double longest_ms = m_first_ms;
  auto next_wait = [&](const ProgressMsg& p) {
    longest_ms = std::max(longest_ms, p.last_ms);
    return m_hang + 4 * longest_ms / 1000.0;
  };
  // The worker samples in its own process; the window that pauses its drawing is in this one.
  TimingGate::Hold hold;
  const int64_t frames0 = TimingGate::instance().frames();
  const Message measured =
      expect(w.call(encode(mm), m_hang + 4 * m_first_ms / 1000.0 + 30, &cancel, next_wait,
                    "timing " + m_name + " (hang limit " + std::to_string(int(m_hang)) + " s)"),
             Type::Measured, "timing the kernel");
  Measurement m = decode<MeasuredMsg>(measured).m;
  m.frames_drawn = TimingGate::instance().frames() - frames0;
  return m;
}

void UserRunner::WorkerLauncher::after_timing(RunResult& r, const MeasurePolicy& policy) {
  (void)policy;
  if (r.clock.available == false) r.clock.note = "NVML unavailable in the worker: SM clock not recorded";
}

void UserRunner::WorkerLauncher::describe_launch(RunResult& r) {
  // The tile of C per block from the grid; occupancy from the loaded function's attributes and the occupancy
  // API, in the worker.
  const ProblemSpec& s = m_s;
  const bool rows_x = m_k.spec().x_covers_rows;
  const int64_t gx = rows_x ? m_g.grid[1] : m_g.grid[0], gy = rows_x ? m_g.grid[0] : m_g.grid[1];
  r.tile_n = int((s.n + gx - 1) / gx);
  r.tile_m = int((s.m + gy - 1) / gy);
  WorkerClient& w = *m_runner.m_worker;
  const Message occ = expect(w.call(encode(OccupancyMsg{false, int32_t(m_g.threads()), m_g.smem}), 30),
                             Type::OccupancyReply, "asking the occupancy API");
  const OccupancyReplyMsg o = decode<OccupancyReplyMsg>(occ);
  const KernelResources res{int(m_g.threads()), o.attrs.regs, o.attrs.static_smem, int(m_g.smem)};
  OccupancyReport rep = compute_occupancy(m_runner.m_dev.limits, res, m_g.blocks());
  rep.api_blocks_per_sm = o.blocks_per_sm;
  r.occupancy = rep;
}

void UserRunner::WorkerLauncher::profile(RunResult& r, const CancelToken& cancel) {
  // cuBLAS at the same shape, occupancy per tile, one traced launch.
  const ProblemSpec& s = m_s;
  const UserRunDevice& d = m_runner.m_dev;
  WorkerClient& w = *m_runner.m_worker;
  cudaStream_t st = static_cast<cudaStream_t>(m_st);
  // cuBLAS of the same precision at the same shape, into the reference buffer (no longer needed). A and B
  // may have moved into the store: their memory is the same.
  const GemmArgs ra{m_mats.a(), m_mats.b(), m_mats.r(), s.m, s.n, s.k};
  r.reference_ms = time_cublas_alone(ra, m_k.spec().tf32, r.launches_per_sample, st);
  cancel.throw_if_cancelled();
  // Occupancy at every tile value from ptxas's report of each tile's build (theoretical; the tile being run
  // has the occupancy API's answer too).
  for (int t : m_k.spec().tiles) {
    try {
      const ExprVars vt{s.m, s.n, s.k, t};
      const LaunchGeometry gt = launch_geometry(m_k.spec(), vt);
      if (t == s.tile) {
        r.occupancy_by_tile.emplace_back(t, *r.occupancy);
        continue;
      }
      const auto mt = build_user_kernel(m_k, t, d.sm, vt, &cancel);
      const KernelResources res{int(gt.threads()), mt->resources.regs, mt->resources.static_smem,
                                int(gt.smem)};
      r.occupancy_by_tile.emplace_back(t, compute_occupancy(d.limits, res, gt.blocks()));
    } catch (const ValidationError&) {
      // a tile whose block does not fit or whose build fails: no bar for it
    }
  }
  if (!m_traced) {
    r.trace_note = m_trace_note;
    return;
  }
  // C may have moved into the store: the worker still has it mapped (the store holds the same memory).
  const size_t tiles = size_t(m_g.grid[0] * m_g.grid[1]);
  PoolBuffer<TileRecord> rec = PoolBuffer<TileRecord>::shareable(tiles);
  std::vector<double> plain_ms, traced_ms;
  LaunchSpec tl = m_launch;
  tl.traced = true;
  tl.trace = ipc_handle(rec.get());
  const LaunchSpec& pl = m_launch;
  for (int i = 0; i < 3; ++i) {
    plain_ms.push_back(
        decode<LaunchedMsg>(expect(w.call(encode(LaunchMsg{pl}), m_hang + 4 * m_first_ms / 1000.0, &cancel),
                                   Type::Launched, "timing a plain launch"))
            .ms);
    CUDA_CHECK(cudaMemsetAsync(rec.get(), 0, rec.bytes(), st));
    CUDA_CHECK(cudaStreamSynchronize(st));
    traced_ms.push_back(
        decode<LaunchedMsg>(expect(w.call(encode(LaunchMsg{tl}), m_hang + 8 * m_first_ms / 1000.0, &cancel,
                                          {}, "running the traced build of " + m_name),
                                   Type::Launched, "running the traced build"))
            .ms);
  }
  auto t = std::make_shared<TileTrace>();
  t->sm_count = d.limits.sm_count;
  t->tile_m = r.tile_m;
  t->tile_n = r.tile_n;
  std::vector<TileRecord> raw(tiles);
  CUDA_CHECK(cudaMemcpyAsync(raw.data(), rec.get(), rec.bytes(), cudaMemcpyDeviceToHost, st));
  CUDA_CHECK(cudaStreamSynchronize(st));
  if (m_k.spec().x_covers_rows) {
    t->grid_y = int(m_g.grid[0]);
    t->grid_x = int(m_g.grid[1]);
    t->records.resize(tiles);
    for (int64_t by = 0; by < m_g.grid[1]; ++by)
      for (int64_t bx = 0; bx < m_g.grid[0]; ++bx)
        t->records[size_t(bx * m_g.grid[1] + by)] = raw[size_t(by * m_g.grid[0] + bx)];
  } else {
    t->grid_x = int(m_g.grid[0]);
    t->grid_y = int(m_g.grid[1]);
    t->records = std::move(raw);
  }
  t->plain_ms = quantile(plain_ms, 0.5);
  t->traced_ms = quantile(traced_ms, 0.5);
  t->timer_resolution_ns = timer_resolution(*t);
  r.trace = std::move(t);
}

}  // namespace ts
