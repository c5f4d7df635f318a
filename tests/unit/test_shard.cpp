// A sweep spread over machines: `bench --shard I/N` gives point p to shard (p mod N) + 1, every point to
// exactly one shard; a part carries the whole sweep's identity; `tilescope merge` joins the parts into the
// table one run prints, and refuses parts that do not belong together, naming the files and the values.
// Nothing here depends on the machine's speed: timings are never compared, only which points and what rows.
#include <algorithm>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/engine/sweep.hpp"
#include "core/io/bench.hpp"
#include "core/io/merge.hpp"
#include "core/io/session.hpp"
#include "test_util.hpp"

using namespace ts;
using test::run_cmd;

namespace {

const std::string kBin = TILESCOPE_BIN;

std::string refusal(const std::string& text) {
  try {
    parse_shard(text);
  } catch (const ValidationError& e) {
    return e.what();
  }
  return "(accepted)";
}

// [SECTION] Sessions as `bench --shard I/N --session-out` writes them, without measuring: a sweep of
// `configs` x `sizes`, each point a record with fixed numbers (or a failed point).
struct FakeSweep {
  std::vector<ProblemSpec> points;
  std::string sha;
};

FakeSweep fake_sweep(const std::vector<KernelTile>& configs, const std::vector<int64_t>& sizes) {
  SweepSpec spec;
  spec.sizes = sizes;
  spec.configs = configs;
  FakeSweep s;
  s.points = expand_sweep(spec);
  s.sha = sweep_sha256(s.points);
  return s;
}

DeviceInfo fake_device(const std::string& name = "NVIDIA H100 80GB HBM3") {
  DeviceInfo d;
  d.backend = "cuda";
  d.name = name;
  d.label = name + " (sm_90, 132 SMs)";
  d.sm = 90;
  d.sm_count = 132;
  d.max_sm_clock_mhz = 1980;
  d.peak_fp32_tflops = 66.9;
  d.peak_tf32_tflops = 494;
  return d;
}

RunResult fake_run(const ProblemSpec& p, const DeviceInfo& d, const std::string& policy) {
  RunResult r;
  r.spec = p;
  r.backend = d.backend;
  r.device = d.label;
  r.policy = policy;
  const double ms = 1e-9 * double(p.m) * double(p.n) * double(p.k) + 0.001 * p.tile;
  r.samples_ms = {ms, ms * 1.01, ms * 0.99};
  r.stats = summarize(r.samples_ms);
  r.stop = "converged";
  r.error.passed = p.kernel != "tiled_floork";
  r.error.bad_elements = r.error.passed ? 0 : 17;
  r.error.max_abs_err = 1e-6;
  r.error.tolerance = 1e-3;
  r.tile_m = r.tile_n = p.tile;
  r.date = "2025-01-31T10:00:00Z";
  return r;
}

const std::string kPolicy = MeasurePolicy::bench().describe();

// Part `shard` of `shards` of the sweep: its points measured (those in `fail` failed), none after `stop_at`
// points (an interrupted part).
Session fake_part(const FakeSweep& sw, int shard, int shards, const DeviceInfo& d = fake_device(),
                  const std::string& policy = kPolicy, const std::set<size_t>& fail = {},
                  size_t stop_at = SIZE_MAX) {
  Session s = Session::for_device(d);
  SweepPart part;
  part.shard = shard;
  part.shards = shards;
  part.sweep = "a test sweep";
  part.sweep_sha256 = sw.sha;
  part.points = int64_t(sw.points.size());
  part.policy = policy;
  part.interleave_reference = true;
  part.started = "2025-01-31T10:0" + std::to_string(shard % 10) + ":00Z";
  part.wall_seconds = 10.0 * shard;
  size_t done = 0;
  for (size_t p : shard_points(sw.points.size(), Shard{shard, shards})) {
    if (done++ == stop_at) {
      part.interrupted = true;
      break;
    }
    if (fail.count(p)) {
      part.failed.push_back({int64_t(p), sw.points[p], "CUDA error: out of memory"});
      continue;
    }
    s.add(fake_run(sw.points[p], d, policy));
    part.record_points.push_back(int64_t(p));
  }
  s.dram_gbs = 3000 + shard;
  s.part = part;
  return s;
}

std::vector<MergeInput> all_parts(const FakeSweep& sw, int shards) {
  std::vector<MergeInput> in;
  for (int i = 1; i <= shards; ++i)
    in.push_back({"part" + std::to_string(i) + ".json", fake_part(sw, i, shards)});
  return in;
}

std::string merge_refusal(const std::vector<MergeInput>& in, MergeOptions o = {}) {
  try {
    merge_parts(in, o);
  } catch (const MergeError& e) {
    return e.what();
  }
  return "(merged)";
}

const std::vector<KernelTile> kConfigs = {{"tiled", 8}, {"tiled", 16}, {"cublas", 0}};
const std::vector<int64_t> kSizes = {256, 512, 1024, 2048, 4096};

}  // namespace

