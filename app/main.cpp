// tilescope: the GUI by default; `list`, `run` and `snapshot` run the same engine without a window.
// Exit codes: 0 done, 1 verification failed or runtime error, 2 bad usage or input.
#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <sstream>
#include <thread>
#include <chrono>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "bench.hpp"
#include "cli/figure_cmd.hpp"
#include "cli/gl_check_cmd.hpp"
#include "cli/kernel_file.hpp"
#include "gpu_catalog.hpp"
#include "csv.hpp"
#include "figure.hpp"
#include "measure.hpp"
#include "files.hpp"
#include "schedule.hpp"
#include "session.hpp"
#include "sweep.hpp"
#include "gui.hpp"
#include "heatmap_bench.hpp"
#include "tile_suggest.hpp"
#include "npy.hpp"
#include "kernel_source.hpp"
#include "kernel_workshop.hpp"
#include "registry.hpp"
#include "run_queue.hpp"
#include "settings.hpp"
#include "stats.hpp"
#include "tilescope/version.hpp"
#include "window.hpp"

namespace {

constexpr int kExitOk = 0, kExitFailed = 1, kExitUsage = 2;

// [SECTION] Problem options shared by `run` and `snapshot`. Taken as text and validated by app/core, so every
// message names the value and the limit the same way in the GUI and here.
struct ProblemArgs {
  std::string backend = "auto";
  std::string kernel;  // default: tiled, or the only __global__ function of --kernel-file
  std::string tile, size, m, n, k, input = "random", seed = "1", a, b;
  ts::cli::KernelFileArgs file;  // your own kernel
};

void add_problem_options(CLI::App* cmd, ProblemArgs& p) {
  cmd->add_option("--backend", p.backend, "auto (CUDA if a GPU is present), cuda or cpu")
      ->capture_default_str();
  cmd->add_option(
      "--kernel", p.kernel,
      "kernel name (see `tilescope list`; default tiled), or with --kernel-file the __global__ function "
      "to run");
  cmd->add_option("--tile", p.tile, "tile size (see `tilescope list`; default: the kernel's default)");
  cmd->add_option("--size", p.size, "M = N = K (default 1024; 256 on the CPU backend)");
  cmd->add_option("--m", p.m, "rows of A and C");
  cmd->add_option("--n", p.n, "columns of B and C");
  cmd->add_option("--k", p.k, "columns of A, rows of B");
  cmd->add_option("--input", p.input, "random, symmetric, identity, ones or ramp (A[i][j] = i, B[i][j] = j)")
      ->capture_default_str();
  cmd->add_option("--seed", p.seed, "seed of the random inputs")->capture_default_str();
  cmd->add_option("--a", p.a, "A from a 2-D float32 .npy file (with --b)");
  cmd->add_option("--b", p.b, "B from a 2-D float32 .npy file (with --a)");
  ts::cli::add_kernel_file_options(cmd, p.file);
}

uint64_t parse_seed(const std::string& s) {
  if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 19)
    throw ts::ValidationError("--seed = '" + s + "' is not a whole number from 0 to 9999999999999999999");
  return std::stoull(s);
}

// Builds and validates the request against the chosen backend. Throws ValidationError.
ts::RunRequest build_request(const ProblemArgs& p, ts::Backend& backend) {
  ts::RunRequest req;
  ts::ProblemSpec& s = req.spec;
  req.memcheck_new_builds = !p.file.no_guard;
  if (!p.file.file.empty())
    s.kernel = ts::cli::load_kernel_file(p.file, p.kernel, p.tile, backend);  // "yours:<name>"
  else if (!p.file.params.empty() || !p.file.grid.empty() || !p.file.block.empty() || !p.file.smem.empty() ||
           !p.file.tile_macro.empty() || !p.file.hang_limit.empty() || !p.file.compile_limit.empty() ||
           p.file.tf32 || p.file.no_guard)
    throw ts::ValidationError(
        "--param, --grid, --block, --smem, --tile-macro, --hang-limit, --compile-limit, --tf32 and "
        "--no-guard go with --kernel-file");
  else
    s.kernel = p.kernel.empty() ? "tiled" : p.kernel;
  const bool tile_given = !p.tile.empty();
  if (tile_given) {
    s.tile = int(ts::parse_dim(p.tile, "--tile"));  // a number; the kernel says which values it allows
  } else {
    const auto kernels = backend.kernels();
    if (const ts::KernelInfo* k = ts::find_kernel(kernels, s.kernel)) s.tile = k->default_tile;
  }
  s.input = ts::parse_input_kind(p.input);
  s.seed = parse_seed(p.seed);
  const bool given_files = !p.a.empty() || !p.b.empty();
  if (given_files && (p.a.empty() || p.b.empty()))
    throw ts::ValidationError("give both --a and --b, or neither");
  const bool dims_given = !p.m.empty() || !p.n.empty() || !p.k.empty();
  if (!p.size.empty() && dims_given) throw ts::ValidationError("give either --size or --m/--n/--k, not both");
  if (!p.size.empty()) {
    s.m = s.n = s.k = ts::parse_dim(p.size, "--size");
  } else if (dims_given) {
    if (p.m.empty() || p.n.empty() || p.k.empty())
      throw ts::ValidationError("give all three of --m, --n and --k (or --size)");
    s.m = ts::parse_dim(p.m, "--m");
    s.n = ts::parse_dim(p.n, "--n");
    s.k = ts::parse_dim(p.k, "--k");
  } else {
    s.m = s.n = s.k = backend.kind() == "cpu" ? 256 : 1024;
  }
  if (!p.file.file.empty() && !given_files && !dims_given && p.size.empty())
    std::fprintf(stderr, "tilescope: %s at M = N = K = %lld (--size or --m/--n/--k to change)\n",
                 s.kernel.c_str(), (long long)s.m);
  if (given_files) {
    // Shapes and limits from the headers, before a single data byte is read or allocated.
    const ts::NpyHeader ha = ts::read_npy_header(p.a), hb = ts::read_npy_header(p.b);
    if (ha.cols != hb.rows) {
      std::ostringstream os;
      os << p.a << " is " << ha.rows << " x " << ha.cols << " and " << p.b << " is " << hb.rows << " x "
         << hb.cols << ": A's columns (" << ha.cols << ") must equal B's rows (" << hb.rows << ")";
      throw ts::ValidationError(os.str());
    }
    if ((dims_given || !p.size.empty()) && (s.m != ha.rows || s.k != ha.cols || s.n != hb.cols)) {
      // Sizes given together with files must agree with them.
      std::ostringstream os;
      os << "the sizes given (M x N x K = " << s.m << " x " << s.n << " x " << s.k
         << ") do not match the files (" << ha.rows << " x " << hb.cols << " x " << ha.cols << ")";
      throw ts::ValidationError(os.str());
    }
    ts::RunRequest shape_only = req;
    shape_only.spec.input = ts::InputKind::File;
    shape_only.spec.m = ha.rows;
    shape_only.spec.k = ha.cols;
    shape_only.spec.n = hb.cols;
    backend.validate(shape_only, tile_given);  // kernel, tile, CPU work limit, free GPU memory
    ts::check_host_memory(ha.data_bytes + hb.data_bytes,
                          "reading " + p.a + " and " + p.b + " (" + std::to_string(ha.rows) + " x " +
                              std::to_string(ha.cols) + " and " + std::to_string(hb.rows) + " x " +
                              std::to_string(hb.cols) + " float32)");
    auto a = std::make_shared<ts::HostMatrix>(ts::read_npy(p.a));
    ts::require_finite(*a, p.a);
    auto b = std::make_shared<ts::HostMatrix>(ts::read_npy(p.b));
    ts::require_finite(*b, p.b);
    req.a = std::move(a);
    req.b = std::move(b);
  }
  if (backend.kind() == "cpu") {
    // Without a GPU the kernel cannot run, but what can be checked here still is: the launch (the limits
    // every device shares) and the build (for sm_90), so a compile error or an impossible block is reported
    // as such.
    const ts::KernelWorkshop* workshop = backend.workshop();
    if (const auto user = workshop ? workshop->find(s.kernel) : nullptr) {
      ts::ProblemSpec probe = s;
      ts::validate_kernel(probe, backend.kernels(), tile_given);  // tile and square-only first
      const ts::ExprVars v{s.m, s.n, s.k, s.tile};
      ts::launch_geometry(user->spec(), v);
      if (workshop->can_build(nullptr)) workshop->build(*user, s.tile, 90, v);
    }
  }
  backend.validate(req, tile_given);
  return req;
}

