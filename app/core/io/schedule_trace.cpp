#include "core/io/schedule_trace.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>
#include <vector>

#include "core/engine/problem.hpp"
#include "core/io/files.hpp"

namespace ts {

namespace {

using json = nlohmann::json;
constexpr int kPid = 1;
constexpr const char* kFormat = "tilescope-schedule";
// 1: every record a block; 2: stream-K's segments (k_segments), written only for such a trace, so that an
// older TileScope refuses it by its version rather than by a missing k_slice.
constexpr int kFormatVersion = 2;

// Nanoseconds as a viewer reads them back from microseconds (Perfetto: int64(x * 1000), truncating).
int64_t viewer_ns(double us) {
  return int64_t(us * 1000.0);
}

// The smallest double x with viewer_ns(x) == ns (x * 1000 may fall a hair short of ns otherwise).
double us_of(uint64_t ns) {
  double x = double(ns) / 1000.0;
  while (viewer_ns(x) < int64_t(ns)) x = std::nextafter(x, std::numeric_limits<double>::infinity());
  while (x > 0 && viewer_ns(std::nextafter(x, 0.0)) >= int64_t(ns)) x = std::nextafter(x, 0.0);
  return x;
}

std::string lane_name(uint32_t sm, int lane) {
  return "SM " + std::to_string(sm) + (lane == 0 ? "" : " #" + std::to_string(lane + 1));
}

// Each present record's lane on its SM (first free lane by start time) and the most lanes any SM needs.
std::pair<std::vector<int>, int> lay_out_lanes(const TileTrace& t) {
  std::vector<size_t> order;
  order.reserve(t.records.size());
  for (size_t i = 0; i < t.records.size(); ++i)
    if (present(t.records[i])) order.push_back(i);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const TileRecord &ra = t.records[a], &rb = t.records[b];
    if (ra.smid != rb.smid) return ra.smid < rb.smid;
    if (ra.start_ns != rb.start_ns) return ra.start_ns < rb.start_ns;
    return a < b;
  });
  std::vector<int> lane(t.records.size(), 0);
  int most = 1;
  std::vector<uint64_t> ends;  // per lane of the current SM: its last block's end
  for (size_t i = 0; i < order.size(); ++i) {
    const TileRecord& r = t.records[order[i]];
    if (i == 0 || t.records[order[i - 1]].smid != r.smid) ends.clear();
    size_t l = 0;
    while (l < ends.size() && ends[l] > r.start_ns) ++l;
    if (l == ends.size()) ends.push_back(0);
    ends[l] = r.end_ns;
    lane[order[i]] = int(l);
    most = std::max(most, int(ends.size()));
  }
  return {lane, most};
}

struct BlockPlace {
  int64_t row = 0, col = 0, z = 0;
};
BlockPlace place_of(const TileTrace& t, size_t i) {
  const size_t tiles = size_t(t.grid_x) * size_t(t.grid_y);
  const size_t tile = i % tiles;
  return {int64_t(tile / size_t(t.grid_x)), int64_t(tile % size_t(t.grid_x)), int64_t(i / tiles)};
}

std::string block_name(const TileTrace& t, const BlockPlace& p) {
  std::string s = "tile (row " + std::to_string(p.row) + ", col " + std::to_string(p.col);
  if (t.k_segments)
    s += ", K segment " + std::to_string(p.z);
  else if (t.grid_z > 1)
    s += t.z_splits_columns ? ", block " + std::to_string(p.z) + " of the cluster"
                            : ", K slice " + std::to_string(p.z);
  return s + ")";
}

int64_t clip(int64_t v, int64_t limit) {
  return limit > 0 ? std::min(v, limit) : v;
}

}  // namespace

std::string schedule_trace_title(const ScheduleTraceContext& c) {
  std::string s = c.kernel.empty() ? "kernel" : c.kernel;
  if (c.tile > 0) s += " tile " + std::to_string(c.tile);
  if (c.m > 0 && c.n > 0 && c.k > 0)
    s += ", " + std::to_string(c.m) + " x " + std::to_string(c.n) + " x " + std::to_string(c.k) +
         " (M x N x K)";
  if (!c.device.empty()) s += " on " + c.device;
  return s;
}

