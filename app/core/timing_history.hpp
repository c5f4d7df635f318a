#pragma once
// [SECTION] Every launch's time, kept per configuration (kernel, tile, shape) for the Timings panel.
// One series per configuration seen in the session, so switching back and forth compares them.
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "backend.hpp"
#include "ring_buffer.hpp"

namespace ts {

struct SeriesKey {
  std::string kernel;
  int tile = 0;
  int64_t m = 0, n = 0, k = 0;
  bool operator<(const SeriesKey& o) const {
    return std::tie(kernel, tile, m, n, k) < std::tie(o.kernel, o.tile, o.m, o.n, o.k);
  }
  bool operator==(const SeriesKey& o) const { return !(*this < o) && !(o < *this); }
  std::string label() const;  // "tiled T=32 4096x4096x4096"
  static SeriesKey of(const ProblemSpec& s) { return {s.kernel, s.tile, s.m, s.n, s.k}; }
};

struct TimingSeries {
  explicit TimingSeries(size_t capacity) : launch(capacity), ms(capacity), tflops(capacity) {}
  RingBuffer<double> launch;  // global launch counter (x axis)
  RingBuffer<double> ms;
  RingBuffer<double> tflops;
  double flops = 0;
  // Statistics over the samples in the window.
  double median_ms = 0, p10_ms = 0, p90_ms = 0;
  double reference_ms = 0;  // cuBLAS at the same shape and precision, latest (0: unknown)
  bool tf32 = false;
};

class TimingHistory {
 public:
  explicit TimingHistory(size_t capacity = 2000) : m_capacity(capacity) {}
  // Appends every timed launch of the result to its series.
  void add(const RunResult& r, bool tf32);
  const std::map<SeriesKey, TimingSeries>& series() const { return m_series; }
  const TimingSeries* find(const SeriesKey& k) const;
  double launches() const { return m_launches; }
  void clear();
  // The latest median of every configuration with the given shape, for the bar chart.
  std::vector<std::pair<SeriesKey, const TimingSeries*>> same_shape(int64_t m, int64_t n, int64_t k) const;
  // CSV of every launch: kernel,tile,m,n,k,launch,ms,tflops
  std::string to_csv() const;

 private:
  size_t m_capacity;
  double m_launches = 0;
  std::map<SeriesKey, TimingSeries> m_series;
};

}  // namespace ts
