#include "core/engine/backend.hpp"

#include <algorithm>
#include <ctime>
#include <sstream>

#include "core/user_kernel/kernel_workshop.hpp"
#include "core/engine/sass_tool.hpp"
#include "core/engine/stats.hpp"
#include "core/user_kernel/user_kernel.hpp"

namespace ts {

std::string KernelInfo::tile_label(int tile) const {
  for (size_t i = 0; i < tiles.size() && i < tile_labels.size(); ++i)
    if (tiles[i] == tile) return tile_labels[i];
  return "";
}

const TileGeometry* KernelInfo::tile_geometry(int tile) const {
  for (size_t i = 0; i < tiles.size() && i < geometry.size(); ++i)
    if (tiles[i] == tile) return &geometry[i];
  return nullptr;
}

SassListing Backend::sass_listing(const std::string& kernel, int tile, int arch,
                                  const CancelToken* cancel) const {
  if (arch <= 0) arch = device_info().sm;  // 0 on the CPU: the newest compiled
  const KernelWorkshop* w = workshop();
  const auto user = w ? w->find(kernel) : nullptr;
  SassListing l;
  if (!user) {
    if (const BuildSassArchive* a = program_listings()) {
      l = built_in_sass(*a, kernel, tile, arch);
    } else {
      l.kernel = kernel;
      l.tile = tile;
      l.why = "this program was linked without the build's machine code listings";
    }
    l.engine = device_name();
    return l;
  }
  // A person's kernel: its plain build for this architecture (NVRTC, or the cache), disassembled now.
  l.kernel = kernel;
  l.tile = tile;
  l.engine = device_name();
  l.build_time = false;
  std::string why;
  if (!w->can_build(&why)) {
    l.why = "a person's kernel is disassembled from its build, and this engine cannot build: " + why;
    return l;
  }
  const auto tool = find_sass_tool(&why);
  if (!tool) {
    l.why = why;
    return l;
  }
  if (arch <= 0) {
    const auto archs = w->architectures();
    arch = archs.empty() ? 90 : archs.back();
  }
  const ExprVars sizes{4096, 4096, 4096, tile};
  const auto module = w->build(*user, tile, arch, sizes, cancel);
  if (cancel) cancel->throw_if_cancelled();
  const SassFunctionText f = disassemble_cubin(*tool, module->cubin, module->lowered_name);
  l.available = true;
  l.function = f.name;
  l.arch = f.arch > 0 ? f.arch : arch;
  l.text = f.text;
  l.tool = tool->label();
  l.made = utc_now();
  l.note = std::string("built by ") + w->compiler() + (module->from_cache ? " (from its cache)" : "");
  if (module->resources.found) {
    l.regs = module->resources.regs;
    l.static_smem = module->resources.static_smem;
    l.spill_bytes = module->resources.spill_stores;
    l.stack_bytes = module->resources.stack_bytes;
  }
  try {
    const LaunchGeometry g = launch_geometry(user->spec(), sizes);
    l.threads = int(g.threads());
    // The C tile of one block, assuming the grid's x and y cover C's columns and rows (4096^2).
    l.tile_m = int((4096 + g.grid[1] - 1) / g.grid[1]);
    l.tile_n = int((4096 + g.grid[0] - 1) / g.grid[0]);
  } catch (const std::exception&) {
  }
  return l;
}

std::shared_ptr<const std::vector<KernelInfo>> Backend::kernel_list() const {
  // The serial before the list: a kernel published in between makes the next call read the list again.
  const uint64_t serial = kernels_serial();
  std::lock_guard<std::mutex> lock(m_list_mu);
  if (!m_list || serial != m_list_serial) {
    // The list it replaces stays alive with the backend: a reference read from it (AppState::kernels()) is
    // never left dangling, whichever thread asks next. A list is a few kilobytes; one is made per publish.
    if (m_list) m_retired.push_back(std::move(m_list));
    m_list = std::make_shared<const std::vector<KernelInfo>>(kernels());
    m_list_serial = serial;
  }
  return m_list;
}

uint64_t Backend::kernels_serial() const {
  const KernelWorkshop* w = workshop();
  return w ? w->serial() : 0;
}

std::shared_ptr<const MatrixStore> Backend::probe_store(std::shared_ptr<const HostMatrix> m) const {
  auto b = std::make_shared<HostMatrix>(m->cols, m->cols);  // zeros
  return make_host_store(m, b, m, m);
}

std::string KernelInfo::label() const {
  // The role first: a label cut short by a narrow combo still says it.
  if (is_reference) return "Reference: " + title;
  if (teaching) return "Teaching, wrong on purpose: " + title;
  return title;
}

const KernelInfo* find_kernel(const std::vector<KernelInfo>& registry, const std::string& id) {
  for (const auto& k : registry)
    if (k.id == id) return &k;
  return nullptr;
}

void validate_kernel(ProblemSpec& spec, const std::vector<KernelInfo>& registry, bool tile_given) {
  const KernelInfo* info = find_kernel(registry, spec.kernel);
  if (!info) {
    std::string names;
    for (const auto& k : registry) names += (names.empty() ? "" : ", ") + k.id;
    throw ValidationError("unknown kernel '" + spec.kernel + "' (available: " + names + ")");
  }
  if (info->square_only && !(spec.m == spec.n && spec.n == spec.k))
    throw ValidationError(info->title +
                          " is told one size only, so it runs on square shapes (M = N = K); M x N x K = " +
                          std::to_string(spec.m) + " x " + std::to_string(spec.n) + " x " +
                          std::to_string(spec.k) + " is not square");
  if (info->tiles.empty()) {
    if (tile_given && spec.tile != 0)
      throw ValidationError("kernel '" + spec.kernel + "' has no tile size; leave out --tile");
    spec.tile = 0;
    return;
  }
  if (std::find(info->tiles.begin(), info->tiles.end(), spec.tile) == info->tiles.end()) {
    std::string allowed;
    for (int t : info->tiles) allowed += (allowed.empty() ? "" : ", ") + std::to_string(t);
    throw ValidationError("tile " + std::to_string(spec.tile) + " is not allowed for kernel '" + spec.kernel +
                          "' (allowed: " + allowed + ")");
  }
}

void adopt_given_inputs(RunRequest& req) {
  if (!req.a && !req.b) return;
  if (!req.a || !req.b) throw ValidationError("give both --a and --b, or neither");
  if (req.a->cols != req.b->rows) {
    std::ostringstream os;
    os << "A is " << req.a->rows << " x " << req.a->cols << " and B is " << req.b->rows << " x "
       << req.b->cols << ": A's columns (" << req.a->cols << ") must equal B's rows (" << req.b->rows << ")";
    throw ValidationError(os.str());
  }
  // Non-finite inputs are refused: with NaN or Inf in A or B the tolerance is infinite and every kernel,
  // however wrong, would pass.
  require_finite(*req.a, "A");
  require_finite(*req.b, "B");
  req.spec.input = InputKind::File;
  req.spec.m = req.a->rows;
  req.spec.k = req.a->cols;
  req.spec.n = req.b->cols;
}

void record_measurement(RunResult& r, const Measurement& m, const MeasurePolicy& p, double device_max_mhz,
                        const std::string& reference_kernel) {
  r.policy = p.describe();
  r.timed = true;
  r.samples_ms = m.samples_ms;
  r.stats = m.stats;
  r.launches_per_sample = m.launches_per_sample;
  r.stop = to_string(m.stop);
  r.warmups = m.warmups;
  r.clock = summarize_clocks(m.clocks, device_max_mhz);
  r.frames_drawn = m.frames_drawn;
  r.interleaved = InterleavedReference{};
  if (!m.reference_samples_ms.empty()) {
    r.interleaved.kernel = reference_kernel;
    r.interleaved.samples_ms = m.reference_samples_ms;
    r.interleaved.stats = m.reference_stats;
    r.interleaved.clock = summarize_clocks(m.reference_clocks, device_max_mhz);
  }
  r.date = utc_now();
}

double RunRecord::tflops() const {
  return ts::tflops(spec.flops(), stats.median);
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char b[32];
  std::strftime(b, sizeof b, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return b;
}

}  // namespace ts
