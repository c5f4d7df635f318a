// A remote engine end to end: `tilescope serve --backend cpu` as a child process behind a RemoteBackend,
// against the same CPU backend in this process. Results, matrices and errors must be the same wherever the
// engine is; a cancelled request stops, a killed engine is said to be gone and reconnect() brings a new one.
#include <filesystem>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "core/remote/engine_server.hpp"
#include "core/remote/remote_backend.hpp"
#include "kernels/engine/registry.hpp"
#include "test_util.hpp"

using namespace ts;
using namespace ts::remote;

namespace {

const std::string kBin = TILESCOPE_BIN;
const std::string kServe = "exec " + kBin + " serve --backend cpu --quiet";

RunRequest small_request() {
  RunRequest req;
  req.spec = ProblemSpec{67, 45, 33, "tiled", 8, InputKind::Random, 5};
  req.keep_output = true;
  req.keep_store = true;
  req.policy = MeasurePolicy::fixed(2);
  return req;
}

}  // namespace

TEST(RemoteEngine, DescribesItselfAsTheLocalBackendWould) {
  RemoteBackend remote(kServe);
  const auto local = make_backend(BackendChoice::Cpu, nullptr);
  EXPECT_EQ(remote.kind(), "cpu");
  EXPECT_EQ(remote.device_name(), local->device_name());
  EXPECT_EQ(remote.cuda_device(), -1);
  const auto rk = remote.kernels(), lk = local->kernels();
  ASSERT_EQ(rk.size(), lk.size());
  for (size_t i = 0; i < rk.size(); ++i) {
    EXPECT_EQ(rk[i].id, lk[i].id);
    EXPECT_EQ(rk[i].tiles, lk[i].tiles);
    EXPECT_EQ(rk[i].has_cpu(), lk[i].has_cpu()) << rk[i].id;
    EXPECT_EQ(rk[i].runs_on("cpu"), lk[i].runs_on("cpu")) << rk[i].id;
  }
  EXPECT_EQ(remote.bench_policy().describe(), local->bench_policy().describe());
  EXPECT_EQ(remote.capacity().max_work, local->capacity().max_work);
  const Backend::Link l = remote.link();
  EXPECT_TRUE(l.remote);
  EXPECT_TRUE(l.connected);
  EXPECT_EQ(l.command, kServe);
  EXPECT_FALSE(local->link().remote);
  EXPECT_NE(remote.version_info().find("through `" + kServe + "`"), std::string::npos)
      << remote.version_info();
}

TEST(RemoteEngine, RunAndItsMatricesAreTheLocalOnesBitForBit) {
  RemoteBackend remote(kServe);
  const auto local = make_backend(BackendChoice::Cpu, nullptr);
  const RunRequest req = small_request();
  const RunResult r = remote.run(req, CancelToken());
  const RunResult l = local->run(req, CancelToken());
  EXPECT_EQ(r.spec, l.spec);
  EXPECT_EQ(r.backend, "cpu");
  EXPECT_TRUE(r.error.passed);
  EXPECT_EQ(r.error.max_abs_err, l.error.max_abs_err);
  EXPECT_EQ(r.samples_ms.size(), 2u);
  EXPECT_EQ(r.policy, l.policy);
  ASSERT_TRUE(r.c && l.c);
  EXPECT_EQ(r.c->data, l.c->data);  // C came back whole, as asked (keep_output)
  ASSERT_TRUE(r.store && l.store);
  EXPECT_TRUE(r.store->remote());
  EXPECT_FALSE(l.store->remote());
  for (MatrixId id : {MatrixId::A, MatrixId::B, MatrixId::C, MatrixId::Error}) {
    SCOPED_TRACE(matrix_name(id));
    ASSERT_EQ(r.store->rows(id), l.store->rows(id));
    ASSERT_EQ(r.store->cols(id), l.store->cols(id));
    const LodRegion region{1, 2, r.store->rows(id) - 1, r.store->cols(id) - 2, 7, 5};
    std::vector<float> rv(35), lv(35);
    const ValueRange rr = r.store->reduce(id, region, Reduce::AbsMax, rv.data());
    const ValueRange lr = l.store->reduce(id, region, Reduce::AbsMax, lv.data());
    EXPECT_EQ(rv, lv);
    EXPECT_EQ(rr.lo, lr.lo);
    EXPECT_EQ(rr.hi, lr.hi);
    EXPECT_EQ(r.store->element(id, 3, 4), l.store->element(id, 3, 4));
    EXPECT_EQ(r.store->copy(id).data, l.store->copy(id).data);
    // The same, asked without waiting (how a frame asks).
    auto later = r.store->reduce_later(id, region, Reduce::Mean);
    ASSERT_TRUE(later);
    while (!later->ready()) std::this_thread::yield();
    std::vector<float> mean(35), lmean(35);
    later->take(mean.data());
    l.store->reduce(id, region, Reduce::Mean, lmean.data());
    EXPECT_EQ(mean, lmean);
    auto el = r.store->element_later(id, 0, 0);
    while (!el->ready()) std::this_thread::yield();
    EXPECT_EQ(el->take(), l.store->element(id, 0, 0));
  }
  EXPECT_THROW(r.store->element(MatrixId::C, 67, 0), std::out_of_range);
  EXPECT_GT(remote.link().bytes_in, 0u);
}

