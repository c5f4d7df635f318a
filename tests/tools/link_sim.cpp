// link_sim: a simulated network link between whoever runs it and the command it starts; the tests' stand-in
// for `ssh gpu-box tilescope serve` over a slow network ("a simulated link of 50 ms round trip and 100
// Mbit/s").
//
//   link_sim [--rtt-ms 50] [--mbit 100] [--chunk-bytes 1500] [--queue-bytes 4194304] [--log FILE]
//            [--drop-after-bytes N] [--stall-after-bytes N] -- command args...
//
// It starts `command` (execvp, no shell) with pipes for its stdin and stdout; its stderr is link_sim's own.
// What link_sim reads on its stdin goes to the command's stdin ("up"), what the command writes to its stdout
// comes out of link_sim's stdout ("down"), byte for byte and in order, each direction through the link of
// tests/tools/link_model.hpp: one-way latency rtt/2, throttled to --mbit (0: no throttling), in chunks of at
// most --chunk-bytes. At most --queue-bytes wait in each direction; beyond that link_sim stops reading that
// input, so a fast writer blocks as it would on a full network buffer.
// - The end of link_sim's stdin reaches the command (its stdin is closed) after every byte before it, at the
//   earliest rtt/2 later. The end of the command's stdout likewise closes link_sim's stdout. link_sim exits
//   once its stdout is closed and the command's stdin is closed or the command has exited, with the command's
//   exit status (128 + the signal that killed it). If the command cannot be started: 127.
// - A reader of link_sim's stdout that goes away closes the command's stdout pipe (the command sees EPIPE); a
//   command that stops reading its stdin closes link_sim's stdin (the writer sees EPIPE).
// - --drop-after-bytes N: once either direction has delivered N bytes, the link drops: link_sim closes its
//   stdin and stdout and the command's pipes, kills the command with SIGKILL and exits with its status (137).
// - --stall-after-bytes N: once either direction has delivered N bytes, the link hangs: nothing more is read
//   or delivered, every pipe stays open, until link_sim is killed.
// - SIGTERM, SIGINT or SIGHUP: the command is killed with SIGKILL, then link_sim dies of the signal it got.
// - --log FILE: one line per event (reads, deliveries, ends, drop or stall, exit), timed from the start.
// Exit code 2 for bad usage.
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "tests/tools/link_model.hpp"

