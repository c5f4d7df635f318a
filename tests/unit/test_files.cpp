// The program's one writer and its checks: a unique temporary file next to the target, nothing replaced that
// was not named with --force, --force for regular files only, a failed write leaves everything as it was.
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "core/io/files.hpp"
#include "test_util.hpp"

using namespace ts;
namespace fs = std::filesystem;

namespace {

std::string content(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
}

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string refusal(const std::function<void()>& f) {
  try {
    f();
  } catch (const ValidationError& e) {
    return e.what();
  }
  return "not refused";
}

// A folder this process cannot create files in: read-only by mode, or (as root, whom modes do not stop)
// /proc.
std::string unwritable_folder(const test::TempDir& dir) {
  if (::geteuid() == 0) return "/proc";
  const std::string ro = dir.file("read-only");
  fs::create_directories(ro);
  fs::permissions(ro, fs::perms::owner_read | fs::perms::owner_exec);
  return ro;
}

}  // namespace

TEST(Writer, NeverTouchesAFileNamedLikeAnOldTemporary) {
  test::TempDir dir;
  // A person's own file that happens to carry the name the old writers used for their temporary file.
  { std::ofstream(dir.file("out.npy.part")) << "mine"; }
  write_file(dir.file("out.npy"), "new", Replace::Never);
  EXPECT_EQ(content(dir.file("out.npy.part")), "mine");
  EXPECT_EQ(content(dir.file("out.npy")), "new");
  EXPECT_EQ(names_in(dir.path()), (std::vector<std::string>{"out.npy", "out.npy.part"}));
}

TEST(Writer, ReplacesOnlyWhenAskedAndKeepsThePermissions) {
  test::TempDir dir;
  const std::string p = dir.file("table.md");
  { std::ofstream(p) << "old"; }
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_NE(refusal([&] { write_file(p, "new", Replace::Never); }).find("already exists"), std::string::npos);
  EXPECT_EQ(content(p), "old");
  write_file(p, "new", Replace::RegularFile);
  EXPECT_EQ(content(p), "new");
  EXPECT_EQ(fs::status(p).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"table.md"});
}

TEST(Writer, ForceReplacesRegularFilesOnlyNeverLinksFifosSocketsDevicesOrFolders) {
  test::TempDir dir;
  { std::ofstream(dir.file("target")) << "precious"; }
  fs::create_symlink(dir.file("target"), dir.file("link"));
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  fs::create_directories(dir.file("folder"));
  const int sock = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  const std::string sock_path = dir.file("sock");
  ASSERT_LT(sock_path.size(), sizeof addr.sun_path);
  std::strcpy(addr.sun_path, sock_path.c_str());
  ASSERT_EQ(::bind(sock, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  std::vector<std::pair<std::string, std::string>> cases = {
      {"link", "a symbolic link"}, {"fifo", "a FIFO"}, {"sock", "a socket"}, {"folder", "is a folder"}};
  if (::geteuid() == 0 && ::mknod(dir.file("null").c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0)
    cases.push_back({"null", "a character device"});  // a /dev/null of our own, in the test's folder
  for (const auto& [name, kind] : cases) {
    SCOPED_TRACE(name);
    const std::string p = dir.file(name);
    const auto before = fs::symlink_status(p).type();
    for (Replace r : {Replace::RegularFile, Replace::Never}) {
      EXPECT_NE(refusal([&] { write_file(p, "x", r); }).find(kind), std::string::npos);
      EXPECT_NE(refusal([&] { check_output_path(p, r, "--out"); }).find(kind), std::string::npos);
    }
    EXPECT_EQ(fs::symlink_status(p).type(), before);
  }
  ::close(sock);
  EXPECT_EQ(content(dir.file("target")), "precious");
  EXPECT_EQ(names_in(dir.path()).size(), cases.size() + 1) << "a temporary file was left behind";
}

TEST(Writer, AFailedWriteLeavesTheOldFileAndNoTemporary) {
  test::TempDir dir;
  const std::string p = dir.file("c.npy");
  { std::ofstream(p) << "old contents"; }
  // The file size limit makes write(2) fail (EFBIG) as a full disk makes it fail (ENOSPC), on any machine.
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* old_handler = ::signal(SIGXFSZ, SIG_IGN);
  rlimit small = old;
  small.rlim_cur = 64 * 1024;
  ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
  std::string error;
  try {
    write_file(p, std::string(1 << 20, 'x'), Replace::RegularFile);
  } catch (const std::runtime_error& e) {
    error = e.what();
  }
  ::setrlimit(RLIMIT_FSIZE, &old);
  ::signal(SIGXFSZ, old_handler);
  EXPECT_NE(error.find("write failed"), std::string::npos) << error;
  EXPECT_NE(error.find("nothing was written"), std::string::npos) << error;
  EXPECT_EQ(content(p), "old contents");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"c.npy"});
}

TEST(Writer, AnAbandonedWriterRemovesItsTemporary) {
  test::TempDir dir;
  {
    AtomicWriter w(dir.file("never.csv"), Replace::Never);
    w.write("half a table");
  }
  EXPECT_TRUE(names_in(dir.path()).empty());
}

TEST(Writer, NeverModeLosesTheRaceToAFileThatAppearsWhileWriting) {
  test::TempDir dir;
  const std::string p = dir.file("export.png");
  AtomicWriter w(p, Replace::Never);
  w.write("ours");
  { std::ofstream(p) << "theirs"; }  // appears between the check and the rename
  EXPECT_NE(refusal([&] { w.commit(); }).find("already exists"), std::string::npos);
  EXPECT_EQ(content(p), "theirs");
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"export.png"});
}

