#pragma once
// [SECTION] The kernel worker: the process that loads a person's compiled kernel and runs it, so that a
// kernel which faults (an illegal address ruins a CUDA context for good) or never finishes takes down only
// the worker, never the window. `tilescope worker --fd N` serves one app over a socket (worker_protocol.hpp):
// it maps the app's A, B and C through CUDA IPC, runs on its own copies of A and B (a kernel that writes
// where it should not cannot reach the app's reference), writes C, and times with cudaEvents under the app's
// MeasurePolicy and the same sampling loop as the built-in kernels. `tilescope worker --job FILE` runs one
// launch from a job file on its own inputs and exits: what compute-sanitizer runs.
#include <string>

#include "core/io/worker_protocol.hpp"

namespace ts {

// Serves the app on socket `fd` until it says Shutdown or goes away. Returns the process's exit code (0; 3
// after a fault, which leaves the CUDA context unusable).
int run_worker(int fd, int device, int parent_pid);

// One launch described by a job file (write_worker_job), on generated inputs; exit code 0 when it ran, 1 when
// the kernel failed (compute-sanitizer reports what it saw), 2 for a bad job file.
int run_worker_job(const std::string& job_file, int device);

// WorkerJob and its file format: worker_protocol.hpp.

}  // namespace ts
