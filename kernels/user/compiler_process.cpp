#include "kernels/user/compiler_process.hpp"

#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fcntl.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/child_process.hpp"
#include "core/io/files.hpp"
#include "kernels/user/worker_client.hpp"

namespace ts {

namespace {

constexpr size_t kOutputTail = 16 << 10;
std::atomic<int> g_running{0};

double compile_clock_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

struct Fd {
  int fd = -1;
  ~Fd() {
    if (fd >= 0) close(fd);
  }
};

void keep_tail(std::string& out, const char* p, size_t n) {
  out.append(p, n);
  if (out.size() > 2 * kOutputTail) out.erase(0, out.size() - kOutputTail);
}

std::string trimmed(std::string s) {
  if (s.size() > kOutputTail) s = "..." + s.substr(s.size() - kOutputTail);
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

std::string limit_words(double s) {
  char b[64];
  std::snprintf(b, sizeof b, "%g s", s);
  return b;
}

// Why the compiler process ended without an answer, in words a person can act on.
std::string why_it_stopped(int status, const std::string& printed, const wire::CompileMsg& job) {
  const std::string stack = format_bytes(double(job.stack_bytes)),
                    memory = format_bytes(double(job.memory_limit));
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const std::string which = "signal " + std::to_string(sig) + ", " + strsignal(sig);
    if (sig == SIGSEGV || sig == SIGBUS || sig == SIGSTKFLT)
      return "NVRTC crashed while compiling (" + which +
             "). Most often its stack ran out: code nested too deeply, such as macros inside macros or "
             "deep template recursion (it had " +
             stack + " of stack). Only the compiler process ended; TileScope goes on";
    if (sig == SIGABRT)
      return "NVRTC aborted while compiling (" + which + "): an error inside NVRTC itself" +
             (printed.find("bad_alloc") != std::string::npos
                  ? ", out of the memory it may use (" + memory + ")"
                  : std::string(" (see what it printed below)")) +
             ". Only the compiler process ended; TileScope goes on";
    if (sig == SIGALRM)
      return "NVRTC did not finish within the compile limit of " + limit_words(job.time_limit_s) +
             " and was stopped";
    if (sig == SIGKILL)
      return "the compiler process was killed (" + which +
             "), by something other than TileScope: the system may have run out of memory";
    return "the compiler process ended on " + which;
  }
  if (printed.find("bad_alloc") != std::string::npos || printed.find("out of memory") != std::string::npos)
    return "NVRTC ran out of the memory it may use (" + memory + ") and the compiler " +
           exit_status_words(status);
  return "the compiler process ended without an answer: " + exit_status_words(status);
}

}  // namespace

int compilers_running() {
  return g_running.load();
}

uint64_t address_space_bytes(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, n, field) == 0) return uint64_t(std::strtoull(line.c_str() + n, nullptr, 10)) << 10;
  return 0;
}

