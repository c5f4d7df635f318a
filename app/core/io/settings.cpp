#include "core/io/settings.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/io/files.hpp"
#include "core/io/json_fields.hpp"
#include "core/io/record_fields.hpp"

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

const char* to_string(FileDialogChoice c) {
  return c == FileDialogChoice::Window ? "window" : "desktop";
}

bool SweepSettings::operator==(const SweepSettings& o) const {
  return from == o.from && to == o.to && step == o.step && powers_of_two == o.powers_of_two &&
         offset_on == o.offset_on && offset == o.offset && shape == o.shape && fixed == o.fixed &&
         configs == o.configs && quick == o.quick && min_s == o.min_s && max_s == o.max_s;
}

namespace {
nlohmann::json heatmap_json(const HeatmapSettings& h) {
  return {{"colormap", h.colormap},
          {"reduce", to_string(h.reduce)},
          {"range", to_string(h.range)},
          {"lo", h.lo},
          {"hi", h.hi}};
}

// A value as a warning shows it: scalars as written (strings cut short), containers by their size only (a
// deeply nested value is never printed, so printing can never recurse).
std::string shown(const nlohmann::json& v) {
  if (v.is_string()) {
    const std::string& t = v.get_ref<const std::string&>();
    return t.size() > 40 ? nlohmann::json(t.substr(0, 40)).dump() + "..." : v.dump();
  }
  if (v.is_array()) return "an array of " + std::to_string(v.size()) + " values";
  if (v.is_object()) return "an object of " + std::to_string(v.size()) + " entries";
  if (v.is_primitive()) return v.dump();
  return "a value of type " + std::string(v.type_name());
}

using Warn = std::function<void(const std::string&)>;

void invalid(const Warn& warn, const std::string& key, const nlohmann::json& v, const char* want) {
  warn("ignored invalid " + key + " = " + shown(v) + " (" + want + ")");
}

void string_entry(const nlohmann::json& j, const char* key, const std::string& prefix, std::string& out,
                  const Warn& warn) {
  if (!j.contains(key)) return;
  if (j[key].is_string())
    out = j[key].get<std::string>();
  else
    invalid(warn, prefix + key, j[key], "a string");
}

void bool_entry(const nlohmann::json& j, const char* key, bool& out, const Warn& warn) {
  if (!j.contains(key)) return;
  if (j[key].is_boolean())
    out = j[key].get<bool>();
  else
    invalid(warn, key, j[key], "true or false");
}

// A whole number in [lo, hi], never truncated to fit.
bool integer_in(const nlohmann::json& v, int64_t lo, int64_t hi, int64_t* out) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > uint64_t(hi)) return false;
    *out = int64_t(u);
  } else if (v.is_number_integer()) {
    *out = v.get<int64_t>();
  } else {
    return false;
  }
  return *out >= lo && *out <= hi;
}

void heatmap_from_json(const nlohmann::json& j, HeatmapSettings& h, const std::string& key,
                       const Warn& warn) {
  if (!j.is_object()) {
    invalid(warn, key, j, "an object");
    return;
  }
  string_entry(j, "colormap", key + ".", h.colormap, warn);
  if (j.contains("reduce")) {
    bool ok = false;
    for (Reduce r : {Reduce::Mean, Reduce::Min, Reduce::Max, Reduce::AbsMax})
      if (j["reduce"] == to_string(r)) h.reduce = r, ok = true;
    if (!ok) invalid(warn, key + ".reduce", j["reduce"], "mean, min, max or absmax");
  }
  if (j.contains("range")) {
    bool ok = false;
    for (RangeMode r : {RangeMode::Auto, RangeMode::Symmetric, RangeMode::Manual})
      if (j["range"] == to_string(r)) h.range = r, ok = true;
    if (!ok) invalid(warn, key + ".range", j["range"], "auto, symmetric or manual");
  }
  for (auto [name, field] : {std::pair<const char*, float*>{"lo", &h.lo}, {"hi", &h.hi}})
    if (j.contains(name)) {
      const auto& v = j[name];
      if (v.is_number() && std::isfinite(v.get<double>()) &&
          std::fabs(v.get<double>()) <= double(std::numeric_limits<float>::max()))
        *field = v.get<float>();
      else
        invalid(warn, key + "." + name, v, "a finite float32 number");
    }
}

