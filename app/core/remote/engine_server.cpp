#include "core/remote/engine_server.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <list>
#include <map>
#include <set>
#include <mutex>
#include <thread>

#include "core/user_kernel/kernel_workshop.hpp"
#include "tilescope/version.hpp"

namespace ts::remote {

EngineInfo describe_engine(const Backend& b) {
  EngineInfo e;
  e.kind = b.kind();
  e.device_name = b.device_name();
  e.version_info = b.version_info();
  e.cuda_device = b.cuda_device();
  e.device = b.device_info();
  e.capacity = b.capacity();
  e.default_policy = b.default_policy();
  e.bench_policy = b.bench_policy();
  // The built-in kernels: a person's travel as the window's workshop publishes them (RemoteWorkshop).
  for (KernelInfo& k : b.kernels())
    if (!k.user) e.kernels.push_back(std::move(k));
  if (const KernelWorkshop* w = b.workshop()) {
    WorkshopInfo& i = e.workshop;
    i.present = true;
    i.can_build = w->can_build(&i.build_why);
    i.compiler = w->compiler();
    i.architectures = w->architectures();
    i.device_arch = w->device_arch();
    i.can_sanitize = w->can_sanitize(&i.sanitize_why);
  }
  return e;
}

namespace {

ErrorMsg error_of(const std::exception& e) {
  ErrorMsg m;
  m.message = e.what();
  if (dynamic_cast<const ValidationError*>(&e))
    m.kind = ErrorKind::Validation;
  else if (dynamic_cast<const Cancelled*>(&e))
    m.kind = ErrorKind::Cancelled;
  else if (dynamic_cast<const ProtocolError*>(&e))
    m.kind = ErrorKind::Protocol;
  else
    m.kind = ErrorKind::Runtime;
  return m;
}

class Server {
 public:
  Server(std::shared_ptr<Backend> backend, int in_fd, int out_fd)
      : m_backend(std::move(backend)), m_in(in_fd), m_out(out_fd) {}

  ServeStats run() {
    HelloMsg hello;
    hello.tilescope = ::ts::kVersion;
    hello.commit = ::ts::kGitCommit;
    hello.role = "engine";
    hello.capabilities = {"run",    "reduce",  "element", "copy",     "bandwidth", "launch-info",
                          "cancel", "publish", "build",   "sanitize", "sass"};
    hello.has_engine = true;
    hello.engine = describe_engine(*m_backend);
    send(encode(hello, 0));
    Frame f;
    if (read_frame(m_in, &f, -1) != wire::ReadStatus::Ok) return finish("the window closed before its Hello");
    count_in(f);
    try {
      const HelloMsg theirs = decode<HelloMsg>(f);
      if (theirs.role != "window") throw ProtocolError("the other side is not a window but a " + theirs.role);
    } catch (const std::exception& e) {
      send_error(0, error_of(e));
      throw;
    }
    for (;;) {
      reap();
      if (read_frame(m_in, &f, -1) != wire::ReadStatus::Ok) return finish("the window closed the connection");
      count_in(f);
      dispatch(std::move(f));
    }
  }

  ~Server() {
    {
      std::lock_guard<std::mutex> lk(m_mu);
      for (auto& [id, token] : m_tokens) token.cancel();
    }
    for (auto& j : m_jobs) j.thread.join();
  }

 private:
  struct Job {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  ServeStats finish(const std::string& why) {
    m_stats.ended = why;
    return m_stats;
  }
  void count_in(const Frame& f) {
    ++m_stats.requests;
    m_stats.bytes_in += kHeaderBytes + f.payload.size();
  }

  void send(const Frame& f) {
    std::lock_guard<std::mutex> lk(m_write_mu);
    if (m_gone) return;
    if (!write_frame(m_out, f)) m_gone = true;
    m_stats.bytes_out += kHeaderBytes + f.payload.size();
  }
  void send_error(uint64_t id, const ErrorMsg& e) { send(encode(e, id)); }