// [SECTION] Shards.
TEST(Shard, ParsesIOfNWithIFromOne) {
  EXPECT_EQ(parse_shard("1/4"), (Shard{1, 4}));
  EXPECT_EQ(parse_shard("4/4"), (Shard{4, 4}));
  EXPECT_EQ(parse_shard(" 2 / 3 "), (Shard{2, 3}));
  EXPECT_EQ(parse_shard("1/1"), (Shard{1, 1}));
  EXPECT_EQ(parse_shard("4096/4096"), (Shard{4096, 4096}));
  EXPECT_EQ(parse_shard("2/4").text(), "2/4");
}

TEST(Shard, BadTextIsRefusedSayingWhatIsWrong) {
  EXPECT_NE(refusal("0/4").find("--shard '0/4': shards are numbered from 1 to 4, not from 0"),
            std::string::npos)
      << refusal("0/4");
  EXPECT_NE(refusal("0/4").find("$((SLURM_ARRAY_TASK_ID + 1))/4"), std::string::npos) << refusal("0/4");
  EXPECT_NE(refusal("5/4").find("shard 5 is above the 4 shards"), std::string::npos) << refusal("5/4");
  EXPECT_NE(refusal("1/0").find("N = 0 shards; N must be at least 1"), std::string::npos) << refusal("1/0");
  EXPECT_NE(refusal("1/4097").find("above the limit of 4096 shards"), std::string::npos) << refusal("1/4097");
  EXPECT_NE(refusal("1/99999999999999").find("above the limit of 4096 shards"), std::string::npos);
  for (const char* bad : {"", "3", "1/", "/4", "1/2/3", "1-4", "3 4"})
    EXPECT_NE(refusal(bad).find("' is not I/N (I/N: the I-th of N shards"), std::string::npos)
        << bad << ": " << refusal(bad);
  for (const char* bad : {"-1/4", "1.5/4", "1/+4", "a/b"})
    EXPECT_NE(refusal(bad).find("is not a whole number"), std::string::npos) << bad << ": " << refusal(bad);
  // The Slurm hint in every malformed message (an unset $SLURM_ARRAY_TASK_COUNT gives "3/").
  EXPECT_NE(refusal("3/").find("$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT"), std::string::npos);
}

TEST(Shard, EveryPointGoesToExactlyOneShardInterleaved) {
  for (size_t total : {0, 1, 2, 7, 12, 13, 100})
    for (int n : {1, 2, 3, 4, 5, 13, 20}) {
      SCOPED_TRACE("total " + std::to_string(total) + ", " + std::to_string(n) + " shards");
      std::vector<int> owner(total, 0);
      size_t smallest = SIZE_MAX, largest = 0;
      for (int i = 1; i <= n; ++i) {
        const std::vector<size_t> mine = shard_points(total, Shard{i, n});
        smallest = std::min(smallest, mine.size());
        largest = std::max(largest, mine.size());
        EXPECT_TRUE(std::is_sorted(mine.begin(), mine.end()));
        for (size_t p : mine) {
          ASSERT_LT(p, total);
          EXPECT_EQ(owner[p], 0) << "point " << p << " in two shards";
          owner[p] = i;
          EXPECT_EQ(int(p % size_t(n)) + 1, i);  // interleaved: p mod N
          EXPECT_EQ(shard_of(p, n), i);
        }
      }
      for (size_t p = 0; p < total; ++p) EXPECT_NE(owner[p], 0) << "point " << p << " in no shard";
      EXPECT_LE(largest - smallest, 1u);  // the shards differ by one point at most
    }
  EXPECT_TRUE(shard_points(10, Shard{0, 3}).empty());  // out of range: nothing, never a wrong point
  EXPECT_TRUE(shard_points(10, Shard{4, 3}).empty());
}

TEST(Shard, EachShardGetsSmallAndLargeShapes) {
  const FakeSweep sw = fake_sweep({{"tiled", 8}, {"tiled", 16}}, {64, 128, 256, 512, 1024, 2048});
  for (int i = 1; i <= 3; ++i) {
    std::set<int64_t> sizes;
    for (size_t p : shard_points(sw.points.size(), Shard{i, 3})) sizes.insert(sw.points[p].n);
    EXPECT_EQ(*sizes.begin(), i == 3 ? 128 : 64) << "shard " << i;
    EXPECT_GE(*sizes.rbegin(), 1024) << "shard " << i;
  }
}