ts::Replace replace_if(bool force) {
  return force ? ts::Replace::RegularFile : ts::Replace::Never;
}

std::shared_ptr<ts::Backend> open_backend(const std::string& choice, std::string* note) {
  return ts::make_backend(ts::parse_backend_choice(choice), note);
}

void print_result(const ts::RunResult& r) {
  const auto& s = r.spec;
  const ts::SampleStats st = ts::summarize(r.times_ms);
  std::printf("kernel     %s%s\n", s.kernel.c_str(),
              s.tile ? (" (TILE " + std::to_string(s.tile) + ")").c_str() : "");
  std::printf("shape      M x N x K = %lld x %lld x %lld, input %s, seed %llu\n", (long long)s.m,
              (long long)s.n, (long long)s.k, ts::to_string(s.input), (unsigned long long)s.seed);
  std::printf("backend    %s: %s\n", r.backend.c_str(), r.device.c_str());
  if (r.timed) {
    // Times in the unit of the median (74.7 us rather than 0.0747 ms), the spread also as a share of it.
    const ts::Unit u = ts::time_unit(st.median);
    auto t = [&](double ms) { return ts::CsvWriter::num(ms * u.scale, "%.4g"); };
    std::printf(
        "time       median %s %s over %d launches (IQR %s %s = %s %% of the median, min %s, max %s)\n",
        t(st.median).c_str(), u.name.c_str(), st.count, t(st.p75 - st.p25).c_str(), u.name.c_str(),
        ts::CsvWriter::num(st.median > 0 ? 100 * (st.p75 - st.p25) / st.median : 0, "%.2g").c_str(),
        t(st.min).c_str(), t(st.max).c_str());
    std::printf("sampling   %s\n", ts::describe_stop(r.stop, r.noise, st.count).c_str());
  } else
    std::printf("time       not timed (verification failed)\n");
  std::printf("policy     %s\n", r.policy.c_str());
  if (r.clock.available)
    std::printf("SM clock   median %.0f MHz (min %.0f, max %.0f)%s%s\n", r.clock.median_mhz, r.clock.min_mhz,
                r.clock.max_mhz, r.clock.throttled ? ", THROTTLED " : "", r.clock.throttle_reasons.c_str());
  else
    std::printf("SM clock   %s\n", r.clock.note.empty() ? "not recorded" : r.clock.note.c_str());
  if (r.timed) std::printf("speed      %s\n", ts::format_flops(r.tflops * 1e12).c_str());
  std::printf("error      max abs %.3e, max rel %.3e, tolerance %.3e (vs %s)\n", r.error.max_abs_err,
              r.error.max_rel_err, r.error.tolerance, r.reference.c_str());
  if (!r.error.passed)
    std::printf("           %lld elements over the tolerance; worst at row %lld, col %lld\n",
                (long long)r.error.bad_elements, (long long)r.error.worst_row, (long long)r.error.worst_col);
  if (!r.note.empty()) std::printf("note       %s\n", r.note.c_str());
  std::printf("result     %s\n", r.error.passed ? "PASS" : "FAIL");
  if (r.cublas_interleaved()) {
    const ts::InterleavedReference& ref = r.interleaved;
    std::printf(
        "cuBLAS     %s median %s over %d launches, each right after one of the kernel's: the kernel "
        "reaches %.1f %% of it\n",
        ref.kernel.c_str(), ts::format_ms(ref.stats.median).c_str(), ref.stats.count,
        100.0 * ref.stats.median / r.median_ms);
    if (ref.clock.available)
      std::printf("           its SM clock median %.0f MHz (min %.0f, max %.0f)%s%s%s\n",
                  ref.clock.median_mhz, ref.clock.min_mhz, ref.clock.max_mhz,
                  ref.clock.throttled ? ", THROTTLED " : "", ref.clock.throttle_reasons.c_str(),
                  ts::clocks_differ(r.clock, ref.clock) ? "; the two clocks differ by more than 1 %" : "");
  } else if (r.reference_ms > 0) {
    std::printf("cuBLAS     %s at this shape (timed on its own): the kernel reaches %.1f %% of it\n",
                ts::format_ms(r.reference_ms).c_str(), 100.0 * r.reference_ms / r.median_ms);
  } else if (!r.interleaved_note.empty()) {
    std::printf("cuBLAS     not timed beside it: %s\n", r.interleaved_note.c_str());
  }
  if (r.occupancy) {
    const auto& o = *r.occupancy;
    std::printf(
        "occupancy  %d threads/block, %d regs/thread, %d B smem: %d blocks/SM (API %d), limited by %s; "
        "%.1f %% of warps; %lld blocks = %.2f waves, last %.0f %% full\n",
        o.res.threads_per_block, o.res.regs_per_thread, o.res.static_smem + o.res.dynamic_smem,
        o.blocks_per_sm, o.api_blocks_per_sm, o.limiter.c_str(), 100 * o.occupancy, (long long)o.grid_blocks,
        o.waves, 100 * o.tail_fill);
  }
  if (r.trace) {
    const ts::ScheduleSummary s = ts::summarize_schedule(*r.trace);
    int used = 0;
    for (int c : s.tiles_per_sm) used += c > 0;
    const bool split = r.trace->grid_z > 1;
    std::printf(
        "trace      %s on %d SMs (%s), mean %s %.1f us, up to %d resident, %d in a row per SM; "
        "traced/plain %.4f / %.4f ms = %.3f; timer step %llu ns\n",
        ts::describe_grid(*r.trace).c_str(), used,
        s.problem.empty() ? (split ? "every block once" : "every tile once") : s.problem.c_str(),
        split ? "block" : "tile", s.mean_tile_us, s.max_concurrency, s.waves, r.trace->traced_ms,
        r.trace->plain_ms, r.trace->plain_ms > 0 ? r.trace->traced_ms / r.trace->plain_ms : 0.0,
        (unsigned long long)r.trace->timer_resolution_ns);
  } else if (!r.trace_note.empty()) {
    std::printf("trace      %s\n", r.trace_note.c_str());
  }
}

