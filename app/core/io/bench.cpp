#include "core/io/bench.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/io/csv.hpp"
#include "core/plots/figure.hpp"
#include "core/engine/problem.hpp"
#include "core/plots/roofline.hpp"
#include "tilescope/version.hpp"

namespace ts {

BenchMeta bench_meta(const DeviceInfo& d) {
  BenchMeta m;
  m.backend = d.backend;
  m.device = d.name;
  m.sm = d.sm;
  m.sm_count = d.sm_count;
  m.max_sm_clock_mhz = d.max_sm_clock_mhz;
  m.driver = d.driver;
  m.cuda_runtime = d.cuda_runtime;
  m.program_version = kVersion;
  m.commit = kGitCommit;
  m.date = utc_now();
  m.peak_fp32_tflops = d.peak_fp32_tflops;
  m.peak_tf32_tflops = d.peak_tf32_tflops;
  m.dram_gbs_datasheet = d.datasheet_bandwidth_gbs;
  return m;
}

BenchPoint bench_point(const RunResult& r, double peak) {
  return bench_point(MeasurementRecord::from(r), peak);
}

BenchPoint failed_point(const ProblemSpec& s, const std::string& error) {
  BenchPoint p;
  p.kernel = s.kernel;
  p.tile = s.tile;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.error = error;
  p.stop = "failed";
  return p;
}

BenchPoint bench_point(const MeasurementRecord& r, double peak) {
  BenchPoint p;
  p.kernel = r.spec.kernel;
  p.tile = r.spec.tile;
  p.tf32 = r.tf32;
  p.m = r.spec.m;
  p.n = r.spec.n;
  p.k = r.spec.k;
  p.verified = r.error.passed;
  p.max_abs_err = r.error.max_abs_err;
  p.tolerance = r.error.tolerance;
  if (!r.error.passed)
    p.error = !r.changing.passed && r.timed
                  ? r.changing.verdict  // failed on the changing inputs only
                  : std::to_string(r.error.bad_elements) + " elements over the tolerance";
  p.stop = r.timed ? r.stop : "not timed";
  p.date = r.date;
  p.impossible = r.impossible;
  if (r.changing.sets > 0) {
    p.changing_sets = r.changing.sets;
    p.changing_samples = r.changing.stats.count;
    p.changing_median_ms = r.changing.stats.median;
    p.changing_iqr_ms = r.changing.stats.p75 - r.changing.stats.p25;
    p.changing_passed = r.changing.passed;
    p.changing_verdict = r.changing.verdict;
  }
  if (r.timed) {
    p.stats = r.stats;
    p.launches_per_sample = r.launches_per_sample;
    p.noise = r.noise();
    p.tflops = r.tflops();
    p.pct_peak = peak > 0 ? 100.0 * r.tflops() / peak : 0.0;
    p.sm_clock_min_mhz = r.clock.min_mhz;
    p.sm_clock_median_mhz = r.clock.median_mhz;
    p.sm_clock_max_mhz = r.clock.max_mhz;
    p.throttled = r.clock.throttled;
    p.throttle_reasons = r.clock.throttle_reasons;
    if (r.cublas_interleaved()) {
      const InterleavedReference& ref = r.interleaved;
      p.reference_kernel = ref.kernel;
      p.reference_samples = ref.stats.count;
      p.reference_median_ms = ref.stats.median;
      p.reference_iqr_ms = ref.stats.p75 - ref.stats.p25;
      p.reference_clock_min_mhz = ref.clock.min_mhz;
      p.reference_clock_median_mhz = ref.clock.median_mhz;
      p.reference_clock_max_mhz = ref.clock.max_mhz;
      p.reference_throttled = ref.clock.throttled;
      p.reference_throttle_reasons = ref.clock.throttle_reasons;
      p.clocks_differ = clocks_differ(r.clock, ref.clock);
    }
  }
  p.reference_note = r.interleaved_note;
  p.blocks_per_sm = r.blocks_per_sm;
  p.waves = r.waves;
  const TrafficEstimate t = estimate_traffic(p.m, p.n, p.k, r.tile_m, r.tile_n);
  p.intensity = t.bytes > 0 ? r.spec.flops() / t.bytes : 0;
  return p;
}

int fp32_lanes_per_sm(int sm) {
  if (sm >= 100) return 128;           // Blackwell
  if (sm == 80) return 64;             // A100
  if (sm >= 86) return 128;            // GA10x, Ada, Hopper
  if (sm >= 70 && sm < 80) return 64;  // Volta, Turing
  return 0;
}

int tf32_flops_per_sm_clock(int sm, const std::string& name) {
  if (sm == 90) return 2048;             // H100: 989 TFLOP/s sparse / 2 = 494 dense at 132 SMs x 1.83 GHz
  if (sm == 80) return 1024;             // A100: 156 TFLOP/s at 108 SMs x 1.41 GHz
  if (sm == 86 || sm == 87 || sm == 89)  // A10: 62.5 at 72 x 1.695 GHz; L4: 60 at 58 x 2.04 (header)
    return name.find("GeForce") != std::string::npos ? 256 : 512;
  return 0;
}

double peak_tflops(int sm, int sm_count, double clock_mhz, bool tf32, const std::string& name) {
  const double per_clock = tf32 ? double(tf32_flops_per_sm_clock(sm, name)) : 2.0 * fp32_lanes_per_sm(sm);
  return per_clock * sm_count * clock_mhz * 1e6 / 1e12;
}

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  if (text.empty()) throw ValidationError("--shapes is empty");
  for (const std::string& item : split_fields(text, ',')) {
    if (item.empty()) throw ValidationError("--shapes '" + text + "' has an empty entry");
    const std::vector<std::string> parts = split_fields(item, 'x');
    if (parts.size() == 1) {
      const int64_t n = parse_dim(parts[0], "shape");
      shapes.push_back({n, n, n});
    } else if (parts.size() == 3) {
      shapes.push_back(
          {parse_dim(parts[0], "shape M"), parse_dim(parts[1], "shape N"), parse_dim(parts[2], "shape K")});
    } else {
      throw ValidationError("--shapes: '" + item + "' is neither N nor MxNxK");
    }
  }
  return shapes;
}

