#include "cli/snapshot_cmd.hpp"

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli/window_commands.hpp"
#include "hosts/gui.hpp"
#include "core/engine/problem.hpp"

namespace ts::cli {

namespace {

// --zoom ROW0,COL0,ROWS,COLS: a rectangle inside C (and A, B where they are that large).
std::array<double, 4> parse_zoom(const std::string& text, const ts::ProblemSpec& s) {
  std::array<double, 4> z{};
  const std::vector<std::string> parts = ts::split_fields(text, ',');
  if (parts.size() != 4)
    throw ts::ValidationError("--zoom = '" + text + "' is not ROW0,COL0,ROWS,COLS (four whole numbers, not " +
                              std::to_string(parts.size()) + " values)");
  for (size_t i = 0; i < 4; ++i) {
    const std::string& part = parts[i];
    const bool digits =
        !part.empty() && part.size() <= 12 && part.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || (i >= 2 && std::stoll(part) < 1))
      throw ts::ValidationError("--zoom = '" + text + "': '" + part + "' is not a whole number" +
                                (i >= 2 ? " of at least 1" : ""));
    z[i] = double(std::stoll(part));
  }
  if (z[0] + z[2] > double(s.m) || z[1] + z[3] > double(s.n))
    throw ts::ValidationError("--zoom = '" + text + "' reaches outside C (" + std::to_string(s.m) + " x " +
                              std::to_string(s.n) + ")");
  return z;
}

// --feed-tile ROW,COL[,STEP[,SLICE]]: checked against the kernel's tile description at the problem's shape.
ts::ui::SnapshotOptions::FeedTile parse_feed_tile(const std::string& text, const ts::ProblemSpec& s,
                                                  const std::vector<ts::KernelInfo>& kernels) {
  std::vector<int64_t> v;
  for (const std::string& part : ts::split_fields(text, ',')) {
    char* end = nullptr;
    errno = 0;
    const long long x = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != 0 || errno != 0 || x < 0 || x > (1LL << 40))
      throw ts::ValidationError("--feed-tile = '" + text + "': '" + part +
                                "' is not a whole number from 0 (ROW,COL[,STEP[,SLICE]])");
    v.push_back(x);
  }
  if (v.size() < 2 || v.size() > 4)
    throw ts::ValidationError("--feed-tile = '" + text +
                              "' is not ROW,COL[,STEP[,SLICE]] (tile row, tile column, "
                              "k step from 0, split-K slice from 0)");
  const ts::KernelInfo* k = ts::find_kernel(kernels, s.kernel);
  const ts::TileGeometry* g = k ? k->tile_geometry(s.tile) : nullptr;
  if (!g) throw ts::ValidationError("--feed-tile: " + s.kernel + " has no tile description to draw");
  ts::ui::SnapshotOptions::FeedTile f;
  f.row = v[0];
  f.col = v[1];
  f.step = v.size() > 2 ? int(std::min<int64_t>(v[2], INT32_MAX)) : 0;
  f.slice = v.size() > 3 ? int(std::min<int64_t>(v[3], INT32_MAX)) : 0;
  const ts::FeedPlan p = ts::feeding_plan(*g, s.m, s.n, s.k, f.row, f.col, f.slice);
  if (!p.problem.empty()) throw ts::ValidationError("--feed-tile = '" + text + "': " + p.problem);
  if (f.step > 0 && f.step >= int64_t(p.steps.size()))
    throw ts::ValidationError("--feed-tile = '" + text + "': the tile is summed in " +
                              std::to_string(p.steps.size()) + " k steps (0.." +
                              std::to_string(std::max<int64_t>(0, int64_t(p.steps.size()) - 1)) + ")");
  return f;
}

}  // namespace