// [SECTION] tilescope list --occupancy GPU: the theoretical occupancy of every kernel x tile on a GPU of the
// catalog (no GPU needed: registers and shared memory from the build-time table), or on this machine's GPU
// (`device`), where the build's figures are checked against the driver's.
int cmd_list_occupancy(const std::string& gpu_id, bool as_json) {
  const auto& table = ts::build_resources();
  const bool on_device = gpu_id == "device";
  std::shared_ptr<ts::Backend> backend;
  ts::GpuModel gpu;
  if (on_device) {
    std::string why;
    if (ts::cuda_device_count(&why) == 0)
      throw std::runtime_error("--occupancy device needs a CUDA device (" + why +
                               "); name a GPU instead: t4, a100, l4, rtx4090, h100");
    backend = ts::make_backend(ts::BackendChoice::Cuda, nullptr);
    gpu = ts::gpu_model_of(backend->device_info());
  } else {
    gpu = ts::find_gpu(gpu_id);
  }
  const int64_t n = 4096;
  nlohmann::json rows = nlohmann::json::array();
  int mismatches = 0;
  std::string arch_note;
  if (!as_json) {
    std::printf("%s occupancy on %s (sm_%d, %d SMs, %d threads, %d blocks, %d KiB shared memory per SM)%s\n",
                on_device ? "Measured device:" : "THEORETICAL", gpu.name.c_str(), gpu.sm, gpu.limits.sm_count,
                gpu.limits.max_threads_per_sm, gpu.limits.max_blocks_per_sm, gpu.limits.smem_per_sm / 1024,
                on_device ? "" : ", no GPU used");
    std::printf("Registers and shared memory: %s\n", ts::build_resources_note().c_str());
    std::printf("%-12s %5s %7s %5s %12s %9s %-34s %6s %8s%s\n", "kernel", "tile", "threads", "regs",
                "smem st+dyn", "blocks/SM", "limited by", "occ.", "waves",
                on_device ? "  driver: regs, smem, blocks/SM" : "");
  }
  for (const auto& k : ts::builtin_kernel_infos()) {
    for (int tile : k.tiles.empty() ? std::vector<int>{0} : k.tiles) {
      const ts::ResourceLookup lk = ts::lookup_resources(table, k.id, tile, true, gpu.sm);
      if (!lk.row) continue;  // cuBLAS (closed kernels), or not in this build
      if (!lk.exact_arch) arch_note = lk.note;
      const ts::OccupancyInputs in = ts::inputs_from(*lk.row);
      std::string cannot;
      if (k.min_sm > gpu.sm)
        cannot =
            "needs compute capability " + std::to_string(k.min_sm / 10) + "." + std::to_string(k.min_sm % 10);
      else if (k.id == "wgmma_tf32" && gpu.sm != 90)
        cannot = "sm_90a code: runs on compute capability 9.0 only";
      ts::OccupancyReport o;
      if (cannot.empty()) {
        try {
          o = ts::theoretical_occupancy(gpu, in, n, n);
        } catch (const ts::ValidationError& e) {
          cannot = std::string("does not fit: ") + e.what();
        }
      }
      if (!cannot.empty()) {
        rows.push_back({{"kernel", k.id}, {"tile", tile}, {"arch", lk.row->arch}, {"error", cannot}});
        if (!as_json) std::printf("%-12s %5d %s\n", k.id.c_str(), tile, cannot.c_str());
        continue;
      }
      nlohmann::json row = {{"kernel", k.id},
                            {"tile", tile},
                            {"arch", lk.row->arch},
                            {"exact_arch", lk.exact_arch},
                            {"threads", in.threads_per_block},
                            {"regs", in.regs_per_thread},
                            {"static_smem", in.static_smem},
                            {"dynamic_smem", in.dynamic_smem},
                            {"spill_bytes", lk.row->spill_bytes},
                            {"blocks_per_sm", o.blocks_per_sm},
                            {"by_threads", o.by_threads},
                            {"by_regs", o.by_regs},
                            {"by_smem", o.by_smem},
                            {"by_blocks", o.by_blocks},
                            {"limiter", o.limiter},
                            {"occupancy", o.occupancy},
                            {"waves_4096", o.waves}};
      std::string driver;
      if (on_device && k.min_sm <= gpu.sm) {
        ts::ProblemSpec spec;
        spec.m = spec.n = spec.k = n;
        spec.kernel = k.id;
        spec.tile = tile;
        if (const auto li = backend->launch_info(spec); li && li->occupancy.res.threads_per_block > 0) {
          const ts::KernelResources& r = li->occupancy.res;
          const bool match = r.regs_per_thread == in.regs_per_thread && r.static_smem == in.static_smem &&
                             r.dynamic_smem == in.dynamic_smem &&
                             r.threads_per_block == in.threads_per_block &&
                             li->occupancy.api_blocks_per_sm == o.blocks_per_sm;
          mismatches += !match;
          row["driver"] = {{"regs", r.regs_per_thread},
                           {"static_smem", r.static_smem},
                           {"dynamic_smem", r.dynamic_smem},
                           {"threads", r.threads_per_block},
                           {"api_blocks_per_sm", li->occupancy.api_blocks_per_sm},
                           {"match", match}};
          char b[96];
          std::snprintf(b, sizeof b, "  %d, %d+%d, %d: %s", r.regs_per_thread, r.static_smem, r.dynamic_smem,
                        li->occupancy.api_blocks_per_sm, match ? "match" : "DIFFERENT");
          driver = b;
        }
      }
      rows.push_back(row);
      if (!as_json) {
        char smem[32];
        std::snprintf(smem, sizeof smem, "%d+%d", in.static_smem, in.dynamic_smem);
        std::printf("%-12s %5d %7d %5d %12s %9d %-34s %5.1f%% %8.2f%s\n", k.id.c_str(), tile,
                    in.threads_per_block, in.regs_per_thread, smem, o.blocks_per_sm, o.limiter.c_str(),
                    100 * o.occupancy, o.waves, driver.c_str());
      }
    }
  }
  if (as_json) {
    nlohmann::json j = {{"gpu", gpu.name},
                        {"id", gpu.id},
                        {"theoretical", !on_device},
                        {"compute_capability", gpu.sm},
                        {"sm_count", gpu.limits.sm_count},
                        {"source", ts::build_resources_note()},
                        {"arch_note", arch_note},
                        {"shape", "4096^3"},
                        {"kernels", rows}};
    if (on_device) j["mismatches"] = mismatches;
    std::cout << j.dump(2) << "\n";
  } else if (rows.empty()) {
    std::printf("(no kernels in the build-time table)\n");
  } else {
    if (!arch_note.empty()) std::printf("note: %s\n", arch_note.c_str());
    std::printf("waves: grid blocks of a 4096^3 problem / (blocks per SM x %d SMs)%s\n", gpu.limits.sm_count,
                on_device ? (mismatches ? "; the build's figures DIFFER from the driver's"
                                        : "; the build's figures match the driver's")
                          : "");
  }
  return on_device && mismatches ? kExitFailed : kExitOk;
}

