#include "core/plots/figure.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <sstream>
#include <nlohmann/json.hpp>

#include "core/io/csv.hpp"
#include "tilescope/version.hpp"

namespace ts {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* to_string(PlotKind p) {
  switch (p) {
    case PlotKind::Timings:
      return "timings";
    case PlotKind::Bars:
      return "bars";
    case PlotKind::Roofline:
      return "roofline";
    case PlotKind::Occupancy:
      return "occupancy";
    case PlotKind::Schedule:
      return "schedule";
    case PlotKind::Replay:
      return "replay";
  }
  return "?";
}

PlotKind parse_plot_kind(const std::string& s) {
  for (PlotKind p : {PlotKind::Timings, PlotKind::Bars, PlotKind::Roofline, PlotKind::Occupancy,
                     PlotKind::Schedule, PlotKind::Replay})
    if (s == to_string(p)) return p;
  throw ValidationError("unknown plot '" + s +
                        "' (allowed: timings, bars, roofline, occupancy, schedule, replay)");
}

const char* to_string(FigureTheme t) {
  return t == FigureTheme::Light ? "light" : "dark";
}

FigureTheme parse_figure_theme(const std::string& s) {
  if (s == "dark") return FigureTheme::Dark;
  if (s == "light") return FigureTheme::Light;
  throw ValidationError("unknown theme '" + s + "' (allowed: dark, light)");
}

FigureSize parse_figure_size(const std::string& text, FigureSize on_screen) {
  auto digits = [](const std::string& t) {
    return !t.empty() && t.size() <= 6 &&
           std::all_of(t.begin(), t.end(), [](unsigned char c) { return std::isdigit(c); });
  };
  FigureSize out;
  if (text == "2x" || text == "3x") {
    const int f = text[0] - '0';
    out = {on_screen.width * f, on_screen.height * f};
  } else {
    const size_t x = text.find('x');
    const std::string w = x == std::string::npos ? "" : text.substr(0, x),
                      h = x == std::string::npos ? "" : text.substr(x + 1);
    if (!digits(w) || !digits(h))
      throw ValidationError("figure size '" + text +
                            "' is neither WIDTHxHEIGHT (e.g. 1920x1080) nor 2x or 3x");
    out = {std::stoi(w), std::stoi(h)};
  }
  if (out.width < kMinFigureSide || out.width > kMaxFigureSide || out.height < kMinFigureSide ||
      out.height > kMaxFigureSide)
    throw ValidationError("figure size " + std::to_string(out.width) + " x " + std::to_string(out.height) +
                          " is outside " + std::to_string(kMinFigureSide) + ".." +
                          std::to_string(kMaxFigureSide) + " on a side");
  return out;
}

namespace {
std::string config_label(const ProblemSpec& s) {
  return KernelTile{s.kernel, s.tile}.label();
}
std::string shape_label(const ProblemSpec& s) {
  return std::to_string(s.m) + " x " + std::to_string(s.n) + " x " + std::to_string(s.k);
}
}  // namespace

std::string default_title(PlotKind plot, const ProblemSpec& spec) {
  switch (plot) {
    case PlotKind::Timings:
      return "Time and TFLOP/s against size, " + config_label(spec) + " highlighted";
    case PlotKind::Bars:
      return "The ladder at " + shape_label(spec);
    case PlotKind::Roofline:
      return "Roofline at " + shape_label(spec);
    case PlotKind::Occupancy:
      return "Occupancy of " + config_label(spec);
    case PlotKind::Schedule:
      return "Tile schedule of " + config_label(spec) + " at " + shape_label(spec);
    case PlotKind::Replay:
      return "The launch of " + config_label(spec) + " at " + shape_label(spec) +
             ", replayed on the tiles of C";
  }
  return "";
}

FigureMeta figure_meta(PlotKind plot, const Session& s, const ProblemSpec& spec,
                       const std::vector<size_t>& records) {
  FigureMeta m;
  m.plot = plot;
  m.title = default_title(plot, spec);
  m.backend = s.device.backend;
  m.device = s.device.name;
  m.driver = s.device.driver;
  m.cuda_runtime = s.device.cuda_runtime;
  m.spec = spec;
  m.program_version = kVersion;
  m.commit = kGitCommit;
  m.date = utc_now();
  std::vector<double> clocks;
  auto take = [&](const MeasurementRecord& r) {
    if (r.clock.available) clocks.push_back(r.clock.median_mhz);
    m.throttled |= r.clock.throttled;
    if (m.policy.empty()) m.policy = r.policy;
  };
  if (records.empty())
    for (const auto& r : s.records) take(r);
  else
    for (size_t i : records)
      if (i < s.records.size()) take(s.records[i]);
  m.sm_clock_mhz = clocks.empty() ? 0 : quantile(clocks, 0.5);
  return m;
}

std::string caption_line(const FigureMeta& m) {
  std::ostringstream os;
  os << m.device;
  if (!m.driver.empty()) os << " | driver " << m.driver;
  if (!m.cuda_runtime.empty()) os << " | runtime " << m.cuda_runtime;
  if (m.sm_clock_mhz > 0) {
    char b[48];
    std::snprintf(b, sizeof b, " | SM %.0f MHz%s", m.sm_clock_mhz, m.throttled ? " (throttled)" : "");
    os << b;
  } else {
    os << " | SM clock not recorded";
  }
  os << " | " << config_label(m.spec) << " | " << shape_label(m.spec) << " | " << to_string(m.spec.input);
  if (m.spec.input != InputKind::File) os << ", seed " << m.spec.seed;
  os << " | TileScope " << m.program_version << " (" << m.commit << ") | " << m.date;
  return os.str();
}

FigureSeries figure_series(const ScalingSeries& s) {
  FigureSeries f;
  f.label = s.label;
  f.columns = {"x", "median_ms", "p25_ms", "p75_ms", "tflops", "samples", "sm_clock_mhz", "throttled"};
  for (const auto& p : s.points)
    f.rows.push_back({p.x, p.median_ms, p.p25_ms, p.p75_ms, p.tflops, double(p.samples), p.clock_mhz,
                      p.throttled ? 1.0 : 0.0});
  return f;
}

FigureSeries figure_series(const std::vector<LadderBar>& bars, const std::string& label) {
  FigureSeries f;
  f.label = label;
  f.columns = {"position", "tile", "median_ms", "p25_ms", "p75_ms", "tflops"};
  for (size_t i = 0; i < bars.size(); ++i)
    f.rows.push_back({double(i), double(bars[i].config.tile), bars[i].median_ms, bars[i].p25_ms,
                      bars[i].p75_ms, bars[i].tflops});
  return f;
}

namespace {
json meta_json(const FigureMeta& m) {
  return {{"plot", to_string(m.plot)},
          {"title", m.title},
          {"caption", caption_line(m)},
          {"theme", to_string(m.theme)},
          {"width", m.size.width},
          {"height", m.size.height},
          {"backend", m.backend},
          {"device", m.device},
          {"driver", m.driver},
          {"cuda_runtime", m.cuda_runtime},
          {"sm_clock_mhz", m.sm_clock_mhz},
          {"throttled", m.throttled},
          {"kernel", m.spec.kernel},
          {"tile", m.spec.tile},
          {"m", m.spec.m},
          {"n", m.spec.n},
          {"k", m.spec.k},
          {"input", to_string(m.spec.input)},
          {"seed", m.spec.seed},
          {"policy", m.policy},
          {"sweep", m.sweep},
          {"tilescope", m.program_version},
          {"commit", m.commit},
          {"date", m.date},
          {"overlays", m.overlays},
          {"notes", m.notes}};
}

void check_rows(const FigureSeries& s) {
  for (size_t i = 0; i < s.rows.size(); ++i)
    if (s.rows[i].size() != s.columns.size())
      throw std::invalid_argument("figure series '" + s.label + "' row " + std::to_string(i) + " has " +
                                  std::to_string(s.rows[i].size()) + " values for " +
                                  std::to_string(s.columns.size()) + " columns");
}
}  // namespace

json figure_sidecar(const FigureData& d) {
  json series = json::array();
  for (const auto& s : d.series) {
    check_rows(s);
    json rows = json::array();
    for (const auto& r : s.rows) {
      json row = json::array();
      for (double v : r) row.push_back(std::isfinite(v) ? json(v) : json(nullptr));
      rows.push_back(row);
    }
    series.push_back({{"label", s.label}, {"columns", s.columns}, {"rows", rows}});
  }
  return {{"format", "tilescope-figure"}, {"version", 1}, {"meta", meta_json(d.meta)}, {"series", series}};
}

std::string figure_csv(const FigureData& d) {
  std::string out;
  const json meta = meta_json(d.meta);
  for (const auto& [key, value] : meta.items())
    out += "# " + key + "," + CsvWriter::quote(value.is_string() ? value.get<std::string>() : value.dump()) +
           "\n";
  for (const auto& s : d.series) {
    check_rows(s);
    std::vector<std::string> header = {"series"};
    header.insert(header.end(), s.columns.begin(), s.columns.end());
    CsvWriter w(header);
    for (const auto& r : s.rows) {
      std::vector<std::string> f = {s.label};
      for (double v : r) f.push_back(CsvWriter::num(v, "%.17g"));
      w.row(f);
    }
    out += w.str();
  }
  return out;
}

NewNames figure_names(const fs::path& dir, PlotKind plot, std::time_t when, bool webp) {
  std::vector<std::string> exts = {"png", "csv", "json"};
  if (webp) exts.push_back("webp");
  return NewNames(dir, std::string("tilescope-") + to_string(plot), exts, when);
}

FigurePaths figure_paths(const NewNames& names) {
  FigurePaths p{names[0], names[1], names[2], {}};
  if (names.count() > 3) p.webp = names[3];
  return p;
}

void write_figure_data(const FigurePaths& paths, const FigureData& d) {
  const std::string csv = figure_csv(d), sidecar = figure_sidecar(d).dump(2) + "\n";
  write_file(paths.csv, csv, Replace::Reserved);
  write_file(paths.json, sidecar, Replace::Reserved);
}

Unit flops_unit(double max_flops) {
  if (max_flops >= 1e12) return {1e-12, "TFLOP/s"};
  if (max_flops >= 1e9) return {1e-9, "GFLOP/s"};
  return {1e-6, "MFLOP/s"};
}

Unit time_unit(double max_ms) {
  if (max_ms >= 1000) return {1e-3, "s"};
  if (max_ms >= 1) return {1, "ms"};
  return {1e3, "us"};
}

std::string format_flops(double flops_per_s, const char* fmt) {
  const Unit u = flops_unit(flops_per_s);
  char b[64];
  std::snprintf(b, sizeof b, fmt, flops_per_s * u.scale);
  return std::string(b) + " " + u.name;
}

std::string format_ms(double ms, const char* fmt) {
  const Unit u = time_unit(ms);
  char b[64];
  std::snprintf(b, sizeof b, fmt, ms * u.scale);
  return std::string(b) + " " + u.name;
}

}  // namespace ts
