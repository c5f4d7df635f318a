#include "settings.hpp"

#include <cmath>
#include <functional>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>

namespace ts {

namespace fs = std::filesystem;

namespace {
fs::path home() {
  const char* h = std::getenv("HOME");
  return h && *h ? fs::path(h) : fs::temp_directory_path();
}
}  // namespace

fs::path config_dir() {
  const char* x = std::getenv("XDG_CONFIG_HOME");
  fs::path base = (x && *x) ? fs::path(x) : home() / ".config";
  return base / "tilescope";
}

fs::path default_export_dir() {
  const char* x = std::getenv("XDG_PICTURES_DIR");
  fs::path base = (x && *x) ? fs::path(x) : home() / "Pictures";
  return base / "TileScope";
}

fs::path unique_export_path(const fs::path& dir, const std::string& prefix, const std::string& ext) {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  localtime_r(&t, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
  fs::path p = dir / (prefix + "-" + stamp + "." + ext);
  for (int i = 2; fs::exists(p); ++i) p = dir / (prefix + "-" + stamp + "-" + std::to_string(i) + "." + ext);
  return p;
}

const char* to_string(Reduce r) {
  switch (r) {
    case Reduce::Mean:
      return "mean";
    case Reduce::Min:
      return "min";
    case Reduce::Max:
      return "max";
    case Reduce::AbsMax:
      return "absmax";
  }
  return "mean";
}

const char* to_string(RangeMode r) {
  switch (r) {
    case RangeMode::Auto:
      return "auto";
    case RangeMode::Symmetric:
      return "symmetric";
    case RangeMode::Manual:
      return "manual";
  }
  return "auto";
}

namespace {
nlohmann::json heatmap_json(const HeatmapSettings& h) {
  return {{"colormap", h.colormap},
          {"reduce", to_string(h.reduce)},
          {"range", to_string(h.range)},
          {"lo", h.lo},
          {"hi", h.hi}};
}

void heatmap_from_json(const nlohmann::json& j, HeatmapSettings& h, const std::string& key,
                       const std::function<void(const std::string&)>& warn) {
  if (!j.is_object()) {
    warn("ignored invalid " + key);
    return;
  }
  if (j.contains("colormap") && j["colormap"].is_string()) h.colormap = j["colormap"].get<std::string>();
  if (j.contains("reduce")) {
    bool ok = false;
    for (Reduce r : {Reduce::Mean, Reduce::Min, Reduce::Max, Reduce::AbsMax})
      if (j["reduce"] == to_string(r)) h.reduce = r, ok = true;
    if (!ok) warn("ignored invalid " + key + ".reduce = " + j["reduce"].dump());
  }
  if (j.contains("range")) {
    bool ok = false;
    for (RangeMode r : {RangeMode::Auto, RangeMode::Symmetric, RangeMode::Manual})
      if (j["range"] == to_string(r)) h.range = r, ok = true;
    if (!ok) warn("ignored invalid " + key + ".range = " + j["range"].dump());
  }
  for (auto [name, field] : {std::pair<const char*, float*>{"lo", &h.lo}, {"hi", &h.hi}})
    if (j.contains(name)) {
      if (j[name].is_number() && std::isfinite(j[name].get<double>()))
        *field = j[name].get<float>();
      else
        warn("ignored invalid " + key + "." + name + " = " + j[name].dump());
    }
}
}  // namespace

nlohmann::json to_json(const Settings& s) {
  return {{"m", s.spec.m},
          {"n", s.spec.n},
          {"k", s.spec.k},
          {"kernel", s.spec.kernel},
          {"tile", s.spec.tile},
          {"input", to_string(s.spec.input)},
          {"seed", s.spec.seed},
          {"square", s.square},
          {"auto_run", s.auto_run},
          {"export_dir", s.export_dir},
          {"heatmaps", heatmap_json(s.matrices)},
          {"error_map", heatmap_json(s.error)},
          {"view", to_json(s.view)}};
}

Settings settings_from_json(const nlohmann::json& j, std::string* warnings) {
  Settings s;
  auto warn = [&](const std::string& w) {
    if (warnings) *warnings += (warnings->empty() ? "" : "; ") + w;
  };
  if (!j.is_object()) {
    warn("settings file is not a JSON object; using defaults");
    return s;
  }
  auto dim = [&](const char* key, int64_t& out) {
    if (!j.contains(key)) return;
    const auto& v = j[key];
    if (v.is_number_integer() && v.get<int64_t>() >= 1 && v.get<int64_t>() <= kMaxDim)
      out = v.get<int64_t>();
    else
      warn(std::string("ignored invalid ") + key + " = " + v.dump());
  };
  dim("m", s.spec.m);
  dim("n", s.spec.n);
  dim("k", s.spec.k);
  if (j.contains("kernel") && j["kernel"].is_string()) s.spec.kernel = j["kernel"].get<std::string>();
  if (j.contains("tile")) {
    if (j["tile"].is_number_integer())
      s.spec.tile = j["tile"].get<int>();
    else
      warn("ignored invalid tile = " + j["tile"].dump());
  }
  if (j.contains("input")) {
    try {
      s.spec.input = parse_input_kind(j["input"].get<std::string>());
    } catch (const std::exception&) {
      warn("ignored invalid input = " + j["input"].dump());
    }
  }
  if (j.contains("seed") && j["seed"].is_number_unsigned()) s.spec.seed = j["seed"].get<uint64_t>();
  if (j.contains("square") && j["square"].is_boolean()) s.square = j["square"].get<bool>();
  if (j.contains("auto_run") && j["auto_run"].is_boolean()) s.auto_run = j["auto_run"].get<bool>();
  if (j.contains("export_dir") && j["export_dir"].is_string())
    s.export_dir = j["export_dir"].get<std::string>();
  if (j.contains("heatmaps")) heatmap_from_json(j["heatmaps"], s.matrices, "heatmaps", warn);
  if (j.contains("error_map")) heatmap_from_json(j["error_map"], s.error, "error_map", warn);
  if (j.contains("view")) s.view = view_settings_from_json(j["view"], warnings);
  return s;
}

Settings load_settings(const fs::path& file, std::string* warnings) {
  std::ifstream f(file);
  if (!f) return Settings{};
  try {
    return settings_from_json(nlohmann::json::parse(f), warnings);
  } catch (const std::exception& e) {
    if (warnings) *warnings += "could not read " + file.string() + " (" + e.what() + "); using defaults";
    return Settings{};
  }
}

void save_settings(const fs::path& file, const Settings& s) {
  fs::create_directories(file.parent_path());
  fs::path tmp = file;
  tmp += ".part";
  {
    std::ofstream f(tmp, std::ios::trunc);
    f << to_json(s).dump(2) << "\n";
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, file);
}

nlohmann::json result_to_json(const RunResult& r) {
  return {{"kernel", r.spec.kernel},
          {"tile", r.spec.tile},
          {"m", r.spec.m},
          {"n", r.spec.n},
          {"k", r.spec.k},
          {"input", to_string(r.spec.input)},
          {"seed", r.spec.seed},
          {"backend", r.backend},
          {"device", r.device},
          {"reference", r.reference},
          {"median_ms", r.median_ms},
          {"samples", r.times_ms.size()},
          {"tflops", r.tflops},
          {"max_abs_err", r.error.max_abs_err},
          {"max_rel_err", r.error.max_rel_err},
          {"tolerance", r.error.tolerance},
          {"passed", r.error.passed},
          {"policy", r.policy},
          {"timed", r.timed},
          {"times_ms", r.times_ms},
          {"p25_ms", r.stats.p25},
          {"p75_ms", r.stats.p75},
          {"iqr_ms", r.stats.p75 - r.stats.p25},
          {"min_ms", r.stats.min},
          {"noise", r.noise},
          {"stop", r.stop},
          {"sm_clock_available", r.clock.available},
          {"sm_clock_median_mhz", r.clock.median_mhz},
          {"sm_clock_min_mhz", r.clock.min_mhz},
          {"throttled", r.clock.throttled},
          {"throttle_reasons", r.clock.throttle_reasons},
          {"bad_elements", r.error.bad_elements},
          {"worst_row", r.error.worst_row},
          {"worst_col", r.error.worst_col},
          {"note", r.note},
          {"date", r.date}};
}

}  // namespace ts