json schedule_trace_json(const TileTrace& t, const ScheduleTraceContext& c) {
  const std::string problem = check_trace(t);
  if (!problem.empty()) throw std::invalid_argument("the trace cannot be exported: " + problem);
  uint64_t t0 = UINT64_MAX;
  uint32_t top_sm = 0;
  for (const auto& r : t.records) {
    if (!present(r)) continue;  // stream-K: a tile's segments past its last are not exported
    t0 = std::min(t0, r.start_ns);
    top_sm = std::max(top_sm, r.smid);
  }
  const auto [lane, lanes] = lay_out_lanes(t);
  json events = json::array();
  events.push_back(
      {{"name", "process_name"}, {"ph", "M"}, {"pid", kPid}, {"args", {{"name", schedule_trace_title(c)}}}});
  events.push_back(
      {{"name", "process_sort_index"}, {"ph", "M"}, {"pid", kPid}, {"args", {{"sort_index", 0}}}});
  // Tracks: the first lane of every SM of the device (idle ones too), then the other lanes in use.
  std::set<std::pair<uint32_t, int>> tracks;
  const uint32_t sms = std::max(uint32_t(std::max(t.sm_count, 0)), top_sm + 1);
  for (uint32_t sm = 0; sm < sms; ++sm) tracks.insert({sm, 0});
  for (size_t i = 0; i < t.records.size(); ++i)
    if (present(t.records[i])) tracks.insert({t.records[i].smid, lane[i]});
  for (const auto& [sm, l] : tracks) {
    const int64_t tid = int64_t(sm) * lanes + l;
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", kPid},
                      {"tid", tid},
                      {"args", {{"name", lane_name(sm, l)}}}});
    events.push_back({{"name", "thread_sort_index"},
                      {"ph", "M"},
                      {"pid", kPid},
                      {"tid", tid},
                      {"args", {{"sort_index", tid}}}});
  }
  const bool cols = t.z_splits_columns;
  const int64_t share = cols ? t.tile_n / std::max(1, t.grid_z) : t.tile_n;
  const int64_t k = c.k > 0 ? c.k : t.k;  // the launch's K, where known
  const int64_t k_steps = t.k_step > 0 && k > 0 ? (k + t.k_step - 1) / t.k_step : 0;
  for (size_t i = 0; i < t.records.size(); ++i) {
    const TileRecord& r = t.records[i];
    if (!present(r)) continue;
    const BlockPlace p = place_of(t, i);
    json args = {{"tile_row", p.row}, {"tile_col", p.col}};
    if (t.tile_m > 0 && t.tile_n > 0) {
      const int64_t row0 = p.row * t.tile_m, col0 = p.col * t.tile_n + (cols ? p.z * share : 0);
      args["row_begin"] = clip(row0, c.m);
      args["row_end"] = clip(row0 + t.tile_m, c.m);
      args["col_begin"] = clip(col0, c.n);
      args["col_end"] = clip(col0 + share, c.n);
    }
    if (cols) {
      args["cluster_block"] = p.z;
    } else if (t.k_segments) {
      // The segment's first K step as the trace has it, and its K range: to the next segment's first step,
      // or to K for the tile's last (left out when K is not known).
      args["k_segment"] = p.z;
      args["k_first_step"] = r.k_first;
      const size_t after = i + size_t(t.grid_x) * size_t(t.grid_y);
      const bool last = after >= t.records.size() || !present(t.records[after]);
      if (!last || k > 0) {
        args["k_begin"] = int64_t(r.k_first) * t.k_step;
        args["k_end"] = last ? k : clip(int64_t(t.records[after].k_first) * t.k_step, k);
      }
    } else {
      args["k_slice"] = p.z;
      if (t.grid_z == 1 && k > 0) {
        args["k_begin"] = 0;
        args["k_end"] = k;
      } else if (k_steps > 0) {
        const int64_t first = p.z * k_steps / t.grid_z, end = (p.z + 1) * k_steps / t.grid_z;
        args["k_begin"] = std::min(first * t.k_step, k);
        args["k_end"] = std::min(end * t.k_step, k);
      }
    }
    args["sm"] = r.smid;
    args["start_ns"] = r.start_ns;
    args["end_ns"] = r.end_ns;
    args["duration_us"] = double(r.end_ns - r.start_ns) * 1e-3;
    events.push_back({{"name", block_name(t, p)},
                      {"cat", "tile"},
                      {"ph", "X"},
                      {"pid", kPid},
                      {"tid", int64_t(r.smid) * lanes + lane[i]},
                      {"ts", us_of(r.start_ns - t0)},
                      {"dur", us_of(r.end_ns - r.start_ns)},
                      {"args", std::move(args)}});
  }
  for (const auto& [time_ns, level] : concurrency_curve(t))
    events.push_back({{"name", "resident blocks"},
                      {"ph", "C"},
                      {"pid", kPid},
                      {"ts", us_of(uint64_t(time_ns))},
                      {"args", {{"blocks", level}}}});
  json other = {{"format", kFormat},
                {"format_version", t.k_segments ? 2 : 1},
                {"title", schedule_trace_title(c)},
                {"kernel", c.kernel},
                {"tile", c.tile},
                {"m", c.m},
                {"n", c.n},
                {"k", k},
                {"device", c.device},
                {"grid", describe_grid(t)},
                {"grid_x", t.grid_x},
                {"grid_y", t.grid_y},
                {"grid_z", t.grid_z},
                {"z_splits_columns", t.z_splits_columns},
                {"k_step", t.k_step},
                {"k_segments", t.k_segments},
                {"tile_m", t.tile_m},
                {"tile_n", t.tile_n},
                {"sm_count", t.sm_count},
                {"lanes_per_sm", lanes},
                {"t0_ns", t0},
                {"traced_ms", t.traced_ms},
                {"plain_ms", t.plain_ms},
                {"timer_resolution_ns", t.timer_resolution_ns}};
  return {{"displayTimeUnit", "ns"}, {"otherData", std::move(other)}, {"traceEvents", std::move(events)}};
}

