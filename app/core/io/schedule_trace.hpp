#pragma once
// [SECTION] The traced launch as a Chrome trace event JSON (the "JSON Object Format" of the Trace Event
// Format document), which ui.perfetto.dev and chrome://tracing open:
//   {"displayTimeUnit": "ns", "otherData": {...}, "traceEvents": [...]}
// One process (pid 1) for the launch, named by kernel, tile, shape and device. One thread track per SM
// ("SM 0", "SM 1", ... in SM order: thread_name and thread_sort_index metadata events), one complete event
// ("ph": "X") per block, and a counter ("ph": "C") of the blocks resident over time (concurrency_curve).
//
// Times: ts and dur in microseconds (the format's unit, whatever displayTimeUnit says), ts from the first
// start. Each is the smallest double whose product with 1000 is at least the exact nanoseconds, so a reader
// that converts as Perfetto does (int64(x * 1000), truncating) gets the nanoseconds back exactly, and two
// blocks that meet (one ends as the next starts) still meet. The exact stamps are in each event's args too
// (start_ns, end_ns: the device's %globaltimer).
//
// Tracks: events on one track must nest (Perfetto and chrome://tracing draw a track as a stack), but an SM
// runs several blocks at once, partly overlapping. So an SM whose blocks overlap gets more than one track:
// its blocks are laid out on lanes (first free lane by start time; as many lanes as blocks it ever held at
// once), named "SM 3", "SM 3 #2", "SM 3 #3", ... with tid = sm * lanes + lane, lanes being the largest
// number over the SMs (1 when no SM overlaps: then tid = SM). Every SM of the device has its first track,
// idle or not.
//
// Top-level keys are only those Perfetto's JSON reader knows (an unknown key makes it stop reading there),
// and nothing in an event is an array (older Perfetto readers refuse events that hold one).
#include <cstdint>
#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "core/engine/schedule.hpp"

namespace ts {

// What the trace does not know about its launch (the caller has the RunResult / ProblemSpec / DeviceInfo).
// Zero / empty: unknown (rows, columns and K ranges are then not clipped, or not given). Where k is 0, the
// trace's own (TileTrace::k) is taken.
struct ScheduleTraceContext {
  std::string kernel;  // "tiled"
  int tile = 0;        // the kernel's tile parameter
  int64_t m = 0, n = 0, k = 0;
  std::string device;  // "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"
};

// The process's name: "tiled tile 16, 1024 x 1024 x 1024 (M x N x K) on <device>".
std::string schedule_trace_title(const ScheduleTraceContext& c);

// The trace as the JSON object above. Each block's event: name "tile (row 3, col 7)" (with ", K slice 1",
// ", block 1 of the cluster" or ", K segment 1" when a tile has several blocks), cat "tile", args:
//   tile_row, tile_col             the tile of C (row-major grid of grid_y x grid_x tiles)
//   row_begin, row_end             rows of C the tile covers, [begin, end), clipped to M
//   col_begin, col_end             its columns (a cluster's block: its share, tile_n / grid_z), clipped to N
//   k_slice, k_begin, k_end        split-K (blockIdx.z slices K): slice z of grid_z over the K steps of
//                                  k_step (TileTrace::k_step, the kernel's BK): with S = ceil(K / k_step)
//                                  steps, steps [floor(z S / grid_z), floor((z + 1) S / grid_z)), so
//                                  K from first * k_step to min(K, end * k_step), [begin, end); slices differ
//                                  by at most one step (kernels/rungs/09_pipelined_splitk.cu). Without a
//                                  split: k_slice 0 and the whole of K. k_begin, k_end are left out when K or
//                                  k_step is unknown.
//   cluster_block                  instead of k_slice when z splits a tile's columns (a cluster)
//   k_segment, k_first_step,       stream-K (TileTrace::k_segments) instead of k_slice: one event per present
//   k_begin, k_end                 segment (the absent records are not exported), its first K step
//                                  (TileRecord::k_first) and its K range: from k_first * k_step to the next
//                                  segment's first step * k_step, or to K for the tile's last (k_begin, k_end
//                                  left out for a last segment when K is not known). Such a file says
//                                  "k_segments": true and format_version 2 in otherData (1 otherwise).
//   sm, start_ns, end_ns           exact integers; duration_us = (end_ns - start_ns) / 1000
// Throws std::invalid_argument for a trace that fails check_trace (nothing to export).
nlohmann::json schedule_trace_json(const TileTrace& t, const ScheduleTraceContext& c);

// The trace-event format, as both viewers read it. Empty when `doc` follows it, else the first problem,
// naming the event ("traceEvents[12] (ph X): dur is -1, below 0"). What is checked:
//   the top level is an object whose keys are among traceEvents (required, an array), displayTimeUnit
//   ("ms" or "ns"), otherData and metadata (objects), systemTraceEvents (a string);
//   every event is an object with a known one-letter ph and no array anywhere in it;
//   pid and tid, where given, are integers; ts is a number >= 0 on every event but metadata ("M");
//   X: name (string), ts, dur (number >= 0), pid, tid;  B and E: ts, pid, tid, and every E closes a B of its
//   track;  C: name, ts, pid, args an object of numbers;  i / I: name, ts, pid;
//   M: name one of process_name, process_labels, process_sort_index, thread_name, thread_sort_index, with
//   pid (and tid for a thread's), args.name a string (args.sort_index an integer for the sort indexes);
//   every track (pid, tid) with X events is named by a thread_name metadata event;
//   on each track, X events nest: in nanoseconds as a viewer reads them (int64(ts * 1000), end = that plus
//   int64(dur * 1000)), any two are either disjoint (one ends at or before the other starts) or one lies
//   within the other. (A partial overlap is what both viewers cannot draw.)
std::string check_trace_event_json(const nlohmann::json& doc);

// A trace read back from schedule_trace_json's output, exactly: the grid, the tile, the device's SM count,
// k_step, k_segments, K (TileTrace::k, the context's k), the traced and plain times, and every record
// (start_ns, end_ns, smid; stream-K: k_first, and the absent records all zero) at its block's index. Reads
// format versions 1 and 2.
struct ScheduleTraceFile {
  TileTrace trace;
  ScheduleTraceContext context;
};
// Checks the format (check_trace_event_json), then that the document is one of ours and agrees with itself:
// every block of the grid exactly once (stream-K: every present segment once, check_trace's rules), each on
// the track of its SM, ts and dur equal to its stamps (as above), ts from the first start. Throws
// ValidationError saying what is wrong.
ScheduleTraceFile read_schedule_trace_json(const nlohmann::json& doc);
ScheduleTraceFile read_schedule_trace_json(const std::string& text);  // parses first (ValidationError)

// The JSON text, compact (a 128 x 128 grid split in 4 is about 20 MB).
std::string schedule_trace_text(const TileTrace& t, const ScheduleTraceContext& c);

// The Tile schedule's "Export Perfetto trace": tilescope-schedule-<date>-<time>.json in `dir` (made when
// missing), a name taken through NewNames, never replacing a file. Returns the path written.
std::filesystem::path write_schedule_trace(const std::filesystem::path& dir, const TileTrace& t,
                                           const ScheduleTraceContext& c);

}  // namespace ts