TEST(RemoteEngine, InputsOpenedHereTravelToTheEngine) {
  RemoteBackend remote(kServe);
  const auto local = make_backend(BackendChoice::Cpu, nullptr);
  RunRequest req = small_request();
  auto a = std::make_shared<HostMatrix>(20, 9), b = std::make_shared<HostMatrix>(9, 13);
  for (size_t i = 0; i < a->data.size(); ++i) a->data[i] = float(i % 7) - 3;
  for (size_t i = 0; i < b->data.size(); ++i) b->data[i] = float(i % 5) * 0.25f;
  req.spec.input = InputKind::File;
  req.a = a;
  req.b = b;
  adopt_given_inputs(req);
  remote.validate(req, true);
  const RunResult r = remote.run(req, CancelToken());
  const RunResult l = local->run(req, CancelToken());
  ASSERT_TRUE(r.c);
  EXPECT_EQ(r.c->rows, 20);
  EXPECT_EQ(r.c->cols, 13);
  EXPECT_EQ(r.c->data, l.c->data);
}

TEST(RemoteEngine, RefusalsComeBackAsTheLocalBackendsWould) {
  RemoteBackend remote(kServe);
  RunRequest req = small_request();
  req.spec.kernel = "no_such_kernel";
  try {
    remote.validate(req, true);
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("no_such_kernel"), std::string::npos) << e.what();
  }
  EXPECT_THROW(remote.run(req, CancelToken()), ValidationError);
  req = small_request();
  req.spec.m = req.spec.n = req.spec.k = 4096;  // over the CPU backend's work limit
  EXPECT_THROW(remote.validate(req, true), ValidationError);
  req = small_request();
  req.spec.tile = 7;
  try {
    remote.validate(req, true);
    FAIL();
  } catch (const ValidationError& e) {
    EXPECT_NE(std::string(e.what()).find("tile 7 is not allowed for kernel 'tiled' (allowed: "),
              std::string::npos)
        << e.what();
  }
  // The engine lives on after a refusal.
  EXPECT_TRUE(remote.run(small_request(), CancelToken()).error.passed);
}

TEST(RemoteEngine, ACancelledRequestStopsThere) {
  auto conn = Connection::start(kServe);
  RunRequest big;
  big.spec = ProblemSpec{1024, 1024, 1024, "tiled", 16, InputKind::Random, 1};
  big.policy = MeasurePolicy::fixed(50);
  const uint64_t id = conn->next_id();
  auto pending = conn->send({encode(RunMsg{big, false}, id)}, id);
  conn->post(empty(Type::Cancel, id));  // right behind it: the engine reads them in order
  const auto frames = pending->wait();
  ASSERT_EQ(frames.back().type, Type::Error);
  EXPECT_EQ(decode<ErrorMsg>(frames.back()).kind, ErrorKind::Cancelled);
  // The same through the backend: a token cancelled while waiting.
  RemoteBackend remote(conn);
  CancelToken token;
  std::thread cancel_soon([token] { token.cancel(); });
  EXPECT_THROW(remote.run(RunRequest{big}, token), Cancelled);
  cancel_soon.join();
  EXPECT_TRUE(remote.run(small_request(), CancelToken()).error.passed);
}