std::string schedule_trace_text(const TileTrace& t, const ScheduleTraceContext& c) {
  return schedule_trace_json(t, c).dump() + "\n";
}

// [SECTION] The format's checks.

namespace {

bool is_int(const json& v) {
  return v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX));
}

}  // namespace

std::string check_trace_event_json(const json& doc) {
  if (!doc.is_object()) return "the document is not a JSON object (the trace event format's object form)";
  static const std::set<std::string> top = {"traceEvents", "displayTimeUnit", "otherData", "metadata",
                                            "systemTraceEvents"};
  for (const auto& [key, value] : doc.items())
    if (!top.count(key))
      return "unknown top-level key \"" + key +
             "\" (Perfetto stops reading at a key it does not know; keep extra data in otherData)";
  if (!doc.contains("traceEvents") || !doc["traceEvents"].is_array()) return "no traceEvents array";
  if (doc.contains("displayTimeUnit") && !(doc["displayTimeUnit"] == "ms" || doc["displayTimeUnit"] == "ns"))
    return "displayTimeUnit is neither \"ms\" nor \"ns\"";
  for (const char* key : {"otherData", "metadata"})
    if (doc.contains(key) && !doc[key].is_object()) return std::string(key) + " is not an object";
  if (doc.contains("systemTraceEvents") && !doc["systemTraceEvents"].is_string())
    return "systemTraceEvents is not a string";

  static const std::string phases = "BEXiICbneSTpFstfPONDMVvRc()";
  static const std::set<std::string> metadata = {"process_name", "process_labels", "process_sort_index",
                                                 "thread_name", "thread_sort_index"};
  using Track = std::pair<int64_t, int64_t>;
  struct Span {
    int64_t begin, end;
    size_t index;
  };
  std::map<Track, std::vector<Span>> spans;
  std::map<Track, int64_t> open_b;
  std::set<Track> named;
  const json& events = doc["traceEvents"];
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    std::string at = "traceEvents[" + std::to_string(i) + "]";
    if (!e.is_object()) return at + " is not an object";
    if (!e.contains("ph") || !e["ph"].is_string() || e["ph"].get<std::string>().size() != 1 ||
        phases.find(e["ph"].get<std::string>()[0]) == std::string::npos)
      return at + ": no ph, or not one of the format's phases";
    const char ph = e["ph"].get<std::string>()[0];
    at += std::string(" (ph ") + ph + ")";
    // No arrays anywhere in an event (walked with a stack, not recursion).
    std::vector<const json*> stack = {&e};
    while (!stack.empty()) {
      const json* v = stack.back();
      stack.pop_back();
      if (v->is_array()) return at + ": holds an array (older Perfetto readers refuse such events)";
      if (v->is_object())
        for (const auto& item : *v) stack.push_back(&item);
    }
    for (const char* key : {"pid", "tid"})
      if (e.contains(key) && !is_int(e[key])) return at + ": " + key + " is not an integer";
    auto need = [&](std::initializer_list<const char*> keys) -> std::string {
      for (const char* key : keys)
        if (!e.contains(key)) return at + ": no " + key;
      return "";
    };
    auto number_at_least_0 = [&](const char* key) -> std::string {
      if (!e[key].is_number()) return at + ": " + key + " is not a number";
      if (e[key].get<double>() < 0) return at + ": " + key + " is " + e[key].dump() + ", below 0";
      return "";
    };
    auto named_string = [&]() -> std::string {
      if (!e.contains("name") || !e["name"].is_string()) return at + ": no name (a string)";
      return "";
    };
    std::string why;
    if (ph != 'M') {
      if (!(why = need({"ts"})).empty() || !(why = number_at_least_0("ts")).empty()) return why;
    }
    const Track track{e.value("pid", int64_t(0)), e.value("tid", int64_t(0))};
    switch (ph) {
      case 'X': {
        if (!(why = named_string()).empty() || !(why = need({"dur", "pid", "tid"})).empty() ||
            !(why = number_at_least_0("dur")).empty())
          return why;
        const int64_t begin = viewer_ns(e["ts"].get<double>());
        spans[track].push_back({begin, begin + viewer_ns(e["dur"].get<double>()), i});
        break;
      }
      case 'B':
        if (!(why = need({"pid", "tid"})).empty()) return why;
        ++open_b[track];
        break;
      case 'E':
        if (!(why = need({"pid", "tid"})).empty()) return why;
        if (open_b[track] == 0) return at + ": ends a slice that no B event began on its track";
        --open_b[track];
        break;
      case 'C':
        if (!(why = named_string()).empty() || !(why = need({"pid", "args"})).empty()) return why;
        if (!e["args"].is_object() || e["args"].empty()) return at + ": args is not an object of series";
        for (const auto& [key, value] : e["args"].items())
          if (!value.is_number()) return at + ": counter series \"" + key + "\" is not a number";
        break;
      case 'i':
      case 'I':
        if (!(why = named_string()).empty() || !(why = need({"pid"})).empty()) return why;
        if (e.contains("s") && !(e["s"] == "g" || e["s"] == "p" || e["s"] == "t"))
          return at + ": s (scope) is not g, p or t";
        break;
      case 'M': {
        if (!(why = named_string()).empty()) return why;
        const std::string name = e["name"].get<std::string>();
        if (!metadata.count(name)) return at + ": metadata named \"" + name + "\", which no viewer reads";
        const bool thread = name.rfind("thread_", 0) == 0;
        if (!(why = need({"pid", "args"})).empty() || (thread && !(why = need({"tid"})).empty())) return why;
        const json& args = e["args"];
        if (!args.is_object()) return at + ": args is not an object";
        if (name == "process_name" || name == "thread_name") {
          if (!args.contains("name") || !args["name"].is_string()) return at + ": args.name is not a string";
          if (thread) named.insert(track);
        } else if (name == "process_labels") {
          if (!args.contains("labels") || !args["labels"].is_string())
            return at + ": args.labels is not a string";
        } else if (!args.contains("sort_index") || !is_int(args["sort_index"])) {
          return at + ": args.sort_index is not an integer";
        }
        break;
      }
      default:
        break;
    }
  }
  for (auto& [track, list] : spans) {
    if (!named.count(track))
      return "traceEvents[" + std::to_string(list.front().index) + "] (ph X) is on track (pid " +
             std::to_string(track.first) + ", tid " + std::to_string(track.second) +
             "), which no thread_name metadata event names";
    std::sort(list.begin(), list.end(), [](const Span& a, const Span& b) {
      return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
    });
    std::vector<const Span*> enclosing;
    for (const Span& s : list) {
      while (!enclosing.empty() && enclosing.back()->end <= s.begin) enclosing.pop_back();
      if (!enclosing.empty() && s.end > enclosing.back()->end)
        return "traceEvents[" + std::to_string(s.index) + "] and traceEvents[" +
               std::to_string(enclosing.back()->index) + "] overlap partly on track (pid " +
               std::to_string(track.first) + ", tid " + std::to_string(track.second) +
               "): " + std::to_string(s.begin) + " to " + std::to_string(s.end) + " ns against " +
               std::to_string(enclosing.back()->begin) + " to " + std::to_string(enclosing.back()->end) +
               " ns (events on one track must nest)";
      enclosing.push_back(&s);
    }
  }
  return "";
}