void relate_to_cublas(std::vector<BenchPoint>& points) {
  for (auto& p : points) {
    p.pct_cublas = -1;
    p.pct_cublas_from.clear();
    if (!p.verified || !(p.stats.median > 0)) continue;
    if (p.reference_samples > 0 && p.reference_median_ms > 0) {  // timed beside it, sample by sample
      p.pct_cublas = 100.0 * p.reference_median_ms / p.stats.median;
      p.pct_cublas_from = "interleaved";
      continue;
    }
    const char* ref = p.tf32 ? "cublas_tf32" : "cublas";
    for (const auto& q : points)
      if (q.kernel == ref && q.m == p.m && q.n == p.n && q.k == p.k && q.verified && q.stats.median > 0 &&
          (q.impossible.empty() || &q == &p)) {  // an impossible cuBLAS time is no one's reference
        p.pct_cublas = 100.0 * q.stats.median / p.stats.median;
        p.pct_cublas_from = &q == &p ? "itself" : "separate";
      }
  }
}

namespace {

std::string fmt(const char* f, double v) {
  char b[64];
  std::snprintf(b, sizeof b, f, v);
  return b;
}

std::string shape_str(const BenchPoint& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k);
}

std::string join_ints(const std::vector<int>& v, const char* sep) {
  std::string s;
  for (int x : v) s += (s.empty() ? "" : sep) + std::to_string(x);
  return s;
}

// Every text cell through the one CSV quoting of the program (quoted, and defused where a spreadsheet would
// take it for a formula).
std::string csv_field(const std::string& s) {
  return CsvWriter::quote(s);
}

}  // namespace

