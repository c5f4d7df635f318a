#pragma once
// [SECTION] Where TileScope keeps things, what it remembers between sessions, and JSON forms of results.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "core/engine/backend.hpp"
#include "core/engine/problem.hpp"
#include "core/engine/sweep.hpp"
#include "core/io/view_settings.hpp"

namespace ts {

// $XDG_CONFIG_HOME/tilescope, else $HOME/.config/tilescope (created on demand; never the working directory).
std::filesystem::path config_dir();
// Default folder for screenshots: $XDG_PICTURES_DIR/TileScope, else $HOME/Pictures/TileScope.
std::filesystem::path default_export_dir();

// (Names for exports: NewNames in files.hpp.)

// How a group of heatmaps is drawn: colormap (by name; unknown names fall back to the default of the kind),
// level-of-detail reduction, colour range.
struct HeatmapSettings {
  std::string colormap;  // empty: the first map of the right kind
  Reduce reduce = Reduce::Mean;
  RangeMode range = RangeMode::Auto;
  float lo = 0, hi = 1;  // RangeMode::Manual
};

const char* to_string(Reduce r);     // "mean", "min", "max", "absmax"
const char* to_string(RangeMode r);  // "auto", "symmetric", "manual"

// Which open and save dialogs the window uses: the desktop's own (zenity or kdialog, where one is installed
// and a display is there; else the one drawn in the window), or always the one drawn in the window.
enum class FileDialogChoice { Desktop, Window };
const char* to_string(FileDialogChoice c);  // "desktop", "window"

// The Sweep panel's fields as last set (each one kept when it was valid).
struct SweepSettings {
  int64_t from = 256, to = 8192, step = 256;  // N from, to, step (1..kMaxDim)
  bool powers_of_two = false;                 // x2 instead of the step
  bool offset_on = false;                     // also every size + offset (a partial tile at every size)
  int offset = 1;                             // 1..1024
  SweepShape shape = SweepShape::Square;
  int64_t fixed = 4096;             // M (FixedM) or K (FixedK), 1..kMaxDim
  std::vector<KernelTile> configs;  // the kernels x tiles ticked (at most kMaxSweepConfigs)
  bool quick = false;               // the quick policy instead of bench
  double min_s = 0.5, max_s = 10;   // bench: seconds per point at least, at most, (0, 3600]
  static constexpr size_t kMaxSweepConfigs = 256;
  bool operator==(const SweepSettings& o) const;
  bool operator!=(const SweepSettings& o) const { return !(*this == o); }
};

// An engine the window connected to (File > Connect to engine...), remembered for the next time: its name as
// the person gave it, and the command that starts it ("ssh gpu-box tilescope serve --device 1").
struct RememberedEngine {
  std::string name, command;
  bool operator==(const RememberedEngine& o) const { return name == o.name && command == o.command; }
};
// At most this many are remembered (the most recent first); longer names and commands are refused.
inline constexpr size_t kMaxRememberedEngines = 16;
inline constexpr size_t kMaxEngineNameChars = 64, kMaxEngineCommandChars = 1024;
// Puts `e` first in `list` (once: an entry of the same command is replaced), keeping at most
// kMaxRememberedEngines. Throws ValidationError for an empty or too long command, a too long name, or a
// control character in either.
void remember_engine(std::vector<RememberedEngine>& list, RememberedEngine e);

struct Settings {
  ProblemSpec spec;
  bool square = true;
  bool auto_run = true;
  bool memcheck_new_builds = true;  // a person's kernel: memcheck before each new build's first launch
  // Every measurement of the window (its runs, sweeps and tile searches) also timed on inputs that change
  // between samples, C checked against their reference (MeasurePolicy::changing_inputs).
  bool changing_inputs = false;
  std::string export_dir;                                                  // empty: default_export_dir()
  HeatmapSettings matrices;                                                // A, B, C
  HeatmapSettings error{"", Reduce::AbsMax, RangeMode::Symmetric, -1, 1};  // C - reference: signed, diverging
  ViewSettings view;  // the window: size and place, font, theme, which panels are shown
  FileDialogChoice file_dialog = FileDialogChoice::Desktop;
  std::string kernel_file;  // a person's kernel file open when the window closed (reopened at launch)
  std::optional<SweepSettings> sweep;  // absent until the Sweep panel was drawn: its defaults for the backend
  std::vector<RememberedEngine> engines;  // File > Connect to engine's list, the most recent first
};

nlohmann::json to_json(const Settings& s);
// Lenient: entries of the wrong type or out of range fall back to `defaults` and are reported in `warnings`
// (unknown keys are skipped quietly, for settings written by a newer version). In "sweep", each invalid field
// keeps its default and is named; "sweep" absent (or not an object): no sweep settings.
Settings settings_from_json(const nlohmann::json& j, std::string* warnings, const Settings& defaults = {});
// Reads `file`: a regular file of at most 1 MiB holding JSON nested at most 64 levels deep. Absent:
// `defaults`, no warning. Anything that keeps the file from being used whole (not a regular file, unreadable,
// a symlink loop, a folder that cannot be searched, not JSON, an invalid entry) gives `defaults` for what
// could not be used, the reasons in `warnings`, and *keep = true: the file must then not be replaced at exit.
Settings load_settings(const std::filesystem::path& file, std::string* warnings, bool* keep = nullptr,
                       const Settings& defaults = {});
// Writes through the program's writer (files.hpp): replaces a regular file only. Throws std::runtime_error.
void save_settings(const std::filesystem::path& file, const Settings& s);

// The JSON object printed by `tilescope run --json`.
nlohmann::json result_to_json(const RunResult& r);
// The problem's fields (kernel, tile, m, n, k, input, seed), as every JSON TileScope writes has them: a
// session's points, the settings, `run --json`.
nlohmann::json problem_json(const ProblemSpec& s);

}  // namespace ts
