#pragma once
// [SECTION] One run, written once: the phases every measurement goes through, whatever runs the kernel and
// wherever its matrices live (issue 27). make the inputs, make the reference, poison C, launch once to
// verify, compare with the reference's tolerance, count what the kernel never wrote, time under the policy
// (or say why not), describe the launch, keep the store, profile. What differs is behind two interfaces:
// - RunMatrices: where A, B, C and the reference R live (device memory through CUDA, or host memory);
// - RunLauncher: what runs the kernel (a built-in kernel in this process, a person's kernel in the worker
//   process, a CPU twin).
// A backend implements both (often in one object sharing its buffers) and calls run_pipeline; so the
// unwritten-element check, the notes and the not-timed rule hold for every kernel. Plain C++: no CUDA.
#include <cstdint>
#include <memory>
#include <string>

#include "core/engine/backend.hpp"
#include "core/base/cancel.hpp"
#include "core/engine/measure.hpp"
#include "core/engine/verify.hpp"

namespace ts {

class RunMatrices {
 public:
  virtual ~RunMatrices() = default;
  // A and B: generated from the spec, or copied from the request's given inputs.
  virtual void make_inputs(const RunRequest& req) = 0;
  // R = A B, the trusted reference.
  virtual void make_reference(const CancelToken& cancel) = 0;
  // Every byte of C set to 0xff (a NaN), so elements a kernel never writes show and fail.
  virtual void poison_c() = 0;
  virtual double max_abs_a() = 0;
  virtual double max_abs_b() = 0;
  virtual ErrorStats compare(const Tolerance& tolerance) = 0;
  // Elements of C that still hold poison_c()'s bytes.
  virtual int64_t unwritten() = 0;
  // C as it is now, in host memory (RunRequest::keep_output).
  virtual std::shared_ptr<const HostMatrix> copy_c() = 0;
  // A, B, C and C - R handed to a store (RunRequest::keep_store); profile() may still use the memory.
  virtual std::shared_ptr<const MatrixStore> keep_store() = 0;
};

class RunLauncher {
 public:
  virtual ~RunLauncher() = default;
  // One launch that writes C (the verification launch; C is poisoned before). Synchronous.
  virtual void verify_launch(const CancelToken& cancel) = 0;
  // The kernel timed under `policy`; its first launch was the verification launch (one warm-up done).
  virtual Measurement measure(const MeasurePolicy& policy, const CancelToken& cancel) = 0;
  // What is said of the timing beside the measurement (an interleaved reference that could not be timed,
  // an SM clock that could not be read).
  virtual void after_timing(RunResult& r, const MeasurePolicy& policy) {
    (void)r;
    (void)policy;
  }
  // The launch's tile of C per block and its occupancy.
  virtual void describe_launch(RunResult& r) = 0;
  // RunRequest::profile: occupancy of every tile, the traced launch, the reference timed on its own.
  virtual void profile(RunResult& r, const CancelToken& cancel) {
    (void)r;
    (void)cancel;
  }
};

// What the backend knows of every run before it starts.
struct RunFacts {
  std::string backend, device;
  std::string reference;         // what C is verified against ("cuBLAS SGEMM (FP32)")
  bool tf32 = false;             // the kernel computes in TF32: checked with TF32's tolerance
  double peak_tflops = 0;        // the device's roof for the kernel's precision (0: unknown)
  double clock_mhz = 0;          // the device's maximum SM clock (0: none)
  std::string reference_kernel;  // the interleaved reference's id, when the launcher times one
  std::string note;              // said of this run before it started (a memcheck guard's verdict)
  // The device's roofs, for the impossible-point rule (impossible.hpp); peaks 0 (the CPU backend): none.
  DeviceInfo device_info;
};

// The run: every phase above, in order. Throws what the matrices or the launcher throw (ValidationError,
// CudaError, WorkerFailure, Cancelled).
RunResult run_pipeline(const RunRequest& req, const MeasurePolicy& policy, const RunFacts& facts,
                       RunMatrices& matrices, RunLauncher& launcher, const CancelToken& cancel);

// The note for elements of C a kernel never wrote ("" when it wrote them all).
std::string unwritten_note(int64_t unwritten, int64_t elements);

}  // namespace ts
