#include "cli/list_cmd.hpp"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/engine/gpu_catalog.hpp"
#include "core/engine/occupancy.hpp"
#include "kernels/engine/registry.hpp"

namespace ts::cli {

namespace {

// [SECTION] tilescope list --occupancy GPU: the theoretical occupancy of every kernel x tile on a GPU of the
// catalog (no GPU needed: registers and shared memory from the build-time table), or on this machine's GPU
// (`device`), where the build's figures are checked against the driver's.
int list_occupancy(const std::string& gpu_id, bool as_json) {
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

int list_kernels(bool as_json) {
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
                              {"cpu", k.has_cpu()}});
    std::cout << j.dump(2) << "\n";
    return kExitOk;
  }
  for (const auto& k : infos) {
    const std::string backends = std::string(k.has_cuda ? "cuda" : "") +
                                 (k.has_cuda && k.has_cpu() ? "," : "") + (k.has_cpu() ? "cpu" : "");
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

}  // namespace

void add_list_options(CLI::App* cmd, ListArgs& a) {
  cmd->add_flag("--json", a.json, "print JSON");
  ts::cli::add_kernel_file_options(cmd, a.file);
  cmd->add_option(
      "--arch", a.arch,
      "with --kernel-file: compile for this architecture (one NVRTC compiles for, e.g. sm_90 or 8.9: NVRTC "
      "13.0 takes sm_75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121; or device; default: this machine's "
      "GPU, else sm_90)");
  cmd->add_option(
      "--gpu", a.gpu,
      "with --kernel-file: the GPU the occupancy is for: t4, a100, l4, rtx4090, h100 (default: this "
      "machine's GPU, else the catalog's GPU of --arch)");
  cmd->add_option(
      "--occupancy", a.occupancy,
      "theoretical occupancy of every kernel x tile on a GPU: t4, a100, l4, rtx4090, h100 (no GPU "
      "needed), or device (this machine's GPU, checked against the driver)");
}

int cmd_list(ListArgs& a, const CLI::App& cmd) {
  (void)cmd;
  if (!a.file.file.empty()) {
    if (!a.occupancy.empty()) throw ts::ValidationError("give either --kernel-file or --occupancy");
    return ts::cli::list_kernel_file(a.file, a.arch, a.gpu, a.json);
  }
  if (!a.arch.empty() || !a.gpu.empty()) throw ts::ValidationError("--arch and --gpu go with --kernel-file");
  return a.occupancy.empty() ? list_kernels(a.json) : list_occupancy(a.occupancy, a.json);
}

}  // namespace ts::cli