namespace {

using linksim::LinkParams;
using linksim::LinkQueue;
using linksim::Nanos;

constexpr int kExitUsage = 2;
constexpr int kExitCannotStart = 127;
constexpr std::size_t kReadBytes = 64 * 1024;
constexpr std::size_t kChildWriteBytes =
    256 * 1024;  // at most, per write to the command's (non-blocking) stdin
constexpr int kMaxSpans = 64;

struct Options {
  double rtt_ms = 50;
  double mbit = 100;
  std::size_t chunk_bytes = 1500;
  std::size_t queue_bytes = 4 * 1024 * 1024;
  std::string log;
  bool drop = false;
  bool stall = false;
  std::uint64_t drop_after = 0;
  std::uint64_t stall_after = 0;
  std::vector<std::string> command;
};

// [SECTION] Signals, through a pipe the loop polls
int g_signal_write = -1;

extern "C" void on_signal(int sig) {
  const int saved = errno;
  const unsigned char b = static_cast<unsigned char>(sig);
  ssize_t ignored = write(g_signal_write, &b, 1);
  (void)ignored;
  errno = saved;
}

void handle(int sig, void (*fn)(int), int flags = 0) {
  struct sigaction sa {};
  sa.sa_handler = fn;
  sa.sa_flags = flags;
  sigemptyset(&sa.sa_mask);
  sigaction(sig, &sa, nullptr);
}

int exit_code_of(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// [SECTION] The relay
class Relay {
 public:
  Relay(const Options& o, const LinkParams& link, std::FILE* log)
      : m_o(o), m_up(link), m_down(link), m_log(log), m_t0(std::chrono::steady_clock::now()) {}

  // Starts the command; false (after saying why) when it cannot be started.
  bool start(int signal_read);
  // Relays until the end; the exit code.
  int run();

 private:
  Nanos now() const { return std::chrono::steady_clock::now() - m_t0; }
  void say(const char* fmt, ...);
  std::size_t allowance(const LinkQueue& q) const {
    if (!m_o.drop && !m_o.stall) return SIZE_MAX;
    const std::uint64_t d = q.delivered_bytes();
    return d >= limit() ? 0 : static_cast<std::size_t>(std::min<std::uint64_t>(limit() - d, SIZE_MAX));
  }
  std::uint64_t limit() const {
    if (m_o.drop && m_o.stall) return std::min(m_o.drop_after, m_o.stall_after);
    return m_o.drop ? m_o.drop_after : m_o.stall_after;
  }
  bool drop_first() const { return m_o.drop && (!m_o.stall || m_o.drop_after <= m_o.stall_after); }
  bool limit_reached() const {
    return (m_o.drop || m_o.stall) &&
           (m_up.delivered_bytes() >= limit() || m_down.delivered_bytes() >= limit());
  }
  void deliver_up(Nanos t);
  void deliver_down(Nanos t);
  void read_into(int& fd, LinkQueue& q, const char* name, Nanos t);
  void up_broken();
  void down_broken();
  void reap();
  int finish();
  int drop();
  [[noreturn]] void die_of(int sig);

  const Options& m_o;
  LinkQueue m_up;
  LinkQueue m_down;
  std::FILE* m_log;
  std::chrono::steady_clock::time_point m_t0;
  pid_t m_child = -1;
  bool m_reaped = false;
  int m_status = 0;
  bool m_stalled = false;
  bool m_out_ready = false;  // the last poll said link_sim's stdout takes a write
  int m_in = 0;              // link_sim's stdin
  int m_out = 1;             // link_sim's stdout
  int m_child_in = -1;       // the command's stdin (non-blocking, ours)
  int m_child_out = -1;      // the command's stdout (non-blocking, ours)
  int m_signals = -1;
  std::vector<unsigned char> m_buf = std::vector<unsigned char>(kReadBytes);
};

void Relay::say(const char* fmt, ...) {
  if (!m_log) return;
  std::fprintf(m_log, "%.6f ", std::chrono::duration<double>(now()).count());
  va_list ap;
  va_start(ap, fmt);
  std::vfprintf(m_log, fmt, ap);
  va_end(ap);
  std::fputc('\n', m_log);
}

bool Relay::start(int signal_read) {
  m_signals = signal_read;
  int up[2], down[2], err[2];
  if (pipe2(up, O_CLOEXEC) != 0 || pipe2(down, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0) {
    std::fprintf(stderr, "link_sim: pipe: %s\n", std::strerror(errno));
    return false;
  }
  std::vector<char*> argv;
  for (const std::string& a : m_o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  m_child = fork();
  if (m_child < 0) {
    std::fprintf(stderr, "link_sim: fork: %s\n", std::strerror(errno));
    return false;
  }
  if (m_child == 0) {
    // Ignored signals stay ignored across exec: the command gets SIGPIPE back, and our handlers go.
    for (int sig : {SIGPIPE, SIGCHLD, SIGTERM, SIGINT, SIGHUP}) handle(sig, SIG_DFL);
    if (dup2(up[0], 0) >= 0 && dup2(down[1], 1) >= 0) execvp(argv[0], argv.data());
    const int e = errno;
    ssize_t ignored = write(err[1], &e, sizeof e);
    (void)ignored;
    _exit(kExitCannotStart);
  }
  close(up[0]);
  close(down[1]);
  close(err[1]);
  int e = 0;
  ssize_t n;
  do n = read(err[0], &e, sizeof e);
  while (n < 0 && errno == EINTR);
  close(err[0]);
  if (n == static_cast<ssize_t>(sizeof e)) {
    std::fprintf(stderr, "link_sim: cannot run '%s': %s\n", argv[0], std::strerror(e));
    close(up[1]);
    close(down[0]);
    while (waitpid(m_child, &m_status, 0) < 0 && errno == EINTR) {
    }
    return false;
  }
  m_child_in = up[1];
  m_child_out = down[0];
  fcntl(m_child_in, F_SETFL, fcntl(m_child_in, F_GETFL) | O_NONBLOCK);
  fcntl(m_child_out, F_SETFL, fcntl(m_child_out, F_GETFL) | O_NONBLOCK);
  say("start pid %d", static_cast<int>(m_child));
  return true;
}

// The command's stdin is ours and non-blocking: write what is due until it is full.
void Relay::deliver_up(Nanos t) {
  while (m_child_in >= 0) {
    const auto spans = m_up.due(t, std::min(allowance(m_up), kChildWriteBytes));
    if (spans.empty()) break;
    iovec iov[kMaxSpans];
    int k = 0;
    for (; k < kMaxSpans && k < static_cast<int>(spans.size()); ++k)
      iov[k] = {const_cast<std::uint8_t*>(spans[k].data), spans[k].size};
    const ssize_t n = writev(m_child_in, iov, k);
    if (n > 0) {
      m_up.consume(static_cast<std::size_t>(n));
      say("up delivered %zd (%llu in all)", n, static_cast<unsigned long long>(m_up.delivered_bytes()));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) return;  // full: poll waits for room
    up_broken();
    return;
  }
  if (m_child_in >= 0 && !limit_reached() && m_up.eof_due(t)) {
    close_fd(m_child_in);
    say("up end delivered: the command's stdin closed");
  }
}

// link_sim's stdout may be shared with other processes, so it stays blocking: one write of at most PIPE_BUF
// bytes after poll said it takes one, which never blocks on a pipe.
void Relay::deliver_down(Nanos t) {
  if (m_out < 0) return;
  if (m_out_ready) {
    const auto spans = m_down.due(t, std::min<std::size_t>(allowance(m_down), PIPE_BUF));
    if (!spans.empty()) {
      iovec iov[kMaxSpans];
      int k = 0;
      for (; k < kMaxSpans && k < static_cast<int>(spans.size()); ++k)
        iov[k] = {const_cast<std::uint8_t*>(spans[k].data), spans[k].size};
      ssize_t n;
      do n = writev(m_out, iov, k);
      while (n < 0 && errno == EINTR);
      m_out_ready = false;
      if (n > 0) {
        m_down.consume(static_cast<std::size_t>(n));
        say("down delivered %zd (%llu in all)", n, static_cast<unsigned long long>(m_down.delivered_bytes()));
      } else if (n < 0 && errno != EAGAIN) {
        down_broken();
        return;
      }
    }
  }
  if (!limit_reached() && m_down.eof_due(t)) {
    close_fd(m_out);
    say("down end delivered: stdout closed");
  }
}

void Relay::read_into(int& fd, LinkQueue& q, const char* name, Nanos t) {
  ssize_t n;
  do n = read(fd, m_buf.data(), m_buf.size());
  while (n < 0 && errno == EINTR);
  if (n < 0 && errno == EAGAIN) return;
  if (n > 0) {
    q.push(m_buf.data(), static_cast<std::size_t>(n), t);
    say("%s read %zd, delivered by %.6f", name, n, std::chrono::duration<double>(*q.last_due()).count());
    return;
  }
  // The end (or an error, taken as the end): it travels the link behind the bytes before it.
  q.push_eof(t);
  close_fd(fd);
  say("%s end read, delivered at %.6f", name, std::chrono::duration<double>(*q.last_due()).count());
}

// The command no longer reads its stdin: its writer (link_sim's) sees that too.
void Relay::up_broken() {
  say("up broken (%s): stdin closed", std::strerror(errno));
  close_fd(m_child_in);
  close_fd(m_in);
  m_up.discard();
}

// Nobody reads link_sim's stdout: the command's writes fail from now on.
void Relay::down_broken() {
  say("down broken (%s): the command's stdout closed", std::strerror(errno));
  close_fd(m_out);
  close_fd(m_child_out);
  m_down.discard();
}

void Relay::reap() {
  if (m_reaped) return;
  pid_t r;
  do r = waitpid(m_child, &m_status, WNOHANG);
  while (r < 0 && errno == EINTR);
  if (r == m_child) {
    m_reaped = true;
    say("command exited, status %d", exit_code_of(m_status));
  }
}

int Relay::finish() {
  close_fd(m_child_in);
  close_fd(m_child_out);
  close_fd(m_in);
  close_fd(m_out);
  while (!m_reaped) {
    if (waitpid(m_child, &m_status, 0) == m_child)
      m_reaped = true;
    else if (errno != EINTR)
      break;
  }
  say("exit %d", exit_code_of(m_status));
  return exit_code_of(m_status);
}

int Relay::drop() {
  say("drop after %llu up, %llu down", static_cast<unsigned long long>(m_up.delivered_bytes()),
      static_cast<unsigned long long>(m_down.delivered_bytes()));
  // SIGKILL first: once it is sent the command dies of it, whatever the closed pipes would have done to it.
  if (!m_reaped) kill(m_child, SIGKILL);
  close_fd(m_out);
  close_fd(m_in);
  close_fd(m_child_in);
  close_fd(m_child_out);
  return finish();
}

void Relay::die_of(int sig) {
  say("signal %d: killing the command", sig);
  if (!m_reaped) kill(m_child, SIGKILL);
  finish();
  if (m_log) std::fflush(m_log);
  handle(sig, SIG_DFL);
  raise(sig);
  _exit(128 + sig);
}

int Relay::run() {
  for (;;) {
    Nanos t = now();
    if (!m_stalled) {
      deliver_up(t);
      deliver_down(t);
      if (limit_reached()) {
        if (drop_first()) return drop();
        m_stalled = true;
        say("stall after %llu up, %llu down", static_cast<unsigned long long>(m_up.delivered_bytes()),
            static_cast<unsigned long long>(m_down.delivered_bytes()));
      }
      if (m_out < 0 && (m_child_in < 0 || m_reaped)) return finish();
    }

    // What to wait for: the signals; unless stalled, an input with room in its queue, an output with bytes
    // due that it did not take, and the next delivery time.
    pollfd fds[5];
    int nfds = 0;
    int at_in = -1, at_child_out = -1, at_out = -1;
    fds[nfds++] = {m_signals, POLLIN, 0};
    Nanos wait = Nanos::max();
    if (!m_stalled) {
      if (m_in >= 0 && m_up.pending_bytes() < m_o.queue_bytes) {
        at_in = nfds;
        fds[nfds++] = {m_in, POLLIN, 0};
      }
      if (m_child_out >= 0 && m_down.pending_bytes() < m_o.queue_bytes) {
        at_child_out = nfds;
        fds[nfds++] = {m_child_out, POLLIN, 0};
      }
      if (m_child_in >= 0 && m_up.has_due(t)) fds[nfds++] = {m_child_in, POLLOUT, 0};  // it was full
      if (m_out >= 0 && m_down.has_due(t)) {
        at_out = nfds;
        fds[nfds++] = {m_out, POLLOUT, 0};
      }
      const auto later = [&](const LinkQueue& q, bool open) {
        const auto due = q.next_due();
        if (open && due && *due > t) wait = std::min(wait, *due - t);
      };
      later(m_up, m_child_in >= 0);
      later(m_down, m_out >= 0);
    }
    timespec ts{};
    if (wait != Nanos::max()) {
      ts.tv_sec = static_cast<time_t>(wait.count() / 1'000'000'000);
      ts.tv_nsec = static_cast<long>(wait.count() % 1'000'000'000);
    }
    const int r = ppoll(fds, static_cast<nfds_t>(nfds), wait == Nanos::max() ? nullptr : &ts, nullptr);
    if (r < 0) {
      if (errno == EINTR) continue;
      std::fprintf(stderr, "link_sim: poll: %s\n", std::strerror(errno));
      if (!m_reaped) kill(m_child, SIGKILL);
      finish();
      return 1;
    }
    t = now();
    if (fds[0].revents & POLLIN) {
      unsigned char sigs[64];
      ssize_t n;
      while ((n = read(m_signals, sigs, sizeof sigs)) > 0) {
        for (ssize_t i = 0; i < n; ++i) {
          if (sigs[i] == SIGCHLD)
            reap();
          else
            die_of(sigs[i]);
        }
      }
    }
    const short any = POLLIN | POLLHUP | POLLERR;
    if (at_in >= 0 && (fds[at_in].revents & any)) read_into(m_in, m_up, "up", t);
    if (at_child_out >= 0 && (fds[at_child_out].revents & any)) read_into(m_child_out, m_down, "down", t);
    if (at_out >= 0 && (fds[at_out].revents & (POLLOUT | POLLERR | POLLHUP))) m_out_ready = true;
  }
}

// fds 0, 1 and 2 are open before anything else is, so no pipe of ours takes their numbers.
void open_standard_fds() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (fcntl(fd, F_GETFD) < 0 && errno == EBADF) {
      const int n = open("/dev/null", O_RDWR);
      if (n >= 0 && n != fd) {
        dup2(n, fd);
        close(n);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  int split = 1;
  while (split < argc && std::strcmp(argv[split], "--") != 0) ++split;
  for (int i = split + 1; i < argc; ++i) o.command.emplace_back(argv[i]);

  CLI::App app{
      "A simulated network link: starts COMMAND with pipes for its stdin and stdout and relays link_sim's "
      "own "
      "stdin and stdout to them, each direction delayed by rtt/2 and throttled to the bandwidth."};
  app.footer("After the options: -- command args... (started with execvp, no shell).");
  app.add_option("--rtt-ms", o.rtt_ms, "round trip in milliseconds (each direction: half)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--mbit", o.mbit, "bandwidth of each direction in Mbit/s (0: no throttling)")
      ->check(CLI::Range(0.0, 1e6))
      ->capture_default_str();
  app.add_option("--chunk-bytes", o.chunk_bytes, "the most the link delivers as one piece (a packet)")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 20))
      ->capture_default_str();
  app.add_option("--queue-bytes", o.queue_bytes, "bytes waiting in a direction before link_sim stops reading")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1} << 30))
      ->capture_default_str();
  app.add_option("--log", o.log, "write one line per event to FILE");
  auto* drop = app.add_option("--drop-after-bytes", o.drop_after,
                              "cut the link once a direction delivered N bytes (the command is killed)");
  auto* stall = app.add_option("--stall-after-bytes", o.stall_after,
                               "hang the link once a direction delivered N bytes (pipes stay open)");
  try {
    app.parse(split, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? 0 : kExitUsage;
  }
  o.drop = drop->count() > 0;
  o.stall = stall->count() > 0;
  if (o.command.empty()) {
    std::fprintf(stderr, "link_sim: no command (usage: link_sim [options] -- command args...)\n");
    return kExitUsage;
  }

  open_standard_fds();
  std::FILE* log = nullptr;
  if (!o.log.empty()) {
    log = std::fopen(o.log.c_str(), "we");
    if (!log) {
      std::fprintf(stderr, "link_sim: cannot write the log '%s': %s\n", o.log.c_str(), std::strerror(errno));
      return kExitUsage;
    }
    setvbuf(log, nullptr, _IOLBF, 0);
  }

  LinkParams link;
  link.latency = Nanos{std::llround(o.rtt_ms * 1e6 / 2)};
  link.bits_per_second = std::llround(o.mbit * 1e6);
  link.chunk_bytes = o.chunk_bytes;

  int sig[2];
  if (pipe2(sig, O_CLOEXEC | O_NONBLOCK) != 0) {
    std::fprintf(stderr, "link_sim: pipe: %s\n", std::strerror(errno));
    return 1;
  }
  g_signal_write = sig[1];
  handle(SIGPIPE, SIG_IGN);
  handle(SIGCHLD, on_signal, SA_NOCLDSTOP);
  for (int s : {SIGTERM, SIGINT, SIGHUP}) handle(s, on_signal);

  Relay relay(o, link, log);
  if (log) {
    std::fprintf(log, "link_sim rtt %.3f ms, %.3f Mbit/s, chunks of %zu bytes, queue %zu bytes", o.rtt_ms,
                 o.mbit, o.chunk_bytes, o.queue_bytes);
    if (o.drop) std::fprintf(log, ", drop after %llu", static_cast<unsigned long long>(o.drop_after));
    if (o.stall) std::fprintf(log, ", stall after %llu", static_cast<unsigned long long>(o.stall_after));
    std::fprintf(log, ":");
    for (const std::string& a : o.command) std::fprintf(log, " %s", a.c_str());
    std::fprintf(log, "\n");
  }
  if (!relay.start(sig[0])) return kExitCannotStart;
  const int rc = relay.run();
  if (log) std::fclose(log);
  return rc;
}
