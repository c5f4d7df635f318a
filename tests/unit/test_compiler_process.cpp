// NVRTC in a process of its own (`tilescope compiler`): whatever a person's source does to NVRTC (crash it,
// keep it busy for minutes, take a Ctrl+C meant for TileScope), the caller gets a module that says so in
// words, at once when it cancels, and keeps its own signal handlers. Run against the real compiler process of
// this build. SKIP where the build has no NVRTC.
#include <atomic>
#include <csignal>
#include <fstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "kernels/user/compiler_process.hpp"
#include "kernels/user/nvrtc_compile.hpp"
#include "require_nvrtc.hpp"
#include "test_util.hpp"
#include "core/user_kernel/your_kernel.hpp"

using namespace ts;

namespace {

CompileJob job_of(const std::string& source, const std::string& name) {
  CompileJob j;
  j.source = source;
  j.label = "hostile.cu";
  j.name_expression = "&" + name;
  j.arch = 90;
  return j;
}

const char* kSmall = "__global__ void ok(float* c) { c[threadIdx.x] = 1.0f; }\n";

class CompilerProcess : public ::testing::Test {
 protected:
  void SetUp() override {
    setenv("TILESCOPE_CACHE_DIR", "off", 1);
    reset_module_cache();
  }
  void TearDown() override { unsetenv("TILESCOPE_CACHE_DIR"); }

  // Starts compiling `job` on a thread and returns once its compiler process is running.
  void start(const CompileJob& job) {
    m_thread = std::thread([this, job] {
      try {
        m_module = compile_module(job, &m_cancel);
      } catch (const Cancelled&) {
        m_cancelled = true;
      }
    });
    // Counted, not timed: the compiler process exists once compilers_running() says so.
    while (compilers_running() == 0 && !m_module) std::this_thread::yield();
  }
  CancelToken m_cancel;
  std::thread m_thread;
  std::shared_ptr<const CompiledModule> m_module;
  std::atomic<bool> m_cancelled{false};
};

std::atomic<int> g_sigints{0};
extern "C" void count_sigint(int) {
  ++g_sigints;
}

}  // namespace

// NVRTC 13.0 corrupts its heap on a kernel name of 100,000 characters and aborts ("malloc(): invalid size").
// Before, that ended the window or `tilescope list` (exit 134, the session lost); now it ends the compiler
// process, and the caller reads why, with what NVRTC printed, and compiles the next source as before.
TEST_F(CompilerProcess, ACrashOfNvrtcEndsOnlyTheCompilerProcessAndIsSaidInWords) {
  REQUIRE_NVRTC();
  const std::string name(100000, 'k');
  const auto m =
      compile_module(job_of("__global__ void " + name + "(float* A, float* B, float* C, int N) {}\n", name));
  EXPECT_FALSE(m->ok);
  EXPECT_NE(m->compiler_failure.find("NVRTC aborted while compiling (signal 6"), std::string::npos)
      << m->compiler_failure;
  EXPECT_NE(m->log.find("Only the compiler process ended; TileScope goes on"), std::string::npos) << m->log;
  EXPECT_NE(m->log.find("malloc()"), std::string::npos) << "what NVRTC printed is kept:\n" << m->log;
  EXPECT_EQ(compilers_running(), 0);
  const auto next = compile_module(job_of(kSmall, "ok"));
  EXPECT_TRUE(next->ok) << next->log;
  EXPECT_TRUE(next->compiler_failure.empty());
  EXPECT_FALSE(next->cubin.empty());
}

// NVRTC recurses once per nested parenthesis: 20,000 of them overflow the 8 MiB stack a thread has by default
// (the window's build thread crashed with SIGSEGV on a file of nested macros). The compiler's thread has 1
// GiB: the same source compiles (in ~0.1 s); given 8 MiB, it crashes the compiler process only, and says so.
TEST_F(CompilerProcess, DeeplyNestedCodeCompilesOnTheCompilersOwnStack) {
  REQUIRE_NVRTC();
  const std::string deep = "__global__ void deep(float* c) { c[0] = " + std::string(20000, '(') + "c[1]" +
                           std::string(20000, ')') + "; }\n";
  CompileJob small_stack = job_of(deep, "deep");
  small_stack.stack_bytes = 8 << 20;
  const auto crashed =
      compile_module(small_stack);  // first: a build that works is cached (the key has no stack)
  EXPECT_FALSE(crashed->ok);
  EXPECT_NE(crashed->compiler_failure.find("NVRTC crashed while compiling (signal 11"), std::string::npos)
      << crashed->compiler_failure;
  EXPECT_NE(crashed->compiler_failure.find("it had 8.0 MiB of stack"), std::string::npos)
      << crashed->compiler_failure;
  const auto m = compile_module(job_of(deep, "deep"));
  EXPECT_TRUE(m->ok) << m->log.substr(0, 2000);
  EXPECT_FALSE(m->from_cache);
  EXPECT_EQ(compilers_running(), 0);
}

// A person's file never reaches NVRTC with such a name: refused first, in words, with its line.
TEST_F(CompilerProcess, AKernelNameLongerThanTileScopeTakesIsRefusedBeforeNvrtc) {
  const std::string name(kMaxKernelName + 1, 'k');
  test::TempDir dir;
  const std::string path = dir.file("long.cu");
  std::ofstream(path) << ("\n__global__ void " + name + "(float* A, float* B, float* C, int N) {}\n");
  try {
    UserKernel::open_file(path, {});
    ADD_FAILURE() << "a name of " << name.size() << " characters was taken";
  } catch (const ValidationError& e) {
    const std::string w = e.what();
    EXPECT_NE(w.find("long.cu:2: the kernel's name is 1025 characters long; TileScope takes names of at most "
                     "1024 characters"),
              std::string::npos)
        << w.substr(0, 400);
  }
  // At the limit it is taken.
  std::ofstream(path, std::ios::trunc) << ("__global__ void " + std::string(kMaxKernelName, 'k') +
                                           "(float* A, float* B, float* C, int N) {}\n");
  EXPECT_NO_THROW(UserKernel::open_file(path, {}));
}

