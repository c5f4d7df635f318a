#pragma once
// [SECTION] The messages between TileScope and its kernel worker (`tilescope worker`) or its compiler
// (`tilescope compiler`, NVRTC in a process of its own), over a socket pair.
// Every message is a frame: a 12-byte header (magic "TSWK", protocol version, type, payload length) and a
// payload of little-endian fields (integers, doubles, length-prefixed strings). Both sides check every frame:
// a wrong magic or version, an unknown type, a payload over kMaxPayload, a truncated or over-long field is a
// ProtocolError, never a crash or a read past the end. The CUDA IPC handles travel as 64 opaque bytes.
// Plain C++ and POSIX (no CUDA): the app side and the worker side share it, and the unit tests check it.
#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "core/engine/measure.hpp"
#include "core/user_kernel/user_kernel.hpp"

namespace ts::wire {

inline constexpr uint32_t kMagic = 0x4b575354;  // "TSWK" in little-endian bytes
// 2: changing inputs (Inputs, LaunchSpec::input_set, MeasureMsg::input_sets, MeasuredMsg::last_input_set)
// 3: short launches timed in batches (the policy's min_sample_ms, MeasuredMsg's launches per sample)
inline constexpr uint16_t kVersion = 3;
inline constexpr int32_t kMaxInputSets = 16;  // input sets of one run (MeasurePolicy::kChangingInputSets)
inline constexpr uint32_t kMaxPayload = 64u << 20;  // a cubin is the largest thing sent
inline constexpr size_t kHeaderBytes = 12;

class ProtocolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Type : uint16_t {
  Hello = 1,       // worker -> app, once: HelloMsg
  Load,            // app -> worker: LoadMsg          -> Loaded | Error
  Loaded,          // LoadedMsg
  Begin,           // app -> worker: BeginMsg         -> Ok | Error
  Launch,          // app -> worker: LaunchMsg        -> Launched | Error
  Launched,        // LaunchedMsg
  Measure,         // app -> worker: MeasureMsg       -> Progress* then Measured | Error
  Progress,        // ProgressMsg
  Measured,        // MeasuredMsg
  Occupancy,       // app -> worker: OccupancyMsg     -> OccupancyReply | Error
  OccupancyReply,  // OccupancyReplyMsg
  End,             // app -> worker: (empty)          -> Ok
  Ok,              // (empty)
  Cancel,          // app -> worker, any time: stop the measurement in flight (it answers Error{Cancelled})
  Error,           // ErrorMsg
  Shutdown,        // app -> worker: exit
  Compile,         // app -> compiler, once: CompileMsg   -> Compiled | Error
  Compiled,        // CompiledMsg
  Inputs,          // app -> worker: InputsMsg        -> Ok | Error
  Last = Inputs
};
const char* to_string(Type t);

struct Message {
  Type type = Type::Ok;
  std::string payload;
};

// [SECTION] Fields.
class Writer {
 public:
  void u8(uint8_t v) { raw(&v, 1); }
  void u32(uint32_t v);
  void i32(int32_t v) { u32(uint32_t(v)); }
  void u64(uint64_t v);
  void i64(int64_t v) { u64(uint64_t(v)); }
  void f64(double v);
  void str(const std::string& s);
  std::string take() { return std::move(m_out); }

 private:
  void raw(const void* p, size_t n);
  std::string m_out;
};

class Reader {
 public:
  explicit Reader(const std::string& payload) : m_p(payload) {}
  uint8_t u8();
  uint32_t u32();
  int32_t i32() { return int32_t(u32()); }
  uint64_t u64();
  int64_t i64() { return int64_t(u64()); }
  double f64();
  std::string str(size_t max_bytes = kMaxPayload);
  // A count of elements that follow, each at least `min_bytes` long: refused when the rest cannot hold them.
  uint32_t count(size_t min_bytes);
  void done() const;  // throws when bytes are left over

