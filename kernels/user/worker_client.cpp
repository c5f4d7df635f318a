#include "kernels/user/worker_client.hpp"

#include "core/base/child_process.hpp"

#include <cerrno>
#include <chrono>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ts {

namespace fs = std::filesystem;

namespace {

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string seconds(double s) {
  char b[32];
  std::snprintf(b, sizeof b, "%.2f s", s);
  return b;
}

}  // namespace

std::string worker_executable() {
  if (const char* e = std::getenv("TILESCOPE_WORKER"); e && *e) return e;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec && self.filename() == "tilescope") return self.string();
  throw std::runtime_error("cannot start the kernel worker: this program (" +
                           (ec ? std::string("?") : self.filename().string()) +
                           ") is not tilescope; set TILESCOPE_WORKER to the tilescope binary");
}

WorkerClient::WorkerClient(int device) : m_device(device) {}

WorkerClient::~WorkerClient() {
  stop(true);
}

void WorkerClient::start() {
  const std::string exe = worker_executable();
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0)
    throw WorkerFailure(
        WorkerFailure::Kind::Start,
        std::string("cannot start the kernel worker: socketpair failed: ") + std::strerror(errno), 0, -1);
  // The child's end becomes its fd 3 (dup2 clears close-on-exec; make sure the source is not 3 already).
  int child = sv[1];
  if (child == 3) {
    child = fcntl(sv[1], F_DUPFD_CLOEXEC, 10);
    close(sv[1]);
  }
  // The worker's stdout (device printf) goes to our stderr. A process group of its own: the terminal's
  // Ctrl+C reaches the app, which decides (a bench keeps its finished points), never the worker directly.
  SpawnSpec spec;
  spec.argv = {
      exe, "worker", "--fd", "3", "--device", std::to_string(m_device), "--parent", std::to_string(getpid())};
  spec.moves = {{child, 3}, {2, 1}};
  spec.own_process_group = true;
  pid_t pid = -1;
  try {
    pid = spawn_process(spec);
  } catch (const std::exception& e) {
    close(child);
    close(sv[0]);
    throw WorkerFailure(WorkerFailure::Kind::Start,
                        std::string("cannot start the kernel worker: ") + e.what(), 0, -1);
  }
  close(child);
  m_fd = sv[0];
  m_pid = pid;
  // Its Hello: the CUDA context is made and the device named.
  wire::Message m;
  wire::ReadStatus st;
  try {
    st = wire::read_message(m_fd, &m, 60000);
  } catch (const wire::ProtocolError& e) {
    stop(false);
    throw WorkerFailure(WorkerFailure::Kind::Start,
                        std::string("the kernel worker spoke nonsense: ") + e.what(), 0, -1);
  }
  if (st != wire::ReadStatus::Ok || m.type != wire::Type::Hello) {
    std::string why =
        st == wire::ReadStatus::Timeout ? "it did not answer within 60 s" : "it exited before it was ready";
    if (st == wire::ReadStatus::Ok && m.type == wire::Type::Error)
      why = wire::decode<wire::ErrorMsg>(m).message;
    stop(false);
    throw WorkerFailure(WorkerFailure::Kind::Start, "the kernel worker could not start: " + why, 0, -1);
  }
  m_hello = wire::decode<wire::HelloMsg>(m);
}

void WorkerClient::ensure_started() {
  if (m_pid > 0) {
    // Still alive? (It may have exited on its own after a fault reported earlier.)
    int status = 0;
    if (waitpid(m_pid, &status, WNOHANG) == 0) return;
    m_pid = -1;
    if (m_fd >= 0) close(m_fd);
    m_fd = -1;
  }
  start();
}