// [SECTION] Reading it back.

namespace {

[[noreturn]] void refuse(const std::string& why) {
  throw ValidationError("not a TileScope schedule trace: " + why);
}

int64_t int_in(const json& o, const char* key, int64_t lo, int64_t hi, const std::string& where) {
  if (!o.contains(key) || !is_int(o[key])) refuse(where + ": no integer " + key);
  const int64_t v = o[key].get<int64_t>();
  if (v < lo || v > hi)
    refuse(where + ": " + key + " = " + std::to_string(v) + " is outside " + std::to_string(lo) + " to " +
           std::to_string(hi));
  return v;
}

uint64_t stamp(const json& o, const char* key, const std::string& where) {
  if (!o.contains(key) || !o[key].is_number_unsigned()) refuse(where + ": no " + key + " (an integer >= 0)");
  return o[key].get<uint64_t>();
}

std::string text_of(const json& o, const char* key) {
  return o.contains(key) && o[key].is_string() ? o[key].get<std::string>() : "";
}

double number_of(const json& o, const char* key) {
  return o.contains(key) && o[key].is_number() ? o[key].get<double>() : 0.0;
}

}  // namespace

ScheduleTraceFile read_schedule_trace_json(const std::string& text) {
  json doc = json::parse(text, nullptr, false);
  if (doc.is_discarded()) throw ValidationError("not a TileScope schedule trace: the text is not JSON");
  return read_schedule_trace_json(doc);
}

