#include "cli/run_cmd.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "core/io/csv.hpp"
#include "core/plots/figure.hpp"
#include "core/io/npy.hpp"
#include "core/engine/run_queue.hpp"
#include "core/engine/schedule.hpp"
#include "core/io/schedule_trace.hpp"
#include "core/io/session.hpp"
#include "core/io/settings.hpp"
#include "core/engine/stats.hpp"
#include "core/plots/rung_suggest.hpp"
#include "core/plots/tile_suggest.hpp"

namespace ts::cli {

namespace {

void print_result(const ts::RunResult& r) {
  const auto& s = r.spec;
  const ts::SampleStats st = ts::summarize(r.samples_ms);
  std::printf("kernel     %s%s\n", s.kernel.c_str(),
              s.tile ? (" (TILE " + std::to_string(s.tile) + ")").c_str() : "");
  std::printf("shape      M x N x K = %lld x %lld x %lld, input %s, seed %llu\n", (long long)s.m,
              (long long)s.n, (long long)s.k, ts::to_string(s.input), (unsigned long long)s.seed);
  std::printf("backend    %s: %s\n", r.backend.c_str(), r.device.c_str());
  if (r.timed) {
    // Times in the unit of the median (74.7 us rather than 0.0747 ms), the spread also as a share of it.
    const ts::Unit u = ts::time_unit(st.median);
    auto t = [&](double ms) { return ts::CsvWriter::num(ms * u.scale, "%.4g"); };
    std::printf(
        "time       median %s %s over %d launches (IQR %s %s = %s %% of the median, min %s, max %s)\n",
        t(st.median).c_str(), u.name.c_str(), st.count, t(st.p75 - st.p25).c_str(), u.name.c_str(),
        ts::CsvWriter::num(st.median > 0 ? 100 * (st.p75 - st.p25) / st.median : 0, "%.2g").c_str(),
        t(st.min).c_str(), t(st.max).c_str());
    std::printf("sampling   %s\n", ts::describe_stop(r.stop, r.noise(), st.count).c_str());
  } else
    std::printf("time       not timed (verification failed)\n");
  std::printf("policy     %s\n", r.policy.c_str());
  if (r.clock.available)
    std::printf("SM clock   median %.0f MHz (min %.0f, max %.0f)%s%s\n", r.clock.median_mhz, r.clock.min_mhz,
                r.clock.max_mhz, r.clock.throttled ? ", THROTTLED " : "", r.clock.throttle_reasons.c_str());
  else
    std::printf("SM clock   %s\n", r.clock.note.empty() ? "not recorded" : r.clock.note.c_str());
  if (r.timed) std::printf("speed      %s\n", ts::format_flops(r.tflops() * 1e12).c_str());
  if (r.is_impossible()) std::printf("IMPOSSIBLE %s: not a record\n", r.impossible.c_str());
  if (r.changing.sets > 0) {  // the timing on changing inputs, beside the one on the run's own A and B
    const ts::ChangingInputs& x = r.changing;
    if (x.measured())
      std::printf(
          "changing   median %s over %d launches on %d input sets switched between samples (fixed "
          "inputs: %s, %.2fx)\n",
          ts::format_ms(x.stats.median).c_str(), x.stats.count, x.sets, ts::format_ms(r.median_ms()).c_str(),
          r.median_ms() > 0 ? x.stats.median / r.median_ms() : 0.0);
    std::printf("           %s: %s\n", x.passed ? "PASS" : "FAIL", x.verdict.c_str());
  }
  std::printf("error      max abs %.3e, max rel %.3e, tolerance %.3e (vs %s)\n", r.error.max_abs_err,
              r.error.max_rel_err, r.error.tolerance, r.reference.c_str());
  if (!r.error.passed)
    std::printf("           %lld elements over the tolerance; worst at row %lld, col %lld\n",
                (long long)r.error.bad_elements, (long long)r.error.worst_row, (long long)r.error.worst_col);
  if (!r.note.empty()) std::printf("note       %s\n", r.note.c_str());
  std::printf("result     %s\n", r.error.passed ? "PASS" : "FAIL");
  if (r.cublas_interleaved()) {
    const ts::InterleavedReference& ref = r.interleaved;
    std::printf(
        "cuBLAS     %s median %s over %d launches, each right after one of the kernel's: the kernel "
        "reaches %.1f %% of it\n",
        ref.kernel.c_str(), ts::format_ms(ref.stats.median).c_str(), ref.stats.count,
        100.0 * ref.stats.median / r.median_ms());
    if (ref.clock.available)
      std::printf("           its SM clock median %.0f MHz (min %.0f, max %.0f)%s%s%s\n",
                  ref.clock.median_mhz, ref.clock.min_mhz, ref.clock.max_mhz,
                  ref.clock.throttled ? ", THROTTLED " : "", ref.clock.throttle_reasons.c_str(),
                  ts::clocks_differ(r.clock, ref.clock) ? "; the two clocks differ by more than 1 %" : "");
  } else if (r.reference_ms > 0) {
    std::printf("cuBLAS     %s at this shape (timed on its own): the kernel reaches %.1f %% of it\n",
                ts::format_ms(r.reference_ms).c_str(), 100.0 * r.reference_ms / r.median_ms());
  } else if (!r.interleaved_note.empty()) {
    std::printf("cuBLAS     not timed beside it: %s\n", r.interleaved_note.c_str());
  }
  if (r.occupancy) {
    const auto& o = *r.occupancy;
    std::printf(
        "occupancy  %d threads/block, %d regs/thread, %d B smem: %d blocks/SM (API %d), limited by %s; "
        "%.1f %% of warps; %lld blocks, waves %s\n",
        o.res.threads_per_block, o.res.regs_per_thread, o.res.static_smem + o.res.dynamic_smem,
        o.blocks_per_sm, o.api_blocks_per_sm, o.limiter.c_str(), 100 * o.occupancy, (long long)o.grid_blocks,
        ts::waves_text(o).c_str());
  }
  if (r.trace) {
    const ts::ScheduleSummary s = ts::summarize_schedule(*r.trace);
    int used = 0;
    for (int c : s.tiles_per_sm) used += c > 0;
    const std::string noun = ts::record_noun(*r.trace);  // tile, block or (stream-K) segment
    std::printf(
        "trace      %s on %d SMs (%s), mean %s %.1f us, up to %d resident, %d in a row per SM; "
        "traced/plain %.4f / %.4f ms = %.3f; timer step %llu ns\n",
        ts::describe_grid(*r.trace).c_str(), used,
        s.problem.empty() ? ("every " + noun + " once").c_str() : s.problem.c_str(), noun.c_str(),
        s.mean_tile_us, s.max_concurrency, s.waves, r.trace->traced_ms, r.trace->plain_ms,
        r.trace->plain_ms > 0 ? r.trace->traced_ms / r.trace->plain_ms : 0.0,
        (unsigned long long)r.trace->timer_resolution_ns);
  } else if (!r.trace_note.empty()) {
    std::printf("trace      %s\n", r.trace_note.c_str());
  }
}

// Measures `points` one after the other as `base` is measured (its policy and inputs; no profile, no C kept),
// each result into `into` (a failed one too: the suggestions name it and never pick it). A point the backend
// refuses or that fails on the device is said in `skipped` ("tile 64: ...", "splitk 4: ..."), the latter also
// counted in device_errors. `name` names a point in those lines and in the progress on standard error.
struct PointsMeasured {
  std::vector<std::string> skipped;
  int device_errors = 0;
};
PointsMeasured measure_points(ts::RunQueue& queue, const ts::RunRequest& base,
                              const std::vector<ts::ProblemSpec>& points, ts::Session& into, bool progress,
                              const std::function<std::string(const ts::ProblemSpec&)>& name) {
  PointsMeasured out;
  for (size_t i = 0; i < points.size(); ++i) {
    ts::RunRequest one = base;
    one.spec = points[i];
    one.profile = false;
    one.keep_output = false;
    ts::RunOutcome o = queue.wait(queue.submit(one));
    if (!o.result) {
      out.skipped.push_back(name(points[i]) + ": " + o.error);
      out.device_errors += !o.bad_input;
    } else {
      into.add(*o.result);
    }
    if (progress)
      std::fprintf(stderr, "tilescope: %s %s (%zu of %zu)\n", o.result ? "timed" : "could not time",
                   name(points[i]).c_str(), i + 1, points.size());
  }
  return out;
}

// [SECTION] --suggest-kernel: the ladder's kernels at this shape and precision, ranked from measurements.
nlohmann::json margin_json(const std::optional<ts::RungMargin>& g) {
  if (!g) return nullptr;
  return {{"against", g->against}, {"percent_ahead", g->percent}, {"within_noise", g->within_noise}};
}

nlohmann::json ranking_json(const ts::RungRanking& r, size_t measured_before) {
  nlohmann::json rows = nlohmann::json::array();
  for (const ts::RungTiming& t : r.measured)
    rows.push_back(
        {{"kernel", t.config.kernel},
         {"tile", t.config.tile},
         {"median_ms", t.median_ms},
         {"p25_ms", t.p25_ms},
         {"p75_ms", t.p75_ms},
         {"tflops", t.tflops},
         {"samples", t.samples},
         {"noise", t.noise},
         {"stop", t.stop},
         {"policy", t.policy},
         {"date", t.date},
         {"cublas_ms", t.cublas_ms > 0 ? nlohmann::json(t.cublas_ms) : nlohmann::json()},
         {"percent_of_cublas", t.cublas_ms > 0 ? nlohmann::json(t.percent_of_cublas()) : nlohmann::json()},
         {"cublas_note", t.cublas_note},
         {"clocks_differ", t.clocks_differ},
         {"measured_now", t.record >= measured_before}});
  auto configs = [](const std::vector<ts::KernelTile>& list) {
    nlohmann::json out = nlohmann::json::array();
    for (const ts::KernelTile& c : list) out.push_back({{"kernel", c.kernel}, {"tile", c.tile}});
    return out;
  };
  const ts::RungTiming* best = r.fastest();
  return {{"m", r.m},
          {"n", r.n},
          {"k", r.k},
          {"precision", r.tf32 ? "tf32" : "fp32"},
          {"cublas", r.cublas},
          {"configurations", r.configurations},
          {"complete", r.complete()},
          {"fastest", best ? nlohmann::json{{"kernel", best->config.kernel}, {"tile", best->config.tile}}
                           : nlohmann::json()},
          {"next_kernel", margin_json(r.next_kernel)},
          {"next_tile", margin_json(r.next_tile)},
          {"to_cublas", margin_json(r.to_cublas)},
          {"measured", rows},
          {"failed_verification", configs(r.failed)},
          {"impossible", configs(r.impossible)},
          {"missing", configs(r.missing)},
          {"line", r.line()},
          {"notes", r.notes()}};
}

void print_ranking(const ts::RungRanking& r, const std::string& device, size_t measured_before) {
  std::printf("%s rungs at %lld x %lld x %lld on %s (against %s):\n", r.tf32 ? "TF32" : "FP32",
              (long long)r.m, (long long)r.n, (long long)r.k, device.c_str(), r.cublas.c_str());
  // One unit per column, the one that keeps the column's largest value readable.
  double max_ms = 0, max_flops = 0;
  size_t name_w = 6;
  for (const ts::RungTiming& t : r.measured) {
    max_ms = std::max(max_ms, t.p75_ms);
    max_flops = std::max(max_flops, t.tflops * 1e12);
    name_w = std::max(name_w, t.config.kernel.size());
  }
  const ts::Unit tu = ts::time_unit(max_ms), fu = ts::flops_unit(max_flops);
  std::printf("  %3s  %-*s  %5s  %10s  %10s  %12s  %9s  %7s  %7s  %s\n", "", int(name_w), "kernel", "tile",
              ("median " + tu.name).c_str(), ("IQR " + tu.name).c_str(), fu.name.c_str(), "% cuBLAS",
              "noise %", "samples", "stop");
  int rank = 0;
  for (const ts::RungTiming& t : r.measured) {
    const std::string of = t.cublas_ms > 0 ? ts::CsvWriter::num(t.percent_of_cublas(), "%.1f") : "-";
    std::printf("  %2d.  %-*s  %5s  %10.4g  %10.3g  %12.4g  %9s  %7.2f  %7d  %s%s\n", ++rank, int(name_w),
                t.config.kernel.c_str(), t.config.tile ? std::to_string(t.config.tile).c_str() : "-",
                t.median_ms * tu.scale, (t.p75_ms - t.p25_ms) * tu.scale, t.tflops * 1e12 * fu.scale,
                of.c_str(), 100 * t.noise, t.samples, t.stop.c_str(),
                t.record >= measured_before ? "" : "  (from the session)");
  }
  std::printf("%s\n", r.line().c_str());
  for (const std::string& note : r.notes()) std::printf("  %s\n", note.c_str());
}

int suggest_kernel(const RunArgs& a, const std::shared_ptr<ts::Backend>& backend, const ts::RunRequest& req,
                   std::optional<ts::Session> given) {
  const ts::DeviceInfo dev = backend->device_info();
  if (given && (given->device.backend != dev.backend || given->device.name != dev.name))
    throw ts::ValidationError("--session " + a.session + " holds points measured on " + given->device.name +
                              " (" + given->device.backend + " backend), not on " + dev.name +
                              ": its points say nothing about this device");
  ts::Session session = given ? std::move(*given) : ts::Session::for_device(dev);
  const size_t before = session.records.size();
  const std::vector<ts::KernelInfo> kernels = backend->kernels();
  const ts::KernelInfo* chosen = ts::find_kernel(kernels, req.spec.kernel);  // checked by build_request
  const bool tf32 = chosen && chosen->tf32;
  const ts::ProblemSpec& at = req.spec;
  ts::RungRanking ranking = ts::rank_rungs(session, kernels, at.m, at.n, at.k, tf32);
  if (ranking.configurations == 0)
    throw ts::ValidationError(std::string("--suggest-kernel: no ") + (tf32 ? "TF32" : "FP32") +
                              " kernel of TileScope's ladder runs on " + dev.label +
                              " (--kernel chooses the precision: its own)");
  // Every missing point is checked against the backend first: one that cannot run here is said, not measured.
  std::vector<ts::ProblemSpec> runnable;
  std::vector<std::string> refused;
  for (const ts::ProblemSpec& p : ts::rung_search_points(ranking, at)) {
    ts::RunRequest one = req;
    one.spec = p;
    try {
      backend->validate(one);
      runnable.push_back(p);
    } catch (const ts::ValidationError& e) {
      refused.push_back(ts::rung_label({p.kernel, p.tile}) + ": " + e.what());
    }
  }
  if (runnable.empty() && ranking.measured.empty() && !refused.empty()) {
    std::string why;
    for (const std::string& r : refused) why += "\n  " + r;
    throw ts::ValidationError("--suggest-kernel: no rung can run at this shape here:" + why);
  }
  ts::RunQueue queue(backend);
  const PointsMeasured m =
      measure_points(queue, req, runnable, session, !a.json, [](const ts::ProblemSpec& p) {
        return ts::rung_label({p.kernel, p.tile});
      });
  refused.insert(refused.end(), m.skipped.begin(), m.skipped.end());
  ranking = ts::rank_rungs(session, kernels, at.m, at.n, at.k, tf32);
  if (!a.session_out.empty()) {
    ts::save_session(a.session_out, session, a.force);
    if (!a.json)
      std::fprintf(stderr, "wrote %s (%zu points)\n", a.session_out.c_str(), session.records.size());
  }
  if (a.json) {
    nlohmann::json j;
    j["device"] = dev.label;
    j["backend"] = dev.backend;
    j["policy"] = req.policy ? req.policy->describe() : backend->default_policy().describe();
    j["measured_now"] = session.records.size() - before;
    j["not_measured"] = refused;
    j["rung_ranking"] = ranking_json(ranking, before);
    std::cout << j.dump(2) << "\n";
  } else {
    if (before > 0)
      std::printf("%zu points read from %s, %zu measured now\n", before, a.session.c_str(),
                  session.records.size() - before);
    print_ranking(ranking, dev.label, before);
    for (const std::string& why : refused) std::printf("  not measured: %s\n", why.c_str());
  }
  return m.device_errors > 0 ? kExitFailed : kExitOk;
}

}  // namespace

void add_run_options(CLI::App* cmd, RunArgs& a) {
  add_problem_options(cmd, a.problem);
  cmd->add_option("--out", a.out, "write C to this .npy file");
  cmd->add_option("--samples", a.samples, "timed launches, 1 to 100000 (default: 10 on CUDA, 3 on the CPU)");
  cmd->add_flag("--json", a.json, "print a JSON object instead of text");
  cmd->add_flag("--force", a.force,
                "replace existing --out, --trace-csv and --trace-json files (regular files only)");
  cmd->add_flag("--suggest-tile", a.suggest,
                "also time every other tile of the kernel at this shape (the bench policy for all, unless "
                "--samples) and print the fastest, from those measurements");
  cmd->add_flag(
      "--suggest-kernel", a.suggest_kernel,
      "rank TileScope's kernels of --kernel's precision (FP32 by default, TF32 for a TF32 kernel) at "
      "this shape: time every kernel and tile of the ladder (the bench policy, unless --samples), "
      "only those --session lacks when it is given, then print the fastest with its margins to the "
      "next kernel, its next tile and the cuBLAS timed with it");
  cmd->add_option("--session", a.session,
                  "with --suggest-kernel: points measured before (a session of this device, from the window "
                  "or --session-out); only what it lacks at this shape is measured");
  cmd->add_option("--session-out", a.session_out,
                  "with --suggest-kernel: write the points (--session's and the new ones) as a session");
  cmd->add_flag("--changing-inputs", a.changing_inputs,
                "also time the kernel on inputs that change between samples (3 sets of A and B, switched "
                "outside the timing) and check C against their reference: a kernel that caches its answer "
                "fails; prints both timings");
  cmd->add_flag("--profile", a.profile, "GPU: also print occupancy and a traced launch's tile schedule");
  cmd->add_option("--trace-csv", a.trace_csv,
                  "with --profile: write the tile schedule (one row per tile) here");
  cmd->add_option("--trace-json", a.trace_json,
                  "with --profile: write the traced launch here as a Chrome trace event JSON (open it in "
                  "ui.perfetto.dev or chrome://tracing: one track per SM, one slice per block)");
  cmd->add_flag(
      "--sanitize", a.sanitize,
      "with --kernel-file: run your kernel once under compute-sanitizer memcheck and racecheck (shape "
      "made small: each side at most 511, with its partial tiles) and print their reports instead of timing "
      "it");
}

int cmd_run(RunArgs& a, const CLI::App& cmd) {
  (void)cmd;
  // Every option and output before a backend is opened (or a kernel file compiled, or .npy files read).
  int fixed_samples = 0;
  if (!a.samples.empty()) {  // 0 (or 00) is no number of launches: refused, as every other count is
    fixed_samples = int(ts::parse_dim(a.samples, "--samples"));
    if (fixed_samples > 100000) throw ts::ValidationError("--samples = " + a.samples + " is above 100000");
  }
  if (a.changing_inputs && a.sanitize)
    throw ts::ValidationError("--changing-inputs times the kernel and --sanitize does not: choose one");
  ts::check_output_path(a.out, replace_if(a.force), "--out");
  if (!a.trace_csv.empty() && !a.profile) throw ts::ValidationError("--trace-csv needs --profile");
  ts::check_output_path(a.trace_csv, replace_if(a.force), "--trace-csv");
  if (!a.trace_json.empty() && !a.profile) throw ts::ValidationError("--trace-json needs --profile");
  ts::check_output_path(a.trace_json, replace_if(a.force), "--trace-json");
  if (!a.trace_json.empty() && std::filesystem::path(a.trace_json).lexically_normal() ==
                                   std::filesystem::path(a.trace_csv).lexically_normal())
    throw ts::ValidationError("--trace-csv and --trace-json name the same file: " + a.trace_json);
  std::optional<ts::Session> given;
  if (a.suggest_kernel) {
    if (a.suggest) throw ts::ValidationError("--suggest-tile and --suggest-kernel: choose one");
    if (a.sanitize) throw ts::ValidationError("--suggest-kernel and --sanitize: choose one");
    if (!a.problem.file.file.empty())
      throw ts::ValidationError("--suggest-kernel ranks TileScope's own kernels: leave out --kernel-file");
    if (!a.out.empty() || a.profile)
      throw ts::ValidationError(
          "--suggest-kernel measures many kernels: --out and --profile go with one run");
    ts::check_output_path(a.session_out, replace_if(a.force), "--session-out");
    if (!a.session.empty()) given = ts::load_session(a.session);  // a missing or damaged file: exit 2
  } else if (!a.session.empty() || !a.session_out.empty()) {
    throw ts::ValidationError("--session and --session-out go with --suggest-kernel");
  }
  std::string note;
  auto backend = open_backend(a.problem.backend, &note, a.problem.engine, cmd.count("--backend") > 0);
  if (!note.empty()) std::fprintf(stderr, "tilescope: %s\n", note.c_str());
  if (a.suggest) {  // before anything is compiled or allocated
    const std::vector<ts::KernelInfo> all = backend->kernels();
    const std::string name = a.problem.kernel.empty() ? "tiled" : a.problem.kernel;
    const ts::KernelInfo* k = ts::find_kernel(all, name);
    if (k && k->tiles.size() < 2)
      throw ts::ValidationError("--suggest-tile: " + name + " has " +
                                (k->tiles.size() == 1 ? "one tile" : "no tile parameter") +
                                ": nothing to choose");
    if (a.sanitize) throw ts::ValidationError("--suggest-tile and --sanitize: choose one");
  }
  ts::RunRequest req = build_request(a.problem, *backend);
  if (a.sanitize) return ts::cli::sanitize(req, *backend, a.json);
  if ((a.suggest || a.suggest_kernel) && a.samples.empty()) req.policy = backend->bench_policy();
  if (fixed_samples > 0) {
    ts::MeasurePolicy p = backend->default_policy();
    p.name = "fixed";
    p.min_samples = p.max_samples = fixed_samples;
    p.max_seconds = 60;
    req.policy = p;
  }
  if (a.changing_inputs) {
    if (!req.policy) req.policy = backend->default_policy();
    req.policy->changing_inputs = true;
  }
  if (a.suggest_kernel) return suggest_kernel(a, backend, req, std::move(given));
  req.keep_output = !a.out.empty();
  req.profile = a.profile;
  ts::RunQueue queue(backend);  // the same path as the GUI, waited for
  ts::RunOutcome o = queue.wait(queue.submit(req));
  if (!o.result) {
    std::fprintf(stderr, "tilescope: %s\n", o.error.c_str());
    return o.bad_input ? kExitUsage : kExitFailed;
  }
  const ts::RunResult& r = *o.result;
  if (!a.out.empty()) ts::write_npy(a.out, *r.c, replace_if(a.force));
  if (a.profile && backend->kind() != "cuda")
    std::fprintf(stderr, "tilescope: --profile needs the CUDA backend; no occupancy or trace on the CPU\n");
  if (!a.trace_csv.empty() && r.trace)
    ts::write_file(a.trace_csv, ts::schedule_csv(*r.trace), replace_if(a.force));
  if (!a.trace_json.empty() && r.trace) {
    const ts::ScheduleTraceContext context{r.spec.kernel, r.spec.tile, r.spec.m,
                                           r.spec.n,      r.spec.k,    r.device};
    std::string text;
    try {
      text = ts::schedule_trace_text(*r.trace, context);
    } catch (const std::invalid_argument& e) {  // a trace that fails check_trace
      throw std::runtime_error("--trace-json " + a.trace_json + " not written: " + e.what());
    }
    ts::write_file(a.trace_json, text, replace_if(a.force));
  }
  if (!a.suggest) {
    if (a.json)
      std::cout << ts::result_to_json(r).dump(2) << "\n";
    else
      print_result(r);
    return r.error.passed ? kExitOk : kExitFailed;
  }
  // --suggest-tile: every other tile at the same shape and policy, then the fastest of the measured.
  ts::Session measured = ts::Session::for_device(backend->device_info());
  measured.add(r);
  const std::vector<ts::KernelInfo> kernels = backend->kernels();
  const ts::KernelInfo* kp = ts::find_kernel(kernels, req.spec.kernel);
  if (!kp || kp->tiles.size() < 2) {
    std::fprintf(stderr, "tilescope: --suggest-tile: %s has no tiles to choose from\n",
                 req.spec.kernel.c_str());
    return kExitUsage;
  }
  const ts::KernelInfo& k = *kp;
  if (!a.json) print_result(r);
  std::vector<ts::ProblemSpec> others;
  for (const ts::ProblemSpec& p : ts::tile_search_points(k, req.spec))
    if (p.tile != req.spec.tile) others.push_back(p);
  const std::vector<std::string> refused =
      measure_points(queue, req, others, measured, !a.json, [](const ts::ProblemSpec& p) {
        return "tile " + std::to_string(p.tile);
      }).skipped;
  const ts::TileSuggestion t = ts::suggest_tile(measured, k, req.spec);
  if (a.json) {
    nlohmann::json j = ts::result_to_json(r);
    nlohmann::json tiles = nlohmann::json::array();
    for (const auto& m : t.measured)
      tiles.push_back({{"tile", m.tile},
                       {"median_ms", m.median_ms},
                       {"p25_ms", m.p25_ms},
                       {"p75_ms", m.p75_ms},
                       {"tflops", m.tflops},
                       {"samples", m.samples}});
    j["tile_suggestion"] = {{"measured", tiles},
                            {"failed_verification", t.failed},
                            {"impossible", t.impossible},
                            {"not_measured", refused},
                            {"fastest", t.fastest ? nlohmann::json(*t.fastest) : nlohmann::json()},
                            {"speedup_over_chosen", t.speedup},
                            {"within_noise", t.within_noise},
                            {"summary", t.summary()}};
    std::cout << j.dump(2) << "\n";
  } else {
    std::printf("\ntiles of %s at %lld x %lld x %lld (%s):\n", k.id.c_str(), (long long)req.spec.m,
                (long long)req.spec.n, (long long)req.spec.k, r.policy.c_str());
    // One unit per column, the one that keeps the column's largest value readable.
    double max_ms = 0, max_flops = 0;
    for (const auto& m : t.measured) {
      max_ms = std::max(max_ms, m.median_ms);
      max_flops = std::max(max_flops, m.tflops * 1e12);
    }
    const ts::Unit tu = ts::time_unit(max_ms), fu = ts::flops_unit(max_flops);
    std::printf("  %6s  %10s  %10s  %12s  %s\n", "tile", ("median " + tu.name).c_str(),
                ("IQR " + tu.name).c_str(), fu.name.c_str(), "samples");
    for (const auto& m : t.measured)
      std::printf("  %6d  %10.4g  %10.3g  %12.4g  %zu%s\n", m.tile, m.median_ms * tu.scale,
                  (m.p75_ms - m.p25_ms) * tu.scale, m.tflops * 1e12 * fu.scale, m.samples,
                  m.tile == req.spec.tile ? "  (chosen)" : "");
    for (const auto& why : refused) std::printf("  not measured: %s\n", why.c_str());
    std::printf("%s\n", t.summary().c_str());
  }
  return r.error.passed ? kExitOk : kExitFailed;
}

}  // namespace ts::cli