std::string format_csv(const BenchMeta& m, const std::vector<BenchPoint>& pts) {
  std::ostringstream os;
  os << "# device," << csv_field(m.device) << "\n# compute_capability," << m.sm / 10 << "." << m.sm % 10
     << "\n# driver," << csv_field(m.driver) << "\n# cuda_runtime," << csv_field(m.cuda_runtime)
     << "\n# tilescope," << csv_field(m.program_version) << "\n# commit," << csv_field(m.commit)
     << "\n# date," << csv_field(m.date) << "\n# cold_l2," << (m.cold ? "yes" : "no")
     << "\n# peak_fp32_tflops," << fmt("%.2f", m.peak_fp32_tflops) << "\n# peak_tf32_tflops,"
     << fmt("%.2f", m.peak_tf32_tflops) << "\n# backend," << csv_field(m.backend) << "\n# policy,"
     << csv_field(m.policy) << "\n# dram_gbs_measured," << fmt("%.1f", m.dram_gbs)
     << "\n# dram_gbs_datasheet," << fmt("%.1f", m.dram_gbs_datasheet) << "\n# wall_seconds,"
     << fmt("%.2f", m.wall_seconds) << "\n# interleave_reference," << (m.interleave_reference ? "yes" : "no")
     << (m.sweep.empty() ? "" : "\n# sweep,") << csv_field(m.sweep)
     << (m.sweep_sha256.empty() ? "" : "\n# sweep_sha256,") << csv_field(m.sweep_sha256)
     << (m.shards > 0 ? "\n# shard," + std::to_string(m.shard) + "/" + std::to_string(m.shards) : "")
     << (m.merged_parts > 0 ? "\n# merged_parts," + std::to_string(m.merged_parts) : "")
     << (m.missing_shards.empty() ? "" : "\n# missing_shards," + join_ints(m.missing_shards, " "))
     << (m.interrupted ? "\n# interrupted,yes" : "") << "\n";
  for (const auto& w : m.wave_marks)
    os << "# wave_mark," << csv_field(w.kernel) << "," << w.tile << "," << w.size << "," << w.waves << "\n";
  os << "kernel,tile,precision,m,n,k,verified,max_abs_err,tolerance,samples,median_ms,p25_ms,p75_ms,iqr_ms,"
        "min_ms,mean_ms,stddev_ms,noise,stop,tflops,pct_peak,pct_cublas,pct_cublas_from,cublas_kernel,"
        "cublas_samples,cublas_median_ms,cublas_iqr_ms,sm_clock_min_mhz,sm_clock_median_mhz,sm_clock_max_mhz,"
        "cublas_sm_clock_min_mhz,cublas_sm_clock_median_mhz,cublas_sm_clock_max_mhz,clocks_differ,throttled,"
        "throttle_reasons,cublas_throttled,cublas_throttle_reasons,cublas_note,error,blocks_per_sm,waves,"
        "intensity_est,date,impossible,changing_sets,changing_samples,changing_median_ms,changing_iqr_ms,"
        "changing_passed,changing_verdict,launches_per_sample\n";
  for (const auto& p : pts) {
    const bool ref = p.reference_samples > 0;
    auto if_ref = [&](const char* f, double v) { return ref ? fmt(f, v) : std::string(); };
    os << csv_field(p.kernel) << "," << p.tile << "," << (p.tf32 ? "tf32" : "fp32") << "," << p.m << ","
       << p.n << "," << p.k << "," << (p.verified ? "yes" : "no") << "," << fmt("%.3e", p.max_abs_err) << ","
       << fmt("%.3e", p.tolerance) << "," << p.stats.count << "," << fmt("%.6f", p.stats.median) << ","
       << fmt("%.6f", p.stats.p25) << "," << fmt("%.6f", p.stats.p75) << ","
       << fmt("%.6f", p.stats.p75 - p.stats.p25) << "," << fmt("%.6f", p.stats.min) << ","
       << fmt("%.6f", p.stats.mean) << "," << fmt("%.6f", p.stats.stddev) << "," << fmt("%.5f", p.noise)
       << "," << csv_field(p.stop) << "," << fmt("%.3f", p.tflops) << "," << fmt("%.2f", p.pct_peak) << ","
       << (p.pct_cublas >= 0 ? fmt("%.2f", p.pct_cublas) : "") << "," << csv_field(p.pct_cublas_from) << ","
       << csv_field(p.reference_kernel) << "," << (ref ? std::to_string(p.reference_samples) : "") << ","
       << if_ref("%.6f", p.reference_median_ms) << "," << if_ref("%.6f", p.reference_iqr_ms) << ","
       << fmt("%.0f", p.sm_clock_min_mhz) << "," << fmt("%.0f", p.sm_clock_median_mhz) << ","
       << fmt("%.0f", p.sm_clock_max_mhz) << "," << if_ref("%.0f", p.reference_clock_min_mhz) << ","
       << if_ref("%.0f", p.reference_clock_median_mhz) << "," << if_ref("%.0f", p.reference_clock_max_mhz)
       << "," << (p.clocks_differ ? "yes" : "no") << "," << (p.throttled ? "yes" : "no") << ","
       << csv_field(p.throttle_reasons) << "," << (ref ? (p.reference_throttled ? "yes" : "no") : "") << ","
       << csv_field(p.reference_throttle_reasons) << "," << csv_field(p.reference_note) << ","
       << csv_field(p.error) << "," << p.blocks_per_sm << "," << fmt("%.4f", p.waves) << ","
       << fmt("%.4g", p.intensity) << "," << csv_field(p.date) << "," << csv_field(p.impossible) << ",";
    if (p.changing_sets > 0)
      os << p.changing_sets << "," << p.changing_samples << "," << fmt("%.6f", p.changing_median_ms) << ","
         << fmt("%.6f", p.changing_iqr_ms) << "," << (p.changing_passed ? "yes" : "no") << ","
         << csv_field(p.changing_verdict) << ",";
    else
      os << ",,,,,,";
    os << p.launches_per_sample << "\n";
  }
  return os.str();
}