nlohmann::json sweep_json(const SweepSettings& w) {
  nlohmann::json configs = nlohmann::json::array();
  for (const KernelTile& c : w.configs) configs.push_back({{"kernel", c.kernel}, {"tile", c.tile}});
  return {{"from", w.from},
          {"to", w.to},
          {"step", w.step},
          {"spacing", w.powers_of_two ? "x2" : "step"},
          {"offset_on", w.offset_on},
          {"offset", w.offset},
          {"shape", to_string(w.shape)},
          {"fixed", w.fixed},
          {"configs", configs},
          {"policy", w.quick ? "quick" : "bench"},
          {"min_s", w.min_s},
          {"max_s", w.max_s}};
}

// Each field that is there is checked; an invalid one keeps its default and is named ("sweep.step = 0 ...").
void sweep_from_json(const nlohmann::json& j, SweepSettings& w, const Warn& warn) {
  if (!j.is_object()) {
    invalid(warn, "sweep", j, "an object");
    return;
  }
  const std::string dims = "a whole number from 1 to " + std::to_string(kMaxDim);
  for (auto [key, field] : {std::pair<const char*, int64_t*>{"from", &w.from},
                            {"to", &w.to},
                            {"step", &w.step},
                            {"fixed", &w.fixed}}) {
    if (!j.contains(key)) continue;
    int64_t v = 0;
    if (integer_in(j[key], 1, kMaxDim, &v))
      *field = v;
    else
      invalid(warn, std::string("sweep.") + key, j[key], dims.c_str());
  }
  if (j.contains("spacing")) {
    if (j["spacing"] == "step" || j["spacing"] == "x2")
      w.powers_of_two = j["spacing"] == "x2";
    else
      invalid(warn, "sweep.spacing", j["spacing"], "step or x2");
  }
  if (j.contains("offset_on")) {
    if (j["offset_on"].is_boolean())
      w.offset_on = j["offset_on"].get<bool>();
    else
      invalid(warn, "sweep.offset_on", j["offset_on"], "true or false");
  }
  if (j.contains("offset")) {
    int64_t v = 0;
    if (integer_in(j["offset"], 1, 1024, &v))
      w.offset = int(v);
    else
      invalid(warn, "sweep.offset", j["offset"], "a whole number from 1 to 1024");
  }
  if (j.contains("shape")) {
    bool ok = false;
    for (SweepShape sh : {SweepShape::Square, SweepShape::FixedM, SweepShape::FixedK})
      if (j["shape"] == to_string(sh)) w.shape = sh, ok = true;
    if (!ok) invalid(warn, "sweep.shape", j["shape"], "square, fixed-m or fixed-k");
  }
  if (j.contains("configs")) {
    const auto& c = j["configs"];
    std::vector<KernelTile> configs;
    bool ok = c.is_array() && c.size() <= SweepSettings::kMaxSweepConfigs;
    for (size_t i = 0; ok && i < c.size(); ++i) {
      const auto& e = c[i];
      int64_t tile = 0;
      ok = e.is_object() && e.size() == 2 && e.contains("kernel") && e["kernel"].is_string() &&
           !e["kernel"].get_ref<const std::string&>().empty() &&
           e["kernel"].get_ref<const std::string&>().size() <= 200 && e.contains("tile") &&
           integer_in(e["tile"], 0, 1024, &tile);
      if (ok) configs.push_back({e["kernel"].get<std::string>(), int(tile)});
    }
    if (ok)
      w.configs = std::move(configs);
    else
      invalid(warn, "sweep.configs", c,
              ("a list of at most " + std::to_string(SweepSettings::kMaxSweepConfigs) +
               " {\"kernel\": name, \"tile\": 0..1024}")
                  .c_str());
  }
  if (j.contains("policy")) {
    if (j["policy"] == "bench" || j["policy"] == "quick")
      w.quick = j["policy"] == "quick";
    else
      invalid(warn, "sweep.policy", j["policy"], "bench or quick");
  }
  for (auto [key, field] : {std::pair<const char*, double*>{"min_s", &w.min_s}, {"max_s", &w.max_s}}) {
    if (!j.contains(key)) continue;
    const auto& v = j[key];
    if (v.is_number() && v.get<double>() > 0 && v.get<double>() <= 3600)
      *field = v.get<double>();
    else
      invalid(warn, std::string("sweep.") + key, v, "a number of seconds in (0, 3600]");
  }
}

