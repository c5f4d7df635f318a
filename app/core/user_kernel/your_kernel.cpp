#include "core/user_kernel/your_kernel.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

namespace ts {

namespace fs = std::filesystem;

namespace {

std::atomic<uint64_t> g_versions{0};

std::vector<std::string> split_commas(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  for (char c : s) {
    if (c == '(') ++depth;
    if (c == ')') --depth;
    if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += c;
    }
  }
  out.push_back(cur);
  return out;
}

void set_axes(std::array<std::string, 3>& axes, const std::string& text, const char* what) {
  const std::vector<std::string> parts = split_commas(text);
  if (parts.size() < 1 || parts.size() > 3)
    throw ValidationError(std::string("--") + what + " '" + text +
                          "' is not X[,Y[,Z]] (one to three formulas)");
  for (size_t i = 0; i < 3; ++i) {
    axes[i] = i < parts.size() ? parts[i] : "1";
    const char* names[3] = {"x", "y", "z"};
    check_launch_expr(axes[i], std::string(what) + " " + names[i]);
  }
}

}  // namespace

std::shared_ptr<const UserKernel> UserKernel::make(KernelSource src, const std::string& kernel,
                                                   const UserKernelSpec* spec,
                                                   const std::vector<IncludedHeader>* headers) {
  std::shared_ptr<UserKernel> k(new UserKernel());
  k->m_source = std::move(src);
  k->m_scan = scan_cuda_source(k->m_source.text);
  const std::string label = k->m_source.path.empty() ? k->m_source.label : k->m_source.path;
  const KernelDecl& d = choose_kernel(k->m_scan, kernel, label);
  k->m_kernel = size_t(&d - k->m_scan.kernels.data());
  // NVRTC 13.0 corrupts its own heap on a name of ~100,000 characters (and every table would print it): a
  // name has at most kMaxKernelName characters.
  if (d.name.size() > kMaxKernelName)
    throw ValidationError(label + ":" + std::to_string(d.line + k->m_source.first_line - 1) +
                          ": the kernel's name is " + std::to_string(d.name.size()) +
                          " characters long; TileScope takes names of at most " +
                          std::to_string(kMaxKernelName) + " characters: rename it");
  // Found however it is spelled, but CUDA compiles no kernel whose name leaves ASCII (nvcc: "Universal
  // character is not allowed in device entity name"; NVRTC: "unrecognized token"): said here, in words.
  if (std::any_of(d.name.begin(), d.name.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; }))
    throw ValidationError(
        label + ":" + std::to_string(d.line + k->m_source.first_line - 1) + ": the kernel's name '" + d.name +
        "' has characters outside ASCII, which CUDA does not allow in a __global__ function's "
        "name (nvcc and NVRTC refuse it): rename it");
  // What it includes, before anything is built: a header of its folder is read here (or was, where the file
  // is: then it is checked as given), anything else that is not the toolkit's is refused with its line.
  if (headers) {
    check_given_headers(k->m_source.text, *headers, label, k->m_source.first_line);
    k->m_headers = *headers;
  } else {
    k->m_headers = resolve_includes(k->m_source.text, k->m_source.path, label, k->m_source.first_line);
  }
  KernelUnderstanding u = understand_kernel(k->m_scan, d);
  k->m_notes = u.notes;
  if (spec) {
    if (spec->kernel != d.name || spec->params.size() != d.params.size()) {
      // The form describes another signature (the file changed under it): keep what still fits.
      UserKernelSpec s = u.spec;
      s.tiles = spec->tiles;
      s.default_tile = spec->default_tile;
      s.grid = spec->grid;
      s.block = spec->block;
      s.smem = spec->smem;
      s.x_covers_rows = spec->x_covers_rows;
      s.tf32 = spec->tf32;
      s.hang_limit_s = spec->hang_limit_s;
      s.compile_limit_s = spec->compile_limit_s;
      k->m_spec = s;
      k->m_notes.push_back("the kernel's parameters changed: their roles were guessed again");
    } else {
      k->m_spec = *spec;
    }
  } else {
    k->m_spec = u.spec;
  }
  validate_spec(d, k->m_spec);
  k->m_version = ++g_versions;
  return k;
}

