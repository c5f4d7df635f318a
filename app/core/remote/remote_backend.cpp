#include "core/remote/remote_backend.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/base/child_process.hpp"
#include "core/engine/schedule_replay.hpp"
#include "tilescope/version.hpp"

namespace ts::remote {

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

namespace {

// A request whose frames carry a matrix (or anything long): it waits behind the small ones of others, and the
// link taking its bytes counts as the link moving.
bool bulky(const std::vector<Frame>& frames) {
  for (const Frame& f : frames)
    if (f.type == Type::MatrixPart || f.payload.size() > (64u << 10)) return true;
  return false;
}

}  // namespace

[[noreturn]] void throw_error(const Frame& f) {
  const ErrorMsg e = decode<ErrorMsg>(f);
  switch (e.kind) {
    case ErrorKind::Validation:
      throw ValidationError(e.message);
    case ErrorKind::Cancelled:
      throw Cancelled();
    case ErrorKind::Protocol:
      throw ProtocolError("the engine refused a request: " + e.message);
    case ErrorKind::Runtime:
    case ErrorKind::UnknownStore:
      break;
  }
  throw std::runtime_error(e.message);
}

const Frame& answer(const std::vector<Frame>& frames, Type type) {
  if (frames.empty()) throw ProtocolError(std::string("the engine sent no ") + to_string(type));
  const Frame& last = frames.back();
  if (last.type == Type::Error) throw_error(last);
  if (last.type != type)
    throw ProtocolError(std::string("the engine answered ") + to_string(last.type) + " where " +
                        to_string(type) + " was expected");
  return last;
}

// [SECTION] Pending.
bool Pending::ready() const {
  std::lock_guard<std::mutex> lk(m_mu);
  return m_done;
}

std::vector<Frame> Pending::wait(const CancelToken* cancel) {
  std::unique_lock<std::mutex> lk(m_mu);
  bool cancel_sent = false;
  while (!m_done) {
    m_cv.wait_for(lk, std::chrono::milliseconds(50));
    if (!m_done && cancel && cancel->cancelled() && !cancel_sent && m_cancel) {
      cancel_sent = true;
      auto c = m_cancel;
      lk.unlock();
      c();  // the engine answers Error{Cancelled} (or the result, when it was done already)
      lk.lock();
    }
  }
  lk.unlock();
  return take();
}

std::vector<Frame> Pending::take() {
  std::lock_guard<std::mutex> lk(m_mu);
  if (!m_done) return {};
  if (!m_lost.empty()) throw EngineLost(m_lost);
  return m_frames;
}

// [SECTION] Connection.
std::shared_ptr<Connection> Connection::start(const std::string& command, const ConnectOptions& o) {
  if (command.find_first_not_of(" \t") == std::string::npos)
    throw EngineStartError("the engine command is empty");
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)
    throw EngineStartError(std::string("cannot make pipes for the engine: ") + std::strerror(errno));
  std::shared_ptr<Connection> c(new Connection());
  c->m_command = command;
  if (o.clock) c->m_clock = o.clock;
  c->m_moved_s = c->now_s();
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", command};
  spec.moves = {{in[0], 0}, {out[1], 1}, {err[1], 2}};
  spec.own_process_group = true;  // Ctrl+C in the terminal reaches the window, which cancels and closes
  try {
    c->m_pid = spawn_process(spec);
  } catch (const std::exception& e) {
    for (int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) ::close(fd);
    throw EngineStartError(e.what());
  }
  ::close(in[0]);
  ::close(out[1]);
  ::close(err[1]);
  c->m_to = in[1];
  c->m_from = out[0];
  c->m_err = err[0];
  Connection* raw = c.get();
  c->m_err_reader = std::thread([raw] {
    char buf[4096];
    for (;;) {
      const ssize_t n = ::read(raw->m_err, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      std::lock_guard<std::mutex> lk(raw->m_mu);
      raw->m_stderr.append(buf, size_t(n));
      if (raw->m_stderr.size() > 16384) raw->m_stderr.erase(0, raw->m_stderr.size() - 16384);
    }
    raw->m_err_eof.store(true);
  });

  // The handshake: our Hello, then the engine's.
  auto fail = [&](const std::string& what) -> EngineStartError {
    ::close(c->m_to);
    c->m_to = -1;
    const int status = reap_process_group(c->m_pid, 1.0);
    c->m_pid = -1;
    if (c->m_err_reader.joinable()) c->m_err_reader.join();
    std::string tail = c->stderr_tail();
    while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
    return EngineStartError("the engine command `" + command + "` " + what + "; " +
                            exit_status_words(status) +
                            (tail.empty() ? std::string(", printing nothing on its standard error")
                                          : ". Its standard error:\n" + tail));
  };
  HelloMsg hello;
  hello.tilescope = ::ts::kVersion;
  hello.commit = ::ts::kGitCommit;
  hello.role = "window";
  hello.capabilities = {"run",    "reduce",  "element", "copy",     "bandwidth", "launch-info",
                        "cancel", "publish", "build",   "sanitize", "sass"};
  write_frame(c->m_to, encode(hello, 0));  // a command that exited already is found out below
  Frame f;
  try {
    const auto st = read_frame(c->m_from, &f, int(o.hello_timeout_s * 1000));
    if (st == wire::ReadStatus::Eof) throw fail("ended before it said hello");
    if (st == wire::ReadStatus::Timeout)
      throw fail("said nothing for " + std::to_string(int(o.hello_timeout_s)) + " s");
    if (f.type == Type::Error) throw fail("refused this window: " + decode<ErrorMsg>(f).message);
    const HelloMsg theirs = decode<HelloMsg>(f);
    if (theirs.role != "engine" || !theirs.has_engine) throw fail("is not an engine but a " + theirs.role);
    c->m_engine = theirs.engine;
    c->m_engine_version = theirs.tilescope + " (" + theirs.commit + ")";
    c->m_capabilities = theirs.capabilities;
  } catch (const EngineStartError&) {
    throw;
  } catch (const std::exception& e) {
    throw fail(std::string("did not speak the engine protocol: ") + e.what());
  }
  c->m_bytes_in += kHeaderBytes + f.payload.size();
  if (::pipe2(c->m_wake, O_CLOEXEC | O_NONBLOCK) != 0)
    throw EngineStartError(std::string("cannot make a pipe: ") + std::strerror(errno));
  ::fcntl(c->m_to, F_SETFL, ::fcntl(c->m_to, F_GETFL) | O_NONBLOCK);
  c->m_writer = std::thread([raw] { raw->writer(); });
  c->m_reader = std::thread([raw] { raw->reader(); });
  if (o.ping_interval_s > 0) c->m_pinger = std::thread([raw, s = o.ping_interval_s] { raw->pinger(s); });
  return c;
}

Connection::~Connection() {
  close("the window closed the connection");
  {
    std::lock_guard<std::mutex> lk(m_stop_mu);
    m_stop = true;
  }
  m_stop_cv.notify_all();
  if (m_pinger.joinable()) m_pinger.join();
  // The engine exits when its input closes; else it is killed, with what is left of its group. (One the
  // reader reaped already is not killed: its number may be another process's by now.)
  if (m_writer.joinable()) m_writer.join();  // it closes the engine's input
  if (m_pid > 0 && !m_reaped.load()) reap_process_group(m_pid, 5.0);
  if (m_reader.joinable()) m_reader.join();
  if (m_err_reader.joinable()) m_err_reader.join();
  for (int fd : {m_from, m_err, m_wake[0], m_wake[1]})
    if (fd >= 0) ::close(fd);
  if (m_to >= 0) ::close(m_to);  // a connection whose writer never started
}

void Connection::close(const std::string& why) {
  {
    std::lock_guard<std::mutex> lk(m_queue_mu);
    m_closing = true;
  }
  m_queue_cv.notify_all();
  if (m_wake[1] >= 0) {
    const char b = 1;
    (void)!::write(m_wake[1], &b, 1);
  }
  lose(why);
}

void Connection::enqueue(std::vector<Frame> frames) {
  const bool bulk = bulky(frames);
  {
    std::lock_guard<std::mutex> lk(m_queue_mu);
    if (m_closing) return;
    (bulk ? m_bulk : m_small).push_back(std::move(frames));
  }
  m_queue_cv.notify_one();
}

namespace {
// Writes all of `bytes` to a non-blocking `fd`, waiting for room with poll; false when the other side is gone
// or `wake` became readable (the connection closes). `took`, when given, is called after every write the
// link took.
bool write_all(int fd, const std::string& bytes, int wake, const std::function<void()>& took) {
  size_t off = 0;
  while (off < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n > 0) {
      off += size_t(n);
      if (took) took();
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return false;
    pollfd p[2] = {{fd, POLLOUT, 0}, {wake, POLLIN, 0}};
    if (::poll(p, 2, -1) < 0 && errno != EINTR) return false;
    if (p[1].revents) return false;
    if (p[0].revents & (POLLERR | POLLHUP)) return false;
  }
  return true;
}
}  // namespace

void Connection::writer() {
  for (;;) {
    std::vector<Frame> frames;
    {
      std::unique_lock<std::mutex> lk(m_queue_mu);
      m_queue_cv.wait(lk, [this] { return m_closing || !m_small.empty() || !m_bulk.empty(); });
      if (m_closing) break;
      std::deque<std::vector<Frame>>& q = m_small.empty() ? m_bulk : m_small;
      frames = std::move(q.front());
      q.pop_front();
    }
    bool ok = true;
    {
      const NoSigpipe guard;
      // A matrix going up keeps the engine quiet until it is all there (its pings wait behind it): the link
      // taking its bytes is the link moving. (Small frames are not: a stalled link's buffers take those.)
      std::function<void()> took;
      if (bulky(frames)) took = [this] { moved(); };
      for (const Frame& f : frames) {
        ok = write_all(m_to, frame_bytes(f), m_wake[0], took);
        if (!ok) break;
        m_bytes_out += kHeaderBytes + f.payload.size();
      }
    }
    if (!ok) {
      bool closing;
      {
        std::lock_guard<std::mutex> lk(m_queue_mu);
        closing = m_closing;
      }
      if (!closing) lose(std::string("the engine's input closed: ") + std::strerror(errno));
      break;
    }
  }
  ::close(m_to);  // the engine sees its input end and exits
  m_to = -1;
}

void Connection::lose(const std::string& why) {
  std::map<uint64_t, std::shared_ptr<Pending>> pending;
  {
    std::lock_guard<std::mutex> lk(m_mu);
    if (m_lost_flag.load()) return;
    m_lost = why;
    m_lost_flag.store(true);
    pending.swap(m_pending);
  }
  for (auto& [id, p] : pending) {
    std::lock_guard<std::mutex> lk(p->m_mu);
    p->m_lost = why;
    p->m_done = true;
    p->m_cv.notify_all();
  }
}

std::string Connection::lost() const {
  std::lock_guard<std::mutex> lk(m_mu);
  return m_lost;
}

void Connection::moved() {
  const double t = now_s();
  std::lock_guard<std::mutex> lk(m_mu);
  m_moved_s = t;
}

double Connection::silent_s() const {
  const double t = now_s();
  std::lock_guard<std::mutex> lk(m_mu);
  if (m_lost_flag.load() || (m_pending.empty() && m_pings_unanswered == 0)) return 0;
  return std::max(0.0, t - m_moved_s);
}

Backend::Incidents Connection::incidents() const {
  std::lock_guard<std::mutex> lk(m_mu);
  return m_incidents;
}

std::string Connection::stderr_tail() const {
  std::lock_guard<std::mutex> lk(m_mu);
  return m_stderr;
}

std::shared_ptr<Pending> Connection::send(std::vector<Frame> frames, uint64_t id, bool copy) {
  auto p = std::make_shared<Pending>();
  p->m_copy = copy;
  std::weak_ptr<Connection> self = weak_from_this();
  p->m_cancel = [self, id] {
    if (auto c = self.lock()) c->post(empty(Type::Cancel, id));
  };
  const double t = now_s();
  {
    std::lock_guard<std::mutex> lk(m_mu);
    if (m_lost_flag.load()) throw EngineLost(m_lost);
    if (m_pending.empty() && m_pings_unanswered == 0) m_moved_s = t;  // silence counts from now
    m_pending[id] = p;
  }
  enqueue(std::move(frames));
  return p;
}

std::vector<Frame> Connection::call(std::vector<Frame> frames, uint64_t id, const CancelToken* cancel) {
  return send(std::move(frames), id)->wait(cancel);
}

void Connection::post(const Frame& f) {
  enqueue({f});
}

void Connection::reader() {
  std::string why;
  // Every piece of a frame is the link moving; a long frame's pieces, from its header to its end, give the
  // rate the link carries.
  double first_s = 0, last_s = 0;
  bool started = false;
  const auto arrived = [&](size_t) {
    last_s = now_s();
    if (!started) first_s = last_s;
    started = true;
    std::lock_guard<std::mutex> lk(m_mu);
    m_moved_s = last_s;
  };
  try {
    for (;;) {
      Frame f;
      started = false;
      const auto st = read_frame(m_from, &f, -1, arrived);
      if (st != wire::ReadStatus::Ok) {
        why = "the engine closed the connection";
        break;
      }
      m_bytes_in += kHeaderBytes + f.payload.size();
      if (f.payload.size() >= kRateFrameBytes && last_s > first_s) {
        const double rate = double(f.payload.size()) / (last_s - first_s), was = m_bytes_per_s.load();
        m_bytes_per_s.store(was > 0 ? 0.5 * was + 0.5 * rate : rate);
      }
      if (f.type == Type::Pong) {
        const PongMsg p = decode<PongMsg>(f);
        m_rtt_ms.store(now_s() * 1000 - p.sent);
        std::lock_guard<std::mutex> lk(m_mu);
        m_incidents = {p.incidents, p.latest_incident};
        if (m_pings_unanswered > 0) --m_pings_unanswered;
        continue;
      }
      std::shared_ptr<Pending> p;
      {
        std::lock_guard<std::mutex> lk(m_mu);
        auto it = m_pending.find(f.id);
        if (it == m_pending.end()) continue;  // the answer to a request given up on
        p = it->second;
      }
      const uint64_t id = f.id;
      bool done = f.type != Type::MatrixPart;
      if (!done && p->m_copy) done = decode<MatrixPartMsg>(f).last();
      if (done) {  // no longer awaited once whoever asked can see its answer
        std::lock_guard<std::mutex> lk(m_mu);
        m_pending.erase(id);
      }
      {
        std::lock_guard<std::mutex> lk(p->m_mu);
        p->m_frames.push_back(std::move(f));
        p->m_done = done;
      }
      if (done) p->m_cv.notify_all();
    }
  } catch (const std::exception& e) {
    why = std::string("the engine sent a malformed message: ") + e.what();
    close(why);
  }
  // The engine's own account of why it went, where it gave one.
  // How the command ended (waited for a second at most: a link that dropped may leave it running), and its
  // last line on standard error unless that is serve's own account of starting or stopping.
  std::string how;
  if (m_pid > 0) {
    int status = 0;
    for (int i = 0; i < 20; ++i) {
      const pid_t r = waitpid(m_pid, &status, WNOHANG);
      if (r == m_pid) {
        m_reaped.store(true);
        how = "; " + exit_status_words(status);
        break;
      }
      if (r < 0) break;
      ::usleep(50000);
    }
  }
  for (int i = 0; i < 20 && !m_err_eof.load(); ++i) ::usleep(50000);
  std::string tail = stderr_tail();
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == '\r')) tail.pop_back();
  const size_t nl = tail.rfind('\n');
  if (nl != std::string::npos) tail = tail.substr(nl + 1);
  if (tail.rfind("tilescope serve: ", 0) == 0) tail.clear();
  lose(why + how + (tail.empty() ? "" : " (it said: " + tail + ")"));
}

