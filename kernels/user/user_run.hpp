#pragma once
// [SECTION] The engine's path for a person's kernel ("yours: <name>"), called by the CUDA backend's run() so
// that the window, `tilescope run`, sweeps and `tilescope bench` see it like a built-in. What differs is
// where it runs: the app allocates A, B and C (shareable through CUDA IPC), makes the reference with cuBLAS,
// and a worker process (user_worker.hpp) runs the kernel on its own copies of A and B, writing C; the app
// verifies C, keeps the matrices for the heatmaps, and asks the worker for the timing (the same MeasurePolicy
// and sampling loop), the occupancy API's answer and a traced launch. Launches the device cannot take are
// refused before they are tried, with the numbers. Plain C++ header.
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>

#include "core/engine/backend.hpp"
#include "kernels/user/worker_client.hpp"

namespace ts {

class UserKernel;

// A person's kernel was not run on the GPU: compute-sanitizer memcheck found errors on the first launch of
// its build (RunRequest::memcheck_new_builds), which on the GPU itself would have faulted it.
class MemcheckRefusal : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct UserRunDevice {
  int device = 0;
  int sm = 0;         // compute capability major * 10 + minor: the architecture kernels are compiled for
  std::string name;   // e.g. "NVIDIA H100 80GB HBM3" (in messages)
  std::string label;  // the backend's device_name(), as every result carries it
  DeviceLimits limits;
  double clock_mhz = 0;
  double peak_fp32_tflops = 0, peak_tf32_tflops = 0;
  int64_t l2_bytes = 0;
  int max_threads_per_block = 1024;
  int max_smem_per_block_optin = 0;  // bytes, cudaDevAttrMaxSharedMemoryPerBlockOptin
  int regs_per_block = 65536;
  DeviceInfo info;  // the backend's (its roofs, for the impossible-point rule)
};

class UserRunner {
 public:
  explicit UserRunner(UserRunDevice d);
  ~UserRunner();
  UserRunner(const UserRunner&) = delete;
  UserRunner& operator=(const UserRunner&) = delete;

  // Compiles (or finds the build), evaluates the launch and checks it against the device. Throws
  // ValidationError (CompileError for a build that fails) with the numbers.
  void validate(const ProblemSpec& s, const UserKernel& k) const;
  // The whole run (see the header comment). `stream` is the engine's (a cudaStream_t). Throws
  // ValidationError, WorkerFailure (fault, hang, death: the worker is restarted first), Cancelled,
  // MemcheckRefusal.
  RunResult run(const RunRequest& req, const UserKernel& k, void* stream, const MeasurePolicy& policy,
                const CancelToken& cancel);
  // The launch and its theoretical occupancy from an existing build (never compiles; nullopt without one).
  std::optional<LaunchInfo> launch_info(const ProblemSpec& s, const UserKernel& k) const;

  WorkerClient& worker() { return *m_worker; }

 private:
  // memcheck on the first launch of a new build (RunRequest::memcheck_new_builds). Returns what to tell the
  // person (empty: the build was checked before); throws MemcheckRefusal when memcheck found errors.
  std::string check_new_build(const UserKernel& k, const ProblemSpec& s, const std::string& build_key,
                              const CancelToken& cancel);

  class WorkerLauncher;  // the kernel in the worker, as the engine's RunLauncher (user_run.cu)

  UserRunDevice m_dev;
  std::unique_ptr<WorkerClient> m_worker;
  std::set<std::string> m_checked;  // builds (CompiledModule::key) whose first launch memcheck passed
};

}  // namespace ts