// The deepest nesting of arrays and objects in JSON text (strings skipped), without parsing it; stops
// counting past `limit`.
int json_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}
}  // namespace

nlohmann::json to_json(const Settings& s) {
  nlohmann::json j = problem_json(s.spec);
  j.update({{"square", s.square},
            {"auto_run", s.auto_run},
            {"memcheck_new_builds", s.memcheck_new_builds},
            {"changing_inputs", s.changing_inputs},
            {"export_dir", s.export_dir},
            {"heatmaps", heatmap_json(s.matrices)},
            {"error_map", heatmap_json(s.error)},
            {"view", to_json(s.view)},
            {"file_dialog", to_string(s.file_dialog)},
            {"kernel_file", s.kernel_file},
            {"sweep", s.sweep ? sweep_json(*s.sweep) : nlohmann::json(nullptr)}});
  nlohmann::json engines = nlohmann::json::array();
  for (const RememberedEngine& e : s.engines) engines.push_back({{"name", e.name}, {"command", e.command}});
  j["engines"] = engines;
  return j;
}

void remember_engine(std::vector<RememberedEngine>& list, RememberedEngine e) {
  auto check = [](const std::string& text, const char* what, size_t most) {
    if (text.size() > most)
      throw ValidationError(std::string("the engine's ") + what + " is " + std::to_string(text.size()) +
                            " characters long; at most " + std::to_string(most) + " are kept");
    for (unsigned char c : text)
      if (c < 0x20 || c == 0x7f)
        throw ValidationError(std::string("the engine's ") + what + " holds a control character");
  };
  const auto blank = e.command.find_first_not_of(" \t");
  if (blank == std::string::npos) throw ValidationError("the engine's command is empty");
  check(e.command, "command", kMaxEngineCommandChars);
  check(e.name, "name", kMaxEngineNameChars);
  list.erase(std::remove_if(list.begin(), list.end(),
                            [&](const RememberedEngine& r) { return r.command == e.command; }),
             list.end());
  list.insert(list.begin(), std::move(e));
  if (list.size() > kMaxRememberedEngines) list.resize(kMaxRememberedEngines);
}