void Connection::pinger(double interval_s) {
  std::unique_lock<std::mutex> lk(m_stop_mu);
  while (!m_stop) {
    lk.unlock();
    const double t = now_s();
    {
      std::lock_guard<std::mutex> g(m_mu);
      if (m_pending.empty() && m_pings_unanswered == 0) m_moved_s = t;  // silence counts from now
      ++m_pings_unanswered;
    }
    post(encode(PingMsg{t * 1000}, 0));
    lk.lock();
    m_stop_cv.wait_for(lk, std::chrono::duration<double>(interval_s), [this] { return m_stop; });
  }
}

// [SECTION] RemoteStore.
RemoteStore::~RemoteStore() {
  if (m_conn->alive()) m_conn->post(encode(ReleaseStoreMsg{m_shape.id}, m_conn->next_id()));
}

namespace {
class RemoteReduce : public PendingReduce {
 public:
  RemoteReduce(std::shared_ptr<Pending> p, LodRegion r) : m_p(std::move(p)), m_r(r) {}
  bool ready() const override { return m_p->ready(); }
  ValueRange take(float* out) override { return unpack(m_p->take(), out); }
  ValueRange wait(float* out) { return unpack(m_p->wait(), out); }

 private:
  ValueRange unpack(const std::vector<Frame>& frames, float* out) const {
    const ReducedMsg m = decode<ReducedMsg>(answer(frames, Type::Reduced));
    if (m.w != m_r.w || m.h != m_r.h) throw ProtocolError("the engine reduced to another size than asked");
    unpack_floats(m.values, out, size_t(m.w) * size_t(m.h));
    return m.range;
  }
  std::shared_ptr<Pending> m_p;
  LodRegion m_r;
};

class RemoteElement : public PendingElement {
 public:
  explicit RemoteElement(std::shared_ptr<Pending> p) : m_p(std::move(p)) {}
  bool ready() const override { return m_p->ready(); }
  float take() override { return decode<ElementValueMsg>(answer(m_p->take(), Type::ElementValue)).value; }
  float wait() { return decode<ElementValueMsg>(answer(m_p->wait(), Type::ElementValue)).value; }

