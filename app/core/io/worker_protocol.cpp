#include "core/io/worker_protocol.hpp"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <tuple>
#include <type_traits>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "core/engine/stats.hpp"

namespace ts::wire {

const char* to_string(Type t) {
  switch (t) {
    case Type::Hello:
      return "Hello";
    case Type::Load:
      return "Load";
    case Type::Loaded:
      return "Loaded";
    case Type::Begin:
      return "Begin";
    case Type::Launch:
      return "Launch";
    case Type::Launched:
      return "Launched";
    case Type::Measure:
      return "Measure";
    case Type::Progress:
      return "Progress";
    case Type::Measured:
      return "Measured";
    case Type::Occupancy:
      return "Occupancy";
    case Type::OccupancyReply:
      return "OccupancyReply";
    case Type::End:
      return "End";
    case Type::Ok:
      return "Ok";
    case Type::Cancel:
      return "Cancel";
    case Type::Error:
      return "Error";
    case Type::Shutdown:
      return "Shutdown";
    case Type::Compile:
      return "Compile";
    case Type::Compiled:
      return "Compiled";
    case Type::Inputs:
      return "Inputs";
  }
  return "?";
}

// [SECTION] Fields.
void Writer::raw(const void* p, size_t n) {
  m_out.append(static_cast<const char*>(p), n);
}
void Writer::u32(uint32_t v) {
  uint8_t b[4];
  for (int i = 0; i < 4; ++i) b[i] = uint8_t(v >> (8 * i));
  raw(b, 4);
}
void Writer::u64(uint64_t v) {
  uint8_t b[8];
  for (int i = 0; i < 8; ++i) b[i] = uint8_t(v >> (8 * i));
  raw(b, 8);
}
void Writer::f64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, 8);
  u64(bits);
}
void Writer::str(const std::string& s) {
  if (s.size() > kMaxPayload)
    throw ProtocolError("a field of " + std::to_string(s.size()) + " bytes is too long");
  u32(uint32_t(s.size()));
  raw(s.data(), s.size());
}

void Reader::need(size_t n) const {
  if (n > m_p.size() - m_at)
    throw ProtocolError("message truncated: " + std::to_string(n) + " more bytes needed, " +
                        std::to_string(m_p.size() - m_at) + " left");
}
uint8_t Reader::u8() {
  need(1);
  return uint8_t(m_p[m_at++]);
}
uint32_t Reader::u32() {
  need(4);
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= uint32_t(uint8_t(m_p[m_at + size_t(i)])) << (8 * i);
  m_at += 4;
  return v;
}
uint64_t Reader::u64() {
  need(8);
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= uint64_t(uint8_t(m_p[m_at + size_t(i)])) << (8 * i);
  m_at += 8;
  return v;
}
double Reader::f64() {
  const uint64_t bits = u64();
  double v;
  std::memcpy(&v, &bits, 8);
  return v;
}
std::string Reader::str(size_t max_bytes) {
  const uint32_t n = u32();
  if (n > max_bytes) throw ProtocolError("a field of " + std::to_string(n) + " bytes is over its limit");
  need(n);
  std::string s = m_p.substr(m_at, n);
  m_at += n;
  return s;
}
uint32_t Reader::count(size_t min_bytes) {
  const uint32_t n = u32();
  if (min_bytes > 0 && n > (m_p.size() - m_at) / min_bytes)
    throw ProtocolError("a list of " + std::to_string(n) + " elements cannot fit in the message");
  return n;
}
void Reader::done() const {
  if (m_at != m_p.size())
    throw ProtocolError("message has " + std::to_string(m_p.size() - m_at) + " bytes too many");
}

