// The traced launch as a Chrome trace event JSON (Perfetto, chrome://tracing): the export, the format's
// checks, and the reader that gives the trace back exactly.
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <fstream>
#include <iterator>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "core/engine/problem.hpp"
#include "core/engine/schedule.hpp"
#include "core/io/schedule_trace.hpp"
#include "streamk_sample.hpp"
#include "test_util.hpp"

using namespace ts;
using nlohmann::json;

namespace {

// Stamps as %globaltimer gives them: large, and not multiples of 1000.
constexpr uint64_t kT0 = 1'712'345'678'901'234'567ull;

// Two SMs, 2 x 3 tiles of 32 x 32 on a 50 x 70 C: SM 0 runs tiles 0, 1, 2 one after another (each ends as the
// next starts), SM 1 runs 3 and 4 at once (partly overlapping), then 5.
TileTrace plain_trace() {
  TileTrace t;
  t.grid_x = 3;
  t.grid_y = 2;
  t.tile_m = t.tile_n = 32;
  t.sm_count = 4;
  t.records = {{kT0 + 100, kT0 + 200, 0, 0}, {kT0 + 200, kT0 + 301, 0, 0}, {kT0 + 301, kT0 + 407, 0, 0},
               {kT0 + 103, kT0 + 250, 1, 0}, {kT0 + 121, kT0 + 263, 1, 0}, {kT0 + 263, kT0 + 333, 1, 0}};
  t.traced_ms = 0.0125;
  t.plain_ms = 0.011;
  t.timer_resolution_ns = timer_resolution(t);
  return t;
}
ScheduleTraceContext plain_context() {
  return {"tiled", 32, 50, 70, 90, "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"};
}

// Split-K: 2 tiles of 128 x 128, K = 100 in 3 slices of K steps of 16 (7 steps: 2, 2 and 3 of them).
TileTrace splitk_trace() {
  TileTrace t;
  t.grid_x = 2;
  t.grid_y = 1;
  t.grid_z = 3;
  t.k_step = 16;
  t.tile_m = t.tile_n = 128;
  t.sm_count = 132;
  t.records = {{kT0 + 5, kT0 + 905, 10, 0},  {kT0 + 7, kT0 + 811, 11, 0},   {kT0 + 9, kT0 + 1201, 12, 0},
               {kT0 + 11, kT0 + 777, 13, 0}, {kT0 + 13, kT0 + 1500, 14, 0}, {kT0 + 15, kT0 + 999, 131, 0}};
  return t;
}

// A cluster: 2 tiles of 256 x 256 (N = 400), each made by 2 blocks of 128 columns.
TileTrace cluster_trace() {
  TileTrace t = splitk_trace();
  t.grid_z = 2;
  t.k_step = 0;
  t.z_splits_columns = true;
  t.tile_m = t.tile_n = 256;
  t.records.resize(4);
  return t;
}

const json* block_event(const json& doc, const std::string& name) {
  for (const json& e : doc["traceEvents"])
    if (e["ph"] == "X" && e["name"] == name) return &e;
  return nullptr;
}

void expect_same(const TileTrace& a, const TileTrace& b) {
  EXPECT_EQ(a.grid_x, b.grid_x);
  EXPECT_EQ(a.grid_y, b.grid_y);
  EXPECT_EQ(a.grid_z, b.grid_z);
  EXPECT_EQ(a.z_splits_columns, b.z_splits_columns);
  EXPECT_EQ(a.k_step, b.k_step);
  EXPECT_EQ(a.tile_m, b.tile_m);
  EXPECT_EQ(a.tile_n, b.tile_n);
  EXPECT_EQ(a.sm_count, b.sm_count);
  EXPECT_EQ(a.traced_ms, b.traced_ms);
  EXPECT_EQ(a.plain_ms, b.plain_ms);
  EXPECT_EQ(a.timer_resolution_ns, b.timer_resolution_ns);
  EXPECT_EQ(a.k_segments, b.k_segments);
  ASSERT_EQ(a.records.size(), b.records.size());
  for (size_t i = 0; i < a.records.size(); ++i) {
    EXPECT_EQ(a.records[i].start_ns, b.records[i].start_ns) << "block " << i;
    EXPECT_EQ(a.records[i].end_ns, b.records[i].end_ns) << "block " << i;
    EXPECT_EQ(a.records[i].smid, b.records[i].smid) << "block " << i;
    EXPECT_EQ(a.records[i].k_first, b.records[i].k_first) << "block " << i;
  }
}

// The stream-K sample (streamk_sample.hpp) at %globaltimer's scale: its present records moved by kT0.
TileTrace streamk_at_kt0() {
  TileTrace t = test::streamk_trace();
  for (TileRecord& r : t.records)
    if (present(r)) r.start_ns += kT0, r.end_ns += kT0;
  t.timer_resolution_ns = timer_resolution(t);
  return t;
}
ScheduleTraceContext streamk_context() {
  return {"streamk", 128, 384, 512, 4096, "H100"};
}

// The first problem the reader finds ("" when it reads the document).
std::string reader_refuses(const json& doc) {
  try {
    read_schedule_trace_json(doc);
  } catch (const ValidationError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(ScheduleTrace, OneProcessOneTrackPerSmOneEventPerBlockAndTheResidentBlocksCounter) {
  const TileTrace t = plain_trace();
  const json doc = schedule_trace_json(t, plain_context());
  EXPECT_EQ(check_trace_event_json(doc), "");
  EXPECT_EQ(doc["displayTimeUnit"], "ns");
  // Only the top-level keys Perfetto reads, displayTimeUnit first in the text (Perfetto looks for it there).
  const std::string text = schedule_trace_text(t, plain_context());
  EXPECT_EQ(text.rfind("{\"displayTimeUnit\":\"ns\"", 0), 0u) << text.substr(0, 80);
  std::set<std::string> threads;
  int blocks = 0, counters = 0, max_level = 0;
  std::string process;
  for (const json& e : doc["traceEvents"]) {
    EXPECT_EQ(e["pid"], 1);
    if (e["ph"] == "M" && e["name"] == "thread_name") threads.insert(e["args"]["name"].get<std::string>());
    if (e["ph"] == "M" && e["name"] == "process_name") process = e["args"]["name"].get<std::string>();
    blocks += e["ph"] == "X";
    if (e["ph"] == "C") {
      ++counters;
      max_level = std::max(max_level, e["args"]["blocks"].get<int>());
    }
  }
  EXPECT_EQ(process, "tiled tile 32, 50 x 70 x 90 (M x N x K) on NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)");
  // Every SM of the device has its track; SM 1 holds two blocks at once, so it has a second lane.
  EXPECT_EQ(threads, (std::set<std::string>{"SM 0", "SM 1", "SM 1 #2", "SM 2", "SM 3"}));
  EXPECT_EQ(blocks, 6);
  EXPECT_EQ(counters, int(concurrency_curve(t).size()));
  EXPECT_EQ(max_level, 3);
  // Tile (1, 2): rows 32..50 (clipped to M), columns 64..70 (clipped to N), the whole of K; times from the
  // first start (100 ns after kT0): 263 - 100 = 163 ns, for 70 ns.
  const json* e = block_event(doc, "tile (row 1, col 2)");
  ASSERT_TRUE(e);
  EXPECT_EQ(e->at("cat"), "tile");
  const json& a = e->at("args");
  EXPECT_EQ(a["tile_row"], 1);
  EXPECT_EQ(a["tile_col"], 2);
  EXPECT_EQ(a["row_begin"], 32);
  EXPECT_EQ(a["row_end"], 50);
  EXPECT_EQ(a["col_begin"], 64);
  EXPECT_EQ(a["col_end"], 70);
  EXPECT_EQ(a["k_slice"], 0);
  EXPECT_EQ(a["k_begin"], 0);
  EXPECT_EQ(a["k_end"], 90);
  EXPECT_EQ(a["sm"], 1);
  EXPECT_EQ(a["start_ns"].get<uint64_t>(), kT0 + 263);
  EXPECT_EQ(a["end_ns"].get<uint64_t>(), kT0 + 333);
  EXPECT_DOUBLE_EQ(a["duration_us"].get<double>(), 0.07);
  EXPECT_NEAR(e->at("ts").get<double>(), 0.163, 1e-12);
  EXPECT_EQ(int64_t(e->at("ts").get<double>() * 1000), 163) << "read as Perfetto reads it";
  EXPECT_EQ(int64_t(e->at("dur").get<double>() * 1000), 70);
  // Tiles 3 and 4 overlap on SM 1: different tracks of it.
  const json* t3 = block_event(doc, "tile (row 1, col 0)");
  const json* t4 = block_event(doc, "tile (row 1, col 1)");
  ASSERT_TRUE(t3 && t4);
  EXPECT_NE(t3->at("tid"), t4->at("tid"));
  EXPECT_EQ(t3->at("tid").get<int>() / 2, 1);  // tid = sm * lanes + lane, 2 lanes
  EXPECT_EQ(t4->at("tid").get<int>() / 2, 1);
}

TEST(ScheduleTrace, ReadBackEqualsTheTraceExactly) {
  for (const TileTrace& t : {plain_trace(), splitk_trace(), cluster_trace()}) {
    const ScheduleTraceContext c = plain_context();
    const std::string text = schedule_trace_text(t, c);
    ASSERT_EQ(check_trace_event_json(json::parse(text)), "");
    const ScheduleTraceFile back = read_schedule_trace_json(text);
    expect_same(back.trace, t);
    EXPECT_EQ(back.context.kernel, c.kernel);
    EXPECT_EQ(back.context.tile, c.tile);
    EXPECT_EQ(back.context.m, c.m);
    EXPECT_EQ(back.context.n, c.n);
    EXPECT_EQ(back.context.k, c.k);
    EXPECT_EQ(back.context.device, c.device);
  }
}

// Every nanosecond count survives the microseconds: ts and dur of 20000 blocks with stamps a few ns apart
// and durations of every remainder modulo 1000.
TEST(ScheduleTrace, SubMicrosecondTimesComeBackExactly) {
  TileTrace t;
  t.grid_x = 200;
  t.grid_y = 100;
  t.tile_m = t.tile_n = 8;
  t.sm_count = 132;
  uint64_t x = 12345;
  for (int i = 0; i < 20000; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    const uint64_t start = kT0 + uint64_t(i) * 7 + (x >> 60);
    t.records.push_back({start, start + uint64_t(i % 1000) + (x >> 54) * 1000, uint32_t(i % 132), 0});
  }
  const json doc = schedule_trace_json(t, {"naive", 8, 800, 1600, 64, "a GPU"});
  ASSERT_EQ(check_trace_event_json(doc), "");
  expect_same(read_schedule_trace_json(doc).trace, t);
}

// Split-K: slice z of 3 over the 7 K steps of 16 (K = 100) takes steps [7z/3, 7(z+1)/3) rounded down:
// K 0-32, 32-64 and 64-100 (the kernel's t_first and tiles, kernels/rungs/09_pipelined_splitk.cu).
TEST(ScheduleTrace, SplitKBlocksSayTheirSliceOfKAndClusterBlocksTheirColumns) {
  const ScheduleTraceContext c{"splitk", 3, 128, 256, 100, "H100"};
  const json doc = schedule_trace_json(splitk_trace(), c);
  ASSERT_EQ(check_trace_event_json(doc), "");
  const std::pair<int, int> want[3] = {{0, 32}, {32, 64}, {64, 100}};
  for (int z = 0; z < 3; ++z) {
    const json* e = block_event(doc, "tile (row 0, col 1, K slice " + std::to_string(z) + ")");
    ASSERT_TRUE(e) << z;
    EXPECT_EQ(e->at("args")["k_slice"], z);
    EXPECT_EQ(e->at("args")["k_begin"], want[z].first) << z;
    EXPECT_EQ(e->at("args")["k_end"], want[z].second) << z;
    EXPECT_EQ(e->at("args")["col_begin"], 128);
    EXPECT_EQ(e->at("args")["col_end"], 256);
    EXPECT_FALSE(e->at("args").contains("cluster_block"));
  }
  // Without k_step (a trace from an engine that does not send it), no K range rather than a guessed one.
  TileTrace unknown = splitk_trace();
  unknown.k_step = 0;
  const json udoc = schedule_trace_json(unknown, c);
  const json* e = block_event(udoc, "tile (row 0, col 0, K slice 1)");
  ASSERT_TRUE(e);
  EXPECT_FALSE(e->at("args").contains("k_begin"));

  // A cluster: block 1 of tile column 1 covers columns 384..400 (its 128, clipped to N = 400).
  const json cdoc = schedule_trace_json(cluster_trace(), {"wgmma_tf32", 512, 256, 400, 64, "H100"});
  ASSERT_EQ(check_trace_event_json(cdoc), "");
  const json* b = block_event(cdoc, "tile (row 0, col 1, block 1 of the cluster)");
  ASSERT_TRUE(b);
  EXPECT_EQ(b->at("args")["cluster_block"], 1);
  EXPECT_EQ(b->at("args")["col_begin"], 384);
  EXPECT_EQ(b->at("args")["col_end"], 400);
  EXPECT_FALSE(b->at("args").contains("k_slice"));
  EXPECT_FALSE(b->at("args").contains("k_begin"));
  const json* b0 = block_event(cdoc, "tile (row 0, col 0, block 0 of the cluster)");
  ASSERT_TRUE(b0);
  EXPECT_EQ(b0->at("args")["col_begin"], 0);
  EXPECT_EQ(b0->at("args")["col_end"], 128);
}

// The reader notices an export that lost a block or moved one in time.
TEST(ScheduleTrace, ADroppedBlockOrAShiftedTimeIsFound) {
  const json doc = schedule_trace_json(splitk_trace(), {"splitk", 3, 128, 256, 100, "H100"});
  json dropped = doc;
  auto& ev = dropped["traceEvents"];
  for (size_t i = 0; i < ev.size(); ++i)
    if (ev[i]["name"] == "tile (row 0, col 1, K slice 2)") {
      ev.erase(i);
      break;
    }
  EXPECT_EQ(check_trace_event_json(dropped), "") << "still the format; the reader counts the blocks";
  EXPECT_NE(reader_refuses(dropped).find("block 5 (row 0, col 1, k_slice 2) is missing"), std::string::npos)
      << reader_refuses(dropped);

  for (const char* key : {"ts", "dur"}) {
    json shifted = doc;
    for (json& e : shifted["traceEvents"])
      if (e["name"] == "tile (row 0, col 0, K slice 1)") e[key] = e[key].get<double>() + 0.01;  // 10 ns
    const std::string why = reader_refuses(shifted);
    EXPECT_NE(why.find(std::string("has ") + key), std::string::npos) << why;
  }
  json stamps = doc;  // the exact stamps and the times disagree
  for (json& e : stamps["traceEvents"])
    if (e["name"] == "tile (row 0, col 0, K slice 0)") e["args"]["end_ns"] = kT0 + 906;
  EXPECT_NE(reader_refuses(stamps).find("has dur"), std::string::npos) << reader_refuses(stamps);
  json twice = doc;
  for (json& e : twice["traceEvents"])
    if (e["name"] == "tile (row 0, col 0, K slice 0)") e["args"]["k_slice"] = 1;
  EXPECT_NE(reader_refuses(twice).find("appears twice"), std::string::npos) << reader_refuses(twice);
  json moved = doc;  // a block on another SM's track
  for (json& e : moved["traceEvents"])
    if (e["name"] == "tile (row 0, col 0, K slice 0)") e["args"]["sm"] = 11;
  EXPECT_NE(reader_refuses(moved).find("ran on SM 11 but lies on track 10"), std::string::npos)
      << reader_refuses(moved);
  EXPECT_NE(reader_refuses(json{{"traceEvents", json::array()}}).find("no otherData"), std::string::npos);
  EXPECT_NE(reader_refuses(json::object()).find("no traceEvents"), std::string::npos);
  EXPECT_THROW(read_schedule_trace_json(std::string("{\"traceEvents\": [")), ValidationError);
}

// Stream-K: one event per present segment, named and placed by its K range; the absent records are not
// exported, and the reader gives them back as zeros, with every segment's k_first.
TEST(ScheduleTrace, StreamKSegmentsAreSlicesWithTheirKRangesAndComeBackExactly) {
  const TileTrace t = streamk_at_kt0();
  const json doc = schedule_trace_json(t, streamk_context());
  ASSERT_EQ(check_trace_event_json(doc), "");
  const json& o = doc["otherData"];
  EXPECT_EQ(o["k_segments"], true);
  EXPECT_EQ(o["format_version"], 2);
  EXPECT_EQ(o["k"], 4096);
  EXPECT_EQ(o["grid"], "12 tiles of 128 x 128, stream-K: 8 made whole, 4 shared in 10 segments");
  int slices = 0;
  for (const json& e : doc["traceEvents"]) {
    if (e["ph"] != "X") continue;
    ++slices;
    EXPECT_FALSE(e["args"].contains("k_slice")) << e.dump();
    EXPECT_GT(e["args"]["start_ns"].get<uint64_t>(), kT0) << "no absent record exported";
  }
  EXPECT_EQ(slices, 18);
  // Tile (2, 1): K steps 0, 32 and 96 of 32 elements; its last segment ends at K.
  const int64_t want[3][3] = {{0, 0, 1024}, {32, 1024, 3072}, {96, 3072, 4096}};
  for (int z = 0; z < 3; ++z) {
    const json* e = block_event(doc, "tile (row 2, col 1, K segment " + std::to_string(z) + ")");
    ASSERT_TRUE(e) << z;
    const json& a = e->at("args");
    EXPECT_EQ(a["k_segment"], z);
    EXPECT_EQ(a["k_first_step"], want[z][0]) << z;
    EXPECT_EQ(a["k_begin"], want[z][1]) << z;
    EXPECT_EQ(a["k_end"], want[z][2]) << z;
    EXPECT_EQ(a["row_begin"], 256);
    EXPECT_EQ(a["col_begin"], 128);
  }
  const json* seg = block_event(doc, "tile (row 2, col 1, K segment 2)");
  EXPECT_EQ(seg->at("args")["sm"], 5);
  EXPECT_EQ(int64_t(seg->at("ts").get<double>() * 1000), 1300) << "from the first start, not from 0";
  EXPECT_EQ(block_event(doc, "tile (row 0, col 0, K segment 1)"), nullptr) << "absent";
  const json* whole = block_event(doc, "tile (row 0, col 0, K segment 0)");
  ASSERT_TRUE(whole);
  EXPECT_EQ(whole->at("args")["k_end"], 4096);
  // Each SM runs its segments one after another: one track each.
  int tracks = 0;
  for (const json& e : doc["traceEvents"]) tracks += e["ph"] == "M" && e["name"] == "thread_name";
  EXPECT_EQ(tracks, 8);

  const ScheduleTraceFile back = read_schedule_trace_json(schedule_trace_text(t, streamk_context()));
  expect_same(back.trace, t);
  EXPECT_EQ(back.trace.k, 4096);
  EXPECT_EQ(check_trace(back.trace), "");
  // K from the trace where the caller has none; without either, the last segments have no range.
  ScheduleTraceContext no_k = streamk_context();
  no_k.k = 0;
  EXPECT_EQ(schedule_trace_json(t, no_k)["otherData"]["k"], 4096);
  TileTrace unknown = t;
  unknown.k = 0;
  const json udoc = schedule_trace_json(unknown, no_k);
  ASSERT_EQ(check_trace_event_json(udoc), "");
  const json* mid = block_event(udoc, "tile (row 2, col 1, K segment 1)");
  const json* last = block_event(udoc, "tile (row 2, col 1, K segment 2)");
  ASSERT_TRUE(mid && last);
  EXPECT_EQ(mid->at("args")["k_end"], 3072) << "the next segment's start is known";
  EXPECT_FALSE(last->at("args").contains("k_end"));
  EXPECT_EQ(last->at("args")["k_first_step"], 96);
  const ScheduleTraceFile uback = read_schedule_trace_json(udoc);
  expect_same(uback.trace, unknown);
  EXPECT_EQ(uback.trace.k, 0);
}

TEST(ScheduleTrace, TheReaderHoldsAStreamKFileToItsRules) {
  const json doc = schedule_trace_json(streamk_at_kt0(), streamk_context());
  auto without = [&](const std::string& name) {
    json d = doc;
    auto& ev = d["traceEvents"];
    for (size_t i = 0; i < ev.size(); ++i)
      if (ev[i]["name"] == name) {
        ev.erase(i);
        break;
      }
    return d;
  };
  // A segment lost from the middle of a tile: a gap.
  EXPECT_NE(reader_refuses(without("tile (row 2, col 1, K segment 1)"))
                .find("segment 2 of tile (2, 1) follows an absent segment 1"),
            std::string::npos);
  // Its last segment lost: segment 1's k_end still says where segment 2 began.
  EXPECT_NE(reader_refuses(without("tile (row 2, col 1, K segment 2)"))
                .find("segment 1 of tile (2, 1) has k_end 3072 but the segments of its tile end it at 4096"),
            std::string::npos)
      << reader_refuses(without("tile (row 2, col 1, K segment 2)"));
  EXPECT_NE(
      reader_refuses(without("tile (row 1, col 1, K segment 0)")).find("segment 0 of tile (1, 1) was never"),
      std::string::npos);
  json order = doc;
  for (json& e : order["traceEvents"])
    if (e["name"] == "tile (row 2, col 3, K segment 2)") {
      e["args"]["k_first_step"] = 40;
      e["args"]["k_begin"] = 40 * 32;
    }
  EXPECT_NE(reader_refuses(order).find("starts at K step 40, not after segment 1's 40"), std::string::npos)
      << reader_refuses(order);
  json begin = doc;
  for (json& e : begin["traceEvents"])
    if (e["name"] == "tile (row 2, col 3, K segment 2)") e["args"]["k_begin"] = 99;
  EXPECT_NE(reader_refuses(begin).find("has k_begin 99 for K step 80 of 32"), std::string::npos)
      << reader_refuses(begin);
  json no_first = doc;
  for (json& e : no_first["traceEvents"])
    if (e["name"] == "tile (row 2, col 3, K segment 2)") e["args"].erase("k_first_step");
  EXPECT_NE(reader_refuses(no_first).find("no integer k_first_step"), std::string::npos);
  json v1 = doc;
  v1["otherData"]["format_version"] = 1;
  EXPECT_NE(reader_refuses(v1).find("stream-K segments in a format_version 1 file"), std::string::npos);
  json v3 = doc;
  v3["otherData"]["format_version"] = 3;
  EXPECT_NE(reader_refuses(v3).find("format_version 3 (this TileScope reads versions 1 to 2)"),
            std::string::npos)
      << reader_refuses(v3);
  json flag = doc;
  flag["otherData"]["k_segments"] = "yes";
  EXPECT_NE(reader_refuses(flag).find("k_segments is not true or false"), std::string::npos);
  // Files of other traces keep format version 1; one written before k_segments existed reads as before.
  json old = schedule_trace_json(splitk_trace(), plain_context());
  EXPECT_EQ(old["otherData"]["format_version"], 1);
  old["otherData"].erase("k_segments");
  const ScheduleTraceFile back = read_schedule_trace_json(old);
  EXPECT_FALSE(back.trace.k_segments);
  expect_same(back.trace, splitk_trace());
}

TEST(ScheduleTrace, TheValidatorNamesWhatBreaksTheTraceEventFormat) {
  const json good = schedule_trace_json(plain_trace(), plain_context());
  ASSERT_EQ(check_trace_event_json(good), "");
  size_t first_x = 0;
  while (good["traceEvents"][first_x]["ph"] != "X") ++first_x;
  const std::string at = "traceEvents[" + std::to_string(first_x) + "] (ph X)";
  auto broken = [&](const std::function<void(json&)>& change) {
    json d = good;
    change(d);
    return check_trace_event_json(d);
  };
  auto x = [&](json& d) -> json& { return d["traceEvents"][first_x]; };
  EXPECT_EQ(broken([&](json& d) { x(d)["dur"] = -1; }), at + ": dur is -1, below 0");
  EXPECT_EQ(broken([&](json& d) { x(d)["ts"] = "0"; }), at + ": ts is not a number");
  EXPECT_EQ(broken([&](json& d) { x(d).erase("ts"); }), at + ": no ts");
  EXPECT_EQ(broken([&](json& d) { x(d).erase("dur"); }), at + ": no dur");
  EXPECT_EQ(broken([&](json& d) { x(d)["tid"] = "3"; }), at + ": tid is not an integer");
  EXPECT_EQ(broken([&](json& d) { x(d)["pid"] = 1.5; }), at + ": pid is not an integer");
  EXPECT_EQ(broken([&](json& d) { x(d).erase("name"); }), at + ": no name (a string)");
  EXPECT_EQ(broken([&](json& d) {
              x(d)["args"]["list"] = json::array({1, 2});
            }),
            at + ": holds an array (older Perfetto readers refuse such events)");
  EXPECT_EQ(broken([&](json& d) { x(d)["ph"] = "Q"; }),
            "traceEvents[" + std::to_string(first_x) + "]: no ph, or not one of the format's phases");
  EXPECT_NE(broken([&](json& d) { x(d)["tid"] = 999; }).find("which no thread_name metadata event names"),
            std::string::npos);
  // Tile 4 moved onto tile 3's track of SM 1: they overlap partly (121..263 against 103..250 ns).
  const std::string overlap = broken([&](json& d) {
    json *t3 = nullptr, *t4 = nullptr;
    for (json& e : d["traceEvents"]) {
      if (e["name"] == "tile (row 1, col 0)") t3 = &e;
      if (e["name"] == "tile (row 1, col 1)") t4 = &e;
    }
    (*t4)["tid"] = (*t3)["tid"];
  });
  EXPECT_NE(overlap.find("overlap partly on track (pid 1, tid "), std::string::npos) << overlap;
  EXPECT_NE(overlap.find("21 to 163 ns against 3 to 150 ns"), std::string::npos) << overlap;
  EXPECT_EQ(
      broken([&](json& d) { d["tilescope"] = 1; }),
      "unknown top-level key \"tilescope\" (Perfetto stops reading at a key it does not know; keep extra "
      "data in otherData)");
  EXPECT_EQ(broken([&](json& d) { d["displayTimeUnit"] = "us"; }),
            "displayTimeUnit is neither \"ms\" nor \"ns\"");
  EXPECT_EQ(broken([&](json& d) { d["traceEvents"] = json::object(); }), "no traceEvents array");
  EXPECT_EQ(check_trace_event_json(json::array()),
            "the document is not a JSON object (the trace event format's object form)");
  EXPECT_EQ(broken([&](json& d) { d["traceEvents"][0]["name"] = "thread_colour"; }),
            "traceEvents[0] (ph M): metadata named \"thread_colour\", which no viewer reads");
  EXPECT_EQ(broken([&](json& d) {
              d["traceEvents"].push_back(
                  {{"name", "c"}, {"ph", "C"}, {"pid", 1}, {"ts", 1}, {"args", {{"n", "x"}}}});
            }).find("counter series \"n\" is not a number") != std::string::npos,
            true);
  EXPECT_NE(broken([&](json& d) {
              d["traceEvents"].push_back({{"ph", "E"}, {"pid", 1}, {"tid", 0}, {"ts", 1}});
            }).find("ends a slice that no B event began on its track"),
            std::string::npos);
  // Nesting is fine (one slice within another); so are B / E pairs.
  EXPECT_EQ(broken([&](json& d) {
              d["traceEvents"].push_back(
                  {{"name", "all"}, {"ph", "X"}, {"pid", 1}, {"tid", 0}, {"ts", 0}, {"dur", 1}});
              d["traceEvents"].push_back({{"name", "b"}, {"ph", "B"}, {"pid", 1}, {"tid", 0}, {"ts", 1}});
              d["traceEvents"].push_back({{"ph", "E"}, {"pid", 1}, {"tid", 0}, {"ts", 2}});
            }),
            "");
}

TEST(ScheduleTrace, AnInconsistentTraceIsNotExported) {
  TileTrace t = plain_trace();
  t.records.pop_back();
  EXPECT_THROW(schedule_trace_json(t, plain_context()), std::invalid_argument);
}

TEST(ScheduleTrace, TheExportTakesANewNameAndNeverReplacesAFile) {
  test::TempDir dir;
  const auto sub = std::filesystem::path(dir.path()) / "exports";
  const auto a = write_schedule_trace(sub, splitk_trace(), plain_context());
  const auto b = write_schedule_trace(sub, splitk_trace(), plain_context());
  EXPECT_NE(a, b);
  for (const auto& p : {a, b}) {
    EXPECT_EQ(p.filename().string().rfind("tilescope-schedule-", 0), 0u) << p;
    EXPECT_EQ(p.extension(), ".json");
    std::ifstream f(p);
    const std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    expect_same(read_schedule_trace_json(text).trace, splitk_trace());
  }
  TileTrace bad = splitk_trace();
  bad.records[0].start_ns = 0;
  EXPECT_THROW(write_schedule_trace(sub, bad, plain_context()), std::invalid_argument);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(sub), std::filesystem::directory_iterator()), 2)
      << "nothing left behind by the refused export";
}
