// libFuzzer target: the launch formulas of a person's kernel (app/core/user_kernel/launch_expr.hpp) and the
// launch they give (launch_geometry), on arbitrary text and values (issue 26). The input: 32 bytes of M, N, K
// and TILE, then up to seven formulas separated by newlines (grid x, y, z, block x, y, z, shared memory).
// Every formula must be refused with a ValidationError or evaluated; what check_launch_expr accepts,
// eval_launch_expr parses too (it may still refuse a value: a division by zero, an overflow); a formula eval
// accepts, check accepts; the names reported are only M, N, K and TILE; a geometry that comes back is within
// CUDA's limits. Any other exception, a crash, a sanitizer report (signed overflow included) or a hang is a
// finding. Seeds: TILESCOPE_FUZZ_SEEDS=DIR writes the launch rules of the example kernels into DIR at start
// (scripts/fuzz.sh).
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "core/user_kernel/launch_expr.hpp"
#include "core/engine/problem.hpp"
#include "core/user_kernel/user_kernel.hpp"

namespace {

int64_t take(const uint8_t* p) {
  int64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

void one_formula(const std::string& f, const ts::ExprVars& v) {
  bool checked = false, evaluated = false;
  try {
    ts::check_launch_expr(f, "fuzz");
    checked = true;
  } catch (const ts::ValidationError&) {
  }
  try {
    (void)ts::eval_launch_expr(f, v, "fuzz");
    evaluated = true;
  } catch (const ts::ValidationError&) {
  }
  if (evaluated && !checked) std::abort();
  try {
    if (ts::launch_expr_names(f, "fuzz") > 15) std::abort();
    if (!checked) std::abort();  // names() parses as check() does
  } catch (const ts::ValidationError&) {
    if (checked) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const char* dir = std::getenv("TILESCOPE_FUZZ_SEEDS");
  if (!dir) return 0;
  const char* rules[] = {
      "ceil(N / TILE)\nceil(M / TILE)\n1\nTILE\nTILE\n1\n0",
      "(N + TILE - 1) / TILE\n(M + TILE - 1) / TILE\n1\nTILE * TILE\n1\n1\n2 * TILE * TILE * 4",
      "ceil(N / (TILE * 8))\nceil(M / 128)\nmax(1, K / 4096)\n256\n1\n1\nmin(K, 32) * 4 * TILE",
      "floor(-N / -TILE)\n((M))\n1\nTILE\nTILE / 2\n1\n0"};
  int i = 0;
  for (const char* r : rules) {
    std::string values;
    for (int64_t v : {int64_t(4096), int64_t(2048), int64_t(1024), int64_t(16)})
      values.append(reinterpret_cast<const char*>(&v), sizeof v);
    std::ofstream(std::string(dir) + "/rule-" + std::to_string(i++), std::ios::binary) << values << r;
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 32) return 0;
  // Small values most of the time (the top bit of each picks), any 64-bit value otherwise.
  ts::ExprVars v;
  int64_t* vals[4] = {&v.m, &v.n, &v.k, &v.tile};
  for (int i = 0; i < 4; ++i) {
    const int64_t raw = take(data + 8 * i);
    *vals[i] = raw < 0 ? raw : raw % 100000;
  }
  const std::string text(reinterpret_cast<const char*>(data + 32), size - 32);
  std::string parts[7] = {"1", "1", "1", "1", "1", "1", "0"};
  size_t at = 0;
  for (int i = 0; i < 7 && at <= text.size(); ++i) {
    const size_t nl = text.find('\n', at);
    parts[i] = text.substr(at, nl == std::string::npos ? std::string::npos : nl - at);
    one_formula(parts[i], v);
    if (nl == std::string::npos) break;
    at = nl + 1;
  }
  ts::UserKernelSpec spec;
  spec.grid = {parts[0], parts[1], parts[2]};
  spec.block = {parts[3], parts[4], parts[5]};
  spec.smem = parts[6];
  try {
    const ts::LaunchGeometry g = ts::launch_geometry(spec, v);
    for (int i = 0; i < 3; ++i)
      if (g.grid[size_t(i)] < 1 || g.block[size_t(i)] < 1) std::abort();
    if (g.grid[0] > (int64_t(1) << 31) - 1 || g.grid[1] > 65535 || g.grid[2] > 65535) std::abort();
    if (g.threads() > 1024 || g.smem < 0 || g.smem > (int64_t(1) << 31) - 1) std::abort();
  } catch (const ts::ValidationError&) {
  }
  return 0;
}
