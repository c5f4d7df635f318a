#pragma once
// [SECTION] The remote engine's protocol: what a window (or a command line) and `tilescope serve` say to each
// other over the engine command's standard input and output (`ssh gpu-box tilescope serve`, `srun ...
// tilescope serve`: any command whose stdin and stdout reach a serve process).
//
// Frames, like the kernel worker's (worker_protocol.hpp): a 20-byte header (magic "TSEN", protocol version,
// type, request id, payload length) and a payload of little-endian fields. Requests carry ids, so several can
// be in flight (a run, a hover value, a heatmap) and their answers come back in any order; a Cancel frame
// names the id it cancels. Every frame is bounded (kMaxPayload) and every field checked when read: a bad
// frame is a ProtocolError, never a crash or a read past the end.
//
// Handshake: each side sends Hello first. Its first two fields never change between versions (the protocol
// number and the TileScope version), so a peer of another version is refused with both versions named
// (IncompatiblePeer). The engine's Hello describes it: the backend's kind, device, capacity, policies and
// kernel list, so the window's RemoteBackend answers those without a round trip.
//
// Records travel with the same field lists as a session file (record_fields.hpp, walked by
// binary_fields.hpp): one list per type, with its limits and checks. Matrix values travel compressed (zstd),
// heatmaps reduced to the view's pixels, whole matrices only when asked (inputs opened locally, C saved), in
// MatrixPart frames of at most kPartElements values. Plain C++ and POSIX (no CUDA): both sides and the unit
// tests share it.
#include <csignal>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/engine/backend.hpp"
#include "core/io/worker_protocol.hpp"
#include "core/user_kernel/kernel_workshop.hpp"