TEST(Shard, TheSweepsIdentityFollowsItsPointsInOrder) {
  const FakeSweep sw = fake_sweep(kConfigs, kSizes);
  EXPECT_EQ(sw.sha.size(), 64u);
  EXPECT_EQ(sweep_sha256(sw.points), sw.sha);
  std::vector<ProblemSpec> changed = sw.points;
  std::swap(changed[0], changed[1]);
  EXPECT_NE(sweep_sha256(changed), sw.sha);  // the order is the table's
  changed = sw.points;
  changed[3].tile = 32;
  EXPECT_NE(sweep_sha256(changed), sw.sha);
  changed = sw.points;
  changed[3].seed = 2;
  EXPECT_NE(sweep_sha256(changed), sw.sha);
  changed = sw.points;
  changed.pop_back();
  EXPECT_NE(sweep_sha256(changed), sw.sha);
}

// [SECTION] A part in a session file.
TEST(SweepPartFile, RoundTripsAndIsCheckedAgainstTheRecords) {
  test::TempDir dir;
  const FakeSweep sw = fake_sweep(kConfigs, kSizes);
  Session s = fake_part(sw, 2, 4, fake_device(), kPolicy, {5});
  s.part->wave_marks.push_back({"tiled", 8, 1100, 2});
  save_session(dir.file("p.json"), s, false);
  const Session back = load_session(dir.file("p.json"));
  ASSERT_TRUE(back.part);
  EXPECT_EQ(to_json(back), to_json(s));
  EXPECT_EQ(back.part->record_points, (std::vector<int64_t>{1, 9, 13}));
  ASSERT_EQ(back.part->failed.size(), 1u);
  EXPECT_EQ(back.part->failed[0].point, 5);
  EXPECT_EQ(back.part->failed[0].spec.kernel, sw.points[5].kernel);
  EXPECT_EQ(back.records[0].error.bad_elements, 0);

  // A point of another shard, one twice, and record_points that do not go with the records.
  auto refused = [&](const std::function<void(nlohmann::json&)>& change) {
    nlohmann::json j = to_json(s);
    change(j);
    { std::ofstream(dir.file("bad.json")) << j.dump(); }
    try {
      load_session(dir.file("bad.json"));
    } catch (const SessionError& e) {
      return std::string(e.what());
    }
    return std::string("(loaded)");
  };
  EXPECT_NE(refused([](nlohmann::json& j) {
              j["sweep_part"]["record_points"][0] = 2;
            }).find("not of shard 2 of 4, or there twice"),
            std::string::npos);
  EXPECT_NE(
      refused([](nlohmann::json& j) { j["sweep_part"]["record_points"][1] = 1; }).find("or there twice"),
      std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) {
              j["sweep_part"]["record_points"].erase(0);
            }).find("'record_points' names 2 points but the session has 3 records"),
            std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) {
              j["sweep_part"]["shard"] = 5;
            }).find("'shard' = 5 is above 'shards' = 4"),
            std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) {
              j["sweep_part"]["sweep_sha256"] = "xyz";
            }).find("'sweep_sha256' is not 64 lower-case hex digits"),
            std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) {
              j["sweep_part"]["failed"][0]["m"] = 0;
            }).find("sweep_part.failed[0]: 'm' = 0 is outside"),
            std::string::npos);
  // A session that gains a point is no longer that part.
  Session grown = back;
  grown.add(fake_run(sw.points[0], fake_device(), kPolicy));
  EXPECT_FALSE(grown.part);
}

