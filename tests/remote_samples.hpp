#pragma once
// One frame of every message of the remote engine's protocol (core/remote/protocol.hpp), each field set to
// something other than its default: the unit tests' round trips and the fuzz target's seeds.
#include <vector>

#include "core/engine/stats.hpp"
#include "core/remote/protocol.hpp"

namespace ts::test {

inline remote::EngineInfo sample_engine() {
  remote::EngineInfo e;
  e.kind = "cuda";
  e.device_name = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  e.version_info = "CUDA driver 13.0, runtime 13.0";
  e.cuda_device = 1;
  e.device.backend = "cuda";
  e.device.name = "NVIDIA H100 80GB HBM3";
  e.device.label = e.device_name;
  e.device.sm = 90;
  e.device.sm_count = 132;
  e.device.limits.sm_count = 132;
  e.device.max_sm_clock_mhz = 1980;
  e.device.l2_bytes = 50 << 20;
  e.device.peak_fp32_tflops = 66.9;
  e.capacity = {0, 7.2e10, "90 % of free memory"};
  e.default_policy = MeasurePolicy::quick();
  e.bench_policy = MeasurePolicy::bench();
  KernelInfo k;
  k.id = "tiled";
  k.title = "tiled (shared memory)";
  k.tiles = {8, 16, 32};
  k.tile_labels = {"8 x 8", "16 x 16", "32 x 32"};
  k.default_tile = 16;
  k.has_cuda = true;
  k.cpu_elsewhere = true;
  k.traceable = true;
  KernelInfo c;
  c.id = "cublas";
  c.title = "cuBLAS SGEMM (FP32)";
  c.is_reference = true;
  c.has_cuda = true;
  e.kernels = {k, c};
  e.workshop.present = true;
  e.workshop.can_build = true;
  e.workshop.compiler = "NVRTC 13.0";
  e.workshop.architectures = {75, 80, 90, 100, 120};
  e.workshop.device_arch = 90;
  e.workshop.can_sanitize = false;
  e.workshop.sanitize_why = "compute-sanitizer was not found";
  return e;
}

// A person's kernel as it travels, every field set.
inline remote::KernelText sample_kernel_text() {
  remote::KernelText t;
  t.source.path = "/home/me/kernels/my.cu";
  t.source.label = "my.cu";
  t.source.text =
      "#define TILE 16\n#include \"common.cuh\"\n__global__ void mm(float* A, float* B, float* C, int N) "
      "{}\n";
  t.source.normalised = true;
  t.source.first_line = 3;
  t.kernel = "mm";
  t.spec.kernel = "mm";
  t.spec.params = {{ParamRole::A, "", "named A"},
                   {ParamRole::B, "", "named B"},
                   {ParamRole::C, "", "named C"},
                   {ParamRole::Value, "N", "N: the size of square matrices"}};
  t.spec.tile_symbol = "TILE";
  t.spec.tiles = {8, 16, 32};
  t.spec.default_tile = 32;
  t.spec.grid = {"ceil(M / TILE)", "ceil(N / TILE)", "1"};
  t.spec.block = {"TILE", "TILE", "2"};
  t.spec.smem = "2 * TILE * TILE * 4";
  t.spec.x_covers_rows = true;
  t.spec.tf32 = true;
  t.spec.hang_limit_s = 7.5;
  t.spec.compile_limit_s = 30;
  t.spec.size_symbols = {{"WIDTH", "N"}};
  t.headers = {{"common.cuh", "/home/me/kernels/common.cuh", "#pragma once\n#define TWICE(x) (2 * (x))\n"}};
  return t;
}

inline CompiledModule sample_module() {
  CompiledModule m;
  m.ok = true;
  m.log = "ptxas info    : Used 40 registers, 2048 bytes smem\n";
  m.diagnostics = {{12, "warning", "variable \"x\" was declared but never referenced", "  int x;\n      ^"}};
  m.cubin = std::string(
      "\x7f"
      "ELF\0\x02\x01",
      7);
  m.ptx = ".version 9.0\n.target sm_90\n";
  m.lowered_name = "_Z2mmPfS_S_i";
  m.resources = {true, 40, 2048, 16, 1, 2, 1, 380};
  m.arch = 90;
  m.compile_s = 0.042;
  m.from_cache = true;
  m.key = std::string(64, 'a');
  m.options = {"-std=c++17", "-lineinfo", "-arch=sm_90"};
  m.compiler_failure = "";
  return m;
}

inline RunResult sample_result() {
  RunResult r;
  r.spec = ProblemSpec{1000, 1024, 512, "tiled", 32, InputKind::Ramp, 7};
  r.backend = "cuda";
  r.device = "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)";
  r.error = ErrorStats{1e-5, 2e-7, 3e-4, 17, 33, 0, true};
  r.policy = MeasurePolicy::bench().describe();
  r.samples_ms = {0.51, 0.5, 0.52};
  r.stats = summarize(r.samples_ms);
  r.stop = "noise";
  r.clock.available = true;
  r.clock.min_mhz = r.clock.median_mhz = r.clock.max_mhz = 1980;
  r.clock.device_max_mhz = 1980;
  r.tile_m = r.tile_n = 32;
  r.blocks_per_tile = 2;
  r.interleaved.kernel = "cublas";
  r.interleaved.samples_ms = {0.4, 0.41, 0.42};
  r.interleaved.stats = summarize(r.interleaved.samples_ms);
  r.impossible = "61.2 TFLOP/s is above the FP32 peak of NVIDIA H100 80GB HBM3, 59.3 TFLOP/s at 1980 MHz";
  r.changing.sets = 3;
  r.changing.samples_ms = {0.53, 0.52};
  r.changing.stats = summarize(r.changing.samples_ms);
  r.changing.stop = "samples taken";
  r.changing.passed = false;
  r.changing.verdict = "C did not change when A and B did: the kernel returned an earlier answer";
  r.date = "2026-11-27T04:00:00Z";
  r.reference = "cuBLAS SGEMM";
  r.warmups = 3;
  r.peak_tflops = 66.9;
  OccupancyReport o;
  o.res = {1024, 40, 8192, 0};
  o.blocks_per_sm = 2;
  o.limiter = "threads";
  o.occupancy = 1;
  o.grid_blocks = 1024;
  o.waves = 3.9;
  o.full_waves = 3;
  o.tail_fill = 0.9;
  o.api_blocks_per_sm = 2;
  o.function = "_ZN2ts5tiledILi16EEEvPKfS2_Pflll";
  r.occupancy = o;
  OccupancyReport streamk = o;
  streamk.k_segments = true;  // protocol 7
  r.occupancy_by_tile = {{16, o}, {32, streamk}};
  auto t = std::make_shared<TileTrace>();
  t->grid_x = 2;
  t->grid_y = 1;
  t->tile_m = t->tile_n = 32;
  t->sm_count = 132;
  t->k_step = 16;
  t->records = {{100, 200, 3, 0}, {150, 260, 7, 0}};
  t->traced_ms = 0.01;
  r.trace = t;
  r.note = "a note";
  return r;
}

inline std::vector<remote::Frame> sample_frames() {
  using namespace remote;
  std::vector<Frame> out;
  HelloMsg h;
  h.tilescope = "0.1.0";
  h.commit = "abc1234";
  h.role = "engine";
  h.capabilities = {"run", "reduce"};
  h.has_engine = true;
  h.engine = sample_engine();
  out.push_back(encode(h, 0));
  out.push_back(encode(ErrorMsg{ErrorKind::Validation, "--tile 7 is not one of 8, 16, 32"}, 3));
  RunMsg run;
  run.request.spec = ProblemSpec{64, 32, 16, "tiled", 8, InputKind::File, 1};
  run.request.policy = MeasurePolicy::fixed(5, 1);
  run.request.policy->changing_inputs = true;
  run.request.keep_store = true;
  run.request.profile = true;
  run.given_inputs = true;
  out.push_back(encode(run, 4));
  RunDoneMsg done;
  done.result = sample_result();
  done.has_c = true;
  done.store.id = 9;
  for (auto& d : done.store.dims) d[0] = 1000, d[1] = 1024;
  out.push_back(encode(done, 4));
  ValidateMsg v;
  v.request = run.request;
  v.tile_given = true;
  v.given_inputs = true;
  v.a_rows = 64, v.a_cols = 16, v.b_rows = 16, v.b_cols = 32;
  out.push_back(encode(v, 5));
  out.push_back(encode(ValidatedMsg{run.request.spec}, 5));
  out.push_back(empty(Type::Cancel, 4));
  out.push_back(empty(Type::Bandwidth, 6));
  BandwidthResult bw;
  bw.gbs = 3000;
  bw.best_gbs = 3100;
  bw.bytes = 1 << 30;
  bw.ms = summarize({0.7, 0.71});
  bw.method = "copy kernel";
  out.push_back(encode(BandwidthDoneMsg{bw}, 6));
  out.push_back(encode(LaunchInfoMsg{run.request.spec}, 7));
  LaunchInfoReplyMsg li;
  li.has = true;
  li.info.tile_m = li.info.tile_n = 8;
  li.info.grid_blocks = 32;
  li.info.k_segments = true;
  li.info.occupancy = *sample_result().occupancy;
  out.push_back(encode(li, 7));
  out.push_back(encode(ReduceMsg{9, MatrixId::Error, LodRegion{10, 20, 100, 200, 4, 2}, Reduce::AbsMax}, 8));
  const std::vector<float> vals = {1, -2, 3, 4, 0.5f, 6, 7, 8};
  out.push_back(encode(ReducedMsg{{-2, 8}, 4, 2, pack_floats(vals.data(), vals.size())}, 8));
  out.push_back(encode(ElementMsg{9, MatrixId::C, 999, 1023}, 10));
  out.push_back(encode(ElementValueMsg{-0.25f}, 10));
  out.push_back(encode(CopyMatrixMsg{9, MatrixId::C}, 11));
  HostMatrix m(3, 5);
  for (size_t i = 0; i < m.data.size(); ++i) m.data[i] = float(i) - 2.5f;
  for (Frame& f : matrix_parts(m, MatrixId::A, 4)) out.push_back(std::move(f));
  out.push_back(encode(ReleaseStoreMsg{9}, 12));
  out.push_back(encode(PingMsg{12345.5}, 0));
  out.push_back(encode(PongMsg{12345.5, 2, "the kernel faulted"}, 0));
  out.push_back(encode(PublishMsg{sample_kernel_text()}, 13));
  KernelInfo mine;
  mine.id = "yours:mm";
  mine.title = "yours: mm";
  mine.description = "Your kernel mm from /home/me/kernels/my.cu";
  mine.tiles = {8, 16, 32};
  mine.tile_labels = {"TILE = 8: block 8 x 8 (64 threads)", "TILE = 16", "TILE = 32"};
  mine.default_tile = 32;
  mine.threads_per_block = "TILE x TILE";
  mine.traceable = true;
  mine.has_cuda = true;
  mine.user = true;
  mine.square_only = true;
  mine.source = "/home/me/kernels/my.cu";
  out.push_back(encode(PublishedMsg{mine}, 13));
  out.push_back(encode(WithdrawMsg{"yours:mm"}, 14));
  BuildMsg build;
  build.kernel = sample_kernel_text();
  build.tile = 16;
  build.arch = 90;
  build.sizes = ExprVars{1000, 1024, 512, 16};
  out.push_back(encode(build, 15));
  BuiltMsg built;
  built.module = sample_module();
  out.push_back(encode(built, 15));
  BuiltMsg failed;
  failed.module = sample_module();
  failed.module.ok = false;
  failed.module.diagnostics = {{5, "error", "identifier \"q\" is undefined", "  C[0] = q;\n         ^"}};
  failed.failed = true;
  failed.error =
      "yours: mm does not compile (/home/me/kernels/my.cu, TILE = 16, sm_90):\nline 7: identifier "
      "\"q\" is undefined\n";
  failed.first_line = 3;
  out.push_back(encode(failed, 16));
  SanitizeMsg san;
  san.kernel = sample_kernel_text();
  san.spec = ProblemSpec{300, 256, 257, "yours:mm", 16, InputKind::Random, 3};
  san.tools = {"memcheck", "racecheck"};
  san.timeout_s = 300;
  out.push_back(encode(san, 17));
  SanitizedMsg reports;
  SanitizerReport r;
  r.tool = "racecheck";
  r.ran = true;
  r.issues = 2;
  r.summary = "RACECHECK SUMMARY: 2 hazards displayed (2 errors, 0 warnings)";
  r.output = "========= Error: Race reported between Write access ...\n";
  r.seconds = 1.25;
  r.shape = san.spec;
  SanitizerReport n;
  n.tool = "memcheck";
  n.problem = "compute-sanitizer was not found";
  n.shape = san.spec;
  reports.reports = {n, r};
  out.push_back(encode(reports, 17));
  out.push_back(encode(SassMsg{"tiled", 32, 90}, 18));
  SassReplyMsg sass;
  sass.listing.available = true;
  sass.listing.kernel = "tiled";
  sass.listing.tile = 32;
  sass.listing.function = "_ZN2ts12tiled_kernelILi32ELb1ELb1ELb0EEEvPKfS2_PflllPNS_10TileRecordE";
  sass.listing.arch = 90;
  sass.listing.text = "/*0000*/ LDC R1, c[0x0][0x28] ;\n/*0010*/ @!P0 BRA 0x10 ;\n";
  sass.listing.tool = "cuobjdump 13.2.51";
  sass.listing.made = "2026-11-27 10:55 UTC";
  sass.listing.engine = "CPU (16 threads)";
  sass.listing.regs = 32;
  sass.listing.static_smem = 8192;
  sass.listing.spill_bytes = sass.listing.stack_bytes = 0;
  sass.listing.threads = 1024;
  sass.listing.tile_m = sass.listing.tile_n = 32;
  out.push_back(encode(sass, 18));
  return out;
}

}  // namespace ts::test
