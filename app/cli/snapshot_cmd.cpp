#include "cli/snapshot_cmd.hpp"

#include <array>
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