std::string format_json(const BenchMeta& m, const std::vector<BenchPoint>& pts) {
  nlohmann::json j;
  j["meta"] = {{"device", m.device},
               {"compute_capability", std::to_string(m.sm / 10) + "." + std::to_string(m.sm % 10)},
               {"sm_count", m.sm_count},
               {"max_sm_clock_mhz", m.max_sm_clock_mhz},
               {"driver", m.driver},
               {"cuda_runtime", m.cuda_runtime},
               {"tilescope", m.program_version},
               {"commit", m.commit},
               {"date", m.date},
               {"cold_l2", m.cold},
               {"interrupted", m.interrupted},
               {"peak_fp32_tflops", m.peak_fp32_tflops},
               {"peak_tf32_tflops", m.peak_tf32_tflops},
               {"backend", m.backend},
               {"policy", m.policy},
               {"dram_gbs_measured", m.dram_gbs},
               {"dram_gbs_datasheet", m.dram_gbs_datasheet},
               {"wall_seconds", m.wall_seconds},
               {"interleave_reference", m.interleave_reference},
               {"sweep", m.sweep},
               {"sweep_sha256", m.sweep_sha256},
               {"merged_parts", m.merged_parts},
               {"missing_shards", m.missing_shards}};
  j["meta"]["shard"] =
      m.shards > 0 ? nlohmann::json{{"index", m.shard}, {"count", m.shards}} : nlohmann::json(nullptr);
  j["wave_marks"] = nlohmann::json::array();
  for (const auto& w : m.wave_marks)
    j["wave_marks"].push_back({{"kernel", w.kernel}, {"tile", w.tile}, {"size", w.size}, {"waves", w.waves}});
  j["points"] = nlohmann::json::array();
  for (const auto& p : pts) {
    nlohmann::json q = {{"kernel", p.kernel},
                        {"tile", p.tile},
                        {"precision", p.tf32 ? "tf32" : "fp32"},
                        {"m", p.m},
                        {"n", p.n},
                        {"k", p.k},
                        {"verified", p.verified},
                        {"max_abs_err", p.max_abs_err},
                        {"tolerance", p.tolerance},
                        {"samples", p.stats.count},
                        {"launches_per_sample", p.launches_per_sample},
                        {"median_ms", p.stats.median},
                        {"p25_ms", p.stats.p25},
                        {"p75_ms", p.stats.p75},
                        {"iqr_ms", p.stats.p75 - p.stats.p25},
                        {"min_ms", p.stats.min},
                        {"mean_ms", p.stats.mean},
                        {"stddev_ms", p.stats.stddev},
                        {"noise", p.noise},
                        {"stop", p.stop},
                        {"tflops", p.tflops},
                        {"pct_peak", p.pct_peak},
                        {"sm_clock_min_mhz", p.sm_clock_min_mhz},
                        {"sm_clock_median_mhz", p.sm_clock_median_mhz},
                        {"sm_clock_max_mhz", p.sm_clock_max_mhz},
                        {"throttled", p.throttled},
                        {"throttle_reasons", p.throttle_reasons},
                        {"error", p.error},
                        {"blocks_per_sm", p.blocks_per_sm},
                        {"waves", p.waves},
                        {"intensity_est", p.intensity},
                        {"date", p.date}};
    q["impossible"] = p.impossible.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.impossible);
    // The timing on inputs that change between samples (null: not asked for).
    q["changing_inputs"] = nlohmann::json(nullptr);
    if (p.changing_sets > 0)
      q["changing_inputs"] = {{"sets", p.changing_sets},           {"samples", p.changing_samples},
                              {"median_ms", p.changing_median_ms}, {"iqr_ms", p.changing_iqr_ms},
                              {"passed", p.changing_passed},       {"verdict", p.changing_verdict}};
    q["pct_cublas"] = p.pct_cublas >= 0 ? nlohmann::json(p.pct_cublas) : nlohmann::json(nullptr);
    q["pct_cublas_from"] =
        p.pct_cublas_from.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.pct_cublas_from);
    // cuBLAS timed between this kernel's samples, with its own clock (null: none; reference_note says why).
    q["reference"] = nlohmann::json(nullptr);
    if (p.reference_samples > 0)
      q["reference"] = {{"kernel", p.reference_kernel},
                        {"samples", p.reference_samples},
                        {"median_ms", p.reference_median_ms},
                        {"iqr_ms", p.reference_iqr_ms},
                        {"sm_clock_min_mhz", p.reference_clock_min_mhz},
                        {"sm_clock_median_mhz", p.reference_clock_median_mhz},
                        {"sm_clock_max_mhz", p.reference_clock_max_mhz},
                        {"throttled", p.reference_throttled},
                        {"throttle_reasons", p.reference_throttle_reasons}};
    q["reference_note"] = p.reference_note;
    q["clocks_differ"] = p.clocks_differ;
    j["points"].push_back(q);
  }
  return j.dump(2) + "\n";
}