TEST(RemoteEngine, AnswersComeInAnyOrder) {
  auto conn = Connection::start(kServe);
  RemoteBackend remote(conn);
  const RunResult kept = remote.run(small_request(), CancelToken());
  RunRequest big;
  big.spec = ProblemSpec{1024, 1024, 1024, "tiled", 16, InputKind::Random, 1};
  big.policy = MeasurePolicy::fixed(20);
  const uint64_t id = conn->next_id();
  auto run = conn->send({encode(RunMsg{big, false}, id)}, id);
  // A hover value of the last run's C while the big run is in flight: answered first.
  EXPECT_EQ(kept.store->element(MatrixId::C, 1, 1), kept.c->at(1, 1));
  EXPECT_FALSE(run->ready());
  conn->post(empty(Type::Cancel, id));
  EXPECT_EQ(run->wait().back().type, Type::Error);
}

TEST(RemoteEngine, AKilledEngineIsSaidToBeGoneAndReconnectBringsANewOne) {
  RemoteBackend remote(kServe);
  const RunResult kept = remote.run(small_request(), CancelToken());
  auto conn = remote.connection();
  RunRequest big;
  big.spec = ProblemSpec{1024, 1024, 1024, "tiled", 16, InputKind::Random, 1};
  big.policy = MeasurePolicy::fixed(50);
  const uint64_t id = conn->next_id();
  auto run = conn->send({encode(RunMsg{big, false}, id)}, id);
  ASSERT_EQ(::kill(conn->pid(), SIGKILL), 0);  // mid-run
  try {
    run->wait();
    FAIL() << "a run on a killed engine came back";
  } catch (const EngineLost& e) {
    EXPECT_NE(std::string(e.what()).find("the engine closed the connection"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(remote.link().connected);
  EXPECT_FALSE(remote.link().lost.empty());
  EXPECT_THROW(remote.run(small_request(), CancelToken()), EngineLost);
  EXPECT_THROW(kept.store->element(MatrixId::C, 0, 0), EngineLost);   // its matrices went with it
  EXPECT_EQ(remote.kernels().size(), builtin_kernel_infos().size());  // still known, for the panels
  const uint64_t serial = remote.kernels_serial();
  remote.reconnect();
  EXPECT_TRUE(remote.link().connected);
  EXPECT_GT(remote.kernels_serial(), serial);
  EXPECT_TRUE(remote.run(small_request(), CancelToken()).error.passed);
}

TEST(RemoteEngine, CommandsThatAreNoEngineAreRefusedWithWhatTheySaid) {
  try {
    RemoteBackend r("exec /nonexistent/tilescope serve");
    FAIL();
  } catch (const EngineStartError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("ended before it said hello"), std::string::npos) << what;
    EXPECT_NE(what.find("exited with code 127"), std::string::npos) << what;
    EXPECT_NE(what.find("/nonexistent/tilescope"), std::string::npos) << what;  // sh's own words
  }
  try {
    RemoteBackend r("echo 'Welcome to gpu-box!'; sleep 5");  // a login banner where frames should be
    FAIL();
  } catch (const EngineStartError& e) {
    EXPECT_NE(std::string(e.what()).find("did not speak the engine protocol"), std::string::npos) << e.what();
  }
  EXPECT_THROW(RemoteBackend r(""), EngineStartError);
}

TEST(RemoteEngine, TheServerRefusesMalformedFramesAndOtherVersions) {
  const auto backend = make_backend(BackendChoice::Cpu, nullptr);
  for (int variant = 0; variant < 2; ++variant) {
    int to[2], from[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, to), 0);
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, from), 0);
    std::string error;
    std::thread server([&] {
      try {
        serve(backend, to[1], from[1]);
      } catch (const std::exception& e) {
        error = e.what();
      }
      close(from[1]);
    });
    Frame f;
    ASSERT_EQ(read_frame(from[0], &f, 10000), wire::ReadStatus::Ok);
    EXPECT_EQ(decode<HelloMsg>(f).role, "engine");
    if (variant == 0) {
      HelloMsg h;
      h.protocol = 99;
      h.tilescope = "9.9";
      h.role = "window";
      Frame hf = encode(h, 0);
      hf.version = 99;
      ASSERT_TRUE(write_frame(to[0], hf));
    } else {
      HelloMsg h;
      h.tilescope = "0.1.0";
      h.role = "window";
      ASSERT_TRUE(write_frame(to[0], encode(h, 0)));
      const std::string junk = "garbage that is no frame at all";
      ASSERT_EQ(write(to[0], junk.data(), junk.size()), ssize_t(junk.size()));
    }
    if (variant == 0) {  // it says why before it goes
      ASSERT_EQ(read_frame(from[0], &f, 10000), wire::ReadStatus::Ok);
      EXPECT_NE(decode<ErrorMsg>(f).message.find("protocol 99"), std::string::npos);
    }
    server.join();
    EXPECT_FALSE(error.empty());
    for (int fd : {to[0], to[1], from[0]}) close(fd);
  }
}