CompilerOutcome compile_in_child(const wire::CompileMsg& job, const CancelToken* cancel) {
  if (cancel) cancel->throw_if_cancelled();
  CompilerOutcome out;
  const double t0 = compile_clock_s();
  std::string exe;
  try {
    exe = worker_executable();
  } catch (const std::exception& e) {
    out.failure = std::string("cannot start the compiler: ") + e.what();
    return out;
  }
  int sv[2], err[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
    out.failure = std::string("cannot start the compiler: socketpair failed: ") + std::strerror(errno);
    return out;
  }
  Fd sock{sv[0]}, child_sock{sv[1]};
  if (pipe2(err, O_CLOEXEC) != 0) {
    out.failure = std::string("cannot start the compiler: pipe failed: ") + std::strerror(errno);
    return out;
  }
  Fd printed{err[0]}, child_printed{err[1]};
  // The child's ends move to fixed numbers (3, 1 and 2); dup2 onto the number a descriptor has already keeps
  // close-on-exec, and a move may overwrite the source of a later one: go through numbers above 9.
  for (Fd* f : {&child_sock, &child_printed}) {
    const int high = fcntl(f->fd, F_DUPFD_CLOEXEC, 10);
    if (high < 0) {
      out.failure = std::string("cannot start the compiler: ") + std::strerror(errno);
      return out;
    }
    close(f->fd);
    f->fd = high;
  }
  SpawnSpec spec;
  spec.argv = {exe, "compiler", "--fd", "3", "--parent", std::to_string(getpid())};
  spec.moves = {{child_sock.fd, 3}, {child_printed.fd, 1}, {child_printed.fd, 2}};
  spec.own_process_group = true;  // Ctrl+C reaches TileScope, which stops the compile itself
  pid_t pid = -1;
  try {
    pid = spawn_process(spec);
  } catch (const std::exception& e) {
    out.failure = std::string("cannot start the compiler: ") + e.what();
    return out;
  }
  ++g_running;
  struct Count {
    ~Count() { --g_running; }
  } count;
  close(child_sock.fd);
  child_sock.fd = -1;
  close(child_printed.fd);
  child_printed.fd = -1;
  fcntl(printed.fd, F_SETFL, fcntl(printed.fd, F_GETFL) | O_NONBLOCK);

  bool printed_open = true;  // until the compiler closes its output (then it is polled no more)
  auto drain = [&] {
    char buf[4096];
    while (printed_open) {
      const ssize_t n = read(printed.fd, buf, sizeof buf);
      if (n > 0) {
        keep_tail(out.output, buf, size_t(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) printed_open = false;
      return;
    }
  };
  auto finish = [&](const std::string& failure, double patience_s) {
    const int status = reap_process(pid, patience_s);
    drain();
    out.output = trimmed(out.output);
    out.wall_s = compile_clock_s() - t0;
    if (!failure.empty()) out.failure = failure;
    return status;
  };

  bool sent = false;
  try {
    sent = wire::write_message(sock.fd, wire::encode(job));
  } catch (const wire::ProtocolError& e) {  // a job over the frame limit (the sources are bounded below it)
    kill(pid, SIGKILL);
    finish(std::string("cannot hand the job to the compiler: ") + e.what(), 0);
    return out;
  }
  if (!sent) {
    const int status = finish("", 2);
    out.failure = why_it_stopped(status, out.output, job);
    return out;
  }
  const double deadline = t0 + job.time_limit_s;
  for (;;) {
    pollfd p[2] = {{sock.fd, POLLIN, 0}, {printed_open ? printed.fd : -1, POLLIN, 0}};
    const int pr = poll(p, 2, 20);
    if (pr < 0 && errno != EINTR) {
      kill(pid, SIGKILL);
      finish(std::string("lost the compiler: poll failed: ") + std::strerror(errno), 0);
      return out;
    }
    if (pr > 0 && p[1].revents) drain();
    if (pr > 0 && p[0].revents) {
      wire::Message m;
      wire::ReadStatus st;
      try {
        st = wire::read_message(sock.fd, &m, 0);
      } catch (const wire::ProtocolError& e) {
        kill(pid, SIGKILL);
        finish(std::string("the compiler process broke the protocol: ") + e.what(), 0);
        return out;
      }
      if (st == wire::ReadStatus::Eof) {
        const int status = finish("", 2);
        out.failure = why_it_stopped(status, out.output, job);
        return out;
      }
      if (st == wire::ReadStatus::Ok) {
        try {
          if (m.type == wire::Type::Error) {
            finish("the compiler refused the job: " + wire::decode<wire::ErrorMsg>(m).message, 2);
            return out;
          }
          out.reply = wire::decode<wire::CompiledMsg>(m);
        } catch (const wire::ProtocolError& e) {
          kill(pid, SIGKILL);
          finish(std::string("the compiler process broke the protocol: ") + e.what(), 0);
          return out;
        }
        finish("", 2);
        return out;
      }
    }
    if (cancel && cancel->cancelled()) {
      kill(pid, SIGKILL);
      finish("cancelled", 0);
      throw Cancelled();
    }
    if (compile_clock_s() > deadline) {
      kill(pid, SIGKILL);
      finish("NVRTC did not finish within the compile limit of " + limit_words(job.time_limit_s) +
                 " and was stopped (the limit: Compile limit in the kernel's form, or --compile-limit "
                 "SECONDS on the command line)",
             0);
      return out;
    }
  }
}

}  // namespace ts
