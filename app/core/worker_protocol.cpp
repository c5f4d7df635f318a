#include "worker_protocol.hpp"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "stats.hpp"

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

Message msg(Type t, Writer& w) {
  return Message{t, w.take()};
}

void expect(const Message& m, Type t) {
  if (m.type != t)
    throw ProtocolError(std::string("expected a ") + to_string(t) + " message, got " + to_string(m.type));
}

void put(Writer& w, const IpcHandle& h) {
  w.str(std::string(h.data(), h.size()));
}
IpcHandle get_handle(Reader& r) {
  const std::string s = r.str(64);
  if (s.size() != 64) throw ProtocolError("an IPC handle must be 64 bytes");
  IpcHandle h;
  std::memcpy(h.data(), s.data(), 64);
  return h;
}

void put(Writer& w, const FuncAttrs& a) {
  for (int32_t v : {a.regs, a.static_smem, a.local_bytes, a.max_threads, a.const_bytes, a.max_dynamic_smem,
                    a.binary_version})
    w.i32(v);
}
FuncAttrs get_attrs(Reader& r) {
  FuncAttrs a;
  a.regs = r.i32();
  a.static_smem = r.i32();
  a.local_bytes = r.i32();
  a.max_threads = r.i32();
  a.const_bytes = r.i32();
  a.max_dynamic_smem = r.i32();
  a.binary_version = r.i32();
  return a;
}

void put(Writer& w, const LaunchSpec& l) {
  w.u8(l.traced ? 1 : 0);
  for (int64_t v : l.grid) w.i64(v);
  for (int64_t v : l.block) w.i64(v);
  w.i64(l.smem);
  w.u32(uint32_t(l.args.size()));
  for (const KernelArg& a : l.args) {
    w.u8(uint8_t(a.type));
    w.u8(uint8_t(a.role));
    w.i64(a.value);
  }
  w.u8(l.poison_c ? 1 : 0);
  put(w, l.trace);
}
LaunchSpec get_launch(Reader& r) {
  LaunchSpec l;
  l.traced = r.u8() != 0;
  for (auto& v : l.grid) v = r.i64();
  for (auto& v : l.block) v = r.i64();
  l.smem = r.i64();
  const uint32_t n = r.count(10);
  if (n > 256) throw ProtocolError("a kernel with " + std::to_string(n) + " parameters");
  for (uint32_t i = 0; i < n; ++i) {
    KernelArg a;
    const uint8_t t = r.u8(), role = r.u8();
    if (t > uint8_t(ParamType::Unsupported) || role > uint8_t(ParamRole::Unmapped))
      throw ProtocolError("an argument of unknown type or role");
    a.type = ParamType(t);
    a.role = ParamRole(role);
    a.value = r.i64();
    l.args.push_back(a);
  }
  l.poison_c = r.u8() != 0;
  l.trace = get_handle(r);
  for (int i = 0; i < 3; ++i)
    if (l.grid[size_t(i)] < 1 || l.block[size_t(i)] < 1 || l.grid[size_t(i)] > (int64_t(1) << 31) ||
        l.block[size_t(i)] > 1024)
      throw ProtocolError("a launch with a grid or block dimension out of range");
  if (l.smem < 0 || l.smem > (int64_t(1) << 31))
    throw ProtocolError("a launch with shared memory out of range");
  return l;
}

void put(Writer& w, const MeasurePolicy& p) {
  w.str(p.name);
  w.i32(p.warmup_launches);
  w.f64(p.warmup_seconds);
  w.i32(p.min_samples);
  w.f64(p.min_seconds);
  w.f64(p.max_noise);
  w.f64(p.max_seconds);
  w.i32(p.max_samples);
  w.u8(p.cold_l2 ? 1 : 0);
  w.u8(p.time_failed ? 1 : 0);
}
MeasurePolicy get_policy(Reader& r) {
  MeasurePolicy p;
  p.name = r.str(64);
  p.warmup_launches = r.i32();
  p.warmup_seconds = r.f64();
  p.min_samples = r.i32();
  p.min_seconds = r.f64();
  p.max_noise = r.f64();
  p.max_seconds = r.f64();
  p.max_samples = r.i32();
  p.cold_l2 = r.u8() != 0;
  p.time_failed = r.u8() != 0;
  try {
    validate_policy(p);
  } catch (const std::exception& e) {
    throw ProtocolError(std::string("a measuring policy out of range: ") + e.what());
  }
  return p;
}

}  // namespace

Message empty(Type t) {
  return Message{t, ""};
}

