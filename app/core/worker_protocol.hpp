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

#include "measure.hpp"
#include "user_kernel.hpp"

namespace ts::wire {

inline constexpr uint32_t kMagic = 0x4b575354;  // "TSWK" in little-endian bytes
inline constexpr uint16_t kVersion = 1;
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
  Last = Compiled
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

// [SECTION] The messages.
using IpcHandle = std::array<char, 64>;  // cudaIpcMemHandle_t, opaque

struct HelloMsg {
  uint32_t protocol = kVersion;
  int32_t pid = 0;
  int32_t device = 0;
  std::string device_name;
};

struct LoadMsg {
  std::string cubin, name;                // the plain build and its lowered name
  std::string traced_cubin, traced_name;  // empty: no traced build
};

struct FuncAttrs {  // cudaFuncGetAttributes of a loaded kernel
  int32_t regs = 0, static_smem = 0, local_bytes = 0, max_threads = 0, const_bytes = 0, max_dynamic_smem = 0;
  int32_t binary_version = 0;
};

struct LoadedMsg {
  FuncAttrs plain;
  bool has_traced = false;
  FuncAttrs traced;
};

struct BeginMsg {
  int64_t m = 0, n = 0, k = 0;
  IpcHandle a{}, b{}, c{};  // the app's A and B (copied into the worker's own buffers) and C (written)
};

struct LaunchSpec {
  bool traced = false;
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t smem = 0;
  std::vector<KernelArg> args;
  bool poison_c = false;  // fill C with NaN bytes (0xff) first, so elements the kernel skips show
  IpcHandle trace{};      // traced: the app's record buffer (3 x u64 per block)
};

struct LaunchMsg {
  LaunchSpec launch;
};
struct LaunchedMsg {
  double ms = 0;  // cudaEvent time of the launch
};

struct MeasureMsg {
  LaunchSpec launch;
  MeasurePolicy policy;
  int32_t already_warm = 0;
  int64_t l2_bytes = 0;  // for a cold-cache policy's flush buffer
};
struct ProgressMsg {
  int32_t launches = 0;  // done so far in this measurement
  double last_ms = 0;    // the longest launch seen so far (0: untimed)
};
struct MeasuredMsg {
  Measurement m;
};

struct OccupancyMsg {
  bool traced = false;
  int32_t threads = 0;
  int64_t smem = 0;
};
struct OccupancyReplyMsg {
  FuncAttrs attrs;
  int32_t blocks_per_sm = 0;  // cudaOccupancyMaxActiveBlocksPerMultiprocessor
};

enum class ErrorKind : uint8_t {
  Fault = 1,  // the kernel broke the worker's context (illegal address, trap, ...): the worker exits
  Refused,    // the launch or load was refused (configuration, resources): the worker lives on
  Cancelled,  // the measurement was cancelled
  Protocol,   // a message made no sense
  Other,
};
struct ErrorMsg {
  ErrorKind kind = ErrorKind::Other;
  int32_t cuda_code = 0;
  std::string code_name;  // e.g. "cudaErrorIllegalAddress"
  std::string message;    // in words, including what was being done
};

// The compiler's one request: what NVRTC gets (the options complete, as the app made them) and the limits
// the compiler process applies to itself.
struct CompileMsg {
  std::string source, label, name_expression;
  int32_t arch = 0;
  std::vector<std::string> options;
  std::vector<std::pair<std::string, std::string>> headers;  // {name as #include writes it, content}
  double time_limit_s = 0;    // the compiler exits when it is not done by then (the app kills it too)
  uint64_t memory_limit = 0;  // bytes of address space (0: none)
  uint64_t stack_bytes = 0;   // the stack of the thread that runs NVRTC
};
struct CompiledMsg {
  bool ok = false;     // nvrtcCompileProgram succeeded
  std::string result;  // NVRTC's result in words (nvrtcGetErrorString)
  std::string log, lowered_name, cubin, ptx;
  double compile_s = 0;
};

// Encoders and decoders (decoders throw ProtocolError on any malformed payload).
Message encode(const HelloMsg& m);
Message encode(const LoadMsg& m);
Message encode(const LoadedMsg& m);
Message encode(const BeginMsg& m);
Message encode(const LaunchMsg& m);
Message encode(const LaunchedMsg& m);
Message encode(const MeasureMsg& m);
Message encode(const ProgressMsg& m);
Message encode(const MeasuredMsg& m);
Message encode(const OccupancyMsg& m);
Message encode(const OccupancyReplyMsg& m);
Message encode(const ErrorMsg& m);
Message encode(const CompileMsg& m);
Message encode(const CompiledMsg& m);
Message empty(Type t);

HelloMsg decode_hello(const Message& m);
LoadMsg decode_load(const Message& m);
LoadedMsg decode_loaded(const Message& m);
BeginMsg decode_begin(const Message& m);
LaunchMsg decode_launch(const Message& m);
LaunchedMsg decode_launched(const Message& m);
MeasureMsg decode_measure(const Message& m);
ProgressMsg decode_progress(const Message& m);
MeasuredMsg decode_measured(const Message& m);
OccupancyMsg decode_occupancy(const Message& m);
OccupancyReplyMsg decode_occupancy_reply(const Message& m);
ErrorMsg decode_error(const Message& m);
CompileMsg decode_compile(const Message& m);
CompiledMsg decode_compiled(const Message& m);

// [SECTION] Frames on a file descriptor (a socket or a pipe).
std::string frame(const Message& m);
// Parses one frame from the front of `bytes`: returns the bytes it took (0: incomplete). Throws
// ProtocolError.
size_t unframe(const std::string& bytes, Message* out);

// Writes a whole frame (EINTR-safe; no SIGPIPE on a socket). False when the other side is gone.
bool write_message(int fd, const Message& m);
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
