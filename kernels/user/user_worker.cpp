// The kernel worker process (see user_worker.hpp). Everything the person's kernel touches lives here: its
// module, its copies of A and B, its stream and events. The app's side is worker_client.* and user_run.cu.
#include "kernels/user/user_worker.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cuda_runtime.h>

#include "kernels/engine/cuda_check.cuh"
#include "kernels/engine/launch_gate.cuh"
#include "core/engine/input_gen.hpp"
#include "kernels/engine/matrix_ops.cuh"
#include "kernels/engine/nvml.hpp"

namespace ts {

namespace {

using namespace wire;

// Errors that leave the context unusable: after one of them every later CUDA call fails too.
bool sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorMisalignedAddress:
    case cudaErrorIllegalInstruction:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorLaunchTimeout:
    case cudaErrorECCUncorrectable:
    case cudaErrorContextIsDestroyed:
    case cudaErrorUnknown:
      return true;
    default:
      return false;
  }
}

// A CUDA failure, carried to the reply with what was being done.
struct Failure {
  cudaError_t code;
  std::string doing;
};

#define W_CHECK(call, doing)                         \
  do {                                               \
    cudaError_t e_ = (call);                         \
    if (e_ != cudaSuccess) throw Failure{e_, doing}; \
  } while (0)

std::string words(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
      return "the kernel read or wrote an address outside any allocation (an illegal memory access)";
    case cudaErrorMisalignedAddress:
      return "the kernel accessed memory at a misaligned address";
    case cudaErrorLaunchFailure:
      return "the kernel failed while running (an exception on the device)";
    case cudaErrorIllegalInstruction:
      return "the kernel executed an illegal instruction";
    case cudaErrorAssert:
      return "an assert() in the kernel failed";
    case cudaErrorHardwareStackError:
      return "the kernel overflowed its stack (deep recursion or a huge local array)";
    case cudaErrorLaunchOutOfResources:
      return "the launch needs more registers or shared memory than a block may have";
    case cudaErrorInvalidConfiguration:
      return "the launch configuration is invalid (grid, block or shared memory)";
    default:
      return cudaGetErrorString(e);
  }
}

// [SECTION] The worker's state: the loaded module, the run's buffers.
class Worker {
 public:
  Worker(int fd, int device) : m_fd(fd), m_device(device) {}

  // The stream, events and NVML handle (both modes).
  void init();
  int serve();
  // The job mode reuses the same launch code.
  void load(const LoadMsg& m, LoadedMsg* out);
  void own_inputs(int64_t m, int64_t n, int64_t k, uint64_t seed);
  // ms per launch of `count` launches back to back; `next_set`, if given, picks the input set of each of them
  // (changing inputs), else every one reads l.input_set.
  double launch(const LaunchSpec& l, int count = 1, const std::function<int()>& next_set = {});
  cudaStream_t stream() const { return m_stream; }
  // The job mode (one launch under compute-sanitizer, then cudaDeviceReset) times nothing: no gate, whose
  // pinned memory would outlive the context it was allocated in.
  void without_gate() { m_gated = false; }

 private:
  void handle(const Message& m);
  void begin(const BeginMsg& b);
  void inputs(const InputsMsg& in);
  void end();
  Measurement measure(const MeasureMsg& m, const CancelToken& cancel);
  FuncAttrs attrs(const void* f) {
    cudaFuncAttributes a{};
    W_CHECK(cudaFuncGetAttributes(&a, f), "reading the kernel's attributes");
    FuncAttrs r;
    r.regs = a.numRegs;
    r.static_smem = int32_t(a.sharedSizeBytes);
    r.local_bytes = int32_t(a.localSizeBytes);
    r.max_threads = a.maxThreadsPerBlock;
    r.const_bytes = int32_t(a.constSizeBytes);
    r.max_dynamic_smem = a.maxDynamicSharedSizeBytes;
    r.binary_version = a.binaryVersion;
    return r;
  }
  void send(const Message& m) {
    std::lock_guard<std::mutex> lock(m_send);
    if (!write_message(m_fd, m)) throw std::runtime_error("the app went away");
  }
  void reader();

