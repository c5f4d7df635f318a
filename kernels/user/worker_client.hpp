#pragma once
// [SECTION] The app's side of the kernel worker: starts `tilescope worker` (the same binary, or the one named
// by TILESCOPE_WORKER), talks to it over a socket pair, and watches it. A request waits for its reply under a
// watchdog: the worker reports after every launch, and when it stays silent past the deadline (the person's
// hang limit plus the expected time of a launch) it is killed. A fault (the worker reports it and exits), a
// hang (killed) or a death (the socket closes) becomes a WorkerFailure that says what happened in words and
// how long it took to notice and to have a fresh worker ready: the worker is restarted before the failure is
// reported, so the next run finds one waiting. Plain C++ and POSIX.
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include <sys/types.h>

#include "core/base/cancel.hpp"
#include "core/io/worker_protocol.hpp"

namespace ts {

class WorkerFailure : public std::runtime_error {
 public:
  enum class Kind { Fault, Hang, Died, Protocol, Start };
  WorkerFailure(Kind kind, const std::string& what, double detect_s, double restart_s)
      : std::runtime_error(what), m_kind(kind), m_detect_s(detect_s), m_restart_s(restart_s) {}
  Kind kind() const { return m_kind; }
  double detect_s() const { return m_detect_s; }    // from the failing request to knowing it failed
  double restart_s() const { return m_restart_s; }  // from then to a new worker's Hello (-1: none started)

 private:
  Kind m_kind;
  double m_detect_s, m_restart_s;
};

// The binary to run as the worker: $TILESCOPE_WORKER, else this program when it is tilescope. Throws
// std::runtime_error when there is none (e.g. a test binary without TILESCOPE_WORKER).
std::string worker_executable();

class WorkerClient {
 public:
  explicit WorkerClient(int device);
  ~WorkerClient();  // asks the worker to exit, kills it if it does not within 2 s
  WorkerClient(const WorkerClient&) = delete;
  WorkerClient& operator=(const WorkerClient&) = delete;

  // Starts the worker when none is running (waits for its Hello, at most 60 s). Throws WorkerFailure(Start).
  void ensure_started();
  bool running() const { return m_pid > 0; }
  pid_t pid() const { return m_pid; }
  const wire::HelloMsg& hello() const { return m_hello; }
  int restarts() const { return m_restarts; }

  // Sends `req` and returns the reply (Error replies included, decoded by the caller) once it comes. The
  // watchdog allows `first_wait_s` for the first message back; each Progress message (passed to on_progress)
  // starts a new wait of next_wait_s(progress). `cancel`, checked every 20 ms, sends Cancel once. A fault, a
  // hang or a death restarts the worker and throws WorkerFailure; a Cancelled error reply throws Cancelled.
  wire::Message call(const wire::Message& req, double first_wait_s, const CancelToken* cancel = nullptr,
                     const std::function<double(const wire::ProgressMsg&)>& next_wait_s = {},
                     const std::string& doing = "");

  // Stops the worker now (SIGKILL) and starts a fresh one; returns the seconds the fresh one took.
  double restart(const std::string& why);

 private:
  void start();
  void stop(bool polite);
  [[noreturn]] void fail(WorkerFailure::Kind kind, const std::string& what, double t0);

  int m_device;
  int m_fd = -1;
  pid_t m_pid = -1;
  wire::HelloMsg m_hello;
  int m_restarts = 0;
};

}  // namespace ts