TEST(RemoteEngine, TheCommandLineRunsOnAnEngine) {
  auto r = test::run_cmd(kBin + " run --engine '" + kServe +
                         "' --size 48 --kernel tiled --tile 8 --json 2>/dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("\"backend\": \"cpu\""), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("\"passed\": true"), std::string::npos) << r.output;
  r = test::run_cmd(kBin + " run --engine 'exec /nonexistent/tilescope serve' --size 48");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("--engine: the engine command"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("/nonexistent/tilescope"), std::string::npos) << r.output;
  r = test::run_cmd(kBin + " run --engine true --size 48");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("ended before it said hello; it exited with code 0"), std::string::npos)
      << r.output;
  r = test::run_cmd(kBin + " run --engine '" + kServe + "' --backend cpu --size 48");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("give it to the engine"), std::string::npos) << r.output;
  // bench through an engine: the table is the engine's device's, and bench's --backend is refused beside it.
  r = test::run_cmd(
      kBin + " bench --engine '" + kServe +
      "' --kernels tiled --tiles 8 --sizes 48 --min-samples 3 --max-samples 3 --format csv 2>/dev/null");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("\ntiled,8,fp32,48,48,48,yes,"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("CPU ("), std::string::npos) << r.output;
  r = test::run_cmd(kBin + " bench --engine '" + kServe + "' --backend cpu --kernels tiled --sizes 48");
  EXPECT_EQ(r.code, 2) << r.output;
  // Split across identical engines (--also-engine): one table, in the sweep's order, every point once.
  r = test::run_cmd(
      kBin + " bench --engine '" + kServe + "' --also-engine '" + kServe +
      "' --kernels tiled,naive --tiles 8 --sizes 16:64:16 --min-samples 3 --max-samples 3 "
      "--format csv --session-out " +
      (std::filesystem::temp_directory_path() / ("split-" + std::to_string(::getpid()) + ".json")).string() +
      " --force");
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("split across 2 engines"), std::string::npos) << r.output;
  size_t at = 0;
  for (int n : {16, 32, 48, 64})
    for (const char* k : {"tiled", "naive"}) {
      const std::string row =
          std::string("\n") + k + ",8,fp32," + std::to_string(n) + "," + std::to_string(n);
      const size_t found = r.output.find(row, at);
      ASSERT_NE(found, std::string::npos) << row << " after " << at << ":\n" << r.output;
      at = found + 1;
    }
  std::filesystem::remove(std::filesystem::temp_directory_path() /
                          ("split-" + std::to_string(::getpid()) + ".json"));
  r = test::run_cmd(kBin + " bench --engine '" + kServe + "' --also-engine '" + kServe +
                    "' --shard 1/2 --kernels tiled --sizes 48");
  EXPECT_EQ(r.code, 2) << r.output;
  EXPECT_NE(r.output.find("with --shard"), std::string::npos) << r.output;
  r = test::run_cmd(kBin + " serve --backend cpu --device 1 </dev/null");
  EXPECT_EQ(r.code, 2) << r.output;
  r = test::run_cmd(kBin + " serve --backend cpu --quiet </dev/null");  // no window: it goes at once
  EXPECT_EQ(r.code, 0) << r.output;
}