  int m_fd;
  int m_device;
  cudaStream_t m_stream = nullptr;
  cudaEvent_t m_start = nullptr, m_stop = nullptr;
  std::unique_ptr<LaunchGate> m_gate;  // made at the first timed launch
  bool m_gated = true;
  cudaLibrary_t m_lib = nullptr, m_traced_lib = nullptr;
  cudaKernel_t m_kernel = nullptr, m_traced = nullptr;
  LoadMsg m_loaded;  // what is loaded now
  // The run: the app's C (mapped), our own A and B.
  float* m_c = nullptr;
  bool m_c_mapped = false;
  float *m_a = nullptr, *m_b = nullptr;
  // Changing inputs: our own copies of the app's other input sets (1, 2, ...), A and B each.
  std::vector<std::pair<float*, float*>> m_sets;
  int64_t m_m = 0, m_n = 0, m_k = 0;
  std::mutex m_send;
  // Messages from the reader thread; Cancel acts at once.
  std::mutex m_mu;
  std::condition_variable m_cv;
  std::deque<Message> m_inbox;
  bool m_closed = false;
  std::string m_read_error;
  CancelToken m_cancel;
  Nvml m_nvml;
  void* m_nvml_dev = nullptr;
};

void Worker::reader() {
  for (;;) {
    Message m;
    ReadStatus st;
    try {
      st = read_message(m_fd, &m, -1);
    } catch (const ProtocolError& e) {
      std::lock_guard<std::mutex> lock(m_mu);
      m_read_error = e.what();
      m_closed = true;
      m_cv.notify_all();
      return;
    }
    std::lock_guard<std::mutex> lock(m_mu);
    if (st != ReadStatus::Ok) {
      m_closed = true;
      m_cv.notify_all();
      return;
    }
    if (m.type == Type::Cancel) {
      m_cancel.cancel();
      continue;
    }
    m_inbox.push_back(std::move(m));
    m_cv.notify_all();
  }
}

void Worker::load(const LoadMsg& m, LoadedMsg* out) {
  // The same build as the last run's (the usual case): keep it loaded.
  if (m_lib && m.cubin == m_loaded.cubin && m.name == m_loaded.name &&
      m.traced_cubin == m_loaded.traced_cubin && m.traced_name == m_loaded.traced_name) {
    out->plain = attrs(reinterpret_cast<const void*>(m_kernel));
    out->has_traced = m_traced != nullptr;
    if (m_traced) out->traced = attrs(reinterpret_cast<const void*>(m_traced));
    return;
  }
  m_loaded = LoadMsg{};
  if (m_lib) cudaLibraryUnload(m_lib);
  if (m_traced_lib) cudaLibraryUnload(m_traced_lib);
  m_lib = m_traced_lib = nullptr;
  m_kernel = m_traced = nullptr;
  W_CHECK(cudaLibraryLoadData(&m_lib, m.cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
          "loading the compiled kernel");
  W_CHECK(cudaLibraryGetKernel(&m_kernel, m_lib, m.name.c_str()), "finding " + m.name + " in the module");
  out->plain = attrs(reinterpret_cast<const void*>(m_kernel));
  out->has_traced = false;
  if (!m.traced_cubin.empty()) {
    W_CHECK(
        cudaLibraryLoadData(&m_traced_lib, m.traced_cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0),
        "loading the traced kernel");
    W_CHECK(cudaLibraryGetKernel(&m_traced, m_traced_lib, m.traced_name.c_str()),
            "finding the traced kernel");
    out->traced = attrs(reinterpret_cast<const void*>(m_traced));
    out->has_traced = true;
  }
  m_loaded = m;
}

void Worker::begin(const BeginMsg& b) {
  end();
  m_m = b.m;
  m_n = b.n;
  m_k = b.k;
  const size_t a_bytes = size_t(b.m * b.k) * 4, b_bytes = size_t(b.k * b.n) * 4;
  // Our own copies of A and B: the person's kernel gets these, never the app's.
  W_CHECK(cudaMalloc(&m_a, a_bytes), "allocating the worker's copy of A");
  W_CHECK(cudaMalloc(&m_b, b_bytes), "allocating the worker's copy of B");
  for (int i = 0; i < 2; ++i) {
    cudaIpcMemHandle_t h;
    std::memcpy(&h, (i == 0 ? b.a : b.b).data(), sizeof h);
    void* p = nullptr;
    W_CHECK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess), "mapping the app's A and B");
    W_CHECK(cudaMemcpyAsync(i == 0 ? m_a : m_b, p, i == 0 ? a_bytes : b_bytes, cudaMemcpyDeviceToDevice,
                            m_stream),
            "copying A and B");
    W_CHECK(cudaStreamSynchronize(m_stream), "copying A and B");
    W_CHECK(cudaIpcCloseMemHandle(p), "unmapping the app's A and B");
  }
  cudaIpcMemHandle_t hc;
  std::memcpy(&hc, b.c.data(), sizeof hc);
  void* c = nullptr;
  W_CHECK(cudaIpcOpenMemHandle(&c, hc, cudaIpcMemLazyEnablePeerAccess), "mapping the app's C");
  m_c = static_cast<float*>(c);
  m_c_mapped = true;
}

