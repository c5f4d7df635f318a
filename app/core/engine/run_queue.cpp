#include "core/engine/run_queue.hpp"

namespace ts {

RunQueue::RunQueue(std::shared_ptr<Backend> backend) : m_backend(std::move(backend)) {
  m_worker = std::thread([this] { loop(); });
}

RunQueue::~RunQueue() {
  {
    std::lock_guard<std::mutex> lock(m_mu);
    m_stop = true;
    m_current.cancel();
  }
  m_cv.notify_all();
  m_worker.join();
}

uint64_t RunQueue::submit(RunRequest req) {
  std::lock_guard<std::mutex> lock(m_mu);
  const uint64_t id = m_next_id++;
  m_pending.emplace(id, std::move(req));
  m_current.cancel();  // the run in flight, if any, is now stale
  m_cv.notify_all();
  return id;
}

std::optional<RunOutcome> RunQueue::poll() {
  std::lock_guard<std::mutex> lock(m_mu);
  std::optional<RunOutcome> out;
  out.swap(m_done);
  return out;
}

bool RunQueue::busy() const {
  std::lock_guard<std::mutex> lock(m_mu);
  return m_pending.has_value() || m_in_flight != 0;
}

RunOutcome RunQueue::wait(uint64_t id) {
  std::unique_lock<std::mutex> lock(m_mu);
  m_cv.wait(lock, [&] { return (m_done && m_done->id >= id) || m_stop; });
  RunOutcome out = m_done ? std::move(*m_done) : RunOutcome{id, std::nullopt, "stopped", false};
  m_done.reset();
  return out;
}

void RunQueue::loop() {
  for (;;) {
    std::pair<uint64_t, RunRequest> job;
    CancelToken token;
    {
      std::unique_lock<std::mutex> lock(m_mu);
      m_cv.wait(lock, [&] { return m_stop || m_pending.has_value(); });
      if (m_stop) return;
      job = std::move(*m_pending);
      m_pending.reset();
      m_current = CancelToken();
      token = m_current;
      m_in_flight = job.first;
    }
    RunOutcome out;
    out.id = job.first;
    bool superseded = false;
    try {
      out.result = m_backend->run(job.second, token);
    } catch (const Cancelled&) {
      superseded = true;
    } catch (const ValidationError& e) {
      out.error = e.what();
      out.bad_input = true;
    } catch (const std::exception& e) {
      out.error = e.what();
    } catch (...) {
      out.error = "unknown error";
    }
    {
      std::lock_guard<std::mutex> lock(m_mu);
      m_in_flight = 0;
      // Publish unless a newer request is already waiting (its outcome will replace this one).
      if (!superseded && !m_pending) m_done = std::move(out);
    }
    m_cv.notify_all();
  }
}

}  // namespace ts
