#include "cli/gl_check_cmd.hpp"
#include "cli/cli.hpp"

#include <chrono>
#include <cstdio>
#include <thread>

#include <nlohmann/json.hpp>

#include "core/engine/backend.hpp"
#include "ui/gl_health.hpp"
#include "core/engine/problem.hpp"
#include "kernels/engine/registry.hpp"
#include "gfx/headless.hpp"
#include "gfx/window.hpp"

namespace ts::cli {

void add_gl_check_options(CLI::App* cmd, GlCheckArgs& a) {
  cmd->add_option("--gl", a.gl, "offscreen OpenGL: auto (EGL device, else an X display), egl or x11")
      ->capture_default_str();
  cmd->add_option(
         "--backend", a.backend,
         "auto (CUDA if a GPU is present: the check also draws through CUDA-GL interop, as the heatmaps "
         "do), cuda or cpu (OpenGL alone)")
      ->capture_default_str();
  cmd->add_option("--watch", a.watch, "keep the context and check it again for this many seconds (0: once)")
      ->capture_default_str();
  cmd->add_option("--every", a.every, "with --watch: seconds between checks")->capture_default_str();
  cmd->add_flag("--json", a.json, "one JSON object per check");
}

int cmd_gl_check(GlCheckArgs& a, const CLI::App& cmd) {
  (void)cmd;
  gfx::GlChoice choice;
  try {
    choice = gfx::parse_gl_choice(a.gl);
  } catch (const std::invalid_argument& e) {
    throw ValidationError(e.what());
  }
  const BackendChoice backend_choice = parse_backend_choice(a.backend);
  const double watch = a.watch == "0" ? 0.0 : parse_positive(a.watch, "--watch", 86400);
  const double every = parse_positive(a.every, "--every", 3600);
  std::string note;
  ui::GlCheckHost host(choice, make_backend(backend_choice, &note));
  if (!note.empty()) std::fprintf(stderr, "tilescope: %s\n", note.c_str());
  if (!a.json)
    std::printf("OpenGL: %s; %s; heatmaps: %s\n", host.gl_note().c_str(), host.gl_renderer().c_str(),
                host.heatmap_path().c_str());
  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  const auto end = t0 + std::chrono::duration<double>(watch);
  int failed = 0, checks = 0;
  for (;;) {
    const ui::GlSelfCheck r = host.check();
    ++checks;
    failed += !r.ok;
    const double t = std::chrono::duration<double>(clock::now() - t0).count();
    if (a.json) {
      nlohmann::json j = {
          {"t_s", t},
          {"ok", r.ok},
          {"verdict", r.verdict},
          {"detail", r.detail},
          {"reset_status", gfx::to_string(r.reset)},
          {"context_lost", r.context_lost},
          {"reset_notification",
           r.robustness.known ? nlohmann::json(r.robustness.reset_notification) : nlohmann::json(nullptr)},
          {"pattern_ok", r.pattern_ok},
          {"glyphs_ok", r.glyphs_ok},
          {"interop_checked", r.interop_checked},
          {"interop_ok", r.interop_ok},
          {"heatmaps", host.heatmap_path()},
          {"ms", r.ms},
          {"gl", host.gl_note()},
          {"renderer", host.gl_renderer()}};
      std::printf("%s\n", j.dump().c_str());
    } else {
      std::printf("%8.2f s  %s  %s (%.0f ms; %s)\n", t, r.ok ? "PASS" : "FAIL", r.verdict.c_str(), r.ms,
                  r.detail.c_str());
    }
    std::fflush(stdout);
    if (r.context_lost || clock::now() >= end) break;
    std::this_thread::sleep_for(std::chrono::duration<double>(every));
  }
  if (failed > 0) {
    std::fprintf(stderr, "tilescope gl-check: %d of %d checks failed. %s\n", failed, checks,
                 ui::gl_damage_advice().c_str());
    return kExitFailed;
  }
  return 0;
}

}  // namespace ts::cli