void Worker::inputs(const InputsMsg& in) {
  if (!m_a || !m_c) throw std::runtime_error("input sets before Begin");
  auto free_sets = [&] {
    for (auto& [a, b] : m_sets) {
      if (a) cudaFree(a);
      if (b) cudaFree(b);
    }
    m_sets.clear();
  };
  free_sets();
  const size_t a_bytes = size_t(m_m * m_k) * 4, b_bytes = size_t(m_k * m_n) * 4;
  for (const auto& [ha, hb] : in.sets) {
    m_sets.emplace_back(nullptr, nullptr);
    auto& [a, b] = m_sets.back();
    // Our own copies, as Begin's: the person's kernel gets these, never the app's.
    W_CHECK(cudaMalloc(&a, a_bytes), "allocating the worker's copy of an input set's A");
    W_CHECK(cudaMalloc(&b, b_bytes), "allocating the worker's copy of an input set's B");
    for (int i = 0; i < 2; ++i) {
      cudaIpcMemHandle_t h;
      std::memcpy(&h, (i == 0 ? ha : hb).data(), sizeof h);
      void* p = nullptr;
      W_CHECK(cudaIpcOpenMemHandle(&p, h, cudaIpcMemLazyEnablePeerAccess), "mapping the app's input sets");
      W_CHECK(
          cudaMemcpyAsync(i == 0 ? a : b, p, i == 0 ? a_bytes : b_bytes, cudaMemcpyDeviceToDevice, m_stream),
          "copying an input set");
      W_CHECK(cudaStreamSynchronize(m_stream), "copying an input set");
      W_CHECK(cudaIpcCloseMemHandle(p), "unmapping the app's input sets");
    }
  }
}

void Worker::own_inputs(int64_t m, int64_t n, int64_t k, uint64_t seed) {
  m_m = m;
  m_n = n;
  m_k = k;
  W_CHECK(cudaMalloc(&m_a, size_t(m * k) * 4), "allocating A");
  W_CHECK(cudaMalloc(&m_b, size_t(k * n) * 4), "allocating B");
  W_CHECK(cudaMalloc(reinterpret_cast<void**>(&m_c), size_t(m * n) * 4), "allocating C");
  device_generate(m_a, m, k, GenKind::Random, seed, 0, m_stream);
  device_generate(m_b, k, n, GenKind::Random, seed, 1, m_stream);
  W_CHECK(cudaStreamSynchronize(m_stream), "generating A and B");
}

void Worker::end() {
  if (m_c_mapped && m_c) cudaIpcCloseMemHandle(m_c);
  m_c = nullptr;
  m_c_mapped = false;
  if (m_a) cudaFree(m_a);
  if (m_b) cudaFree(m_b);
  m_a = m_b = nullptr;
  for (auto& [a, b] : m_sets) {
    if (a) cudaFree(a);
    if (b) cudaFree(b);
  }
  m_sets.clear();
}

