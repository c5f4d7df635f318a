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

  // [SECTION] Changing inputs (MeasurePolicy::changing_inputs), in this order: make_input_sets, keep_c, the
  // launcher's measure_changing and launch_on, select_inputs / compare / c_unchanged for each set checked,
  // end_input_sets. Sets 1 .. sets - 1 are random A and B of the run's shapes from streams of their own
  // (input_gen.hpp: changed_input_stream), whatever the run's input kind, so they differ from set 0 (the
  // run's own A and B).
  virtual void make_input_sets(int sets) = 0;
  // Makes set `set` the one max_abs_a(), max_abs_b() and compare() speak of: R = its A B (synchronised).
  // Launches are not changed by it (the launcher picks the set of each launch).
  virtual void select_inputs(int set, const CancelToken& cancel) = 0;
  // Keeps a copy of C as it is now (the run's own answer, verified); c_unchanged(): how many elements of C
  // are bit for bit that copy.
  virtual void keep_c() = 0;
  virtual int64_t c_unchanged() = 0;
  // C back as keep_c() found it, set 0 selected again (R its reference), the other sets freed.
  virtual void end_input_sets(const CancelToken& cancel) = 0;
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
  // Changing inputs (RunMatrices' section): the kernel timed under `policy` with input set
  // changing_input_set(n, sets) made the one its n-th launch reads, switched outside the timing
  // (measure_changing, measure.hpp); C is left as the last launch wrote it (Measurement::last_input_set).
  virtual Measurement measure_changing(const MeasurePolicy& policy, int sets, const CancelToken& cancel) = 0;
  // One launch on input set `set`, writing C. Synchronous.
  virtual void launch_on(int set, const CancelToken& cancel) = 0;
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

// What a check of C on a changed input set found, in words: "" when `e` passed; "C did not change when A and
// B did: the kernel returned an earlier answer (...)" when every element of C was still the run's own answer
// (`unchanged` of `elements`); otherwise that C is wrong on the changed set, with the figures (`own_passed`
// false: the kernel failed on the run's own inputs already, and the verdict says it failed on both).
std::string changed_inputs_verdict(const ErrorStats& e, int set, int sets, int64_t unchanged,
                                   int64_t elements, bool own_passed = true);

}  // namespace ts
