// Build-time generator of the archive of machine code listings (app/core/engine/sass.hpp:
// build_sass_archive()). Runs on the build machine, which needs no GPU:
//   1. runs cuobjdump -sass on every kernel object (the pinned copy scripts/install-deps.sh installs, or the
//      toolkit's) and splits its output into one compact listing per function and architecture
//      (split_cuobjdump, the same reader a person's kernel's listing goes through at run time);
//   2. takes from the build-time occupancy table (build_resources(), made by tilescope_resource_gen from the
//      registry's offline launches) which function each kernel x tile launches, with its registers, shared
//      memory, spills and stack: the plain kernels, never their traced twins;
//   3. writes the listings those rows name, zstd-compressed, to BLOB and a C++ source that includes BLOB
//      (.incbin) and has one row per kernel x tile x shape class x architecture.
// A row whose function has no listing stops the build (the panel would have a hole). Without the tool the
// archive is empty and says why.
// Usage: tilescope_sass_gen OUT.cpp BLOB tool=PATH version=V why=TEXT OBJECT...  (tool= empty: none; why: why
// not). Objects without device code (the C++ ones) are skipped.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/engine/mangled_names.hpp"
#include "core/base/compress.hpp"
#include "core/engine/gpu_catalog.hpp"
#include "core/engine/sass_tool.hpp"

