#include "core/plots/replay_figure.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace ts {

namespace {

std::string trim(const std::string& s) {
  const size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t");
  return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
}

bool ends_with(const std::string& s, const char* tail) {
  const std::string t(tail);
  return s.size() >= t.size() && s.compare(s.size() - t.size(), t.size(), t) == 0;
}

std::string us_text(double us) {
  char b[64];
  std::snprintf(b, sizeof b, "%.1f us", us);
  return b;
}

}  // namespace

std::vector<ReplayTimeArg> parse_replay_times(const std::string& text, const char* what) {
  const std::string w(what);
  const std::string form = " (times after the launch's first block start: 120 or 120us, 500ns, 1.5ms, 50%)";
  if (trim(text).empty()) throw ValidationError(w + " is empty" + form);
  std::vector<ReplayTimeArg> out;
  size_t from = 0;
  while (from <= text.size()) {
    const size_t comma = std::min(text.find(',', from), text.size());
    const std::string item = trim(text.substr(from, comma - from));
    from = comma + 1;
    ReplayTimeArg a;
    a.text = item;
    std::string number = item;
    if (ends_with(item, "%")) {
      a.unit = ReplayTimeArg::Unit::Percent;
      number = item.substr(0, item.size() - 1);
    } else if (ends_with(item, "ns")) {
      a.unit = ReplayTimeArg::Unit::Ns;
      number = item.substr(0, item.size() - 2);
    } else if (ends_with(item, "us")) {
      number = item.substr(0, item.size() - 2);
    } else if (ends_with(item, "ms")) {
      a.unit = ReplayTimeArg::Unit::Ms;
      number = item.substr(0, item.size() - 2);
    }
    number = trim(number);
    char* end = nullptr;
    errno = 0;
    const double v = number.empty() ? NAN : std::strtod(number.c_str(), &end);
    const bool digits_only = !number.empty() && number.find_first_of("xXpPeEnNiI+-") == std::string::npos;
    if (!digits_only || !end || *end != 0 || errno != 0 || !std::isfinite(v) || v < 0)
      throw ValidationError(w + ": '" + item + "' is not a time from 0" + form);
    if (a.unit == ReplayTimeArg::Unit::Percent && v > 100)
      throw ValidationError(w + ": '" + item + "' is past the end of the launch (100% at most)");
    a.value = v;
    out.push_back(a);
    if (int(out.size()) > kMaxReplayPanels)
      throw ValidationError(w + " gives more than " + std::to_string(kMaxReplayPanels) +
                            " times (one small picture each; a figure holds at most " +
                            std::to_string(kMaxReplayPanels) + ")");
    if (comma == text.size()) break;
  }
  return out;
}

std::vector<uint64_t> resolve_replay_times(const std::vector<ReplayTimeArg>& times, uint64_t duration_ns,
                                           const char* what) {
  std::vector<uint64_t> out;
  for (const ReplayTimeArg& a : times) {
    double ns = a.value;
    switch (a.unit) {
      case ReplayTimeArg::Unit::Ns:
        break;
      case ReplayTimeArg::Unit::Us:
        ns = a.value * 1e3;
        break;
      case ReplayTimeArg::Unit::Ms:
        ns = a.value * 1e6;
        break;
      case ReplayTimeArg::Unit::Percent:
        ns = a.value / 100.0 * double(duration_ns);
        break;
    }
    ns = std::round(ns);
    if (ns > double(duration_ns))
      throw ValidationError(std::string(what) + " " + a.text + " is after the launch's end at " +
                            us_text(double(duration_ns) * 1e-3) +
                            " (times count from its first block start)");
    out.push_back(uint64_t(ns));
  }
  return out;
}

std::vector<ReplayMoment> default_replay_moments(const ScheduleReplay& r, int64_t slots, int max_panels) {
  std::vector<ReplayMoment> out;
  const uint64_t d = r.duration_ns();
  const int waves = r.waves(slots);
  max_panels = std::max(2, max_panels);
  if (waves < 1) {
    for (int q = 0; q <= 4; ++q)
      out.push_back(
          {uint64_t(std::llround(double(d) * q / 4.0)), std::to_string(q * 25) + "% of the launch"});
    return out;
  }
  std::vector<int> shown;
  const int room = max_panels - 1;  // one panel is the end
  if (waves <= room) {
    for (int w = 0; w < waves; ++w) shown.push_back(w);
  } else {
    for (int i = 0; i < room; ++i) {
      const int w = int(std::lround(double(i) * double(waves - 1) / double(room - 1)));
      if (shown.empty() || shown.back() != w) shown.push_back(w);
    }
  }
  for (int w : shown)
    out.push_back({r.wave_start(w, slots),
                   "wave " + std::to_string(w + 1) + " of " + std::to_string(waves) + " starts"});
  out.push_back({d, "the end"});
  return out;
}

int parse_replay_frames(const std::string& text, const char* what) {
  const std::string t = trim(text);
  const bool digits = !t.empty() && t.size() <= 6 &&
                      std::all_of(t.begin(), t.end(), [](unsigned char c) { return c >= '0' && c <= '9'; });
  const int v = digits ? std::stoi(t) : -1;
  if (v < kMinReplayFrames || v > kMaxReplayFrames)
    throw ValidationError(std::string(what) + " = '" + text + "' is not a whole number of frames from " +
                          std::to_string(kMinReplayFrames) + " to " + std::to_string(kMaxReplayFrames));
  return v;
}