#if defined(TILESCOPE_HAVE_GUI)
// The window's commands that take --engine (figure, snapshot, bench heatmap): an engine command that is no
// engine is refused with exit code 2 and the reason, before anything is drawn or written (so without a
// display too), as is --backend beside --engine. Through a real engine they are tested where they can draw
// (tests/ui: test_figure.cpp, test_snapshot.cpp).
TEST(RemoteEngine, TheWindowsCommandsRefuseAnEngineCommandThatIsNoEngine) {
  test::TempDir dir;
  const std::string png = dir.file("never.png"), figures = dir.file("figures");
  const std::vector<std::pair<std::string, std::string>> commands = {
      {"figure", "figure --plot bars --kernels tiled --size 48 --out-dir " + figures},
      {"snapshot", "snapshot --size 48 --out " + png},
      {"bench heatmap", "bench heatmap --size 48 --frame-seconds 0 --repeats 1"}};
  for (const auto& [name, args] : commands) {
    SCOPED_TRACE(name);
    auto r = test::run_cmd("env -u DISPLAY " + kBin + " " + args + " --engine 'echo hello'");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("--engine: the engine command `echo hello` did not speak the engine protocol"),
              std::string::npos)
        << r.output;
    EXPECT_EQ(r.output.find("draws offscreen"), std::string::npos) << "refused for the display instead";
    r = test::run_cmd(kBin + " " + args + " --engine 'exec /nonexistent/tilescope serve'");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("/nonexistent/tilescope"), std::string::npos) << r.output;
    r = test::run_cmd(kBin + " " + args + " --engine '" + kServe + "' --backend cpu");
    EXPECT_EQ(r.code, 2) << r.output;
    EXPECT_NE(r.output.find("give it to the engine"), std::string::npos) << r.output;
    EXPECT_FALSE(std::filesystem::exists(png));
    EXPECT_FALSE(std::filesystem::exists(figures));
  }
}
#endif

TEST(RemoteEngine, AFloodOfRequestsIsRefusedBeyondItsLimitAndTheEngineLivesOn) {
  auto conn = Connection::start(kServe);
  RunRequest big;
  big.spec = ProblemSpec{1024, 1024, 1024, "tiled", 16, InputKind::Random, 1};
  big.policy = MeasurePolicy::fixed(50);
  // Runs wait for one another on the engine (one measurement at a time), so they stay in flight.
  std::vector<std::pair<uint64_t, std::shared_ptr<Pending>>> sent;
  for (int i = 0; i < 300; ++i) {
    const uint64_t id = conn->next_id();
    sent.emplace_back(id, conn->send({encode(RunMsg{big, false}, id)}, id));
  }
  for (auto& [id, p] : sent) conn->post(empty(Type::Cancel, id));
  int refused = 0, cancelled = 0;
  for (auto& [id, p] : sent) {
    const Frame last = p->wait().back();
    ASSERT_EQ(last.type, Type::Error);
    const ErrorMsg e = decode<ErrorMsg>(last);
    if (e.kind == ErrorKind::Cancelled) ++cancelled;
    if (e.message.find("requests in flight already") != std::string::npos) ++refused;
  }
  EXPECT_EQ(refused, 300 - 256);
  EXPECT_EQ(cancelled, 256);
  RemoteBackend remote(conn);
  EXPECT_TRUE(remote.run(small_request(), CancelToken()).error.passed);
}

