#pragma once
// [SECTION] The window's side of a remote engine: a Backend and a MatrixStore that speak the engine protocol
// (protocol.hpp) to `tilescope serve` through any command's standard input and output (`ssh gpu-box tilescope
// serve`, `srun --gres=gpu:1 tilescope serve`, `docker exec -i box tilescope serve`), so panels, sweeps and
// commands do not know where the engine is.
//
// What the engine said in its Hello (kind, device, capacity, policies, kernels, what its kernel workshop can
// do) is answered here without a round trip; a person's kernels go through RemoteWorkshop
// (remote_workshop.hpp): read here, built, checked and run in the engine; run(), validate() and
// measure_bandwidth() wait for the engine (off the window's thread, as for a local backend). The matrices of
// a run stay in the engine: a RemoteStore reduces them there and only the view's pixels travel back,
// compressed; reduce_later() and element_later() ask without waiting, so a frame never waits for the link.
// When the link drops or the engine dies, every call in flight throws EngineLost saying which, the Backend
// stays (its kernels and device as last known), and reconnect() starts the command again.
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/remote/protocol.hpp"
#include "core/remote/remote_workshop.hpp"

namespace ts::remote {

// The link to the engine is gone (the command exited, the connection dropped, a malformed frame): what
// happened, with the command's last words on its standard error.
class EngineLost : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
// The engine command could not be started or did not become an engine (exit code 2 on the command line).
class EngineStartError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What an Error frame says, as the exception a local backend would have thrown (ValidationError, Cancelled,
// ProtocolError, std::runtime_error).
[[noreturn]] void throw_error(const Frame& f);
// The answer of a request: its last frame, checked to be of `type` (an Error frame is thrown).
const Frame& answer(const std::vector<Frame>& frames, Type type);

// An answer on its way: filled by the connection's reader thread, read by whoever asked (never blocking a
// frame: ready() first).
class Pending {
 public:
  bool ready() const;
  // Waits for the answer (and every frame of it), checking `cancel` every 50 ms; throws what the engine
  // answered (ValidationError, Cancelled, runtime_error) or EngineLost.
  std::vector<Frame> wait(const CancelToken* cancel = nullptr);
  // The frames when ready(), else empty; throws as wait() does.
  std::vector<Frame> take();

 private:
  friend class Connection;
  mutable std::mutex m_mu;
  std::condition_variable m_cv;
  std::vector<Frame> m_frames;
  bool m_done = false;
  bool m_copy = false;  // a CopyMatrix: its last MatrixPart ends it
  std::string m_lost;   // the link was lost first
  std::function<void()> m_cancel;
};

// Where a connection reads the time, in seconds of a clock that never goes back: its round trips, how long
// the link has been silent, the rate frames arrive at. Tests give their own to count time instead of waiting.
using LinkClock = std::function<double()>;
double steady_seconds();  // the default: std::chrono::steady_clock

struct ConnectOptions {
  double hello_timeout_s = 120;  // ssh may ask for a host key or a password on the terminal first
  double ping_interval_s = 1;    // the round trip shown in the status bar, and a dead link noticed (0: none)
  LinkClock clock;               // empty: steady_seconds (the ping interval is always real time)
};

// One engine process and the frames to and from it. Thread-safe.
class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Runs `command` with /bin/sh -c, its stdin and stdout the link, its stderr kept (the last 16 KiB) for
  // messages. Throws EngineStartError naming the command, what it printed and how it exited.
  static std::shared_ptr<Connection> start(const std::string& command, const ConnectOptions& o = {});
  ~Connection();

  const std::string& command() const { return m_command; }
  pid_t pid() const { return m_pid; }  // the engine command's process (/bin/sh -c, or what it exec'd)
  const EngineInfo& engine() const { return m_engine; }
  const std::string& engine_version() const { return m_engine_version; }
  // The engine's Hello named `capability` (an older engine lacks the newer ones, e.g. "sass").
  bool engine_can(const std::string& capability) const;

  // Sends `frames` (the last one the request, all with its id) and returns where its answer will come.
  std::shared_ptr<Pending> send(std::vector<Frame> frames, uint64_t id, bool copy = false);
  // The request's answer, waiting for it: the frames of its id (MatrixPart ... then the answer).
  std::vector<Frame> call(std::vector<Frame> frames, uint64_t id, const CancelToken* cancel = nullptr);
  void post(const Frame& f);  // no answer expected (ReleaseStore)
  uint64_t next_id() { return m_next_id.fetch_add(1) + 1; }

  bool alive() const { return !m_lost_flag.load(); }
  std::string lost() const;                          // why the link is gone (empty while alive)
  double rtt_ms() const { return m_rtt_ms.load(); }  // the last ping's round trip (0: none yet)
  // Seconds since the link last moved (a byte from the engine, or a byte of a matrix going up taken by the
  // link) while an answer is awaited (a request in flight, a ping unanswered); 0 while none is, or once lost.
  double silent_s() const;
  // Bytes a second the engine's long frames (kRateFrameBytes or more) arrived at, smoothed over the last few
  // (0: none yet).
  double bytes_per_s() const { return m_bytes_per_s.load(); }
  static constexpr size_t kRateFrameBytes = 64 << 10;
  Backend::Incidents incidents() const;
  std::string stderr_tail() const;
  uint64_t bytes_in() const { return m_bytes_in.load(); }
  uint64_t bytes_out() const { return m_bytes_out.load(); }

  // The link ends now: the engine's stdin closes (it exits), every call in flight throws EngineLost(why).
  void close(const std::string& why);

 private:
  Connection() = default;
  double now_s() const { return m_clock(); }
  void moved();  // the link moved a byte: silent_s() starts again
  void reader();
  void writer();
  void pinger(double interval_s);
  // Frames wait here for the writer thread, so no caller (a frame asking for a heatmap) ever waits for the
  // link: a request's frames stay together and in order; a request whose frames carry a matrix waits behind
  // the small ones of other requests.
  void enqueue(std::vector<Frame> frames);
  void lose(const std::string& why);

  std::string m_command;
  int m_to = -1, m_from = -1, m_err = -1;
  pid_t m_pid = -1;
  EngineInfo m_engine;
  std::string m_engine_version;
  std::vector<std::string> m_capabilities;
  std::atomic<uint64_t> m_next_id{0};
  mutable std::mutex m_mu;  // m_pending, m_lost, m_incidents, m_stderr
  std::map<uint64_t, std::shared_ptr<Pending>> m_pending;
  std::atomic<bool> m_lost_flag{false};
  std::string m_lost;
  Backend::Incidents m_incidents;
  std::string m_stderr;
  std::atomic<double> m_rtt_ms{0};
  LinkClock m_clock = steady_seconds;
  // When the link last moved, or when something began to be awaited after nothing was (m_mu).
  double m_moved_s = 0;
  int m_pings_unanswered = 0;  // the pinger's (m_mu)
  std::atomic<double> m_bytes_per_s{0};
  std::atomic<uint64_t> m_bytes_in{0}, m_bytes_out{0};
  std::thread m_reader, m_err_reader, m_pinger, m_writer;
  std::mutex m_queue_mu;
  std::condition_variable m_queue_cv;
  std::deque<std::vector<Frame>> m_small, m_bulk;  // whole requests: small ones first
  bool m_closing = false;                          // the writer stops and closes the engine's input
  int m_wake[2] = {-1, -1};                        // wakes the writer out of a write the link holds up
  std::atomic<bool> m_err_eof{false};              // the engine's standard error closed (it exited)
  std::atomic<bool> m_reaped{false};               // the reader collected the command's exit status
  std::mutex m_stop_mu;
  std::condition_variable m_stop_cv;
  bool m_stop = false;
};

// The matrices of one remote run, kept in the engine until this is destroyed.
class RemoteStore : public MatrixStore {
 public:
  RemoteStore(std::shared_ptr<Connection> c, const StoreShape& s) : m_conn(std::move(c)), m_shape(s) {}
  ~RemoteStore() override;
  int64_t rows(MatrixId id) const override { return m_shape.dims[int(id)][0]; }
  int64_t cols(MatrixId id) const override { return m_shape.dims[int(id)][1]; }
  ValueRange reduce(MatrixId id, const LodRegion& r, Reduce mode, float* out) const override;
  LinkFigures link_figures() const override { return {m_conn->bytes_per_s(), m_conn->rtt_ms()}; }
  float element(MatrixId id, int64_t row, int64_t col) const override;
  HostMatrix copy(MatrixId id) const override;
  bool remote() const override { return true; }
  std::shared_ptr<PendingReduce> reduce_later(MatrixId id, const LodRegion& r, Reduce mode) const override;
  std::shared_ptr<PendingElement> element_later(MatrixId id, int64_t row, int64_t col) const override;

