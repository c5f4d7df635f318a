#pragma once
// A gate that holds a stream's work back until the host has queued all of it (nvbench's "blocking kernel"):
// close() launches a kernel that waits for a flag in pinned host memory, open() sets the flag. Work timed
// between the two starts only once it is all queued, so a batch of launches runs back to back however long
// the host takes to queue each one. Without it, a short launch whose host side is slow is timed at its host
// cost: cuBLAS TF32 at 1024^3 on an H100 costs the host 21 us per call for a 13.6 us kernel (CUDA graph
// replay), and batches of calls measured 15-19 us, so kernels compared with it read 10-40 % too fast.
// The gate gives up after kGateLimitNs (then the work runs as it is queued, as without a gate), so work that
// waits for the GPU while the gate is closed cannot hang: it is timed late, and timed_out() says so.
#include <cuda_runtime.h>

#include <memory>

namespace ts {

constexpr unsigned long long kGateLimitNs = 2'000'000'000ull;

class LaunchGate {
 public:
  // limit_ns: how long a closed gate waits for open() before it gives up.
  explicit LaunchGate(unsigned long long limit_ns = kGateLimitNs);
  // Launches the gate on `stream`: what is queued after it waits until open().
  void close(cudaStream_t stream);
  // Lets the queued work run (host side; no CUDA call).
  void open();
  // Whether the last close()'s gate gave up waiting (read once the stream has passed it).
  bool timed_out() const;

  // The gate closed on `stream` for this object's life, opened on every way out of its scope (a gate left
  // closed would hold the stream back until it gives up): queue the work to time inside the scope.
  class Held {
   public:
    Held(LaunchGate& gate, cudaStream_t stream) : m_gate(gate) { m_gate.close(stream); }
    ~Held() { m_gate.open(); }
    Held(const Held&) = delete;
    Held& operator=(const Held&) = delete;

   private:
    LaunchGate& m_gate;
  };

 private:
  struct FreeHost {
    void operator()(int* p) const noexcept;
  };
  std::unique_ptr<int, FreeHost> m_flags;  // [0] open, [1] timed out: pinned, mapped into the device
  int* m_device = nullptr;                 // the same memory as the device sees it
  unsigned long long m_limit_ns;
};

}  // namespace ts
