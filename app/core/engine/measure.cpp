#include "core/engine/measure.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include "core/engine/problem.hpp"

namespace ts {

MeasurePolicy MeasurePolicy::quick() {
  MeasurePolicy p;
  p.name = "quick";
  p.warmup_launches = 2;
  p.min_samples = p.max_samples = 10;
  p.max_seconds = 2;
  return p;
}

MeasurePolicy MeasurePolicy::bench() {
  MeasurePolicy p;
  p.name = "bench";
  p.warmup_launches = 3;
  p.warmup_seconds = 0.05;
  p.min_samples = 10;
  p.min_seconds = 0.5;
  p.max_noise = 0.005;
  p.max_seconds = 10;
  p.time_failed = false;
  p.interleave_reference = true;
  p.min_sample_ms = 1.0;
  return p;
}

int MeasurePolicy::launches_per_sample(double single_launch_ms) const {
  if (!(min_sample_ms > 0) || cold_l2 || !(single_launch_ms > 0)) return 1;
  const double n = std::ceil(min_sample_ms / single_launch_ms);
  return int(std::clamp(n, 1.0, double(kMaxLaunchesPerSample)));
}

MeasurePolicy MeasurePolicy::cpu_bench() {
  MeasurePolicy p;
  p.name = "bench";
  p.warmup_launches = 1;  // the verification launch; warmup_seconds adds at least one more
  p.warmup_seconds = 0.02;
  p.min_samples = kCpuBenchMinSamples;
  p.min_seconds = 0.05;
  p.max_noise = kCpuBenchNoise;
  p.max_seconds = kCpuBenchSeconds;
  p.time_failed = false;
  p.interleave_reference = true;  // the backend decides: the CPU has no cuBLAS to interleave
  return p;
}

MeasurePolicy MeasurePolicy::fixed(int samples, int warmup) {
  MeasurePolicy p;
  p.name = "fixed";
  p.warmup_launches = warmup;
  p.min_samples = p.max_samples = samples;
  p.max_seconds = 60;
  return p;
}

std::string MeasurePolicy::describe() const {
  char b[256];
  if (min_samples == max_samples && max_noise == 0 && min_seconds == 0)
    std::snprintf(b, sizeof b, "%s: %d warm-up, %d timed launches (cap %.3g s)", name.c_str(),
                  warmup_launches, min_samples, max_seconds);
  else
    std::snprintf(b, sizeof b,
                  "%s: warm-up %d launches and %.3g s; >= %d samples and %.3g s, noise < %.3g %%, limit %.3g "
                  "s%s",
                  name.c_str(), warmup_launches, warmup_seconds, min_samples, min_seconds, 100 * max_noise,
                  max_seconds, cold_l2 ? ", cold L2" : "");
  std::string out = b;
  if (min_sample_ms > 0 && !cold_l2) {
    std::snprintf(b, sizeof b, "; samples of launches back to back, >= %.3g ms each", min_sample_ms);
    out += b;
  }
  return changing_inputs ? out + ", changing inputs" : out;
}

void validate_policy(const MeasurePolicy& p) {
  auto bad = [](const std::string& what) { throw ValidationError("measuring policy: " + what); };
  if (p.warmup_launches < 0 || p.warmup_launches > 100000)
    bad("warm-up launches = " + std::to_string(p.warmup_launches) + " is outside 0..100000");
  if (p.min_samples < 1 || p.min_samples > 100000)
    bad("minimum samples = " + std::to_string(p.min_samples) + " is outside 1..100000");
  if (p.max_samples < p.min_samples || p.max_samples > 1000000)
    bad("maximum samples = " + std::to_string(p.max_samples) + " is outside " +
        std::to_string(p.min_samples) + "..1000000");
  auto seconds = [&](double v, const char* what, bool positive) {
    if (!std::isfinite(v) || v < 0 || (positive && v == 0) || v > 86400)
      bad(std::string(what) + " = " + std::to_string(v) + (positive ? " must be > 0" : " must be >= 0") +
          " and at most 86400 s");
  };
  seconds(p.warmup_seconds, "warm-up time", false);
  seconds(p.min_seconds, "minimum time", false);
  seconds(p.max_seconds, "time limit", true);
  if (!std::isfinite(p.min_sample_ms) || p.min_sample_ms < 0 || p.min_sample_ms > 1000)
    bad("shortest sample = " + std::to_string(p.min_sample_ms) + " ms is outside 0..1000 ms");
  if (!std::isfinite(p.max_noise) || p.max_noise < 0 || p.max_noise >= 1)
    bad("noise target = " + std::to_string(100 * p.max_noise) + " % is outside 0..100 %");
}

const char* to_string(StopReason r) {
  switch (r) {
    case StopReason::Continue:
      return "running";
    case StopReason::Converged:
      return "converged";
    case StopReason::TimeLimit:
      return "time limit";
    case StopReason::SampleLimit:
      return "sample limit";
    case StopReason::CountReached:
      return "samples taken";
  }
  return "?";
}

std::string describe_stop(const std::string& stop, double noise, int samples) {
  char pct[32];
  std::snprintf(pct, sizeof pct, "%.3g %%", 100 * noise);
  const std::string n = std::to_string(samples) + (samples == 1 ? " sample" : " samples");
  if (stop == to_string(StopReason::Converged))
    return std::string("converged: noise ") + pct + ", under the policy's target";
  if (stop == to_string(StopReason::CountReached))
    return n + ", as many as the policy takes (it has no noise target)";
  if (stop == to_string(StopReason::TimeLimit))
    return "stopped at the time limit after " + n + (samples > 1 ? ", noise " + std::string(pct) : "");
  if (stop == to_string(StopReason::SampleLimit))
    return "stopped at the sample limit (" + n + ") with noise " + pct;
  return stop;
}

double noise(const std::vector<double>& s) {
  return s.size() < 2 ? 0.0 : relative_stddev(summarize(s));
}

StopReason should_stop(const std::vector<double>& s, double wall_s, const MeasurePolicy& p,
                       int launches_per_sample) {
  const int n = int(s.size());
  const double measured_s =
      std::accumulate(s.begin(), s.end(), 0.0) * 1e-3 * double(std::max(1, launches_per_sample));
  if (n >= p.min_samples && measured_s >= p.min_seconds) {
    if (p.max_noise <= 0) return StopReason::CountReached;
    if (noise(s) < p.max_noise) return StopReason::Converged;
  }
  if (n >= p.max_samples) return StopReason::SampleLimit;
  // The limit applies only once the minimum is in, unless the minimum itself would take forever.
  if (n >= 1 && wall_s >= p.max_seconds && (n >= p.min_samples || wall_s >= 3 * p.max_seconds))
    return StopReason::TimeLimit;
  return StopReason::Continue;
}

ClockRecord summarize_clocks(const std::vector<ClockReading>& readings, double device_max_mhz) {
  ClockRecord c;
  c.device_max_mhz = device_max_mhz;
  std::vector<double> mhz;
  std::vector<std::string> reasons;  // each once, in the order first seen
  for (const auto& r : readings) {
    if (r.sm_mhz > 0) mhz.push_back(r.sm_mhz);
    std::stringstream ss(r.throttle);
    std::string one;
    while (std::getline(ss, one, ','))
      if (!one.empty() && std::find(reasons.begin(), reasons.end(), one) == reasons.end())
        reasons.push_back(one);
  }
  for (const auto& one : reasons) c.throttle_reasons += (c.throttle_reasons.empty() ? "" : ",") + one;
  if (mhz.empty()) return c;
  c.available = true;
  c.min_mhz = *std::min_element(mhz.begin(), mhz.end());
  c.max_mhz = *std::max_element(mhz.begin(), mhz.end());
  c.median_mhz = quantile(mhz, 0.5);
  c.throttled = !c.throttle_reasons.empty() || (device_max_mhz > 0 && c.min_mhz < 0.9 * device_max_mhz);
  return c;
}

bool clocks_differ(const ClockRecord& kernel, const ClockRecord& reference) {
  if (!kernel.available || !reference.available || !(kernel.median_mhz > 0) || !(reference.median_mhz > 0))
    return false;
  // In percent of the reference's median, written without a division: exactly 1 % is not flagged.
  return 100.0 * std::abs(kernel.median_mhz - reference.median_mhz) > kClocksDifferPct * reference.median_mhz;
}

Measurement measure(const MeasurePolicy& p, const MeasureHooks& h, const CancelToken& cancel,
                    int already_warm) {
  using clock = std::chrono::steady_clock;
  auto since = [](clock::time_point t0) { return std::chrono::duration<double>(clock::now() - t0).count(); };
  Measurement m;
  m.launches_per_sample = std::max(1, h.launches_per_sample);
  TimingGate::Hold hold;
  const int64_t frames0 = TimingGate::instance().frames();
  const bool with_reference = bool(h.reference_timed);
  m.warmups = std::max(0, already_warm);
  const auto w0 = clock::now();
  // The reference is warmed as often as the kernel: first for the kernel's launches made before (its
  // verification launch), then once after each of the kernel's warm-up launches.
  while (with_reference && m.reference_warmups < m.warmups && since(w0) < p.max_seconds) {
    cancel.throw_if_cancelled();
    h.reference_timed();
    ++m.reference_warmups;
  }
  while (m.warmups < p.warmup_launches || since(w0) < p.warmup_seconds) {
    if (since(w0) >= p.max_seconds) break;  // a kernel slower than the whole budget: warm enough
    cancel.throw_if_cancelled();
    h.untimed();
    ++m.warmups;
    if (with_reference) {
      h.reference_timed();
      ++m.reference_warmups;
    }
  }
  const auto t0 = clock::now();
  while (m.stop == StopReason::Continue) {
    cancel.throw_if_cancelled();
    if (p.cold_l2 && h.flush) h.flush();
    m.samples_ms.push_back(h.timed());
    if (h.clock) m.clocks.push_back(h.clock());
    if (with_reference) {  // right after the kernel's sample, under the same conditions
      if (p.cold_l2 && h.flush) h.flush();
      m.reference_samples_ms.push_back(h.reference_timed());
      if (h.reference_clock) m.reference_clocks.push_back(h.reference_clock());
    }
    m.wall_s = since(t0);
    m.stop = should_stop(m.samples_ms, m.wall_s, p, m.launches_per_sample);
  }
  m.stats = summarize(m.samples_ms);
  m.noise = noise(m.samples_ms);
  if (with_reference) {
    m.reference_stats = summarize(m.reference_samples_ms);
    m.reference_noise = noise(m.reference_samples_ms);
  }
  m.frames_drawn = TimingGate::instance().frames() - frames0;
  return m;
}

Measurement measure_changing(const MeasurePolicy& p, const MeasureHooks& hooks,
                             const std::function<void(int)>& use, int sets, const CancelToken& cancel,
                             int already_warm) {
  MeasurePolicy q = p;
  q.interleave_reference = false;
  int64_t launches = 0;
  int last = 0;
  auto next = [&] {
    last = changing_input_set(launches++, sets);
    use(last);
  };
  MeasureHooks h;
  h.untimed = [&] {
    next();
    hooks.untimed();
  };
  const bool batched = hooks.launches_per_sample > 1 && bool(hooks.timed_each);
  h.launches_per_sample = batched ? hooks.launches_per_sample : 1;
  h.timed = [&] {
    if (batched) return hooks.timed_each(next);
    next();
    return hooks.timed();
  };
  h.flush = hooks.flush;
  h.clock = hooks.clock;
  Measurement m = measure(q, h, cancel, already_warm);
  m.last_input_set = last;
  return m;
}

TimingGate& TimingGate::instance() {
  static TimingGate g;
  return g;
}

TimingGate::Hold::Hold() {
  ++instance().m_holds;
}

TimingGate::Hold::~Hold() {
  --instance().m_holds;
}

std::atomic<TimingGate::Clock> TimingGate::s_clock{nullptr};

double TimingGate::clock_s() {
  if (const Clock c = s_clock.load()) return c();
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void TimingGate::set_clock(Clock clock) {
  s_clock.store(clock);
}

double TimingGate::pace(double now_s) const {
  if (!timing()) return 0;
  const double due = m_last_frame_s.load() + kTimingFrameInterval;
  return now_s >= due ? 0 : due - now_s;
}

void TimingGate::frame_drawn(double now_s) {
  m_last_frame_s.store(now_s);
  ++m_frames;
}

}  // namespace ts
