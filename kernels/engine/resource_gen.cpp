// Build-time generator of the occupancy table (app/core/engine/gpu_catalog.hpp: build_resources()). Runs on
// the build machine, which needs no GPU:
//   1. reads the ptxas reports of every kernel object (<object>.ptxas, written by cmake/ptxas_capture.sh from
//      -Xptxas -v): registers, static shared memory, spills and stack per kernel function and architecture;
//   2. asks every registered kernel x tile, for an aligned shape (4096^3) and a ragged one (4099^3), then for
//      smaller ones, which function it would launch with which block and dynamic shared memory (an offline
//      LaunchQuery: no CUDA call is made); a function first launched at a smaller shape gets a row of its
//      own;
//   3. names each launched function by its symbol in this program's own ELF symbol table (the host stub of a
//      __global__ function carries the kernel's mangled name) and joins the two;
//   4. writes a C++ source with one row per kernel x tile x shape class x function x architecture.
// Usage: tilescope_resource_gen OUT.cpp OBJECT... (objects without a .ptxas report are skipped)
#include <elf.h>
#include <link.h>

#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/engine/mangled_names.hpp"
#include "kernels/engine/registry.hpp"

namespace {

struct Usage {
  int regs = 0, smem = 0, stack = 0, spill = 0;
};

// The occupancy table's names and the listings' are compared normalised (mangled_names.hpp).
std::string normalize(const std::string& mangled) {
  return ts::normalize_mangled(mangled);
}

int number_before(const std::string& line, const std::string& unit) {
  const size_t at = line.find(unit);
  if (at == std::string::npos) return 0;
  size_t b = at;
  while (b > 0 && line[b - 1] == ' ') --b;
  size_t a = b;
  while (a > 0 && std::isdigit(static_cast<unsigned char>(line[a - 1]))) --a;
  return a < b ? std::stoi(line.substr(a, b - a)) : 0;
}

// ptxas -v: "Compiling entry function 'NAME' for 'sm_90'", then "Function properties for NAME" with its stack
// and spills on the next line, then "Used R registers, ..., S bytes smem, ...".
void parse_ptxas(const std::string& file, std::map<std::pair<std::string, int>, Usage>& out) {
  std::ifstream f(file);
  std::string line, entry, props;
  int arch = 0;
  while (std::getline(f, line)) {
    const size_t c = line.find("Compiling entry function '");
    if (c != std::string::npos) {
      const size_t b = c + std::strlen("Compiling entry function '"), e = line.find('\'', b);
      const size_t s = line.find("'sm_", e + 1);
      if (e == std::string::npos || s == std::string::npos) continue;
      entry = normalize(line.substr(b, e - b));
      arch = std::atoi(line.c_str() + s + 4);  // "sm_90a" -> 90
      out[{entry, arch}] = Usage{};
      continue;
    }
    const size_t p = line.find("Function properties for ");
    if (p != std::string::npos) {
      props = normalize(line.substr(p + std::strlen("Function properties for ")));
      continue;
    }
    if (line.find("bytes stack frame") != std::string::npos && !entry.empty() && props == entry) {
      out[{entry, arch}].stack = number_before(line, "bytes stack frame");
      out[{entry, arch}].spill = number_before(line, "bytes spill stores");
      continue;
    }
    if (line.find("ptxas info    : Used ") != std::string::npos && !entry.empty()) {
      Usage& u = out[{entry, arch}];
      u.regs = number_before(line, "registers");
      u.smem = number_before(line, "bytes smem");
      entry.clear();
    }
  }
}

// This program's function symbols (from /proc/self/exe's .symtab), by address relative to the load base.
std::map<uintptr_t, std::string> own_symbols() {
  std::ifstream f("/proc/self/exe", std::ios::binary);
  std::string img((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  std::map<uintptr_t, std::string> syms;
  if (img.size() < sizeof(Elf64_Ehdr)) return syms;
  const auto* eh = reinterpret_cast<const Elf64_Ehdr*>(img.data());
  if (std::memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64) return syms;
  if (eh->e_shoff + uint64_t(eh->e_shnum) * sizeof(Elf64_Shdr) > img.size()) return syms;
  const auto* sh = reinterpret_cast<const Elf64_Shdr*>(img.data() + eh->e_shoff);
  for (int i = 0; i < eh->e_shnum; ++i) {
    if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum) continue;
    const Elf64_Shdr& strtab = sh[sh[i].sh_link];
    if (sh[i].sh_offset + sh[i].sh_size > img.size() || strtab.sh_offset + strtab.sh_size > img.size())
      continue;
    const auto* sym = reinterpret_cast<const Elf64_Sym*>(img.data() + sh[i].sh_offset);
    const size_t n = sh[i].sh_size / sizeof(Elf64_Sym);
    for (size_t j = 0; j < n; ++j) {
      if (ELF64_ST_TYPE(sym[j].st_info) != STT_FUNC || sym[j].st_name >= strtab.sh_size) continue;
      syms[sym[j].st_value] = img.data() + strtab.sh_offset + sym[j].st_name;
    }
  }
  return syms;
}

uintptr_t load_base() {
  uintptr_t base = 0;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        *static_cast<uintptr_t*>(data) = info->dlpi_addr;
        return 1;  // the first object is the program itself
      },
      &base);
  return base;
}

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return q + "\"";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s OUT.cpp OBJECT...\n", argv[0]);
    return 2;
  }
  std::map<std::pair<std::string, int>, Usage> usage;
  int reports = 0;
  for (int i = 2; i < argc; ++i) {
    const std::string report = std::string(argv[i]) + ".ptxas";
    if (!std::ifstream(report)) continue;
    ++reports;
    parse_ptxas(report, usage);
  }
  const std::map<uintptr_t, std::string> syms = own_symbols();
  const uintptr_t base = load_base();
  std::set<int> arches;
  for (const auto& [key, u] : usage) arches.insert(key.second);

  std::ostringstream rows;
  int count = 0;
  // The shapes each kernel x tile is asked about (an H100's 132 SMs): 4096^3 and 4099^3 for the main rows,
  // the smaller ones for the variants (wgmma_tf32 cuts K into slices at 1024^3 and below).
  constexpr int64_t kAlignedSides[] = {4096, 2048, 1024, 512, 128};
  constexpr int64_t kRaggedSides[] = {4099, 2049, 1001, 513, 129};
  std::vector<std::string> missing;
  for (const auto& e : ts::register_kernels()) {
    if (!e.cuda) continue;
    const std::vector<int> tiles = e.info.tiles.empty() ? std::vector<int>{0} : e.info.tiles;
    for (int tile : tiles)
      for (bool aligned : {true, false}) {
        // The main row at 4096^3 (4099^3), then a row for each other function a smaller shape launches.
        std::set<std::string> listed;
        for (const int64_t n : aligned ? kAlignedSides : kRaggedSides) {
          const bool main_row = n == (aligned ? kAlignedSides : kRaggedSides)[0];
          ts::LaunchQuery q;
          q.offline = true;
          e.cuda(ts::GemmArgs{nullptr, nullptr, nullptr, n, n, n}, tile, nullptr, &q);
          if (!q.func) break;  // cuBLAS: closed kernels
          const auto it = syms.find(reinterpret_cast<uintptr_t>(q.func) - base);
          const std::string name = it == syms.end() ? "" : normalize(it->second);
          if (!listed.insert(name).second) continue;
          bool found = false;
          for (int arch : arches) {
            const auto u = usage.find({name, arch});
            if (u == usage.end()) continue;
            found = true;
            ++count;
            rows << "      {" << quoted(e.info.id) << ", " << tile << ", " << (aligned ? "true" : "false")
                 << ", " << arch << ", " << quoted(name) << ", " << u->second.regs << ", " << u->second.smem
                 << ", " << u->second.spill << ", " << u->second.stack << ", " << q.threads << ", "
                 << q.dynamic_smem << ", " << q.tile_m << ", " << q.tile_n << ", "
                 << (q.k_segments ? 1u : q.grid_z)  // stream-K: grid_z counts trace segments
                 << ", " << n << ", " << (main_row ? "false" : "true") << "},\n";
          }
          if (!found)
            missing.push_back(e.info.id + " T=" + std::to_string(tile) + " at " + std::to_string(n) + "^3" +
                              (aligned ? " (aligned)" : " (ragged)") + ": " +
                              (name.empty() ? "no symbol for its function" : name));
        }
      }
  }
  if (reports > 0 && !missing.empty()) {
    // Reports exist but a launched kernel is in none of them: the table would be wrong, so the build stops.
    std::fprintf(stderr, "tilescope_resource_gen: no ptxas figures for:\n");
    for (const auto& m : missing) std::fprintf(stderr, "  %s\n", m.c_str());
    return 1;
  }
  std::string arch_list;
  for (int a : arches) arch_list += (arch_list.empty() ? "sm_" : ", sm_") + std::to_string(a);
  const std::string note =
      reports == 0
          ? "this build has no ptxas reports (no real GPU architecture compiled): no build-time figures"
          : "ptxas -v at build time for " + arch_list + " (" + std::to_string(count) + " entries)";
  std::ofstream out(argv[1], std::ios::trunc);
  out << "// Generated by tilescope_resource_gen (kernels/engine/resource_gen.cpp) at build time. Do not "
         "edit.\n"
         "#include \"core/engine/gpu_catalog.hpp\"\n\nnamespace ts {\n\n"
         "const std::vector<BuildResource>& build_resources() {\n"
         "  // kernel, tile, aligned, arch, function, regs, static smem, spill stores, stack, threads, "
         "dynamic smem,\n"
         "  // tile_m, tile_n, blocks per tile, side, variant\n"
         "  static const std::vector<BuildResource> table = {\n"
      << rows.str()
      << "  };\n  return table;\n}\n\n"
         "std::string build_resources_note() {\n  return "
      << quoted(note) << ";\n}\n\n}  // namespace ts\n";
  out.close();
  if (!out) {
    std::fprintf(stderr, "tilescope_resource_gen: cannot write %s\n", argv[1]);
    return 1;
  }
  std::fprintf(stderr, "tilescope_resource_gen: %s\n", note.c_str());
  return 0;
}
