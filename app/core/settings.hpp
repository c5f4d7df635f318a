#pragma once
// [SECTION] Where TileScope keeps things, what it remembers between sessions, and JSON forms of results.
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "backend.hpp"
#include "problem.hpp"
#include "view_settings.hpp"

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

struct Settings {
  ProblemSpec spec;
  bool square = true;
  bool auto_run = true;
  bool memcheck_new_builds = true;  // a person's kernel: memcheck before each new build's first launch
  std::string export_dir;           // empty: default_export_dir()
  HeatmapSettings matrices;         // A, B, C
  HeatmapSettings error{"", Reduce::AbsMax, RangeMode::Symmetric, -1, 1};  // C - reference: signed, diverging
  ViewSettings view;  // the window: size and place, font, theme, which panels are shown
};

nlohmann::json to_json(const Settings& s);
// Lenient: entries of the wrong type or out of range fall back to `defaults` and are reported in `warnings`
// (unknown keys are skipped quietly, for settings written by a newer version).
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

}  // namespace ts
