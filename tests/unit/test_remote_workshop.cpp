// A person's kernel through a remote engine (core/remote/remote_workshop.hpp): `tilescope serve --backend
// cpu` as a child process behind a RemoteBackend, against the same CPU backend's NvrtcWorkshop in this
// process. The kernel is read here and is the engine's to build and run: the same id, the same entry, the
// same builds and compile errors at the same lines; the register reaches the engine (publish, withdraw, a
// reconnect's new engine). Builds need NVRTC (REQUIRE_NVRTC), not a GPU.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "core/remote/remote_backend.hpp"
#include "kernels/engine/registry.hpp"
#include "kernels/user/nvrtc_workshop.hpp"
#include "require_nvrtc.hpp"
#include "test_util.hpp"

using namespace ts;
using namespace ts::remote;

namespace {

const std::string kBin = TILESCOPE_BIN;
const std::string kServe = "exec " + kBin + " serve --backend cpu --quiet";
const std::string kExamples = std::string(TILESCOPE_SOURCE_DIR) + "/examples/kernels/";

class RemoteWorkshopTest : public ::testing::Test {
 protected:
  // The engine is started after this: it inherits the cache folder (a fresh one, so builds compile).
  void SetUp() override { setenv("TILESCOPE_CACHE_DIR", m_dir.file("cache").c_str(), 1); }
  void TearDown() override { unsetenv("TILESCOPE_CACHE_DIR"); }
  std::string write(const std::string& name, const std::string& text) {
    const std::string p = m_dir.file(name);
    std::filesystem::create_directories(std::filesystem::path(p).parent_path());
    std::ofstream(p) << text;
    return p;
  }
  test::TempDir m_dir;
};

RunRequest request_for(const std::string& kernel, int tile) {
  RunRequest req;
  req.spec = ProblemSpec{64, 64, 64, kernel, tile, InputKind::Random, 1};
  return req;
}

// What validate() refuses with (the engine's words come back as a local backend's).
std::string refusal(const Backend& b, const std::string& kernel, int tile) {
  RunRequest req = request_for(kernel, tile);
  try {
    b.validate(req, true);
  } catch (const ValidationError& e) {
    return e.what();
  }
  return "";
}

const KernelInfo* find(const std::vector<KernelInfo>& v, const std::string& id) {
  return find_kernel(v, id);
}

const char* kBroken =
    "#define TILE 16\n__global__ void k(float* A, float* B, float* C, int N) {\n"
    "  C[0] = undefined_thing;\n}\n";

}  // namespace

TEST_F(RemoteWorkshopTest, SaysWhatTheEnginesWorkshopCanDoWithoutARoundTrip) {
  RemoteBackend remote(kServe);
  const auto local = make_backend(BackendChoice::Cpu, nullptr);
  KernelWorkshop* w = remote.workshop();
  ASSERT_NE(w, nullptr) << "the engine's CPU backend takes a person's kernels";
  const KernelWorkshop* l = local->workshop();
  std::string rwhy, lwhy;
  EXPECT_EQ(w->can_build(&rwhy), l->can_build(&lwhy));
  EXPECT_EQ(w->compiler(), l->compiler());
  EXPECT_EQ(w->architectures(), l->architectures());
  EXPECT_EQ(w->device_arch(), 0);  // the engine's backend has no GPU
  EXPECT_FALSE(w->can_sanitize(&rwhy));
  EXPECT_NE(
      rwhy.find("compute-sanitizer on the engine: compute-sanitizer runs the kernel, so it needs a GPU"),
      std::string::npos)
      << rwhy;
  EXPECT_EQ(parse_arch("sm_90", *w), 90);
  // Not running it answers in words, as a local workshop does.
  const auto k = w->open(kExamples + "tiled_classic.cu", {});
  const auto reports = w->sanitize(*k, request_for(k->id(), 16).spec, {"memcheck", "racecheck"}, 10);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_FALSE(reports[0].ran);
  EXPECT_NE(reports[0].problem.find("needs a GPU"), std::string::npos) << reports[0].problem;
}

