#pragma once
// [SECTION] The field lists of a measured point (json_fields.hpp): the problem, the statistics of samples,
// the SM clock, the device, the interleaved cuBLAS reference and the record itself. A session's JSON
// (session.cpp) writes and reads them; the settings and `run --json` write the problem's (problem_json).
// Each list names a key once, with what a reader accepts.
#include <cstdint>
#include <limits>
#include <string>

#include "core/engine/backend.hpp"
#include "core/engine/problem.hpp"
#include "core/io/session.hpp"

namespace ts::io {

// What a value read from a file may be (a plot computes pixels from them: an infinite or negative time, or a
// quartile on the wrong side of the median, is refused when the file is read, never drawn).
inline constexpr double kMaxTimeMs = 1e9;              // a launch of 11 days
inline constexpr double kMaxMhz = 1e6;                 // clocks
inline constexpr double kMaxQuantity = 1e15;           // TFLOP/s, GB/s, waves, errors, noise
inline constexpr int kMaxSamples = kMaxRecordSamples;  // samples of one point

// kernel, tile, m, n, k, input, seed.
template <class Io, class P>
void problem_fields(Io& io, P& s) {
  io.text("kernel", s.kernel);
  io.integer("tile", s.tile, 0, 1 << 16);
  io.integer("m", s.m, 1, kMaxDim);
  io.integer("n", s.n, 1, kMaxDim);
  io.integer("k", s.k, 1, kMaxDim);
  if constexpr (Io::reading) {
    std::string input;
    io.text("input", input);
    bool known = true;
    if (input == "file") {
      s.input = InputKind::File;
    } else {
      try {
        s.input = parse_input_kind(input);
      } catch (const ValidationError&) {
        known = false;
      }
    }
    io.check([&] { return known; }, [&] { return "'input' = '" + input + "' is not an input kind"; });
  } else {
    io.text("input", to_string(s.input));
  }
  io.unsigned_integer("seed", s.seed);
}

// Statistics of samples, in ms: with samples, every figure a time (no null), the median above zero and
// min <= p25 <= median <= p75 <= max.
template <class Io, class S>
void stats_fields(Io& io, S& s) {
  io.integer("count", s.count, 0, kMaxSamples);
  const bool timed = s.count > 0;
  io.number("median", s.median, 0, kMaxTimeMs, !timed);
  io.number("p25", s.p25, 0, kMaxTimeMs, !timed);
  io.number("p75", s.p75, 0, kMaxTimeMs, !timed);
  io.number("min", s.min, 0, kMaxTimeMs, !timed);
  io.number("max", s.max, 0, kMaxTimeMs, !timed);
  io.number("mean", s.mean, 0, kMaxTimeMs, !timed);
  io.number("stddev", s.stddev, 0, kMaxTimeMs);
  if (!timed) return;
  io.check([&] { return s.median > 0; },
           [&] { return "'median' = " + Io::fmt(s.median) + " is not above 0"; });
  auto order = [&](const char* a, double x, const char* b, double y) {
    io.check(
        [&] { return !(x > y * (1 + 1e-12)); },
        [&] { return std::string("'") + a + "' = " + Io::fmt(x) + " is above '" + b + "' = " + Io::fmt(y); });
  };
  order("min", s.min, "p25", s.p25);
  order("p25", s.p25, "median", s.median);
  order("median", s.median, "p75", s.p75);
  order("p75", s.p75, "max", s.max);
}

// Samples in ms and their statistics ("samples_ms", "stats_ms"), which must count as many.
template <class Io, class V, class S>
void sampled_fields(Io& io, V& samples, S& stats) {
  io.samples("samples_ms", samples, kMaxTimeMs, kMaxSamples);
  io.object("stats_ms", [&](auto& o) { stats_fields(o, stats); });
  io.check([&] { return stats.count == int(samples.size()); },
           [&] {
             return "stats_ms.count = " + std::to_string(stats.count) + " but " +
                    std::to_string(samples.size()) + " samples";
           });
}

template <class Io, class C>
void clock_fields(Io& io, C& c) {
  io.flag("available", c.available);
  io.number("min_mhz", c.min_mhz, 0, kMaxMhz);
  io.number("median_mhz", c.median_mhz, 0, kMaxMhz);
  io.number("max_mhz", c.max_mhz, 0, kMaxMhz);
  io.number("device_max_mhz", c.device_max_mhz, 0, kMaxMhz);
  io.flag("throttled", c.throttled);
  io.text("throttle_reasons", c.throttle_reasons);
  io.text("note", c.note);
}

template <class Io, class D>
void device_fields(Io& io, D& d) {
  io.text("backend", d.backend);
  io.text("name", d.name);
  io.text("label", d.label);
  io.integer("compute_capability", d.sm, 0, 1000);
  io.integer("sm_count", d.sm_count, 0, 100000);
  io.number("max_sm_clock_mhz", d.max_sm_clock_mhz, 0, kMaxMhz);
  io.text("driver", d.driver);
  io.text("cuda_runtime", d.cuda_runtime);
  io.integer("l2_bytes", d.l2_bytes, 0, INT64_MAX);
  io.integer("memory_bytes", d.memory_bytes, 0, INT64_MAX);
  io.number("datasheet_bandwidth_gbs", d.datasheet_bandwidth_gbs, 0, kMaxQuantity);
  io.number("peak_fp32_tflops", d.peak_fp32_tflops, 0, kMaxQuantity);
  io.number("peak_tf32_tflops", d.peak_tf32_tflops, 0, kMaxQuantity);
  io.object("limits", [&](auto& l) {
    auto& x = d.limits;
    l.integer("max_threads_per_sm", x.max_threads_per_sm, 0, 1 << 20);
    l.integer("max_blocks_per_sm", x.max_blocks_per_sm, 0, 1 << 20);
    l.integer("regs_per_sm", x.regs_per_sm, 0, 1 << 24);
    l.integer("reg_alloc_unit", x.reg_alloc_unit, 0, 1 << 20);
    l.integer("max_regs_per_thread", x.max_regs_per_thread, 0, 1 << 20);
    l.integer("smem_per_sm", x.smem_per_sm, 0, 1 << 30);
    l.integer("reserved_smem_per_block", x.reserved_smem_per_block, 0, 1 << 30);
    l.integer("smem_alloc_unit", x.smem_alloc_unit, 0, 1 << 20);
    l.integer("warp_size", x.warp_size, 0, 1024);
  });
  if constexpr (Io::reading) d.limits.sm_count = d.sm_count;  // written once, as the device's
}

// cuBLAS timed between the samples, and why there is none (`note`, kept beside it in the record).
template <class Io, class R, class N>
void interleaved_fields(Io& io, R& x, N& note) {
  io.text("kernel", x.kernel);
  sampled_fields(io, x.samples_ms, x.stats);
  io.derived("noise", x.noise(), 0, kMaxQuantity);
  io.object("clock", [&](auto& c) { clock_fields(c, x.clock); });
  io.text("note", note);
}

// The timing on inputs that change between samples (ChangingInputs; sets 0: not asked for).
template <class Io, class C>
void changing_fields(Io& io, C& x) {
  io.integer("sets", x.sets, 0, 1 << 10);
  sampled_fields(io, x.samples_ms, x.stats);
  io.derived("noise", relative_stddev(x.stats), 0, kMaxQuantity);
  io.text("stop", x.stop);
  io.flag("passed", x.passed);
  io.text("verdict", x.verdict);
}

// A measured point: the run's record (RunRecord) and what a session adds (MeasurementRecord). The problem's
// fields stand at the top level of the record, beside its own.
template <class Io, class M>
void record_fields(Io& io, M& r) {
  problem_fields(io, r.spec);
  io.text("backend", r.backend);
  io.text("device", r.device);
  io.flag("tf32", r.tf32);
  io.text("policy", r.policy);
  io.flag("timed", r.timed);
  sampled_fields(io, r.samples_ms, r.stats);
  io.optional_integer("launches_per_sample", r.launches_per_sample, 1, 1 << 20);  // older files: 1
  io.derived("tflops", r.tflops(), 0, kMaxQuantity, r.stats.count == 0);
  io.derived("noise", r.noise(), 0, kMaxQuantity);
  io.text("stop", r.stop);
  io.flag("passed", r.error.passed);
  io.number("max_abs_err", r.error.max_abs_err, 0, std::numeric_limits<double>::max());
  io.number("tolerance", r.error.tolerance, 0, std::numeric_limits<double>::max());
  io.optional_integer("bad_elements", r.error.bad_elements, 0, INT64_MAX);  // older files: 0
  io.object("clock", [&](auto& c) { clock_fields(c, r.clock); });
  io.optional_integer("frames_drawn", r.frames_drawn, 0, INT64_MAX);  // older files: 0
  io.integer("tile_m", r.tile_m, 0, 1 << 20);
  io.integer("tile_n", r.tile_n, 0, 1 << 20);
  io.integer("blocks_per_sm", r.blocks_per_sm, 0, 1 << 20);
  io.optional_integer("blocks_per_tile", r.blocks_per_tile, 1, 1 << 20);  // older files: 1
  io.number("waves", r.waves, 0, kMaxQuantity);
  io.optional_flag("k_segments", r.k_segments);  // older files: false
  io.number("reference_ms", r.reference_ms, 0, kMaxTimeMs);
  io.optional_object("interleaved_reference",  // older files have none
                     [&](auto& o) { interleaved_fields(o, r.interleaved, r.interleaved_note); });
  io.optional_text("impossible", r.impossible);  // older files: "" (not checked)
  io.optional_object("changing_inputs", [&](auto& o) { changing_fields(o, r.changing); });  // older: none
  io.text("date", r.date);
  io.text("tilescope", r.program_version);
  io.text("commit", r.commit);
}

}  // namespace ts::io