// [SECTION] New names: taken exclusively, the whole set under one stem, -2, -3 when a name is taken.
namespace {
std::time_t noon() {  // a fixed time: the names below do not depend on the clock
  std::tm tm{};
  tm.tm_year = 125;
  tm.tm_mon = 0;
  tm.tm_mday = 31;
  tm.tm_hour = 12;
  tm.tm_isdst = -1;
  return std::mktime(&tm);
}
}  // namespace

TEST(NewNames, TheSecondExportOfASecondGetsTwoAndEachNameIsTakenAtOnce) {
  test::TempDir dir;
  NewNames a(dir.path(), "tilescope-bars", {"png", "csv"}, noon());
  EXPECT_EQ(a.stem(), "tilescope-bars-20250131-120000");
  EXPECT_EQ(a[0], dir.path() / "tilescope-bars-20250131-120000.png");
  EXPECT_EQ(a[1], dir.path() / "tilescope-bars-20250131-120000.csv");
  EXPECT_TRUE(fs::exists(a[0]));  // taken: created (empty) before anything is written
  NewNames b(dir.path(), "tilescope-bars", {"png", "csv"}, noon());
  EXPECT_EQ(b.stem(), "tilescope-bars-20250131-120000-2");
  // A name of the set taken by someone else (the first name pre-created): the whole set moves to -3.
  std::ofstream(dir.file("tilescope-bars-20250131-120000-3.csv")) << "someone's";
  NewNames c(dir.path(), "tilescope-bars", {"png", "csv"}, noon());
  EXPECT_EQ(c.stem(), "tilescope-bars-20250131-120000-4");
  EXPECT_FALSE(fs::exists(dir.file("tilescope-bars-20250131-120000-3.png")));  // not left behind
  EXPECT_EQ(content(dir.file("tilescope-bars-20250131-120000-3.csv")), "someone's");
  // Another kind of export never meets these names.
  NewNames panel(dir.path(), "tilescope-panel-bars", {"png"}, noon());
  EXPECT_EQ(panel.stem(), "tilescope-panel-bars-20250131-120000");
}

TEST(NewNames, WritesReplaceTheReservationOnlyAndUnwrittenNamesGoAway) {
  test::TempDir dir;
  {
    NewNames n(dir.path(), "shot", {"png", "csv"}, noon());
    write_file(n[0], "picture", Replace::Reserved);
    // A reservation holds its name: nothing else writes there, and a written file is never replaced.
    EXPECT_NE(refusal([&] { write_file(n[1], "x", Replace::Never); }).find("already exists"),
              std::string::npos);
    EXPECT_NE(refusal([&] { write_file(n[0], "again", Replace::Reserved); }).find("not the empty file"),
              std::string::npos);
  }
  // The export failed after the PNG: the PNG stays, the empty CSV does not.
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"shot-20250131-120000.png"});
  EXPECT_EQ(content(dir.file("shot-20250131-120000.png")), "picture");
  {
    NewNames kept(dir.path(), "session", {"json"}, noon());
    kept.keep();  // written later by its owner
  }
  EXPECT_TRUE(fs::exists(dir.file("session-20250131-120000.json")));
  // A folder where nothing can be created: an error naming it, not an endless search.
  const std::string ro = unwritable_folder(dir);
  EXPECT_THROW(NewNames(ro, "shot", {"png"}, noon()), std::runtime_error);
}

