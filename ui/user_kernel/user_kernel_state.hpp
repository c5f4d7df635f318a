#pragma once
// [SECTION] A person's own kernel in the window: what the Your kernel and Kernel source panels show, and the
// requests they (and File > Open kernel, a file dropped on the window, `tilescope --kernel-file`) make. The
// controller (user_kernel_controller.hpp) reads and watches the file, builds and registers kernels, and runs
// compute-sanitizer, off the UI thread; panels only read and edit this state.
#include <cstdint>
#include <string>
#include <vector>

#include "core/user_kernel/kernel_source.hpp"
#include "core/user_kernel/nvrtc_log.hpp"
#include "core/engine/occupancy.hpp"
#include "core/user_kernel/user_kernel.hpp"

namespace ts::ui {

// One tile's build, for the panel's table.
struct TileBuild {
  int tile = 0;
  bool ok = false;
  std::string error;  // why there is no build at this tile
  PtxasResources res;
  int threads = 0;
  int64_t dynamic_smem = 0;
  bool occupancy_ok = false;
  OccupancyReport occupancy;  // theoretical, on the GPU the panel shows
  OccupancyInputs inputs;     // what that arithmetic took (the Occupancy panel's calculator starts from it)
};

struct SanitizerView {
  std::string tool, summary, output, problem, shape;
  bool ran = false;
  int issues = -1;
  double seconds = 0;
};

struct UserKernelUi {
  // What the person asks of their kernel are typed requests (ui/requests.hpp: rq::OpenKernel ...
  // rq::SanitizeKernel), taken by the controller.
  std::string gpu_choice;  // the GPU the resource table is for ("" the device, else a catalog id)

  // [SECTION] The file and what was understood (written by the controller).
  bool active = false;  // a file is open
  std::string path, label;
  bool from_python = false;
  int first_line = 1;                // of the CUDA source in the file (a .py file's string)
  std::vector<std::string> kernels;  // the file's __global__ functions
  std::string kernel;                // the one shown
  std::vector<KernelParam> params;   // its parameters (the form's rows)
  std::vector<std::string> symbols;  // numeric macros and constants the tile may bind
  UserKernelSpec form;               // what the form edits
  bool form_applied = false;         // the person corrected the proposal (kept across saves of the file)
  bool square_only = false;
  std::string problem;             // why it cannot run as it is ("" when it can)
  std::vector<std::string> notes;  // guesses and what was left out for NVRTC
  std::string id;                  // registry id of the build in use ("" none yet)
  uint64_t version = 0;            // of the build in use
  std::string watch;               // the watcher's state in words
  bool file_missing = false;

  // [SECTION] The build.
  enum class Build { None, Compiling, Ok, Failed };
  Build build = Build::None;
  std::string build_message;              // "compiled in 0.12 s for sm_90", the errors' summary
  std::vector<CompileDiagnostic> errors;  // with lines of the file
  std::string log, ptx;                   // of the last build tried
  int arch = 90;
  std::string gpu_name;          // the GPU of the resource table
  std::vector<TileBuild> tiles;  // every tile value's build (filled after the current one; kJobBuildTiles)

  // [SECTION] The editor.
  std::string editor_text;  // the file as loaded; the editor takes it when editor_serial changes
  uint64_t editor_serial = 0;
  std::string editor_buffer;    // the editor's text, handed over with save_editor
  bool editor_dirty = false;    // unsaved edits (set by the editor panel)
  bool editable = true;         // false above kMaxEditorBytes: edit it in your own editor
  bool editor_focused = false;  // the editor has the keyboard (Ctrl+S saves the kernel, not C)
  int jump_to_line = 0;         // the editor shows and selects this line (1-based), once

  // [SECTION] compute-sanitizer.
  std::vector<SanitizerView> reports;  // of the last run (kJobSanitize while one runs)

  // [SECTION] Timestamps (ImGui time, s) of the last change, for the save -> new heatmap figure.
  double saved_at = 0;  // the file changed (an editor save, or when the watcher saw it)
  double built_at = 0;  // its build was registered and a run requested
};

inline constexpr size_t kMaxEditorBytes = 1 << 20;  // larger sources are shown, not edited, in the window

}  // namespace ts::ui
