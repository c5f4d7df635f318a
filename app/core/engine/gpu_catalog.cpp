#include "core/engine/gpu_catalog.hpp"

#include <algorithm>
#include <cctype>
#include <climits>

#include "core/io/bench.hpp"
#include "core/engine/sweep.hpp"

namespace ts {

double GpuModel::peak_fp32_tflops() const {
  return peak_tflops(sm, limits.sm_count, boost_clock_mhz, false, name);
}

double GpuModel::peak_tf32_tflops() const {
  return peak_tflops(sm, limits.sm_count, boost_clock_mhz, true, name);
}

namespace {
GpuModel model(const char* id, const char* name, int sm, int sms, double mhz, double gbs, int threads_per_sm,
               int blocks_per_sm, int smem_per_sm, int smem_per_block, int reserved) {
  GpuModel g;
  g.id = id;
  g.name = name;
  g.sm = sm;
  g.boost_clock_mhz = mhz;
  g.memory_gbs = gbs;
  g.max_smem_per_block = smem_per_block;
  g.limits.sm_count = sms;
  g.limits.max_threads_per_sm = threads_per_sm;
  g.limits.max_blocks_per_sm = blocks_per_sm;
  g.limits.regs_per_sm = 65536;
  g.limits.reg_alloc_unit = 256;
  g.limits.max_regs_per_thread = 255;
  g.limits.smem_per_sm = smem_per_sm;
  g.limits.reserved_smem_per_block = reserved;
  g.limits.smem_alloc_unit = 128;
  g.limits.warp_size = 32;
  return g;
}
}  // namespace

const std::vector<GpuModel>& gpu_catalog() {
  // SM limits from the CUDA C Programming Guide's table of compute capabilities (threads, blocks, registers
  // and shared memory per SM; 1 KiB of shared memory reserved per block from sm_80 on) and each product's
  // data sheet (SMs, boost clock, DRAM bandwidth).
  static const std::vector<GpuModel> c = {
      //    id          name                       sm  SMs  MHz   GB/s  thr/SM blk/SM smem/SM  smem/block resv
      model("t4", "NVIDIA T4", 75, 40, 1590, 320, 1024, 16, 65536, 65536, 0),
      model("a100", "NVIDIA A100-SXM4-40GB", 80, 108, 1410, 1555, 2048, 32, 167936, 166912, 1024),
      model("l4", "NVIDIA L4", 89, 58, 2040, 300, 1536, 24, 102400, 101376, 1024),
      model("rtx4090", "NVIDIA GeForce RTX 4090", 89, 128, 2520, 1008, 1536, 24, 102400, 101376, 1024),
      model("h100", "NVIDIA H100 SXM5 80GB", 90, 132, 1980, 3352, 2048, 32, 233472, 232448, 1024),
  };
  return c;
}

const GpuModel& find_gpu(const std::string& id) {
  std::string low;
  for (char ch : id) low += char(std::tolower(static_cast<unsigned char>(ch)));
  std::string ids;
  for (const auto& g : gpu_catalog()) {
    if (g.id == low) return g;
    ids += (ids.empty() ? "" : ", ") + g.id;
  }
  throw ValidationError("unknown GPU '" + id + "' (known: " + ids + ")");
}

GpuModel gpu_model_of(const DeviceInfo& d) {
  GpuModel g;
  g.id = "device";
  g.name = d.name;
  g.sm = d.sm;
  g.boost_clock_mhz = d.max_sm_clock_mhz;
  g.memory_gbs = d.datasheet_bandwidth_gbs;
  g.limits = d.limits;
  g.limits.sm_count = d.sm_count;
  g.max_smem_per_block = d.limits.smem_per_sm - d.limits.reserved_smem_per_block;
  return g;
}

ResourceLookup lookup_resources(const std::vector<BuildResource>& table, const std::string& kernel, int tile,
                                bool aligned, int arch, const std::string& function) {
  ResourceLookup out;
  out.by_function = !function.empty();
  const BuildResource* below = nullptr;
  const BuildResource* above = nullptr;
  for (const auto& r : table) {
    if (kernel != r.kernel || r.tile != tile || r.aligned != aligned) continue;
    if (out.by_function ? function != r.function : r.variant) {
      out.other_function = out.by_function;
      continue;
    }
    if (r.arch == arch) {
      out.row = &r;
      out.exact_arch = true;
      out.other_function = false;
      return out;
    }
    if (r.arch < arch && (!below || r.arch > below->arch)) below = &r;
    if (r.arch > arch && (!above || r.arch < above->arch)) above = &r;
  }
  out.row = below ? below : above;
  if (out.row) {
    out.other_function = false;
    out.note = "sm_" + std::to_string(arch) + " is not compiled in this build: figures of sm_" +
               std::to_string(out.row->arch);
  }
  return out;
}

BuildComparison compare_with_build(const ResourceLookup& lk, const KernelResources& o, int blocks_per_tile,
                                   const std::string& table_note) {
  BuildComparison c;
  if (lk.other_function) {
    c.kind = BuildComparison::Kind::other_launch;
    c.text =
        "The build's table has no row for the function this launch ran (it describes the launches at "
        "4096^3 and the variants of smaller shapes it knows), so the figures above are the driver's alone.";
    return c;
  }
  if (!lk.row) {
    c.text = "The build's resource table has no row for this launch (" + table_note + ").";
    return c;
  }
  const BuildResource& row = *lk.row;
  if (!lk.by_function && row.blocks_per_tile != blocks_per_tile) {
    c.kind = BuildComparison::Kind::other_launch;
    c.text = "The build's table describes this kernel and tile at 4096^3 (" +
             std::to_string(row.blocks_per_tile) + (row.blocks_per_tile == 1 ? " block" : " blocks") +
             " per tile of C, " + std::to_string(row.regs) + " registers); this launch has " +
             std::to_string(blocks_per_tile) +
             " per tile (K in slices, another variant of the kernel), so the figures above are the driver's "
             "alone.";
    return c;
  }
  const bool match = row.regs == o.regs_per_thread && row.static_smem == o.static_smem &&
                     row.dynamic_smem == o.dynamic_smem && row.threads == o.threads_per_block;
  c.kind = match ? BuildComparison::Kind::match : BuildComparison::Kind::differ;
  // A variant's row: say which launch of the kernel it is.
  const std::string whose =
      row.variant ? " for the function this launch ran (the kernel's variant at small shapes, as at " +
                        std::to_string(row.side) + "^3)"
                  : "";
  c.text = match ? "The build's figures" + whose + " match the driver's (registers, shared memory, threads)."
                 : "The build's figures" + whose + " DIFFER from the driver's: build " +
                       std::to_string(row.regs) + " registers, " + std::to_string(row.static_smem) + " + " +
                       std::to_string(row.dynamic_smem) + " B shared, " + std::to_string(row.threads) +
                       " threads; driver " + std::to_string(o.regs_per_thread) + ", " +
                       std::to_string(o.static_smem) + " + " + std::to_string(o.dynamic_smem) + " B, " +
                       std::to_string(o.threads_per_block) + ".";
  if (!lk.exact_arch) c.text += " (" + lk.note + ")";
  return c;
}

OccupancyInputs inputs_from(const BuildResource& r) {
  OccupancyInputs in;
  in.threads_per_block = r.threads;
  in.regs_per_thread = r.regs;
  in.static_smem = r.static_smem;
  in.dynamic_smem = r.dynamic_smem;
  in.tile_m = r.tile_m;
  in.tile_n = r.tile_n;
  in.blocks_per_tile = r.blocks_per_tile;
  return in;
}

void validate_inputs(const OccupancyInputs& in, const GpuModel& g) {
  auto range = [](int v, int lo, int hi, const char* what) {
    if (v < lo || v > hi)
      throw ValidationError(std::string(what) + " = " + std::to_string(v) + " is outside " +
                            std::to_string(lo) + ".." + std::to_string(hi));
  };
  range(in.threads_per_block, 1, g.max_threads_per_block, "threads per block");
  range(in.regs_per_thread, 1, g.limits.max_regs_per_thread, "registers per thread");
  range(in.static_smem, 0, g.max_smem_per_block, "static shared memory per block (bytes)");
  range(in.dynamic_smem, 0, g.max_smem_per_block, "dynamic shared memory per block (bytes)");
  if (in.static_smem + in.dynamic_smem > g.max_smem_per_block)
    throw ValidationError("shared memory per block = " + std::to_string(in.static_smem + in.dynamic_smem) +
                          " bytes is above " + g.name + "'s limit of " +
                          std::to_string(g.max_smem_per_block));
  range(in.tile_m, 1, INT_MAX, "block tile rows");
  range(in.tile_n, 1, INT_MAX, "block tile columns");
}

OccupancyReport theoretical_occupancy(const GpuModel& g, const OccupancyInputs& in, int64_t m, int64_t n) {
  validate_inputs(in, g);
  const KernelResources res{in.threads_per_block, in.regs_per_thread, in.static_smem, in.dynamic_smem};
  return compute_occupancy(g.limits, res,
                           grid_blocks(m, n, in.tile_m, in.tile_n) * std::max(1, in.blocks_per_tile));
}

std::vector<WaveMark> theoretical_wave_marks(const std::vector<BuildResource>& table, const GpuModel& gpu,
                                             const SweepSpec& spec, const KernelTile& config, int64_t from,
                                             int64_t to) {
  const ResourceLookup l = lookup_resources(table, config.kernel, config.tile, true, gpu.sm);
  if (!l.row) return {};
  const OccupancyInputs in = inputs_from(*l.row);
  OccupancyReport o;
  try {
    o = theoretical_occupancy(gpu, in, 1, 1);
  } catch (const ValidationError&) {
    return {};  // does not fit on this GPU
  }
  return wave_marks(spec, from, to, in.tile_m, in.tile_n, o.blocks_per_sm, gpu.limits.sm_count,
                    in.blocks_per_tile);
}

}  // namespace ts