Message encode(const HelloMsg& m) {
  Writer w;
  w.u32(m.protocol);
  w.i32(m.pid);
  w.i32(m.device);
  w.str(m.device_name);
  return msg(Type::Hello, w);
}
HelloMsg decode_hello(const Message& msg) {
  expect(msg, Type::Hello);
  Reader r(msg.payload);
  HelloMsg m;
  m.protocol = r.u32();
  m.pid = r.i32();
  m.device = r.i32();
  m.device_name = r.str(1024);
  r.done();
  return m;
}

Message encode(const LoadMsg& m) {
  Writer w;
  w.str(m.cubin);
  w.str(m.name);
  w.str(m.traced_cubin);
  w.str(m.traced_name);
  return msg(Type::Load, w);
}
LoadMsg decode_load(const Message& msg) {
  expect(msg, Type::Load);
  Reader r(msg.payload);
  LoadMsg m;
  m.cubin = r.str();
  m.name = r.str(4096);
  m.traced_cubin = r.str();
  m.traced_name = r.str(4096);
  r.done();
  if (m.cubin.empty() || m.name.empty()) throw ProtocolError("a Load message without a module or a name");
  if (m.traced_cubin.empty() != m.traced_name.empty())
    throw ProtocolError("a Load message with a traced module but no name, or a name but no module");
  return m;
}

Message encode(const LoadedMsg& m) {
  Writer w;
  put(w, m.plain);
  w.u8(m.has_traced ? 1 : 0);
  put(w, m.traced);
  return msg(Type::Loaded, w);
}
LoadedMsg decode_loaded(const Message& msg) {
  expect(msg, Type::Loaded);
  Reader r(msg.payload);
  LoadedMsg m;
  m.plain = get_attrs(r);
  m.has_traced = r.u8() != 0;
  m.traced = get_attrs(r);
  r.done();
  return m;
}

Message encode(const BeginMsg& m) {
  Writer w;
  w.i64(m.m);
  w.i64(m.n);
  w.i64(m.k);
  put(w, m.a);
  put(w, m.b);
  put(w, m.c);
  return msg(Type::Begin, w);
}
BeginMsg decode_begin(const Message& msg) {
  expect(msg, Type::Begin);
  Reader r(msg.payload);
  BeginMsg m;
  m.m = r.i64();
  m.n = r.i64();
  m.k = r.i64();
  m.a = get_handle(r);
  m.b = get_handle(r);
  m.c = get_handle(r);
  r.done();
  if (m.m < 1 || m.n < 1 || m.k < 1 || m.m > (int64_t(1) << 17) || m.n > (int64_t(1) << 17) ||
      m.k > (int64_t(1) << 17))
    throw ProtocolError("a Begin message with a shape out of range");
  return m;
}

Message encode(const LaunchMsg& m) {
  Writer w;
  put(w, m.launch);
  return msg(Type::Launch, w);
}
LaunchMsg decode_launch(const Message& msg) {
  expect(msg, Type::Launch);
  Reader r(msg.payload);
  LaunchMsg m;
  m.launch = get_launch(r);
  r.done();
  return m;
}

Message encode(const LaunchedMsg& m) {
  Writer w;
  w.f64(m.ms);
  return msg(Type::Launched, w);
}
LaunchedMsg decode_launched(const Message& msg) {
  expect(msg, Type::Launched);
  Reader r(msg.payload);
  LaunchedMsg m;
  m.ms = r.f64();
  r.done();
  return m;
}

Message encode(const MeasureMsg& m) {
  Writer w;
  put(w, m.launch);
  put(w, m.policy);
  w.i32(m.already_warm);
  w.i64(m.l2_bytes);
  return msg(Type::Measure, w);
}
MeasureMsg decode_measure(const Message& msg) {
  expect(msg, Type::Measure);
  Reader r(msg.payload);
  MeasureMsg m;
  m.launch = get_launch(r);
  m.policy = get_policy(r);
  m.already_warm = r.i32();
  m.l2_bytes = r.i64();
  r.done();
  if (m.l2_bytes < 0 || m.l2_bytes > (int64_t(1) << 32)) throw ProtocolError("an L2 size out of range");
  return m;
}

Message encode(const ProgressMsg& m) {
  Writer w;
  w.i32(m.launches);
  w.f64(m.last_ms);
  return msg(Type::Progress, w);
}
ProgressMsg decode_progress(const Message& msg) {
  expect(msg, Type::Progress);
  Reader r(msg.payload);
  ProgressMsg m;
  m.launches = r.i32();
  m.last_ms = r.f64();
  r.done();
  return m;
}