double Worker::launch(const LaunchSpec& l, int count, const std::function<int()>& next_set) {
  if (!m_kernel || !m_a || !m_c) throw std::runtime_error("a launch before Load and Begin");
  const void* f = reinterpret_cast<const void*>(l.traced ? m_traced : m_kernel);
  if (!f) throw std::runtime_error("a traced launch without a traced module");
  // The arguments, in the kernel's own types; A and B those of input set `set`.
  std::vector<uint64_t> storage(l.args.size() + 1, 0);
  auto use_set = [&](int set) {
    if (set < 0 || set > int32_t(m_sets.size()))
      throw std::runtime_error("a launch on input set " + std::to_string(set) + ", but the worker holds " +
                               std::to_string(m_sets.size() + 1));
    float* const in_a = set == 0 ? m_a : m_sets[size_t(set - 1)].first;
    float* const in_b = set == 0 ? m_b : m_sets[size_t(set - 1)].second;
    for (size_t i = 0; i < l.args.size(); ++i)
      if (l.args[i].role == ParamRole::A || l.args[i].role == ParamRole::B) {
        float* p = l.args[i].role == ParamRole::A ? in_a : in_b;
        std::memcpy(&storage[i], &p, sizeof p);
      }
  };
  use_set(l.input_set);
  std::vector<void*> ptrs;
  for (size_t i = 0; i < l.args.size(); ++i) {
    const KernelArg& a = l.args[i];
    void* slot = &storage[i];
    if (a.role == ParamRole::A || a.role == ParamRole::B) {
      // use_set's
    } else if (a.role == ParamRole::C) {
      std::memcpy(slot, &m_c, sizeof m_c);
    } else {
      switch (a.type) {
        case ParamType::I32: {
          const int32_t v = int32_t(a.value);
          std::memcpy(slot, &v, 4);
          break;
        }
        case ParamType::U32: {
          const uint32_t v = uint32_t(a.value);
          std::memcpy(slot, &v, 4);
          break;
        }
        case ParamType::I64:
        case ParamType::U64:
          std::memcpy(slot, &a.value, 8);
          break;
        case ParamType::F32: {
          const float v = float(a.value);
          std::memcpy(slot, &v, 4);
          break;
        }
        case ParamType::F64: {
          const double v = double(a.value);
          std::memcpy(slot, &v, 8);
          break;
        }
        default:
          throw std::runtime_error("an argument of a type the worker cannot pass");
      }
    }
    ptrs.push_back(slot);
  }
  void* trace = nullptr;
  if (l.traced) {
    cudaIpcMemHandle_t h;
    std::memcpy(&h, l.trace.data(), sizeof h);
    W_CHECK(cudaIpcOpenMemHandle(&trace, h, cudaIpcMemLazyEnablePeerAccess), "mapping the trace records");
    std::memcpy(&storage[l.args.size()], &trace, sizeof trace);
    ptrs.push_back(&storage[l.args.size()]);
  }
  struct CloseTrace {
    void* p;
    ~CloseTrace() {
      if (p) cudaIpcCloseMemHandle(p);
    }
  } close_trace{trace};
  if (l.smem > 48 * 1024)
    W_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(l.smem)),
            "asking for " + std::to_string(l.smem) + " bytes of dynamic shared memory");
  if (l.poison_c)
    W_CHECK(cudaMemsetAsync(m_c, 0xff, size_t(m_m * m_n) * 4, m_stream),
            "filling C with NaN before the launch");
  const dim3 grid(unsigned(l.grid[0]), unsigned(l.grid[1]), unsigned(l.grid[2]));
  const dim3 block(unsigned(l.block[0]), unsigned(l.block[1]), unsigned(l.block[2]));
  // Queued behind a closed gate, as the engine times its own kernels and cuBLAS (launch_gate.cuh): the
  // launches run back to back, however long the host takes to queue them.
  if (m_gated && !m_gate) m_gate = std::make_unique<LaunchGate>();
  {
    std::optional<LaunchGate::Held> held;
    if (m_gated) held.emplace(*m_gate, m_stream);
    W_CHECK(cudaEventRecord(m_start, m_stream), "timing");
    for (int i = 0; i < count; ++i) {
      if (next_set) use_set(next_set());  // the launch copies its arguments: the next one may differ
      W_CHECK(cudaLaunchKernel(f, grid, block, ptrs.data(), size_t(l.smem), m_stream),
              "launching the kernel");
    }
    W_CHECK(cudaEventRecord(m_stop, m_stream), "timing");
  }
  W_CHECK(cudaEventSynchronize(m_stop), "running the kernel");
  float ms = 0;
  W_CHECK(cudaEventElapsedTime(&ms, m_start, m_stop), "timing");
  return double(ms) / count;
}