namespace {

// The occupancy table's names and the listings' are compared normalised (mangled_names.hpp).
std::string normalize(const std::string& mangled) {
  return ts::normalize_mangled(mangled);
}

std::string quoted(const std::string& s) {
  std::string q = "\"";
  for (char c : s) q += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return q + "\"";
}

std::string run(const std::string& command, int* status) {
  std::string out;
  FILE* p = popen(command.c_str(), "r");
  if (!p) {
    *status = -1;
    return out;
  }
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  *status = pclose(p);
  return out;
}

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

bool write_file(const std::string& path, const std::string& data) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(data.data(), std::streamsize(data.size()));
    if (!f) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::fprintf(stderr, "usage: %s OUT.cpp BLOB tool=PATH version=V why=TEXT OBJECT...\n", argv[0]);
    return 2;
  }
  auto value = [&](int i, const char* key) {
    const std::string a = argv[i], k = std::string(key) + "=";
    if (a.compare(0, k.size(), k) != 0) {
      std::fprintf(stderr, "tilescope_sass_gen: argument %d should be %s...\n", i, k.c_str());
      std::exit(2);
    }
    return a.substr(k.size());
  };
  const std::string out_cpp = argv[1], blob_path = argv[2], tool = value(3, "tool"),
                    version = value(4, "version"), why = value(5, "why");
  if (blob_path.find_first_of("\"\\\n") != std::string::npos) {
    std::fprintf(stderr, "tilescope_sass_gen: the archive's path has a quote, backslash or newline\n");
    return 2;
  }
  std::map<std::pair<std::string, int>, std::string> listings;  // (function, arch) -> text
  int objects = 0;
  if (!tool.empty()) {
    for (int i = 6; i < argc; ++i) {
      int status = 0;
      const std::string out = run(shell_quoted(tool) + " -sass " + shell_quoted(argv[i]) + " 2>&1", &status);
      if (status != 0 && out.find("does not contain device code") != std::string::npos) continue;
      if (status != 0) {
        std::fprintf(stderr, "tilescope_sass_gen: %s -sass %s failed:\n%s\n", tool.c_str(), argv[i],
                     out.substr(0, 2000).c_str());
        return 1;
      }
      ++objects;
      for (auto& f : ts::split_cuobjdump(out)) listings[{normalize(f.name), f.arch}] = std::move(f.text);
    }
  }

  std::string text;
  std::map<std::pair<std::string, int>, std::pair<size_t, size_t>> placed;  // -> offset, size
  std::ostringstream rows;
  std::vector<std::string> missing;
  int count = 0;
  if (!tool.empty()) {
    for (const ts::BuildResource& r : ts::build_resources()) {
      if (r.variant) continue;  // the listings are the main rows' (a kernel x tile at 4096^3 / 4099^3)
      const std::pair<std::string, int> key{r.function, r.arch};
      const auto it = listings.find(key);
      if (it == listings.end()) {
        missing.push_back(std::string(r.kernel) + " T=" + std::to_string(r.tile) + " sm_" +
                          std::to_string(r.arch) + ": " + r.function);
        continue;
      }
      auto at = placed.find(key);
      if (at == placed.end()) {
        at = placed.emplace(key, std::make_pair(text.size(), it->second.size())).first;
        text += it->second;
      }
      ++count;
      rows << "    {" << quoted(r.kernel) << ", " << r.tile << ", " << (r.aligned ? "true" : "false") << ", "
           << r.arch << ", " << quoted(r.function) << ", " << at->second.first << "u, " << at->second.second
           << "u, " << r.regs << ", " << r.static_smem << ", " << r.spill_bytes << ", " << r.stack_bytes
           << ", " << r.threads << ", " << r.tile_m << ", " << r.tile_n << "},\n";
    }
  }
  if (!missing.empty()) {
    std::fprintf(stderr, "tilescope_sass_gen: no listing in the objects for:\n");
    for (const auto& m : missing) std::fprintf(stderr, "  %s\n", m.c_str());
    return 1;
  }
  const std::string blob = text.empty() ? std::string() : ts::zstd_compress(text, 12);
  char made[64] = "";
  const std::time_t now = std::time(nullptr);
  std::strftime(made, sizeof made, "%Y-%m-%d %H:%M UTC", std::gmtime(&now));
  const std::string label = "cuobjdump" + (version.empty() ? std::string() : " " + version);
  const std::string note =
      tool.empty() ? "no machine code listings in this build: " + why
      : count == 0 ? "no machine code listings in this build: " + std::string(ts::build_resources_note())
                   : label + " -sass on " + std::to_string(objects) + " kernel objects at build time (" +
                         std::to_string(placed.size()) + " listings, " + std::to_string(count) + " rows)";
  if (!write_file(blob_path, blob)) {
    std::fprintf(stderr, "tilescope_sass_gen: cannot write %s\n", blob_path.c_str());
    return 1;
  }
  std::ostringstream cpp;
  cpp << "// Generated by tilescope_sass_gen (kernels/engine/sass_gen.cpp) at build time. Do not edit.\n"
         "// The listings' text: "
      << text.size() << " bytes, " << blob.size()
      << " compressed.\n"
         "#include \"core/engine/sass.hpp\"\n\n";
  if (!blob.empty())
    cpp << "__asm__(\".section .rodata\\n.balign 16\\n.global tilescope_sass_blob\\ntilescope_sass_blob:\\n"
           ".incbin "
        << "\\\"" << blob_path << "\\\""
        << "\\n.global tilescope_sass_blob_end\\ntilescope_sass_blob_end:\\n.byte 0\\n.previous\\n\");\n"
           "extern \"C\" const unsigned char tilescope_sass_blob[];\n"
           "extern \"C\" const unsigned char tilescope_sass_blob_end[];\n\n";
  cpp << "namespace ts {\n\nconst BuildSassArchive& build_sass_archive() {\n"
         "  // kernel, tile, aligned, arch, function, offset, size, regs, static smem, spill stores, stack, "
         "threads,\n"
         "  // tile_m, tile_n\n"
         "  static const BuildSassRow rows[] = {\n"
      << rows.str() << (count == 0 ? "    {\"\", 0, false, 0, \"\", 0u, 0u, 0, 0, 0, 0, 0, 0, 0},\n" : "")
      << "  };\n  static const BuildSassArchive archive{rows, " << count << ", "
      << (blob.empty() ? "nullptr, 0"
                       : "tilescope_sass_blob, size_t(tilescope_sass_blob_end - tilescope_sass_blob)")
      << ", " << text.size() << ", " << quoted(tool.empty() ? "" : label) << ", " << quoted(made) << ", "
      << quoted(note) << "};\n  return archive;\n}\n\n}  // namespace ts\n";
  if (!write_file(out_cpp, cpp.str())) {
    std::fprintf(stderr, "tilescope_sass_gen: cannot write %s\n", out_cpp.c_str());
    return 1;
  }
  std::fprintf(stderr, "tilescope_sass_gen: %s\n", note.c_str());
  return 0;
}
