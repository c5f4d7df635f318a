#pragma once
// [SECTION] A run's matrices on the GPU (engine.hpp's RunMatrices): A and B generated on the device or copied
// from the given inputs, C, and the cuBLAS SGEMM reference R, on the engine's stream. `shareable`: A, B and C
// in plain cudaMalloc memory, which CUDA IPC can hand to the kernel worker (pool memory cannot).
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <cuda_runtime.h>

#include "kernels/engine/cuda_raii.cuh"
#include "core/engine/engine.hpp"

namespace ts {

class DeviceRunMatrices final : public RunMatrices {
 public:
  DeviceRunMatrices(int device, const ProblemSpec& spec, cudaStream_t stream, bool shareable);

  void make_inputs(const RunRequest& req) override;
  void make_reference(const CancelToken& cancel) override;  // R = A B (cuBLAS SGEMM), synchronised
  void poison_c() override;                                 // synchronised: another process may launch next
  double max_abs_a() override;
  double max_abs_b() override;
  ErrorStats compare(const Tolerance& tolerance) override;
  int64_t unwritten() override;
  std::shared_ptr<const HostMatrix> copy_c() override;
  std::shared_ptr<const MatrixStore> keep_store() override;
  // Changing inputs (engine.hpp): the other sets generated on the device (shareable as A and B are).
  void make_input_sets(int sets) override;
  void select_inputs(int set, const CancelToken& cancel) override;
  void keep_c() override;
  int64_t c_unchanged() override;
  void end_input_sets(const CancelToken& cancel) override;

  // The device pointers (valid for the whole run: keep_store moves the buffers, not the memory).
  float* a() const { return m_a; }
  float* b() const { return m_b; }
  float* c() const { return m_c; }
  float* r() const { return m_r; }
  // Input set `set`'s A and B (0: a() and b()), after make_input_sets.
  float* a_of(int set) const;
  float* b_of(int set) const;

 private:
  int m_device;
  const ProblemSpec& m_s;
  cudaStream_t m_st;
  bool m_shareable;
  PoolBuffer<float> m_A, m_B, m_C, m_R;
  float *m_a = nullptr, *m_b = nullptr, *m_c = nullptr, *m_r = nullptr;
  std::vector<std::pair<PoolBuffer<float>, PoolBuffer<float>>> m_sets;  // sets 1, 2, ...: A and B
  int m_selected = 0;        // the set max_abs_a(), max_abs_b() and the reference speak of
  PoolBuffer<float> m_kept;  // keep_c()'s copy of C
};

}  // namespace ts
