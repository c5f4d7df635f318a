#pragma once
// [SECTION] `tilescope merge`: the parts of one sweep joined again. `tilescope bench --shard I/N
// --session-out` writes part I of N (its session's SweepPart, session.hpp); merge_parts checks that the parts
// belong together and joins them into the session and the table one run of the whole sweep writes: the same
// rows in the same order (the whole sweep's), each made from its record as bench makes it (bench_point), and
// % of cuBLAS related over the whole table.
//   Refused (MergeError: exit code 2 on the command line), naming the files and the values that differ:
//   - a session that is no part of a bench sweep (the window's sessions, older bench sessions);
//   - parts of different sweeps (their identities differ) or of one sweep split into different numbers;
//   - a shard given twice;
//   - a shard missing, or a part that lacks some of its points (interrupted), unless `partial`;
//   - parts measured on different devices, by different TileScope versions or commits, or under different
//     measuring policies, unless `allow_mixed`;
//   - parts whose points, put together, are not the sweep they name (a file changed after bench wrote it).
// What `partial` or `allow_mixed` let through is said in `warnings`. Cost: every record copied once; the
// checks are linear in the points.
#include <string>
#include <vector>

#include "core/engine/problem.hpp"
#include "core/io/bench.hpp"
#include "core/io/session.hpp"

namespace ts {

class MergeError : public ValidationError {
 public:
  using ValidationError::ValidationError;
};

struct MergeInput {
  std::string name;  // where it came from (its path), for messages
  Session session;
};

struct MergeOptions {
  bool allow_mixed = false;  // devices, TileScope versions or policies that differ: merged, with a warning
  bool partial = false;      // missing shards or points: the points there are merged, with a warning
};

struct MergeResult {
  // Every record in the whole sweep's order, the first part's device and versions; its part is 1 of 1 with
  // merged_parts and missing_shards set, so it can be printed (or merged) again.
  Session session;
  BenchMeta meta;                     // the table's header
  std::vector<BenchPoint> table;      // the rows, in the whole sweep's order, failed points included
  std::vector<std::string> warnings;  // what allow_mixed or partial let through
};

MergeResult merge_parts(const std::vector<MergeInput>& parts, const MergeOptions& options = {});

// "2, 4, 6-9": shard numbers (ascending) for a message, runs shortened.
std::string describe_shards(const std::vector<int>& shards);

}  // namespace ts