 private:
  std::shared_ptr<Pending> m_p;
};
}  // namespace

std::shared_ptr<PendingReduce> RemoteStore::reduce_later(MatrixId id, const LodRegion& r, Reduce mode) const {
  validate_lod_region(r, rows(id), cols(id));
  const uint64_t rid = m_conn->next_id();
  return std::make_shared<RemoteReduce>(m_conn->send({encode(ReduceMsg{m_shape.id, id, r, mode}, rid)}, rid),
                                        r);
}

ValueRange RemoteStore::reduce(MatrixId id, const LodRegion& r, Reduce mode, float* out) const {
  auto p = std::static_pointer_cast<RemoteReduce>(reduce_later(id, r, mode));
  return p->wait(out);
}

std::shared_ptr<PendingElement> RemoteStore::element_later(MatrixId id, int64_t row, int64_t col) const {
  if (row < 0 || col < 0 || row >= rows(id) || col >= cols(id))
    throw std::out_of_range("element (" + std::to_string(row) + ", " + std::to_string(col) + ") outside " +
                            matrix_name(id));
  const uint64_t rid = m_conn->next_id();
  return std::make_shared<RemoteElement>(
      m_conn->send({encode(ElementMsg{m_shape.id, id, row, col}, rid)}, rid));
}

float RemoteStore::element(MatrixId id, int64_t row, int64_t col) const {
  return std::static_pointer_cast<RemoteElement>(element_later(id, row, col))->wait();
}

