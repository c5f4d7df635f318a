#include "cli/bench_cmd.hpp"

#include <algorithm>
#include <mutex>
#include <thread>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/io/bench.hpp"
#include "core/io/csv.hpp"
#include "core/plots/figure.hpp"
#include "core/engine/problem.hpp"
#include "kernels/engine/registry.hpp"
#include "core/io/session.hpp"
#include "core/engine/sweep.hpp"

namespace ts::cli {

namespace {

// Ctrl+C (SIGINT) and SIGTERM (kill, a batch system's time limit) alike: the point being measured is
// cancelled after its current sample, the finished points are written, and bench exits with 128 + the
// signal's number (130, 143). A second signal of the same kind ends the program at once.
std::atomic<int> g_interrupted{0};  // the signal that asked to stop, 0: none
extern "C" void on_stop_signal(int sig) {
  int none = 0;
  g_interrupted.compare_exchange_strong(none, sig);
  std::signal(sig, SIG_DFL);
}

// The kernels x tiles to measure: a list of names or all (every kernel but the teaching ones) that this
// backend can run, each at every tile it supports (or those of --tiles), cuBLAS of the same precision added
// for % of cuBLAS.
std::vector<ts::KernelTile> bench_configs(const BenchArgs& a, const ts::Backend& backend) {
  const auto infos = backend.kernels();
  const bool cuda = backend.kind() == "cuda";
  std::vector<const ts::KernelInfo*> kernels;
  if (a.kernels == "all") {
    for (const auto& k : infos)
      if (!k.teaching && k.runs_on(backend.kind())) kernels.push_back(&k);
  } else {
    for (const std::string& name : ts::split_fields(a.kernels, ',')) {
      if (name.empty()) throw ts::ValidationError("--kernels '" + a.kernels + "' has an empty entry");
      const ts::KernelInfo* k = ts::find_kernel(infos, name);
      if (!k) throw ts::ValidationError("--kernels: unknown kernel '" + name + "' (see `tilescope list`)");
      kernels.push_back(k);
    }
  }
  std::vector<int> tiles;
  if (!a.tiles.empty())
    for (const std::string& t : ts::split_fields(a.tiles, ',')) {
      if (t.empty()) throw ts::ValidationError("--tiles '" + a.tiles + "' has an empty entry");
      tiles.push_back(int(ts::parse_dim(t, "--tiles")));
    }
  if (cuda) {  // % of cuBLAS needs cuBLAS at the same shape and precision: add it when it was not asked for
    bool fp32 = false, tf32 = false, has_fp32_ref = false, has_tf32_ref = false;
    for (const auto* k : kernels) {
      (k->tf32 ? tf32 : fp32) = true;
      has_fp32_ref |= k->id == "cublas";
      has_tf32_ref |= k->id == "cublas_tf32";
    }
    if (fp32 && !has_fp32_ref) kernels.push_back(ts::find_kernel(infos, "cublas"));
    if (tf32 && !has_tf32_ref) kernels.push_back(ts::find_kernel(infos, "cublas_tf32"));
  }
  std::vector<ts::KernelTile> configs;
  for (const auto* k : kernels) {
    if (k->tiles.empty()) {
      configs.push_back({k->id, 0});
      continue;
    }
    bool any = false;
    for (int t : k->tiles)
      if (tiles.empty() || std::find(tiles.begin(), tiles.end(), t) != tiles.end()) {
        configs.push_back({k->id, t});
        any = true;
      }
    if (!any)
      std::fprintf(stderr, "tilescope bench: skipping %s (none of --tiles %s applies)\n", k->id.c_str(),
                   a.tiles.c_str());
  }
  if (configs.empty()) throw ts::ValidationError("nothing to measure: no kernel supports the tiles given");
  return configs;
}

}  // namespace

void add_bench_options(CLI::App* cmd, BenchArgs& a) {
  ts::cli::add_kernel_file_options(cmd, a.file);
  cmd->add_option("--kernel", a.kernel, "with --kernel-file: the __global__ function to measure");
  cmd->add_option("--kernels", a.kernels, "comma-separated kernel names, or all (no teaching variants)")
      ->capture_default_str();
  cmd->add_option("--shapes", a.shapes,
                  "comma-separated N (for N^3) or MxNxK (default 1024,4096,2048x4096x8192,4099)");
  cmd->add_option("--sizes", a.sizes,
                  "sweep: N, FROM:TO:STEP or FROM:TO:xF, comma-separated (e.g. 256:8192:256); square "
                  "unless --fix-m or --fix-k");
  cmd->add_option("--fix-m", a.fix_m, "sweep with M fixed (N = K = each size)");
  cmd->add_option("--fix-k", a.fix_k, "sweep with K fixed (M = N = each size)");
  cmd->add_option("--ragged", a.ragged,
                  "sweep: also measure every size + this offset (1..1024), a partial tile at every size");
  cmd->add_option("--backend", a.backend, "cuda or cpu")->capture_default_str();
  add_engine_option(cmd, a.engine);
  cmd->add_option(
      "--also-engine", a.also_engines,
      "split the points across this engine too (repeat for more; each a command reaching "
      "`tilescope serve` on an identical device, e.g. \"tilescope serve --device 1\"): each engine "
      "takes the next point none has taken; one table and session, in the sweep's order");
  cmd->add_option("--session-out", a.session_out,
                  "also write the points as a TileScope session (open it in the window to overlay; the "
                  "parts of a sharded sweep are joined by `tilescope merge`)");
  cmd->add_option("--shard", a.shard,
                  "I/N: measure only part I of N of the sweep (I from 1 to N), its points p with p mod N = "
                  "I - 1, so N machines (a job array) share it; join the parts' --session-out files with "
                  "`tilescope merge`");
  cmd->add_option("--tiles", a.tiles, "only these tile values (default: every tile each kernel supports)");
  cmd->add_option("--format", a.format, "md, csv or json")->capture_default_str();
  cmd->add_option("--out", a.out, "write the table here instead of standard output");
  cmd->add_flag("--force", a.force, "replace an existing --out / --session-out file (a regular file only)");
  cmd->add_flag("--cold", a.cold, "flush the L2 cache before every sample");
  cmd->add_flag("--changing-inputs", a.changing_inputs,
                "also time every point on inputs that change between samples (3 sets of A and B, switched "
                "outside the timing) and check C against their reference: a kernel that caches its answer "
                "fails; the tables carry both timings");
  cmd->add_option("--min-samples", a.min_samples,
                  "at least this many samples per point (default: 10 on a GPU, 20 on the CPU)");
  cmd->add_option("--max-samples", a.max_samples,
                  "at most this many samples per point (default: 100000 on a GPU, 100 on the CPU)");
  cmd->add_option("--min-time", a.min_time,
                  "and at least this many seconds of kernel time (default: 0.5 on a GPU, 0.05 on the CPU)");
  cmd->add_option(
      "--max-noise", a.max_noise,
      "stop when the relative std. deviation is below this % (default: 0.5 on a GPU, 2 on the CPU)");
  cmd->add_option(
      "--max-time", a.max_time,
      "seconds per point before giving up on the noise target (default: 10 on a GPU, 0.5 on the CPU)");
}

int cmd_bench(BenchArgs& a, const CLI::App& cmd) {
  (void)cmd;
  // Everything the person typed is checked before a device is opened.
  if (!a.sizes.empty() && !a.shapes.empty())
    throw ts::ValidationError("give either --shapes or --sizes, not both");
  if (!a.fix_m.empty() && !a.fix_k.empty())
    throw ts::ValidationError("give at most one of --fix-m and --fix-k");
  if (a.sizes.empty() && (!a.fix_m.empty() || !a.fix_k.empty() || !a.ragged.empty()))
    throw ts::ValidationError("--fix-m, --fix-k and --ragged go with --sizes");
  const std::optional<ts::Shard> shard =
      a.shard.empty() ? std::nullopt : std::optional<ts::Shard>(ts::parse_shard(a.shard));
  ts::SweepSpec sweep;
  std::vector<ts::Shape> shapes;
  if (!a.sizes.empty()) {
    sweep.sizes = ts::parse_sizes(a.sizes);
    if (!a.fix_m.empty()) {
      sweep.shape = ts::SweepShape::FixedM;
      sweep.fixed = ts::parse_dim(a.fix_m, "--fix-m");
    } else if (!a.fix_k.empty()) {
      sweep.shape = ts::SweepShape::FixedK;
      sweep.fixed = ts::parse_dim(a.fix_k, "--fix-k");
    }
    if (!a.ragged.empty()) {
      sweep.ragged = int(ts::parse_dim(a.ragged, "--ragged"));
      if (sweep.ragged > 1024) throw ts::ValidationError("--ragged = " + a.ragged + " is above 1024");
    }
  } else {
    shapes = ts::parse_shapes(a.shapes.empty() ? "1024,4096,2048x4096x8192,4099" : a.shapes);
  }
  // The backend's bench policy with what was given over it (checked here, before any device is opened).
  auto policy_for = [&a](ts::MeasurePolicy p) {
    if (!a.min_samples.empty()) p.min_samples = int(ts::parse_dim(a.min_samples, "--min-samples"));
    if (!a.max_samples.empty())
      p.max_samples = int(std::min<int64_t>(ts::parse_dim(a.max_samples, "--max-samples"), 1000000));
    if (!a.min_time.empty()) p.min_seconds = parse_positive(a.min_time, "--min-time");
    if (!a.max_noise.empty()) p.max_noise = parse_positive(a.max_noise, "--max-noise") / 100.0;
    if (!a.max_time.empty()) p.max_seconds = parse_positive(a.max_time, "--max-time");
    if (a.min_samples.empty()) p.min_samples = std::min(p.min_samples, p.max_samples);  // a cap given alone
    p.cold_l2 = a.cold;
    p.changing_inputs = a.changing_inputs;
    ts::validate_policy(p);
    return p;
  };
  policy_for(a.backend == "cpu" ? ts::MeasurePolicy::cpu_bench() : ts::MeasurePolicy::bench());
  if (a.format != "md" && a.format != "csv" && a.format != "json")
    throw ts::ValidationError("--format '" + a.format + "' is not one of md, csv, json");
  ts::check_output_path(a.out, replace_if(a.force), "--out");
  ts::check_output_path(a.session_out, replace_if(a.force), "--session-out");
  const auto all_kernels = ts::builtin_kernel_infos();
  if (a.kernels != "all")
    for (const std::string& name : ts::split_fields(a.kernels, ',')) {
      if (name.empty()) throw ts::ValidationError("--kernels '" + a.kernels + "' has an empty entry");
      if (!ts::find_kernel(all_kernels, name))
        throw ts::ValidationError("--kernels: unknown kernel '" + name + "' (see `tilescope list`)");
    }
  if (!a.tiles.empty())
    for (const std::string& t : ts::split_fields(a.tiles, ',')) {
      if (t.empty()) throw ts::ValidationError("--tiles '" + a.tiles + "' has an empty entry");
      ts::parse_dim(t, "--tiles");
    }
  std::shared_ptr<ts::Backend> backend;
  if (!a.engine.empty()) {
    backend = open_backend(a.backend, nullptr, a.engine, cmd.count("--backend") > 0);
  } else {
    const ts::BackendChoice choice = ts::parse_backend_choice(a.backend);
    if (choice == ts::BackendChoice::Auto)
      throw ts::ValidationError("bench --backend is cuda or cpu (a benchmark names its device)");
    std::string why;
    if (choice == ts::BackendChoice::Cuda && ts::cuda_device_count(&why) == 0)
      throw std::runtime_error("tilescope bench needs a CUDA device (or --backend cpu): " + why);
    backend = ts::make_backend(choice, nullptr);
  }
  const ts::MeasurePolicy policy = policy_for(backend->bench_policy());
  // More engines of the same device (--also-engine): the points split across them all.
  std::vector<std::shared_ptr<ts::Backend>> engines{backend};
  if (!a.also_engines.empty()) {
    if (!a.shard.empty())
      throw ts::ValidationError(
          "--also-engine splits the whole sweep; with --shard, give each shard its engine");
    if (!a.file.file.empty())
      throw ts::ValidationError(
          "--also-engine measures built-in kernels only (your kernel is built on one engine)");
    const ts::DeviceInfo first = backend->device_info();
    for (const std::string& command : a.also_engines) {
      if (command.empty()) throw ts::ValidationError("--also-engine is empty");
      auto e = open_backend("auto", nullptr, command);
      const ts::DeviceInfo d = e->device_info();
      if (d.backend != first.backend || d.name != first.name)
        throw ts::ValidationError("--also-engine \"" + command + "\" measures on " + d.label + ", not " +
                                  first.label + ": a benchmark is split across identical devices only");
      engines.push_back(std::move(e));
    }
  }
  BenchArgs with_file = a;
  if (!a.file.file.empty()) {
    // Your kernel, beside cuBLAS (and beside the kernels named with --kernels, when there are any).
    const std::string id = ts::cli::load_kernel_file(a.file, a.kernel, "", *backend);
    with_file.kernels = a.kernels == "all" ? id : a.kernels + "," + id;
  }
  const std::vector<ts::KernelTile> configs = bench_configs(with_file, *backend);
  std::vector<ts::ProblemSpec> points;
  if (!sweep.sizes.empty()) {
    sweep.configs = configs;
    points = ts::expand_sweep(sweep);
  } else {
    for (const auto& sh : shapes)
      for (const auto& c : configs) {
        ts::ProblemSpec p;
        p.m = sh.m;
        p.n = sh.n;
        p.k = sh.k;
        p.kernel = c.kernel;
        p.tile = c.tile;
        points.push_back(p);
      }
  }

  if (points.size() > size_t(ts::kMaxSweepPoints))
    throw ts::ValidationError("the benchmark has " + std::to_string(points.size()) +
                              " points (shapes x kernels x tiles), more than the limit of " +
                              std::to_string(ts::kMaxSweepPoints));
  // The whole sweep's identity, and the points of this part of it (every point without --shard).
  const std::string shapes_text = a.shapes.empty() ? std::string("1024,4096,2048x4096x8192,4099") : a.shapes;
  ts::SweepPart part;
  part.shard = shard ? shard->index : 1;
  part.shards = shard ? shard->count : 1;
  part.sweep = ts::describe_configs(configs) + "; " +
               (sweep.sizes.empty() ? "shapes " + shapes_text : "sizes " + a.sizes + ", " + sweep.describe());
  part.sweep_sha256 = ts::sweep_sha256(points);
  part.points = int64_t(points.size());
  const std::vector<size_t> mine = ts::shard_points(points.size(), ts::Shard{part.shard, part.shards});
  std::vector<ts::ProblemSpec> to_measure;
  to_measure.reserve(mine.size());
  for (size_t p : mine) to_measure.push_back(points[p]);

  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  // Every refusal before anything is measured, for the whole sweep: every part refuses alike.
  ts::validate_sweep(*backend, points, policy);
  const ts::DeviceInfo dev = backend->device_info();
  ts::BenchMeta meta = ts::bench_meta(dev);
  meta.cold = a.cold;
  meta.policy = policy.describe();
  meta.interleave_reference = policy.interleave_reference;
  meta.sweep_sha256 = part.sweep_sha256;
  if (shard) {
    meta.shard = shard->index;
    meta.shards = shard->count;
  }
  if (!sweep.sizes.empty()) meta.sweep = sweep.describe();
  // Wave marks: where each configuration's grid needs one more wave on this device (GPU only).
  if (!sweep.sizes.empty() && dev.sm_count > 0) {
    const std::vector<int64_t> all = sweep.all_sizes();
    for (const auto& c : configs) {
      const auto li = backend->launch_info(sweep.problem(all.back(), c));
      // Stream-K's blocks are planned for the SMs (K segments): no waves to mark.
      if (!li || li->occupancy.blocks_per_sm <= 0 || li->occupancy.k_segments) continue;
      for (const auto& w : ts::wave_marks(sweep, all.front(), all.back(), li->tile_m, li->tile_n,
                                          li->occupancy.blocks_per_sm, dev.sm_count, li->blocks_per_tile))
        meta.wave_marks.push_back({c.kernel, c.tile, w.size, w.waves});
    }
  }
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  ts::CancelToken stop;
  std::atomic<bool> watching{true};
  std::thread watcher([&] {  // Ctrl-C or SIGTERM: cancel after the current sample
    while (watching.load()) {
      if (g_interrupted.load() != 0) {
        stop.cancel();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  struct StopWatcher {
    std::atomic<bool>& flag;
    std::thread& t;
    ~StopWatcher() {
      flag = false;
      if (t.joinable()) t.join();
    }
  } stop_watcher{watching, watcher};

  ts::CancelToken none;
  meta.dram_gbs = backend->measure_bandwidth(none).gbs;
  const std::string which = shard ? "shard " + shard->text() + ": " + std::to_string(to_measure.size()) +
                                        " of the " + std::to_string(points.size()) + " points"
                                  : std::to_string(points.size()) + " points";
  std::fprintf(stderr, "tilescope bench: %s (%s) on %s; %s copy %.0f GB/s; %s\n", which.c_str(),
               meta.sweep.empty() ? ("shapes " + shapes_text).c_str() : meta.sweep.c_str(), dev.label.c_str(),
               dev.sm_count > 0 ? "DRAM" : "memory", meta.dram_gbs, policy.describe().c_str());
  if (shard)
    std::fprintf(stderr, "tilescope bench: sweep %s (%s)%s\n", part.sweep_sha256.substr(0, 12).c_str(),
                 part.sweep.c_str(),
                 to_measure.empty() ? "; this shard has no points (more shards than points): it writes an "
                                      "empty part for merge"
                                    : "");

  std::vector<ts::BenchPoint> table;
  ts::Session session = ts::Session::for_device(dev);
  auto progress = [&](const ts::SweepPointResult& pr, int done, int total) {
    const ts::ProblemSpec& s = pr.spec;
    const int64_t point = int64_t(mine[pr.index]);  // in the whole sweep
    if (!pr.result) {
      table.push_back(ts::failed_point(s, pr.error));
      part.failed.push_back({point, s, pr.error});
      std::fprintf(stderr, "[%d/%d] %-12s %-3d %lldx%lldx%lld  ERROR: %s\n", done, total, s.kernel.c_str(),
                   s.tile, (long long)s.m, (long long)s.n, (long long)s.k, pr.error.c_str());
      return;
    }
    const ts::RunResult& r = *pr.result;
    session.add(r);
    part.record_points.push_back(point);
    const ts::BenchPoint p = ts::bench_point(r, r.tf32 ? dev.peak_tf32_tflops : dev.peak_fp32_tflops);
    table.push_back(p);
    std::string beside;  // the interleaved cuBLAS, when there is one
    if (p.reference_samples > 0 && p.stats.median > 0)
      beside =
          "  cuBLAS " + ts::format_ms(p.reference_median_ms) + " (" +
          ts::CsvWriter::num(100.0 * p.reference_median_ms / p.stats.median, "%.1f") + " %)" +
          (p.clocks_differ ? ", CLOCKS DIFFER " + ts::CsvWriter::num(p.sm_clock_median_mhz, "%.0f") + " / " +
                                 ts::CsvWriter::num(p.reference_clock_median_mhz, "%.0f") + " MHz"
                           : "");
    if (!p.impossible.empty()) beside += "  IMPOSSIBLE: " + p.impossible;
    if (p.changing_samples > 0)
      beside +=
          "  changing inputs " + ts::format_ms(p.changing_median_ms) + (p.changing_passed ? "" : " FAIL");
    if (!p.verified && p.stats.count > 0)  // timed, then failed on the changing inputs
      std::fprintf(stderr, "[%d/%d] %-12s %-3d %lldx%lldx%lld  median %s  FAILED: %s\n", done, total,
                   p.kernel.c_str(), p.tile, (long long)p.m, (long long)p.n, (long long)p.k,
                   ts::format_ms(p.stats.median).c_str(), p.error.c_str());
    else if (p.verified)
      std::fprintf(stderr, "[%d/%d] %-12s %-3d %lldx%lldx%lld  median %s  %s  %s%s%s\n", done, total,
                   p.kernel.c_str(), p.tile, (long long)p.m, (long long)p.n, (long long)p.k,
                   ts::format_ms(p.stats.median).c_str(), ts::format_flops(p.tflops * 1e12).c_str(),
                   ts::describe_stop(p.stop, p.noise, p.stats.count).c_str(),
                   p.throttled ? ", THROTTLED" : "", beside.c_str());
    else
      std::fprintf(
          stderr,
          "[%d/%d] %-12s %-3d %lldx%lldx%lld  FAILED verification (max abs err %.3e > %.3e): not timed\n",
          done, total, p.kernel.c_str(), p.tile, (long long)p.m, (long long)p.n, (long long)p.k,
          p.max_abs_err, p.tolerance);
  };
  ts::RunRequest base;
  base.memcheck_new_builds = !a.file.no_guard;
  int done = 0;
  if (engines.size() == 1) {
    done = ts::run_sweep(*backend, to_measure, policy, stop, progress, {}, base);
  } else {
    // Each engine on a thread of its own, taking points from one plan; the lines are printed as points
    // finish, and the table and the session are put back in the sweep's order afterwards.
    ts::SharedPlan plan(to_measure, int(engines.size()));
    std::mutex mu;
    std::vector<size_t> order;  // plan indices, as they finished
    std::vector<std::string> errors(engines.size());
    std::vector<std::thread> threads;
    for (size_t e = 0; e < engines.size(); ++e)
      threads.emplace_back([&, e] {
        try {
          ts::run_shared_sweep(
              *engines[e], plan, policy, stop,
              [&](const ts::SweepPointResult& pr, int, int) {
                std::lock_guard<std::mutex> lock(mu);
                order.push_back(pr.index);
                progress(pr, ++done, int(to_measure.size()));
              },
              {}, base);
        } catch (const std::exception& x) {
          errors[e] = x.what();
          stop.cancel();  // an engine that refused the plan stops the others
        }
      });
    for (auto& t : threads) t.join();
    for (size_t e = 0; e < engines.size(); ++e)
      if (!errors[e].empty())
        throw std::runtime_error("engine " + std::to_string(e + 1) + " of " + std::to_string(engines.size()) +
                                 ": " + errors[e]);
    // Back in the sweep's order: the table (every point), the session and its record points (the measured).
    std::vector<size_t> by_plan(order.size());
    for (size_t i = 0; i < order.size(); ++i) by_plan[i] = i;
    std::stable_sort(by_plan.begin(), by_plan.end(), [&](size_t x, size_t y) { return order[x] < order[y]; });
    std::vector<ts::BenchPoint> sorted_table;
    for (size_t i : by_plan) sorted_table.push_back(table[i]);
    table = std::move(sorted_table);
    // The session's records and their points go together (progress pushes both for a measured point).
    std::vector<size_t> rec_by_plan(part.record_points.size());
    for (size_t i = 0; i < rec_by_plan.size(); ++i) rec_by_plan[i] = i;
    std::stable_sort(rec_by_plan.begin(), rec_by_plan.end(),
                     [&](size_t x, size_t y) { return part.record_points[x] < part.record_points[y]; });
    std::vector<ts::MeasurementRecord> records;
    std::vector<int64_t> points_sorted;
    for (size_t i : rec_by_plan) {
      records.push_back(session.records[i]);
      points_sorted.push_back(part.record_points[i]);
    }
    session.records = std::move(records);
    part.record_points = std::move(points_sorted);
    std::fprintf(stderr, "tilescope bench: split across %zu engines of %s\n", engines.size(),
                 dev.label.c_str());
  }
  meta.interrupted = stop.cancelled() && done < int(to_measure.size());
  meta.wall_seconds = std::chrono::duration<double>(clock::now() - t0).count();
  ts::relate_to_cublas(table);
  write_text_output(a.out, ts::format_bench(a.format, meta, table), a.force);
  if (!a.session_out.empty()) {
    // The part of the sweep these points are (1 of 1 without --shard), and what the table says of them,
    // for `tilescope merge`.
    part.policy = meta.policy;
    part.cold_l2 = meta.cold;
    part.interleave_reference = meta.interleave_reference;
    part.sizes = meta.sweep;
    part.started = meta.date;
    part.wall_seconds = meta.wall_seconds;
    part.interrupted = meta.interrupted;
    part.wave_marks = meta.wave_marks;
    session.dram_gbs = meta.dram_gbs;
    session.part = part;
    ts::save_session(a.session_out, session, a.force);
    std::fprintf(stderr, "wrote %s (%zu points)\n", a.session_out.c_str(), session.records.size());
  }
  std::fprintf(stderr, "tilescope bench: %d points in %.1f s\n", done, meta.wall_seconds);
  if (meta.interrupted) {
    const int sig = g_interrupted.load();
    std::fprintf(stderr, "tilescope bench: interrupted (%s); %zu points kept\n",
                 sig == SIGTERM ? "SIGTERM" : "Ctrl+C", table.size());
    return 128 + (sig ? sig : SIGINT);
  }
  return kExitOk;
}

}  // namespace ts::cli