void WorkerClient::stop(bool polite) {
  if (m_pid <= 0) {
    if (m_fd >= 0) close(m_fd);
    m_fd = -1;
    return;
  }
  if (polite && m_fd >= 0) wire::write_message(m_fd, wire::empty(wire::Type::Shutdown));
  if (m_fd >= 0) close(m_fd);
  m_fd = -1;
  int status = 0;
  const double deadline = now_s() + (polite ? 2.0 : 0.0);
  while (waitpid(m_pid, &status, WNOHANG) == 0) {
    if (now_s() >= deadline) {
      kill(m_pid, SIGKILL);
      waitpid(m_pid, &status, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  m_pid = -1;
}

double WorkerClient::restart(const std::string& why) {
  (void)why;
  if (m_pid > 0) {
    kill(m_pid, SIGKILL);
    int status = 0;
    waitpid(m_pid, &status, 0);
    m_pid = -1;
  }
  if (m_fd >= 0) close(m_fd);
  m_fd = -1;
  const double t0 = now_s();
  start();
  ++m_restarts;
  return now_s() - t0;
}

void WorkerClient::fail(WorkerFailure::Kind kind, const std::string& what, double t0) {
  const double detect = now_s() - t0;
  double restart_s = -1;
  std::string restarted;
  try {
    restart_s = restart(what);
    restarted = " The worker was restarted: this was noticed " + seconds(detect) +
                " after the request, and a fresh "
                "worker was ready " +
                seconds(restart_s) + " later. A, B and the reference are untouched.";
  } catch (const std::exception& e) {
    restarted = std::string(" Starting a new worker failed too: ") + e.what();
  }
  throw WorkerFailure(kind, what + "." + restarted, detect, restart_s);
}

wire::Message WorkerClient::call(const wire::Message& req, double first_wait_s, const CancelToken* cancel,
                                 const std::function<double(const wire::ProgressMsg&)>& next_wait_s,
                                 const std::string& doing) {
  ensure_started();
  const double t0 = now_s();
  const std::string what = doing.empty() ? std::string("running ") + wire::to_string(req.type) : doing;
  if (!wire::write_message(m_fd, req)) {
    int status = 0;
    waitpid(m_pid, &status, 0);
    m_pid = -1;
    fail(WorkerFailure::Kind::Died,
         "the kernel worker died before " + what + " (" + exit_status_words(status) + ")", t0);
  }
  double wait_s = first_wait_s;
  double since = now_s();
  bool cancel_sent = false;
  double cancel_at = 0;
  for (;;) {
    // Checked before every read, not only when the worker is quiet: a measurement sends a Progress message
    // per launch, so with short launches a read never times out.
    if (cancel && cancel->cancelled() && !cancel_sent) {
      wire::write_message(m_fd, wire::empty(wire::Type::Cancel));
      cancel_sent = true;
      cancel_at = now_s();
    }
    // A measurement stops at its next launch; a single long launch cannot be stopped but by stopping the
    // worker: a superseded run does not wait for it.
    if (cancel_sent && now_s() - cancel_at > 2.0) {
      restart("cancelled");
      throw Cancelled();
    }
    wire::Message m;
    wire::ReadStatus st;
    try {
      st = wire::read_message(m_fd, &m, 20);
    } catch (const wire::ProtocolError& e) {
      fail(WorkerFailure::Kind::Protocol, std::string("the kernel worker broke the protocol: ") + e.what(),
           t0);
    }
    if (st == wire::ReadStatus::Timeout) {
      if (now_s() - since > wait_s) {
        char secs[32];
        std::snprintf(secs, sizeof secs, "%.1f s", now_s() - since);
        kill(m_pid, SIGKILL);
        fail(WorkerFailure::Kind::Hang,
             std::string("the kernel did not finish: no word from the worker for ") + secs + " while " + what,
             t0);
      }
      continue;
    }
    if (st == wire::ReadStatus::Eof) {
      int status = 0;
      waitpid(m_pid, &status, 0);
      m_pid = -1;
      fail(WorkerFailure::Kind::Died,
           "the kernel worker died while " + what + " (" + exit_status_words(status) + ")", t0);
    }
    if (m.type == wire::Type::Progress) {
      const wire::ProgressMsg p = wire::decode<wire::ProgressMsg>(m);
      since = now_s();
      if (next_wait_s) wait_s = next_wait_s(p);
      continue;
    }
    if (m.type == wire::Type::Error) {
      const wire::ErrorMsg e = wire::decode<wire::ErrorMsg>(m);
      if (e.kind == wire::ErrorKind::Cancelled) throw Cancelled();
      if (e.kind == wire::ErrorKind::Fault) {
        // The worker exits after a fault; reap it, then start a fresh one.
        int status = 0;
        const double deadline = now_s() + 5;
        while (waitpid(m_pid, &status, WNOHANG) == 0 && now_s() < deadline)
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        fail(WorkerFailure::Kind::Fault, "the kernel faulted: " + e.message, t0);
      }
      if (e.kind == wire::ErrorKind::Protocol)
        fail(WorkerFailure::Kind::Protocol, "the kernel worker refused a message: " + e.message, t0);
    }
    return m;
  }
}

}  // namespace ts