TEST_F(RemoteWorkshopTest, AKernelPublishedHereIsTheEnginesUnderTheSameId) {
  RemoteBackend remote(kServe);
  const auto local = make_backend(BackendChoice::Cpu, nullptr);
  const std::string file = kExamples + "tiled_classic.cu";
  const auto rk = remote.workshop()->open(file, {});
  const auto lk = local->workshop()->open(file, {});
  EXPECT_EQ(rk->id(), lk->id());
  EXPECT_EQ(rk->id(), "yours:matmul_kernel");
  // Before: a kernel neither knows.
  EXPECT_EQ(refusal(remote, rk->id(), 16), refusal(*local, lk->id(), 16));
  EXPECT_NE(refusal(remote, rk->id(), 16).find("unknown kernel 'yours:matmul_kernel'"), std::string::npos);

  const uint64_t serial = remote.kernels_serial();
  const auto list_before = remote.kernel_list();
  remote.workshop()->publish(rk);
  local->workshop()->publish(lk);
  EXPECT_GT(remote.kernels_serial(), serial);
  EXPECT_NE(remote.kernel_list(), list_before) << "the cached list is made again";
  const auto rks = remote.kernels(), lks = local->kernels();
  ASSERT_EQ(rks.size(), lks.size());
  const KernelInfo* r = find(rks, rk->id());
  const KernelInfo* l = find(lks, lk->id());
  ASSERT_TRUE(r && l);
  EXPECT_EQ(&*r - rks.data(), &*l - lks.data()) << "listed after the built-ins, as a local backend lists it";
  EXPECT_EQ(r->title, l->title);
  EXPECT_EQ(r->tiles, l->tiles);
  EXPECT_EQ(r->tile_labels, l->tile_labels);
  EXPECT_EQ(r->default_tile, l->default_tile);
  EXPECT_EQ(r->has_cuda, l->has_cuda);
  EXPECT_EQ(r->square_only, l->square_only);
  EXPECT_TRUE(r->user);

  // The engine has it: it refuses to run it for the reason the local CPU backend gives (no GPU), not as an
  // unknown kernel; and what it lists for it is what is listed here.
  const std::string says = refusal(remote, rk->id(), 16);
  EXPECT_EQ(says, refusal(*local, lk->id(), 16));
  EXPECT_NE(says.find("needs a GPU to run, and this is the CPU backend"), std::string::npos) << says;
  const auto c = remote.connection();
  const uint64_t id = c->next_id();
  const PublishedMsg p =
      decode<PublishedMsg>(answer(c->call({encode(PublishMsg{kernel_text(*rk)}, id)}, id), Type::Published));
  EXPECT_EQ(p.info.id, r->id);
  EXPECT_EQ(p.info.description, r->description);
  EXPECT_EQ(p.info.tile_labels, r->tile_labels);
  EXPECT_EQ(p.info.has_cuda, r->has_cuda);

  // Withdrawn here, gone there too.
  const uint64_t before = remote.kernels_serial();
  remote.workshop()->withdraw(rk->id());
  local->workshop()->withdraw(lk->id());
  EXPECT_GT(remote.kernels_serial(), before);
  EXPECT_EQ(find(remote.kernels(), rk->id()), nullptr);
  EXPECT_EQ(refusal(remote, rk->id(), 16), refusal(*local, lk->id(), 16));
  EXPECT_NE(refusal(remote, rk->id(), 16).find("unknown kernel"), std::string::npos);
}