// A set (a figure's PNG, CSV and JSON) is written whole or not at all: the third write fails as on a full
// disk (the file size limit), and the two files written before it go with the reservation; a file put under
// one of the names by someone else stays. A completed set stays whole.
TEST(NewNames, ASetThatFailsMidwayLeavesNoneOfItsFiles) {
  test::TempDir dir;
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_FSIZE, &old), 0);
  auto* old_handler = ::signal(SIGXFSZ, SIG_IGN);
  std::string error;
  {
    NewNames n(dir.path(), "tilescope-bars", {"png", "csv", "json"}, noon());
    try {
      write_file(n[0], "picture", Replace::Reserved);
      n.written(0);
      write_file(n[1], "data", Replace::Reserved);
      n.written(1);
      rlimit small = old;
      small.rlim_cur = 64 * 1024;
      ASSERT_EQ(::setrlimit(RLIMIT_FSIZE, &small), 0);
      write_file(n[2], std::string(1 << 20, 'x'), Replace::Reserved);
      n.written(2);
      n.complete();
    } catch (const std::runtime_error& e) {
      error = e.what();
    }
    ::setrlimit(RLIMIT_FSIZE, &old);
    EXPECT_TRUE(n.any_written());
  }
  ::signal(SIGXFSZ, old_handler);
  EXPECT_NE(error.find("write failed"), std::string::npos) << error;
  EXPECT_TRUE(names_in(dir.path()).empty()) << names_in(dir.path()).size() << " files left";
  {
    NewNames n(dir.path(), "tilescope-bars", {"png", "csv"}, noon());
    write_file(n[0], "picture", Replace::Reserved);
    n.written(0);
    // Someone else's file under the second name (after the reservation was taken from under us).
    fs::remove(n[1]);
    std::ofstream(n[1]) << "theirs";
  }
  EXPECT_EQ(names_in(dir.path()), std::vector<std::string>{"tilescope-bars-20250131-120000.csv"});
  EXPECT_EQ(content(dir.file("tilescope-bars-20250131-120000.csv")), "theirs");
  fs::remove(dir.file("tilescope-bars-20250131-120000.csv"));
  {
    NewNames n(dir.path(), "tilescope-bars", {"png", "csv"}, noon());
    for (size_t i = 0; i < 2; ++i) {
      write_file(n[i], "whole", Replace::Reserved);
      n.written(i);
    }
    n.complete();
  }
  EXPECT_EQ(names_in(dir.path()).size(), 2u);
}

TEST(NewNames, ManyExportsAtOnceInOneSecondAllGetNamesOfTheirOwn) {
  test::TempDir dir;
  constexpr int kThreads = 8, kEach = 25;
  std::vector<std::vector<std::string>> stems(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        NewNames n(dir.path(), "tilescope-timings", {"png", "csv", "json"}, noon());
        for (size_t e = 0; e < 3; ++e) write_file(n[e], n.stem(), Replace::Reserved);
        stems[size_t(t)].push_back(n.stem());
      }
    });
  for (auto& t : threads) t.join();
  std::set<std::string> all;
  for (const auto& v : stems) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), size_t(kThreads * kEach));
  EXPECT_EQ(names_in(dir.path()).size(), size_t(3 * kThreads * kEach));
  for (const std::string& stem : all)  // each file holds what its own writer wrote
    EXPECT_EQ(content((dir.path() / (stem + ".json")).string()), stem);
}

