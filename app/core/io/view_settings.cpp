#include "core/io/view_settings.hpp"

#include <cmath>
#include <nlohmann/json.hpp>

namespace ts {

const char* to_string(Theme t) {
  return t == Theme::Light ? "light" : "dark";
}

nlohmann::json to_json(const ViewSettings& v) {
  nlohmann::json panels = nlohmann::json::object();
  for (const auto& [name, shown] : v.panels) panels[name] = shown;
  return {{"window",
           {{"x", v.window.x},
            {"y", v.window.y},
            {"w", v.window.w},
            {"h", v.window.h},
            {"maximized", v.window.maximized}}},
          {"font_px", v.font_px},
          {"theme", to_string(v.theme)},
          {"panels", panels},
          {"layout_version", v.layout_version}};
}

ViewSettings view_settings_from_json(const nlohmann::json& j, std::string* warnings) {
  ViewSettings v;
  auto warn = [&](const std::string& w) {
    if (warnings) *warnings += (warnings->empty() ? "" : "; ") + w;
  };
  // Values are named by their type only: a nested value is never printed (it could be arbitrarily deep).
  auto kind = [](const nlohmann::json& x) { return std::string(x.type_name()); };
  if (!j.is_object()) {
    warn("ignored view settings that are a " + kind(j) + ", not an object");
    return v;
  }
  auto integer = [&](const nlohmann::json& o, const char* key, int lo, int hi, int& out,
                     const std::string& path) {
    if (!o.contains(key)) return;
    const auto& x = o[key];
    if (x.is_number_integer() && x.get<int64_t>() >= lo && x.get<int64_t>() <= hi)
      out = int(x.get<int64_t>());
    else
      warn("ignored " + path + key + " (" + (x.is_number() ? x.dump() : kind(x)) +
           ": not a whole number from " + std::to_string(lo) + " to " + std::to_string(hi) + ")");
  };
  if (j.contains("window")) {
    const auto& w = j["window"];
    if (!w.is_object()) {
      warn("ignored view.window (a " + kind(w) + ", not an object)");
    } else {
      WindowGeometry g;
      integer(w, "x", -100000, 100000, g.x, "view.window.");
      integer(w, "y", -100000, 100000, g.y, "view.window.");
      integer(w, "w", 0, 100000, g.w, "view.window.");
      integer(w, "h", 0, 100000, g.h, "view.window.");
      if (w.contains("maximized")) {
        if (w["maximized"].is_boolean())
          g.maximized = w["maximized"].get<bool>();
        else
          warn("ignored view.window.maximized (a " + kind(w["maximized"]) + ", not true or false)");
      }
      if ((g.w == 0) != (g.h == 0)) {
        warn("ignored view.window: a width without a height (or the other way round)");
        g = WindowGeometry{};
      }
      v.window = g;
    }
  }
  if (j.contains("font_px")) {
    const auto& f = j["font_px"];
    if (f.is_number() && std::isfinite(f.get<double>()) && f.get<double>() >= ViewSettings::kMinFontPx &&
        f.get<double>() <= ViewSettings::kMaxFontPx)
      v.font_px = f.get<float>();
    else
      warn("ignored view.font_px (" + (f.is_number() ? f.dump() : kind(f)) +
           ": not a size from 10 to 32 px)");
  }
  if (j.contains("theme")) {
    const auto& t = j["theme"];
    if (t == "dark")
      v.theme = Theme::Dark;
    else if (t == "light")
      v.theme = Theme::Light;
    else
      warn("ignored view.theme (" + (t.is_string() ? t.dump() : kind(t)) + ": not \"dark\" or \"light\")");
  }
  if (j.contains("panels")) {
    const auto& p = j["panels"];
    if (!p.is_object()) {
      warn("ignored view.panels (a " + kind(p) + ", not an object)");
    } else {
      for (const auto& [name, shown] : p.items()) {
        if (shown.is_boolean() && name.size() <= 64)
          v.panels[name] = shown.get<bool>();
        else
          warn("ignored view.panels entry (" + kind(shown) + ", not true or false)");
      }
    }
  }
  integer(j, "layout_version", 0, 1000000, v.layout_version, "view.");
  return v;
}

}  // namespace ts
