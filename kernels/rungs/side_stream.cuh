#pragma once
// [SECTION] A second stream for launches split in two: the whole waves' tiles on a stream of high priority,
// forked from and joined back to the caller's stream, and the shared (split) tiles' blocks on the caller's
// stream. The shared blocks (normal priority) are dispatched after every whole tile's, onto the SMs as each
// finishes its last whole tile, as if the two were one grid. One launch after the other on one stream would
// leave the SMs that finish first idle until the last whole tile is done. Used by stream-K (10_streamk.cu)
// and by wgmma_tf32's tail (13_wgmma_tf32.cu).
// One per device, for the process's life: created on first use, never destroyed (the driver releases it at
// exit; destroying it from a static destructor would run after the CUDA runtime is gone). Launches from
// several threads take turns enqueueing (side_mutex()) and serialise on it.
#include <map>
#include <mutex>

#include "kernels/engine/cuda_raii.cuh"

namespace ts {

struct SideStream {
  CudaStream stream{true};
  CudaEvent fork{cudaEventDisableTiming}, join{cudaEventDisableTiming};
};

inline std::mutex& side_mutex() {
  static std::mutex m;
  return m;
}

inline SideStream& side_stream() {  // under side_mutex()
  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  static std::map<int, SideStream*>* per_device = new std::map<int, SideStream*>();
  SideStream*& p = (*per_device)[dev];
  if (!p) p = new SideStream();
  return *p;
}

// whole(side) on the side stream and shared(s) on `s`, the side stream forked from `s` and joined back to it.
template <class Whole, class Shared>
void launch_beside(cudaStream_t s, Whole whole, Shared shared) {
  std::lock_guard<std::mutex> lock(side_mutex());
  SideStream& side = side_stream();
  CUDA_CHECK(cudaEventRecord(side.fork.get(), s));
  CUDA_CHECK(cudaStreamWaitEvent(side.stream.get(), side.fork.get(), 0));
  whole(side.stream.get());
  shared(s);
  CUDA_CHECK(cudaEventRecord(side.join.get(), side.stream.get()));
  CUDA_CHECK(cudaStreamWaitEvent(s, side.join.get(), 0));
}

}  // namespace ts
