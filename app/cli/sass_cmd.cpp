#include "cli/sass_cmd.hpp"

#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "core/engine/sass.hpp"

namespace ts::cli {

namespace {

struct Which {
  std::string kernel;
  int tile = 0;
};

// "tiled:32", "tiled" (its default tile), "cublas" (no tile): checked against the backend's kernels.
Which parse_which(const std::string& kernel, const std::string& tile, const Backend& backend,
                  const char* what) {
  if (kernel.empty()) throw ValidationError(std::string(what) + ": name a kernel (see `tilescope list`)");
  ProblemSpec s;
  s.kernel = kernel;
  const bool tile_given = !tile.empty();
  const auto kernels = backend.kernels();
  if (tile_given) {
    s.tile = int(parse_dim(tile, what));
  } else if (const KernelInfo* k = find_kernel(kernels, kernel)) {
    s.tile = k->default_tile;
  }
  validate_kernel(s, kernels, tile_given);
  return {s.kernel, s.tile};
}

int parse_arch_text(const std::string& text) {
  if (text.empty()) return 0;
  std::string digits = text;
  if (digits.rfind("sm_", 0) == 0) digits = digits.substr(3);
  if (!digits.empty() && digits.back() == 'a') digits.pop_back();
  if (digits.size() < 2 || digits.size() > 3 || digits.find_first_not_of("0123456789") != std::string::npos)
    throw ValidationError("--arch = '" + text + "': give an architecture like sm_90 or 80");
  return std::stoi(digits);
}

std::string resources(const SassListing& l) {
  auto n = [](int v) { return v < 0 ? std::string("?") : std::to_string(v); };
  return "registers " + n(l.regs) + ", spill stores " + n(l.spill_bytes) + " B, stack " + n(l.stack_bytes) +
         " B, static shared memory " + n(l.static_smem) + " B";
}

SassListing fetch(const Backend& backend, const Which& w, int arch) {
  SassListing l = backend.sass_listing(w.kernel, w.tile, arch);
  if (!l.available)
    throw std::runtime_error("no machine code for " + w.kernel + " at tile " + std::to_string(w.tile) + ": " +
                             l.why);
  return l;
}

nlohmann::json mix_json(const SassAnalysis& an) {
  nlohmann::json m = nlohmann::json::object();
  for (int c = 0; c < int(SassClass::Count); ++c) {
    nlohmann::json e = {{"per_iteration", an.loop.counts[c]}, {"share", an.loop.share(SassClass(c))}};
    if (!an.per_k.empty()) e["per_k"] = an.per_k[size_t(c)];
    m[to_string(SassClass(c))] = e;
  }
  return m;
}

nlohmann::json listing_json(const SassListing& l, const SassAnalysis& an) {
  nlohmann::json j = {{"kernel", l.kernel},
                      {"tile", l.tile},
                      {"function", l.function},
                      {"name", demangle(l.function)},
                      {"arch", l.arch},
                      {"source", l.origin()},
                      {"tool", l.tool},
                      {"build_time", l.build_time},
                      {"regs", l.regs},
                      {"spill_bytes", l.spill_bytes},
                      {"stack_bytes", l.stack_bytes},
                      {"static_smem", l.static_smem},
                      {"instructions", an.code.size()},
                      {"loops", an.loops.size()},
                      {"main_loop_why", an.main_loop_why}};
  if (an.main_loop >= 0) {
    const Loop& lp = an.loops[size_t(an.main_loop)];
    j["main_loop"] = {{"first", an.code[lp.first].address},
                      {"last", an.code[lp.last].address},
                      {"instructions", lp.size()},
                      {"depth", lp.depth},
                      {"k_per_iteration", an.k_per_iteration},
                      {"k_note", an.k_note},
                      {"compute_share", an.compute_share()},
                      {"mix", mix_json(an)}};
  }
  return j;
}

void print_header(const SassListing& l) {
  std::printf("%s at tile %d: %s\n", l.kernel.c_str(), l.tile, demangle(l.function).c_str());
  std::printf("from: %s\n", l.origin().c_str());
  std::printf("%s\n", resources(l).c_str());
  if (!l.note.empty()) std::printf("note: %s\n", l.note.c_str());
}

}  // namespace

void add_sass_options(CLI::App* cmd, SassArgs& a) {
  cmd->add_option("--kernel", a.kernel, "kernel name (see `tilescope list`)")->required();
  cmd->add_option("--tile", a.tile, "tile size (default: the kernel's default)");
  cmd->add_option("--diff", a.diff,
                  "compare with another kernel and tile, KERNEL:TILE (e.g. blocktile2d:64): the main loops' "
                  "instruction mix and an opcode-level diff");
  cmd->add_flag("--mix", a.mix, "print the main loop's instruction mix instead of the listing");
  cmd->add_option("--arch", a.arch,
                  "the architecture's code (e.g. sm_80; default: the device's, else the newest)");
  cmd->add_flag("--json", a.json, "print JSON (the listing's figures and its main loop's mix, or the diff)");
  cmd->add_option("--backend", a.backend, "auto (CUDA if a GPU is present), cuda or cpu")
      ->capture_default_str();
  add_engine_option(cmd, a.engine);
}

int cmd_sass(SassArgs& a, const CLI::App& cmd) {
  const int arch = parse_arch_text(a.arch);
  Which second;
  if (!a.diff.empty()) {
    const size_t colon = a.diff.find(':');
    if (colon == 0) throw ValidationError("--diff = '" + a.diff + "': give KERNEL:TILE, e.g. blocktile2d:64");
  }
  const auto backend = open_backend(a.backend, nullptr, a.engine, cmd.count("--backend") > 0);
  const Which first = parse_which(a.kernel, a.tile, *backend, "--tile");
  if (!a.diff.empty()) {
    const size_t colon = a.diff.find(':');
    second = parse_which(a.diff.substr(0, colon), colon == std::string::npos ? "" : a.diff.substr(colon + 1),
                         *backend, "--diff");
  }
  const SassListing l = fetch(*backend, first, arch);
  const SassAnalysis an = analyse_sass(l);
  if (!a.diff.empty()) {
    const SassListing r = fetch(*backend, second, arch);
    const SassDiff d = diff_sass(l, r);
    const std::string na = first.kernel + ":" + std::to_string(first.tile);
    const std::string nb = second.kernel + ":" + std::to_string(second.tile);
    if (a.json) {
      nlohmann::json j = {{"a", listing_json(l, d.a)}, {"b", listing_json(r, d.b)}};
      nlohmann::json delta = nlohmann::json::object();
      for (int c = 0; c < int(SassClass::Count); ++c) delta[to_string(SassClass(c))] = d.delta[c];
      j["delta_per_iteration"] = delta;
      j["same"] = d.same;
      j["removed"] = d.removed;
      j["added"] = d.added;
      j["truncated"] = d.truncated;
      std::cout << j.dump(2) << "\n";
      return kExitOk;
    }
    std::printf("a: %s (%s; %s)\nb: %s (%s; %s)\n\n", na.c_str(), l.origin().c_str(), resources(l).c_str(),
                nb.c_str(), r.origin().c_str(), resources(r).c_str());
    std::printf("%s", format_diff(d, na + "  " + d.a.k_note, nb + "  " + d.b.k_note, !a.mix).c_str());
    return kExitOk;
  }
  if (a.json) {
    std::cout << listing_json(l, an).dump(2) << "\n";
    return kExitOk;
  }
  print_header(l);
  if (a.mix) {
    std::printf("%s", format_mix(an).c_str());
    return kExitOk;
  }
  // The listing, the main loop's lines marked with '>' and its head and branch named.
  size_t first_i = SIZE_MAX, last_i = SIZE_MAX;
  if (an.main_loop >= 0) {
    first_i = an.loops[size_t(an.main_loop)].first;
    last_i = an.loops[size_t(an.main_loop)].last;
  }
  std::printf("main loop: %s\n\n", an.main_loop >= 0 ? ("lines marked '>' (" + an.k_note + ")").c_str()
                                                     : an.main_loop_why.c_str());
  for (size_t i = 0; i < an.code.size(); ++i) {
    const Instruction& in = an.code[i];
    const bool inside = i >= first_i && i <= last_i;
    std::printf("%c /*%04x*/ %-6s %s %s ;%s\n", inside ? '>' : ' ', in.address, in.predicate.c_str(),
                in.opcode.c_str(), in.operands.c_str(),
                i == first_i  ? "   // main loop head"
                : i == last_i ? "   // main loop branch back"
                              : "");
  }
  return kExitOk;
}

}  // namespace ts::cli