 private:
  std::shared_ptr<Connection> m_conn;
  StoreShape m_shape;
};

class RemoteBackend : public Backend {
 public:
  // Starts the engine command (Connection::start) and takes what it says of itself.
  explicit RemoteBackend(const std::string& command, const ConnectOptions& o = {});
  explicit RemoteBackend(std::shared_ptr<Connection> c);

  std::string kind() const override { return info().kind; }
  std::string device_name() const override { return info().device_name; }
  // The engine's GPU is not this machine's: heatmaps take the host path.
  int cuda_device() const override { return -1; }
  // The engine's built-in kernels, then the person's own its workshop registered.
  std::vector<KernelInfo> kernels() const override;
  // Grows with every reconnect and every publish or withdraw.
  uint64_t kernels_serial() const override { return m_serial.load() + m_workshop->serial(); }
  // The RemoteWorkshop, where the engine's backend takes a person's kernels (nullptr otherwise).
  KernelWorkshop* workshop() const override;
  DeviceInfo device_info() const override { return info().device; }
  MeasurePolicy default_policy() const override { return info().default_policy; }
  MeasurePolicy bench_policy() const override { return info().bench_policy; }
  std::string version_info() const override;
  Capacity capacity() const override { return info().capacity; }
  void validate(RunRequest& req, bool tile_given = false) const override;
  RunResult run(const RunRequest& req, const CancelToken& cancel) override;
  BandwidthResult measure_bandwidth(const CancelToken& cancel) override;
  Incidents incidents() const override;
  std::optional<LaunchInfo> launch_info(const ProblemSpec& spec) const override;
  // The engine's answer (its build's listings, its workshop's builds); an engine without the capability
  // "sass" (an older TileScope) cannot: not available, and why says so.
  SassListing sass_listing(const std::string& kernel, int tile, int arch,
                           const CancelToken* cancel = nullptr) const override;
  Link link() const override;
  // Starts the engine command again; the kernels registered here are published to the new engine.
  void reconnect() override;

  std::shared_ptr<Connection> connection() const;
  EngineInfo info() const;  // what the engine (the latest one connected) said of itself

 private:
  std::string m_command;
  ConnectOptions m_options;
  mutable std::mutex m_mu;  // m_conn, m_info
  std::shared_ptr<Connection> m_conn;
  EngineInfo m_info;
  std::atomic<uint64_t> m_serial{0};  // reconnects (a new engine's kernel list)
  std::unique_ptr<RemoteWorkshop> m_workshop;
};

}  // namespace ts::remote