void add_snapshot_options(CLI::App* cmd, SnapshotArgs& a) {
  add_problem_options(cmd, a.problem);
  cmd->add_option("--out", a.out, "PNG file to write")->required();
  cmd->add_option("--width", a.width, "image width in pixels (320..8192)")->capture_default_str();
  cmd->add_option("--height", a.height, "image height in pixels (240..8192)")->capture_default_str();
  cmd->add_option("--theme", a.theme, "dark or light")->capture_default_str();
  cmd->add_option("--scale", a.scale, "content scale of the screen to imitate (0.5..4; 2 for a HiDPI screen)")
      ->capture_default_str();
  cmd->add_option("--layout-json", a.layout_json,
                  "also write the panels' and heatmaps' rectangles (for tests)");
  cmd->add_flag("--force", a.force, "replace existing --out and --layout-json files (regular files only)");
  cmd->add_option("--export-panels", a.export_panels,
                  "also export every profiler panel (PNG + CSV, as its button does) into this folder");
  cmd->add_option("--gl", a.gl, "offscreen OpenGL: auto (EGL device, else an X display), egl or x11")
      ->capture_default_str();
  cmd->add_option(
      "--session", a.session,
      "show this saved session's points in the plots (read only; another device's as an overlay)");
  cmd->add_option("--front", a.front,
                  "comma-separated panels to show in front of their tabs (e.g. Sweep,Roofline)");
  cmd->add_option("--zoom", a.zoom,
                  "heatmaps show ROW0,COL0,ROWS,COLS (e.g. 0,0,96,96 to see the tile grid)");
  cmd->add_option("--replay-at", a.replay_at,
                  "draw the traced launch's replay over C at this time: microseconds after the first block "
                  "started, or a percentage of the launch (40%); CUDA backend, a traceable kernel");
  cmd->add_option(
      "--feed-tile", a.feed_tile,
      "outline the pieces of A and B feeding tile ROW,COL of C at k step STEP (from 0) and split-K "
      "slice SLICE: ROW,COL[,STEP[,SLICE]]");
}

int cmd_snapshot(SnapshotArgs& a, const CLI::App& cmd) {
  (void)cmd;
  ts::ui::SnapshotOptions so;
  so.width = int(ts::parse_dim(a.width, "--width"));
  so.height = int(ts::parse_dim(a.height, "--height"));
  if (so.width < 320 || so.width > 8192 || so.height < 240 || so.height > 8192)
    throw ts::ValidationError("--width x --height = " + a.width + " x " + a.height +
                              " is outside 320..8192 x 240..8192");
  if (a.theme != "dark" && a.theme != "light")
    throw ts::ValidationError("--theme '" + a.theme + "' is not one of dark, light");
  so.theme = a.theme == "light" ? ts::Theme::Light : ts::Theme::Dark;
  so.scale = float(parse_positive(a.scale, "--scale"));
  if (so.scale < 0.5f || so.scale > 4.0f)
    throw ts::ValidationError("--scale = " + a.scale + " is outside 0.5..4");
  ts::check_output_path(a.out, replace_if(a.force), "--out");
  ts::check_output_path(a.layout_json, replace_if(a.force), "--layout-json");
  if (!a.export_panels.empty()) ts::check_output_folder(a.export_panels, "--export-panels", false);
  so.out_png = a.out;
  so.overwrite = a.force;
  so.layout_json = a.layout_json;
  so.backend =
      open_backend(a.problem.backend, &so.backend_note, a.problem.engine, cmd.count("--backend") > 0);
  so.request = build_request(a.problem, *so.backend);
  so.gl = parse_gl_choice_or_usage(a.gl);
  if (!a.zoom.empty()) so.zoom = parse_zoom(a.zoom, so.request.spec);
  if (!a.replay_at.empty()) {
    const bool percent = a.replay_at.size() > 1 && a.replay_at.back() == '%';
    const std::string number = percent ? a.replay_at.substr(0, a.replay_at.size() - 1) : a.replay_at;
    const double us = number == "0" ? 0.0 : parse_positive(number, "--replay-at");
    if (percent && us > 100)
      throw ts::ValidationError("--replay-at = " + a.replay_at + " is past the launch's end (100%)");
    const ts::KernelInfo* k = ts::find_kernel(*so.backend->kernel_list(), so.request.spec.kernel);
    if (so.backend->kind() != "cuda" || !k || !k->traceable)
      throw ts::ValidationError(
          "--replay-at needs a traced launch: the CUDA backend and a kernel it traces (" +
          so.request.spec.kernel + " on the " + so.backend->kind() + " backend has none)");
    if (percent)
      so.replay_at_fraction = us / 100;
    else
      so.replay_at_ns = uint64_t(us * 1e3);
  }
  if (!a.feed_tile.empty())
    so.feed = parse_feed_tile(a.feed_tile, so.request.spec, *so.backend->kernel_list());
  so.session = a.session;
  for (std::stringstream ss(a.front); ss.good();) {
    std::string p;
    std::getline(ss, p, ',');
    if (!p.empty()) so.front.push_back(p);
  }
  if (!a.export_panels.empty()) {
    ts::check_output_folder(a.export_panels, "--export-panels");  // made now if missing
    so.export_dir = a.export_panels;
  }
  const int rc = ts::ui::run_snapshot(so);
  std::printf("wrote %s (%d x %d)%s\n", a.out.c_str(), so.width, so.height,
              rc == 0 ? "" : "; the run it shows failed verification or errored");
  return rc;
}

}  // namespace ts::cli