Message encode(const MeasuredMsg& mm) {
  const Measurement& m = mm.m;
  Writer w;
  w.u32(uint32_t(m.samples_ms.size()));
  for (double s : m.samples_ms) w.f64(s);
  w.u8(uint8_t(m.stop));
  w.i32(m.warmups);
  w.f64(m.wall_s);
  w.u32(uint32_t(m.clocks.size()));
  for (const ClockReading& c : m.clocks) {
    w.f64(c.sm_mhz);
    w.str(c.throttle);
  }
  return msg(Type::Measured, w);
}
MeasuredMsg decode_measured(const Message& msg) {
  expect(msg, Type::Measured);
  Reader r(msg.payload);
  MeasuredMsg mm;
  Measurement& m = mm.m;
  const uint32_t n = r.count(8);
  m.samples_ms.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const double s = r.f64();
    if (!std::isfinite(s) || s < 0) throw ProtocolError("a sample that is not a time");
    m.samples_ms.push_back(s);
  }
  const uint8_t stop = r.u8();
  if (stop > uint8_t(StopReason::CountReached)) throw ProtocolError("an unknown stop reason");
  m.stop = StopReason(stop);
  m.warmups = r.i32();
  m.wall_s = r.f64();
  const uint32_t c = r.count(12);
  for (uint32_t i = 0; i < c; ++i) {
    ClockReading cr;
    cr.sm_mhz = r.f64();
    cr.throttle = r.str(4096);
    m.clocks.push_back(cr);
  }
  r.done();
  m.stats = summarize(m.samples_ms);
  m.noise = ts::noise(m.samples_ms);
  return mm;
}

Message encode(const OccupancyMsg& m) {
  Writer w;
  w.u8(m.traced ? 1 : 0);
  w.i32(m.threads);
  w.i64(m.smem);
  return msg(Type::Occupancy, w);
}
OccupancyMsg decode_occupancy(const Message& msg) {
  expect(msg, Type::Occupancy);
  Reader r(msg.payload);
  OccupancyMsg m;
  m.traced = r.u8() != 0;
  m.threads = r.i32();
  m.smem = r.i64();
  r.done();
  if (m.threads < 1 || m.threads > 1024 || m.smem < 0 || m.smem > (int64_t(1) << 31))
    throw ProtocolError("an Occupancy message out of range");
  return m;
}

Message encode(const OccupancyReplyMsg& m) {
  Writer w;
  put(w, m.attrs);
  w.i32(m.blocks_per_sm);
  return msg(Type::OccupancyReply, w);
}
OccupancyReplyMsg decode_occupancy_reply(const Message& msg) {
  expect(msg, Type::OccupancyReply);
  Reader r(msg.payload);
  OccupancyReplyMsg m;
  m.attrs = get_attrs(r);
  m.blocks_per_sm = r.i32();
  r.done();
  return m;
}

Message encode(const ErrorMsg& m) {
  Writer w;
  w.u8(uint8_t(m.kind));
  w.i32(m.cuda_code);
  w.str(m.code_name);
  w.str(m.message);
  return msg(Type::Error, w);
}
ErrorMsg decode_error(const Message& msg) {
  expect(msg, Type::Error);
  Reader r(msg.payload);
  ErrorMsg m;
  const uint8_t kind = r.u8();
  if (kind < uint8_t(ErrorKind::Fault) || kind > uint8_t(ErrorKind::Other))
    throw ProtocolError("an unknown error kind");
  m.kind = ErrorKind(kind);
  m.cuda_code = r.i32();
  m.code_name = r.str(256);
  m.message = r.str(1 << 16);
  r.done();
  return m;
}

Message encode(const CompileMsg& m) {
  Writer w;
  w.str(m.source);
  w.str(m.label);
  w.str(m.name_expression);
  w.i32(m.arch);
  w.u32(uint32_t(m.options.size()));
  for (const auto& o : m.options) w.str(o);
  w.u32(uint32_t(m.headers.size()));
  for (const auto& [name, content] : m.headers) {
    w.str(name);
    w.str(content);
  }
  w.f64(m.time_limit_s);
  w.u64(m.memory_limit);
  w.u64(m.stack_bytes);
  return msg(Type::Compile, w);
}
CompileMsg decode_compile(const Message& msg) {
  expect(msg, Type::Compile);
  Reader r(msg.payload);
  CompileMsg m;
  m.source = r.str();
  m.label = r.str(4096);
  m.name_expression = r.str();
  m.arch = r.i32();
  const uint32_t n_options = r.count(4);
  if (n_options > 4096) throw ProtocolError("a Compile message with too many options");
  for (uint32_t i = 0; i < n_options; ++i) m.options.push_back(r.str(1 << 16));
  const uint32_t n_headers = r.count(8);
  if (n_headers > 4096) throw ProtocolError("a Compile message with too many headers");
  for (uint32_t i = 0; i < n_headers; ++i) {
    std::string name = r.str(4096);
    m.headers.emplace_back(std::move(name), r.str());
  }
  m.time_limit_s = r.f64();
  m.memory_limit = r.u64();
  m.stack_bytes = r.u64();
  r.done();
  if (m.arch < 10 || m.arch > 1000) throw ProtocolError("a Compile message for an impossible architecture");
  if (!(m.time_limit_s > 0 && m.time_limit_s <= 86400))
    throw ProtocolError("a Compile message with a time limit out of range");
  if (m.stack_bytes > (uint64_t(1) << 36)) throw ProtocolError("a Compile message with a stack out of range");
  return m;
}

