// The window starting with a broken config folder: it opens with defaults, says what it ignored, and at exit
// (SIGTERM closes it as the close button does) never replaces a settings file it could not use. Each test
// starts the real `tilescope` window on the virtual X server; SKIP without a display.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "kernels/user/nvrtc_compile.hpp"
#include "test_util.hpp"

using namespace ts;
namespace fs = std::filesystem;

namespace {

const std::string kBin = TILESCOPE_BIN;

bool have_display() {
  const char* d = std::getenv("DISPLAY");
  return d && *d;
}

std::string content(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

// Starts the window with XDG_CONFIG_HOME = `config_home`; once it handles SIGTERM (the window's first step,
// read from /proc), closes it with SIGTERM and returns its output and exit code. The window reads its
// settings, draws a frame and saves them at exit whenever the signal comes (it only sets a flag the frame
// loop reads); a window that never gets to its frame loop (stuck reading a FIFO, say) does not react to
// SIGTERM and is killed after 20 s.
test::CmdResult start_and_close(const std::string& config_home) {
  const test::TempDir dir;
  const std::string script = dir.file("start_and_close.sh");
  std::ofstream(script) << R"(
XDG_CONFIG_HOME="$2" "$1" --backend cpu &
pid=$!
for i in $(seq 300); do
  mask=$(awk '/^SigCgt/ {print $2}' /proc/$pid/status 2>/dev/null)
  [ -n "$mask" ] && (( 0x$mask & 0x4000 )) && break
  sleep 0.1
done
kill -TERM $pid
for i in $(seq 200); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
if kill -0 $pid 2>/dev/null; then kill -KILL $pid; echo "still running 20 s after SIGTERM"; fi
wait $pid
echo "exit=$?"
)";
  return test::run_cmd("bash '" + script + "' '" + kBin + "' '" + config_home + "'");
}

int exit_of(const test::CmdResult& r) {
  const size_t at = r.output.rfind("exit=");
  return at == std::string::npos ? -1 : std::atoi(r.output.c_str() + at + 5);
}

}  // namespace

#define REQUIRE_DISPLAY() \
  if (!have_display()) GTEST_SKIP() << "no X display (install xvfb so ctest can start one)"

TEST(GuiConfig, NoSettingsYetStartsWithTheBackendsDefaultsAndSavesAtExit) {
  REQUIRE_DISPLAY();
  test::TempDir dir;
  const auto r = start_and_close(dir.path().string());
  ASSERT_EQ(exit_of(r), 0) << r.output;
  const std::string saved = content(dir.file("tilescope/settings.json"));
  EXPECT_NE(saved.find("\"m\": 256"), std::string::npos) << saved;  // the CPU backend's first look
  EXPECT_EQ(r.output.find("settings:"), std::string::npos) << r.output;
}

TEST(GuiConfig, SettingsWithoutSizesUseTheBackendsDefaultsNotTheGpusOnes) {
  REQUIRE_DISPLAY();
  test::TempDir dir;
  fs::create_directories(dir.file("tilescope"));
  { std::ofstream(dir.file("tilescope/settings.json")) << R"({"kernel": "naive", "tile": 8})"; }
  const auto r = start_and_close(dir.path().string());
  ASSERT_EQ(exit_of(r), 0) << r.output;
  const std::string saved = content(dir.file("tilescope/settings.json"));
  EXPECT_NE(saved.find("\"m\": 256"), std::string::npos) << saved;
  EXPECT_NE(saved.find("\"kernel\": \"naive\""), std::string::npos) << saved;
}