ReplayFrames replay_frames(uint64_t duration_ns, int frames, const char* what) {
  if (frames < kMinReplayFrames || frames > kMaxReplayFrames)
    throw ValidationError(std::string(what) + " = " + std::to_string(frames) + " is outside " +
                          std::to_string(kMinReplayFrames) + ".." + std::to_string(kMaxReplayFrames));
  ReplayFrames f;
  const int each = std::clamp(int(std::lround(kReplayPlaySeconds * 1000.0 / frames)), 20, 250);
  for (int i = 0; i < frames; ++i) {
    // The last frame exactly at the end (every block done), the first at 0.
    const uint64_t t = i == frames - 1
                           ? duration_ns
                           : uint64_t(std::llround(double(duration_ns) * double(i) / (frames - 1)));
    f.t_ns.push_back(std::min(t, duration_ns));
    f.duration_ms.push_back(i == frames - 1 ? each + kReplayHoldMs : each);
  }
  return f;
}

std::string replay_time_label(uint64_t t_ns, uint64_t duration_ns) {
  char b[64];
  if (duration_ns >= 10000000)
    std::snprintf(b, sizeof b, "t = %.3f ms", double(t_ns) * 1e-6);
  else
    std::snprintf(b, sizeof b, "t = %.1f us", double(t_ns) * 1e-3);
  return b;
}

std::string replay_counts_label(const ScheduleReplay::Counts& c, size_t blocks, const char* noun) {
  char b[160];
  std::snprintf(b, sizeof b, "%lld running, %lld done of %zu%s%s", (long long)c.running, (long long)c.done,
                blocks, noun && *noun ? " " : "", noun ? noun : "");
  return b;
}

FigureData replay_figure(const TileTrace& t, const ScheduleReplay& r, const std::vector<ReplayMoment>& shown,
                         int64_t slots, const ReplayFrames* frames, FigureMeta meta) {
  FigureData f;
  char b[200];
  const int waves = r.waves(slots);
  std::snprintf(b, sizeof b, " on %d SMs; launch %.1f us (traced)", t.sm_count,
                double(r.duration_ns()) * 1e-3);
  meta.notes.push_back(describe_grid(t) + b);
  if (waves > 0)
    meta.notes.push_back("waves from the occupancy arithmetic: " + std::to_string(slots) +
                         " blocks resident at once, " + std::to_string(waves) +
                         (waves == 1 ? " wave" : " waves"));
  else
    meta.notes.push_back("no occupancy report: the moments are quarters of the launch, not waves");
  std::string moments = "moments shown:";
  for (size_t i = 0; i < shown.size(); ++i)
    moments +=
        (i ? "; " : " ") + replay_time_label(shown[i].t_ns, r.duration_ns()) + " (" + shown[i].why + ")";
  meta.notes.push_back(moments);
  f.meta = std::move(meta);

  FigureSeries blocks;
  blocks.label = "blocks";
  blocks.columns = {"tile_row", "tile_col", block_z_name(t), "sm", "start_us", "end_us"};
  const bool segments = t.k_segments && r.k_segments();
  if (segments) blocks.columns.insert(blocks.columns.begin() + 3, {"k_begin", "k_end"});
  const size_t n_tiles = size_t(std::max(1, t.grid_x)) * size_t(std::max(1, t.grid_y));
  for (size_t i = 0; i < r.blocks() && t.grid_x > 0; ++i) {
    const size_t rec = r.record(i), tile = rec % n_tiles;  // stream-K: present segments only
    std::vector<double> row = {double(tile / size_t(t.grid_x)), double(tile % size_t(t.grid_x)),
                               double(rec / n_tiles),           double(r.sm(i)),
                               double(r.start_ns(i)) * 1e-3,    double(r.end_ns(i)) * 1e-3};
    if (segments && rec < t.records.size()) {
      const auto [k0, k1] = segment_k_range(t, rec);
      row.insert(row.begin() + 3, {double(k0), k1 < 0 ? NAN : double(k1)});  // NAN: K not known
    }
    blocks.rows.push_back(std::move(row));
  }
  f.series.push_back(std::move(blocks));

  FigureSeries at;
  at.label = "moments";
  at.columns = {"time_us", "waiting", "running", "done"};
  for (const ReplayMoment& m : shown) {
    const ScheduleReplay::Counts c = r.counts(m.t_ns);
    at.rows.push_back({double(m.t_ns) * 1e-3, double(c.waiting), double(c.running), double(c.done)});
  }
  f.series.push_back(std::move(at));

  if (frames) {
    FigureSeries fr;
    fr.label = "frames";
    fr.columns = {"time_us", "waiting", "running", "done", "duration_ms"};
    for (size_t i = 0; i < frames->t_ns.size(); ++i) {
      const ScheduleReplay::Counts c = r.counts(frames->t_ns[i]);
      fr.rows.push_back({double(frames->t_ns[i]) * 1e-3, double(c.waiting), double(c.running), double(c.done),
                         double(frames->duration_ms[i])});
    }
    f.series.push_back(std::move(fr));
  }
  return f;
}

}  // namespace ts
