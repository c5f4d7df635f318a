#pragma once
// [SECTION] `tilescope bench heatmap`: how fast the heatmaps refresh from GPU memory (CUDA-GL interop against
// the host fallback and a full host round trip), and the GUI's frame times while the kernel re-runs
// continuously.
#include <memory>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "hosts/gui.hpp"
#include "gfx/headless.hpp"

namespace ts::ui {

struct HeatmapBenchOptions {
  std::shared_ptr<Backend> backend;
  ProblemSpec spec;           // the problem whose A, B, C are shown
  int view = 1024;            // each heatmap's view: view x view values
  int repeats = 50;           // timed refreshes per path
  double frame_seconds = 10;  // GUI frame-time measurement (0: skip)
  int commits = 0;            // > 0: time this many commits of a new size to the new heatmaps and Result
  int saves = 0;              // > 0 with kernel_file: time this many saves of the kernel to its new heatmaps
  std::string kernel_file;
  gfx::GlChoice gl = gfx::GlChoice::Auto;
  // The window's sweep, frames drawn while it runs (run_frame_bench): instead of Repeat.
  std::optional<SweepSpec> sweep;
  bool sweep_quick = false;
  double sweep_min_s = 0.5, sweep_max_s = 10;
  double sweep_limit_s = 600;
  std::string sweep_session_out;
};

struct PathTiming {
  std::string name, what;
  std::vector<double> ms;  // one refresh of A, B and C together, per repeat
};

struct HeatmapBenchResult {
  std::string device, gl_context, gl_renderer, interop_why;
  std::string shared_note;  // "shared memory", or why the shared-memory path is not available
  bool interop = false;
  std::vector<PathTiming> paths;  // interop (when available), host fallback, full host round trip
  std::vector<double> frame_ms;
  std::vector<FrameBenchResult::Phases> frame_phases;
  std::vector<double> commit_ms;
  std::vector<FrameBenchResult::Save> saves;
  int runs_during_frames = 0;
  FrameBenchResult::SweepRun sweep;
  std::string frame_heatmap_state;
  // A remote engine (--engine): its command and round trip, and the bytes its link carried per refresh of the
  // three maps (host fallback: each view reduced there and sent compressed) and per commit.
  bool remote = false;
  std::string engine;
  double rtt_ms = 0;
  double refresh_bytes_in = 0, refresh_bytes_out = 0;
  double commit_bytes_in = 0, commit_bytes_out = 0;
};

HeatmapBenchResult run_heatmap_bench(const HeatmapBenchOptions& opt);
std::string format_heatmap_bench(const HeatmapBenchResult& r, const HeatmapBenchOptions& opt,
                                 const std::string& fmt);

}  // namespace ts::ui