ScheduleTraceFile read_schedule_trace_json(const json& doc) {
  const std::string format = check_trace_event_json(doc);
  if (!format.empty()) throw ValidationError("not a valid trace event JSON: " + format);
  if (!doc.contains("otherData")) refuse("no otherData");
  const json& o = doc["otherData"];
  if (text_of(o, "format") != kFormat) refuse("otherData.format is not \"" + std::string(kFormat) + "\"");
  const int64_t version = int_in(o, "format_version", 1, 1000, "otherData");
  if (version > kFormatVersion)
    refuse("format_version " + o["format_version"].dump() + " (this TileScope reads versions 1 to " +
           std::to_string(kFormatVersion) + ")");
  ScheduleTraceFile f;
  TileTrace& t = f.trace;
  const std::string od = "otherData";
  t.grid_x = int(int_in(o, "grid_x", 1, INT32_MAX, od));
  t.grid_y = int(int_in(o, "grid_y", 1, INT32_MAX, od));
  t.grid_z = int(int_in(o, "grid_z", 1, INT32_MAX, od));
  if (!o.contains("z_splits_columns") || !o["z_splits_columns"].is_boolean())
    refuse("otherData: no z_splits_columns");
  t.z_splits_columns = o["z_splits_columns"].get<bool>();
  t.k_step = int(int_in(o, "k_step", 0, 1 << 20, od));
  if (o.contains("k_segments") && !o["k_segments"].is_boolean())
    refuse("otherData: k_segments is not true or false");
  t.k_segments = o.value("k_segments", false);  // older files: no stream-K
  if (t.k_segments && version < 2) refuse("otherData: stream-K segments in a format_version 1 file");
  t.tile_m = int(int_in(o, "tile_m", 0, 1 << 20, od));
  t.tile_n = int(int_in(o, "tile_n", 0, 1 << 20, od));
  t.sm_count = int(int_in(o, "sm_count", 0, 1 << 20, od));
  const int64_t lanes = int_in(o, "lanes_per_sm", 1, 1 << 20, od);
  const uint64_t t0 = stamp(o, "t0_ns", od);
  t.traced_ms = number_of(o, "traced_ms");
  t.plain_ms = number_of(o, "plain_ms");
  t.timer_resolution_ns = o.contains("timer_resolution_ns") && o["timer_resolution_ns"].is_number_unsigned()
                              ? o["timer_resolution_ns"].get<uint64_t>()
                              : 0;
  f.context.kernel = text_of(o, "kernel");
  f.context.device = text_of(o, "device");
  f.context.tile = int(int_in(o, "tile", 0, INT32_MAX, od));
  f.context.m = int_in(o, "m", 0, kMaxDim, od);
  f.context.n = int_in(o, "n", 0, kMaxDim, od);
  f.context.k = int_in(o, "k", 0, kMaxDim, od);
  t.k = f.context.k;
  const uint64_t blocks = uint64_t(t.grid_x) * uint64_t(t.grid_y) * uint64_t(t.grid_z);
  if (blocks > (uint64_t(1) << 24)) refuse("a grid of " + std::to_string(blocks) + " blocks, above 2^24");
  t.records.assign(size_t(blocks), TileRecord{0, 0, 0, 0});
  std::vector<bool> seen(size_t(blocks), false);
  constexpr int64_t kNoEnd = -2;  // stream-K: each segment's k_end as the file says it (kNoEnd: not given)
  std::vector<int64_t> k_end_of(t.k_segments ? size_t(blocks) : 0, kNoEnd);

  std::map<int64_t, std::string> thread_names;
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == kPid)
      thread_names[e["tid"].get<int64_t>()] = e["args"]["name"].get<std::string>();
  const char* z_key = block_z_name(t);
  const json& events = doc["traceEvents"];
  bool starts_at_t0 = false;
  for (size_t i = 0; i < events.size(); ++i) {
    const json& e = events[i];
    if (e["ph"] != "X" || !e.contains("cat") || e["cat"] != "tile") continue;
    const std::string at = "traceEvents[" + std::to_string(i) + "]";
    if (e["pid"] != kPid) refuse(at + ": a block outside the launch's process (pid " + e["pid"].dump() + ")");
    if (!e.contains("args") || !e["args"].is_object()) refuse(at + ": no args");
    const json& a = e["args"];
    const int64_t row = int_in(a, "tile_row", 0, t.grid_y - 1, at);
    const int64_t col = int_in(a, "tile_col", 0, t.grid_x - 1, at);
    const int64_t z = int_in(a, z_key, 0, t.grid_z - 1, at);
    const int64_t sm = int_in(a, "sm", 0, UINT32_MAX, at);
    const int64_t k_first = t.k_segments ? int_in(a, "k_first_step", 0, UINT32_MAX, at) : 0;
    const uint64_t start = stamp(a, "start_ns", at), end = stamp(a, "end_ns", at);
    const size_t index = size_t((z * t.grid_y + row) * t.grid_x + col);
    const std::string block = "block (row " + std::to_string(row) + ", col " + std::to_string(col) + ", " +
                              z_key + " " + std::to_string(z) + ")";
    if (seen[index]) refuse(at + ": " + block + " appears twice");
    if (t.k_segments && a.contains("k_begin") &&
        !(is_int(a["k_begin"]) && a["k_begin"] == k_first * t.k_step))
      refuse(at + ": " + block + " has k_begin " + a["k_begin"].dump() + " for K step " +
             std::to_string(k_first) + " of " + std::to_string(t.k_step));
    seen[index] = true;
    if (start < t0) refuse(at + ": " + block + " starts before the first start (t0_ns)");
    if (end < start) refuse(at + ": " + block + " ends before it starts");
    const int64_t tid = e["tid"].get<int64_t>();
    if (tid / lanes != sm || tid < 0)
      refuse(at + ": " + block + " ran on SM " + std::to_string(sm) + " but lies on track " +
             std::to_string(tid));
    const auto name = thread_names.find(tid);
    if (name == thread_names.end() || name->second != lane_name(uint32_t(sm), int(tid % lanes)))
      refuse(at + ": the track of " + block + " is not named \"" + lane_name(uint32_t(sm), int(tid % lanes)) +
             "\"");
    const int64_t ts = viewer_ns(e["ts"].get<double>()), dur = viewer_ns(e["dur"].get<double>());
    if (uint64_t(ts) != start - t0)
      refuse(at + ": " + block + " has ts " + e["ts"].dump() + " us, its stamps say " +
             std::to_string(start - t0) + " ns after the first start");
    if (uint64_t(dur) != end - start)
      refuse(at + ": " + block + " has dur " + e["dur"].dump() + " us, its stamps say " +
             std::to_string(end - start) + " ns");
    starts_at_t0 |= start == t0;
    if (start == 0) refuse(at + ": " + block + " starts at 0 (the stamps of a block that never ran)");
    if (t.k_segments && a.contains("k_end")) k_end_of[index] = int_in(a, "k_end", 0, kMaxDim, at);
    t.records[index] = TileRecord{start, end, uint32_t(sm), uint32_t(k_first)};
  }
  for (size_t i = 0; i < seen.size() && !t.k_segments; ++i)  // stream-K: check_trace says which are missing
    if (!seen[i]) {
      const size_t tiles = size_t(t.grid_x) * size_t(t.grid_y);
      refuse("block " + std::to_string(i) + " (row " + std::to_string(i % tiles / size_t(t.grid_x)) +
             ", col " + std::to_string(i % size_t(t.grid_x)) + ", " + z_key + " " +
             std::to_string(i / tiles) + ") is missing");
    }
  if (!starts_at_t0) refuse("no block starts at t0_ns: the times are not from the first start");
  const std::string problem = check_trace(t);
  if (!problem.empty()) refuse(problem);
  // A segment's end is the next one's start: a k_end that says otherwise lost the segment after it (or K).
  for (size_t i = 0; i < k_end_of.size(); ++i) {
    if (k_end_of[i] == kNoEnd || !present(t.records[i])) continue;
    const int64_t want = segment_k_range(t, i).second;
    if (k_end_of[i] != want) {
      const size_t tiles = size_t(t.grid_x) * size_t(t.grid_y), tile = i % tiles;
      refuse("segment " + std::to_string(i / tiles) + " of tile (" + std::to_string(tile / size_t(t.grid_x)) +
             ", " + std::to_string(tile % size_t(t.grid_x)) + ") has k_end " + std::to_string(k_end_of[i]) +
             " but the segments of its tile end it at " +
             (want < 0 ? std::string("K, which is not known") : std::to_string(want)) +
             " (a segment after it is missing?)");
    }
  }
  return f;
}

std::filesystem::path write_schedule_trace(const std::filesystem::path& dir, const TileTrace& t,
                                           const ScheduleTraceContext& c) {
  const std::string text = schedule_trace_text(t, c);  // before a name is taken: a bad trace leaves nothing
  std::filesystem::create_directories(dir);
  NewNames names(dir, "tilescope-schedule", {"json"});
  write_file(names[0], text, Replace::Reserved);
  names.written(0);
  names.complete();
  return names[0];
}

}  // namespace ts
