#include "core/io/merge.hpp"

#include <algorithm>

#include "core/engine/sweep.hpp"

namespace ts {

std::string describe_shards(const std::vector<int>& shards) {
  std::string s;
  for (size_t i = 0; i < shards.size();) {
    size_t j = i;
    while (j + 1 < shards.size() && shards[j + 1] == shards[j] + 1) ++j;
    s += (s.empty() ? "" : ", ") + std::to_string(shards[i]);
    if (j > i) s += (j == i + 1 ? ", " : "-") + std::to_string(shards[j]);
    i = j + 1;
  }
  return s;
}

namespace {

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

std::string part_name(const MergeInput& in) {
  const SweepPart& p = *in.session.part;
  return in.name + " (shard " + std::to_string(p.shard) + " of " + std::to_string(p.shards) + ")";
}

std::string sweep_words(const SweepPart& p) {
  return quoted(p.sweep) + ", " + std::to_string(p.points) + " points, sweep " + p.sweep_sha256.substr(0, 12);
}

// The values of one property over the parts, each with the files it was found in (first seen first).
class Values {
 public:
  void add(const std::string& value, const std::string& file) {
    auto it = std::find_if(m_seen.begin(), m_seen.end(), [&](const Seen& s) { return s.value == value; });
    if (it == m_seen.end()) {
      m_seen.push_back({value, {file}});
    } else if (std::find(it->files.begin(), it->files.end(), file) == it->files.end()) {
      it->files.push_back(file);
    }
  }
  bool mixed() const { return m_seen.size() > 1; }
  // "'A' (a.json, b.json); 'B' (c.json)"
  std::string describe() const {
    std::string s;
    for (const Seen& v : m_seen) {
      std::string files;
      for (const std::string& f : v.files) files += (files.empty() ? "" : ", ") + f;
      s += (s.empty() ? "" : "; ") + quoted(v.value) + " (" + files + ")";
    }
    return s;
  }
  std::vector<std::string> values() const {
    std::vector<std::string> v;
    for (const Seen& s : m_seen) v.push_back(s.value);
    return v;
  }