Settings settings_from_json(const nlohmann::json& j, std::string* warnings, const Settings& defaults) {
  Settings s = defaults;
  const Warn warn = [&](const std::string& w) {
    if (warnings) *warnings += (warnings->empty() ? "" : "; ") + w;
  };
  if (!j.is_object()) {
    warn("the settings file holds " + shown(j) + ", not a JSON object; using defaults");
    return s;
  }
  for (auto [key, field] :
       {std::pair<const char*, int64_t*>{"m", &s.spec.m}, {"n", &s.spec.n}, {"k", &s.spec.k}})
    if (j.contains(key) && !integer_in(j[key], 1, kMaxDim, field)) {
      *field = key[0] == 'm' ? defaults.spec.m : key[0] == 'n' ? defaults.spec.n : defaults.spec.k;
      invalid(warn, key, j[key], ("a whole number from 1 to " + std::to_string(kMaxDim)).c_str());
    }
  string_entry(j, "kernel", "", s.spec.kernel, warn);
  if (j.contains("tile")) {
    int64_t t = 0;
    if (integer_in(j["tile"], 0, 1024, &t))
      s.spec.tile = int(t);
    else
      invalid(warn, "tile", j["tile"], "a whole number from 0 to 1024");
  }
  if (j.contains("input")) {
    try {
      if (!j["input"].is_string()) throw ValidationError("not a string");
      s.spec.input = parse_input_kind(j["input"].get<std::string>());
    } catch (const ValidationError&) {
      invalid(warn, "input", j["input"], "random, symmetric, identity or ones");
    }
  }
  if (j.contains("seed")) {
    if (j["seed"].is_number_unsigned())
      s.spec.seed = j["seed"].get<uint64_t>();
    else
      invalid(warn, "seed", j["seed"], "a whole number from 0");
  }
  bool_entry(j, "square", s.square, warn);
  bool_entry(j, "auto_run", s.auto_run, warn);
  bool_entry(j, "memcheck_new_builds", s.memcheck_new_builds, warn);
  bool_entry(j, "changing_inputs", s.changing_inputs, warn);
  string_entry(j, "export_dir", "", s.export_dir, warn);
  if (j.contains("heatmaps")) heatmap_from_json(j["heatmaps"], s.matrices, "heatmaps", warn);
  if (j.contains("error_map")) heatmap_from_json(j["error_map"], s.error, "error_map", warn);
  if (j.contains("view")) s.view = view_settings_from_json(j["view"], warnings);
  if (j.contains("file_dialog")) {
    if (j["file_dialog"] == "desktop" || j["file_dialog"] == "window")
      s.file_dialog = j["file_dialog"] == "window" ? FileDialogChoice::Window : FileDialogChoice::Desktop;
    else
      invalid(warn, "file_dialog", j["file_dialog"], "desktop or window");
  }
  string_entry(j, "kernel_file", "", s.kernel_file, warn);
  if (j.contains("sweep") && !j["sweep"].is_null()) {
    SweepSettings w = s.sweep.value_or(SweepSettings{});
    sweep_from_json(j["sweep"], w, warn);
    if (j["sweep"].is_object()) s.sweep = w;
  }
  if (j.contains("engines")) {
    // Each entry checked as remember_engine checks a new one; a bad entry is left out and named.
    std::vector<RememberedEngine> list;
    if (!j["engines"].is_array()) {
      invalid(warn, "engines", j["engines"], "a list of {name, command}");
    } else {
      const size_t n = j["engines"].size();
      for (size_t i = n; i-- > 0;) {  // oldest first, so each is put before the older ones
        const nlohmann::json& e = j["engines"][i];
        try {
          if (!e.is_object() || !e.contains("command") || !e["command"].is_string() ||
              (e.contains("name") && !e["name"].is_string()))
            throw ValidationError("not an object with a string command and name");
          remember_engine(list, {e.value("name", std::string()), e["command"].get<std::string>()});
        } catch (const ValidationError& v) {
          warn("engines[" + std::to_string(i) + "] left out: " + v.what());
        }
      }
    }
    s.engines = std::move(list);
  }
  return s;
}

Settings load_settings(const fs::path& file, std::string* warnings, bool* keep, const Settings& defaults) {
  if (keep) *keep = false;
  auto unusable = [&](const std::string& why) {
    if (warnings)
      *warnings += (warnings->empty() ? "" : "; ") + file.string() + " " + why +
                   "; using defaults (the file is kept as it is)";
    if (keep) *keep = true;
    return defaults;
  };
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(file, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    return unusable("cannot be looked at (" + ec.message() + ")");
  if (!fs::exists(st)) return defaults;
  std::string text;
  try {
    InputFile f(file.string());
    constexpr uint64_t kMaxBytes = 1 << 20;
    if (f.size() > kMaxBytes)
      return unusable("is " + format_bytes(double(f.size())) + ", more than settings ever need (1 MiB)");
    text.resize(size_t(f.size()));
    if (!f.read_at(0, text.data(), text.size())) return unusable("shrank while it was read");
  } catch (const ValidationError& e) {
    // The message starts with the path already.
    std::string why = e.what();
    if (why.rfind(file.string(), 0) == 0) why = why.substr(file.string().size());
    if (!why.empty() && why[0] == ':') why = why.substr(1);
    while (!why.empty() && why[0] == ' ') why = why.substr(1);
    return unusable(why);
  }
  if (json_depth(text, 64) > 64) return unusable("is nested more than 64 levels deep");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    std::string why = e.what();
    if (why.size() > 160) why = why.substr(0, 160) + "...";
    return unusable("is not valid JSON (" + why + ")");
  }
  std::string w;
  Settings s = settings_from_json(j, &w, defaults);
  if (!w.empty()) {
    if (warnings)
      *warnings += (warnings->empty() ? "" : "; ") + w + " (" + file.string() + " is kept as it is)";
    if (keep) *keep = true;
  }
  return s;
}