// A link that stops carrying bytes (link_sim stalls after 300 kB) never holds up whoever asks: the frames
// wait for the connection's writer thread, so asking returns at once (a frame of the window asks for
// heatmaps); the answers simply do not come, and closing the connection does not wait for the stuck write.
TEST(RemoteEngine, AStalledLinkNeverHoldsUpTheCaller) {
  auto conn = Connection::start(std::string("exec ") + LINK_SIM_BIN + " --stall-after-bytes 300000 -- " +
                                kBin + " serve --backend cpu --quiet");
  RunRequest req = small_request();
  auto a = std::make_shared<HostMatrix>(1024, 1024), b = std::make_shared<HostMatrix>(1024, 1024);
  uint32_t x = 12345;
  for (auto* m : {a.get(), b.get()})
    for (float& v : m->data) v = float((x = x * 1664525u + 1013904223u) >> 8) / float(1 << 24);  // no pattern
  req.spec.input = InputKind::File;
  req.a = a;
  req.b = b;
  adopt_given_inputs(req);
  const uint64_t run_id = conn->next_id();
  std::vector<Frame> frames = matrix_parts(*a, MatrixId::A, run_id);
  for (Frame& f : matrix_parts(*b, MatrixId::B, run_id)) frames.push_back(std::move(f));
  RunMsg m{req, true};
  m.request.a.reset();
  m.request.b.reset();
  frames.push_back(encode(m, run_id));
  auto run = conn->send(std::move(frames), run_id);  // 8 MB that will never all arrive
  std::vector<std::shared_ptr<Pending>> asked;
  for (int i = 0; i < 50; ++i) {  // each returns without waiting for the link
    const uint64_t id = conn->next_id();
    asked.push_back(conn->send({encode(LaunchInfoMsg{req.spec}, id)}, id));
    conn->post(encode(PingMsg{double(i)}, 0));
  }
  EXPECT_FALSE(run->ready());
  EXPECT_TRUE(conn->alive());
  conn.reset();  // closes: the stuck write is abandoned, the link_sim killed
  EXPECT_TRUE(run->ready());
  EXPECT_THROW(run->take(), EngineLost);
}

namespace {

// Time the test moves by hand: what a connection reads for its silences and rates.
struct HandClock {
  std::shared_ptr<std::atomic<double>> t = std::make_shared<std::atomic<double>>(1000.0);
  LinkClock clock() const {
    return [t = t] { return t->load(); };
  }
  void advance(double s) { t->store(t->load() + s); }
};

// The engine's Hello, in bytes on the link (the same for every `serve --backend cpu` of this build here).
uint64_t engine_hello_bytes() {
  ConnectOptions o;
  o.ping_interval_s = 0;
  return Connection::start(kServe, o)->bytes_in();
}

void wait_until(const std::function<bool()>& done) {
  while (!done()) std::this_thread::yield();
}

}  // namespace

// A link that stalls (link_sim stops carrying anything once the engine's Hello is through) is said to be
// stalled once the engine has been silent for Link::kStalledAfterS while something is awaited, a ping
// unanswered first, then a request too, in time counted by the test's own clock.
TEST(RemoteEngine, ALinkSilentWhileAnswersAreAwaitedIsSaidToBeStalled) {
  HandClock hand;
  ConnectOptions o;
  o.clock = hand.clock();
  o.ping_interval_s = 3600;  // one ping, at once
  auto conn = Connection::start(std::string("exec ") + LINK_SIM_BIN + " --rtt-ms 10 --stall-after-bytes " +
                                    std::to_string(engine_hello_bytes()) + " -- " + kBin +
                                    " serve --backend cpu --quiet",
                                o);
  RemoteBackend remote(conn);
  wait_until([&] { return conn->bytes_out() > 0; });  // the ping went into the link
  Backend::Link l = remote.link();
  EXPECT_EQ(l.silent_s, 0);
  EXPECT_FALSE(l.stalled);
  hand.advance(Backend::Link::kStalledAfterS - 1);
  l = remote.link();
  EXPECT_EQ(l.silent_s, Backend::Link::kStalledAfterS - 1);
  EXPECT_FALSE(l.stalled);
  hand.advance(2);
  l = remote.link();
  EXPECT_EQ(l.silent_s, Backend::Link::kStalledAfterS + 1);
  EXPECT_TRUE(l.stalled);
  EXPECT_TRUE(l.connected);  // stalled is not lost: nothing says the link dropped
  // A request asked meanwhile does not start the silence again; it is not answered either.
  const uint64_t id = conn->next_id();
  auto asked = conn->send({encode(LaunchInfoMsg{small_request().spec}, id)}, id);
  hand.advance(7);
  l = remote.link();
  EXPECT_EQ(l.silent_s, Backend::Link::kStalledAfterS + 8);
  EXPECT_TRUE(l.stalled);
  EXPECT_FALSE(asked->ready());
  conn->close("the test gave up on the link");
  l = remote.link();
  EXPECT_FALSE(l.connected);
  EXPECT_FALSE(l.stalled);  // lost is said instead
  EXPECT_EQ(l.silent_s, 0);
}

