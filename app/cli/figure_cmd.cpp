#include "cli/figure_cmd.hpp"

#include "cli/cli.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <sstream>
#include <nlohmann/json.hpp>

#include "core/plots/figure.hpp"
#include "core/plots/replay_figure.hpp"
#include "ui/plots/figure_render.hpp"
#include "core/engine/gpu_catalog.hpp"
#include "core/plots/plot_data.hpp"
#include "kernels/engine/registry.hpp"
#include "core/engine/run_queue.hpp"
#include "core/io/session.hpp"
#include "core/engine/sweep.hpp"
#include "gfx/headless.hpp"
#include "gfx/window.hpp"

namespace ts::cli {

namespace fs = std::filesystem;

namespace {

std::vector<std::string> split(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(item);
  return out;
}

// The problem of the options (as `run` reads them), checked against the registry and the shape rules; a
// backend checks what it can run when points are measured.
ProblemSpec problem_of(const FigureArgs& a, const std::vector<KernelInfo>& registry, bool cpu) {
  ProblemSpec s;
  s.kernel = a.kernel;
  const bool tile_given = !a.tile.empty();
  if (tile_given)
    s.tile = int(parse_dim(a.tile, "--tile"));
  else if (const KernelInfo* k = find_kernel(registry, a.kernel))
    s.tile = k->default_tile;
  validate_kernel(s, registry, tile_given);
  s.input = parse_input_kind(a.input);
  s.seed = parse_seed(a.seed, "--seed");
  const bool dims = !a.m.empty() || !a.n.empty() || !a.k.empty();
  if (!a.size.empty() && dims) throw ValidationError("give either --size or --m/--n/--k, not both");
  if (!a.size.empty()) {
    s.m = s.n = s.k = parse_dim(a.size, "--size");
  } else if (dims) {
    if (a.m.empty() || a.n.empty() || a.k.empty())
      throw ValidationError("give all three of --m, --n and --k (or --size)");
    s.m = parse_dim(a.m, "--m");
    s.n = parse_dim(a.n, "--n");
    s.k = parse_dim(a.k, "--k");
  } else {
    s.m = s.n = s.k = cpu ? 256 : 1024;
  }
  validate_shape(s);
  return s;
}

// The kernels x tiles to measure: --kernels (each at every tile, or those of --tiles), by default the
// problem's configuration for a sweep and every kernel this backend runs for the ladder; cuBLAS joins on a
// GPU.
std::vector<KernelTile> configs_of(const FigureArgs& a, const std::vector<KernelInfo>& registry,
                                   const ProblemSpec& p, bool cuda, bool ladder) {
  std::vector<const KernelInfo*> kernels;
  std::vector<KernelTile> out;
  if (a.kernels.empty() && !ladder) {
    out.push_back({p.kernel, p.tile});
  } else if (a.kernels.empty() || a.kernels == "all") {
    for (const auto& k : registry)
      if (!k.teaching && k.runs_on(cuda ? "cuda" : "cpu")) kernels.push_back(&k);
  } else {
    for (const auto& name : split(a.kernels)) {
      const KernelInfo* k = find_kernel(registry, name);
      if (!k) throw ValidationError("--kernels: unknown kernel '" + name + "' (see `tilescope list`)");
      kernels.push_back(k);
    }
  }
  std::vector<int> tiles;
  for (const auto& t : split(a.tiles)) tiles.push_back(int(parse_dim(t, "--tiles")));
  for (const KernelInfo* k : kernels) {
    if (k->tiles.empty()) {
      out.push_back({k->id, 0});
      continue;
    }
    for (int t : k->tiles)
      if (tiles.empty() || std::find(tiles.begin(), tiles.end(), t) != tiles.end()) out.push_back({k->id, t});
  }
  if (cuda && std::none_of(out.begin(), out.end(), [](const KernelTile& c) { return c.kernel == "cublas"; }))
    out.push_back({"cublas", 0});  // the reference curve
  if (out.empty()) throw ValidationError("nothing to measure: no kernel supports the tiles given");
  return out;
}

}  // namespace

void add_figure_options(CLI::App* cmd, FigureArgs& a) {
  cmd->add_option("--plot", a.plot, "timings, bars, roofline, occupancy, schedule or replay")->required();
  cmd->add_option("--session", a.sessions,
                  "plot this saved session instead of measuring (repeat to overlay more sessions)");
  cmd->add_option("--figure-size", a.figure_size, "WIDTHxHEIGHT of the PNG (320..8192 a side)")
      ->capture_default_str();
  cmd->add_option("--theme", a.theme, "dark or light")->capture_default_str();
  cmd->add_option("--title", a.title, "the figure's title (default: what it shows)");
  cmd->add_option("--y", a.y, "timings: flops, time or both")->capture_default_str();
  cmd->add_option(
      "--gpu", a.gpu,
      "THEORETICAL figures for a catalog GPU (t4, a100, l4, rtx4090, h100): the occupancy plot and "
      "the wave marks of a session measured without a GPU");
  cmd->add_option("--out-dir", a.out_dir, "folder for the PNG, CSV and JSON")->capture_default_str();
  cmd->add_option("--session-out", a.session_out, "also write the points measured as a session");
  cmd->add_option("--gl", a.gl, "offscreen OpenGL: auto (EGL device, else an X display), egl or x11")
      ->capture_default_str();
  cmd->add_option("--sizes", a.sizes, "measure a sweep first: N, FROM:TO:STEP or FROM:TO:xF (as for bench)");
  cmd->add_option("--fix-m", a.fix_m, "sweep with M fixed (N = K = each size)");
  cmd->add_option("--fix-k", a.fix_k, "sweep with K fixed (M = N = each size)");
  cmd->add_option("--ragged", a.ragged, "sweep: also every size + this offset (1..1024)");
  cmd->add_option("--kernels", a.kernels,
                  "kernels to measure, comma-separated or all (default: the problem's for a sweep, all for "
                  "the ladder and the roofline)");
  cmd->add_option("--tiles", a.tiles, "only these tile values");
  cmd->add_option("--min-time", a.min_time,
                  "bench policy: seconds of kernel time per point (default: 0.5 on a GPU, 0.05 on the CPU)");
  cmd->add_option("--max-time", a.max_time, "bench policy: seconds per point at most (default: 10)");
  cmd->add_option("--max-samples", a.max_samples,
                  "bench policy: samples per point at most (default: 100000 on a GPU, 100 on the CPU)");
  cmd->add_flag("--quick", a.quick, "measure with the window's quick policy instead of bench");
  cmd->add_option("--times", a.times,
                  "replay: the moments shown, after the first block start: 120 or 120us, 500ns, 1.5ms, 50% "
                  "(default: the start of each wave from the occupancy arithmetic, and the end)");
  cmd->add_flag("--webp", a.webp, "replay: also an animated WebP of the whole launch beside the PNG");
  cmd->add_option("--frames", a.frames, "replay: frames of the WebP, 2..600 (default 60)");
  add_engine_option(cmd, a.engine);
  cmd->add_option("--backend", a.backend, "auto (CUDA if a GPU is present), cuda or cpu")
      ->capture_default_str();
  cmd->add_option("--kernel", a.kernel, "the configuration highlighted (see `tilescope list`)")
      ->capture_default_str();
  cmd->add_option("--tile", a.tile, "its tile (default: the kernel's default)");
  cmd->add_option("--size", a.size, "M = N = K of the problem (default 1024; 256 on the CPU backend)");
  cmd->add_option("--m", a.m, "rows of A and C");
  cmd->add_option("--n", a.n, "columns of B and C");
  cmd->add_option("--k", a.k, "columns of A, rows of B");
  cmd->add_option("--input", a.input, "random, symmetric, identity, ones or ramp")->capture_default_str();
  cmd->add_option("--seed", a.seed, "seed of the random inputs")->capture_default_str();
}

int cmd_figure(FigureArgs& a, const CLI::App& cmd) {
  a.kernel_given = cmd.count("--kernel") > 0 || cmd.count("--tile") > 0;
  a.shape_given = cmd.count("--size") + cmd.count("--m") + cmd.count("--n") + cmd.count("--k") > 0;
  // [SECTION] Everything typed is checked before a device is opened or anything is measured.
  const PlotKind plot = parse_plot_kind(a.plot);
  const FigureTheme theme = parse_figure_theme(a.theme);
  if (a.figure_size == "2x" || a.figure_size == "3x")
    throw ValidationError(
        "--figure-size " + a.figure_size +
        " is relative to a plot on screen (the window's Export figure); give WIDTHxHEIGHT here");
  const FigureSize size = parse_figure_size(a.figure_size, {});
  const TimingsY y = parse_timings_y(a.y);
  if (!a.gpu.empty()) find_gpu(a.gpu);
  const gfx::GlChoice gl = [&] {
    try {
      return gfx::parse_gl_choice(a.gl);
    } catch (const std::invalid_argument& e) {
      throw ValidationError(e.what());
    }
  }();
  // The outputs, as every command checks them (files.hpp): the folder (made only when the figure is written,
  // so a refusal below leaves nothing behind) and the session file, before anything is measured.
  check_output_folder(a.out_dir, "--out-dir", false);
  check_output_path(a.session_out, Replace::Never, "--session-out", false);  // figure has no --force
  if (a.sessions.size() > 1 + SessionSet::kMaxOverlays) {
    std::string given;
    for (const auto& f : a.sessions) given += "\n  " + f;
    throw ValidationError("figure takes at most " + std::to_string(1 + SessionSet::kMaxOverlays) +
                          " --session files (the first plotted, " + std::to_string(SessionSet::kMaxOverlays) +
                          " overlaid on it); " + std::to_string(a.sessions.size()) + " were given:" + given);
  }
  const bool sweep = !a.sizes.empty();
  if (!a.fix_m.empty() && !a.fix_k.empty()) throw ValidationError("give at most one of --fix-m and --fix-k");
  if (!sweep && (!a.fix_m.empty() || !a.fix_k.empty() || !a.ragged.empty()))
    throw ValidationError("--fix-m, --fix-k and --ragged go with --sizes");
  if (!a.sessions.empty() && (sweep || !a.session_out.empty()))
    throw ValidationError("--session plots saved points: it does not go with --sizes or --session-out");
  if (!a.sessions.empty() &&
      (plot == PlotKind::Occupancy || plot == PlotKind::Schedule || plot == PlotKind::Replay))
    throw ValidationError(std::string("--plot ") + to_string(plot) +
                          " is not drawn from a session (give the "
                          "problem options instead)");
  // The replay's options, checked as typed (times against the launch once it is traced).
  std::vector<ReplayTimeArg> replay_times;
  int frames = kDefaultReplayFrames;
  const bool times_given = cmd.count("--times") > 0, frames_given = cmd.count("--frames") > 0;
  if (plot != PlotKind::Replay && (times_given || frames_given || a.webp))
    throw ValidationError("--times, --frames and --webp go with --plot replay");
  if (times_given) replay_times = parse_replay_times(a.times, "--times");
  if (frames_given) {
    if (!a.webp) throw ValidationError("--frames is the animated WebP's frame count: give --webp too");
    frames = parse_replay_frames(a.frames, "--frames");
  }
  if (plot == PlotKind::Timings && a.sessions.empty() && !sweep)
    throw ValidationError("--plot timings needs points along a size: a sweep (--sizes) or --session FILE");
  // The backend's bench policy (a GPU's, or the CPU's, which a shared CPU can meet) with what was given over
  // it; checked here, before any device is opened.
  auto policy_for = [&a](MeasurePolicy p) {
    if (!a.min_time.empty()) p.min_seconds = parse_positive(a.min_time, "--min-time");
    if (!a.max_time.empty()) p.max_seconds = parse_positive(a.max_time, "--max-time");
    if (!a.max_samples.empty())
      p.max_samples = int(std::min<int64_t>(parse_dim(a.max_samples, "--max-samples"), 1000000));
    p.min_samples = std::min(p.min_samples, p.max_samples);
    validate_policy(p);
    return p;
  };
  MeasurePolicy policy = policy_for(a.backend == "cpu" ? MeasurePolicy::cpu_bench() : MeasurePolicy::bench());
  const std::vector<KernelInfo> registry = builtin_kernel_infos();

  // [SECTION] The points: a saved session, or measured now.
  ui::AppState st;
  st.timings_y = y;
  st.marks_gpu = a.gpu.empty() ? "h100" : a.gpu;
  ProblemSpec at;
  std::shared_ptr<Backend> backend;
  if (!a.sessions.empty()) {
    for (size_t i = 0; i < a.sessions.size(); ++i) {
      Session s = load_session(a.sessions[i]);
      if (i == 0)
        st.sessions.current() = std::move(s);
      else
        st.sessions.open(std::move(s));
    }
    const Session& cur = st.sessions.current();
    if (cur.records.empty()) throw ValidationError("session " + a.sessions[0] + " holds no points");
    at = cur.records.back().spec;  // the newest point, unless the options name another problem
    if (a.kernel_given || a.shape_given || cmd.count("--input")) {
      const ProblemSpec given = problem_of(a, registry, cur.device.backend == "cpu");
      if (a.kernel_given) {
        at.kernel = given.kernel;
        at.tile = given.tile;
      }
      if (a.shape_given) {
        at.m = given.m;
        at.n = given.n;
        at.k = given.k;
      }
      if (cmd.count("--input")) at.input = given.input;
    }
    // The plots read the device from the session (AppState::device()), and the built-in registry through the
    // CPU backend, which opens no device.
    backend = make_backend(BackendChoice::Cpu, nullptr);
  } else {
    std::string note;
    backend = open_backend(a.backend, &note, a.engine, cmd.count("--backend") > 0);
    if (!note.empty()) std::fprintf(stderr, "tilescope: %s\n", note.c_str());
    const bool cuda = backend->kind() == "cuda";
    at = problem_of(a, registry, !cuda);
    st.sessions.current() = Session::for_device(backend->device_info());
    std::vector<ProblemSpec> points;
    if ((plot == PlotKind::Schedule || plot == PlotKind::Replay) && !cuda)
      throw ValidationError(std::string("--plot ") + to_string(plot) +
                            " needs a GPU: the CPU backend has no SMs to trace");
    if (sweep) {
      SweepSpec sp;
      sp.sizes = parse_sizes(a.sizes);
      if (!a.fix_m.empty()) {
        sp.shape = SweepShape::FixedM;
        sp.fixed = parse_dim(a.fix_m, "--fix-m");
      } else if (!a.fix_k.empty()) {
        sp.shape = SweepShape::FixedK;
        sp.fixed = parse_dim(a.fix_k, "--fix-k");
      }
      if (!a.ragged.empty()) {
        sp.ragged = int(parse_dim(a.ragged, "--ragged"));
        if (sp.ragged > 1024) throw ValidationError("--ragged = " + a.ragged + " is above 1024");
      }
      sp.configs = configs_of(a, registry, at, cuda, false);
      sp.input = at.input;
      sp.seed = at.seed;
      points = expand_sweep(sp);
      // The highlighted configuration at the swept size nearest the problem's N (the largest by default).
      const std::vector<int64_t> all = sp.all_sizes();
      int64_t pick = all.back();
      if (a.shape_given)
        for (int64_t v : all)
          if (std::llabs(v - at.n) < std::llabs(pick - at.n)) pick = v;
      KernelTile c{at.kernel, at.tile};
      if (std::find(sp.configs.begin(), sp.configs.end(), c) == sp.configs.end()) c = sp.configs.front();
      at = sp.problem(pick, c);
      st.sweep = sp;
    } else if (plot == PlotKind::Bars || plot == PlotKind::Roofline) {
      for (const auto& c : configs_of(a, registry, at, cuda, true)) {
        ProblemSpec p = at;
        p.kernel = c.kernel;
        p.tile = c.tile;
        points.push_back(p);
      }
    }
    policy = a.quick ? backend->default_policy() : policy_for(backend->bench_policy());
    if (!points.empty()) {
      validate_sweep(*backend, points, policy);  // every refusal before anything is measured
      CancelToken none;
      if (plot == PlotKind::Roofline) {
        const BandwidthResult bw = backend->measure_bandwidth(none);
        st.sessions.current().dram_gbs = bw.gbs;
        st.bandwidth = bw;
        std::fprintf(stderr, "tilescope figure: DRAM bandwidth %.0f GB/s (%s)\n", bw.gbs, bw.method.c_str());
      }
      const int done =
          run_sweep(*backend, points, policy, none, [&](const SweepPointResult& p, int n, int total) {
            if (p.result) st.sessions.current().add(*p.result);
            std::fprintf(
                stderr, "[%d/%d] %s %lldx%lldx%lld: %s\n", n, total,
                KernelTile{p.spec.kernel, p.spec.tile}.label().c_str(), (long long)p.spec.m,
                (long long)p.spec.n, (long long)p.spec.k,
                p.result ? (std::to_string(p.result->median_ms()) + " ms").c_str() : p.error.c_str());
          });
      std::fprintf(stderr, "tilescope figure: %d points measured (%s)\n", done, policy.name.c_str());
    }
    if (plot == PlotKind::Schedule || plot == PlotKind::Replay ||
        (plot == PlotKind::Occupancy && cuda && a.gpu.empty())) {
      // One run of the problem with the profile (occupancy of every tile, one traced launch).
      RunRequest req;
      req.spec = at;
      req.profile = true;
      backend->validate(req, !a.tile.empty());
      RunQueue queue(backend);
      RunOutcome o = queue.wait(queue.submit(req));
      if (!o.result) {
        std::fprintf(stderr, "tilescope: %s\n", o.error.c_str());
        return o.bad_input ? kExitUsage : kExitFailed;
      }
      st.sessions.current().add(*o.result);
      st.result = std::move(*o.result);
    }
    if (!a.session_out.empty()) {
      save_session(a.session_out, st.sessions.current(), false);
      std::fprintf(stderr, "wrote %s (%zu points)\n", a.session_out.c_str(),
                   st.sessions.current().records.size());
    }
  }
  st.backend = backend.get();
  if (!a.gpu.empty() && plot == PlotKind::Occupancy) st.catalog_gpu = true;  // THEORETICAL, as asked
  st.settings.spec = at;
  st.settings.square = at.m == at.n && at.n == at.k;
  st.plot_at = at;
  ++st.sessions_serial;

  // [SECTION] The figure, drawn by the window's own plotting code.
  ui::FigureRequest req;
  req.plot = plot;
  req.size = size;
  req.scale = std::clamp(std::min(size.width / 1280.0f, size.height / 720.0f), 0.75f, 4.0f);
  req.theme = theme;
  req.title = a.title;
  req.replay_times = replay_times;
  req.webp = a.webp;
  req.frames = frames;
  ui::FigureHost host(gl, backend ? backend->cuda_device() : -1);  // gfx::DisplayError: no offscreen GL
  std::fprintf(stderr, "tilescope figure: OpenGL: %s\n", host.gl_note().c_str());
  const ui::FigureJob job = ui::figure_job(st, req);
  const ui::FigureWritten w = ui::write_figure(job, a.out_dir);
  std::printf("wrote %s (%d x %d), %s and %s\n", w.paths.png.string().c_str(), size.width, size.height,
              w.paths.csv.filename().string().c_str(), w.paths.json.filename().string().c_str());
  if (job.animation)
    std::printf("wrote %s (%d frames of %d x %d)\n", w.paths.webp.string().c_str(), w.frames,
                job.animation->size.width, job.animation->size.height);
  return kExitOk;
}

}  // namespace ts::cli
