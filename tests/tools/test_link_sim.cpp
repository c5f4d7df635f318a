// link_sim: its model with times given (every delivery time exact, no clock), then the program itself
// relaying through cat and sh. The program's runs use no or small delays and check content, order, counts and
// exit codes only; a wall-clock limit only bounds how long a test waits for an event that must come.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/tools/link_model.hpp"

namespace {

using linksim::LinkParams;
using linksim::LinkQueue;
using linksim::LinkSchedule;
using linksim::Nanos;
using linksim::serialisation_time;
using namespace std::chrono_literals;

constexpr std::int64_t kMbit = 1'000'000;

LinkParams params(Nanos latency, std::int64_t bits_per_second, std::size_t chunk_bytes = 1500) {
  LinkParams p;
  p.latency = latency;
  p.bits_per_second = bits_per_second;
  p.chunk_bytes = chunk_bytes;
  return p;
}

std::string random_bytes(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rng() & 0xff);
  return s;
}

// [SECTION] The model

TEST(LinkModel, SerialisationTimeIsRoundedUpToTheNanosecond) {
  EXPECT_EQ(serialisation_time(1500, 100 * kMbit), Nanos{120'000});  // 80 ns a byte
  EXPECT_EQ(serialisation_time(1, 3 * kMbit), Nanos{2667});          // 2666.67
  EXPECT_EQ(serialisation_time(3, 3 * kMbit), Nanos{8000});
  EXPECT_EQ(serialisation_time(1000, 0), Nanos{0});  // unthrottled
  EXPECT_EQ(serialisation_time(0, 100 * kMbit), Nanos{0});
  EXPECT_EQ(serialisation_time(std::size_t{1} << 30, 1), Nanos{std::int64_t{8'000'000'000} << 30});
}

TEST(LinkModel, LatencyOnly) {
  LinkSchedule s(params(25ms, 0));
  EXPECT_EQ(s.chunk(100, 0ms), 25ms);
  EXPECT_EQ(s.chunk(100'000, 3ms), 28ms);  // size costs nothing unthrottled
  EXPECT_EQ(s.chunk(1, 3ms), 28ms);        // same arrival, same delivery, order kept
  EXPECT_EQ(s.eof(10ms), 35ms);
}

TEST(LinkModel, BandwidthOnly) {
  LinkSchedule s(params(0ms, 100 * kMbit));  // 80 ns a byte
  EXPECT_EQ(s.chunk(1000, 0us), 80us);
  EXPECT_EQ(s.chunk(500, 10us), 120us);    // waits for the first to leave the wire
  EXPECT_EQ(s.chunk(500, 1s), 1s + 40us);  // the link was idle: it starts at arrival
  EXPECT_EQ(s.eof(1s), 1s + 40us);         // the end takes no wire time but comes after the bytes
  EXPECT_EQ(s.chunk(100, 2s), 2s + 8us);
}

TEST(LinkModel, LatencyAndBandwidth) {
  LinkSchedule s(params(25ms, 8 * kMbit));  // 1 us a byte
  EXPECT_EQ(s.chunk(1000, 0ms), 26ms);
  EXPECT_EQ(s.chunk(1000, 0ms), 27ms);     // behind the first
  EXPECT_EQ(s.chunk(1000, 1500us), 28ms);  // max(26.5, 27) + 1
  EXPECT_EQ(s.chunk(1000, 10ms), 36ms);    // idle again: 10 + 25 + 1
  EXPECT_EQ(s.eof(10ms), 36ms);            // max(35, 36)
  EXPECT_EQ(s.chunk(1000, 100ms), 126ms);  // after the end nothing changes in the schedule itself
}

TEST(LinkModel, ABurstLeavesBackToBackAndItsBytesBecomeDueInTurn) {
  LinkQueue q(params(5ms, 8 * kMbit));  // 1 us a byte
  const std::string data = random_bytes(1000, 1);
  for (int i = 0; i < 10; ++i) q.push(data.data() + 100 * i, 100, 0ms);  // ten reads at once
  EXPECT_EQ(q.pending_bytes(), 1000u);
  EXPECT_EQ(q.next_due(), 5100us);
  EXPECT_EQ(q.last_due(), 6ms);
  EXPECT_FALSE(q.has_due(5100us - 1ns));
  EXPECT_TRUE(q.has_due(5100us));
  EXPECT_EQ(q.due_bytes(5100us - 1ns), 0u);
  EXPECT_EQ(q.due_bytes(5100us), 100u);
  EXPECT_EQ(q.due_bytes(5550us), 500u);
  EXPECT_EQ(q.due_bytes(6ms - 1ns), 900u);
  EXPECT_EQ(q.due_bytes(6ms), 1000u);
  std::string out;
  for (const auto& s : q.due(6ms)) out.append(reinterpret_cast<const char*>(s.data), s.size);
  EXPECT_EQ(out, data);
  // A read after the burst waits for it: max(1 + 5, 6) + 0.1 ms.
  q.push("x", 1, 1ms);
  EXPECT_EQ(q.last_due(), 6001us);
}

TEST(LinkModel, AReadIsCutIntoChunksDeliveredWholeInTurn) {
  LinkQueue q(params(0ms, 100 * kMbit, 1500));  // 1500 bytes: 120 us
  const std::string data = random_bytes(4000, 2);
  q.push(data.data(), data.size(), 0us);
  EXPECT_EQ(q.next_due(), 120us);
  EXPECT_EQ(q.last_due(), 320us);  // 1500, 1500, 1000
  EXPECT_EQ(q.due_bytes(120us - 1ns), 0u);
  EXPECT_EQ(q.due_bytes(120us), 1500u);
  EXPECT_EQ(q.due_bytes(240us - 1ns), 1500u);
  EXPECT_EQ(q.due_bytes(240us), 3000u);
  EXPECT_EQ(q.due_bytes(320us - 1ns), 3000u);
  EXPECT_EQ(q.due_bytes(320us), 4000u);

  // due() caps what it shows and keeps order; consume() takes any prefix, even inside a chunk.
  const auto spans = q.due(1s, 2500);
  ASSERT_EQ(spans.size(), 2u);
  EXPECT_EQ(spans[0].size, 1500u);
  EXPECT_EQ(spans[1].size, 1000u);
  q.consume(1000);
  EXPECT_EQ(q.delivered_bytes(), 1000u);
  EXPECT_EQ(q.pending_bytes(), 3000u);
  EXPECT_EQ(q.next_due(), 120us);  // the rest of the first chunk
  EXPECT_EQ(q.due_bytes(120us), 500u);
  std::string out = data.substr(0, 1000);
  while (q.pending_bytes() > 0) {
    const auto d = q.due(1s, 700);  // short writes
    ASSERT_FALSE(d.empty());
    out.append(reinterpret_cast<const char*>(d[0].data), d[0].size);
    q.consume(d[0].size);
  }
  EXPECT_EQ(out, data);
  EXPECT_EQ(q.delivered_bytes(), 4000u);
  EXPECT_FALSE(q.next_due().has_value());
}

TEST(LinkModel, SeparateReadsAreSeparateChunks) {
  LinkQueue q(params(0ms, 100 * kMbit, 1500));
  q.push("aaaa", 4, 0us);  // 320 ns
  q.push("bbbb", 4, 0us);
  EXPECT_EQ(q.next_due(), 320ns);
  EXPECT_EQ(q.last_due(), 640ns);
  EXPECT_EQ(q.due_bytes(320ns), 4u);
}

TEST(LinkModel, TheEndComesAfterEveryByteAndNotBeforeTheLatency) {
  LinkQueue q(params(1ms, 8 * kMbit, 1500));  // 1 us a byte
  const std::string data = random_bytes(3000, 3);
  q.push(data.data(), data.size(), 0ms);  // chunks due at 2.5 and 4 ms
  q.push_eof(0ms);
  EXPECT_TRUE(q.eof_pushed());
  EXPECT_EQ(q.last_due(), 4ms);
  EXPECT_FALSE(q.eof_due(1s));  // bytes still wait
  q.consume(3000);
  EXPECT_EQ(q.next_due(), 4ms);  // only the end is left
  EXPECT_FALSE(q.eof_due(4ms - 1ns));
  EXPECT_TRUE(q.eof_due(4ms));
  q.push("late", 4, 5ms);  // nothing after the end
  EXPECT_EQ(q.pending_bytes(), 0u);

  LinkQueue empty(params(25ms, 100 * kMbit));
  empty.push_eof(2ms);
  EXPECT_EQ(empty.next_due(), 27ms);
  EXPECT_FALSE(empty.eof_due(27ms - 1ns));
  EXPECT_TRUE(empty.eof_due(27ms));
}

TEST(LinkModel, DiscardForgetsTheBytesButNotTheCounts) {
  LinkQueue q(params(0ms, 0));
  q.push("abcdef", 6, 0ms);
  q.consume(2);
  q.discard();
  EXPECT_EQ(q.pending_bytes(), 0u);
  EXPECT_EQ(q.delivered_bytes(), 2u);
  EXPECT_FALSE(q.next_due().has_value());
}

// [SECTION] The program

// A generous bound on waiting for an event that must come (never a verdict on speed).
constexpr auto kPatience = 120s;

std::string temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string t = std::string(base && *base ? base : "/tmp") + "/link_sim_test.XXXXXX";
  if (!mkdtemp(t.data())) ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
  return t;
}

void write_file(const std::string& path, const std::string& data) {
  std::ofstream(path, std::ios::binary) << data;
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// link_sim with pipes for its stdin and stdout; its stderr is the test's.
struct LinkSim {
  pid_t pid = -1;
  int in = -1;
  int out = -1;
  std::thread writer;

  explicit LinkSim(const std::vector<std::string>& args) {
    std::vector<std::string> all{LINK_SIM_BIN};
    all.insert(all.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (std::string& a : all) argv.push_back(a.data());
    argv.push_back(nullptr);
    int i[2], o[2];
    if (pipe2(i, O_CLOEXEC) != 0 || pipe2(o, O_CLOEXEC) != 0) ADD_FAILURE() << "pipe";
    pid = fork();
    if (pid == 0) {
      signal(SIGPIPE, SIG_DFL);
      dup2(i[0], 0);
      dup2(o[1], 1);
      execv(argv[0], argv.data());
      _exit(127);
    }
    close(i[0]);
    close(o[1]);
    in = i[1];
    out = o[0];
  }
  ~LinkSim() {
    if (pid > 0) {  // a test that failed before link_sim ended: its end frees a writer blocked on it
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (writer.joinable()) writer.join();
    if (in >= 0) close(in);
    if (out >= 0) close(out);
  }

  // Writes `data` to link_sim's stdin from a thread, until done or the pipe breaks; then closes it if asked.
  void feed(std::string data, bool close_after = true) {
    writer = std::thread([this, data = std::move(data), close_after] {
      std::size_t at = 0;
      while (at < data.size()) {
        const ssize_t n = write(in, data.data() + at, std::min<std::size_t>(data.size() - at, 1 << 16));
        if (n > 0)
          at += static_cast<std::size_t>(n);
        else if (n < 0 && errno == EINTR)
          continue;
        else
          break;  // EPIPE: link_sim closed its stdin (the command went, or the link dropped)
      }
      if (close_after) {
        close(in);
        in = -1;
      }
    });
  }

  // Reads link_sim's stdout until the end, until `most` bytes came, or until `quiet` passed with nothing
  // (quiet = 0: no such limit). `eof` says whether the end came.
  std::string read(std::size_t most, bool* eof, std::chrono::milliseconds quiet = 0ms) {
    std::string got;
    *eof = false;
    const auto give_up = std::chrono::steady_clock::now() + kPatience;
    char buf[65536];
    while (got.size() < most) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(give_up - std::chrono::steady_clock::now());
      if (left <= 0ms) {
        ADD_FAILURE() << "link_sim's stdout: nothing for " << kPatience.count() << " s";
        break;
      }
      pollfd p{out, POLLIN, 0};
      const int r = poll(&p, 1, static_cast<int>((quiet > 0ms ? std::min(quiet, left) : left).count()));
      if (r < 0 && errno == EINTR) continue;
      if (r == 0) {
        if (quiet > 0ms) break;
        continue;
      }
      const ssize_t n = ::read(out, buf, std::min(sizeof buf, most - got.size()));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        *eof = true;
        break;
      }
      got.append(buf, static_cast<std::size_t>(n));
    }
    return got;
  }
  std::string read_all() {
    bool eof = false;
    std::string s = read(SIZE_MAX, &eof);
    EXPECT_TRUE(eof);
    return s;
  }

  // link_sim's wait status (it exits once its stdout closed, so after read_all() this does not wait long).
  int wait() {
    if (writer.joinable()) writer.join();
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    pid = -1;
    return status;
  }
  bool alive() const { return waitpid(pid, nullptr, WNOHANG) == 0; }
};

// The test's own writes to a pipe link_sim closed must fail with EPIPE, not kill the test.
class LinkSimProgram : public testing::Test {
 protected:
  void SetUp() override { signal(SIGPIPE, SIG_IGN); }
};

int exit_code(int status) {
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(LinkSimProgram, RelaysMegabytesThroughCatUnchanged) {
  const std::string data = random_bytes(3 << 20, 10);
  LinkSim l({"--rtt-ms", "0", "--mbit", "0", "--", "cat"});
  l.feed(data);
  const std::string got = l.read_all();
  EXPECT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
  EXPECT_EQ(exit_code(l.wait()), 0);
}

TEST_F(LinkSimProgram, RelaysUnchangedThroughADelayedThrottledLinkInSmallChunks) {
  const std::string dir = temp_dir();
  const std::string data = random_bytes(1 << 20, 11);
  LinkSim l({"--rtt-ms", "4", "--mbit", "800", "--chunk-bytes", "1000", "--queue-bytes", "100000", "--log",
             dir + "/log", "--", "cat"});
  l.feed(data);
  const std::string got = l.read_all();
  EXPECT_EQ(got.size(), data.size());
  EXPECT_TRUE(got == data);
  EXPECT_EQ(exit_code(l.wait()), 0);
  const std::string log = read_file(dir + "/log");
  EXPECT_NE(log.find("up end delivered"), std::string::npos) << log.substr(0, 2000);
  EXPECT_NE(log.find("down end delivered"), std::string::npos);
  EXPECT_NE(log.find("exit 0"), std::string::npos);
}

TEST_F(LinkSimProgram, EmptyInputGivesEmptyOutput) {
  LinkSim l({"--rtt-ms", "2", "--", "cat"});
  l.feed("");
  EXPECT_EQ(l.read_all(), "");
  EXPECT_EQ(exit_code(l.wait()), 0);
}

TEST_F(LinkSimProgram, ACommandThatClosesEarlyEndsTheRelay) {
  const std::string data = random_bytes(3 << 20, 12);
  LinkSim l({"--rtt-ms", "0", "--mbit", "0", "--", "sh", "-c", "head -c 100000"});
  l.feed(data);  // most of it meets a closed pipe
  const std::string got = l.read_all();
  EXPECT_EQ(got.size(), 100000u);
  EXPECT_TRUE(got == data.substr(0, 100000));
  EXPECT_EQ(exit_code(l.wait()), 0);
}

TEST_F(LinkSimProgram, ExitStatusIsTheCommands) {
  {
    LinkSim l({"--rtt-ms", "1", "--", "sh", "-c", "cat; exit 7"});
    l.feed("hello");
    EXPECT_EQ(l.read_all(), "hello");
    EXPECT_EQ(exit_code(l.wait()), 7);
  }
  {
    LinkSim l({"--", "sh", "-c", "kill -TERM $$"});
    l.feed("");
    l.read_all();
    EXPECT_EQ(exit_code(l.wait()), 128 + SIGTERM);
  }
  {
    LinkSim l({"--", "/nonexistent/link_sim_command"});
    l.feed("");
    l.read_all();
    EXPECT_EQ(exit_code(l.wait()), 127);
  }
}

TEST_F(LinkSimProgram, BadUsageExitsWithTwo) {
  for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
           {"--rtt-ms", "0"}, {"--"}, {"--mbit", "-1", "--", "cat"}, {"--bogus", "--", "cat"}}) {
    LinkSim l(args);
    l.feed("");
    l.read_all();
    EXPECT_EQ(exit_code(l.wait()), 2) << args[0];
  }
}

// The reader sees at most N bytes, a prefix of what was sent, then the end; the command was killed (it was
// still reading: the writer had sent more than N).
TEST_F(LinkSimProgram, DropCutsBothWaysAndKillsTheCommand) {
  const std::string dir = temp_dir();
  const std::string data = random_bytes(1 << 20, 13);
  const std::size_t n = 200000;  // more than a pipe holds, so the command ran its first line before
  LinkSim l({"--rtt-ms", "0", "--mbit", "0", "--drop-after-bytes", std::to_string(n), "--", "sh", "-c",
             "echo $$ > " + dir + "/pid; exec cat"});
  l.feed(data);
  const std::string got = l.read_all();
  EXPECT_LE(got.size(), n);
  EXPECT_TRUE(got == data.substr(0, got.size()));
  EXPECT_EQ(exit_code(l.wait()), 128 + SIGKILL);
  const pid_t command = static_cast<pid_t>(std::atoi(read_file(dir + "/pid").c_str()));
  ASSERT_GT(command, 0);
  EXPECT_EQ(kill(command, 0), -1);  // killed and reaped
  EXPECT_EQ(errno, ESRCH);
}

// Downstream alone: exactly N bytes come through, then the end.
TEST_F(LinkSimProgram, DropAfterExactlyNBytesDownstream) {
  const std::string dir = temp_dir();
  const std::string data = random_bytes(1 << 20, 14);
  write_file(dir + "/data", data);
  LinkSim l({"--rtt-ms", "1", "--mbit", "0", "--drop-after-bytes", "100000", "--", "sh", "-c",
             "cat " + dir + "/data; exec sleep 30"});
  l.feed("");
  const std::string got = l.read_all();
  EXPECT_EQ(got.size(), 100000u);
  EXPECT_TRUE(got == data.substr(0, 100000));
  EXPECT_EQ(exit_code(l.wait()), 128 + SIGKILL);
}

// Exactly N bytes come through, then nothing, not even the end, while link_sim lives on; SIGTERM ends it and
// its command.
TEST_F(LinkSimProgram, StallAfterExactlyNBytesDownstreamKeepsThePipesOpen) {
  const std::string dir = temp_dir();
  const std::string data = random_bytes(1 << 20, 15);
  write_file(dir + "/data", data);
  LinkSim l({"--rtt-ms", "0", "--mbit", "0", "--stall-after-bytes", "100000", "--", "sh", "-c",
             "echo $$ > " + dir + "/pid; exec cat " + dir + "/data"});
  l.feed("", /*close_after=*/false);
  bool eof = false;
  const std::string got = l.read(100000, &eof);
  EXPECT_EQ(got.size(), 100000u);
  EXPECT_TRUE(got == data.substr(0, 100000));
  EXPECT_FALSE(eof);
  // Nothing more: no byte and no end.
  const std::string more = l.read(SIZE_MAX, &eof, 300ms);
  EXPECT_EQ(more.size(), 0u);
  EXPECT_FALSE(eof);
  EXPECT_TRUE(l.alive());
  kill(l.pid, SIGTERM);
  const int status = l.wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
  const pid_t command = static_cast<pid_t>(std::atoi(read_file(dir + "/pid").c_str()));
  ASSERT_GT(command, 0);
  EXPECT_EQ(kill(command, 0), -1);
  EXPECT_EQ(errno, ESRCH);
}

// Upstream reaches N first through cat: the reader gets at most N bytes, a prefix, and no end.
TEST_F(LinkSimProgram, StallUpstreamStopsTheEcho) {
  const std::string data = random_bytes(1 << 20, 16);
  const std::size_t n = 200000;
  LinkSim l({"--rtt-ms", "0", "--mbit", "0", "--stall-after-bytes", std::to_string(n), "--", "cat"});
  l.feed(data);  // blocks once the pipes are full; link_sim's end unblocks it
  bool eof = false;
  const std::string got = l.read(SIZE_MAX, &eof, 300ms);
  EXPECT_LE(got.size(), n);
  EXPECT_TRUE(got == data.substr(0, got.size()));
  EXPECT_FALSE(eof);
  EXPECT_TRUE(l.alive());
  kill(l.pid, SIGTERM);
  const int status = l.wait();
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM) << status;
}

}  // namespace
