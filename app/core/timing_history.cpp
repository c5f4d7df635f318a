#include "timing_history.hpp"

#include "csv.hpp"
#include "stats.hpp"

namespace ts {

std::string SeriesKey::label() const {
  std::string s = kernel;
  if (tile) s += " T=" + std::to_string(tile);
  return s + " " + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k);
}

void TimingHistory::add(const RunResult& r, bool tf32) {
  const SeriesKey key = SeriesKey::of(r.spec);
  auto it = m_series.find(key);
  if (it == m_series.end()) it = m_series.emplace(key, TimingSeries(m_capacity)).first;
  TimingSeries& s = it->second;
  s.flops = r.spec.flops();
  s.tf32 = tf32;
  for (double ms : r.times_ms) {
    s.launch.push(m_launches++);
    s.ms.push(ms);
    s.tflops.push(tflops(s.flops, ms));
  }
  const std::vector<double> window = s.ms.to_vector();
  s.median_ms = quantile(window, 0.5);
  s.p10_ms = quantile(window, 0.1);
  s.p90_ms = quantile(window, 0.9);
  if (r.reference_ms > 0) s.reference_ms = r.reference_ms;
}

const TimingSeries* TimingHistory::find(const SeriesKey& k) const {
  auto it = m_series.find(k);
  return it == m_series.end() ? nullptr : &it->second;
}

void TimingHistory::clear() {
  m_series.clear();
  m_launches = 0;
}

std::vector<std::pair<SeriesKey, const TimingSeries*>> TimingHistory::same_shape(int64_t m, int64_t n,
                                                                                 int64_t k) const {
  std::vector<std::pair<SeriesKey, const TimingSeries*>> out;
  for (const auto& [key, s] : m_series)
    if (key.m == m && key.n == n && key.k == k) out.emplace_back(key, &s);
  return out;
}

std::string TimingHistory::to_csv() const {
  CsvWriter w({"kernel", "tile", "m", "n", "k", "launch", "ms", "tflops"});
  for (const auto& [key, s] : m_series)
    for (size_t i = 0; i < s.ms.size(); ++i)
      w.row({key.kernel, std::to_string(key.tile), std::to_string(key.m), std::to_string(key.n),
             std::to_string(key.k), CsvWriter::num(s.launch[i], "%.0f"), CsvWriter::num(s.ms[i], "%.6f"),
             CsvWriter::num(s.tflops[i], "%.4f")});
  return w.str();
}

}  // namespace ts