// [SECTION] Merging.
TEST(Merge, JoinsThePartsInTheWholeSweepsOrderWhateverOrderTheyAreGiven) {
  const FakeSweep sw = fake_sweep(kConfigs, kSizes);
  std::vector<MergeInput> in = all_parts(sw, 4);
  std::reverse(in.begin(), in.end());
  std::swap(in[0], in[2]);
  const MergeResult m = merge_parts(in);
  EXPECT_TRUE(m.warnings.empty());
  ASSERT_EQ(m.table.size(), sw.points.size());
  ASSERT_EQ(m.session.records.size(), sw.points.size());
  for (size_t p = 0; p < sw.points.size(); ++p) {
    EXPECT_EQ(m.table[p].kernel, sw.points[p].kernel) << p;
    EXPECT_EQ(m.table[p].tile, sw.points[p].tile) << p;
    EXPECT_EQ(m.table[p].n, sw.points[p].n) << p;
    EXPECT_EQ(m.session.records[p].spec.n, sw.points[p].n) << p;
    EXPECT_EQ(m.session.part->record_points[p], int64_t(p));
  }
  // Each row as bench makes it from its record, % of cuBLAS related over the whole table.
  const BenchPoint expected = bench_point(m.session.records[4], fake_device().peak_fp32_tflops);
  EXPECT_EQ(m.table[4].stats.median, expected.stats.median);
  EXPECT_EQ(m.table[4].pct_peak, expected.pct_peak);
  EXPECT_EQ(m.table[0].pct_cublas_from, "separate");  // tiled T=8 at 256 beside cublas at 256 (another part)
  EXPECT_GT(m.table[0].pct_cublas, 0);
  EXPECT_EQ(m.meta.merged_parts, 4);
  EXPECT_EQ(m.meta.shards, 0);
  EXPECT_TRUE(m.meta.missing_shards.empty());
  EXPECT_EQ(m.meta.sweep_sha256, sw.sha);
  EXPECT_EQ(m.meta.wall_seconds, 10.0 + 20 + 30 + 40);            // the parts' times add up
  EXPECT_EQ(m.meta.dram_gbs, (3001.0 + 3002 + 3003 + 3004) / 4);  // the mean of the parts'
  EXPECT_EQ(m.meta.date, "2025-01-31T10:01:00Z");                 // the first part's start
  EXPECT_EQ(m.meta.policy, kPolicy);
  EXPECT_EQ(m.meta.device, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(m.session.part->shard, 1);
  EXPECT_EQ(m.session.part->shards, 1);
  EXPECT_EQ(m.session.part->merged_parts, 4);

  // The merged session is a whole part: saved, read back and merged alone, it gives the same table.
  test::TempDir dir;
  save_session(dir.file("merged.json"), m.session, false);
  const MergeResult again = merge_parts({{"merged.json", load_session(dir.file("merged.json"))}});
  EXPECT_EQ(format_csv(again.meta, again.table), format_csv(m.meta, m.table));
}

TEST(Merge, FailedPointsKeepTheirPlaceAndTheirMessage) {
  const FakeSweep sw = fake_sweep(kConfigs, kSizes);
  std::vector<MergeInput> in = all_parts(sw, 3);
  in[1].session = fake_part(sw, 2, 3, fake_device(), kPolicy, {4, 7});
  const MergeResult m = merge_parts(in);
  ASSERT_EQ(m.table.size(), sw.points.size());
  EXPECT_EQ(m.table[4].stop, "failed");
  EXPECT_EQ(m.table[4].error, "CUDA error: out of memory");
  EXPECT_EQ(m.table[4].n, sw.points[4].n);
  EXPECT_EQ(m.table[7].stop, "failed");
  EXPECT_EQ(m.session.records.size(), sw.points.size() - 2);
  EXPECT_EQ(m.session.part->failed.size(), 2u);
}

TEST(Merge, APartThatFailedVerificationSaysHowManyElementsAsBenchDoes) {
  const FakeSweep sw = fake_sweep({{"tiled_floork", 16}}, {100});
  test::TempDir dir;
  save_session(dir.file("p.json"), fake_part(sw, 1, 1), false);  // the count kept in the file
  const MergeResult m = merge_parts({{"p.json", load_session(dir.file("p.json"))}});
  ASSERT_EQ(m.table.size(), 1u);
  EXPECT_FALSE(m.table[0].verified);
  EXPECT_EQ(m.table[0].error, "17 elements over the tolerance");
}

TEST(Merge, RefusesMixedDevicesVersionsAndPoliciesUnlessAsked) {
  const FakeSweep sw = fake_sweep(kConfigs, kSizes);
  {
    std::vector<MergeInput> in = all_parts(sw, 3);
    in[2].session = fake_part(sw, 3, 3, fake_device("NVIDIA A100-SXM4-80GB"));
    const std::string why = merge_refusal(in);
    EXPECT_NE(why.find("mixed devices: 'NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)' (part1.json, part2.json); "
                       "'NVIDIA A100-SXM4-80GB (sm_90, 132 SMs)' (part3.json)"),
              std::string::npos)
        << why;
    EXPECT_NE(why.find("--allow-mixed merges them anyway"), std::string::npos) << why;
    MergeOptions allow;
    allow.allow_mixed = true;
    const MergeResult m = merge_parts(in, allow);
    ASSERT_EQ(m.warnings.size(), 1u);
    EXPECT_NE(m.warnings[0].find("mixed devices"), std::string::npos);
    EXPECT_EQ(m.meta.device, "NVIDIA H100 80GB HBM3 + NVIDIA A100-SXM4-80GB");
    EXPECT_EQ(m.table.size(), sw.points.size());
  }
  {
    // Another version, or the same version built from another commit.
    std::vector<MergeInput> in = all_parts(sw, 3);
    const std::string v = in[0].session.program_version, c = in[0].session.commit;
    in[1].session.program_version = "0.0.9";
    for (auto& r : in[1].session.records) r.program_version = "0.0.9";
    in[2].session.commit = "abc123";
    for (auto& r : in[2].session.records) r.commit = "abc123";
    const std::string why = merge_refusal(in);
    EXPECT_NE(why.find("mixed TileScope versions: '" + v + " (" + c + ")' (part1.json); '0.0.9 (" + c +
                       ")' (part2.json); '" + v + " (abc123)' (part3.json)"),
              std::string::npos)
        << why;
  }
  {
    std::vector<MergeInput> in = all_parts(sw, 3);
    MeasurePolicy cold = MeasurePolicy::bench();
    cold.cold_l2 = true;
    in[0].session = fake_part(sw, 1, 3, fake_device(), cold.describe());
    const std::string why = merge_refusal(in);
    EXPECT_NE(why.find("mixed measuring policies: '" + cold.describe() + "' (part1.json); '" + kPolicy +
                       "' (part2.json, part3.json)"),
              std::string::npos)
        << why;
    MergeOptions allow;
    allow.allow_mixed = true;
    EXPECT_EQ(merge_parts(in, allow).meta.policy, cold.describe() + " | " + kPolicy);
  }
}

TEST(Merge, RefusesPartsOfDifferentSweepsOrSplits) {
  const FakeSweep sw = fake_sweep(kConfigs, kSizes);
  const FakeSweep other = fake_sweep(kConfigs, {256, 512, 1024, 2048, 8192});
  std::vector<MergeInput> in = all_parts(sw, 2);
  in[1] = {"other.json", fake_part(other, 2, 2)};
  const std::string why = merge_refusal(in);
  EXPECT_NE(why.find("parts of different sweeps: part1.json is a part of 'a test sweep', 15 points, sweep " +
                     sw.sha.substr(0, 12) + "; other.json of 'a test sweep', 15 points, sweep " +
                     other.sha.substr(0, 12)),
            std::string::npos)
      << why;
  in = all_parts(sw, 2);
  in.push_back({"three.json", fake_part(sw, 3, 3)});
  EXPECT_NE(merge_refusal(in).find("parts of a sweep split in different ways: part1.json (shard 1 of 2), "
                                   "three.json (shard 3 of 3)"),
            std::string::npos)
      << merge_refusal(in);
  EXPECT_NE(merge_refusal({}).find("nothing to merge"), std::string::npos);
  in = all_parts(sw, 2);
  in[1].session.part.reset();
  EXPECT_NE(merge_refusal(in).find("part2.json: not a part of a bench sweep (it has no 'sweep_part'"),
            std::string::npos)
      << merge_refusal(in);
}

TEST(Merge, RefusesAShardTwiceAndNamesTheMissingOnes) {
  const FakeSweep sw = fake_sweep(kConfigs, kSizes);
  std::vector<MergeInput> in = all_parts(sw, 4);
  in.push_back({"again.json", fake_part(sw, 3, 4)});
  EXPECT_NE(merge_refusal(in).find("shard 3 of 4 is given twice: part3.json and again.json"),
            std::string::npos)
      << merge_refusal(in);

  in = all_parts(sw, 4);
  in.erase(in.begin() + 1);
  std::string why = merge_refusal(in);
  EXPECT_NE(why.find("shard 2 of 4 is missing (given: part1.json (shard 1 of 4), part3.json (shard 3 of 4), "
                     "part4.json (shard 4 of 4))"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("--partial to merge the points there are"), std::string::npos) << why;
  in.pop_back();
  EXPECT_NE(merge_refusal(in).find("shards 2, 4 of 4 are missing"), std::string::npos) << merge_refusal(in);

  // Partial: the points there are, in order, and the table says which shards it lacks.
  MergeOptions partial;
  partial.partial = true;
  const MergeResult m = merge_parts(in, partial);
  EXPECT_EQ(m.meta.missing_shards, (std::vector<int>{2, 4}));
  EXPECT_EQ(m.table.size(), shard_points(15, {1, 4}).size() + shard_points(15, {3, 4}).size());
  for (size_t i = 1; i < m.session.part->record_points.size(); ++i)
    EXPECT_LT(m.session.part->record_points[i - 1], m.session.part->record_points[i]);
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(
      format_markdown(m.meta, m.table).find("Shards 2, 4 are missing: their points are not in the table."),
      std::string::npos);
  EXPECT_NE(format_csv(m.meta, m.table).find("\n# missing_shards,2 4\n"), std::string::npos);
  // The partial merge, merged again alone, is still partial.
  EXPECT_NE(merge_refusal({{"merged.json", m.session}})
                .find("merged.json is a partial merge: shards 2, 4 of 4 missing"),
            std::string::npos)
      << merge_refusal({{"merged.json", m.session}});
}

TEST(Merge, RefusesAnInterruptedPartUnlessPartial) {
  const FakeSweep sw = fake_sweep(kConfigs, kSizes);
  std::vector<MergeInput> in = all_parts(sw, 3);
  in[1].session = fake_part(sw, 2, 3, fake_device(), kPolicy, {}, 2);
  const std::string why = merge_refusal(in);
  EXPECT_NE(why.find("part2.json (shard 2 of 3) holds 2 of its 5 points (it was interrupted)"),
            std::string::npos)
      << why;
  MergeOptions partial;
  partial.partial = true;
  const MergeResult m = merge_parts(in, partial);
  EXPECT_EQ(m.table.size(), sw.points.size() - 3);
  EXPECT_TRUE(m.meta.interrupted);
}

TEST(Merge, RefusesPartsWhosePointsAreNotTheSweepTheyName) {
  const FakeSweep sw = fake_sweep(kConfigs, kSizes);
  std::vector<MergeInput> in = all_parts(sw, 3);
  in[2].session.records[0].spec.n = 300;  // changed after bench wrote it
  EXPECT_NE(merge_refusal(in).find("the points of the parts are not the sweep they name"), std::string::npos)
      << merge_refusal(in);
}

TEST(Merge, ShardRangesAreShortenedInMessages) {
  EXPECT_EQ(describe_shards({2}), "2");
  EXPECT_EQ(describe_shards({2, 3}), "2, 3");
  EXPECT_EQ(describe_shards({1, 2, 3, 5, 7, 8, 9, 10}), "1-3, 5, 7-10");
}

// [SECTION] The commands, on the CPU backend.
namespace {

std::string content(const std::string& path) {
  std::ifstream f(path);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// A small sweep, three samples a point (their number does not depend on the machine's speed).
const std::string kSweep =
    "bench --backend cpu --kernels tiled --tiles 8,16 --sizes 16:48:16 --ragged 1 --min-samples 3 "
    "--max-samples 3 --min-time 0.001";

// What a row says besides its timings.
nlohmann::json row_but_timings(const nlohmann::json& p) {
  nlohmann::json r;
  for (const char* key : {"kernel", "tile", "precision", "m", "n", "k", "verified", "max_abs_err",
                          "tolerance", "samples", "error", "blocks_per_sm", "waves", "intensity_est",
                          "pct_cublas", "pct_cublas_from", "reference", "reference_note"})
    r[key] = p.at(key);
  return r;
}

}  // namespace

TEST(CliShard, ThreeShardsMergedGiveTheTableOfOneRun) {
  test::TempDir dir;
  auto whole = run_cmd(kBin + " " + kSweep + " --format json --out " + dir.file("whole.json") +
                       " --session-out " + dir.file("whole-session.json"));
  ASSERT_EQ(whole.code, 0) << whole.output;
  std::string parts;
  for (int i = 1; i <= 3; ++i) {
    const std::string n = std::to_string(i);
    auto r = run_cmd(kBin + " " + kSweep + " --shard " + n + "/3 --format json --out " +
                     dir.file("table" + n + ".json") + " --session-out " + dir.file("part" + n + ".json"));
    ASSERT_EQ(r.code, 0) << r.output;
    EXPECT_NE(r.output.find("shard " + n + "/3: 4 of the 12 points"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("[4/4]"), std::string::npos) << r.output;
    // The part's table says which part of which sweep it is.
    const auto t = nlohmann::json::parse(content(dir.file("table" + n + ".json")));
    EXPECT_EQ(t["meta"]["shard"]["index"], i);
    EXPECT_EQ(t["meta"]["shard"]["count"], 3);
    ASSERT_EQ(t["points"].size(), 4u);
    parts = " " + dir.file("part" + n + ".json") + parts;  // given in reverse order
  }
  auto merged = run_cmd(kBin + " merge" + parts + " --format json --out " + dir.file("merged.json") +
                        " --session-out " + dir.file("merged-session.json"));
  ASSERT_EQ(merged.code, 0) << merged.output;
  EXPECT_NE(merged.output.find("3 parts of sweep"), std::string::npos) << merged.output;
  EXPECT_NE(merged.output.find("12 of its 12 points"), std::string::npos) << merged.output;

  const auto w = nlohmann::json::parse(content(dir.file("whole.json")));
  const auto m = nlohmann::json::parse(content(dir.file("merged.json")));
  ASSERT_EQ(w["points"].size(), 12u);
  ASSERT_EQ(m["points"].size(), 12u);
  for (size_t i = 0; i < 12; ++i)
    EXPECT_EQ(row_but_timings(m["points"][i]), row_but_timings(w["points"][i])) << "row " << i;
  EXPECT_EQ(m["meta"]["sweep_sha256"], w["meta"]["sweep_sha256"]);
  EXPECT_EQ(m["meta"]["sweep"], w["meta"]["sweep"]);
  EXPECT_EQ(m["meta"]["policy"], w["meta"]["policy"]);
  EXPECT_EQ(m["meta"]["device"], w["meta"]["device"]);
  EXPECT_EQ(m["meta"]["tilescope"], w["meta"]["tilescope"]);
  EXPECT_EQ(m["meta"]["merged_parts"], 3);
  EXPECT_TRUE(m["meta"]["shard"].is_null());
  EXPECT_TRUE(w["meta"]["shard"].is_null());

  // The sessions: the same points in the same order.
  const Session ws = load_session(dir.file("whole-session.json"));
  const Session ms = load_session(dir.file("merged-session.json"));
  ASSERT_EQ(ms.records.size(), ws.records.size());
  for (size_t i = 0; i < ws.records.size(); ++i) {
    EXPECT_EQ(ms.records[i].spec.kernel, ws.records[i].spec.kernel);
    EXPECT_EQ(ms.records[i].spec.tile, ws.records[i].spec.tile);
    EXPECT_EQ(ms.records[i].spec.n, ws.records[i].spec.n);
  }
  ASSERT_TRUE(ws.part);
  EXPECT_EQ(ws.part->shards, 1);  // a whole run is part 1 of 1
  EXPECT_EQ(ws.part->sweep_sha256, ms.part->sweep_sha256);

  // The same table in every format: the Markdown and CSV rows as many, in the same order.
  for (const char* f : {"md", "csv"}) {
    auto again = run_cmd(kBin + " merge" + parts + " --format " + f);
    ASSERT_EQ(again.code, 0) << again.output;
    size_t rows = 0;
    std::istringstream lines(again.output);
    for (std::string line; std::getline(lines, line);)
      rows += line.rfind("| tiled |", 0) == 0 || line.rfind("tiled,", 0) == 0 ? 1 : 0;
    EXPECT_EQ(rows, 12u) << f << "\n" << again.output;
  }
  // A whole run's session prints alone as the same table too.
  auto alone = run_cmd(kBin + " merge " + dir.file("whole-session.json") + " --format json --out " +
                       dir.file("alone.json"));
  ASSERT_EQ(alone.code, 0) << alone.output;
  const auto a = nlohmann::json::parse(content(dir.file("alone.json")));
  for (size_t i = 0; i < 12; ++i) EXPECT_EQ(row_but_timings(a["points"][i]), row_but_timings(w["points"][i]));
}

TEST(CliShard, BadShardsExitWithTwoBeforeAnyDeviceIsOpened) {
  struct Case {
    std::string shard, words;
  };
  // No --backend: the default (cuda) is not opened on a machine without a GPU before the refusal.
  for (const Case& c :
       {Case{"0/3", "shards are numbered from 1 to 3, not from 0"},
        Case{"4/3", "shard 4 is above the 3 shards"}, Case{"3/0", "N = 0 shards"},
        Case{"two/3", "is not a whole number"}, Case{"3", "is not I/N"}, Case{"\"\"", "--shard is empty"}}) {
    auto r = run_cmd(kBin + " bench --kernels tiled --shapes 16 --shard " + c.shard);
    EXPECT_EQ(r.code, 2) << c.shard << "\n" << r.output;
    EXPECT_NE(r.output.find(c.words), std::string::npos) << c.shard << "\n" << r.output;
  }
  // More shards than points: an empty part, which merge accepts.
  test::TempDir dir;
  std::string parts;
  for (int i = 1; i <= 3; ++i) {
    const std::string n = std::to_string(i);
    auto r = run_cmd(kBin +
                     " bench --backend cpu --kernels tiled --tiles 8 --shapes 16,24 --min-samples 3 "
                     "--max-samples 3 --shard " +
                     n + "/3 --format csv --session-out " + dir.file("p" + n + ".json"));
    ASSERT_EQ(r.code, 0) << r.output;
    if (i == 3) EXPECT_NE(r.output.find("this shard has no points"), std::string::npos) << r.output;
    parts += " " + dir.file("p" + n + ".json");
  }
  auto m = run_cmd(kBin + " merge --format csv" + parts);
  ASSERT_EQ(m.code, 0) << m.output;
  EXPECT_NE(m.output.find("\ntiled,8,fp32,16,16,16,"), std::string::npos) << m.output;
  EXPECT_NE(m.output.find("\ntiled,8,fp32,24,24,24,"), std::string::npos) << m.output;
}

TEST(CliMerge, RefusalsExitWithTwoAndNameTheFiles) {
  test::TempDir dir;
  std::vector<std::string> part(4);
  for (int i = 1; i <= 3; ++i) {
    part[size_t(i)] = dir.file("part" + std::to_string(i) + ".json");
    auto r = run_cmd(kBin +
                     " bench --backend cpu --kernels tiled --tiles 8 --shapes 16,24,32 --min-samples 3 "
                     "--max-samples 3 --format csv --shard " +
                     std::to_string(i) + "/3 --session-out " + part[size_t(i)]);
    ASSERT_EQ(r.code, 0) << r.output;
  }
  auto other = run_cmd(kBin +
                       " bench --backend cpu --kernels tiled --tiles 16 --shapes 16,24,32 --min-samples 3 "
                       "--max-samples 3 --format csv --shard 2/3 --session-out " +
                       dir.file("other.json"));
  ASSERT_EQ(other.code, 0) << other.output;
  // A part whose device was another: the session's and its points' labels edited.
  nlohmann::json j = nlohmann::json::parse(content(part[2]));
  j["device"]["label"] = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  for (auto& r : j["records"]) r["device"] = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  { std::ofstream(dir.file("h100.json")) << j.dump(); }
  // The window's session, which is no part of a sweep.
  DeviceInfo d;
  d.backend = "cpu";
  d.name = d.label = "CPU";
  save_session(dir.file("window.json"), Session::for_device(d), false);
  { std::ofstream(dir.file("text.json")) << "not json"; }
  { std::ofstream(dir.file("exists.md")) << "old"; }

  const std::string p1 = part[1], p2 = part[2], p3 = part[3];
  struct Case {
    std::string args, words;
  };
  for (const Case& c : {
           Case{p1 + " " + p2 + " " + p2 + " " + p3, "shard 2 of 3 is given twice: " + p2 + " and " + p2},
           Case{p1 + " " + p3, "shard 2 of 3 is missing (given: " + p1 + " (shard 1 of 3), " + p3},
           Case{p1 + " " + dir.file("other.json") + " " + p3,
                "parts of different sweeps: " + p1 + " is a part of 'tiled T=8; shapes 16,24,32'"},
           Case{p1 + " " + dir.file("h100.json") + " " + p3,
                "mixed devices: '" + load_session(p1).device.label + "' (" + p1 + ", " + p3 +
                    "); 'NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)' (" + dir.file("h100.json") + ")"},
           Case{dir.file("window.json"), dir.file("window.json") + ": not a part of a bench sweep"},
           Case{dir.file("text.json"), dir.file("text.json") + ": not JSON"},
           Case{dir.file("nothing.json"), dir.file("nothing.json") + ": no such file"},
           Case{dir.path().string(), dir.path().string() + ": not a regular file"},
           Case{p1 + " " + p2 + " " + p3 + " --format xml", "--format 'xml' is not one of md, csv, json"},
           Case{p1 + " " + p2 + " " + p3 + " --out " + dir.file("exists.md"), "already exists"},
           Case{p1 + " " + p2 + " " + p3 + " --out " + dir.file("x") + " --session-out " + dir.file("x"),
                "--out and --session-out are the same file"},
           Case{"", "sessions is required"},
       }) {
    auto r = run_cmd(kBin + " merge " + c.args);
    EXPECT_EQ(r.code, 2) << c.args << "\n" << r.output;
    EXPECT_NE(r.output.find(c.words), std::string::npos) << c.args << "\n" << r.output;
  }
  EXPECT_EQ(content(dir.file("exists.md")), "old");  // nothing replaced without --force

  // What --allow-mixed and --partial let through is said, and the table says what it lacks.
  auto mixed = run_cmd(kBin + " merge --allow-mixed " + p1 + " " + dir.file("h100.json") + " " + p3);
  EXPECT_EQ(mixed.code, 0) << mixed.output;
  EXPECT_NE(mixed.output.find("mixed devices"), std::string::npos) << mixed.output;
  EXPECT_NE(mixed.output.find("merged as asked (--allow-mixed)"), std::string::npos) << mixed.output;
  auto partial = run_cmd(kBin + " merge --partial " + p1 + " " + p3 + " --out " + dir.file("partial.md"));
  EXPECT_EQ(partial.code, 0) << partial.output;
  EXPECT_NE(content(dir.file("partial.md")).find("Shard 2 is missing: its points are not in the table."),
            std::string::npos)
      << content(dir.file("partial.md"));
  auto forced =
      run_cmd(kBin + " merge --force " + p1 + " " + p2 + " " + p3 + " --out " + dir.file("exists.md"));
  EXPECT_EQ(forced.code, 0) << forced.output;
  EXPECT_NE(content(dir.file("exists.md")).find("Merged from 3 parts of sweep"), std::string::npos);
}