namespace ts::remote {

using wire::ProtocolError;

inline constexpr uint32_t kMagic = 0x4e455354;  // "TSEN" in little-endian bytes
// 2: a person's kernels (the workshop's messages); 3: tile geometry and the trace's k_step; 4: short launches
// timed in batches (the policy's min_sample_ms, a result's launches per sample), the trace's k_segments and K
// (stream-K), a result's impossible flag; 5: the policy's changing inputs and a result's timing on them; 6:
// the occupancy report's function (the build-time table's row is found by it), a launch's k_segments; 7: the
// occupancy report's and a measured point's k_segments (a grid not in waves)
inline constexpr uint16_t kProtocol = 7;
inline constexpr uint32_t kMaxPayload = 64u << 20;
inline constexpr size_t kHeaderBytes = 20;
inline constexpr int64_t kPartElements = int64_t(4) << 20;  // floats per MatrixPart (16 MiB uncompressed)
inline constexpr uint32_t kMaxKernels = 4096;
inline constexpr int64_t kMaxMatrixElements = int64_t(1) << 32;  // a matrix that travels (16 GiB)

// The peer speaks another protocol version: both versions named.
class IncompatiblePeer : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Type : uint16_t {
  Hello = 1,  // both ways, first: HelloMsg
  Error,      // engine -> window, the answer to any request that failed: ErrorMsg
  Run,        // RunMsg (after the inputs' MatrixPart frames, same id) -> [MatrixPart C...] RunDone | Error
  RunDone,    // RunDoneMsg
  Validate,   // ValidateMsg -> Validated | Error
  Validated,  // ValidatedMsg
  Cancel,     // window -> engine: stop request `id` (it answers Error{Cancelled}); empty payload
  Bandwidth,  // (empty) -> BandwidthDone | Error
  BandwidthDone,    // BandwidthDoneMsg
  LaunchInfo,       // LaunchInfoMsg -> LaunchInfoReply | Error
  LaunchInfoReply,  // LaunchInfoReplyMsg
  Reduce,           // ReduceMsg -> Reduced | Error
  Reduced,          // ReducedMsg
  Element,          // ElementMsg -> ElementValue | Error
  ElementValue,     // ElementValueMsg
  CopyMatrix,       // CopyMatrixMsg -> MatrixPart... (the last one completes it) | Error
  MatrixPart,       // MatrixPartMsg: a piece of a matrix, either way
  ReleaseStore,     // ReleaseStoreMsg: the window holds no view of that run's matrices any more; no answer
  Ping,             // PingMsg -> Pong (the round trip, and the engine's incidents)
  Pong,             // PongMsg
  Publish,          // PublishMsg -> Published | Error (answered in the order the frames came)
  Published,        // PublishedMsg
  Withdraw,         // WithdrawMsg; no answer
  Build,            // BuildMsg -> Built | Error
  Built,            // BuiltMsg
  Sanitize,         // SanitizeMsg -> Sanitized | Error
  Sanitized,        // SanitizedMsg
  Sass,             // SassMsg -> SassReply | Error (engines whose Hello has the capability "sass")
  SassReply,        // SassReplyMsg
  Last = SassReply
};
const char* to_string(Type t);

struct Frame {
  Type type = Type::Ping;
  uint64_t id = 0;  // the request it is or answers (0: none)
  uint16_t version = kProtocol;
  std::string payload;
};

// [SECTION] Messages.
struct WorkshopInfo {    // what the engine's kernel workshop can do (kernel_workshop.hpp)
  bool present = false;  // its backend takes a person's kernels
  bool can_build = false;
  std::string build_why;  // why it cannot build
  std::string compiler;
  std::vector<int> architectures;
  int32_t device_arch = 0;
  bool can_sanitize = false;
  std::string sanitize_why;
};

struct EngineInfo {  // what the engine's Hello says about it
  std::string kind, device_name, version_info;
  int32_t cuda_device = -1;
  DeviceInfo device;
  Capacity capacity;
  MeasurePolicy default_policy, bench_policy;
  std::vector<KernelInfo> kernels;  // cpu is never set here: KernelInfo::cpu_elsewhere says it has one
  WorkshopInfo workshop;
};

// A person's kernel as it travels: what the engine understands it from (KernelWorkshop::understand), the
// same text, kernel, corrections and headers that made it where the file is, so the engine's kernel is the
// same (id, entry, builds, lines of the compiler's messages). The headers were read where the file is: the
// engine reads no file of the window's machine.
struct KernelText {
  KernelSource source;
  std::string kernel;  // the __global__ function's name
  UserKernelSpec spec;
  std::vector<IncludedHeader> headers;
};
KernelText kernel_text(const UserKernel& k);

struct HelloMsg {
  static constexpr Type kType = Type::Hello;
  uint32_t protocol = kProtocol;
  std::string tilescope, commit;  // the sender's version and commit
  std::string role;               // "engine" or "window"
  std::vector<std::string> capabilities;
  bool has_engine = false;  // role engine: `engine` below
  EngineInfo engine;
};

enum class ErrorKind : uint8_t {
  Validation = 1,  // the request was refused before running (ValidationError): exit code 2
  Cancelled,
  Runtime,   // the run or the device failed (a CUDA error, a fault): the message says which
  Protocol,  // the request made no sense
  UnknownStore,
};
struct ErrorMsg {
  static constexpr Type kType = Type::Error;
  ErrorKind kind = ErrorKind::Runtime;
  std::string message;
};

struct RunMsg {
  static constexpr Type kType = Type::Run;
  RunRequest request;  // a and b are not in it: they travel as MatrixPart frames first (given_inputs)
  bool given_inputs = false;
};

struct StoreShape {         // a run's matrices kept in the engine
  uint64_t id = 0;          // 0: none kept
  int64_t dims[4][2] = {};  // rows, cols of A, B, C, Error
};

struct RunDoneMsg {
  static constexpr Type kType = Type::RunDone;
  RunResult result;  // c and store are not in it: C travels as MatrixPart frames first (has_c)
  bool has_c = false;
  StoreShape store;
};

struct ValidateMsg {
  static constexpr Type kType = Type::Validate;
  RunRequest request;
  bool tile_given = false;
  bool given_inputs = false;  // shapes of the inputs the window holds (they do not travel to be validated)
  int64_t a_rows = 0, a_cols = 0, b_rows = 0, b_cols = 0;
};
struct ValidatedMsg {
  static constexpr Type kType = Type::Validated;
  ProblemSpec spec;  // as validate() left it (a tile-less kernel's tile set to 0)
};

struct BandwidthDoneMsg {
  static constexpr Type kType = Type::BandwidthDone;
  BandwidthResult result;
};

struct LaunchInfoMsg {
  static constexpr Type kType = Type::LaunchInfo;
  ProblemSpec spec;
};
struct LaunchInfoReplyMsg {
  static constexpr Type kType = Type::LaunchInfoReply;
  bool has = false;
  LaunchInfo info;
};

struct ReduceMsg {
  static constexpr Type kType = Type::Reduce;
  uint64_t store = 0;
  MatrixId matrix = MatrixId::A;
  LodRegion region;
  Reduce mode = Reduce::Mean;
};
struct ReducedMsg {
  static constexpr Type kType = Type::Reduced;
  ValueRange range;
  int32_t w = 0, h = 0;
  std::string values;  // w * h floats, zstd
};

struct ElementMsg {
  static constexpr Type kType = Type::Element;
  uint64_t store = 0;
  MatrixId matrix = MatrixId::A;
  int64_t row = 0, col = 0;
};
struct ElementValueMsg {
  static constexpr Type kType = Type::ElementValue;
  float value = 0;
};

struct CopyMatrixMsg {
  static constexpr Type kType = Type::CopyMatrix;
  uint64_t store = 0;
  MatrixId matrix = MatrixId::C;
};

struct MatrixPartMsg {
  static constexpr Type kType = Type::MatrixPart;
  MatrixId which = MatrixId::A;
  int64_t rows = 0, cols = 0;
  int64_t offset = 0, count = 0;  // elements, row-major
  std::string values;             // count floats, zstd
  bool last() const { return offset + count == rows * cols; }
};

struct ReleaseStoreMsg {
  static constexpr Type kType = Type::ReleaseStore;
  uint64_t store = 0;
};

struct PingMsg {
  static constexpr Type kType = Type::Ping;
  double sent = 0;  // the window's clock, echoed
};
struct PongMsg {
  static constexpr Type kType = Type::Pong;
  double sent = 0;
  uint64_t incidents = 0;
  std::string latest_incident;
};

// A person's kernel registered in the engine's workshop (the engine understands it and publishes it, so its
// backend runs it in its own worker); Published says what the engine's kernel list now holds for it. A
// kernel the engine refused is refused by name in every later request for it, with the reason.
struct PublishMsg {
  static constexpr Type kType = Type::Publish;
  KernelText kernel;
};
struct PublishedMsg {
  static constexpr Type kType = Type::Published;
  KernelInfo info;
};
struct WithdrawMsg {
  static constexpr Type kType = Type::Withdraw;
  std::string id;  // "yours:<name>"
};

// One plain build in the engine's workshop (KernelWorkshop::build). A build that failed (CompileError)
// comes back as Built with `failed`: the module (log, diagnostics at their lines) and the message.
struct BuildMsg {
  static constexpr Type kType = Type::Build;
  KernelText kernel;
  int32_t tile = 0, arch = 0;
  ExprVars sizes;
};
struct BuiltMsg {
  static constexpr Type kType = Type::Built;
  CompiledModule module;
  bool failed = false;
  std::string error;       // CompileError's message
  int32_t first_line = 1;  // CompileError::first_line
};

// compute-sanitizer on the engine's GPU (KernelWorkshop::sanitize).
struct SanitizeMsg {
  static constexpr Type kType = Type::Sanitize;
  KernelText kernel;
  ProblemSpec spec;
  std::vector<std::string> tools;
  double timeout_s = 0;
};
struct SanitizedMsg {
  static constexpr Type kType = Type::Sanitized;
  std::vector<SanitizerReport> reports;
};

// The machine code of a kernel at a tile (Backend::sass_listing).
inline constexpr size_t kMaxSassText = size_t(32) << 20;  // a listing's text (a few hundred KiB is usual)
struct SassMsg {
  static constexpr Type kType = Type::Sass;
  std::string kernel;
  int32_t tile = 0;
  int32_t arch = 0;  // 0: the engine's device, else its newest
};
struct SassReplyMsg {
  static constexpr Type kType = Type::SassReply;
  SassListing listing;
};

// encode(m) and decode<M>(frame): every message's one field list (protocol.cpp). decode checks the frame's
// type, every field's limits and what the fields say together, and throws ProtocolError (IncompatiblePeer
// for a Hello of another protocol version).
template <class M>
Frame encode(const M& m, uint64_t id);
template <class M>
M decode(const Frame& f);
Frame empty(Type t, uint64_t id);

// A matrix cut into MatrixPart frames (compressed), and put back together from them.
std::vector<Frame> matrix_parts(const HostMatrix& m, MatrixId which, uint64_t id);
class MatrixAssembler {
 public:
  // Adds a part: throws ProtocolError for a part that does not continue the matrix (another shape, a gap,
  // an overlap). Returns true when the matrix is complete.
  bool add(const MatrixPartMsg& p);
  bool complete() const { return m_m && m_next == m_m->rows * m_m->cols; }
  std::shared_ptr<HostMatrix> take();