int cmd_list(bool as_json) {
  std::string why;
  const int devices = ts::cuda_device_count(&why);
  const auto infos = ts::builtin_kernel_infos();
  if (as_json) {
    nlohmann::json j;
    j["cuda_compiled"] = ts::cuda_compiled();
    j["cuda_devices"] = devices;
    for (const auto& k : infos)
      j["kernels"].push_back({{"name", k.id},
                              {"title", k.title},
                              {"description", k.description},
                              {"tiles", k.tiles},
                              {"tile_labels", k.tile_labels},
                              {"default_tile", k.default_tile},
                              {"threads_per_block", k.threads_per_block},
                              {"reference", k.is_reference},
                              {"teaching", k.teaching},
                              {"tf32", k.tf32},
                              {"min_sm", k.min_sm},
                              {"cuda", k.has_cuda},
                              {"cpu", k.cpu != nullptr}});
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  for (const auto& k : infos) {
    const std::string backends =
        std::string(k.has_cuda ? "cuda" : "") + (k.has_cuda && k.cpu ? "," : "") + (k.cpu ? "cpu" : "");
    std::printf("%-13s %s [%s]\n", k.id.c_str(), k.label().c_str(),
                backends.empty() ? "not built" : backends.c_str());
    std::printf("              %s\n", k.description.c_str());
    for (size_t i = 0; i < k.tiles.size(); ++i)
      std::printf("              --tile %-3d %s%s\n", k.tiles[i],
                  i < k.tile_labels.size() ? k.tile_labels[i].c_str() : "",
                  k.tiles[i] == k.default_tile ? " (default)" : "");
    if (k.min_sm)
      std::printf("              needs compute capability %d.%d or newer\n", k.min_sm / 10, k.min_sm % 10);
  }
  std::printf("\nCUDA backend: %s\n", !ts::cuda_compiled() ? "not built (no nvcc at build time)"
                                      : devices > 0        ? (std::to_string(devices) + " device(s)").c_str()
                                                           : ("no device (" + why + ")").c_str());
  return kExitOk;
}

// --zoom ROW0,COL0,ROWS,COLS: a rectangle inside C (and A, B where they are that large).
std::array<double, 4> parse_zoom(const std::string& text, const ts::ProblemSpec& s) {
  std::array<double, 4> z{};
  const std::vector<std::string> parts = ts::split_fields(text, ',');
  if (parts.size() != 4)
    throw ts::ValidationError("--zoom = '" + text + "' is not ROW0,COL0,ROWS,COLS (four whole numbers, not " +
                              std::to_string(parts.size()) + " values)");
  for (size_t i = 0; i < 4; ++i) {
    const std::string& part = parts[i];
    const bool digits =
        !part.empty() && part.size() <= 12 && part.find_first_not_of("0123456789") == std::string::npos;
    if (!digits || (i >= 2 && std::stoll(part) < 1))
      throw ts::ValidationError("--zoom = '" + text + "': '" + part + "' is not a whole number" +
                                (i >= 2 ? " of at least 1" : ""));
    z[i] = double(std::stoll(part));
  }
  if (z[0] + z[2] > double(s.m) || z[1] + z[3] > double(s.n))
    throw ts::ValidationError("--zoom = '" + text + "' reaches outside C (" + std::to_string(s.m) + " x " +
                              std::to_string(s.n) + ")");
  return z;
}

// Standard output, or `path` written whole through the program's writer (checked by check_output_path first).
void write_text_output(const std::string& path, const std::string& text, bool force) {
  if (path.empty()) {
    std::fputs(text.c_str(), stdout);
    if (std::fflush(stdout) != 0 || std::ferror(stdout))
      throw std::runtime_error("writing to standard output failed");
    return;
  }
  ts::write_file(path, text, replace_if(force));
  std::fprintf(stderr, "wrote %s\n", path.c_str());
}

// Options given with an empty value (--size "") are refused, not taken for "not given".
void refuse_empty_values(CLI::App* cmd) {
  for (const CLI::Option* opt : cmd->get_options())
    for (const std::string& v : opt->results())
      if (v.find_first_not_of(" \t") == std::string::npos && opt->get_expected_min() > 0)
        throw ts::ValidationError(opt->get_name() + " is empty; give it a value or leave it out");
}

// Every value given must be UTF-8: titles, names and paths go into JSON, CSV and messages (a value that is
// not is refused here, before any work, instead of failing in the JSON writer after it).
void refuse_invalid_utf8(CLI::App* cmd) {
  for (const CLI::Option* opt : cmd->get_options())
    for (const std::string& v : opt->results()) ts::require_utf8(v, opt->get_name());
}

// "0" or "00": the documented "none" of an option that takes 0 (--frame-seconds 0 skips), however many zeros;
// false for anything else, which the option's own parser then checks.
bool means_zero(const std::string& text) {
  return !text.empty() && text.find_first_not_of('0') == std::string::npos;
}

ts::gfx::GlChoice parse_gl_choice_or_usage(const std::string& s) {
  try {
    return ts::gfx::parse_gl_choice(s);
  } catch (const std::invalid_argument& e) {
    throw ts::ValidationError(e.what());
  }
}

// [SECTION] tilescope bench
// Ctrl+C (SIGINT) and SIGTERM (kill, a batch system's time limit) alike: the point being measured is
// cancelled after its current sample, the finished points are written, and bench exits with 128 + the
// signal's number (130, 143). A second signal of the same kind ends the program at once.
std::atomic<int> g_interrupted{0};  // the signal that asked to stop, 0: none
extern "C" void on_stop_signal(int sig) {
  int none = 0;
  g_interrupted.compare_exchange_strong(none, sig);
  std::signal(sig, SIG_DFL);
}

struct BenchArgs {
  ts::cli::KernelFileArgs file;  // your own kernel, measured beside cuBLAS
  std::string kernel;            // its __global__ function, when the file has several
  std::string kernels = "all", shapes, sizes, tiles, format = "md", out, backend = "cuda";
  std::string fix_m, fix_k, ragged, session_out;
  // The measuring policy: empty takes the backend's bench policy (Backend::bench_policy: a GPU's
  // nvbench-style one, or the CPU's, which a shared CPU can meet).
  std::string min_samples, max_samples, min_time, max_noise, max_time;
  bool cold = false, force = false;
};

using ts::parse_positive;  // core/problem.hpp

// The kernels x tiles to measure: a list of names or all (every kernel but the teaching ones) that this
// backend can run, each at every tile it supports (or those of --tiles), cuBLAS of the same precision added
// for % of cuBLAS.
std::vector<ts::KernelTile> bench_configs(const BenchArgs& a, const ts::Backend& backend) {
  const auto infos = backend.kernels();
  const bool cuda = backend.kind() == "cuda";
  std::vector<const ts::KernelInfo*> kernels;
  if (a.kernels == "all") {
    for (const auto& k : infos)
      if (!k.teaching && (cuda ? k.has_cuda : k.cpu != nullptr)) kernels.push_back(&k);
  } else {
    for (const std::string& name : ts::split_fields(a.kernels, ',')) {
      if (name.empty()) throw ts::ValidationError("--kernels '" + a.kernels + "' has an empty entry");
      const ts::KernelInfo* k = ts::find_kernel(infos, name);
      if (!k) throw ts::ValidationError("--kernels: unknown kernel '" + name + "' (see `tilescope list`)");
      kernels.push_back(k);
    }
  }
  std::vector<int> tiles;
  if (!a.tiles.empty())
    for (const std::string& t : ts::split_fields(a.tiles, ',')) {
      if (t.empty()) throw ts::ValidationError("--tiles '" + a.tiles + "' has an empty entry");
      tiles.push_back(int(ts::parse_dim(t, "--tiles")));
    }
  if (cuda) {  // % of cuBLAS needs cuBLAS at the same shape and precision: add it when it was not asked for
    bool fp32 = false, tf32 = false, has_fp32_ref = false, has_tf32_ref = false;
    for (const auto* k : kernels) {
      (k->tf32 ? tf32 : fp32) = true;
      has_fp32_ref |= k->id == "cublas";
      has_tf32_ref |= k->id == "cublas_tf32";
    }
    if (fp32 && !has_fp32_ref) kernels.push_back(ts::find_kernel(infos, "cublas"));
    if (tf32 && !has_tf32_ref) kernels.push_back(ts::find_kernel(infos, "cublas_tf32"));
  }
  std::vector<ts::KernelTile> configs;
  for (const auto* k : kernels) {
    if (k->tiles.empty()) {
      configs.push_back({k->id, 0});
      continue;
    }
    bool any = false;
    for (int t : k->tiles)
      if (tiles.empty() || std::find(tiles.begin(), tiles.end(), t) != tiles.end()) {
        configs.push_back({k->id, t});
        any = true;
      }
    if (!any)
      std::fprintf(stderr, "tilescope bench: skipping %s (none of --tiles %s applies)\n", k->id.c_str(),
                   a.tiles.c_str());
  }
  if (configs.empty()) throw ts::ValidationError("nothing to measure: no kernel supports the tiles given");
  return configs;
}

int cmd_bench(const BenchArgs& a) {
  // Everything the person typed is checked before a device is opened.
  if (!a.sizes.empty() && !a.shapes.empty())
    throw ts::ValidationError("give either --shapes or --sizes, not both");
  if (!a.fix_m.empty() && !a.fix_k.empty())
    throw ts::ValidationError("give at most one of --fix-m and --fix-k");
  if (a.sizes.empty() && (!a.fix_m.empty() || !a.fix_k.empty() || !a.ragged.empty()))
    throw ts::ValidationError("--fix-m, --fix-k and --ragged go with --sizes");
  ts::SweepSpec sweep;
  std::vector<ts::Shape> shapes;
  if (!a.sizes.empty()) {
    sweep.sizes = ts::parse_sizes(a.sizes);
    if (!a.fix_m.empty()) {
      sweep.shape = ts::SweepShape::FixedM;
      sweep.fixed = ts::parse_dim(a.fix_m, "--fix-m");
    } else if (!a.fix_k.empty()) {
      sweep.shape = ts::SweepShape::FixedK;
      sweep.fixed = ts::parse_dim(a.fix_k, "--fix-k");
    }
    if (!a.ragged.empty()) {
      sweep.ragged = int(ts::parse_dim(a.ragged, "--ragged"));
      if (sweep.ragged > 1024) throw ts::ValidationError("--ragged = " + a.ragged + " is above 1024");
    }
  } else {
    shapes = ts::parse_shapes(a.shapes.empty() ? "1024,4096,2048x4096x8192,4099" : a.shapes);
  }
  // The backend's bench policy with what was given over it (checked here, before any device is opened).
  auto policy_for = [&a](ts::MeasurePolicy p) {
    if (!a.min_samples.empty()) p.min_samples = int(ts::parse_dim(a.min_samples, "--min-samples"));
    if (!a.max_samples.empty())
      p.max_samples = int(std::min<int64_t>(ts::parse_dim(a.max_samples, "--max-samples"), 1000000));
    if (!a.min_time.empty()) p.min_seconds = parse_positive(a.min_time, "--min-time");
    if (!a.max_noise.empty()) p.max_noise = parse_positive(a.max_noise, "--max-noise") / 100.0;
    if (!a.max_time.empty()) p.max_seconds = parse_positive(a.max_time, "--max-time");
    if (a.min_samples.empty()) p.min_samples = std::min(p.min_samples, p.max_samples);  // a cap given alone
    p.cold_l2 = a.cold;
    ts::validate_policy(p);
    return p;
  };
  policy_for(a.backend == "cpu" ? ts::MeasurePolicy::cpu_bench() : ts::MeasurePolicy::bench());
  if (a.format != "md" && a.format != "csv" && a.format != "json")
    throw ts::ValidationError("--format '" + a.format + "' is not one of md, csv, json");
  ts::check_output_path(a.out, replace_if(a.force), "--out");
  ts::check_output_path(a.session_out, replace_if(a.force), "--session-out");
  const auto all_kernels = ts::builtin_kernel_infos();
  if (a.kernels != "all")
    for (const std::string& name : ts::split_fields(a.kernels, ',')) {
      if (name.empty()) throw ts::ValidationError("--kernels '" + a.kernels + "' has an empty entry");
      if (!ts::find_kernel(all_kernels, name))
        throw ts::ValidationError("--kernels: unknown kernel '" + name + "' (see `tilescope list`)");
    }
  if (!a.tiles.empty())
    for (const std::string& t : ts::split_fields(a.tiles, ',')) {
      if (t.empty()) throw ts::ValidationError("--tiles '" + a.tiles + "' has an empty entry");
      ts::parse_dim(t, "--tiles");
    }
  const ts::BackendChoice choice = ts::parse_backend_choice(a.backend);
  if (choice == ts::BackendChoice::Auto)
    throw ts::ValidationError("bench --backend is cuda or cpu (a benchmark names its device)");

  std::string why;
  if (choice == ts::BackendChoice::Cuda && ts::cuda_device_count(&why) == 0)
    throw std::runtime_error("tilescope bench needs a CUDA device (or --backend cpu): " + why);
  const auto backend = ts::make_backend(choice, nullptr);
  const ts::MeasurePolicy policy = policy_for(backend->bench_policy());
  BenchArgs with_file = a;
  if (!a.file.file.empty()) {
    // Your kernel, beside cuBLAS (and beside the kernels named with --kernels, when there are any).
    const std::string id = ts::cli::load_kernel_file(a.file, a.kernel, "", *backend);
    with_file.kernels = a.kernels == "all" ? id : a.kernels + "," + id;
  }
  const std::vector<ts::KernelTile> configs = bench_configs(with_file, *backend);
  std::vector<ts::ProblemSpec> points;
  if (!sweep.sizes.empty()) {
    sweep.configs = configs;
    points = ts::expand_sweep(sweep);
  } else {
    for (const auto& sh : shapes)
      for (const auto& c : configs) {
        ts::ProblemSpec p;
        p.m = sh.m;
        p.n = sh.n;
        p.k = sh.k;
        p.kernel = c.kernel;
        p.tile = c.tile;
        points.push_back(p);
      }
  }

  using clock = std::chrono::steady_clock;
  const auto t0 = clock::now();
  ts::validate_sweep(*backend, points, policy);  // every refusal before anything is measured
  const ts::DeviceInfo dev = backend->device_info();
  ts::BenchMeta meta = ts::bench_meta(dev);
  meta.cold = a.cold;
  meta.policy = policy.describe();
  meta.interleave_reference = policy.interleave_reference;
  if (!sweep.sizes.empty()) meta.sweep = sweep.describe();
  // Wave marks: where each configuration's grid needs one more wave on this device (GPU only).
  if (!sweep.sizes.empty() && dev.sm_count > 0) {
    const std::vector<int64_t> all = sweep.all_sizes();
    for (const auto& c : configs) {
      const auto li = backend->launch_info(sweep.problem(all.back(), c));
      if (!li || li->occupancy.blocks_per_sm <= 0) continue;
      for (const auto& w : ts::wave_marks(sweep, all.front(), all.back(), li->tile_m, li->tile_n,
                                          li->occupancy.blocks_per_sm, dev.sm_count, li->blocks_per_tile))
        meta.wave_marks.push_back({c.kernel, c.tile, w.size, w.waves});
    }
  }
  std::signal(SIGINT, on_stop_signal);
  std::signal(SIGTERM, on_stop_signal);
  ts::CancelToken stop;
  std::atomic<bool> watching{true};
  std::thread watcher([&] {  // Ctrl-C or SIGTERM: cancel after the current sample
    while (watching.load()) {
      if (g_interrupted.load() != 0) {
        stop.cancel();
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  });
  struct StopWatcher {
    std::atomic<bool>& flag;
    std::thread& t;
    ~StopWatcher() {
      flag = false;
      if (t.joinable()) t.join();
    }
  } stop_watcher{watching, watcher};

  ts::CancelToken none;
  meta.dram_gbs = backend->measure_bandwidth(none).gbs;
  std::fprintf(
      stderr, "tilescope bench: %zu points (%s) on %s; %s copy %.0f GB/s; %s\n", points.size(),
      meta.sweep.empty()
          ? ("shapes " + (a.shapes.empty() ? std::string("1024,4096,2048x4096x8192,4099") : a.shapes)).c_str()
          : meta.sweep.c_str(),
      dev.label.c_str(), dev.sm_count > 0 ? "DRAM" : "memory", meta.dram_gbs, policy.describe().c_str());

  std::vector<ts::BenchPoint> table;
  ts::Session session = ts::Session::for_device(dev);
  auto progress = [&](const ts::SweepPointResult& pr, int done, int total) {
    const ts::ProblemSpec& s = pr.spec;
    if (!pr.result) {
      ts::BenchPoint p;
      p.kernel = s.kernel;
      p.tile = s.tile;
      p.m = s.m;
      p.n = s.n;
      p.k = s.k;
      p.error = pr.error;
      p.stop = "failed";
      table.push_back(p);
      std::fprintf(stderr, "[%d/%d] %-12s %-3d %lldx%lldx%lld  ERROR: %s\n", done, total, s.kernel.c_str(),
                   s.tile, (long long)s.m, (long long)s.n, (long long)s.k, pr.error.c_str());
      return;
    }
    const ts::RunResult& r = *pr.result;
    session.add(r);
    const ts::BenchPoint p = ts::bench_point(r, r.tf32 ? dev.peak_tf32_tflops : dev.peak_fp32_tflops);
    table.push_back(p);
    std::string beside;  // the interleaved cuBLAS, when there is one
    if (p.reference_samples > 0 && p.stats.median > 0)
      beside =
          "  cuBLAS " + ts::format_ms(p.reference_median_ms) + " (" +
          ts::CsvWriter::num(100.0 * p.reference_median_ms / p.stats.median, "%.1f") + " %)" +
          (p.clocks_differ ? ", CLOCKS DIFFER " + ts::CsvWriter::num(p.sm_clock_median_mhz, "%.0f") + " / " +
                                 ts::CsvWriter::num(p.reference_clock_median_mhz, "%.0f") + " MHz"
                           : "");
    if (p.verified)
      std::fprintf(stderr, "[%d/%d] %-12s %-3d %lldx%lldx%lld  median %s  %s  %s%s%s\n", done, total,
                   p.kernel.c_str(), p.tile, (long long)p.m, (long long)p.n, (long long)p.k,
                   ts::format_ms(p.stats.median).c_str(), ts::format_flops(p.tflops * 1e12).c_str(),
                   ts::describe_stop(p.stop, p.noise, p.stats.count).c_str(),
                   p.throttled ? ", THROTTLED" : "", beside.c_str());
    else
      std::fprintf(
          stderr,
          "[%d/%d] %-12s %-3d %lldx%lldx%lld  FAILED verification (max abs err %.3e > %.3e): not timed\n",
          done, total, p.kernel.c_str(), p.tile, (long long)p.m, (long long)p.n, (long long)p.k,
          p.max_abs_err, p.tolerance);
  };
  ts::RunRequest base;
  base.memcheck_new_builds = !a.file.no_guard;
  const int done = ts::run_sweep(*backend, points, policy, stop, progress, {}, base);
  meta.interrupted = stop.cancelled() && done < int(points.size());
  meta.wall_seconds = std::chrono::duration<double>(clock::now() - t0).count();
  ts::relate_to_cublas(table);
  write_text_output(a.out, ts::format_bench(a.format, meta, table), a.force);
  if (!a.session_out.empty()) {
    ts::save_session(a.session_out, session, a.force);
    std::fprintf(stderr, "wrote %s (%zu points)\n", a.session_out.c_str(), session.records.size());
  }
  std::fprintf(stderr, "tilescope bench: %d points in %.1f s\n", done, meta.wall_seconds);
  if (meta.interrupted) {
    const int sig = g_interrupted.load();
    std::fprintf(stderr, "tilescope bench: interrupted (%s); %zu points kept\n",
                 sig == SIGTERM ? "SIGTERM" : "Ctrl+C", table.size());
    return 128 + (sig ? sig : SIGINT);
  }
  return kExitOk;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "TileScope: see how a CUDA matrix multiplication really runs.\n"
      "With no command, opens the window."};
  app.set_version_flag("--version", std::string("tilescope ") + ts::kVersion + " (" + ts::kGitCommit + ")");
  std::string gui_backend = "auto";
  app.add_option("--backend", gui_backend, "GUI backend: auto, cuda or cpu")->capture_default_str();
  std::string gui_kernel_file;
  app.add_option("--kernel-file", gui_kernel_file,
                 "open the window with your own kernel (a .cu file or a KernelBench answer, .py)");
  bool gui_log = false;
  app.add_flag(
      "--log", gui_log,
      "the window also prints its messages (View > Messages) and every point it measures to standard "
      "error");

  auto* list = app.add_subcommand("list", "print the kernels and their metadata");
  bool list_json = false;
  list->add_flag("--json", list_json, "print JSON");
  std::string list_occupancy, list_arch, list_gpu;
  ts::cli::KernelFileArgs list_file;
  ts::cli::add_kernel_file_options(list, list_file);
  list->add_option(
      "--arch", list_arch,
      "with --kernel-file: compile for this architecture (one NVRTC compiles for, e.g. sm_90 or 8.9: NVRTC "
      "13.0 takes sm_75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121; or device; default: this machine's "
      "GPU, else sm_90)");
  list->add_option(
      "--gpu", list_gpu,
      "with --kernel-file: the GPU the occupancy is for: t4, a100, l4, rtx4090, h100 (default: this "
      "machine's GPU, else the catalog's GPU of --arch)");
  list->add_option(
      "--occupancy", list_occupancy,
      "theoretical occupancy of every kernel x tile on a GPU: t4, a100, l4, rtx4090, h100 (no GPU "
      "needed), or device (this machine's GPU, checked against the driver)");

  auto* run =
      app.add_subcommand("run", "run one kernel once, verify it against the reference, print the result");
  ProblemArgs run_args;
  add_problem_options(run, run_args);
  std::string out_npy;
  bool run_json = false, run_force = false;
  std::string samples;  // empty: the backend's default
  run->add_option("--out", out_npy, "write C to this .npy file");
  run->add_option("--samples", samples, "timed launches, 1 to 100000 (default: 10 on CUDA, 3 on the CPU)");
  run->add_flag("--json", run_json, "print a JSON object instead of text");
  run->add_flag("--force", run_force, "replace existing --out and --trace-csv files (regular files only)");
  bool run_profile = false, run_suggest = false;
  std::string trace_csv;
  run->add_flag("--suggest-tile", run_suggest,
                "also time every other tile of the kernel at this shape (the bench policy for all, unless "
                "--samples) and print the fastest, from those measurements");
  run->add_flag("--profile", run_profile, "GPU: also print occupancy and a traced launch's tile schedule");
  run->add_option("--trace-csv", trace_csv,
                  "with --profile: write the tile schedule (one row per tile) here");
  bool run_sanitize = false;
  run->add_flag(
      "--sanitize", run_sanitize,
      "with --kernel-file: run your kernel once under compute-sanitizer memcheck and racecheck (shape "
      "made small: each side at most 511, with its partial tiles) and print their reports instead of timing "
      "it");

  auto* snap = app.add_subcommand("snapshot", "render the whole GUI offscreen and write a PNG");
  ProblemArgs snap_args;
  add_problem_options(snap, snap_args);
  std::string snap_out, width = "1600", height = "1000", layout_json, snap_scale = "1";
  bool snap_force = false;
  snap->add_option("--out", snap_out, "PNG file to write")->required();
  snap->add_option("--width", width, "image width in pixels (320..8192)")->capture_default_str();
  snap->add_option("--height", height, "image height in pixels (240..8192)")->capture_default_str();
  std::string snap_theme = "dark";
  snap->add_option("--theme", snap_theme, "dark or light")->capture_default_str();
  snap->add_option("--scale", snap_scale,
                   "content scale of the screen to imitate (0.5..4; 2 for a HiDPI screen)")
      ->capture_default_str();
  snap->add_option("--layout-json", layout_json,
                   "also write the panels' and heatmaps' rectangles (for tests)");
  snap->add_flag("--force", snap_force,
                 "replace existing --out and --layout-json files (regular files only)");
  std::string snap_gl = "auto", snap_zoom, snap_export;
  snap->add_option("--export-panels", snap_export,
                   "also export every profiler panel (PNG + CSV, as its button does) into this folder");
  snap->add_option("--gl", snap_gl, "offscreen OpenGL: auto (EGL device, else an X display), egl or x11")
      ->capture_default_str();
  std::string snap_front, snap_session;
  snap->add_option(
      "--session", snap_session,
      "show this saved session's points in the plots (read only; another device's as an overlay)");
  snap->add_option("--front", snap_front,
                   "comma-separated panels to show in front of their tabs (e.g. Sweep,Roofline)");
  snap->add_option("--zoom", snap_zoom,
                   "heatmaps show ROW0,COL0,ROWS,COLS (e.g. 0,0,96,96 to see the tile grid)");

  auto* bench =
      app.add_subcommand("bench", "measure kernels x shapes on the GPU, verified against cuBLAS first");
  BenchArgs bench_args;
  ts::cli::add_kernel_file_options(bench, bench_args.file);
  bench->add_option("--kernel", bench_args.kernel, "with --kernel-file: the __global__ function to measure");
  bench
      ->add_option("--kernels", bench_args.kernels,
                   "comma-separated kernel names, or all (no teaching variants)")
      ->capture_default_str();
  bench->add_option("--shapes", bench_args.shapes,
                    "comma-separated N (for N^3) or MxNxK (default 1024,4096,2048x4096x8192,4099)");
  bench->add_option("--sizes", bench_args.sizes,
                    "sweep: N, FROM:TO:STEP or FROM:TO:xF, comma-separated (e.g. 256:8192:256); square "
                    "unless --fix-m or --fix-k");
  bench->add_option("--fix-m", bench_args.fix_m, "sweep with M fixed (N = K = each size)");
  bench->add_option("--fix-k", bench_args.fix_k, "sweep with K fixed (M = N = each size)");
  bench->add_option("--ragged", bench_args.ragged,
                    "sweep: also measure every size + this offset (1..1024), a partial tile at every size");
  bench->add_option("--backend", bench_args.backend, "cuda or cpu")->capture_default_str();
  bench->add_option("--session-out", bench_args.session_out,
                    "also write the points as a TileScope session (open it in the window to overlay)");
  bench->add_option("--tiles", bench_args.tiles,
                    "only these tile values (default: every tile each kernel supports)");
  bench->add_option("--format", bench_args.format, "md, csv or json")->capture_default_str();
  bench->add_option("--out", bench_args.out, "write the table here instead of standard output");
  bench->add_flag("--force", bench_args.force,
                  "replace an existing --out / --session-out file (a regular file only)");
  bench->add_flag("--cold", bench_args.cold, "flush the L2 cache before every sample");
  bench->add_option("--min-samples", bench_args.min_samples,
                    "at least this many samples per point (default: 10 on a GPU, 20 on the CPU)");
  bench->add_option("--max-samples", bench_args.max_samples,
                    "at most this many samples per point (default: 100000 on a GPU, 100 on the CPU)");
  bench->add_option("--min-time", bench_args.min_time,
                    "and at least this many seconds of kernel time (default: 0.5 on a GPU, 0.05 on the CPU)");
  bench->add_option(
      "--max-noise", bench_args.max_noise,
      "stop when the relative std. deviation is below this % (default: 0.5 on a GPU, 2 on the CPU)");
  bench->add_option("--max-time", bench_args.max_time,
                    "seconds per point before giving up on the noise target (default: 10)");

  auto* fig = app.add_subcommand(
      "figure",
      "one plot as a figure (PNG + CSV + JSON): of a saved session, or measured first (a sweep, the ladder)");
  ts::cli::FigureArgs fig_args;
  ts::cli::add_figure_options(fig, fig_args);
  auto* gl_check = app.add_subcommand(
      "gl-check", "check that OpenGL draws what it is told (after a kernel faulted, it may not)");
  ts::cli::GlCheckArgs gl_check_args;
  ts::cli::add_gl_check_options(gl_check, gl_check_args);
  auto* worker =
      app.add_subcommand("worker", "(internal) run a person's kernel for TileScope in its own process");
  ts::cli::WorkerArgs worker_args;
  ts::cli::add_worker_options(worker, worker_args);
  worker->group("");  // not listed in --help: TileScope starts it itself
  auto* compiler = app.add_subcommand("compiler", "(internal) compile a person's kernel for TileScope");
  ts::cli::CompilerArgs compiler_args;
  ts::cli::add_compiler_options(compiler, compiler_args);
  compiler->group("");

  auto* bench_heat = bench->add_subcommand(
      "heatmap", "time heatmap refreshes (CUDA-GL interop vs host) and GUI frames while the kernel re-runs");
  ProblemArgs heat_args;
  add_problem_options(bench_heat, heat_args);
  std::string heat_view = "1024", heat_repeats = "50", heat_seconds = "10", heat_gl = "auto";
  bench_heat->add_option("--view", heat_view, "each heatmap's view size in values (N x N)")
      ->capture_default_str();
  bench_heat->add_option("--repeats", heat_repeats, "timed refreshes per path")->capture_default_str();
  bench_heat->add_option("--frame-seconds", heat_seconds, "seconds of GUI frames with Repeat on (0: skip)")
      ->capture_default_str();
  bench_heat->add_option("--gl", heat_gl, "offscreen OpenGL: auto, egl or x11")->capture_default_str();
  std::string heat_format = "md", heat_out, heat_commits = "0", heat_saves = "0";
  bench_heat
      ->add_option("--saves", heat_saves,
                   "with --kernel-file: also time this many saves of (a copy of) the kernel file to its new "
                   "heatmaps (alternately written by another program and saved from the window's editor)")
      ->capture_default_str();
  bench_heat
      ->add_option("--commits", heat_commits,
                   "also time this many size commits (slider let go -> new heatmaps and Result drawn)")
      ->capture_default_str();
  bool heat_force = false, heat_sweep_quick = false;
  std::string heat_sweep, heat_sweep_kernels = "tiled,cublas", heat_sweep_limit = "600", heat_sweep_session;
  std::string heat_sweep_min = "0.5", heat_sweep_max = "10";
  bench_heat->add_option(
      "--sweep", heat_sweep,
      "instead of Repeat: frames while the window's sweep runs over these sizes (as for bench "
      "--sizes, square)");
  bench_heat
      ->add_option("--sweep-kernels", heat_sweep_kernels, "the sweep's kernels, each at every tile it has")
      ->capture_default_str();
  bench_heat->add_flag("--sweep-quick", heat_sweep_quick, "the sweep with the quick policy instead of bench");
  bench_heat->add_option("--sweep-limit", heat_sweep_limit, "seconds before the sweep is cancelled")
      ->capture_default_str();
  bench_heat
      ->add_option("--sweep-min-time", heat_sweep_min, "the sweep's bench policy: seconds per point at least")
      ->capture_default_str();
  bench_heat
      ->add_option("--sweep-max-time", heat_sweep_max, "the sweep's bench policy: seconds per point at most")
      ->capture_default_str();
  bench_heat->add_option("--sweep-session-out", heat_sweep_session,
                         "write the window's session after the sweep (for tilescope figure --session)");
  bench_heat->add_option("--format", heat_format, "md or json")->capture_default_str();
  bench_heat->add_option("--out", heat_out, "write the report here instead of standard output");
  bench_heat->add_flag("--force", heat_force, "replace an existing --out file (a regular file only)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return kExitUsage;
  }

  try {
    for (CLI::App* cmd : {&app, list, run, snap, bench, bench_heat, fig, gl_check})
      if (cmd == &app || cmd->parsed()) {
        refuse_empty_values(cmd);
        refuse_invalid_utf8(cmd);
      }
    if (*worker) return ts::cli::worker(worker_args);
    if (*compiler) return ts::cli::compiler(compiler_args);
    if (*gl_check) return ts::cli::cmd_gl_check(gl_check_args);
    if (*list) {
      if (!list_file.file.empty()) {
        if (!list_occupancy.empty()) throw ts::ValidationError("give either --kernel-file or --occupancy");
        return ts::cli::list_kernel_file(list_file, list_arch, list_gpu, list_json);
      }
      if (!list_arch.empty() || !list_gpu.empty())
        throw ts::ValidationError("--arch and --gpu go with --kernel-file");
      return list_occupancy.empty() ? cmd_list(list_json) : cmd_list_occupancy(list_occupancy, list_json);
    }
    if (*bench_heat) {
      ts::ui::HeatmapBenchOptions ho;
      ho.gl = parse_gl_choice_or_usage(heat_gl);
      // The outputs before a backend is opened or a kernel file built.
      ts::check_output_path(heat_out, replace_if(heat_force), "--out");
      if (!heat_sweep.empty())
        ts::check_output_path(heat_sweep_session, ts::Replace::Never, "--sweep-session-out", false);
      std::string note;
      if (heat_args.size.empty() && heat_args.m.empty()) heat_args.size = "4096";
      if ((heat_args.kernel.empty() || heat_args.kernel == "tiled") && heat_args.file.file.empty() &&
          heat_args.tile.empty())
        heat_args.tile = "32";
      ho.backend = open_backend(heat_args.backend, &note);
      if (!note.empty()) std::fprintf(stderr, "tilescope: %s\n", note.c_str());
      ho.spec = build_request(heat_args, *ho.backend).spec;
      ho.view = int(ts::parse_dim(heat_view, "--view"));
      if (ho.view > 8192) throw ts::ValidationError("--view = " + heat_view + " is above 8192");
      ho.repeats = int(ts::parse_dim(heat_repeats, "--repeats"));
      ho.frame_seconds = means_zero(heat_seconds) ? 0.0 : parse_positive(heat_seconds, "--frame-seconds");
      ho.commits = means_zero(heat_commits) ? 0 : int(ts::parse_dim(heat_commits, "--commits"));
      if (ho.commits > 1000) throw ts::ValidationError("--commits = " + heat_commits + " is above 1000");
      ho.saves = means_zero(heat_saves) ? 0 : int(ts::parse_dim(heat_saves, "--saves"));
      if (ho.saves > 100) throw ts::ValidationError("--saves = " + heat_saves + " is above 100");
      if (ho.saves > 0 && heat_args.file.file.empty())
        throw ts::ValidationError("--saves needs --kernel-file");
      ho.kernel_file = heat_args.file.file;
      if (!heat_sweep.empty()) {
        ts::SweepSpec sw;
        sw.sizes = ts::parse_sizes(heat_sweep);
        std::stringstream ss(heat_sweep_kernels);
        const std::vector<ts::KernelInfo> registry = ho.backend->kernels();  // a copy: user kernels may join
        for (std::string name; std::getline(ss, name, ',');) {
          const ts::KernelInfo* k = ts::find_kernel(registry, name);
          if (!k) throw ts::ValidationError("--sweep-kernels: unknown kernel '" + name + "'");
          for (int t : k->tiles.empty() ? std::vector<int>{0} : k->tiles) sw.configs.push_back({k->id, t});
        }
        ts::expand_sweep(sw);  // the point limit
        ho.sweep = sw;
        ho.sweep_quick = heat_sweep_quick;
        ho.sweep_limit_s = parse_positive(heat_sweep_limit, "--sweep-limit");
        ho.sweep_min_s = parse_positive(heat_sweep_min, "--sweep-min-time");
        ho.sweep_max_s = parse_positive(heat_sweep_max, "--sweep-max-time");
        ho.sweep_session_out = heat_sweep_session;
      }
      if (heat_format != "md" && heat_format != "json")
        throw ts::ValidationError("bench heatmap --format '" + heat_format + "' is not one of md, json");
      const auto r = ts::ui::run_heatmap_bench(ho);
      const std::string text = ts::ui::format_heatmap_bench(r, ho, heat_format);
      write_text_output(heat_out, text, heat_force);
      return kExitOk;
    }
    if (*bench) return cmd_bench(bench_args);
    if (*fig) return ts::cli::cmd_figure(fig_args, *fig);

    if (*run) {
      // Every option and output before a backend is opened (or a kernel file compiled, or .npy files read).
      int fixed_samples = 0;
      if (!samples.empty()) {  // 0 (or 00) is no number of launches: refused, as every other count is
        fixed_samples = int(ts::parse_dim(samples, "--samples"));
        if (fixed_samples > 100000) throw ts::ValidationError("--samples = " + samples + " is above 100000");
      }
      ts::check_output_path(out_npy, replace_if(run_force), "--out");
      if (!trace_csv.empty() && !run_profile) throw ts::ValidationError("--trace-csv needs --profile");
      ts::check_output_path(trace_csv, replace_if(run_force), "--trace-csv");
      std::string note;
      auto backend = open_backend(run_args.backend, &note);
      if (!note.empty()) std::fprintf(stderr, "tilescope: %s\n", note.c_str());
      if (run_suggest) {  // before anything is compiled or allocated
        const std::vector<ts::KernelInfo> all = backend->kernels();
        const std::string name = run_args.kernel.empty() ? "tiled" : run_args.kernel;
        const ts::KernelInfo* k = ts::find_kernel(all, name);
        if (k && k->tiles.size() < 2)
          throw ts::ValidationError("--suggest-tile: " + name + " has " +
                                    (k->tiles.size() == 1 ? "one tile" : "no tile parameter") +
                                    ": nothing to choose");
        if (run_sanitize) throw ts::ValidationError("--suggest-tile and --sanitize: choose one");
      }
      ts::RunRequest req = build_request(run_args, *backend);
      if (run_sanitize) return ts::cli::sanitize(req, *backend, run_json);
      if (run_suggest && samples.empty()) req.policy = ts::MeasurePolicy::bench();
      if (fixed_samples > 0) {
        ts::MeasurePolicy p = backend->default_policy();
        p.name = "fixed";
        p.min_samples = p.max_samples = fixed_samples;
        p.max_seconds = 60;
        req.policy = p;
      }
      req.keep_output = !out_npy.empty();
      req.profile = run_profile;
      ts::RunQueue queue(backend);  // the same path as the GUI, waited for
      ts::RunOutcome o = queue.wait(queue.submit(req));
      if (!o.result) {
        std::fprintf(stderr, "tilescope: %s\n", o.error.c_str());
        return o.bad_input ? kExitUsage : kExitFailed;
      }
      const ts::RunResult& r = *o.result;
      if (!out_npy.empty()) ts::write_npy(out_npy, *r.c, replace_if(run_force));
      if (run_profile && backend->kind() != "cuda")
        std::fprintf(stderr,
                     "tilescope: --profile needs the CUDA backend; no occupancy or trace on the CPU\n");
      if (!trace_csv.empty() && r.trace)
        ts::write_file(trace_csv, ts::schedule_csv(*r.trace), replace_if(run_force));
      if (!run_suggest) {
        if (run_json)
          std::cout << ts::result_to_json(r).dump(2) << "\n";
        else
          print_result(r);
        return r.error.passed ? kExitOk : kExitFailed;
      }
      // --suggest-tile: every other tile at the same shape and policy, then the fastest of the measured.
      ts::Session measured = ts::Session::for_device(backend->device_info());
      measured.add(r);
      std::vector<std::string> refused;
      const std::vector<ts::KernelInfo> kernels = backend->kernels();
      const ts::KernelInfo* kp = ts::find_kernel(kernels, req.spec.kernel);
      if (!kp || kp->tiles.size() < 2) {
        std::fprintf(stderr, "tilescope: --suggest-tile: %s has no tiles to choose from\n",
                     req.spec.kernel.c_str());
        return kExitUsage;
      }
      const ts::KernelInfo& k = *kp;
      if (!run_json) print_result(r);
      for (const ts::ProblemSpec& p : ts::tile_search_points(k, req.spec)) {
        if (p.tile == req.spec.tile) continue;
        ts::RunRequest other = req;
        other.spec = p;
        other.profile = false;
        other.keep_output = false;
        ts::RunOutcome oo = queue.wait(queue.submit(other));
        if (!oo.result)
          refused.push_back("tile " + std::to_string(p.tile) + ": " + oo.error);
        else
          measured.add(*oo.result);  // a failed one too: the suggestion names it and never picks it
        if (!run_json) std::fprintf(stderr, "tilescope: timed tile %d\n", p.tile);
      }
      const ts::TileSuggestion t = ts::suggest_tile(measured, k, req.spec);
      if (run_json) {
        nlohmann::json j = ts::result_to_json(r);
        nlohmann::json tiles = nlohmann::json::array();
        for (const auto& m : t.measured)
          tiles.push_back({{"tile", m.tile},
                           {"median_ms", m.median_ms},
                           {"p25_ms", m.p25_ms},
                           {"p75_ms", m.p75_ms},
                           {"tflops", m.tflops},
                           {"samples", m.samples}});
        j["tile_suggestion"] = {{"measured", tiles},
                                {"failed_verification", t.failed},
                                {"not_measured", refused},
                                {"fastest", t.fastest ? nlohmann::json(*t.fastest) : nlohmann::json()},
                                {"speedup_over_chosen", t.speedup},
                                {"within_noise", t.within_noise},
                                {"summary", t.summary()}};
        std::cout << j.dump(2) << "\n";
      } else {
        std::printf("\ntiles of %s at %lld x %lld x %lld (%s):\n", k.id.c_str(), (long long)req.spec.m,
                    (long long)req.spec.n, (long long)req.spec.k, r.policy.c_str());
        // One unit per column, the one that keeps the column's largest value readable.
        double max_ms = 0, max_flops = 0;
        for (const auto& m : t.measured) {
          max_ms = std::max(max_ms, m.median_ms);
          max_flops = std::max(max_flops, m.tflops * 1e12);
        }
        const ts::Unit tu = ts::time_unit(max_ms), fu = ts::flops_unit(max_flops);
        std::printf("  %6s  %10s  %10s  %12s  %s\n", "tile", ("median " + tu.name).c_str(),
                    ("IQR " + tu.name).c_str(), fu.name.c_str(), "samples");
        for (const auto& m : t.measured)
          std::printf("  %6d  %10.4g  %10.3g  %12.4g  %zu%s\n", m.tile, m.median_ms * tu.scale,
                      (m.p75_ms - m.p25_ms) * tu.scale, m.tflops * 1e12 * fu.scale, m.samples,
                      m.tile == req.spec.tile ? "  (chosen)" : "");
        for (const auto& why : refused) std::printf("  not measured: %s\n", why.c_str());
        std::printf("%s\n", t.summary().c_str());
      }
      return r.error.passed ? kExitOk : kExitFailed;
    }

    std::string why;
    if (*snap) {
      ts::ui::SnapshotOptions so;
      so.width = int(ts::parse_dim(width, "--width"));
      so.height = int(ts::parse_dim(height, "--height"));
      if (so.width < 320 || so.width > 8192 || so.height < 240 || so.height > 8192)
        throw ts::ValidationError("--width x --height = " + width + " x " + height +
                                  " is outside 320..8192 x 240..8192");
      if (snap_theme != "dark" && snap_theme != "light")
        throw ts::ValidationError("--theme '" + snap_theme + "' is not one of dark, light");
      so.theme = snap_theme == "light" ? ts::Theme::Light : ts::Theme::Dark;
      so.scale = float(parse_positive(snap_scale, "--scale"));
      if (so.scale < 0.5f || so.scale > 4.0f)
        throw ts::ValidationError("--scale = " + snap_scale + " is outside 0.5..4");
      ts::check_output_path(snap_out, replace_if(snap_force), "--out");
      ts::check_output_path(layout_json, replace_if(snap_force), "--layout-json");
      if (!snap_export.empty()) ts::check_output_folder(snap_export, "--export-panels", false);
      so.out_png = snap_out;
      so.overwrite = snap_force;
      so.layout_json = layout_json;
      so.backend = open_backend(snap_args.backend, &so.backend_note);
      so.request = build_request(snap_args, *so.backend);
      so.gl = parse_gl_choice_or_usage(snap_gl);
      if (!snap_zoom.empty()) so.zoom = parse_zoom(snap_zoom, so.request.spec);
      so.session = snap_session;
      for (std::stringstream ss(snap_front); ss.good();) {
        std::string p;
        std::getline(ss, p, ',');
        if (!p.empty()) so.front.push_back(p);
      }
      if (!snap_export.empty()) {
        ts::check_output_folder(snap_export, "--export-panels");  // made now if missing
        so.export_dir = snap_export;
      }
      const int rc = ts::ui::run_snapshot(so);
      std::printf("wrote %s (%d x %d)%s\n", snap_out.c_str(), so.width, so.height,
                  rc == 0 ? "" : "; the run it shows failed verification or errored");
      return rc;
    }

    // The GUI.
    if (!ts::gfx::display_available(&why)) {
      std::fprintf(stderr,
                   "tilescope: %s, so the window cannot open.\n"
                   "Headless commands work without one:\n"
                   "  tilescope list\n"
                   "  tilescope run --size 4096 --kernel tiled --tile 32\n"
                   "  xvfb-run -a tilescope snapshot --out tilescope.png\n",
                   why.c_str());
      return kExitUsage;
    }
    ts::ui::GuiOptions go;
    if (!gui_kernel_file.empty()) {
      ts::read_kernel_source(
          gui_kernel_file);  // a file that cannot be read is refused before the window opens
      go.kernel_file = gui_kernel_file;
    }
    go.log = gui_log;
    go.backend = open_backend(gui_backend, &go.backend_note);
    if (!go.backend_note.empty()) std::fprintf(stderr, "tilescope: %s\n", go.backend_note.c_str());
    return ts::ui::run_gui(go);
  } catch (const ts::ValidationError& e) {
    std::fprintf(stderr, "tilescope: %s\n", e.what());
    return kExitUsage;
  } catch (const ts::gfx::DisplayError& e) {
    if (*snap || *bench_heat || *gl_check)
      std::fprintf(
          stderr,
          "tilescope: %s.\nOffscreen rendering needs an EGL device (--gl egl: a GPU driver or Mesa) or an X "
          "server (--gl x11), e.g. under a virtual one: xvfb-run -a tilescope snapshot ...\n",
          e.what());
    else
      std::fprintf(stderr,
                   "tilescope: %s. Use the headless commands (tilescope run, tilescope list) instead.\n",
                   e.what());
    return kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "tilescope: %s\n", e.what());
    return kExitFailed;
  }
}
