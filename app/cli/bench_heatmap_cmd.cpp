#include "cli/bench_heatmap_cmd.hpp"

#include <cstdio>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli/window_commands.hpp"
#include "hosts/heatmap_bench.hpp"
#include "core/engine/problem.hpp"
#include "core/engine/sweep.hpp"

namespace ts::cli {

void add_bench_heatmap_options(CLI::App* cmd, HeatmapBenchArgs& a) {
  add_problem_options(cmd, a.problem);
  cmd->add_option("--view", a.view, "each heatmap's view size in values (N x N)")->capture_default_str();
  cmd->add_option("--repeats", a.repeats, "timed refreshes per path")->capture_default_str();
  cmd->add_option("--frame-seconds", a.frame_seconds, "seconds of GUI frames with Repeat on (0: skip)")
      ->capture_default_str();
  cmd->add_option("--gl", a.gl, "offscreen OpenGL: auto, egl or x11")->capture_default_str();
  cmd->add_option("--saves", a.saves,
                  "with --kernel-file: also time this many saves of (a copy of) the kernel file to its new "
                  "heatmaps (alternately written by another program and saved from the window's editor)")
      ->capture_default_str();
  cmd->add_option("--commits", a.commits,
                  "also time this many size commits (slider let go -> new heatmaps and Result drawn)")
      ->capture_default_str();
  cmd->add_option("--sweep", a.sweep,
                  "instead of Repeat: frames while the window's sweep runs over these sizes (as for bench "
                  "--sizes, square)");
  cmd->add_option("--sweep-kernels", a.sweep_kernels, "the sweep's kernels, each at every tile it has")
      ->capture_default_str();
  cmd->add_flag("--sweep-quick", a.sweep_quick, "the sweep with the quick policy instead of bench");
  cmd->add_option("--sweep-limit", a.sweep_limit, "seconds before the sweep is cancelled")
      ->capture_default_str();
  cmd->add_option("--sweep-min-time", a.sweep_min_time,
                  "the sweep's bench policy: seconds per point at least")
      ->capture_default_str();
  cmd->add_option("--sweep-max-time", a.sweep_max_time, "the sweep's bench policy: seconds per point at most")
      ->capture_default_str();
  cmd->add_option("--sweep-session-out", a.sweep_session_out,
                  "write the window's session after the sweep (for tilescope figure --session)");
  cmd->add_option("--format", a.format, "md or json")->capture_default_str();
  cmd->add_option("--out", a.out, "write the report here instead of standard output");
  cmd->add_flag("--force", a.force, "replace an existing --out file (a regular file only)");
}

int cmd_bench_heatmap(HeatmapBenchArgs& a, const CLI::App& cmd) {
  (void)cmd;
  ts::ui::HeatmapBenchOptions ho;
  ho.gl = parse_gl_choice_or_usage(a.gl);
  // The outputs before a backend is opened or a kernel file built.
  ts::check_output_path(a.out, replace_if(a.force), "--out");
  if (!a.sweep.empty())
    ts::check_output_path(a.sweep_session_out, ts::Replace::Never, "--sweep-session-out", false);
  std::string note;
  if (a.problem.size.empty() && a.problem.m.empty()) a.problem.size = "4096";
  if ((a.problem.kernel.empty() || a.problem.kernel == "tiled") && a.problem.file.file.empty() &&
      a.problem.tile.empty())
    a.problem.tile = "32";
  ho.backend = open_backend(a.problem.backend, &note, a.problem.engine, cmd.count("--backend") > 0);
  if (!note.empty()) std::fprintf(stderr, "tilescope: %s\n", note.c_str());
  ho.spec = build_request(a.problem, *ho.backend).spec;
  ho.view = int(ts::parse_dim(a.view, "--view"));
  if (ho.view > 8192) throw ts::ValidationError("--view = " + a.view + " is above 8192");
  ho.repeats = int(ts::parse_dim(a.repeats, "--repeats"));
  ho.frame_seconds = means_zero(a.frame_seconds) ? 0.0 : parse_positive(a.frame_seconds, "--frame-seconds");
  ho.commits = means_zero(a.commits) ? 0 : int(ts::parse_dim(a.commits, "--commits"));
  if (ho.commits > 1000) throw ts::ValidationError("--commits = " + a.commits + " is above 1000");
  ho.saves = means_zero(a.saves) ? 0 : int(ts::parse_dim(a.saves, "--saves"));
  if (ho.saves > 100) throw ts::ValidationError("--saves = " + a.saves + " is above 100");
  if (ho.saves > 0 && a.problem.file.file.empty()) throw ts::ValidationError("--saves needs --kernel-file");
  ho.kernel_file = a.problem.file.file;
  if (!a.sweep.empty()) {
    ts::SweepSpec sw;
    sw.sizes = ts::parse_sizes(a.sweep);
    std::stringstream ss(a.sweep_kernels);
    const std::vector<ts::KernelInfo> registry = ho.backend->kernels();  // a copy: user kernels may join
    for (std::string name; std::getline(ss, name, ',');) {
      const ts::KernelInfo* k = ts::find_kernel(registry, name);
      if (!k) throw ts::ValidationError("--sweep-kernels: unknown kernel '" + name + "'");
      for (int t : k->tiles.empty() ? std::vector<int>{0} : k->tiles) sw.configs.push_back({k->id, t});
    }
    ts::expand_sweep(sw);  // the point limit
    ho.sweep = sw;
    ho.sweep_quick = a.sweep_quick;
    ho.sweep_limit_s = parse_positive(a.sweep_limit, "--sweep-limit");
    ho.sweep_min_s = parse_positive(a.sweep_min_time, "--sweep-min-time");
    ho.sweep_max_s = parse_positive(a.sweep_max_time, "--sweep-max-time");
    ho.sweep_session_out = a.sweep_session_out;
  }
  if (a.format != "md" && a.format != "json")
    throw ts::ValidationError("bench heatmap --format '" + a.format + "' is not one of md, json");
  const auto r = ts::ui::run_heatmap_bench(ho);
  const std::string text = ts::ui::format_heatmap_bench(r, ho, a.format);
  write_text_output(a.out, text, a.force);
  return kExitOk;
}

}  // namespace ts::cli