 private:
  void need(size_t n) const;
  const std::string& m_p;
  size_t m_at = 0;
};

// [SECTION] The messages. Each lists its fields once, in wire order (fields(io, m)): encode() walks the list
// writing, decode<M>() walks it reading, with the limits a reader holds each field to (a string's longest
// length, a list's longest count and the fewest bytes an element takes). A message with a check() has it run
// by decode<M>() on what the fields say together.
using IpcHandle = std::array<char, 64>;  // cudaIpcMemHandle_t, opaque

struct HelloMsg {
  static constexpr Type kType = Type::Hello;
  uint32_t protocol = kVersion;
  int32_t pid = 0;
  int32_t device = 0;
  std::string device_name;
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    io.u32(m.protocol);
    io.i32(m.pid);
    io.i32(m.device);
    io.str(m.device_name, 1024);
  }
};

struct LoadMsg {
  static constexpr Type kType = Type::Load;
  std::string cubin, name;                // the plain build and its lowered name
  std::string traced_cubin, traced_name;  // empty: no traced build
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    io.str(m.cubin);
    io.str(m.name, 4096);
    io.str(m.traced_cubin);
    io.str(m.traced_name, 4096);
  }
  void check() const;
};

struct FuncAttrs {  // cudaFuncGetAttributes of a loaded kernel
  int32_t regs = 0, static_smem = 0, local_bytes = 0, max_threads = 0, const_bytes = 0, max_dynamic_smem = 0;
  int32_t binary_version = 0;
  template <class IO, class M>
  static void fields(IO& io, M& a) {
    for (auto* v : {&a.regs, &a.static_smem, &a.local_bytes, &a.max_threads, &a.const_bytes,
                    &a.max_dynamic_smem, &a.binary_version})
      io.i32(*v);
  }
};

struct LoadedMsg {
  static constexpr Type kType = Type::Loaded;
  FuncAttrs plain;
  bool has_traced = false;
  FuncAttrs traced;
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    FuncAttrs::fields(io, m.plain);
    io.flag(m.has_traced);
    FuncAttrs::fields(io, m.traced);
  }
};

struct BeginMsg {
  static constexpr Type kType = Type::Begin;
  int64_t m = 0, n = 0, k = 0;
  IpcHandle a{}, b{}, c{};  // the app's A and B (copied into the worker's own buffers) and C (written)
  template <class IO, class M>
  static void fields(IO& io, M& msg) {
    io.i64(msg.m);
    io.i64(msg.n);
    io.i64(msg.k);
    io.handle(msg.a);
    io.handle(msg.b);
    io.handle(msg.c);
  }
  void check() const;
};

struct LaunchSpec {
  bool traced = false;
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t smem = 0;
  std::vector<KernelArg> args;
  bool poison_c = false;  // fill C with NaN bytes (0xff) first, so elements the kernel skips show
  IpcHandle trace{};      // traced: the app's record buffer (3 x u64 per block)
  int32_t input_set = 0;  // the A and B the kernel gets: 0 the run's own (Begin), i >= 1 Inputs' set i
  template <class IO, class M>
  static void fields(IO& io, M& l) {
    io.flag(l.traced);
    for (auto& v : l.grid) io.i64(v);
    for (auto& v : l.block) io.i64(v);
    io.i64(l.smem);
    io.list(l.args, 10, 256, "a kernel with too many parameters", [](auto& each, auto& a) {
      each.enumeration(a.type, ParamType::F32Ptr, ParamType::Unsupported, "argument type");
      each.enumeration(a.role, ParamRole::A, ParamRole::Unmapped, "argument role");
      each.i64(a.value);
    });
    io.flag(l.poison_c);
    io.handle(l.trace);
    io.i32(l.input_set);
  }
  void check() const;
};

// Changing inputs: the app's other input sets (1, 2, ...; set 0 is Begin's A and B), each copied into the
// worker's own buffers as Begin's are. Replaces the sets of an earlier Inputs; End lets go of them.
struct InputsMsg {
  static constexpr Type kType = Type::Inputs;
  std::vector<std::pair<IpcHandle, IpcHandle>> sets;  // A and B of sets 1, 2, ...
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    io.list(m.sets, 128, uint32_t(kMaxInputSets - 1), "an Inputs message with too many sets",
            [](auto& each, auto& ab) {
              each.handle(ab.first);
              each.handle(ab.second);
            });
  }
};

