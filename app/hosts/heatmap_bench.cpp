#include "hosts/heatmap_bench.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include <nlohmann/json.hpp>

#include "gfx/gl.hpp"
#include "hosts/gui.hpp"
#include "gfx/heatmap_gl.hpp"
#include "gfx/interop.hpp"
#include "core/engine/measure.hpp"
#include "core/engine/stats.hpp"
#include "tilescope/version.hpp"

namespace ts::ui {

namespace {
using clock_type = std::chrono::steady_clock;

// Times `repeats` refreshes of A, B and C (after 3 untimed ones); glFinish makes each one complete.
// batched: the three refreshes share one map/unmap and one synchronisation (what the panel does for a new
// result).
// cuda_part (optional): per repeat, the time until the refresh returned (the CUDA side, ending with the
// range readback's synchronisation), before GL's wait and glFinish.
// Untimed refreshes before the timed ones (the first allocates and registers the buffers).
constexpr int kWarmupRefreshes = 3;

PathTiming time_path(const std::string& name, const std::string& what, gfx::HeatmapContext& ctx,
                     const MatrixStore& store, int view, int repeats, bool full_resolution, bool batched,
                     bool want_interop, std::vector<double>* cuda_part = nullptr) {
  PathTiming t{name, what, {}};
  gfx::HeatmapLayer layers[3];
  const MatrixId ids[3] = {MatrixId::A, MatrixId::B, MatrixId::C};
  for (int i = -kWarmupRefreshes; i < repeats; ++i) {
    const auto t0 = clock_type::now();
    std::vector<gfx::HeatmapLayer::Job> jobs;
    for (int j = 0; j < 3; ++j) {
      const int64_t rows = store.rows(ids[j]), cols = store.cols(ids[j]);
      LodRegion r{0,
                  0,
                  rows,
                  cols,
                  full_resolution ? int(cols) : int(std::min<int64_t>(view, cols)),
                  full_resolution ? int(rows) : int(std::min<int64_t>(view, rows))};
      jobs.push_back({&layers[j], &store, ids[j], r, Reduce::Mean, {}});
      if (!batched) {
        gfx::HeatmapLayer::refresh_all(ctx, jobs);
        if (jobs.back().result.interop != want_interop)
          throw std::runtime_error("path " + name + " did not run as intended: " + ctx.interop().why);
        jobs.clear();
      }
    }
    if (batched) {
      gfx::HeatmapLayer::refresh_all(ctx, jobs);
      for (const auto& j : jobs)
        if (j.result.interop != want_interop)
          throw std::runtime_error("path " + name + " did not run as intended: " + ctx.interop().why);
    }
    const auto t1 = clock_type::now();
    // Shared memory: GL's wait for CUDA's writes belongs to the refresh too (the panel queues it before
    // drawing).
    if (ctx.shared()) ctx.shared()->before_gl_reads();
    glFinish();
    if (i >= 0) {
      t.ms.push_back(std::chrono::duration<double, std::milli>(clock_type::now() - t0).count());
      if (cuda_part) cuda_part->push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
    }
  }
  return t;
}
}  // namespace

HeatmapBenchResult run_heatmap_bench(const HeatmapBenchOptions& opt) {
  HeatmapBenchResult out;
  out.device = opt.backend->device_name();
  {
    gfx::HeadlessGl gl = gfx::make_headless_gl(opt.gl, opt.backend->cuda_device(), 64, 64);
    out.gl_context = gl.note;
    out.gl_renderer = gl.gl_renderer();
    RunRequest req;
    req.spec = opt.spec;
    req.keep_store = true;
    req.policy = MeasurePolicy::fixed(1);
    opt.backend->validate(req);
    CancelToken never;
    const RunResult r = opt.backend->run(req, never);
    const MatrixStore& store = *r.store;

    {  // Memory CUDA and GL share for good (what the window uses when the driver offers it).
      gfx::HeatmapContext shared(opt.backend->cuda_device(), gfx::InteropPath::Auto);
      out.shared_note = shared.interop().on ? shared.path_note() : shared.interop().why;
      if (shared.shared()) {
        std::vector<double> cuda_part;
        out.paths.push_back(
            time_path("interop, shared memory",
                      "LOD kernels writing buffers Vulkan shares with GL, no map/unmap, semaphores "
                      "order CUDA's writes and GL's reads; one sync for the three",
                      shared, store, opt.view, opt.repeats, false, true, true, &cuda_part));
        out.paths.push_back({"  of which CUDA side",
                             "range keys reset, semaphore signal, the three LOD kernels, range readback "
                             "and its sync (the rest: GL's semaphore wait and glFinish)",
                             cuda_part});
      }
    }
    gfx::HeatmapContext interop(opt.backend->cuda_device(), gfx::InteropPath::Mapped);
    out.interop = interop.interop().on;
    out.interop_why = interop.interop().why;
    if (opt.backend->link().remote)
      out.interop_why = out.shared_note = "the engine is remote: each view comes reduced through its link";
    if (out.interop) {
      out.paths.push_back(time_path("interop",
                                    "LOD kernels writing registered GL textures, one map/unmap and one sync "
                                    "for the three (mapped textures: the path without shared memory)",
                                    interop, store, opt.view, opt.repeats, false, true, true));
      // Where the batched refresh spends its time: the GL-CUDA handover, and the LOD kernels alone.
      gfx::HeatmapLayer probe[3];
      std::vector<gfx::HeatmapLayer::Job> jobs;
      std::vector<gfx::InteropPhaseJob> pj;
      const MatrixId ids[3] = {MatrixId::A, MatrixId::B, MatrixId::C};
      for (int j = 0; j < 3; ++j) {
        const LodRegion reg{0,
                            0,
                            store.rows(ids[j]),
                            store.cols(ids[j]),
                            int(std::min<int64_t>(opt.view, store.cols(ids[j]))),
                            int(std::min<int64_t>(opt.view, store.rows(ids[j])))};
        jobs.push_back({&probe[j], &store, ids[j], reg, Reduce::Mean, {}});
        pj.push_back({&store, int(ids[j]), reg});
      }
      gfx::HeatmapLayer::refresh_all(interop, jobs);  // allocates and registers the buffers
      std::vector<gfx::InteropTexture*> bufs;
      for (auto& p : probe) bufs.push_back(&p.interop_texture());
      const gfx::InteropPhases ph = gfx::time_interop_phases(*interop.stream(), bufs, pj, opt.repeats);
      out.paths.push_back(
          {"  of which map + unmap",
           "cudaGraphicsMapResources + Unmap of the three textures (with surface objects), synchronised",
           ph.map_unmap_ms});
      out.paths.push_back({"  of which LOD kernels",
                           "the three LOD kernels into plain device buffers + range readback",
                           ph.kernels_ms});
      out.paths.push_back(time_path("interop, one by one",
                                    "the same, each map refreshed on its own (zooming one)", interop, store,
                                    opt.view, opt.repeats, false, false, true));
    }
    gfx::HeatmapContext host(-1);  // the fallback: interop off
    const Backend::Link before = opt.backend->link();
    out.paths.push_back(time_path(
        "host fallback",
        before.remote ? "LOD in the remote engine, the view's values through the link (zstd) -> texture"
                      : "LOD on the engine's device (or CPU), view values through host memory -> texture",
        host, store, opt.view, opt.repeats, false, false, false));
    if (before.remote) {
      const Backend::Link after = opt.backend->link();
      const double refreshes = double(opt.repeats + kWarmupRefreshes);
      out.remote = true;
      out.engine = before.command;
      out.rtt_ms = after.rtt_ms;
      out.refresh_bytes_in = double(after.bytes_in - before.bytes_in) / refreshes;
      out.refresh_bytes_out = double(after.bytes_out - before.bytes_out) / refreshes;
    }
    out.paths.push_back(time_path("full host round trip",
                                  "every element through host memory into a full-resolution texture (no LOD)",
                                  host, store, opt.view, std::max(3, opt.repeats / 10), true, false, false));
  }
  if (opt.frame_seconds > 0 || opt.commits > 0 || opt.sweep || opt.saves > 0) {
    FrameBenchOptions fo;
    fo.backend = opt.backend;
    fo.spec = opt.spec;
    fo.seconds = opt.sweep ? 0 : opt.frame_seconds;
    fo.gl = opt.gl;
    fo.commits = opt.commits;
    fo.sweep = opt.sweep;
    fo.sweep_quick = opt.sweep_quick;
    fo.sweep_limit_s = opt.sweep_limit_s;
    fo.sweep_min_s = opt.sweep_min_s;
    fo.sweep_max_s = opt.sweep_max_s;
    fo.sweep_session_out = opt.sweep_session_out;
    fo.saves = opt.saves;
    fo.kernel_file = opt.kernel_file;
    const FrameBenchResult f = run_frame_bench(fo);
    out.sweep = f.sweep;
    out.saves = f.saves;
    out.frame_ms = f.frame_ms;
    out.frame_phases = f.phases;
    out.commit_ms = f.commit_ms;
    out.commit_bytes_in = f.commit_bytes_in;
    out.commit_bytes_out = f.commit_bytes_out;
    out.runs_during_frames = f.runs;
    out.frame_heatmap_state = f.heatmap_state;
  }
  return out;
}

std::string format_heatmap_bench(const HeatmapBenchResult& r, const HeatmapBenchOptions& opt,
                                 const std::string& fmt) {
  const auto& s = opt.spec;
  auto stat = [](const std::vector<double>& v) { return summarize(v); };
  double interop_ms = 0, host_ms = 0, full_ms = 0;
  for (const auto& p : r.paths) {
    const double med = stat(p.ms).median;
    if (p.name == "interop") interop_ms = med;
    if (p.name == "host fallback") host_ms = med;
    if (p.name == "full host round trip") full_ms = med;
  }
  if (fmt == "json") {
    nlohmann::json j;
    j["tilescope"] = {{"version", kVersion}, {"commit", kGitCommit}};
    j["device"] = r.device;
    j["gl_context"] = r.gl_context;
    j["gl_renderer"] = r.gl_renderer;
    j["interop"] = r.interop;
    j["interop_why"] = r.interop_why;
    j["shared_memory"] = r.shared_note;
    j["problem"] = {{"m", s.m}, {"n", s.n}, {"k", s.k}, {"kernel", s.kernel}, {"tile", s.tile}};
    j["view"] = opt.view;
    for (const auto& p : r.paths) {
      const auto st = stat(p.ms);
      j["refresh"].push_back({{"path", p.name},
                              {"what", p.what},
                              {"median_ms", st.median},
                              {"min_ms", st.min},
                              {"max_ms", st.max},
                              {"samples", p.ms.size()}});
    }
    if (interop_ms > 0) j["interop_speedup_vs_host_fallback"] = host_ms / interop_ms;
    if (interop_ms > 0) j["interop_speedup_vs_full_round_trip"] = full_ms / interop_ms;
    if (r.sweep.ran)
      j["sweep"] = {{"what", r.sweep.describe}, {"policy", r.sweep.policy},   {"state", r.sweep.state},
                    {"error", r.sweep.error},   {"done", r.sweep.done},       {"failed", r.sweep.failed},
                    {"total", r.sweep.total},   {"seconds", r.sweep.seconds}, {"dram_gbs", r.sweep.dram_gbs},
                    {"frames", r.sweep.frames}};
    if (!r.frame_ms.empty()) {
      const auto st = stat(r.frame_ms);
      j["frames"] = {
          {"during", r.sweep.ran ? "the window's sweep" : "Repeat"},
          {"count", r.frame_ms.size()},
          {"median_ms", st.median},
          {"p99_ms", quantile(r.frame_ms, 0.99)},
          {"max_ms", st.max},
          {"fps_median", 1000.0 / st.median},
          {"over_50ms", std::count_if(r.frame_ms.begin(), r.frame_ms.end(), [](double x) { return x > 50; })},
          {"over_16_7ms",
           std::count_if(r.frame_ms.begin(), r.frame_ms.end(), [](double x) { return x > 16.7; })},
          {"runs", r.runs_during_frames},
          {"heatmaps", r.frame_heatmap_state}};
      // The ten slowest frames, and where their time went.
      std::vector<size_t> order(r.frame_ms.size());
      for (size_t i = 0; i < order.size(); ++i) order[i] = i;
      std::sort(order.begin(), order.end(),
                [&](size_t a, size_t b) { return r.frame_ms[a] > r.frame_ms[b]; });
      for (size_t i = 0; i < std::min<size_t>(10, order.size()) && order[i] < r.frame_phases.size(); ++i) {
        const auto& p = r.frame_phases[order[i]];
        j["frames"]["slowest"].push_back({{"frame", order[i]},
                                          {"ms", r.frame_ms[order[i]]},
                                          {"pump_ms", p.pump_ms},
                                          {"ui_ms", p.ui_ms},
                                          {"render_ms", p.render_ms},
                                          {"finish_ms", p.finish_ms},
                                          {"new_result", p.new_result}});
      }
    }
    if (!r.commit_ms.empty()) {
      const auto st = stat(r.commit_ms);
      j["commits"] = {{"count", r.commit_ms.size()},
                      {"median_ms", st.median},
                      {"min_ms", st.min},
                      {"max_ms", st.max},
                      {"all_ms", r.commit_ms}};
      if (r.remote) j["commits"]["link_bytes"] = {{"in", r.commit_bytes_in}, {"out", r.commit_bytes_out}};
    }
    if (r.remote)
      j["engine"] = {{"command", r.engine},
                     {"rtt_ms", r.rtt_ms},
                     {"refresh_link_bytes", {{"in", r.refresh_bytes_in}, {"out", r.refresh_bytes_out}}}};
    for (const auto& sv : r.saves)
      j["saves"].push_back({{"from", sv.editor ? "the window's editor" : "another program (the watcher)"},
                            {"noticed_ms", sv.noticed_ms},
                            {"built_ms", sv.built_ms},
                            {"drawn_ms", sv.drawn_ms}});
    return j.dump(2) + "\n";
  }
  std::ostringstream os;
  char line[512];
  os << "# tilescope bench heatmap\n\n";
  os << "- tilescope " << kVersion << " (" << kGitCommit << ")\n- device: " << r.device
     << "\n- GL: " << r.gl_context << "; " << r.gl_renderer
     << "\n- interop: " << (r.interop ? "on" : "off (" + r.interop_why + ")")
     << "\n- shared memory: " << r.shared_note << "\n";
  if (r.remote) {
    std::snprintf(
        line, sizeof line,
        "- engine: `%s`, round trip %.1f ms; link bytes per refresh of A, B and C: %.0f in, %.0f out\n",
        r.engine.c_str(), r.rtt_ms, r.refresh_bytes_in, r.refresh_bytes_out);
    os << line;
  }
  std::snprintf(line, sizeof line, "- problem: %lld x %lld x %lld, %s tile %d; views %d x %d (A, B, C)\n\n",
                (long long)s.m, (long long)s.n, (long long)s.k, s.kernel.c_str(), s.tile, opt.view, opt.view);
  os << line;
  os << "| refresh of A, B and C | median ms | min ms | max ms | samples | what "
        "|\n|---|---|---|---|---|---|\n";
  for (const auto& p : r.paths) {
    const auto st = stat(p.ms);
    std::snprintf(line, sizeof line, "| %s | %.3f | %.3f | %.3f | %zu | %s |\n", p.name.c_str(), st.median,
                  st.min, st.max, p.ms.size(), p.what.c_str());
    os << line;
  }
  if (interop_ms > 0) {
    std::snprintf(
        line, sizeof line,
        "\ninterop is %.1fx faster than the host fallback and %.1fx faster than a full host round trip\n",
        host_ms / interop_ms, full_ms / interop_ms);
    os << line;
  }
  if (r.sweep.ran) {
    std::snprintf(
        line, sizeof line,
        "\nthe window's sweep: %s, %s policy: %s, %d of %d points (%d without a result) in %.1f s%s%s\n",
        r.sweep.describe.c_str(), r.sweep.policy.c_str(), r.sweep.state.c_str(), r.sweep.done, r.sweep.total,
        r.sweep.failed, r.sweep.seconds, r.sweep.error.empty() ? "" : ": ", r.sweep.error.c_str());
    os << line;
    std::snprintf(line, sizeof line,
                  "the window drew %lld frames in those %.1f s (%.1f a second): while a kernel is timed it "
                  "draws at most %.0f a second, so that drawing does not share the GPU with the timing\n",
                  (long long)r.sweep.frames, r.sweep.seconds,
                  r.sweep.seconds > 0 ? double(r.sweep.frames) / r.sweep.seconds : 0.0,
                  1.0 / TimingGate::kTimingFrameInterval);
    os << line;
  }
  if (!r.frame_ms.empty()) {
    const auto st = stat(r.frame_ms);
    const long over =
        long(std::count_if(r.frame_ms.begin(), r.frame_ms.end(), [](double x) { return x > 50; }));
    std::snprintf(line, sizeof line,
                  "\nGUI frames while %s: %zu frames, %d runs; median %.2f ms (%.0f fps), p99 %.2f "
                  "ms, worst %.2f ms, %ld over 50 ms; heatmaps: %s\n",
                  r.sweep.ran ? "the sweep ran" : "re-running the kernel", r.frame_ms.size(),
                  r.runs_during_frames, st.median, 1000.0 / st.median, quantile(r.frame_ms, 0.99), st.max,
                  over, r.frame_heatmap_state.c_str());
    os << line;
    std::snprintf(
        line, sizeof line, "frames over 16.7 ms (60 Hz): %ld\n",
        long(std::count_if(r.frame_ms.begin(), r.frame_ms.end(), [](double x) { return x > 16.7; })));
    os << line;
  }
  if (!r.commit_ms.empty()) {
    const auto st = stat(r.commit_ms);
    std::snprintf(
        line, sizeof line,
        "\nsize committed -> new heatmaps and Result drawn (%zu commits, alternating N and N - 24): "
        "median %.1f ms, min %.1f ms, max %.1f ms\n",
        r.commit_ms.size(), st.median, st.min, st.max);
    os << line;
    if (r.remote) {
      std::snprintf(line, sizeof line, "link bytes per commit: %.0f in, %.0f out\n", r.commit_bytes_in,
                    r.commit_bytes_out);
      os << line;
    }
  }
  if (!r.saves.empty()) {
    os << "\nkernel file saved -> new build's heatmaps and Result drawn (the watcher polls every second):\n\n"
          "| save | from | noticed ms | built ms | drawn ms |\n|---|---|---|---|---|\n";
    for (size_t i = 0; i < r.saves.size(); ++i) {
      const auto& sv = r.saves[i];
      std::snprintf(line, sizeof line, "| %zu | %s | %.0f | %.0f | %.0f |\n", i + 1,
                    sv.editor ? "editor" : "another program", sv.noticed_ms, sv.built_ms, sv.drawn_ms);
      os << line;
    }
  }
  return os.str();
}

}  // namespace ts::ui
