#pragma once
// [SECTION] Runs off the UI thread. The GUI submits requests and polls for outcomes once per frame.
// A newer request supersedes the pending one and cancels the one in flight (at its next check point),
// so dragging a slider never queues up stale work.
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "core/engine/backend.hpp"

namespace ts {

struct RunOutcome {
  uint64_t id = 0;                  // the submit() that produced it
  std::optional<RunResult> result;  // set on success
  std::string error;                // set on failure
  bool bad_input = false;           // the error is a ValidationError (the person's input, not the device)
};

class RunQueue {
 public:
  explicit RunQueue(std::shared_ptr<Backend> backend);
  ~RunQueue();
  RunQueue(const RunQueue&) = delete;
  RunQueue& operator=(const RunQueue&) = delete;

  uint64_t submit(RunRequest req);   // returns the request id
  std::optional<RunOutcome> poll();  // the newest finished outcome not yet taken
  bool busy() const;                 // a request is pending or in flight
  Backend& backend() { return *m_backend; }

  // Blocks until the request `id` (or a newer one) has finished; for headless use.
  RunOutcome wait(uint64_t id);

 private:
  void loop();

  std::shared_ptr<Backend> m_backend;
  mutable std::mutex m_mu;
  std::condition_variable m_cv;
  std::optional<std::pair<uint64_t, RunRequest>> m_pending;
  std::optional<RunOutcome> m_done;
  CancelToken m_current;
  uint64_t m_next_id = 1;
  uint64_t m_in_flight = 0;
  bool m_stop = false;
  std::thread m_worker;
};

}  // namespace ts
