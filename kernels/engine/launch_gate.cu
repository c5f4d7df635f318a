#include "kernels/engine/launch_gate.cuh"

#include <atomic>

#include "kernels/engine/cuda_check.cuh"

namespace ts {

namespace {

__global__ void gate_kernel(volatile int* flags, unsigned long long limit_ns) {
  unsigned long long start, now;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    if (flags[0] != 0) return;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start > limit_ns) {
      flags[1] = 1;
      return;
    }
    __nanosleep(256);
  }
}

}  // namespace

void LaunchGate::FreeHost::operator()(int* p) const noexcept {
  CUDA_CHECK_NOEXCEPT(cudaFreeHost(p));
}

LaunchGate::LaunchGate(unsigned long long limit_ns) : m_limit_ns(limit_ns) {
  void* p = nullptr;
  CUDA_CHECK(cudaHostAlloc(&p, 2 * sizeof(int), cudaHostAllocMapped | cudaHostAllocPortable));
  m_flags.reset(static_cast<int*>(p));
  m_flags.get()[0] = m_flags.get()[1] = 0;
  CUDA_CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&m_device), p, 0));
}

void LaunchGate::close(cudaStream_t stream) {
  volatile int* f = m_flags.get();
  f[0] = 0;
  f[1] = 0;
  std::atomic_thread_fence(std::memory_order_seq_cst);
  gate_kernel<<<1, 1, 0, stream>>>(m_device, m_limit_ns);
  CUDA_CHECK(cudaGetLastError());
}

void LaunchGate::open() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  static_cast<volatile int*>(m_flags.get())[0] = 1;
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

bool LaunchGate::timed_out() const {
  return static_cast<volatile const int*>(m_flags.get())[1] != 0;
}

}  // namespace ts