Message encode(const CompiledMsg& m) {
  Writer w;
  w.u8(m.ok ? 1 : 0);
  w.str(m.result);
  w.str(m.log);
  w.str(m.lowered_name);
  w.str(m.cubin);
  w.str(m.ptx);
  w.f64(m.compile_s);
  return msg(Type::Compiled, w);
}
CompiledMsg decode_compiled(const Message& msg) {
  expect(msg, Type::Compiled);
  Reader r(msg.payload);
  CompiledMsg m;
  m.ok = r.u8() != 0;
  m.result = r.str(4096);
  m.log = r.str();
  m.lowered_name = r.str();
  m.cubin = r.str();
  m.ptx = r.str();
  m.compile_s = r.f64();
  r.done();
  if (!(m.compile_s >= 0 && m.compile_s <= 86400))
    throw ProtocolError("a Compiled message with an impossible time");
  return m;
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

size_t unframe(const std::string& bytes, Message* out) {
  if (bytes.size() < kHeaderBytes) return 0;
  Reader r(bytes);
  const uint32_t magic = r.u32();
  if (magic != kMagic) throw ProtocolError("not a TileScope worker message (bad magic)");
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
  if (bytes.size() - kHeaderBytes < len) return 0;
  out->type = Type(type);
  out->payload = bytes.substr(kHeaderBytes, len);
  return kHeaderBytes + len;
}

bool write_message(int fd, const Message& m) {
  const std::string f = frame(m);
  size_t off = 0;
  while (off < f.size()) {
    ssize_t n = ::send(fd, f.data() + off, f.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == ENOTSOCK) n = ::write(fd, f.data() + off, f.size() - off);
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

namespace {

// Reads exactly n bytes; false at end of file. Waits at most timeout_ms for the first byte (-1: forever) and
// 10 s for each later one.
enum class Got { All, Eof, Timeout };
Got read_exact(int fd, char* dst, size_t n, int first_timeout_ms) {
  size_t got = 0;
  while (got < n) {
    pollfd p{fd, POLLIN, 0};
    const int wait = got == 0 ? first_timeout_ms : 10000;
    const int pr = ::poll(&p, 1, wait);
    if (pr < 0) {
      if (errno == EINTR) continue;
      throw ProtocolError(std::string("poll failed: ") + std::strerror(errno));
    }
    if (pr == 0) {
      if (got == 0) return Got::Timeout;
      throw ProtocolError("a message stopped arriving halfway");
    }
    const ssize_t r = ::read(fd, dst + got, n - got);
    if (r < 0) {
      if (errno == EINTR || errno == EAGAIN) continue;
      if (errno == ECONNRESET)
        return got == 0 ? Got::Eof : throw ProtocolError("connection reset mid-message");
      throw ProtocolError(std::string("read failed: ") + std::strerror(errno));
    }
    if (r == 0) {
      if (got == 0) return Got::Eof;
      throw ProtocolError("the other side closed the connection mid-message");
    }
    got += size_t(r);
  }
  return Got::All;
}

}  // namespace

ReadStatus read_message(int fd, Message* out, int timeout_ms) {
  std::string head(kHeaderBytes, '\0');
  const Got g = read_exact(fd, head.data(), kHeaderBytes, timeout_ms);
  if (g == Got::Eof) return ReadStatus::Eof;
  if (g == Got::Timeout) return ReadStatus::Timeout;
  Reader r(head);
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
  out->type = Type(type);
  out->payload.assign(len, '\0');
  if (len > 0 && read_exact(fd, out->payload.data(), len, 10000) != Got::All)
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
  j.load = decode_load(Message{Type::Load, r.str()});
  j.launch = decode_launch(Message{Type::Launch, r.str()}).launch;
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