// A measuring policy on the wire (measure.hpp), checked by validate_policy when read.
template <class IO, class P>
void policy_fields(IO& io, P& p) {
  io.str(p.name, 64);
  io.i32(p.warmup_launches);
  io.f64(p.warmup_seconds);
  io.i32(p.min_samples);
  io.f64(p.min_seconds);
  io.f64(p.max_noise);
  io.f64(p.max_seconds);
  io.i32(p.max_samples);
  io.flag(p.cold_l2);
  io.flag(p.time_failed);
  io.f64(p.min_sample_ms);
}

struct LaunchMsg {
  static constexpr Type kType = Type::Launch;
  LaunchSpec launch;
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    LaunchSpec::fields(io, m.launch);
  }
  void check() const { launch.check(); }
};
struct LaunchedMsg {
  static constexpr Type kType = Type::Launched;
  double ms = 0;  // cudaEvent time of the launch
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    io.f64(m.ms);
  }
};

struct MeasureMsg {
  static constexpr Type kType = Type::Measure;
  LaunchSpec launch;
  MeasurePolicy policy;
  int32_t already_warm = 0;
  int64_t l2_bytes = 0;    // for a cold-cache policy's flush buffer
  int32_t input_sets = 1;  // > 1: changing inputs, each launch on the next set (measure_changing)
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    LaunchSpec::fields(io, m.launch);
    policy_fields(io, m.policy);
    io.i32(m.already_warm);
    io.i64(m.l2_bytes);
    io.i32(m.input_sets);
  }
  void check() const;
};
struct ProgressMsg {
  static constexpr Type kType = Type::Progress;
  int32_t launches = 0;  // done so far in this measurement
  double last_ms = 0;  // the longest wait between two Progress messages so far: a launch, or a batch of them
                       // back to back (0: untimed)
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    io.i32(m.launches);
    io.f64(m.last_ms);
  }
};
struct MeasuredMsg {
  static constexpr Type kType = Type::Measured;
  Measurement m;  // its samples, stop reason, warm-ups, wall time and clocks; the statistics follow from them
  template <class IO, class M>
  static void fields(IO& io, M& mm) {
    io.list(mm.m.samples_ms, 8, UINT32_MAX, "", [](auto& each, auto& v) { each.f64(v); });
    io.enumeration(mm.m.stop, StopReason::Continue, StopReason::CountReached, "stop reason");
    io.i32(mm.m.warmups);
    io.f64(mm.m.wall_s);
    io.list(mm.m.clocks, 12, UINT32_MAX, "", [](auto& each, auto& c) {
      each.f64(c.sm_mhz);
      each.str(c.throttle, 4096);
    });
    io.i32(mm.m.last_input_set);
    io.i32(mm.m.launches_per_sample);
  }
  void check();  // every sample a time; fills the statistics
};

struct OccupancyMsg {
  static constexpr Type kType = Type::Occupancy;
  bool traced = false;
  int32_t threads = 0;
  int64_t smem = 0;
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    io.flag(m.traced);
    io.i32(m.threads);
    io.i64(m.smem);
  }
  void check() const;
};
struct OccupancyReplyMsg {
  static constexpr Type kType = Type::OccupancyReply;
  FuncAttrs attrs;
  int32_t blocks_per_sm = 0;  // cudaOccupancyMaxActiveBlocksPerMultiprocessor
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    FuncAttrs::fields(io, m.attrs);
    io.i32(m.blocks_per_sm);
  }
};

enum class ErrorKind : uint8_t {
  Fault = 1,  // the kernel broke the worker's context (illegal address, trap, ...): the worker exits
  Refused,    // the launch or load was refused (configuration, resources): the worker lives on
  Cancelled,  // the measurement was cancelled
  Protocol,   // a message made no sense
  Other,
};
struct ErrorMsg {
  static constexpr Type kType = Type::Error;
  ErrorKind kind = ErrorKind::Other;
  int32_t cuda_code = 0;
  std::string code_name;  // e.g. "cudaErrorIllegalAddress"
  std::string message;    // in words, including what was being done
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    io.enumeration(m.kind, ErrorKind::Fault, ErrorKind::Other, "error kind");
    io.i32(m.cuda_code);
    io.str(m.code_name, 256);
    io.str(m.message, 1 << 16);
  }
};