Measurement Worker::measure(const MeasureMsg& mm, const CancelToken& cancel) {
  void* flush = nullptr;
  size_t flush_bytes = mm.policy.cold_l2 ? size_t(2 * mm.l2_bytes) : 0;
  if (flush_bytes) W_CHECK(cudaMalloc(&flush, flush_bytes), "allocating the L2 flush buffer");
  struct Free {
    void* p;
    ~Free() {
      if (p) cudaFree(p);
    }
  } free_flush{flush};
  int launches = 0;
  double longest = 0;
  auto progress = [&](double ms, int count = 1) {  // after `count` launches of `ms` each
    launches += count;
    longest = std::max(longest, ms * count);
    send(encode(ProgressMsg{launches, longest}));
  };
  MeasureHooks h;
  h.untimed = [&] { progress(launch(mm.launch)); };
  // Short launches are timed in batches (MeasurePolicy::min_sample_ms), as the built-in kernels are: the
  // fastest of three single launches (on the run's own inputs) says how many make a sample. Those three are
  // warm-ups, counted as such.
  int batch = 1, probes = 0;
  if (mm.policy.min_sample_ms > 0 && !mm.policy.cold_l2) {
    double fastest = 0;
    for (; probes < 3; ++probes) {
      cancel.throw_if_cancelled();
      const double ms = launch(mm.launch);
      progress(ms);
      fastest = probes == 0 ? ms : std::min(fastest, ms);
    }
    batch = mm.policy.launches_per_sample(fastest);
  }
  h.launches_per_sample = batch;
  h.timed = [&] {
    const double ms = launch(mm.launch, batch);
    progress(ms, batch);
    return ms;
  };
  int flushes = 0;
  h.flush = [&] {
    W_CHECK(cudaMemsetAsync(flush, ++flushes & 0xff, flush_bytes, m_stream), "flushing the L2");
  };
  if (m_nvml_dev) h.clock = [&] { return m_nvml.read(m_nvml_dev); };
  if (mm.input_sets <= 1) return ts::measure(mm.policy, h, cancel, mm.already_warm + probes);
  // Changing inputs: each launch on the next set, chosen before it (outside its timing).
  if (mm.input_sets > int32_t(m_sets.size()) + 1)
    throw std::runtime_error("a measurement on " + std::to_string(mm.input_sets) +
                             " input sets, but the worker holds " + std::to_string(m_sets.size() + 1));
  // Each launch on the next set: chosen before it, outside the timing of a single launch, and between the
  // launches of a batch (their arguments only: no GPU work between them).
  LaunchSpec on = mm.launch;
  h.untimed = [&] { progress(launch(on)); };
  h.timed = [&] {
    const double ms = launch(on);
    progress(ms);
    return ms;
  };
  h.timed_each = [&](const std::function<void()>& before_each) {
    const double ms = launch(on, batch, [&] {
      before_each();
      return int(on.input_set);
    });
    progress(ms, batch);
    return ms;
  };
  return ts::measure_changing(
      mm.policy, h, [&](int set) { on.input_set = set; }, mm.input_sets, cancel, mm.already_warm + probes);
}

void Worker::handle(const Message& m) {
  switch (m.type) {
    case Type::Load: {
      LoadedMsg out;
      load(decode<LoadMsg>(m), &out);
      send(encode(out));
      return;
    }
    case Type::Begin:
      begin(decode<BeginMsg>(m));
      send(empty(Type::Ok));
      return;
    case Type::Launch:
      send(encode(LaunchedMsg{launch(decode<LaunchMsg>(m).launch)}));
      return;
    case Type::Measure: {
      CancelToken token;
      {
        std::lock_guard<std::mutex> lock(m_mu);  // the reader cancels m_cancel under this lock
        m_cancel = token;
      }
      send(encode(MeasuredMsg{measure(decode<MeasureMsg>(m), token)}));
      return;
    }
    case Type::Occupancy: {
      const OccupancyMsg o = decode<OccupancyMsg>(m);
      const void* f = reinterpret_cast<const void*>(o.traced ? m_traced : m_kernel);
      if (!f) throw std::runtime_error("an occupancy query before Load");
      OccupancyReplyMsg r;
      r.attrs = attrs(f);
      if (o.smem > 48 * 1024)
        W_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, int(o.smem)),
                "asking for dynamic shared memory");
      W_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&r.blocks_per_sm, f, o.threads, size_t(o.smem)),
              "asking the occupancy API");
      send(encode(r));
      return;
    }
    case Type::Inputs:
      inputs(decode<InputsMsg>(m));
      send(empty(Type::Ok));
      return;
    case Type::End:
      end();
      send(empty(Type::Ok));
      return;
    default:
      throw ProtocolError(std::string("unexpected message ") + to_string(m.type));
  }
}

void Worker::init() {
  W_CHECK(cudaSetDevice(m_device), "selecting the device");
  W_CHECK(cudaFree(nullptr), "creating the CUDA context");
  W_CHECK(cudaStreamCreateWithFlags(&m_stream, cudaStreamNonBlocking), "creating a stream");
  W_CHECK(cudaEventCreate(&m_start), "creating events");
  W_CHECK(cudaEventCreate(&m_stop), "creating events");
  m_nvml_dev = m_nvml.device(m_device);
}

