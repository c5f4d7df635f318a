#pragma once
// [SECTION] The window's background jobs in one place. Each kind of job is a Job<T> of the one JobRunner:
// started with a function that runs on a thread of its own (at most one job of a kind in flight), its result
// taken on the UI thread once ready, never waited for in a frame. The runner knows every job in flight (from
// its start until its result is taken), and JobReport says which, by name: the model's one answer to "is
// something running?" for panels, the status bar and the frame loop, instead of a flag per job. The engine's
// own threads (RunQueue: one measurement at a time; SweepRunner: the sweep's points) report into the same
// JobReport under kJobRun and kJobSweep.
#include <chrono>
#include <cstdint>
#include <future>
#include <initializer_list>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ts {

// The jobs' names (JobReport::running).
inline constexpr const char* kJobRun = "run";
inline constexpr const char* kJobSweep = "sweep";
inline constexpr const char* kJobBandwidth = "DRAM bandwidth";
inline constexpr const char* kJobSass = "machine code";
inline constexpr const char* kJobReadInputs = "reading A and B";
inline constexpr const char* kJobSaveC = "saving C";
inline constexpr const char* kJobOpenSession = "reading a session";
inline constexpr const char* kJobReadKernel = "reading your kernel";
inline constexpr const char* kJobBuildKernel = "building your kernel";
inline constexpr const char* kJobBuildTiles = "building its tiles";
inline constexpr const char* kJobSanitize = "compute-sanitizer";
inline constexpr const char* kJobReconnect = "connecting to the engine";
inline constexpr const char* kJobConnect = "connecting to another engine";
inline constexpr const char* kJobDisconnect = "closing an engine";

// Which jobs are in flight, by name.
struct JobReport {
  std::vector<std::string> running;
  bool has(const std::string& name) const;
  bool has_any(std::initializer_list<const char*> names) const;
};

class JobRunner {
 public:
  template <class T>
  class Job {
   public:
    Job(JobRunner& runner, std::string name) : m_runner(runner), m_name(std::move(name)) {}
    ~Job() { discard(); }  // waits for the job in flight (as a future's destructor does)
    Job(const Job&) = delete;
    Job& operator=(const Job&) = delete;

    bool in_flight() const { return m_future.valid(); }  // started, result not taken yet
    bool ready() const {
      return m_future.valid() && m_future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
    }
    // Starts `f` on a thread of its own. Throws std::logic_error when a job of this kind is in flight.
    template <class F>
    void start(F&& f) {
      if (m_future.valid()) throw std::logic_error(m_name + ": a job of this kind is in flight already");
      m_future = std::async(std::launch::async, std::forward<F>(f));
      m_runner.started(m_name);
    }
    // The result of a ready job (or what it threw); the job is no longer in flight.
    T take() {
      struct Done {
        JobRunner& r;
        const std::string& name;
        ~Done() { r.finished(name); }
      } done{m_runner, m_name};
      return m_future.get();
    }
    // Waits for the job in flight and drops its result (a newer one replaces it).
    void discard() {
      if (!m_future.valid()) return;
      m_future.wait();
      m_future = std::future<T>();
      m_runner.finished(m_name);
    }

   private:
    JobRunner& m_runner;
    std::string m_name;
    std::future<T> m_future;
  };

  // The jobs in flight, and `more` (the engine's own threads' jobs, by name).
  JobReport report(std::initializer_list<std::pair<const char*, bool>> more = {}) const;
  uint64_t started_count() const;

 private:
  void started(const std::string& name);
  void finished(const std::string& name);
  mutable std::mutex m_mu;
  std::vector<std::string> m_running;
  uint64_t m_started = 0;
};

}  // namespace ts