HostMatrix RemoteStore::copy(MatrixId id) const {
  const uint64_t rid = m_conn->next_id();
  const auto frames = m_conn->send({encode(CopyMatrixMsg{m_shape.id, id}, rid)}, rid, /*copy=*/true)->wait();
  MatrixAssembler a;
  for (const Frame& f : frames) {
    if (f.type == Type::Error) throw_error(f);
    a.add(decode<MatrixPartMsg>(f));
  }
  if (!a.complete()) throw ProtocolError("the engine sent part of a matrix");
  return std::move(*a.take());
}

// [SECTION] RemoteBackend.
RemoteBackend::RemoteBackend(const std::string& command, const ConnectOptions& o)
    : RemoteBackend(Connection::start(command, o)) {
  m_options = o;
}

RemoteBackend::RemoteBackend(std::shared_ptr<Connection> c)
    : m_command(c->command()),
      m_conn(std::move(c)),
      m_info(m_conn->engine()),
      m_workshop(std::make_unique<RemoteWorkshop>([this] { return connection(); })) {}

std::vector<KernelInfo> RemoteBackend::kernels() const {
  std::vector<KernelInfo> all;
  bool takes_yours = false;
  {
    std::lock_guard<std::mutex> lk(m_mu);
    for (const KernelInfo& k : m_info.kernels)
      if (!k.user) all.push_back(k);
    takes_yours = m_info.workshop.present;
  }
  if (takes_yours)
    for (KernelInfo& k : m_workshop->infos()) all.push_back(std::move(k));
  return all;
}