// [SECTION] Messages.
namespace {

void expect(const Message& m, Type t) {
  if (m.type != t)
    throw ProtocolError(std::string("expected a ") + to_string(t) + " message, got " + to_string(m.type));
}

// [SECTION] Field lists: each message's fields are listed once, in wire order and with the limits a reader
// holds them to; encode() walks the list with a Put, the decoder with a Get, and then checks what the fields
// say together.
struct Put {
  Writer w;
  void u32(const uint32_t& v) { w.u32(v); }
  void u64(const uint64_t& v) { w.u64(v); }
  void i32(const int32_t& v) { w.i32(v); }
  void i64(const int64_t& v) { w.i64(v); }
  void f64(const double& v) { w.f64(v); }
  void flag(const bool& v) { w.u8(v ? 1 : 0); }
  void str(const std::string& v, size_t = 0) { w.str(v); }
  void handle(const IpcHandle& h) { w.str(std::string(h.data(), h.size())); }
  template <class E>
  void enumeration(const E& v, E, E, const char*) {
    w.u8(uint8_t(v));
  }
  // A list: its length, then each element (`min_bytes`, `max` and `too_many`: the reader's limits).
  template <class T, class F>
  void list(const std::vector<T>& v, size_t, uint32_t, const char*, F each) {
    w.u32(uint32_t(v.size()));
    for (const T& e : v) each(*this, e);
  }
};

struct Get {
  Reader& r;
  void u32(uint32_t& v) { v = r.u32(); }
  void u64(uint64_t& v) { v = r.u64(); }
  void i32(int32_t& v) { v = r.i32(); }
  void i64(int64_t& v) { v = r.i64(); }
  void f64(double& v) { v = r.f64(); }
  void flag(bool& v) { v = r.u8() != 0; }
  void str(std::string& v, size_t max_bytes = kMaxPayload) { v = r.str(max_bytes); }
  void handle(IpcHandle& h) {
    const std::string s = r.str(64);
    if (s.size() != 64) throw ProtocolError("an IPC handle must be 64 bytes");
    std::memcpy(h.data(), s.data(), 64);
  }
  template <class E>
  void enumeration(E& v, E lo, E hi, const char* what) {
    const uint8_t x = r.u8();
    if (x < uint8_t(lo) || x > uint8_t(hi)) throw ProtocolError(std::string("an unknown ") + what);
    v = E(x);
  }
  template <class T, class F>
  void list(std::vector<T>& v, size_t min_bytes, uint32_t max, const char* too_many, F each) {
    const uint32_t n = r.count(min_bytes);
    if (n > max) throw ProtocolError(too_many + std::string(" (") + std::to_string(n) + ")");
    v.clear();
    v.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      T e{};
      each(*this, e);
      v.push_back(std::move(e));
    }
  }
};

template <class M, class = void>
struct HasCheck : std::false_type {};
template <class M>
struct HasCheck<M, std::void_t<decltype(std::declval<M&>().check())>> : std::true_type {};

}  // namespace

// [SECTION] What the decoder checks of the fields together.
void LoadMsg::check() const {
  if (cubin.empty() || name.empty()) throw ProtocolError("a Load message without a module or a name");
  if (traced_cubin.empty() != traced_name.empty())
    throw ProtocolError("a Load message with a traced module but no name, or a name but no module");
}

void BeginMsg::check() const {
  const int64_t most = int64_t(1) << 17;
  if (m < 1 || n < 1 || k < 1 || m > most || n > most || k > most)
    throw ProtocolError("a Begin message with a shape out of range");
}

void LaunchSpec::check() const {
  for (size_t i = 0; i < 3; ++i)
    if (grid[i] < 1 || block[i] < 1 || grid[i] > (int64_t(1) << 31) || block[i] > 1024)
      throw ProtocolError("a launch with a grid or block dimension out of range");
  if (smem < 0 || smem > (int64_t(1) << 31)) throw ProtocolError("a launch with shared memory out of range");
  if (input_set < 0 || input_set >= kMaxInputSets)
    throw ProtocolError("a launch on an input set out of range");
}

void MeasureMsg::check() const {
  launch.check();
  try {
    validate_policy(policy);
  } catch (const std::exception& e) {
    throw ProtocolError(std::string("a measuring policy out of range: ") + e.what());
  }
  if (l2_bytes < 0 || l2_bytes > (int64_t(1) << 32)) throw ProtocolError("an L2 size out of range");
  if (input_sets < 1 || input_sets > kMaxInputSets)
    throw ProtocolError("a Measure message with input sets out of range");
}