 private:
  struct Seen {
    std::string value;
    std::vector<std::string> files;
  };
  std::vector<Seen> m_seen;
};

std::string join(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string version_of(const std::string& version, const std::string& commit) {
  return version + " (" + commit + ")";
}

// A row of the merged table and where it comes from.
struct Row {
  int64_t point = 0;
  BenchPoint row;
  const MeasurementRecord* record = nullptr;  // null: a failed point
  const FailedPoint* failed = nullptr;
};

}  // namespace

MergeResult merge_parts(const std::vector<MergeInput>& in, const MergeOptions& o) {
  if (in.empty()) throw MergeError("nothing to merge: give the session files of the parts of a sweep");
  for (const MergeInput& x : in)
    if (!x.session.part)
      throw MergeError(
          x.name +
          ": not a part of a bench sweep (it has no 'sweep_part'; `tilescope bench "
          "--session-out` writes one, the window's sessions and those of older versions have none)");

  for (const MergeInput& x : in) {  // what the session reader checks, for sessions made in memory
    const SweepPart& p = *x.session.part;
    if (p.shards < 1 || p.shard < 1 || p.shard > p.shards ||
        p.record_points.size() != x.session.records.size())
      throw MergeError(x.name + ": its sweep_part is not consistent (shard " + std::to_string(p.shard) +
                       " of " + std::to_string(p.shards) + ", " + std::to_string(p.record_points.size()) +
                       " record points for " + std::to_string(x.session.records.size()) + " records)");
  }

  // [SECTION] The parts belong together: one sweep, split one way, each shard once.
  const SweepPart& first = *in[0].session.part;
  for (const MergeInput& x : in) {
    const SweepPart& p = *x.session.part;
    if (p.sweep_sha256 != first.sweep_sha256 || p.points != first.points)
      throw MergeError("parts of different sweeps: " + in[0].name + " is a part of " + sweep_words(first) +
                       "; " + x.name + " of " + sweep_words(p));
    if (p.shards != first.shards)
      throw MergeError("parts of a sweep split in different ways: " + part_name(in[0]) + ", " + part_name(x) +
                       " (every part of one merge comes from the same --shard I/N with the same N)");
  }
  const int shards = first.shards;
  std::vector<int> owner(size_t(shards) + 1, -1);
  for (size_t i = 0; i < in.size(); ++i) {
    const int shard = in[i].session.part->shard;
    if (owner[size_t(shard)] >= 0)
      throw MergeError("shard " + std::to_string(shard) + " of " + std::to_string(shards) +
                       " is given twice: " + in[size_t(owner[size_t(shard)])].name + " and " + in[i].name);
    owner[size_t(shard)] = int(i);
  }

  MergeResult out;
  // [SECTION] One device, one TileScope, one policy (unless a mix is allowed).
  Values devices, versions, policies;
  for (const MergeInput& x : in) {
    const Session& s = x.session;
    devices.add(s.device.label, x.name);
    versions.add(version_of(s.program_version, s.commit), x.name);
    policies.add(s.part->policy, x.name);
    for (const MeasurementRecord& r : s.records) {
      devices.add(r.device, x.name);
      versions.add(version_of(r.program_version, r.commit), x.name);
      policies.add(r.policy, x.name);
    }
  }
  std::vector<std::string> mixes;
  for (const auto& [what, values] : {std::pair<const char*, const Values*>{"devices", &devices},
                                     {"TileScope versions", &versions},
                                     {"measuring policies", &policies}})
    if (values->mixed()) mixes.push_back(std::string("mixed ") + what + ": " + values->describe());
  if (!mixes.empty()) {
    if (!o.allow_mixed)
      throw MergeError(join(mixes, "\n") +
                       "\n(parts of one table are measured alike; --allow-mixed merges them anyway)");
    for (const std::string& m : mixes) out.warnings.push_back(m + "; merged as asked (--allow-mixed)");
  }

  // [SECTION] Every shard, every point (unless a partial merge is asked for).
  std::vector<int> missing;
  if (shards == 1)
    missing = first.missing_shards;  // a merged session, merged again
  else
    for (int s = 1; s <= shards; ++s)
      if (owner[size_t(s)] < 0) missing.push_back(s);
  std::vector<std::string> lacking;
  if (shards > 1 && !missing.empty()) {
    // The parts given, by shard (their files named while the list stays readable).
    std::string given;
    std::vector<int> present;
    for (int s = 1; s <= shards; ++s)
      if (owner[size_t(s)] >= 0) present.push_back(s);
    if (present.size() <= 8)
      for (int s : present) given += (given.empty() ? "" : ", ") + part_name(in[size_t(owner[size_t(s)])]);
    else
      given = "shards " + describe_shards(present);
    lacking.push_back((missing.size() == 1 ? "shard " : "shards ") + describe_shards(missing) + " of " +
                      std::to_string(shards) + (missing.size() == 1 ? " is" : " are") +
                      " missing (given: " + given + ")");
  }
  bool interrupted = false;
  for (const MergeInput& x : in) {
    const SweepPart& p = *x.session.part;
    interrupted |= p.interrupted;
    const size_t expected = shard_points(size_t(p.points), Shard{p.shard, p.shards}).size();
    const size_t have = p.record_points.size() + p.failed.size();
    if (have < expected && (shards > 1 || p.missing_shards.empty()))
      lacking.push_back(part_name(x) + " holds " + std::to_string(have) + " of its " +
                        std::to_string(expected) + " points" +
                        (p.interrupted ? " (it was interrupted)" : ""));
    else if (shards == 1 && !p.missing_shards.empty())
      lacking.push_back(x.name +
                        " is a partial merge: " + (p.missing_shards.size() == 1 ? "shard " : "shards ") +
                        describe_shards(p.missing_shards) + " of " +
                        std::to_string(p.merged_parts + int(p.missing_shards.size())) + " missing");
  }
  if (!lacking.empty()) {
    if (!o.partial)
      throw MergeError(join(lacking, "\n") +
                       "\n(measure what is missing, or --partial to merge the points there are)");
    for (const std::string& l : lacking) out.warnings.push_back(l + "; merged without it (--partial)");
  }

  // [SECTION] The rows, in the whole sweep's order.
  std::vector<Row> rows;
  for (const MergeInput& x : in) {
    const Session& s = x.session;
    const SweepPart& p = *s.part;
    for (size_t j = 0; j < s.records.size(); ++j) {
      const MeasurementRecord& r = s.records[j];
      rows.push_back({p.record_points[j],
                      bench_point(r, r.tf32 ? s.device.peak_tf32_tflops : s.device.peak_fp32_tflops), &r,
                      nullptr});
    }
    for (const FailedPoint& f : p.failed)
      rows.push_back({f.point, failed_point(f.spec, f.error), nullptr, &f});
  }
  std::sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.point < b.point; });
  // Points in no part or in two (each part was read with its own points checked; two parts of different
  // shards cannot share one).
  for (size_t i = 1; i < rows.size(); ++i)
    if (rows[i].point == rows[i - 1].point)
      throw MergeError("point " + std::to_string(rows[i].point) + " of the sweep is in two parts");
  if (lacking.empty()) {
    // Whole: the points, put together, must be the sweep the parts name.
    std::vector<ProblemSpec> specs;
    specs.reserve(rows.size());
    for (const Row& r : rows) specs.push_back(r.record ? r.record->spec : r.failed->spec);
    if (specs.size() != size_t(first.points) || sweep_sha256(specs) != first.sweep_sha256)
      throw MergeError("the points of the parts are not the sweep they name (" + sweep_words(first) +
                       "): a part was changed after bench wrote it");
  }