std::string format_markdown(const BenchMeta& m, const std::vector<BenchPoint>& pts) {
  std::ostringstream os;
  os << "TileScope " << m.program_version << " (" << m.commit << ") on " << m.device;
  if (m.sm_count > 0)
    os << ", compute capability " << m.sm / 10 << "." << m.sm % 10 << ", " << m.sm_count << " SMs, driver "
       << m.driver << ", CUDA runtime " << m.cuda_runtime << ", " << m.date << ". Peaks at "
       << fmt("%.0f", m.max_sm_clock_mhz) << " MHz: FP32 " << fmt("%.1f", m.peak_fp32_tflops)
       << " TFLOP/s, TF32 " << fmt("%.1f", m.peak_tf32_tflops) << " TFLOP/s. L2 "
       << (m.cold ? "flushed before every sample (cold)" : "warm") << ".";
  else
    os << " (" << m.backend << " backend, wall-clock timing), " << m.date << ".";
  if (m.dram_gbs > 0)
    os << (m.sm_count > 0 ? " DRAM bandwidth (copy kernel) " : " Memory bandwidth (threaded copy) ")
       << fmt("%.0f", m.dram_gbs) << " GB/s"
       << (m.dram_gbs_datasheet > 0 ? " of " + fmt("%.0f", m.dram_gbs_datasheet) + " theoretical." : ".");
  os << (m.policy.empty() ? "" : " Policy " + m.policy + ".")
     << (m.sweep.empty() ? "" : " Sweep " + m.sweep + ".")
     << (m.shards > 0 ? " Shard " + std::to_string(m.shard) + " of " + std::to_string(m.shards) +
                            " of sweep " + m.sweep_sha256.substr(0, 12) + "."
                      : "")
     << (m.merged_parts > 0
             ? " Merged from " + std::to_string(m.merged_parts) + (m.merged_parts == 1 ? " part" : " parts") +
                   " of sweep " + m.sweep_sha256.substr(0, 12) + "."
             : "")
     << (m.missing_shards.empty() ? ""
                                  : std::string(m.missing_shards.size() == 1 ? " Shard " : " Shards ") +
                                        join_ints(m.missing_shards, ", ") +
                                        (m.missing_shards.size() == 1 ? " is missing: its points are"
                                                                      : " are missing: their points are") +
                                        " not in the table.")
     << (m.wall_seconds > 0 ? " Took " + fmt("%.1f", m.wall_seconds) + " s." : "")
     << (m.interrupted ? " Interrupted: the points below are those completed." : "") << "\n\n";
  const bool any_interleaved =
      std::any_of(pts.begin(), pts.end(), [](const BenchPoint& p) { return p.reference_samples > 0; });
  if (any_interleaved)
    os << "Each kernel is timed interleaved with cuBLAS of its precision (cuBLAS TF32 for TF32 kernels), one "
          "cuBLAS sample right after each of its own: cuBLAS ms and its SM clock come from those samples, "
          "and % cuBLAS compares the two medians.\n\n";
  if (std::any_of(pts.begin(), pts.end(), [](const BenchPoint& p) { return p.launches_per_sample > 1; }))
    os << "Samples \"n x b\": each of the n samples is the mean of b launches back to back (short launches, "
          "timed in batches of at least 1 ms; each launch includes the GPU's gap to the next, about a "
          "microsecond), and each cuBLAS sample the same.\n\n";
  // FLOP/s in the unit that keeps the table's largest value readable (GFLOP/s on a CPU, not 0.00 TFLOP/s);
  // the CSV and JSON keep TFLOP/s.
  double max_flops = 0;
  for (const auto& p : pts)
    if (p.stats.count) max_flops = std::max(max_flops, p.tflops * 1e12);
  const Unit fu = flops_unit(max_flops);
  // With changing inputs (any point timed on them): their median beside the fixed inputs' one.
  const bool changing =
      std::any_of(pts.begin(), pts.end(), [](const BenchPoint& p) { return p.changing_sets > 0; });
  if (changing)
    os << "changing inputs ms: the median of a second timing in which every launch read the next of "
       << MeasurePolicy::kChangingInputSets
       << " sets of A and B (switched outside the timing), C then checked against their reference: a kernel "
          "that caches its answer fails there.\n\n";
  os << "| kernel | tile | M x N x K | median ms | " << (changing ? "changing inputs ms | " : "")
     << "IQR ms | samples | " << fu.name
     << " | % peak | cuBLAS ms | % "
        "cuBLAS | "
        "SM MHz | cuBLAS SM MHz | check |\n";
  os << "|---|---|---|---|" << (changing ? "---|" : "") << "---|---|---|---|---|---|---|---|---|\n";
  bool any_separate = false, any_differ = false;
  std::vector<std::string> impossible;  // "kernel tile at shape: why", in table order
  // Points without an interleaved reference, grouped by the reason (in the order first seen).
  std::vector<std::pair<std::string, std::string>> notes;
  for (const auto& p : pts) {
    os << "| " << p.kernel << (p.tf32 ? " (tf32)" : "") << " | " << (p.tile ? std::to_string(p.tile) : "-")
       << " | " << shape_str(p) << " | ";
    if (p.stats.count) {
      std::string pct = p.pct_cublas >= 0 ? fmt("%.1f", p.pct_cublas) : "-";
      if (p.pct_cublas >= 0 && p.pct_cublas_from == "separate") {
        pct += " (separate run)";
        any_separate = true;
      }
      if (p.clocks_differ) {
        pct += " (clocks differ)";
        any_differ = true;
      }
      const bool ref = p.reference_samples > 0;
      os << fmt("%.4f", p.stats.median) << " | "
         << (!changing                ? ""
             : p.changing_samples > 0 ? fmt("%.4f", p.changing_median_ms) + " | "
                                      : std::string("- | "))
         << fmt("%.4f", p.stats.p75 - p.stats.p25) << " | " << p.stats.count
         << (p.launches_per_sample > 1 ? " x " + std::to_string(p.launches_per_sample) : "") << " | "
         << fmt("%.2f", p.tflops * 1e12 * fu.scale) << " | " << fmt("%.1f", p.pct_peak) << " | "
         << (ref ? fmt("%.4f", p.reference_median_ms) : "-") << " | " << pct << " | "
         << (p.sm_clock_median_mhz > 0 ? fmt("%.0f", p.sm_clock_median_mhz) : "-")
         << (p.throttled ? " (throttled)" : "") << " | "
         << (ref ? fmt("%.0f", p.reference_clock_median_mhz) + (p.reference_throttled ? " (throttled)" : "")
                 : "-")
         << " | ";
    } else {
      os << (changing ? "- | " : "") << "- | - | 0 | - | - | - | - | - | - | ";
    }
    if (!p.verified)
      os << "FAIL: " << p.error;
    else if (!p.impossible.empty())
      os << "IMPOSSIBLE (" << impossible.size() + 1 << ")";
    else
      os << "ok";
    os << " |\n";
    if (p.verified && !p.impossible.empty())
      impossible.push_back(p.kernel + (p.tile ? " " + std::to_string(p.tile) : "") + " at " + shape_str(p) +
                           ": " + p.impossible);
    if (p.stats.count && p.reference_samples == 0 && !p.reference_note.empty() &&
        p.pct_cublas_from != "itself") {
      auto it = std::find_if(notes.begin(), notes.end(),
                             [&](const auto& n) { return n.first == p.reference_note; });
      const std::string who = p.kernel + (p.tile ? " " + std::to_string(p.tile) : "");
      if (it == notes.end())
        notes.emplace_back(p.reference_note, who);
      else if (it->second.find(who) == std::string::npos)
        it->second += ", " + who;
    }
  }
  if (any_separate || any_differ || !notes.empty() || !impossible.empty()) os << "\n";
  for (size_t i = 0; i < impossible.size(); ++i)
    os << "IMPOSSIBLE (" << i + 1 << "), not a record: " << impossible[i] << ".\n";
  if (any_separate)
    os << "(separate run): no cuBLAS was timed between this kernel's samples; % cuBLAS compares it with the "
          "cuBLAS point of the same shape, measured on its own before or after it.\n";
  if (any_differ)
    os << "(clocks differ): the median SM clocks of the kernel and of the cuBLAS timed beside it differ by "
          "more "
          "than 1 %: the ratio compares more than the two kernels.\n";
  for (const auto& [note, who] : notes) os << "cuBLAS not timed beside " << who << " (" << note << ").\n";
  return os.str();
}

std::string format_bench(const std::string& f, const BenchMeta& m, const std::vector<BenchPoint>& p) {
  if (f == "csv") return format_csv(m, p);
  if (f == "json") return format_json(m, p);
  if (f == "md") return format_markdown(m, p);
  throw ValidationError("--format '" + f + "' is not one of csv, json, md");
}

}  // namespace ts