TEST(OutputCheck, FindsWhatWouldFailBeforeAnyWorkIsDone) {
  test::TempDir dir;
  EXPECT_NO_THROW(check_output_path(dir.file("new.npy"), Replace::Never, "--out"));
  EXPECT_NO_THROW(check_output_path("", Replace::Never, "--out"));
  EXPECT_NE(refusal([&] {
              check_output_path(dir.file("missing/c.npy"), Replace::Never, "--out");
            }).find("folder " + dir.file("missing") + " does not exist"),
            std::string::npos);
  { std::ofstream(dir.file("file")) << "x"; }
  EXPECT_NE(
      refusal([&] { check_output_path(dir.file("file/c.npy"), Replace::Never, "--out"); }).find("--out"),
      std::string::npos);
  const std::string ro = unwritable_folder(dir);
  const std::string why = refusal([&] { check_output_path(ro + "/c.npy", Replace::Never, "--out"); });
  EXPECT_NE(why.find("cannot create files in folder " + ro), std::string::npos) << why;
  EXPECT_NE(refusal([&] { check_output_folder(ro + "/exports", "--export-panels"); }).find("--export-panels"),
            std::string::npos);
  EXPECT_NE(
      refusal([&] { check_output_folder(dir.file("file"), "--export-panels"); }).find("is not a folder"),
      std::string::npos);
  // A folder checked without being made (figure's --out-dir): under a file, a dangling or looping link, a
  // folder where nothing can be created, each with its reason; a missing folder under a good one passes and
  // is not made.
  fs::create_symlink(dir.file("nowhere"), dir.file("dangling"));
  fs::create_symlink(dir.file("loop"), dir.file("loop"));
  for (const auto& c : std::vector<std::pair<std::string, std::string>>{
           {dir.file("file") + "/sub", dir.file("file") + " is not a folder (a regular file)"},
           {dir.file("file") + "/sub/deeper", dir.file("file") + " is not a folder (a regular file)"},
           {dir.file("dangling"), dir.file("dangling") + " is a symbolic link to " + dir.file("nowhere") +
                                      ", which does not exist"},
           {dir.file("loop") + "/sub", dir.file("loop") + " is a loop of symbolic links"},
           {ro + "/figures", "cannot create it in " + ro},
           {"", "--out-dir is empty"},
       }) {
    // Named copies, not structured bindings: a lambda may not capture those in C++17 (clang refuses it).
    const std::string& folder = c.first;
    const std::string why = refusal([&] { check_output_folder(folder, "--out-dir", false); });
    EXPECT_NE(why.find(c.second), std::string::npos) << folder << ": " << why;
  }
  EXPECT_NO_THROW(check_output_folder(dir.file("new/deeper"), "--out-dir", false));
  EXPECT_FALSE(fs::exists(dir.file("new")));
  fs::remove(dir.file("dangling"));
  fs::remove(dir.file("loop"));
  if (::geteuid() != 0) fs::permissions(ro, fs::perms::owner_all);
  // The checks leave nothing behind.
  const std::vector<std::string> left =
      ::geteuid() == 0 ? std::vector<std::string>{"file"} : std::vector<std::string>{"file", "read-only"};
  EXPECT_EQ(names_in(dir.path()), left);
}

TEST(InputFiles, OnlyRegularFilesAreOpened) {
  test::TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  EXPECT_NE(refusal([&] { InputFile f(dir.file("fifo")); }).find("a FIFO (named pipe); only regular files"),
            std::string::npos);
  EXPECT_NE(refusal([&] { InputFile f(dir.path().string()); }).find("a folder"), std::string::npos);
  EXPECT_NE(refusal([&] { InputFile f(dir.file("missing")); }).find("cannot open (No such file"),
            std::string::npos);
  { std::ofstream(dir.file("ok")) << "12345"; }
  InputFile f(dir.file("ok"));
  EXPECT_EQ(f.size(), 5u);
  char b[3];
  EXPECT_TRUE(f.read_at(2, b, 3));
  EXPECT_EQ(std::string(b, 3), "345");
  EXPECT_FALSE(f.read_at(3, b, 3));
}

TEST(HostMemory, ASizeAboveWhatIsAvailableIsRefusedWithTheNumbers) {
  if (available_host_memory() == 0) GTEST_SKIP() << "no /proc/meminfo here";
  const std::string why = refusal([] { check_host_memory(uint64_t(1) << 50, "A (1 PiB)"); });
  EXPECT_NE(why.find("A (1 PiB) needs 1024.0 TiB of host memory, but only"), std::string::npos) << why;
  EXPECT_NO_THROW(check_host_memory(1024, "a little"));
}