  // [SECTION] The table's header and the merged session: the first shard given stands for the device and
  // versions; the times add up; the bandwidth is the mean of the parts'.
  size_t lead = 0;
  for (size_t i = 1; i < in.size(); ++i)
    if (in[i].session.part->shard < in[lead].session.part->shard) lead = i;
  const Session& s0 = in[lead].session;
  const SweepPart& p0 = *s0.part;
  BenchMeta& m = out.meta;
  m = bench_meta(s0.device);
  m.program_version = s0.program_version;
  m.commit = s0.commit;
  if (devices.mixed()) {
    Values names;
    for (const MergeInput& x : in) names.add(x.session.device.name, x.name);
    m.device = join(names.values(), " + ");
  }
  m.policy = join(policies.values(), " | ");
  m.cold = p0.cold_l2;
  m.interleave_reference = p0.interleave_reference;
  m.sweep = p0.sizes;
  m.sweep_sha256 = p0.sweep_sha256;
  m.wave_marks = p0.wave_marks;
  m.date = p0.started;
  double gbs = 0, wall = 0;
  int measured = 0, merged = 0;
  std::string created = s0.created;
  for (const MergeInput& x : in) {
    const SweepPart& p = *x.session.part;
    if (!p.started.empty() && p.started < m.date) m.date = p.started;
    if (!x.session.created.empty() && x.session.created < created) created = x.session.created;
    if (x.session.dram_gbs > 0) {
      gbs += x.session.dram_gbs;
      ++measured;
    }
    wall += p.wall_seconds;
    merged += std::max(p.merged_parts, 1);
  }
  m.dram_gbs = measured ? gbs / measured : 0;
  m.wall_seconds = wall;
  m.interrupted = interrupted;
  m.merged_parts = merged;
  m.missing_shards = missing;
  for (const Row& r : rows) out.table.push_back(r.row);
  relate_to_cublas(out.table);

  Session& ms = out.session;
  ms.label = s0.label;
  ms.created = created;
  ms.program_version = s0.program_version;
  ms.commit = s0.commit;
  ms.device = s0.device;
  ms.dram_gbs = m.dram_gbs;
  SweepPart mp;
  mp.shard = mp.shards = 1;
  mp.sweep = p0.sweep;
  mp.sweep_sha256 = p0.sweep_sha256;
  mp.points = p0.points;
  for (const Row& r : rows) {
    if (r.record) {
      ms.records.push_back(*r.record);
      mp.record_points.push_back(r.point);
    } else {
      mp.failed.push_back(*r.failed);
    }
  }
  mp.policy = m.policy;
  mp.cold_l2 = m.cold;
  mp.interleave_reference = m.interleave_reference;
  mp.sizes = m.sweep;
  mp.started = m.date;
  mp.wall_seconds = m.wall_seconds;
  mp.interrupted = m.interrupted;
  mp.wave_marks = m.wave_marks;
  mp.merged_parts = merged;
  mp.missing_shards = missing;
  ms.part = std::move(mp);
  return out;
}

}  // namespace ts