void MeasuredMsg::check() {
  if (m.last_input_set < 0 || m.last_input_set >= kMaxInputSets)
    throw ProtocolError("a Measured message with an input set out of range");
  if (m.launches_per_sample < 1 || m.launches_per_sample > MeasurePolicy::kMaxLaunchesPerSample)
    throw ProtocolError("a Measured message with launches per sample out of range");
  for (double s : m.samples_ms)
    if (!std::isfinite(s) || s < 0) throw ProtocolError("a sample that is not a time");
  m.stats = summarize(m.samples_ms);
  m.noise = ts::noise(m.samples_ms);
}

void OccupancyMsg::check() const {
  if (threads < 1 || threads > 1024 || smem < 0 || smem > (int64_t(1) << 31))
    throw ProtocolError("an Occupancy message out of range");
}

void CompileMsg::check() const {
  if (arch < 10 || arch > 1000) throw ProtocolError("a Compile message for an impossible architecture");
  if (!(time_limit_s > 0 && time_limit_s <= 86400))
    throw ProtocolError("a Compile message with a time limit out of range");
  if (stack_bytes > (uint64_t(1) << 36)) throw ProtocolError("a Compile message with a stack out of range");
}

void CompiledMsg::check() const {
  if (!(compile_s >= 0 && compile_s <= 86400))
    throw ProtocolError("a Compiled message with an impossible time");
}

template <class M>
Message encode(const M& m) {
  Put p;
  M::fields(p, m);
  return Message{M::kType, p.w.take()};
}

template <class M>
M decode(const Message& msg) {
  expect(msg, M::kType);
  Reader r(msg.payload);
  Get g{r};
  M m;
  M::fields(g, m);
  r.done();
  if constexpr (HasCheck<M>::value) m.check();
  return m;
}

// The messages encode() and decode<M>() are made for, instantiated here once from this list: the explicit
// instantiation of codecs() is always emitted, and with it every encoder and decoder whose address it
// returns.
template <class... M>
struct Codecs {
  std::tuple<Message (*)(const M&)...> encoders;
  std::tuple<M (*)(const Message&)...> decoders;
};
template <class... M>
Codecs<M...> codecs() {
  return {{&encode<M>...}, {&decode<M>...}};
}
template Codecs<HelloMsg, LoadMsg, LoadedMsg, BeginMsg, LaunchMsg, LaunchedMsg, MeasureMsg, ProgressMsg,
                MeasuredMsg, OccupancyMsg, OccupancyReplyMsg, ErrorMsg, CompileMsg, CompiledMsg, InputsMsg>
codecs();

Message empty(Type t) {
  return Message{t, ""};
}

// [SECTION] Frames.
std::string frame(const Message& m) {
  if (m.payload.size() > kMaxPayload)
    throw ProtocolError("a " + std::string(to_string(m.type)) + " message of " +
                        std::to_string(m.payload.size()) + " bytes is over the limit of " +
                        std::to_string(kMaxPayload));
  Writer w;
  w.u32(kMagic);
  w.u32(uint32_t(kVersion) | uint32_t(m.type) << 16);
  w.u32(uint32_t(m.payload.size()));
  return w.take() + m.payload;
}

namespace {
// A frame's header (kHeaderBytes at the start of `bytes`): its magic, version, type and length checked.
struct FrameHeader {
  Type type;
  uint32_t len;
};
FrameHeader read_header(const std::string& bytes) {
  Reader r(bytes);
  if (r.u32() != kMagic) throw ProtocolError("not a TileScope worker message (bad magic)");
  const uint32_t vt = r.u32();
  const uint16_t version = uint16_t(vt & 0xffff), type = uint16_t(vt >> 16);
  if (version != kVersion)
    throw ProtocolError("worker protocol version " + std::to_string(version) + ", expected " +
                        std::to_string(kVersion) + " (a tilescope binary of another version?)");
  if (type < uint16_t(Type::Hello) || type > uint16_t(Type::Last))
    throw ProtocolError("unknown message type " + std::to_string(type));
  const uint32_t len = r.u32();
  if (len > kMaxPayload)
    throw ProtocolError("a message of " + std::to_string(len) + " bytes is over the limit of " +
                        std::to_string(kMaxPayload));
  return {Type(type), len};
}
}  // namespace