KernelWorkshop* RemoteBackend::workshop() const {
  std::lock_guard<std::mutex> lk(m_mu);
  return m_info.workshop.present ? m_workshop.get() : nullptr;
}

std::shared_ptr<Connection> RemoteBackend::connection() const {
  std::lock_guard<std::mutex> lk(m_mu);
  return m_conn;
}

EngineInfo RemoteBackend::info() const {
  std::lock_guard<std::mutex> lk(m_mu);
  return m_info;
}

std::string RemoteBackend::version_info() const {
  const auto c = connection();
  const std::string engine = info().version_info;
  return "engine TileScope " + c->engine_version() + " through `" + m_command + "`" +
         (engine.empty() ? "" : "; " + engine);
}

void RemoteBackend::validate(RunRequest& req, bool tile_given) const {
  const auto c = connection();
  ValidateMsg m;
  m.request = req;
  m.tile_given = tile_given;
  if (req.a && req.b) {
    m.given_inputs = true;
    m.a_rows = req.a->rows;
    m.a_cols = req.a->cols;
    m.b_rows = req.b->rows;
    m.b_cols = req.b->cols;
  }
  m.request.a.reset();
  m.request.b.reset();
  const uint64_t id = c->next_id();
  req.spec = decode<ValidatedMsg>(answer(c->call({encode(m, id)}, id), Type::Validated)).spec;
}