  // Runs `work` on a thread of its own, answering `id` with what it returns or with the error it throws.
  template <class Work>
  void spawn(uint64_t id, Work work) {
    // A window asks for a few things at a time (a run, four heatmaps, a hover value); one that floods the
    // engine is told so rather than given a thread per request.
    reap();
    if (m_jobs.size() >= kMaxInFlight)
      throw std::runtime_error("the engine has " + std::to_string(m_jobs.size()) +
                               " requests in flight already; ask again when some are answered");
    CancelToken token;
    {
      std::lock_guard<std::mutex> lk(m_mu);
      m_tokens[id] = token;
      m_last_spawned = std::max(m_last_spawned, id);
      if (m_cancel_early.erase(id)) token.cancel();  // cancelled before it arrived
    }
    auto done = std::make_shared<std::atomic<bool>>(false);
    m_jobs.push_back({std::thread([this, id, token, done, work = std::move(work)]() mutable {
                        try {
                          work(token);
                        } catch (const std::exception& e) {
                          send_error(id, error_of(e));
                        }
                        {
                          std::lock_guard<std::mutex> lk(m_mu);
                          m_tokens.erase(id);
                        }
                        done->store(true);
                      }),
                      done});
  }
  void reap() {
    for (auto it = m_jobs.begin(); it != m_jobs.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = m_jobs.erase(it);
      } else {
        ++it;
      }
    }
  }

  // [SECTION] A person's kernels, in the backend's own workshop.
  KernelWorkshop& workshop() const {
    KernelWorkshop* w = m_backend->workshop();
    if (!w) throw ValidationError("the engine's " + m_backend->kind() + " backend takes no kernels of yours");
    return *w;
  }
  // The kernel the window understood, understood here from the same text, kernel, corrections and headers.
  std::shared_ptr<const UserKernel> understand(const KernelText& t) const {
    return workshop().understand(t.source, t.kernel, &t.spec, &t.headers);
  }
  // A request for a kernel whose last publication the engine refused: refused with that reason (not as an
  // unknown kernel).
  void check_not_refused(const std::string& kernel) {
    std::lock_guard<std::mutex> lk(m_mu);
    auto it = m_refused.find(kernel);
    if (it != m_refused.end()) throw ValidationError(it->second);
  }

  std::shared_ptr<const MatrixStore> store(uint64_t id) {
    std::lock_guard<std::mutex> lk(m_mu);
    auto it = m_stores.find(id);
    if (it == m_stores.end()) throw std::out_of_range("no matrices kept under " + std::to_string(id));
    return it->second;
  }