size_t unframe(const std::string& bytes, Message* out) {
  if (bytes.size() < kHeaderBytes) return 0;
  const FrameHeader h = read_header(bytes);
  if (bytes.size() - kHeaderBytes < h.len) return 0;
  out->type = h.type;
  out->payload = bytes.substr(kHeaderBytes, h.len);
  return kHeaderBytes + h.len;
}

bool write_bytes(int fd, const std::string& bytes) {
  size_t off = 0;
  while (off < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + off, bytes.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, bytes.data() + off, bytes.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) {
        pollfd p{fd, POLLOUT, 0};
        ::poll(&p, 1, 1000);
        continue;
      }
      return false;
    }
    off += size_t(n);
  }
  return true;
}

bool write_message(int fd, const Message& m) {
  return write_bytes(fd, frame(m));
}

ReadExact read_exact(int fd, char* dst, size_t n, int first_timeout_ms, int later_timeout_ms) {
  size_t got = 0;
  while (got < n) {
    pollfd p{fd, POLLIN, 0};
    const int pr = ::poll(&p, 1, got == 0 ? first_timeout_ms : later_timeout_ms);
    if (pr < 0) {
      if (errno == EINTR) continue;
      throw ProtocolError(std::string("poll failed: ") + std::strerror(errno));
    }
    if (pr == 0) {
      if (got == 0) return ReadExact::Timeout;
      throw ProtocolError("a message stopped arriving halfway (no byte for " +
                          std::to_string(later_timeout_ms / 1000) + " s)");
    }
    const ssize_t r = ::read(fd, dst + got, n - got);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET)
        return got == 0 ? ReadExact::Eof : throw ProtocolError("connection reset mid-message");
      throw ProtocolError(std::string("read failed: ") + std::strerror(errno));
    }
    if (r == 0) {
      if (got == 0) return ReadExact::Eof;
      throw ProtocolError("the other side closed the connection mid-message");
    }
    got += size_t(r);
  }
  return ReadExact::All;
}

ReadStatus read_message(int fd, Message* out, int timeout_ms) {
  std::string head(kHeaderBytes, '\0');
  const ReadExact g = read_exact(fd, head.data(), kHeaderBytes, timeout_ms, 10000);
  if (g == ReadExact::Eof) return ReadStatus::Eof;
  if (g == ReadExact::Timeout) return ReadStatus::Timeout;
  const FrameHeader h = read_header(head);
  out->type = h.type;
  out->payload.assign(h.len, '\0');
  if (h.len > 0 && read_exact(fd, out->payload.data(), h.len, 10000, 10000) != ReadExact::All)
    throw ProtocolError("the other side closed the connection mid-message");
  return ReadStatus::Ok;
}

}  // namespace ts::wire

namespace ts {

using namespace wire;

// [SECTION] Job files (compute-sanitizer runs the worker on one of these).
std::string encode_worker_job(const WorkerJob& j) {
  Writer w;
  w.str("TSJOB1");
  w.str(encode(j.load).payload);
  w.str(encode(LaunchMsg{j.launch}).payload);
  w.i64(j.m);
  w.i64(j.n);
  w.i64(j.k);
  w.u64(j.seed);
  return w.take();
}

WorkerJob decode_worker_job(const std::string& bytes) {
  Reader r(bytes);
  if (r.str(16) != "TSJOB1") throw ProtocolError("not a TileScope worker job");
  WorkerJob j;
  j.load = decode<LoadMsg>(Message{Type::Load, r.str()});
  j.launch = decode<LaunchMsg>(Message{Type::Launch, r.str()}).launch;
  j.m = r.i64();
  j.n = r.i64();
  j.k = r.i64();
  j.seed = r.u64();
  r.done();
  if (j.m < 1 || j.n < 1 || j.k < 1 || j.m > 65536 || j.n > 65536 || j.k > 65536)
    throw ProtocolError("a job with a shape out of range");
  return j;
}

}  // namespace ts
