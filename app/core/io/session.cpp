#include "core/io/session.hpp"

#include "core/io/files.hpp"
#include "core/io/settings.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <iterator>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>
#include <unordered_set>
#include <nlohmann/json.hpp>

#include "core/io/csv.hpp"
#include "core/io/json_fields.hpp"
#include "core/io/record_fields.hpp"
#include "tilescope/version.hpp"

namespace ts {

namespace fs = std::filesystem;
using json = nlohmann::json;

MeasurementRecord MeasurementRecord::from(const RunResult& r) {
  MeasurementRecord m;
  static_cast<RunRecord&>(m) = r;
  if (r.occupancy) {
    m.blocks_per_sm = r.occupancy->blocks_per_sm;
    m.waves = r.occupancy->waves;
    m.k_segments = r.occupancy->k_segments;
  }
  if (m.date.empty()) m.date = utc_now();
  m.program_version = kVersion;
  m.commit = kGitCommit;
  return m;
}

Session Session::for_device(const DeviceInfo& d) {
  Session s;
  s.created = utc_now();
  s.label = d.name + ", " + s.created.substr(0, 10);
  s.program_version = kVersion;
  s.commit = kGitCommit;
  s.device = d;
  return s;
}

void Session::add(const RunResult& r) {
  records.push_back(MeasurementRecord::from(r));
  part.reset();
}

// [SECTION] JSON: one field list a type (io/record_fields.hpp) writes a session and reads it back.
namespace {

using SessionReader = io::JsonReader<SessionError>;

// The session's own fields, but its format, version and records.
template <class Io, class S>
void header_fields(Io& io, S& s) {
  io.text("label", s.label);
  io.text("created", s.created);
  io.text("tilescope", s.program_version);
  io.text("commit", s.commit);
  io.object("device", [&](auto& d) { io::device_fields(d, s.device); });
  io.number("dram_gbs", s.dram_gbs, 0, io::kMaxQuantity);
}

// The part of a sweep a bench session holds (SweepPart). What the fields must say together is checked here;
// that its record_points go with the records, where both have been read (check_part).
template <class Io, class P>
void part_fields(Io& io, P& p) {
  io.integer("shards", p.shards, 1, kMaxShards);
  io.integer("shard", p.shard, 1, kMaxShards);
  io.check([&] { return p.shard <= p.shards; },
           [&] {
             return "'shard' = " + std::to_string(p.shard) +
                    " is above 'shards' = " + std::to_string(p.shards);
           });
  io.text("sweep", p.sweep);
  io.text("sweep_sha256", p.sweep_sha256);
  io.check(
      [&] {
        return p.sweep_sha256.size() == 64 &&
               std::all_of(p.sweep_sha256.begin(), p.sweep_sha256.end(),
                           [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
      },
      [&] { return std::string("'sweep_sha256' is not 64 lower-case hex digits"); });
  io.integer("points", p.points, 0, kMaxSweepPoints);
  io.integers("record_points", p.record_points, 0, kMaxSweepPoints - 1, kMaxSweepPoints);
  io.list("failed", p.failed, kMaxSweepPoints, [](auto& o, auto& f) {
    o.integer("point", f.point, 0, kMaxSweepPoints - 1);
    io::problem_fields(o, f.spec);
    o.text("error", f.error);
  });
  // Every point once, each in the sweep and in this part.
  io.check(
      [&] {
        std::vector<bool> seen(size_t(std::max<int64_t>(p.points, 0)), false);
        auto take = [&](int64_t q) {
          if (q < 0 || q >= p.points || seen[size_t(q)] || shard_of(size_t(q), p.shards) != p.shard)
            return false;
          seen[size_t(q)] = true;
          return true;
        };
        for (int64_t q : p.record_points)
          if (!take(q)) return false;
        for (const auto& f : p.failed)
          if (!take(f.point)) return false;
        return true;
      },
      [&] {
        return "a point of 'record_points' or 'failed' is outside the sweep's " + std::to_string(p.points) +
               " points, not of shard " + std::to_string(p.shard) + " of " + std::to_string(p.shards) +
               ", or there twice";
      });
  io.text("policy", p.policy);
  io.flag("cold_l2", p.cold_l2);
  io.flag("interleave_reference", p.interleave_reference);
  io.text("sizes", p.sizes);
  io.text("started", p.started);
  io.number("wall_seconds", p.wall_seconds, 0, 1e9, false);
  io.flag("interrupted", p.interrupted);
  io.list("wave_marks", p.wave_marks, kMaxPartWaveMarks, [](auto& o, auto& w) {
    o.text("kernel", w.kernel);
    o.integer("tile", w.tile, 0, 1 << 16);
    o.integer("size", w.size, 1, kMaxDim);
    o.integer("waves", w.waves, 0, INT64_MAX);
  });
  io.integer("merged_parts", p.merged_parts, 0, kMaxShards);
  io.integers("missing_shards", p.missing_shards, 1, kMaxShards, kMaxShards);
}

// A part's record_points name the sweep's point of each record: as many as there are records.
void check_part(const Session& s) {
  if (s.part && s.part->record_points.size() != s.records.size())
    throw SessionError("sweep_part: 'record_points' names " + std::to_string(s.part->record_points.size()) +
                       " points but the session has " + std::to_string(s.records.size()) + " records");
}

json record_json(const MeasurementRecord& r) {
  json j = json::object();
  io::JsonWriter w(j);
  io::record_fields(w, r);
  return j;
}

MeasurementRecord record_from(const SessionReader& r) {
  MeasurementRecord m;
  io::record_fields(r, m);
  return m;
}

}  // namespace

json to_json(const Session& s) {
  json records = json::array();
  for (const auto& r : s.records) records.push_back(record_json(r));
  json j = {{"format", "tilescope-session"}, {"version", kSessionFormat}};
  io::JsonWriter w(j);
  header_fields(w, s);
  if (s.part) w.object("sweep_part", [&](auto& o) { part_fields(o, *s.part); });
  j["records"] = std::move(records);
  return j;
}

namespace {
// The session's fields but its records.
Session header_from_json(const json& j) {
  if (!j.is_object() || !j.contains("format") || j["format"] != "tilescope-session")
    throw SessionError("not a TileScope session (no \"format\": \"tilescope-session\")");
  const SessionReader r(j, "session");
  int64_t version = 0;
  r.integer("version", version, 0, 1 << 30);
  if (version != kSessionFormat)
    throw SessionError("session format version " + std::to_string(version) + " is not the supported " +
                       std::to_string(kSessionFormat));
  Session s;
  header_fields(r, s);
  if (r.has("sweep_part")) {
    s.part.emplace();
    r.object("sweep_part", [&](auto& o) { part_fields(o, *s.part); });
  }
  if (!r.at("records").is_array()) throw SessionError("session: 'records' is not a list");
  return s;
}

std::string too_many_records(size_t n) {
  return "session has " + std::to_string(n) + " records, more than the limit of " +
         std::to_string(kMaxSessionRecords);
}

// The text of a nlohmann exception without its "[json.exception.out_of_range.406] " tag.
std::string json_reason(const json::exception& e) {
  std::string w = e.what();
  const size_t close = w.find("] ");
  return w.rfind("[json.exception.", 0) == 0 && close != std::string::npos ? w.substr(close + 2) : w;
}
}  // namespace

Session session_from_json(const json& j) {
  Session s = header_from_json(j);
  const json& recs = j["records"];
  if (recs.size() > size_t(kMaxSessionRecords)) throw SessionError(too_many_records(recs.size()));
  s.records.reserve(recs.size());
  for (size_t i = 0; i < recs.size(); ++i)
    s.records.push_back(record_from(SessionReader(recs[i], "record " + std::to_string(i + 1))));
  check_part(s);
  return s;
}

std::string session_text(const Session& s) {
  // Compact (what is counted against the limit is what is written); text that is not UTF-8 (a kernel's
  // name) is written with U+FFFD in its place instead of failing the save.
  return to_json(s).dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
}

void save_session(const fs::path& path, const Session& s, bool replace) {
  // The program's one writer: a unique temporary file, fsync, rename; only a regular file is ever replaced.
  const fs::path dir = path.has_parent_path() ? path.parent_path() : fs::path(".");
  std::error_code ec;
  fs::create_directories(dir, ec);
  try {
    write_file(path, session_text(s), replace ? Replace::RegularFile : Replace::Never);
  } catch (const ValidationError& e) {
    throw SessionError(e.what());
  }
}

namespace {

// The bytes of an open file, for nlohmann's parser (an input iterator): read in blocks, never more than
// kMaxSessionBytes (a file that grows while it is read is refused as too large).
class FileBytes {
 public:
  explicit FileBytes(int fd) : m_fd(fd) {}
  int next() {
    if (m_pos == m_len) {
      if (m_total > uint64_t(kMaxSessionBytes)) return -1;
      ssize_t n;
      do n = ::read(m_fd, m_buf, sizeof m_buf);
      while (n < 0 && (errno == EINTR || errno == EAGAIN));
      if (n < 0) {
        m_error = errno;
        return -1;
      }
      if (n == 0) return -1;
      m_pos = 0;
      m_len = size_t(n);
      m_total += uint64_t(n);
    }
    return static_cast<unsigned char>(m_buf[m_pos++]);
  }
  uint64_t total() const { return m_total; }
  int error() const { return m_error; }

 private:
  int m_fd;
  char m_buf[1 << 16];
  size_t m_pos = 0, m_len = 0;
  uint64_t m_total = 0;
  int m_error = 0;
};

class ByteIterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = char;
  ByteIterator() = default;  // the end
  explicit ByteIterator(FileBytes* f) : m_f(f) { m_c = m_f->next(); }
  char operator*() const { return char(m_c); }
  ByteIterator& operator++() {
    m_c = m_f->next();
    return *this;
  }
  ByteIterator operator++(int) {
    ByteIterator was = *this;
    ++*this;
    return was;
  }
  bool operator==(const ByteIterator& o) const { return at_end() == o.at_end(); }
  bool operator!=(const ByteIterator& o) const { return !(*this == o); }

 private:
  bool at_end() const { return !m_f || m_c < 0; }
  FileBytes* m_f = nullptr;
  int m_c = -1;
};

// Builds the session while the text is parsed, so that what is held stays bounded: each record is read into
// its Measurement record as soon as it ends and its JSON dropped; containers nest at most
// kMaxSessionDepth deep; a record holds at most kMaxRecordValues values, the rest of the file
// kMaxHeaderValues. Past a limit the file is refused at once, before anything more is built.
class StreamingReader {
 public:
  bool event(int depth, json::parse_event_t ev, json& parsed) {
    using E = json::parse_event_t;
    if (ev == E::object_start || ev == E::array_start) {
      if (depth >= kMaxSessionDepth)
        throw SessionError("nested more than " + std::to_string(kMaxSessionDepth) +
                           " levels deep (a session nests 5)");
    }
    if (ev == E::key && depth == 1) m_root_key = parsed.get<std::string>();
    if (ev == E::array_start && depth == 1) m_in_records = m_root_key == "records";
    if (ev == E::array_end && depth == 1) m_in_records = false;
    const bool in_record = m_in_records && depth >= 2;
    if (ev != E::object_end && ev != E::array_end) {
      if (in_record) {
        if (++m_record_values > kMaxRecordValues)
          throw SessionError("record " + std::to_string(m_records + 1) + " holds more than " +
                             std::to_string(kMaxRecordValues) + " values");
      } else if (depth >= 1 && m_root_key == "sweep_part" && !(ev == E::key && depth == 1)) {
        if (++m_part_values > kMaxPartValues)
          throw SessionError("the session's sweep_part holds more than " + std::to_string(kMaxPartValues) +
                             " values");
      } else if (++m_header_values > kMaxHeaderValues) {
        throw SessionError("the session's fields outside its records hold more than " +
                           std::to_string(kMaxHeaderValues) + " values");
      }
    }
    // A record (an element of "records") is complete: read it, keep the record, drop its JSON.
    const bool element_done =
        m_in_records && depth == 2 && (ev == E::object_end || ev == E::array_end || ev == E::value);
    if (!element_done) return true;
    ++m_records;
    m_record_values = 0;
    if (m_records > size_t(kMaxSessionRecords)) throw SessionError(too_many_records(m_records));
    if (m_first_error.empty()) {
      try {
        records.push_back(record_from(SessionReader(parsed, "record " + std::to_string(m_records))));
      } catch (const SessionError& e) {
        m_first_error = e.what();  // said after the header's checks (a file that is no session says so)
        records.clear();
        records.shrink_to_fit();
      }
    }
    return false;
  }
  const std::string& first_error() const { return m_first_error; }
  std::vector<MeasurementRecord> records;

 private:
  std::string m_root_key, m_first_error;
  bool m_in_records = false;
  size_t m_records = 0;
  int64_t m_record_values = 0, m_header_values = 0, m_part_values = 0;
};

}  // namespace

Session load_session(const fs::path& path) {
  const std::string p = path.string();
  // Opened without blocking (a FIFO is refused, never waited on), then checked on the descriptor.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    const int err = errno;
    if (err == ENOENT) {
      std::error_code ec;
      throw SessionError(p + (fs::is_symlink(fs::symlink_status(path, ec))
                                  ? ": a symbolic link to a file that does not exist"
                                  : ": no such file"));
    }
    // The reason as the system gives it: a loop of symbolic links is not a missing file.
    if (err == ELOOP) throw SessionError(p + ": a loop of symbolic links (" + std::strerror(err) + ")");
    throw SessionError(p + ": cannot be opened (" + std::strerror(err) + ")");
  }
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{fd};
  struct stat st {};
  if (::fstat(fd, &st) != 0) throw SessionError(p + ": cannot be looked at (" + std::strerror(errno) + ")");
  if (!S_ISREG(st.st_mode))
    throw SessionError(p + ": not a regular file (" + describe_file_type(unsigned(st.st_mode)) + ")");
  const uint64_t size = uint64_t(st.st_size);
  auto too_large = [&](uint64_t bytes) {
    return SessionError(p + ": " + format_bytes_exact(bytes) + " is larger than the limit of " +
                        format_bytes_exact(uint64_t(kMaxSessionBytes)) + " for a session");
  };
  if (size > uint64_t(kMaxSessionBytes)) throw too_large(size);
  FileBytes bytes(fd);
  StreamingReader reader;
  json j;
  try {
    j = json::parse(ByteIterator(&bytes), ByteIterator(),
                    [&reader](int depth, json::parse_event_t ev, json& parsed) {
                      return reader.event(depth, ev, parsed);
                    });
  } catch (const json::parse_error& e) {
    if (bytes.error()) throw SessionError(p + ": read error (" + std::strerror(bytes.error()) + ")");
    if (bytes.total() > uint64_t(kMaxSessionBytes)) throw too_large(bytes.total());
    throw SessionError(p + ": not JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const json::exception& e) {  // a number too large for a double (1e309), and the like
    throw SessionError(p + ": not usable JSON: " + json_reason(e));
  } catch (const SessionError& e) {
    throw SessionError(p + ": " + e.what());
  }
  if (bytes.error()) throw SessionError(p + ": read error (" + std::strerror(bytes.error()) + ")");
  if (bytes.total() > uint64_t(kMaxSessionBytes)) throw too_large(bytes.total());
  try {
    Session s = header_from_json(j);
    if (!reader.first_error().empty()) throw SessionError(reader.first_error());
    s.records = std::move(reader.records);
    check_part(s);
    return s;
  } catch (const SessionError& e) {
    throw SessionError(p + ": " + e.what());
  }
}

namespace {

// Where a write of `path` lands: a symbolic link followed (hop by hop, relative links from their folder) to
// what it names; an absent name is itself.
fs::path follow_links(const fs::path& path) {
  fs::path p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::error_code ec;
    const fs::path to = fs::read_symlink(p, ec);
    if (ec) throw SessionError(p.string() + ": the symbolic link cannot be read (" + ec.message() + ")");
    p = to.is_absolute() ? to : (p.has_parent_path() ? p.parent_path() : fs::path(".")) / to;
  }
  throw SessionError(path.string() + ": a loop of symbolic links");
}

// An exclusive lock on ".<file>.lock" beside `file` (hidden, empty, left there), held while it lives (flock:
// also between two writers of one process, each with its own descriptor).
class FileLock {
 public:
  explicit FileLock(const fs::path& file) {
    const fs::path lock = (file.has_parent_path() ? file.parent_path() : fs::path(".")) /
                          ("." + file.filename().string() + ".lock");
    m_fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (m_fd < 0)
      throw SessionError(lock.string() + ": the lock file cannot be opened (" + std::strerror(errno) + ")");
    struct stat st {};
    if (::fstat(m_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
      ::close(m_fd);
      throw SessionError(lock.string() + ": the lock file is not a regular file");
    }
    while (::flock(m_fd, LOCK_EX) != 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(m_fd);
      throw SessionError(lock.string() + ": cannot be locked (" + std::strerror(err) + ")");
    }
  }
  ~FileLock() { ::close(m_fd); }  // closing releases the lock
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int m_fd = -1;
};

std::string record_text(const MeasurementRecord& r) {
  return record_json(r).dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

SessionSave save_session_merged(const fs::path& path, Session& s) {
  SessionSave out;
  const fs::path target = follow_links(path);
  out.written = target;
  if (target == path) {
    std::error_code ec;
    fs::create_directories(path.has_parent_path() ? path.parent_path() : fs::path("."), ec);
  }
  const FileLock lock(target);
  // What another window saved since this one read the file: merged in, never replaced.
  struct stat st {};
  if (::lstat(target.c_str(), &st) == 0) {
    Session disk = load_session(target);
    if (disk.device.backend != s.device.backend || disk.device.name != s.device.name)
      throw SessionError(target.string() + " now holds the session of another device (" + disk.device.name +
                         "); it is not replaced");
    std::unordered_set<std::string> mine;
    mine.reserve(s.records.size());
    for (const auto& r : s.records) mine.insert(record_text(r));
    for (auto& r : disk.records)
      if (mine.insert(record_text(r)).second) {
        s.records.push_back(std::move(r));
        ++out.merged;
      }
    if (!(s.dram_gbs > 0) && disk.dram_gbs > 0) s.dram_gbs = disk.dram_gbs;
    if (out.merged) s.part.reset();  // its points are no longer those of one bench part
    if (out.merged)
      std::stable_sort(
          s.records.begin(), s.records.end(),
          [](const MeasurementRecord& a, const MeasurementRecord& b) { return a.date < b.date; });
  }
  // Within the file's limits, counted on the text written: the oldest points make room.
  size_t drop = s.records.size() > size_t(kMaxSessionRecords) ? s.records.size() - kMaxSessionRecords : 0;
  std::string text;
  for (;;) {
    if (drop) {
      out.left_out.insert(out.left_out.end(), std::make_move_iterator(s.records.begin()),
                          std::make_move_iterator(s.records.begin() + std::ptrdiff_t(drop)));
      s.records.erase(s.records.begin(), s.records.begin() + std::ptrdiff_t(drop));
      s.part.reset();
    }
    text = session_text(s);
    if (text.size() <= size_t(kMaxSessionBytes)) break;
    // Records until the excess is covered (each with its comma).
    size_t excess = text.size() - size_t(kMaxSessionBytes), freed = 0;
    drop = 0;
    while (freed < excess && drop < s.records.size()) freed += record_text(s.records[drop++]).size() + 1;
  }
  try {
    write_file(target, text, Replace::RegularFile);
  } catch (const ValidationError& e) {
    throw SessionError(e.what());
  }
  out.points = s.records.size();
  return out;
}

fs::path save_session_beside(const fs::path& dir, const std::string& prefix, const Session& s) {
  NewNames names(dir, prefix, {"json"});
  try {
    write_file(names[0], session_text(s), Replace::Reserved);
  } catch (const ValidationError& e) {
    throw SessionError(e.what());
  }
  return names[0];
}

fs::path default_session_path() {
  const char* x = std::getenv("XDG_DATA_HOME");
  if (x && *x) return fs::path(x) / "tilescope" / "session.json";
  const char* h = std::getenv("HOME");
  const fs::path home = h && *h ? fs::path(h) : fs::temp_directory_path();
  return home / ".local" / "share" / "tilescope" / "session.json";
}

size_t SessionSet::open(Session s) {
  if (m_sessions.size() > kMaxOverlays)
    throw ValidationError("at most " + std::to_string(kMaxOverlays) +
                          " sessions can be overlaid; close one first");
  const std::string base = s.label;
  for (int i = 2;; ++i) {
    bool taken = false;
    for (const auto& o : m_sessions) taken |= o.label == s.label;
    if (!taken) break;
    s.label = base + " (" + std::to_string(i) + ")";
  }
  m_sessions.push_back(std::move(s));
  return m_sessions.size() - 1;
}

void SessionSet::close(size_t index) {
  if (index >= 1 && index < m_sessions.size()) m_sessions.erase(m_sessions.begin() + std::ptrdiff_t(index));
}

std::string engine_session_file_name(const std::string& device_name, const std::string& engine_name) {
  auto slug = [](const std::string& text, size_t most) {
    std::string out;
    for (unsigned char c : text) {
      if (std::isalnum(c))
        out += char(std::tolower(c));
      else if (!out.empty() && out.back() != '-')
        out += '-';
      if (out.size() >= most) break;
    }
    while (!out.empty() && out.back() == '-') out.pop_back();
    return out.empty() ? std::string("x") : out;
  };
  return "session-" + slug(device_name, 48) + "-" + slug(engine_name, 40) + ".json";
}

std::optional<size_t> SessionSet::of_engine(uint64_t engine) const {
  if (engine == 0) return std::nullopt;
  for (size_t i = 0; i < m_sessions.size(); ++i)
    if (m_sessions[i].engine == engine) return i;
  return std::nullopt;
}

void SessionSet::make_current(size_t index) {
  if (index >= 1 && index < m_sessions.size()) std::swap(m_sessions[0], m_sessions[index]);
}

// [SECTION] Plot data.
const char* to_string(ScaleAxis a) {
  switch (a) {
    case ScaleAxis::Square:
      return "M = N = K";
    case ScaleAxis::M:
      return "M";
    case ScaleAxis::N:
      return "N";
    case ScaleAxis::K:
      return "K";
    case ScaleAxis::NK:
      return "N = K";
    case ScaleAxis::MN:
      return "M = N";
  }
  return "?";
}

namespace {
bool on_axis(const ProblemSpec& p, ScaleAxis axis, const ProblemSpec& at) {
  switch (axis) {
    case ScaleAxis::Square:
      return p.m == p.n && p.n == p.k;
    case ScaleAxis::M:
      return p.n == at.n && p.k == at.k;
    case ScaleAxis::N:
      return p.m == at.m && p.k == at.k;
    case ScaleAxis::K:
      return p.m == at.m && p.n == at.n;
    case ScaleAxis::NK:
      return p.m == at.m && p.n == p.k;
    case ScaleAxis::MN:
      return p.k == at.k && p.m == p.n;
  }
  return false;
}
double x_of(const ProblemSpec& p, ScaleAxis axis) {
  return double(axis == ScaleAxis::M || axis == ScaleAxis::MN ? p.m : axis == ScaleAxis::K ? p.k : p.n);
}
}  // namespace

double axis_position(const ProblemSpec& p, ScaleAxis axis) {
  return x_of(p, axis);
}

std::string axis_label(ScaleAxis axis, const ProblemSpec& at) {
  const std::string m = std::to_string(at.m), n = std::to_string(at.n), k = std::to_string(at.k);
  switch (axis) {
    case ScaleAxis::Square:
      return "M = N = K";
    case ScaleAxis::M:
      return "M (N = " + n + ", K = " + k + ")";
    case ScaleAxis::N:
      return "N (M = " + m + ", K = " + k + ")";
    case ScaleAxis::K:
      return "K (M = " + m + ", N = " + n + ")";
    case ScaleAxis::NK:
      return "N = K (M = " + m + ")";
    case ScaleAxis::MN:
      return "M = N (K = " + k + ")";
  }
  return "?";
}

bool sweep_shape_of(ScaleAxis axis, const ProblemSpec& at, SweepShape* shape, int64_t* fixed) {
  switch (axis) {
    case ScaleAxis::Square:
      *shape = SweepShape::Square;
      *fixed = 0;
      return true;
    case ScaleAxis::NK:
      *shape = SweepShape::FixedM;
      *fixed = at.m;
      return true;
    case ScaleAxis::MN:
      *shape = SweepShape::FixedK;
      *fixed = at.k;
      return true;
    default:
      return false;
  }
}

ScaleAxis infer_axis(const Session& s, const ProblemSpec& at) {
  if (at.m == at.n && at.n == at.k) return ScaleAxis::Square;
  // Votes for M, N, K (one dimension differs from the current problem), NK and MN (two differ, moving
  // together as a sweep with M or K fixed moves them).
  int votes[5] = {0, 0, 0, 0, 0};
  for (const auto& r : s.records) {
    const ProblemSpec& p = r.spec;
    if (p.kernel != at.kernel || p.tile != at.tile) continue;
    const bool dm = p.m != at.m, dn = p.n != at.n, dk = p.k != at.k;
    if (dm + dn + dk == 1) votes[dm ? 0 : dn ? 1 : 2]++;
    if (!dm && dn && dk && p.n == p.k && at.n == at.k) votes[3]++;
    if (dm && dn && !dk && p.m == p.n && at.m == at.n) votes[4]++;
  }
  const ScaleAxis axes[5] = {ScaleAxis::M, ScaleAxis::N, ScaleAxis::K, ScaleAxis::NK, ScaleAxis::MN};
  int best = 1;  // N when nothing else wins outright
  for (int i = 0; i < 5; ++i)
    if (votes[i] > votes[best]) best = i;
  return axes[best];
}

std::vector<ScalingPoint> ScalingSeries::latest_per_x() const {
  std::vector<ScalingPoint> out;
  for (const auto& p : points) {
    if (!out.empty() && out.back().x == p.x) {
      if (p.date >= out.back().date) out.back() = p;
    } else {
      out.push_back(p);
    }
  }
  return out;
}

std::vector<ScalingSeries> scaling_series(const Session& s, ScaleAxis axis, const ProblemSpec& at) {
  std::vector<ScalingSeries> out;
  for (size_t i = 0; i < s.records.size(); ++i) {
    const MeasurementRecord& r = s.records[i];
    if (!r.timed || !r.error.passed || r.stats.count == 0 || r.spec.input != at.input) continue;
    if (!on_axis(r.spec, axis, at)) continue;
    const KernelTile cfg{r.spec.kernel, r.spec.tile};
    auto it = std::find_if(out.begin(), out.end(), [&](const ScalingSeries& x) { return x.config == cfg; });
    if (it == out.end()) {
      ScalingSeries ns;
      ns.config = cfg;
      ns.label = cfg.label();
      ns.tf32 = r.tf32;
      ns.reference = r.spec.kernel == "cublas" || r.spec.kernel == "cublas_tf32";
      out.push_back(ns);
      it = out.end() - 1;
    }
    ScalingPoint p;
    p.x = x_of(r.spec, axis);
    p.median_ms = r.stats.median;
    p.p25_ms = r.stats.p25;
    p.p75_ms = r.stats.p75;
    p.tflops = r.tflops();
    p.samples = r.stats.count;
    p.clock_mhz = r.clock.available ? r.clock.median_mhz : 0;
    p.throttled = r.clock.throttled;
    p.frames_drawn = r.frames_drawn;
    p.cublas_ms = r.cublas_ms() > 0 ? r.cublas_ms() : 0;
    p.cublas_interleaved = r.cublas_interleaved();
    if (p.cublas_interleaved) {
      p.cublas_clock_mhz = r.interleaved.clock.available ? r.interleaved.clock.median_mhz : 0;
      p.cublas_throttled = r.interleaved.clock.throttled;
      p.clocks_differ = clocks_differ(r.clock, r.interleaved.clock);
    }
    p.date = r.date;
    p.record = i;
    p.impossible = r.impossible;
    (r.is_impossible() ? it->impossible : it->points).push_back(p);
  }
  const auto by_x = [](const ScalingPoint& a, const ScalingPoint& b) {
    return a.x != b.x ? a.x < b.x : a.date < b.date;
  };
  for (auto& ser : out) {
    std::stable_sort(ser.points.begin(), ser.points.end(), by_x);
    std::stable_sort(ser.impossible.begin(), ser.impossible.end(), by_x);
  }
  return out;
}

std::vector<LadderBar> ladder_bars(const Session& s, const ProblemSpec& at,
                                   const std::vector<KernelInfo>& ladder) {
  std::map<std::pair<std::string, int>, size_t> newest;  // config -> record
  for (size_t i = 0; i < s.records.size(); ++i) {
    const MeasurementRecord& r = s.records[i];
    if (!r.timed || !r.error.passed || r.stats.count == 0 || r.is_impossible()) continue;
    if (r.spec.m != at.m || r.spec.n != at.n || r.spec.k != at.k || r.spec.input != at.input) continue;
    const auto key = std::make_pair(r.spec.kernel, r.spec.tile);
    auto it = newest.find(key);
    if (it == newest.end() || s.records[it->second].date <= r.date) newest[key] = i;
  }
  std::vector<LadderBar> bars;
  auto add = [&](const std::string& kernel, int tile) {
    auto it = newest.find({kernel, tile});
    if (it == newest.end()) return;
    const MeasurementRecord& r = s.records[it->second];
    LadderBar b;
    b.config = {kernel, tile};
    b.label = b.config.label();
    b.median_ms = r.stats.median;
    b.p25_ms = r.stats.p25;
    b.p75_ms = r.stats.p75;
    b.tflops = r.tflops();
    b.tf32 = r.tf32;
    b.record = it->second;
    bars.push_back(b);
    newest.erase(it);
  };
  for (const auto& k : ladder) {
    if (k.tiles.empty()) add(k.id, 0);
    for (int t : k.tiles) add(k.id, t);
  }
  // Kernels the ladder does not list (e.g. from a session of another build) come last, by name.
  std::vector<std::pair<std::string, int>> rest;
  for (const auto& [key, i] : newest) rest.push_back(key);
  for (const auto& [kernel, tile] : rest) add(kernel, tile);
  return bars;
}

std::string speedup_label(double value_ms, double baseline_ms, const std::string& baseline) {
  if (!(value_ms > 0) || !(baseline_ms > 0)) return "";
  char b[64];
  const double x = baseline_ms / value_ms;
  std::snprintf(b, sizeof b, x >= 10 ? "%.0fx " : x >= 1 ? "%.1fx " : "%.2fx ", x);
  return b + baseline;
}

}  // namespace ts