  void dispatch(Frame f) {
    const uint64_t id = f.id;
    try {
      switch (f.type) {
        case Type::MatrixPart: {
          const MatrixPartMsg p = decode<MatrixPartMsg>(f);
          if (p.which != MatrixId::A && p.which != MatrixId::B)
            throw ProtocolError("an input matrix that is neither A nor B");
          m_inputs[id][p.which == MatrixId::A ? 0 : 1].add(p);
          return;
        }
        case Type::Run: {
          RunMsg m = decode<RunMsg>(f);
          check_not_refused(m.request.spec.kernel);
          if (m.given_inputs) {
            auto it = m_inputs.find(id);
            if (it == m_inputs.end() || !it->second[0].complete() || !it->second[1].complete())
              throw ProtocolError("a run with given inputs that did not arrive whole");
            m.request.a = it->second[0].take();
            m.request.b = it->second[1].take();
            m_inputs.erase(it);
          }
          spawn(id, [this, id, req = std::move(m.request)](const CancelToken& token) {
            RunResult r = m_backend->run(req, token);
            RunDoneMsg done;
            if (r.c && req.keep_output) {
              for (const Frame& part : matrix_parts(*r.c, MatrixId::C, id)) send(part);
              done.has_c = true;
            }
            if (r.store) {
              std::lock_guard<std::mutex> lk(m_mu);
              done.store.id = ++m_next_store;
              m_stores[done.store.id] = r.store;
              for (int i = 0; i < 4; ++i) {
                done.store.dims[i][0] = r.store->rows(MatrixId(i));
                done.store.dims[i][1] = r.store->cols(MatrixId(i));
              }
            }
            r.c.reset();
            r.store.reset();
            done.result = std::move(r);
            send(encode(done, id));
          });
          return;
        }
        case Type::Validate: {
          const ValidateMsg m = decode<ValidateMsg>(f);
          check_not_refused(m.request.spec.kernel);
          spawn(id, [this, id, m](const CancelToken&) {
            RunRequest req = m.request;
            if (m.given_inputs) {  // shapes only: validate() reads the inputs' sizes
              auto a = std::make_shared<HostMatrix>();
              a->rows = m.a_rows;
              a->cols = m.a_cols;
              auto b = std::make_shared<HostMatrix>();
              b->rows = m.b_rows;
              b->cols = m.b_cols;
              req.a = a;
              req.b = b;
            }
            m_backend->validate(req, m.tile_given);
            send(encode(ValidatedMsg{req.spec}, id));
          });
          return;
        }
        case Type::Cancel: {
          std::lock_guard<std::mutex> lk(m_mu);
          auto it = m_tokens.find(id);
          if (it != m_tokens.end()) {
            it->second.cancel();
          } else if (id > m_last_spawned) {  // its request is still on its way (a matrix ahead of it)
            if (m_cancel_early.size() >= 1024) m_cancel_early.erase(m_cancel_early.begin());
            m_cancel_early.insert(id);
          }
          return;
        }
        case Type::Bandwidth:
          if (!f.payload.empty()) throw ProtocolError("a Bandwidth request with a payload");
          spawn(id, [this, id](const CancelToken& token) {
            send(encode(BandwidthDoneMsg{m_backend->measure_bandwidth(token)}, id));
          });
          return;
        case Type::LaunchInfo: {
          const LaunchInfoMsg m = decode<LaunchInfoMsg>(f);
          check_not_refused(m.spec.kernel);
          spawn(id, [this, id, m](const CancelToken&) {
            LaunchInfoReplyMsg r;
            if (auto info = m_backend->launch_info(m.spec)) {
              r.has = true;
              r.info = *info;
            }
            send(encode(r, id));
          });
          return;
        }
        case Type::Reduce: {
          const ReduceMsg m = decode<ReduceMsg>(f);
          auto s = store(m.store);
          spawn(id, [this, id, m, s](const CancelToken&) {
            validate_lod_region(m.region, s->rows(m.matrix), s->cols(m.matrix));
            std::vector<float> v(size_t(m.region.w) * size_t(m.region.h));
            ReducedMsg r;
            r.range = s->reduce(m.matrix, m.region, m.mode, v.data());
            r.w = m.region.w;
            r.h = m.region.h;
            r.values = pack_floats(v.data(), v.size());
            send(encode(r, id));
          });
          return;
        }
        case Type::Element: {
          const ElementMsg m = decode<ElementMsg>(f);
          auto s = store(m.store);
          spawn(id, [this, id, m, s](const CancelToken&) {
            send(encode(ElementValueMsg{s->element(m.matrix, m.row, m.col)}, id));
          });
          return;
        }
        case Type::CopyMatrix: {
          const CopyMatrixMsg m = decode<CopyMatrixMsg>(f);
          auto s = store(m.store);
          spawn(id, [this, id, m, s](const CancelToken&) {
            const HostMatrix c = s->copy(m.matrix);
            for (const Frame& part : matrix_parts(c, m.matrix, id)) send(part);
          });
          return;
        }
        case Type::ReleaseStore: {
          const ReleaseStoreMsg m = decode<ReleaseStoreMsg>(f);
          std::lock_guard<std::mutex> lk(m_mu);
          m_stores.erase(m.store);
          return;
        }
        // Publish and Withdraw are done here, on the reader's thread, before the next frame is read: a run
        // sent after them finds the register as the window left it.
        case Type::Publish: {
          const PublishMsg m = decode<PublishMsg>(f);
          const std::string kernel_id = "yours:" + m.kernel.kernel;
          std::shared_ptr<const UserKernel> k;
          try {
            k = understand(m.kernel);
          } catch (const ValidationError& e) {
            const std::string why = "the engine could not take " + kernel_id + ": " + e.what();
            // Not an older version instead of the one the window holds.
            if (KernelWorkshop* w = m_backend->workshop()) w->withdraw(kernel_id);
            std::lock_guard<std::mutex> lk(m_mu);
            m_refused[kernel_id] = why;
            throw ValidationError(why);
          }
          workshop().publish(k);
          {
            std::lock_guard<std::mutex> lk(m_mu);
            m_refused.erase(k->id());
          }
          PublishedMsg p;
          for (KernelInfo& i : m_backend->kernels())
            if (i.id == k->id()) p.info = std::move(i);
          if (p.info.id.empty()) p.info = k->info();
          send(encode(p, id));
          return;
        }
        case Type::Withdraw: {
          const WithdrawMsg m = decode<WithdrawMsg>(f);
          {
            std::lock_guard<std::mutex> lk(m_mu);
            m_refused.erase(m.id);
          }
          if (KernelWorkshop* w = m_backend->workshop()) w->withdraw(m.id);
          return;
        }
        case Type::Build: {
          BuildMsg m = decode<BuildMsg>(f);
          spawn(id, [this, id, m = std::move(m)](const CancelToken& token) {
            const auto k = understand(m.kernel);
            BuiltMsg b;
            try {
              b.module = *workshop().build(*k, m.tile, m.arch, m.sizes, &token);
            } catch (const CompileError& e) {
              if (e.module()) b.module = *e.module();
              b.module.ok = false;
              b.failed = true;
              b.error = e.what();
              b.first_line = e.first_line();
            }
            send(encode(b, id));
          });
          return;
        }
        case Type::Sanitize: {
          SanitizeMsg m = decode<SanitizeMsg>(f);
          spawn(id, [this, id, m = std::move(m)](const CancelToken& token) {
            const auto k = understand(m.kernel);
            SanitizedMsg r;
            r.reports = workshop().sanitize(*k, m.spec, m.tools, m.timeout_s, &token);
            send(encode(r, id));
          });
          return;
        }
        case Type::Sass: {
          const SassMsg m = decode<SassMsg>(f);
          check_not_refused(m.kernel);
          spawn(id, [this, id, m](const CancelToken& token) {
            send(encode(SassReplyMsg{m_backend->sass_listing(m.kernel, m.tile, m.arch, &token)}, id));
          });
          return;
        }
        case Type::Ping: {
          const PingMsg m = decode<PingMsg>(f);
          const Backend::Incidents inc = m_backend->incidents();
          send(encode(PongMsg{m.sent, inc.count, inc.latest}, id));
          return;
        }
        default:
          throw ProtocolError(std::string("a window does not send ") + to_string(f.type) + " messages");
      }
    } catch (const std::out_of_range& e) {
      ErrorMsg m{ErrorKind::UnknownStore, e.what()};
      send_error(id, m);
    } catch (const ProtocolError& e) {
      send_error(id, error_of(e));
      throw;  // a window that sends malformed frames is not talked to any further
    } catch (const std::exception& e) {
      send_error(id, error_of(e));
    }
  }

  static constexpr size_t kMaxInFlight = 256;
  std::shared_ptr<Backend> m_backend;
  int m_in, m_out;
  ServeStats m_stats;
  std::mutex m_write_mu;
  bool m_gone = false;
  std::mutex m_mu;  // m_tokens, m_stores, m_next_store, m_refused
  std::map<uint64_t, CancelToken> m_tokens;
  std::set<uint64_t> m_cancel_early;  // Cancel frames that came before their request
  uint64_t m_last_spawned = 0;
  std::map<uint64_t, std::shared_ptr<const MatrixStore>> m_stores;
  std::map<std::string, std::string> m_refused;  // a person's kernel the engine could not take: why
  uint64_t m_next_store = 0;
  std::map<uint64_t, std::array<MatrixAssembler, 2>> m_inputs;
  std::list<Job> m_jobs;
};

}  // namespace

ServeStats serve(const std::shared_ptr<Backend>& backend, int in_fd, int out_fd) {
  Server s(backend, in_fd, out_fd);
  return s.run();
}

}  // namespace ts::remote