std::shared_ptr<const UserKernel> UserKernel::open_file(const std::string& path, const UserKernelOptions& o) {
  KernelSource src = read_kernel_source(path);
  // Understand first, then correct, then check: the corrections may be what makes it runnable.
  SourceScan scan = scan_cuda_source(src.text);
  const KernelDecl& d = choose_kernel(scan, o.kernel, path);
  UserKernelSpec spec = understand_kernel(scan, d).spec;
  for (const auto& p : o.params) apply_param_override(d, spec, p);
  if (!o.grid.empty()) set_axes(spec.grid, o.grid, "grid");
  if (!o.block.empty()) set_axes(spec.block, o.block, "block");
  if (!o.smem.empty()) {
    check_launch_expr(o.smem, "--smem");
    spec.smem = o.smem;
  }
  if (!o.tile_macro.empty()) {
    if (o.tile_macro == "none") {
      spec.tile_symbol.clear();
    } else {
      bool known = false;
      for (const auto& s : scan.symbols) known = known || s.name == o.tile_macro;
      for (const auto& s : scan.identifiers_used) known = known || s == o.tile_macro;
      if (!known)
        throw ValidationError("--tile-macro " + o.tile_macro + ": " + path +
                              " neither defines nor uses a symbol of that name");
      spec.tile_symbol = o.tile_macro;
    }
  }
  if (o.tile > 0) {
    if (std::find(spec.tiles.begin(), spec.tiles.end(), o.tile) == spec.tiles.end())
      spec.tiles.push_back(o.tile);
    std::sort(spec.tiles.begin(), spec.tiles.end());
    spec.default_tile = o.tile;
  }
  if (o.hang_limit_s > 0) spec.hang_limit_s = o.hang_limit_s;
  if (o.compile_limit_s > 0) spec.compile_limit_s = o.compile_limit_s;
  spec.tf32 = o.tf32;
  return make(std::move(src), d.name, &spec);
}

KernelInfo UserKernel::info() const {
  KernelInfo k;
  k.id = id();
  k.title = "yours: " + decl().name;
  std::ostringstream d;
  d << "Your kernel " << decl().name << " from " << (m_source.path.empty() ? m_source.label : m_source.path)
    << ", compiled by NVRTC and run in a worker process";
  if (square_only()) d << "; it is told one size only, so it runs on square shapes (M = N = K)";
  d << ".";
  k.description = d.str();
  k.tiles = m_spec.tiles;
  for (int t : m_spec.tiles) {
    std::string label =
        (m_spec.tile_symbol.empty() ? "TILE" : m_spec.tile_symbol) + " = " + std::to_string(t);
    try {
      const LaunchGeometry g = launch_geometry(m_spec, ExprVars{1024, 1024, 1024, t});
      label += ": block " + std::to_string(g.block[0]) + " x " + std::to_string(g.block[1]) +
               (g.block[2] > 1 ? " x " + std::to_string(g.block[2]) : "") + " (" +
               std::to_string(g.threads()) + " threads)";
    } catch (const ValidationError&) {
      label += ": too large a block";
    }
    k.tile_labels.push_back(label);
  }
  k.default_tile = m_spec.default_tile;
  k.threads_per_block =
      m_spec.block[0] + " x " + m_spec.block[1] + (m_spec.block[2] == "1" ? "" : " x " + m_spec.block[2]);
  k.tf32 = m_spec.tf32;
  k.traceable = true;  // tried on every profiled run; trace_note says why when it cannot be
  k.user = true;
  k.square_only = square_only();
  k.source = m_source.path;
  return k;
}

CompileJob UserKernel::plain_job(int tile, int arch, const ExprVars& sizes) const {
  const BuildSource b = plain_build(m_source, m_scan, decl(), m_spec, tile, build_sizes(m_spec, sizes));
  CompileJob j;
  j.source = b.source;
  j.label = m_source.path.empty() ? m_source.label : fs::path(m_source.path).filename().string();
  j.options = b.defines;
  for (const IncludedHeader& h : m_headers) j.headers.emplace_back(h.name, h.content);
  j.name_expression = b.name_expression;
  j.arch = arch;
  j.time_limit_s = m_spec.compile_limit_s;
  return j;
}

std::optional<CompileJob> UserKernel::traced_job(int tile, int arch, const ExprVars& sizes, int max_regs,
                                                 std::string* why_not) const {
  const auto b =
      traced_build(m_source, m_scan, decl(), m_spec, tile, build_sizes(m_spec, sizes), max_regs, why_not);
  if (!b) return std::nullopt;
  CompileJob j = plain_job(tile, arch, sizes);
  j.source = b->source;
  j.options.erase(std::remove_if(j.options.begin(), j.options.end(),
                                 [](const std::string& o) { return o.rfind("-D", 0) == 0; }),
                  j.options.end());
  for (const auto& d : b->defines) j.options.push_back(d);
  j.name_expression = b->name_expression;
  return j;
}

std::string UserKernel::describe() const {
  std::ostringstream os;
  const KernelDecl& d = decl();
  os << d.name << " (line " << d.line + m_source.first_line - 1 << ")  ->  " << id() << "\n";
  os << "parameters:\n" << describe_params(d, m_spec);
  if (square_only()) os << "sizes: it is told one size only, so it runs on square shapes (M = N = K)\n";
  os << "tile: " << describe_tile(m_scan, m_spec) << "\n";
  os << "launch: " << describe_launch(m_spec) << "\n";
  for (const auto& n : m_notes) os << "note: " << n << "\n";
  for (const auto& n : m_scan.notes) os << "for NVRTC: " << n << "\n";
  return os.str();
}

}  // namespace ts