TEST_F(RemoteWorkshopTest, TheHeadersTravelWithTheKernelAndTheEngineReadsNoFileOfOurs) {
  REQUIRE_NVRTC();
  const std::string file = write(
      "k/mm.cu",
      "#include \"inc/tile.cuh\"\n"
      "__global__ void mm(const float* A, const float* B, float* C, int M, int N, int K) {\n"
      "  int r = blockIdx.y * TILE + threadIdx.y, c = blockIdx.x * TILE + threadIdx.x;\n"
      "  if (r < M && c < N) { float s = 0; for (int i = 0; i < K; ++i) s += A[r * K + i] * B[i * N + c];\n"
      "  C[r * N + c] = TWICE(s) / 2; }\n}\n");
  write("k/inc/tile.cuh", "#pragma once\n#define TILE 16\n#define TWICE(x) (2 * (x))\n");
  RemoteBackend remote(kServe);
  const auto k = remote.workshop()->open(file, {});
  ASSERT_EQ(k->headers().size(), 1u);
  std::filesystem::remove_all(m_dir.file("k"));  // the file and its header are gone: they travel as read
  remote.workshop()->publish(k);
  EXPECT_NE(refusal(remote, k->id(), 16).find("needs a GPU to run"), std::string::npos)
      << refusal(remote, k->id(), 16);
  const auto m = remote.workshop()->build(*k, 16, 90, ExprVars{64, 64, 64, 16});
  EXPECT_TRUE(m->ok) << m->log;
  EXPECT_TRUE(m->resources.found);
}

TEST_F(RemoteWorkshopTest, HeadersTheEngineWouldRefuseAreRefusedThereByName) {
  RemoteBackend remote(kServe);
  const auto k = remote.workshop()->open(kExamples + "tiled_classic.cu", {});
  KernelText t = kernel_text(*k);
  t.headers.push_back({"../secret.h", "", "#define X 1\n"});  // what a window never sends
  const auto c = remote.connection();
  const uint64_t id = c->next_id();
  try {
    answer(c->call({encode(PublishMsg{t}, id)}, id), Type::Published);
    FAIL() << "the engine took a header named ../secret.h";
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("\"../secret.h\" is refused: a name with a '..' part"),
              std::string::npos)
        << e.what();
  }
  // Every later request for that kernel says why, not "unknown kernel".
  const std::string says = refusal(remote, k->id(), 16);
  EXPECT_NE(says.find("the engine could not take yours:matmul_kernel"), std::string::npos) << says;
  // Published properly, it is the engine's again.
  remote.workshop()->publish(k);
  EXPECT_NE(refusal(remote, k->id(), 16).find("needs a GPU to run"), std::string::npos);
}

TEST_F(RemoteWorkshopTest, ABuildOnTheEngineIsTheLocalWorkshopsBuild) {
  REQUIRE_NVRTC();
  RemoteBackend remote(kServe);
  const NvrtcWorkshop local(-1, 0);
  const std::string file = kExamples + "tiled_classic.cu";
  const auto rk = remote.workshop()->open(file, {});
  const auto lk = local.open(file, {});
  const ExprVars v{256, 256, 256, 16};
  auto* w = static_cast<RemoteWorkshop*>(remote.workshop());
  EXPECT_EQ(w->cached_build(*rk, 16, 90, v), nullptr);
  const auto r = w->build(*rk, 16, 90, v);
  const auto l = local.build(*lk, 16, 90, v);
  ASSERT_TRUE(r->ok) << r->log;
  ASSERT_TRUE(l->ok) << l->log;
  EXPECT_EQ(r->lowered_name, l->lowered_name);
  EXPECT_EQ(r->arch, 90);
  EXPECT_TRUE(r->resources.found);
  EXPECT_EQ(r->resources.regs, l->resources.regs);
  EXPECT_EQ(r->resources.static_smem, l->resources.static_smem);
  EXPECT_EQ(r->resources.static_smem, 2 * 16 * 16 * 4);
  EXPECT_EQ(r->resources.spill_stores, l->resources.spill_stores);
  EXPECT_EQ(r->resources.stack_bytes, l->resources.stack_bytes);
  EXPECT_EQ(r->key, l->key);  // the same inputs to the same compiler
  EXPECT_EQ(r->ptx, l->ptx);
  EXPECT_EQ(r->cubin, l->cubin);
  EXPECT_EQ(r->options, l->options);
  // Answered from the modules received, without the link.
  const uint64_t trips = w->round_trips();
  const auto cached = w->cached_build(*rk, 16, 90, v);
  ASSERT_NE(cached, nullptr);
  EXPECT_EQ(cached->lowered_name, r->lowered_name);
  const auto again = w->build(*rk, 16, 90, v);
  EXPECT_TRUE(again->from_cache);
  EXPECT_EQ(again->resources.regs, r->resources.regs);
  EXPECT_EQ(w->round_trips(), trips);
  EXPECT_EQ(w->cached_build(*rk, 32, 90, v), nullptr) << "another tile is another build";
  EXPECT_EQ(w->cached_build(*rk, 16, 80, v), nullptr) << "another architecture is another build";
}