TEST(GuiConfig, AFifoForSettingsAndLayoutNeitherBlocksTheStartNorIsReplaced) {
  REQUIRE_DISPLAY();
  test::TempDir dir;
  fs::create_directories(dir.file("tilescope"));
  ASSERT_EQ(::mkfifo(dir.file("tilescope/settings.json").c_str(), 0600), 0);
  ASSERT_EQ(::mkfifo(dir.file("tilescope/imgui.ini").c_str(), 0600), 0);
  const auto r = start_and_close(dir.path().string());
  ASSERT_EQ(exit_of(r), 0) << r.output;
  EXPECT_NE(r.output.find("settings.json is a FIFO"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("imgui.ini is not a regular file"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("settings not saved"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_fifo(dir.file("tilescope/settings.json")));
  EXPECT_TRUE(fs::is_fifo(dir.file("tilescope/imgui.ini")));
}

TEST(GuiConfig, ADeeplyNestedValueIsIgnoredAndTheFileKept) {
  REQUIRE_DISPLAY();
  test::TempDir dir;
  fs::create_directories(dir.file("tilescope"));
  const std::string nested =
      "{\"m\": 64, \"heatmaps\": " + std::string(200000, '[') + std::string(200000, ']') + "}";
  { std::ofstream(dir.file("tilescope/settings.json")) << nested; }
  const auto r = start_and_close(dir.path().string());
  ASSERT_EQ(exit_of(r), 0) << r.output;
  EXPECT_NE(r.output.find("nested more than 64 levels deep"), std::string::npos) << r.output;
  EXPECT_EQ(content(dir.file("tilescope/settings.json")), nested) << "the unusable file was replaced";
}

TEST(GuiConfig, ASymlinkLoopAndAnInvalidValueAreReportedAndKept) {
  REQUIRE_DISPLAY();
  test::TempDir dir;
  fs::create_directories(dir.file("loop/tilescope"));
  fs::create_symlink("settings.json", dir.file("loop/tilescope/settings.json"));
  auto r = start_and_close(dir.file("loop"));
  ASSERT_EQ(exit_of(r), 0) << r.output;
  EXPECT_NE(r.output.find("Too many levels of symbolic links"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_symlink(dir.file("loop/tilescope/settings.json")));

  fs::create_directories(dir.file("bad/tilescope"));
  const std::string bad = R"({"m": 64, "tile": 4294967312, "square": "yes"})";
  { std::ofstream(dir.file("bad/tilescope/settings.json")) << bad; }
  r = start_and_close(dir.file("bad"));
  ASSERT_EQ(exit_of(r), 0) << r.output;
  EXPECT_NE(r.output.find("ignored invalid tile = 4294967312"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("ignored invalid square = \"yes\""), std::string::npos) << r.output;
  EXPECT_EQ(content(dir.file("bad/tilescope/settings.json")), bad);
}

TEST(GuiConfig, AConfigFolderThatCannotBeSearchedStartsWithDefaults) {
  REQUIRE_DISPLAY();
  test::TempDir dir;
  std::string home;
  if (::geteuid() == 0) {
    // Modes do not stop root: a config "folder" that is a regular file fails the same way (ENOTDIR).
    { std::ofstream(dir.file("not-a-folder")) << "x"; }
    home = dir.file("not-a-folder");
  } else {
    fs::create_directories(dir.file("locked/tilescope"));
    fs::permissions(dir.file("locked"), fs::perms::none);
    home = dir.file("locked");
  }
  const auto r = start_and_close(home);
  if (::geteuid() != 0) fs::permissions(dir.file("locked"), fs::perms::owner_all);
  ASSERT_EQ(exit_of(r), 0) << r.output;
  EXPECT_NE(r.output.find("settings.json cannot be looked at"), std::string::npos) << r.output;
}

// Issue 26, item 3: NVRTC installs its own SIGINT/SIGTERM handlers while it compiles; in the window's process
// that made Ctrl+C end the window at once with exit 4, saving nothing. NVRTC runs in a compiler process of
// its own now, in a process group of its own: Ctrl+C reaches the window alone, which closes as its close
// button does (settings saved, exit 0) without waiting for the compile, and its compiler does not outlive it.
TEST(GuiConfig, CtrlCWhileAKernelCompilesClosesTheWindowAtOnceAndSavesItsSettings) {
  REQUIRE_DISPLAY();
  std::string why;
  if (!nvrtc_available(&why)) GTEST_SKIP() << why;  // no compile, no compiler process to see
  test::TempDir dir;
  { std::ofstream(dir.file("bomb.cu")) << test::macro_bomb(20); }
  const auto r = test::run_cmd("XDG_CONFIG_HOME='" + dir.path().string() + "' TILESCOPE_CACHE_DIR=off " +
                               TILESCOPE_SOURCE_DIR "/tests/ctrl_c_while_compiling.sh '" + kBin +
                               "' --backend cpu --kernel-file '" + dir.file("bomb.cu") + "'");
  EXPECT_EQ(r.output.find("compiler=none"), std::string::npos) << "no compiler process was seen\n"
                                                               << r.output;
  EXPECT_EQ(exit_of(r), 0) << r.output;
  EXPECT_EQ(r.output.find("still running"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("outlived"), std::string::npos) << r.output;
  EXPECT_TRUE(fs::is_regular_file(dir.file("tilescope/settings.json"))) << r.output;
  EXPECT_TRUE(fs::is_regular_file(dir.file("tilescope/imgui.ini"))) << r.output;
}

namespace {

// Runs tests/two_windows.sh: window A measures naive at tile 8, window B tiled at tile 16, both on the data
// folder `data`.
test::CmdResult two_windows(const test::TempDir& dir, const std::string& order) {
  for (const auto& [who, kernel, tile] : {std::tuple{"a", "naive", 8}, std::tuple{"b", "tiled", 16}}) {
    fs::create_directories(dir.path() / who / "tilescope");
    std::ofstream(dir.path() / who / "tilescope" / "settings.json")
        << "{\"kernel\": \"" << kernel << "\", \"tile\": " << tile << ", \"m\": 64, \"n\": 64, \"k\": 64}";
  }
  return test::run_cmd(std::string(TILESCOPE_SOURCE_DIR) + "/tests/two_windows.sh '" + kBin + "' '" +
                       dir.file("data") + "' '" + dir.file("a") + "' '" + dir.file("b") + "' " + order);
}

size_t points_of(const std::string& session_text, const std::string& kernel) {
  size_t n = 0;
  for (size_t at = 0; (at = session_text.find("\"kernel\":\"" + kernel + "\"", at)) != std::string::npos;
       ++at)
    ++n;
  return n;
}

}  // namespace

// Issue 26, item 8: two windows on one data folder, both started on a session of one point. A closes (saves),
// then B closes: B's save merges A's point in instead of replacing the file, and says so. Before, A's point
// was gone.
TEST(GuiConfig, TwoWindowsOnOneDataFolderKeepEachOthersPoints) {
  REQUIRE_DISPLAY();
  test::TempDir dir;
  // The session both start from: one point, saved by a first window.
  {
    fs::create_directories(dir.file("seed/tilescope"));
    std::ofstream(dir.file("seed/tilescope/settings.json"))
        << R"({"kernel": "coalesced", "tile": 16, "m": 64, "n": 64, "k": 64})";
  }
  const auto seed =
      test::run_cmd(std::string(TILESCOPE_SOURCE_DIR) + "/tests/two_windows.sh '" + kBin + "' '" +
                    dir.file("data") + "' '" + dir.file("seed") + "' '" + dir.file("seed") + "' a-then-b");
  ASSERT_NE(seed.output.find("a=0"), std::string::npos) << seed.output;
  const std::string file = dir.file("data/tilescope/session.json");
  const size_t seeded = points_of(content(file), "coalesced");
  ASSERT_GE(seeded, 1u) << content(file);

  const auto r = two_windows(dir, "a-then-b");
  EXPECT_NE(r.output.find("a=0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("b=0"), std::string::npos) << r.output;
  EXPECT_EQ(r.output.find("measured no point"), std::string::npos) << r.output;
  const std::string saved = content(file);
  EXPECT_EQ(points_of(saved, "coalesced"), seeded) << saved;
  EXPECT_GE(points_of(saved, "naive"), 1u) << "window A's point was lost\n" << r.output;
  EXPECT_GE(points_of(saved, "tiled"), 1u) << "window B's point was lost\n" << r.output;
  EXPECT_NE(r.output.find("B| "), std::string::npos);
  EXPECT_NE(r.output.find("saved by another window"), std::string::npos) << r.output;
}

// Issue 26, item 8: both windows refuse a damaged session.json and close in the same second: each keeps its
// points under a name of its own beside it (taken exclusively: -2 for the second), and the damaged file is
// left as it is. Before, the second replaced the first (2 of 5 tries).
TEST(GuiConfig, TwoWindowsClosingTogetherBesideADamagedSessionKeepBothSetsOfPoints) {
  REQUIRE_DISPLAY();
  test::TempDir dir;
  fs::create_directories(dir.file("data/tilescope"));
  { std::ofstream(dir.file("data/tilescope/session.json")) << "{ damaged"; }
  const auto r = two_windows(dir, "together");
  EXPECT_NE(r.output.find("a=0"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("b=0"), std::string::npos) << r.output;
  EXPECT_EQ(content(dir.file("data/tilescope/session.json")), "{ damaged");
  std::vector<std::string> beside;
  for (const auto& e : fs::directory_iterator(dir.file("data/tilescope")))
    if (e.path().filename().string().rfind("session-", 0) == 0) beside.push_back(content(e.path().string()));
  ASSERT_EQ(beside.size(), 2u) << r.output;
  size_t naive = 0, tiled = 0;
  for (const auto& text : beside) {
    naive += points_of(text, "naive");
    tiled += points_of(text, "tiled");
  }
  EXPECT_GE(naive, 1u) << r.output;
  EXPECT_GE(tiled, 1u) << r.output;
}