void save_settings(const fs::path& file, const Settings& s) {
  std::error_code ec;
  if (file.has_parent_path()) fs::create_directories(file.parent_path(), ec);
  if (ec)
    throw std::runtime_error("cannot create " + file.parent_path().string() + " (" + ec.message() + ")");
  write_file(file, to_json(s).dump(2) + "\n", Replace::RegularFile);
}

nlohmann::json problem_json(const ProblemSpec& s) {
  nlohmann::json j = nlohmann::json::object();
  io::JsonWriter w(j);
  io::problem_fields(w, s);
  return j;
}

namespace {
// The SM clock while a kernel was timed, as `run --json` says it (flat: sm_clock_*, throttled).
nlohmann::json sm_clock_json(const ClockRecord& c) {
  return {{"sm_clock_available", c.available}, {"sm_clock_median_mhz", c.median_mhz},
          {"sm_clock_min_mhz", c.min_mhz},     {"sm_clock_max_mhz", c.max_mhz},
          {"throttled", c.throttled},          {"throttle_reasons", c.throttle_reasons}};
}
}  // namespace

nlohmann::json result_to_json(const RunResult& r) {
  nlohmann::json ref = nullptr;  // cuBLAS timed between the samples, with its own clock
  if (r.cublas_interleaved()) {
    const InterleavedReference& x = r.interleaved;
    ref = {{"kernel", x.kernel},
           {"samples", x.stats.count},
           {"median_ms", x.stats.median},
           {"iqr_ms", x.stats.p75 - x.stats.p25},
           {"times_ms", x.samples_ms}};
    ref.update(sm_clock_json(x.clock));
  }
  nlohmann::json j = problem_json(r.spec);
  j.update(sm_clock_json(r.clock));
  j.update({{"backend", r.backend},
            {"device", r.device},
            {"reference", r.reference},
            {"median_ms", r.median_ms()},
            {"samples", r.samples_ms.size()},
            {"tflops", r.tflops()},
            {"max_abs_err", r.error.max_abs_err},
            {"max_rel_err", r.error.max_rel_err},
            {"tolerance", r.error.tolerance},
            {"passed", r.error.passed},
            {"policy", r.policy},
            {"timed", r.timed},
            {"times_ms", r.samples_ms},
            {"p25_ms", r.stats.p25},
            {"p75_ms", r.stats.p75},
            {"iqr_ms", r.stats.p75 - r.stats.p25},
            {"min_ms", r.stats.min},
            {"noise", r.noise()},
            {"stop", r.stop},
            {"interleaved_reference", ref},
            {"interleaved_note", r.interleaved_note},
            {"clocks_differ", clocks_differ(r.clock, r.interleaved.clock)},
            {"cublas_ms", r.cublas_ms() > 0 ? nlohmann::json(r.cublas_ms()) : nlohmann::json(nullptr)},
            {"cublas_interleaved", r.cublas_interleaved()},
            {"bad_elements", r.error.bad_elements},
            {"worst_row", r.error.worst_row},
            {"worst_col", r.error.worst_col},
            {"note", r.note},
            // why the time cannot be right (null: it can): impossible.hpp
            {"impossible", r.is_impossible() ? nlohmann::json(r.impossible) : nlohmann::json(nullptr)},
            // the timing on inputs that change between samples (null: not asked for)
            {"changing_inputs", r.changing.sets > 0
                                    ? nlohmann::json{{"sets", r.changing.sets},
                                                     {"samples", r.changing.stats.count},
                                                     {"median_ms", r.changing.stats.median},
                                                     {"iqr_ms", r.changing.stats.p75 - r.changing.stats.p25},
                                                     {"times_ms", r.changing.samples_ms},
                                                     {"stop", r.changing.stop},
                                                     {"passed", r.changing.passed},
                                                     {"verdict", r.changing.verdict}}
                                    : nlohmann::json(nullptr)},
            {"date", r.date}});
  return j;
}

}  // namespace ts