int Worker::serve() {
  init();
  cudaDeviceProp p{};
  W_CHECK(cudaGetDeviceProperties(&p, m_device), "reading the device's properties");
  send(encode(HelloMsg{kVersion, int32_t(getpid()), m_device, p.name}));
  std::thread(&Worker::reader, this).detach();
  for (;;) {
    Message m;
    {
      std::unique_lock<std::mutex> lock(m_mu);
      m_cv.wait(lock, [&] { return !m_inbox.empty() || m_closed; });
      if (m_inbox.empty()) {
        if (!m_read_error.empty()) std::fprintf(stderr, "tilescope worker: %s\n", m_read_error.c_str());
        return m_read_error.empty() ? 0 : 2;
      }
      m = std::move(m_inbox.front());
      m_inbox.pop_front();
    }
    if (m.type == Type::Shutdown) return 0;
    try {
      handle(m);
    } catch (const Failure& f) {
      const bool dead = sticky(f.code);
      cudaGetLastError();
      send(encode(ErrorMsg{dead ? ErrorKind::Fault : ErrorKind::Refused, int32_t(f.code),
                           cudaGetErrorName(f.code),
                           words(f.code) + " (" + cudaGetErrorName(f.code) + ", while " + f.doing + ")"}));
      if (dead) return 3;  // the context is ruined: the app starts a fresh worker
    } catch (const Cancelled&) {
      send(encode(ErrorMsg{ErrorKind::Cancelled, 0, "", "cancelled"}));
    } catch (const ProtocolError& e) {
      send(encode(ErrorMsg{ErrorKind::Protocol, 0, "", e.what()}));
      return 2;
    } catch (const std::exception& e) {
      send(encode(ErrorMsg{ErrorKind::Other, 0, "", e.what()}));
    }
  }
}

}  // namespace

int run_worker(int fd, int device, int parent_pid) {
  // Die with the app, even while a kernel of ours runs forever.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (parent_pid > 0 && getppid() != parent_pid) return 0;  // the app is gone already
  signal(SIGPIPE, SIG_IGN);
  try {
    Worker w(fd, device);
    return w.serve();
  } catch (const Failure& f) {
    std::fprintf(stderr, "tilescope worker: %s (%s, while %s)\n", words(f.code).c_str(),
                 cudaGetErrorName(f.code), f.doing.c_str());
    write_message(fd, encode(ErrorMsg{ErrorKind::Fault, int32_t(f.code), cudaGetErrorName(f.code),
                                      words(f.code) + " (while " + f.doing + ")"}));
    return 3;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilescope worker: %s\n", e.what());
    return 2;
  }
}

int run_worker_job(const std::string& job_file, int device) {
  WorkerJob job;
  try {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(job_file, ec)) throw ProtocolError(job_file + " is not a job file");
    const auto size = std::filesystem::file_size(job_file, ec);
    if (ec || size > kMaxPayload * 2) throw ProtocolError(job_file + " is too large for a job file");
    std::ifstream f(job_file, std::ios::binary);
    std::string bytes(size_t(size), '\0');
    f.read(bytes.data(), std::streamsize(size));
    job = decode_worker_job(bytes);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilescope worker: %s\n", e.what());
    return 2;
  }
  try {
    Worker w(-1, device);
    w.without_gate();
    w.init();
    LoadedMsg loaded;
    w.load(job.load, &loaded);
    w.own_inputs(job.m, job.n, job.k, job.seed);
    const double ms = w.launch(job.launch);
    std::fprintf(stderr, "tilescope worker: the kernel ran once (%.3f ms)\n", ms);
    // Racecheck's default (analysis) report comes at a device-wide synchronisation: the event the launch
    // waited on is not one. Without these two calls the missing-barrier example reported no hazard under the
    // worker (while racecheck's raw hazard mode counted ~490 000), and a standalone program that ends with
    // cudaDeviceSynchronize() reported its race. The reset ends the context while the tool still watches.
    W_CHECK(cudaDeviceSynchronize(), "finishing the launch");
    W_CHECK(cudaDeviceReset(), "ending the CUDA context");
    return 0;
  } catch (const Failure& f) {
    std::fprintf(stderr, "tilescope worker: %s (%s, while %s)\n", words(f.code).c_str(),
                 cudaGetErrorName(f.code), f.doing.c_str());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilescope worker: %s\n", e.what());
    return 1;
  }
}

}  // namespace ts