// The compiler's one request: what NVRTC gets (the options complete, as the app made them) and the limits
// the compiler process applies to itself.
struct CompileMsg {
  static constexpr Type kType = Type::Compile;
  std::string source, label, name_expression;
  int32_t arch = 0;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;  // {name as #include writes it, content}
  double time_limit_s = 0;    // the compiler exits when it is not done by then (the app kills it too)
  uint64_t memory_limit = 0;  // bytes of address space (0: none)
  uint64_t stack_bytes = 0;   // the stack of the thread that runs NVRTC
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    io.str(m.source);
    io.str(m.label, 4096);
    io.str(m.name_expression);
    io.i32(m.arch);
    io.list(m.options, 4, 4096, "a Compile message with too many options",
            [](auto& each, auto& o) { each.str(o, 1 << 16); });
    io.list(m.headers, 8, 4096, "a Compile message with too many headers", [](auto& each, auto& h) {
      each.str(h.first, 4096);
      each.str(h.second);
    });
    io.f64(m.time_limit_s);
    io.u64(m.memory_limit);
    io.u64(m.stack_bytes);
  }
  void check() const;
};
struct CompiledMsg {
  static constexpr Type kType = Type::Compiled;
  bool ok = false;     // nvrtcCompileProgram succeeded
  std::string result;  // NVRTC's result in words (nvrtcGetErrorString)
  std::string log, lowered_name, cubin, ptx;
  double compile_s = 0;
  template <class IO, class M>
  static void fields(IO& io, M& m) {
    io.flag(m.ok);
    io.str(m.result, 4096);
    io.str(m.log);
    io.str(m.lowered_name);
    io.str(m.cubin);
    io.str(m.ptx);
    io.f64(m.compile_s);
  }
  void check() const;
};

// Every message's encoder and decoder, from its one field list (worker_protocol.cpp): encode(m), and
// decode<M>(msg), which checks the message's type, each field's limits and what the fields say together,
// and throws ProtocolError on any malformed payload. Defined for the messages above.
template <class M>
Message encode(const M& m);
template <class M>
M decode(const Message& msg);
Message empty(Type t);

// [SECTION] Frames on a file descriptor (a socket or a pipe).
std::string frame(const Message& m);
// Parses one frame from the front of `bytes`: returns the bytes it took (0: incomplete). Throws
// ProtocolError.
size_t unframe(const std::string& bytes, Message* out);

// Writes a whole frame (EINTR-safe; no SIGPIPE on a socket). False when the other side is gone.
bool write_message(int fd, const Message& m);
// The bytes of any frame, written whole (the remote engine's frames too, core/remote/protocol.hpp).
bool write_bytes(int fd, const std::string& bytes);
// Reads exactly n bytes: waits at most first_timeout_ms for the first (-1: forever) and later_timeout_ms for
// each later one (a frame that started must finish). Eof only before the first byte; throws ProtocolError for
// a frame cut short or a read error.
enum class ReadExact { All, Eof, Timeout };
ReadExact read_exact(int fd, char* dst, size_t n, int first_timeout_ms, int later_timeout_ms);
enum class ReadStatus { Ok, Eof, Timeout };
// Reads one whole frame, waiting at most timeout_ms for its first byte (-1: forever); the rest of a frame
// that has started must follow within 10 s. Throws ProtocolError for a malformed frame or a read error.
ReadStatus read_message(int fd, Message* out, int timeout_ms);

}  // namespace ts::wire

namespace ts {

// [SECTION] A job file (`tilescope worker --job FILE`): the module, the launch and the shape of one launch
// (what compute-sanitizer runs for "Check with compute-sanitizer").
struct WorkerJob {
  wire::LoadMsg load;
  wire::LaunchSpec launch;
  int64_t m = 0, n = 0, k = 0;
  uint64_t seed = 1;
};
std::string encode_worker_job(const WorkerJob& j);
WorkerJob decode_worker_job(const std::string& bytes);  // throws wire::ProtocolError

}  // namespace ts
