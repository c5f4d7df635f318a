#pragma once
// A tiny parallel-for over [0, n) in contiguous chunks, one std::thread per hardware thread.
// Used by the CPU backend and the host-side checks; exceptions in a worker are re-thrown in the caller.
#include <algorithm>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace ts {

inline unsigned worker_count() {
  return std::max(1u, std::thread::hardware_concurrency());
}

// fn(begin, end) on disjoint chunks; `grain` is the smallest chunk worth a thread.
template <class Fn>
void parallel_for(int64_t n, int64_t grain, Fn fn) {
  if (n <= 0) return;
  int64_t threads = std::min<int64_t>(worker_count(), std::max<int64_t>(1, n / std::max<int64_t>(1, grain)));
  if (threads <= 1) {
    fn(int64_t(0), n);
    return;
  }
  std::vector<std::thread> pool;
  std::exception_ptr error;
  std::mutex mu;
  int64_t chunk = (n + threads - 1) / threads;
  for (int64_t t = 0; t < threads; ++t) {
    int64_t b = t * chunk, e = std::min(n, b + chunk);
    if (b >= e) break;
    pool.emplace_back([&, b, e] {
      try {
        fn(b, e);
      } catch (...) {
        std::lock_guard<std::mutex> lock(mu);
        if (!error) error = std::current_exception();
      }
    });
  }
  for (auto& t : pool) t.join();
  if (error) std::rethrow_exception(error);
}

}  // namespace ts