// A link that moves again is no longer said to be stalled: the engine busy with a run the test does not let
// anything else answer for (no pinger) is silent for longer than kStalledAfterS, then a Pong comes (a frame
// moving the link) and the silence starts from there; nothing awaited, nothing is silent.
TEST(RemoteEngine, TheStalledSayingClearsWhenFramesComeAgain) {
  HandClock hand;
  ConnectOptions o;
  o.clock = hand.clock();
  o.ping_interval_s = 0;
  auto conn = Connection::start(kServe, o);
  RemoteBackend remote(conn);
  hand.advance(100);
  EXPECT_EQ(remote.link().silent_s, 0);  // nothing awaited: a quiet link is no silent one
  RunRequest big;
  big.spec = ProblemSpec{1024, 1024, 1024, "tiled", 16, InputKind::Random, 1};
  big.policy = MeasurePolicy::fixed(50);
  const uint64_t id = conn->next_id();
  auto run = conn->send({encode(RunMsg{big, false}, id)}, id);
  hand.advance(Backend::Link::kStalledAfterS + 5);
  EXPECT_TRUE(remote.link().stalled);
  EXPECT_EQ(remote.link().silent_s, Backend::Link::kStalledAfterS + 5);
  const uint64_t in = conn->bytes_in();
  conn->post(encode(PingMsg{hand.t->load() * 1000}, 0));
  wait_until([&] { return conn->bytes_in() > in; });  // its Pong
  Backend::Link l = remote.link();
  EXPECT_FALSE(l.stalled);
  EXPECT_EQ(l.silent_s, 0);
  hand.advance(2);
  l = remote.link();
  EXPECT_FALSE(l.stalled);
  EXPECT_EQ(l.silent_s, 2);  // the run is still awaited
  EXPECT_FALSE(run->ready());
  conn->post(empty(Type::Cancel, id));
  EXPECT_EQ(run->wait().back().type, Type::Error);
  hand.advance(60);
  EXPECT_EQ(remote.link().silent_s, 0);
  EXPECT_FALSE(remote.link().stalled);
}

// The rate the link carries is measured on long frames, from their header to their last piece, in the
// connection's time: a clock that ticks a millisecond each time it is read gives a frame of P payload bytes
// read in ceil(P / kReadPieceBytes) pieces a rate of P / (pieces x 1 ms).
TEST(RemoteEngine, TheLinkRateIsMeasuredOnLongFramesInTheConnectionsTime) {
  auto ticks = std::make_shared<std::atomic<int64_t>>(0);
  ConnectOptions o;
  o.clock = [ticks] { return double(ticks->fetch_add(1)) * 1e-3; };
  o.ping_interval_s = 0;
  RemoteBackend remote(Connection::start(kServe, o));
  RunRequest req;
  req.spec = ProblemSpec{1024, 1024, 8, "tiled", 8, InputKind::Random, 3};
  req.keep_store = true;
  req.policy = MeasurePolicy::fixed(1);
  const RunResult r = remote.run(req, CancelToken());
  ASSERT_TRUE(r.store);
  ASSERT_EQ(remote.link().bytes_per_s, 0) << "no long frame yet";
  const uint64_t before = remote.connection()->bytes_in();
  std::vector<float> v(1024 * 1024);
  r.store->reduce(MatrixId::C, LodRegion{0, 0, 1024, 1024, 1024, 1024}, Reduce::Mean, v.data());
  const double payload = double(remote.connection()->bytes_in() - before - kHeaderBytes);
  ASSERT_GE(payload, double(Connection::kRateFrameBytes)) << "random values do not compress much";
  const double pieces = std::ceil(payload / double(kReadPieceBytes));
  const double want = payload / (pieces * 1e-3);
  EXPECT_NEAR(remote.link().bytes_per_s, want, want * 1e-9);
}
