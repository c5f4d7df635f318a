#pragma once
// [SECTION] How the window looks and where it is: remembered between launches (the "view" object of
// settings.json). The dock layout itself lives in ImGui's imgui.ini beside it; layout_version says which
// arrangement it was built from, so a changed default replaces an old saved layout instead of mixing with it.
#include <map>
#include <string>

#include <nlohmann/json_fwd.hpp>

namespace ts {

enum class Theme { Dark, Light };
const char* to_string(Theme t);  // "dark", "light"

struct WindowGeometry {
  int x = 0, y = 0, w = 0, h = 0;  // w == 0: never saved (the first launch fits the monitor's work area)
  bool maximized = false;
};

struct ViewSettings {
  WindowGeometry window;
  float font_px = 16.0f;  // before the monitor's content scale
  Theme theme = Theme::Dark;
  std::map<std::string, bool> panels;  // window name -> shown (missing: shown)
  int layout_version = 0;              // the default arrangement the saved dock layout came from

  static constexpr float kMinFontPx = 10.0f, kMaxFontPx = 32.0f;
  bool shown(const std::string& panel) const {
    auto it = panels.find(panel);
    return it == panels.end() || it->second;
  }
};

nlohmann::json to_json(const ViewSettings& v);
// Lenient like the rest of the settings: each invalid entry keeps its default and is named in `warn`.
ViewSettings view_settings_from_json(const nlohmann::json& j, std::string* warnings);

}  // namespace ts
