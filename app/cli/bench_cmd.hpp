#pragma once
// [SECTION] `tilescope bench`: kernels x shapes (or a sweep of sizes) measured under the bench policy, each
// verified first and timed interleaved with cuBLAS of its precision; a table in md, csv or json, and the
// points as a session (with the part of the sweep they are: --shard I/N measures part I of N, `tilescope
// merge` joins the parts). Ctrl+C or SIGTERM keeps the finished points. Exit codes: 0, 1 (a point failed
// verification, runtime error), 2 (bad input), 128 + the signal.
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/cli.hpp"

namespace ts::cli {

struct BenchArgs {
  KernelFileArgs file;  // your own kernel, measured beside cuBLAS
  std::string kernel;   // its __global__ function, when the file has several
  std::string kernels = "all", shapes, sizes, tiles, format = "md", out, backend = "cuda";
  std::string engine;  // --engine: a remote engine's command (its own --backend chooses there)
  std::string fix_m, fix_k, ragged, session_out;
  std::string shard;  // "I/N": only part I of N of the sweep (core/engine/sweep.hpp, Shards)
  // --also-engine: more engines of the same device; the points are split across them all (SharedPlan: each
  // takes the next point no engine has taken), one table and one session in the sweep's order.
  std::vector<std::string> also_engines;
  // The measuring policy: empty takes the backend's bench policy (Backend::bench_policy: a GPU's
  // nvbench-style one, or the CPU's, which a shared CPU can meet).
  std::string min_samples, max_samples, min_time, max_noise, max_time;
  bool cold = false, force = false;
  bool changing_inputs = false;  // also time every point on inputs that change between samples
};

void add_bench_options(CLI::App* cmd, BenchArgs& a);
int cmd_bench(BenchArgs& a, const CLI::App& cmd);

}  // namespace ts::cli