// A source that keeps NVRTC busy for minutes (the macro bomb of issue 26 took 228 s) is stopped at its
// limit; the limit is the job's (the kernel form's Compile limit, --compile-limit).
TEST_F(CompilerProcess, ACompileOverItsTimeLimitIsStoppedAndSaysWhichLimit) {
  REQUIRE_NVRTC();
  CompileJob j = job_of(test::macro_bomb(20), "bomb");
  j.time_limit_s = 1;
  const auto m = compile_module(j);
  EXPECT_FALSE(m->ok);
  EXPECT_NE(m->compiler_failure.find("NVRTC did not finish within the compile limit of 1 s and was stopped"),
            std::string::npos)
      << m->compiler_failure;
  EXPECT_NE(m->log.find("--compile-limit"), std::string::npos) << m->log;
  EXPECT_EQ(compilers_running(), 0);
  EXPECT_EQ(module_cache_stats().compiles, 1);
  EXPECT_EQ(cached_module(j), nullptr) << "a stopped build is not cached";
}

// NVRTC may take so much memory beyond what the compiler process has at its start (16 GiB or half the
// machine's): past it, the compile fails in words instead of the machine swapping.
TEST_F(CompilerProcess, ACompileOverItsMemoryLimitFailsInWords) {
  REQUIRE_NVRTC();
  CompileJob j = job_of(kSmall, "ok");
  j.memory_limit = 1 << 20;
  const auto m = compile_module(j);
  EXPECT_FALSE(m->ok);
  EXPECT_NE(m->log.find("1.0 MiB"), std::string::npos) << m->log;
  EXPECT_EQ(compilers_running(), 0);
  j.memory_limit = 0;
  EXPECT_TRUE(compile_module(j)->ok) << "the same source within the default limit";
  EXPECT_GE(compiler_memory_limit(), uint64_t(1) << 30);
  EXPECT_LE(compiler_memory_limit(), uint64_t(16) << 30);
}

// Cancelling (a newer build, the window closing) kills the compiler at once: the call throws Cancelled and no
// compiler process is left.
TEST_F(CompilerProcess, ACompileInFlightIsCancelledAndItsProcessIsGone) {
  REQUIRE_NVRTC();
  CompileJob j = job_of(test::macro_bomb(20), "bomb");
  j.time_limit_s = 3600;
  start(j);
  ASSERT_EQ(compilers_running(), 1);
  m_cancel.cancel();
  m_thread.join();
  EXPECT_TRUE(m_cancelled);
  EXPECT_EQ(m_module, nullptr);
  EXPECT_EQ(compilers_running(), 0);
  // A token cancelled before the call: no process at all.
  EXPECT_THROW(compile_module(job_of(kSmall, "ok"), &m_cancel), Cancelled);
}

// NVRTC installs its own SIGINT and SIGTERM handlers while it compiles (which made Ctrl+C end the window with
// exit 4, saving nothing). They are the compiler process's now: a SIGINT to TileScope mid-compile reaches
// TileScope's own handler, and the compiler (in a process group of its own, out of reach of the terminal's
// Ctrl+C) goes on until it is cancelled.
TEST_F(CompilerProcess, ASigintDuringACompileReachesTileScopesOwnHandler) {
  REQUIRE_NVRTC();
  struct sigaction ours {
  }, before{};
  ours.sa_handler = count_sigint;
  sigemptyset(&ours.sa_mask);
  ASSERT_EQ(sigaction(SIGINT, &ours, &before), 0);
  g_sigints = 0;
  CompileJob j = job_of(test::macro_bomb(20), "bomb");
  j.time_limit_s = 3600;
  start(j);
  ASSERT_EQ(kill(getpid(), SIGINT), 0);
  while (g_sigints == 0) std::this_thread::yield();
  EXPECT_EQ(compilers_running(), 1) << "the compiler went on";
  struct sigaction now {};
  sigaction(SIGINT, nullptr, &now);
  EXPECT_EQ(now.sa_handler, &count_sigint) << "NVRTC replaced TileScope's handler";
  m_cancel.cancel();
  m_thread.join();
  EXPECT_TRUE(m_cancelled);
  sigaction(SIGINT, &before, nullptr);
}

// The command line: Ctrl+C while `tilescope list --kernel-file` compiles ends it as Ctrl+C ends any command
// (130, SIGINT), not with NVRTC's exit 4, and its compiler goes with it.
TEST_F(CompilerProcess, CtrlCWhileTheCommandLineCompilesEndsItWithTheUsualCodeAndTheCompilerGoesToo) {
  REQUIRE_NVRTC();
  test::TempDir dir;
  std::ofstream(dir.file("bomb.cu")) << test::macro_bomb(20);
  const auto r =
      test::run_cmd("TILESCOPE_CACHE_DIR=off " TILESCOPE_SOURCE_DIR "/tests/ctrl_c_while_compiling.sh '" +
                    std::string(TILESCOPE_BIN) + "' list --kernel-file '" + dir.file("bomb.cu") + "'");
  EXPECT_EQ(r.output.find("compiler=none"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("exit=130"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("still running"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("outlived"), std::string::npos) << r.output;
}
