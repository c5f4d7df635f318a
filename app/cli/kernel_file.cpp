// `--kernel-file` on the command line (see kernel_file.hpp).
#include "cli/kernel_file.hpp"
#include "cli/cli.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/engine/gpu_catalog.hpp"
#include "core/user_kernel/kernel_workshop.hpp"
#include "kernels/user/nvrtc_compile.hpp"
#include "kernels/engine/registry.hpp"

namespace ts::cli {

namespace {

UserKernelOptions options_of(const KernelFileArgs& a, const std::string& name, const std::string& tile) {
  UserKernelOptions o;
  o.kernel = name;
  o.params = a.params;
  o.grid = a.grid;
  o.block = a.block;
  o.smem = a.smem;
  o.tile_macro = a.tile_macro;
  o.tf32 = a.tf32;
  if (!a.hang_limit.empty()) o.hang_limit_s = parse_seconds(a.hang_limit, "--hang-limit", 0.5, 600);
  if (!a.compile_limit.empty())
    o.compile_limit_s =
        parse_seconds(a.compile_limit, "--compile-limit", kMinCompileLimitS, kMaxCompileLimitS);
  if (!tile.empty()) {
    const int64_t t = parse_dim(tile, "--tile");
    if (t > 1024) throw ValidationError("--tile = " + tile + " is above 1024");
    o.tile = int(t);
  }
  return o;
}

}  // namespace

void add_kernel_file_options(CLI::App* cmd, KernelFileArgs& a) {
  cmd->add_option(
      "--kernel-file", a.file,
      "your own kernel: a .cu file (or a KernelBench answer, .py), compiled with NVRTC and run in a "
      "worker process; --kernel then names its __global__ function when it has several");
  cmd->add_option(
      "--param", a.params,
      "with --kernel-file: correct a parameter's role, NAME=ROLE (ROLE: A, B, C, or a value such as K "
      "or N*2); repeatable");
  cmd->add_option("--grid", a.grid,
                  "with --kernel-file: the grid, X[,Y[,Z]] formulas (default: ceil(N / TILE), "
                  "ceil(M / TILE))");
  cmd->add_option("--block", a.block,
                  "with --kernel-file: the block, X[,Y[,Z]] formulas (default: TILE, TILE)");
  cmd->add_option("--smem", a.smem,
                  "with --kernel-file: dynamic shared memory in bytes, a formula (default 0)");
  cmd->add_option("--tile-macro", a.tile_macro,
                  "with --kernel-file: the macro or constant the tile sets (default: found by name, e.g. "
                  "TILE_WIDTH), or none");
  cmd->add_option("--hang-limit", a.hang_limit,
                  "with --kernel-file: seconds beyond a launch's expected time before the worker is stopped "
                  "(default 5)");
  cmd->add_option("--compile-limit", a.compile_limit,
                  "with --kernel-file: seconds NVRTC may take for one build before it is stopped (default "
                  "120, at most 3600)");
  cmd->add_flag("--tf32", a.tf32, "with --kernel-file: check with the TF32 tolerance (a tensor-core kernel)");
  cmd->add_flag("--no-guard", a.no_guard,
                "with --kernel-file: run a new build on the GPU without first running it once under "
                "compute-sanitizer memcheck at a small shape (which keeps an out-of-bounds access from "
                "faulting the GPU, and costs a few seconds per new build)");
}

std::string load_kernel_file(const KernelFileArgs& a, const std::string& name, const std::string& tile,
                             Backend& backend) {
  KernelWorkshop* workshop = backend.workshop();
  if (!workshop)
    throw ValidationError("--kernel-file: the " + backend.kind() + " backend takes no kernels of yours");
  const auto k = workshop->open(a.file, options_of(a, name, tile));
  workshop->publish(k);
  for (const auto& n : k->notes()) std::fprintf(stderr, "tilescope: %s: %s\n", k->id().c_str(), n.c_str());
  return k->id();
}

// [SECTION] tilescope list --kernel-file
int list_kernel_file(const KernelFileArgs& a, const std::string& arch_text, const std::string& gpu_id,
                     bool json) {
  const KernelSource src = read_kernel_source(a.file);
  const SourceScan scan = scan_cuda_source(src.text);
  if (scan.kernels.empty())
    choose_kernel(scan, "", a.file);  // refused, saying there is no __global__ function
  // The architecture: asked for, this machine's GPU, or sm_90.
  int arch = 90;
  std::string arch_from = "sm_90 (the default; --arch chooses)";
  std::shared_ptr<Backend> device;
  std::string why;
  if (arch_text == "device" || (arch_text.empty() && cuda_device_count(&why) > 0)) {
    if (cuda_device_count(&why) == 0)
      throw ValidationError("--arch device needs a CUDA device (" + why + ")");
    device = make_backend(BackendChoice::Cuda, nullptr);
    arch = device->device_info().sm;
    arch_from = "sm_" + std::to_string(arch) + " (" + device->device_name() + ")";
  } else {
    // Without a GPU: the CPU backend's workshop builds for any architecture.
    device = make_backend(BackendChoice::Cpu, nullptr);
  }
  const KernelWorkshop& workshop = *device->workshop();
  const bool on_device = device->kind() == "cuda";
  if (!on_device && !arch_text.empty()) {
    arch = parse_arch(arch_text, workshop);
    arch_from = "sm_" + std::to_string(arch);
  }
  // The GPU the occupancy is for: asked for, this one, or the catalog's GPU of that architecture.
  std::optional<GpuModel> gpu;
  if (!gpu_id.empty()) {
    gpu = find_gpu(gpu_id);
  } else if (on_device) {
    gpu = gpu_model_of(device->device_info());
  } else {
    for (const auto& g : gpu_catalog())
      if (g.sm == arch) {
        gpu = g;
        break;
      }
  }
  std::string nvrtc_why;
  const bool can_compile = workshop.can_build(&nvrtc_why);
  nlohmann::json out = {{"file", a.file},
                        {"arch", arch},
                        {"nvrtc", nvrtc_version()},
                        {"occupancy_gpu", gpu ? gpu->name : ""},
                        {"kernels", nlohmann::json::array()}};
  if (!json) {
    std::printf("%s: %zu kernel%s; compiled for %s by NVRTC %s%s\n", a.file.c_str(), scan.kernels.size(),
                scan.kernels.size() == 1 ? "" : "s", arch_from.c_str(), nvrtc_version().c_str(),
                src.from_python ? " (the CUDA source of load_inline in the Python file)" : "");
    if (!can_compile) std::printf("cannot compile: %s\n", nvrtc_why.c_str());
  }
  int bad = 0;
  for (const auto& d : scan.kernels) {
    nlohmann::json jk = {{"name", d.name}, {"line", d.line + src.first_line - 1}};
    std::shared_ptr<const UserKernel> k;
    try {
      k = workshop.open(a.file, options_of(a, scan.kernels.size() == 1 ? "" : d.name, ""));
    } catch (const ValidationError& e) {
      ++bad;
      const KernelUnderstanding u = understand_kernel(scan, d);
      jk["error"] = e.what();
      if (!json)
        std::printf("\n%s (line %d): cannot be run as it is\n%s\n", d.name.c_str(),
                    d.line + src.first_line - 1, e.what());
      out["kernels"].push_back(jk);
      continue;
    }
    jk["id"] = k->id();
    jk["square_only"] = k->square_only();
    jk["tile_symbol"] = k->spec().tile_symbol;
    jk["grid"] = k->spec().grid;
    jk["block"] = k->spec().block;
    jk["smem"] = k->spec().smem;
    nlohmann::json params = nlohmann::json::array();
    for (size_t i = 0; i < d.params.size(); ++i) {
      const ParamBinding& b = k->spec().params[i];
      params.push_back({{"decl", d.params[i].decl},
                        {"role", b.role == ParamRole::Value ? b.value : to_string(b.role)},
                        {"why", b.why}});
    }
    jk["params"] = params;
    if (!json) std::printf("\n%s", k->describe().c_str());
    if (!can_compile) {
      out["kernels"].push_back(jk);
      continue;
    }
    if (!json)
      std::printf("resources for sm_%d (ptxas, per tile)%s:\n  %5s %5s %11s %6s %6s %8s %9s %s\n", arch,
                  gpu ? (" and theoretical occupancy on " + gpu->name + " at 4096^3").c_str() : "", "TILE",
                  "regs", "smem st+dyn", "spill", "stack", "threads", "blocks/SM",
                  gpu ? "limited by, occupancy, waves" : "");
    nlohmann::json tiles = nlohmann::json::array();
    std::string stopped;  // a build the compiler did not finish (crash, time limit): the others are not tried
    for (int t : k->spec().tiles) {
      const int64_t n = 4096;
      nlohmann::json jt = {{"tile", t}};
      if (!stopped.empty()) {
        ++bad;
        jt["error"] = "not tried: " + stopped;
        if (!json) std::printf("  %5d not tried: %s\n", t, stopped.c_str());
        tiles.push_back(jt);
        continue;
      }
      try {
        const ExprVars v{n, n, n, t};
        const auto m = workshop.build(*k, t, arch, v);
        const LaunchGeometry g = launch_geometry(k->spec(), v);
        const PtxasResources& r = m->resources;
        jt.update({{"regs", r.regs},
                   {"static_smem", r.static_smem},
                   {"dynamic_smem", g.smem},
                   {"spill_stores", r.spill_stores},
                   {"spill_loads", r.spill_loads},
                   {"stack", r.stack_bytes},
                   {"threads", g.threads()},
                   {"compile_s", m->compile_s},
                   {"cached", m->from_cache}});
        std::string occ;
        if (gpu) {
          OccupancyInputs in;
          in.threads_per_block = int(g.threads());
          in.regs_per_thread = r.regs;
          in.static_smem = r.static_smem;
          in.dynamic_smem = int(g.smem);
          in.tile_n = int((n + g.grid[0] - 1) / g.grid[0]);
          in.tile_m = int((n + g.grid[1] - 1) / g.grid[1]);
          try {
            const OccupancyReport o = theoretical_occupancy(*gpu, in, n, n);
            jt.update({{"blocks_per_sm", o.blocks_per_sm},
                       {"limiter", o.limiter},
                       {"occupancy", o.occupancy},
                       {"waves_4096", o.waves}});
            char b[160];
            std::snprintf(b, sizeof b, "%9d %s, %.0f %%, %.2f waves", o.blocks_per_sm, o.limiter.c_str(),
                          100 * o.occupancy, o.waves);
            occ = b;
          } catch (const ValidationError& e) {
            jt["occupancy_error"] = e.what();
            occ = std::string("does not fit: ") + e.what();
          }
        }
        if (!json) {
          char smem[32];
          std::snprintf(smem, sizeof smem, "%d+%lld", r.static_smem, (long long)g.smem);
          std::printf("  %5d %5d %11s %6d %6d %8lld %s\n", t, r.regs, smem, r.spill_stores, r.stack_bytes,
                      (long long)g.threads(), occ.c_str());
        }
      } catch (const ValidationError& e) {
        ++bad;
        jt["error"] = e.what();
        if (!json) std::printf("  %5d %s\n", t, e.what());
        if (const auto* ce = dynamic_cast<const CompileError*>(&e);
            ce && ce->module() && !ce->module()->compiler_failure.empty())
          stopped = "the compiler did not finish the build for tile " + std::to_string(t);
      }
      tiles.push_back(jt);
    }
    jk["tiles"] = tiles;
    out["kernels"].push_back(jk);
  }
  if (json) std::cout << out.dump(2) << "\n";
  return bad ? kExitUsage : kExitOk;
}

// [SECTION] tilescope run --sanitize
int sanitize(const RunRequest& req, Backend& backend, bool json) {
  const KernelWorkshop* workshop = backend.workshop();
  const auto k = workshop ? workshop->find(req.spec.kernel) : nullptr;
  if (!k) throw ValidationError("--sanitize checks your own kernel: give it with --kernel-file");
  if (std::string why; !workshop->can_sanitize(&why)) throw ValidationError("--sanitize: " + why);
  const auto reports = workshop->sanitize(*k, req.spec, {"memcheck", "racecheck"}, 600);
  int rc = kExitOk;
  nlohmann::json out = nlohmann::json::array();
  for (const auto& r : reports) {
    const bool clean = r.ran && r.issues == 0;
    if (!clean) rc = kExitFailed;
    if (json) {
      out.push_back({{"tool", r.tool},
                     {"ran", r.ran},
                     {"issues", r.issues},
                     {"summary", r.summary},
                     {"seconds", r.seconds},
                     {"problem", r.problem},
                     {"m", r.shape.m},
                     {"n", r.shape.n},
                     {"k", r.shape.k},
                     {"output", r.output}});
      continue;
    }
    std::printf("== compute-sanitizer --tool %s on %s, M x N x K = %lld x %lld x %lld, tile %d (%.1f s)\n",
                r.tool.c_str(), k->info().title.c_str(), (long long)r.shape.m, (long long)r.shape.n,
                (long long)r.shape.k, r.shape.tile, r.seconds);
    std::fputs(r.output.c_str(), stdout);
    if (!r.problem.empty()) std::printf("PROBLEM: %s\n", r.problem.c_str());
    std::printf("%s %s: %s\n\n", clean ? "CLEAN" : "FOUND", r.tool.c_str(),
                r.summary.empty() ? "(no summary)" : r.summary.c_str());
  }
  if (json) std::cout << out.dump(2) << "\n";
  return rc;
}

}  // namespace ts::cli
