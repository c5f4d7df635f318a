#pragma once
// cuBLAS, opened when a process first uses it rather than at its start. Linked the usual way, cuBLAS made
// every process of the CUDA build pay for its start-up whether it ran cuBLAS or not: libcublasLt's static
// constructors touch about 110 MB of pages, 0.09-0.12 s of system time per process on a 2-core machine, paid
// by every `tilescope list`, by the CPU backend and by each of the test processes (about 1,400 in one test
// run). Only the five functions TileScope calls are looked up; the types are cuBLAS's own (its header), so a
// mismatch is a compile error.
#include <cublas_v2.h>

#include <string>

namespace ts {

struct CublasApi {
  decltype(&::cublasCreate_v2) create = nullptr;
  decltype(&::cublasDestroy_v2) destroy = nullptr;
  decltype(&::cublasSetStream_v2) set_stream = nullptr;
  decltype(&::cublasSetMathMode) set_math_mode = nullptr;
  decltype(&::cublasSgemm_v2_64) sgemm_64 = nullptr;
};

// The shared library's name for this build's cuBLAS major version ("libcublas.so.13").
std::string cublas_library_name();

// cuBLAS's functions, from the library opened once per process (thread-safe): first by its name through the
// loader's search (the program's RUNPATH, LD_LIBRARY_PATH, ld.so.conf), then in the build's toolkit
// (TILESCOPE_CUBLAS_DIR). Throws std::runtime_error naming the library and the loader's reason when neither
// opens, or a function is missing; every later call throws the same.
const CublasApi& cublas_api();

}  // namespace ts