TEST_F(RemoteWorkshopTest, ACompileErrorComesBackWithItsErrorsAtTheirLines) {
  REQUIRE_NVRTC();
  RemoteBackend remote(kServe);
  const NvrtcWorkshop local(-1, 0);
  // A .cu file, and a KernelBench answer whose CUDA starts on line 5 of the .py file.
  const std::string cu = write("broken.cu", kBroken);
  const std::string py =
      write("answer.py", "import torch\nfrom torch.utils.cpp_extension import load_inline\n\nsrc = \"\"\"\n" +
                             std::string(kBroken) +
                             "\"\"\"\nm = load_inline(name='m', cpp_sources='', cuda_sources=src)\n");
  for (const std::string& file : {cu, py}) {
    SCOPED_TRACE(file);
    const auto rk = remote.workshop()->open(file, {});
    const auto lk = local.open(file, {});
    std::string rwhat, lwhat;
    std::shared_ptr<const CompiledModule> rm, lm;
    int rfirst = 0, lfirst = 0;
    try {
      remote.workshop()->build(*rk, 16, 90, {});
      FAIL() << "compiled on the engine";
    } catch (const CompileError& e) {
      rwhat = e.what();
      rm = e.module();
      rfirst = e.first_line();
    }
    try {
      local.build(*lk, 16, 90, {});
      FAIL() << "compiled here";
    } catch (const CompileError& e) {
      lwhat = e.what();
      lm = e.module();
      lfirst = e.first_line();
    }
    EXPECT_EQ(rwhat, lwhat);
    EXPECT_EQ(rfirst, lfirst);
    const std::string line = file == cu ? "line 3: " : "line 7: ";
    EXPECT_NE(rwhat.find(line + "identifier \"undefined_thing\" is undefined"), std::string::npos) << rwhat;
    ASSERT_TRUE(rm && lm);
    EXPECT_FALSE(rm->ok);
    ASSERT_EQ(rm->diagnostics.size(), lm->diagnostics.size());
    ASSERT_FALSE(rm->diagnostics.empty());
    for (size_t i = 0; i < rm->diagnostics.size(); ++i) {
      EXPECT_EQ(rm->diagnostics[i].line, lm->diagnostics[i].line);
      EXPECT_EQ(rm->diagnostics[i].severity, lm->diagnostics[i].severity);
      EXPECT_EQ(rm->diagnostics[i].message, lm->diagnostics[i].message);
    }
    // In the compiled text; the file's line is first_line - 1 further (the .py file's CUDA string).
    EXPECT_EQ(rm->diagnostics[0].line + rfirst - 1, file == cu ? 3 : 7);
    EXPECT_EQ(rm->log, lm->log);
  }
  // The engine lives on.
  const auto good = remote.workshop()->open(kExamples + "bug_floor_k.cu", {});
  EXPECT_TRUE(remote.workshop()->build(*good, 16, 90, {})->ok);
}

TEST_F(RemoteWorkshopTest, ABuildIsStoppedWhenItsTokenIsCancelled) {
  REQUIRE_NVRTC();
  RemoteBackend remote(kServe);
  // NVRTC would take minutes on it: only a Cancel that reaches the engine's compiler brings it back.
  const auto k = remote.workshop()->open(write("bomb.cu", test::macro_bomb(18)), {});
  CancelToken token;
  std::thread cancel_soon([token] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    token.cancel();
  });
  EXPECT_THROW(remote.workshop()->build(*k, 16, 90, {}, &token), Cancelled);
  cancel_soon.join();
  const auto good = remote.workshop()->open(kExamples + "bug_floor_k.cu", {});
  EXPECT_TRUE(remote.workshop()->build(*good, 16, 90, {})->ok);
}