RunResult RemoteBackend::run(const RunRequest& req, const CancelToken& cancel) {
  cancel.throw_if_cancelled();
  const auto c = connection();
  const uint64_t id = c->next_id();
  std::vector<Frame> frames;
  RunMsg m;
  m.request = req;
  m.request.a.reset();
  m.request.b.reset();
  if (req.a && req.b) {
    m.given_inputs = true;
    for (Frame& f : matrix_parts(*req.a, MatrixId::A, id)) frames.push_back(std::move(f));
    for (Frame& f : matrix_parts(*req.b, MatrixId::B, id)) frames.push_back(std::move(f));
  }
  frames.push_back(encode(m, id));
  const std::vector<Frame> got = c->call(std::move(frames), id, &cancel);
  RunDoneMsg done = decode<RunDoneMsg>(answer(got, Type::RunDone));
  RunResult r = std::move(done.result);
  if (done.has_c) {
    MatrixAssembler a;
    for (size_t i = 0; i + 1 < got.size(); ++i) a.add(decode<MatrixPartMsg>(got[i]));
    if (!a.complete()) throw ProtocolError("the engine sent part of C");
    r.c = a.take();
  }
  if (done.store.id != 0) r.store = std::make_shared<RemoteStore>(c, done.store);
  if (r.trace) {  // the schedule's view is made here, off the window's thread, as the CUDA backend does
    auto t = std::make_shared<TileTrace>(*r.trace);
    t->view = std::make_shared<const ScheduleView>(prepare_schedule_view(*t));
    t->replay = std::make_shared<const ScheduleReplay>(*t);
    r.trace = t;
  }
  return r;
}

BandwidthResult RemoteBackend::measure_bandwidth(const CancelToken& cancel) {
  const auto c = connection();
  const uint64_t id = c->next_id();
  return decode<BandwidthDoneMsg>(
             answer(c->call({empty(Type::Bandwidth, id)}, id, &cancel), Type::BandwidthDone))
      .result;
}

bool Connection::engine_can(const std::string& capability) const {
  for (const auto& c : m_capabilities)
    if (c == capability) return true;
  return false;
}

Backend::Incidents RemoteBackend::incidents() const {
  return connection()->incidents();
}

std::optional<LaunchInfo> RemoteBackend::launch_info(const ProblemSpec& spec) const {
  const auto c = connection();
  const uint64_t id = c->next_id();
  const auto r = decode<LaunchInfoReplyMsg>(
      answer(c->call({encode(LaunchInfoMsg{spec}, id)}, id), Type::LaunchInfoReply));
  if (!r.has) return std::nullopt;
  return r.info;
}

SassListing RemoteBackend::sass_listing(const std::string& kernel, int tile, int arch,
                                        const CancelToken* cancel) const {
  const auto c = connection();
  if (!c->engine_can("sass")) {
    SassListing l;
    l.kernel = kernel;
    l.tile = tile;
    l.why = "the engine (TileScope " + c->engine_version() + ") cannot send machine code listings";
    return l;
  }
  const uint64_t id = c->next_id();
  SassListing l = decode<SassReplyMsg>(
                      answer(c->call({encode(SassMsg{kernel, tile, arch}, id)}, id, cancel), Type::SassReply))
                      .listing;
  return l;
}

Backend::Link RemoteBackend::link() const {
  const auto c = connection();
  Link l;
  l.remote = true;
  l.command = m_command;
  l.connected = c->alive();
  l.lost = c->lost();
  l.rtt_ms = c->rtt_ms();
  l.silent_s = c->silent_s();
  l.stalled = l.silent_s >= Link::kStalledAfterS;
  l.bytes_per_s = c->bytes_per_s();
  l.bytes_in = c->bytes_in();
  l.bytes_out = c->bytes_out();
  l.engine_version = c->engine_version();
  return l;
}

void RemoteBackend::reconnect() {
  auto fresh = Connection::start(m_command, m_options);
  // The person's kernels are published to the new engine before any request can reach it.
  m_workshop->reconnect(*fresh, [&] {
    std::lock_guard<std::mutex> lk(m_mu);
    m_conn = fresh;
    m_info = m_conn->engine();
    ++m_serial;
  });
}

}  // namespace ts::remote