 private:
  std::shared_ptr<HostMatrix> m_m;
  int64_t m_next = 0;
};

// Values of a reduction, compressed and back (w * h floats).
std::string pack_floats(const float* v, size_t n);
void unpack_floats(const std::string& packed, float* out, size_t n);  // throws ProtocolError

// [SECTION] Frames on file descriptors (pipes or sockets).
std::string frame_bytes(const Frame& f);
// Parses one frame from the front of `bytes`: returns the bytes it took (0: incomplete). Throws
// ProtocolError.
size_t unframe(const std::string& bytes, Frame* out);
bool write_frame(int fd, const Frame& f);  // false when the other side is gone
// A write to a pipe whose reader is gone raises SIGPIPE, which would end the program: while one of these
// lives, SIGPIPE is blocked in this thread, and one a write left pending is taken when it goes, so the write
// reports EPIPE instead.
class NoSigpipe {
 public:
  NoSigpipe();
  ~NoSigpipe();
  NoSigpipe(const NoSigpipe&) = delete;
  NoSigpipe& operator=(const NoSigpipe&) = delete;

 private:
  sigset_t m_pipe, m_old;
  bool m_was_pending = false;
};
// Reads a whole frame, waiting at most timeout_ms for its first byte (-1: forever); the rest of a started
// frame must follow within 30 s (a slow link carries 64 MiB in that time at 20 Mbit/s). `arrived`, when
// given, is told the bytes as they come (the header, then the payload in pieces of at most kReadPieceBytes),
// so a reader sees a long frame moving. Throws ProtocolError.
inline constexpr size_t kReadPieceBytes = 64 << 10;
wire::ReadStatus read_frame(int fd, Frame* out, int timeout_ms,
                            const std::function<void(size_t bytes)>& arrived = {});

}  // namespace ts::remote