TEST_F(RemoteWorkshopTest, ANewEngineGetsEveryRegisteredKernelAgain) {
  RemoteBackend remote(kServe);
  const auto a = remote.workshop()->open(kExamples + "tiled_classic.cu", {});
  const auto b = remote.workshop()->open(kExamples + "bug_floor_k.cu", {});
  remote.workshop()->publish(a);
  remote.workshop()->publish(b);
  ASSERT_EQ(::kill(remote.connection()->pid(), SIGKILL), 0);
  while (remote.link().connected) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  // Registered while the link is down: kept here, for the next engine.
  const auto c = remote.workshop()->open(kExamples + "bug_symmetric.cu", {});
  remote.workshop()->publish(c);
  remote.workshop()->withdraw(b->id());
  EXPECT_NE(find(remote.kernels(), c->id()), nullptr);
  const uint64_t serial = remote.kernels_serial();
  remote.reconnect();
  EXPECT_GT(remote.kernels_serial(), serial);
  for (const auto& k : {a, c}) {
    const std::string says = refusal(remote, k->id(), 16);
    EXPECT_NE(says.find("needs a GPU to run"), std::string::npos) << k->id() << ": " << says;
  }
  EXPECT_NE(refusal(remote, b->id(), 16).find("unknown kernel"), std::string::npos);
  EXPECT_EQ(find(remote.kernels(), b->id()), nullptr);
}

// `--kernel-file` with `--engine`: the kernel file is read here, checked and built in the engine, and the
// run refused or explained as the same backend here does it (build_request: the launch and the sm_90 build
// are checked on a CPU backend): the same exit code and the same words.
TEST_F(RemoteWorkshopTest, TheCommandLineTakesAKernelFileOnAnEngineAsItDoesHere) {
  const bool nvrtc = nvrtc_available(nullptr);
  const std::string classic = kExamples + "tiled_classic.cu";
  const std::string broken = write("broken.cu", kBroken);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"run --kernel-file " + classic + " --size 64", "needs a GPU to run"},
      {"run --kernel-file " + kExamples + "bug_floor_k.cu --m 64 --n 48 --k 40 --tile 8",
       "needs a GPU to run"},
      {"run --kernel-file " + classic + " --tile 64 --size 64", "block = 64 x 64 x 1 = 4096 threads"},
      {"run --kernel-file " + classic + " --m 64 --n 32 --k 64", "runs on square shapes (M = N = K)"},
      {"run --kernel-file " + classic + " --tile 12 --size 64", "needs a GPU to run"},
      {"run --kernel-file " + broken + " --size 64", "line 3: identifier \"undefined_thing\" is undefined"},
  };
  for (const auto& [args, says] : cases) {
    SCOPED_TRACE(args);
    if (!nvrtc && says.find("undefined_thing") != std::string::npos) continue;
    const auto here = test::run_cmd(kBin + " " + args + " --backend cpu");
    const auto there = test::run_cmd(kBin + " " + args + " --engine '" + kServe + "'");
    EXPECT_EQ(here.code, 2) << here.output;
    EXPECT_NE(here.output.find(says), std::string::npos) << here.output;
    EXPECT_EQ(there.code, here.code) << there.output;
    EXPECT_EQ(there.output, here.output);
  }
  // --sanitize: the request is refused first, as here (the sanitizer's own reason is the engine's:
  // SaysWhatTheEnginesWorkshopCanDoWithoutARoundTrip).
  const auto here =
      test::run_cmd(kBin + " run --kernel-file " + classic + " --size 64 --sanitize --backend cpu");
  const auto there = test::run_cmd(kBin + " run --kernel-file " + classic +
                                   " --size 64 --sanitize --engine '" + kServe + "'");
  EXPECT_EQ(there.code, here.code) << there.output;
  EXPECT_EQ(there.output, here.output);
}
