#include "core/engine/sass.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>

#include "core/base/compress.hpp"

namespace ts {

namespace {

bool is_hex(char c) {
  return std::isxdigit(static_cast<unsigned char>(c)) != 0;
}
bool is_digit(char c) {
  return std::isdigit(static_cast<unsigned char>(c)) != 0;
}
std::string trim(const std::string& s) {
  size_t a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}
std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}
std::string hex_address(uint32_t a) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%04x", a);
  return buf;
}

bool is_branch(const std::string& base) {
  return base == "BRA" || base == "BRX" || base == "JMP" || base == "JMX" || base == "CALL" ||
         base == "BSSY" || base == "SSY" || base == "PBK" || base == "PCNT";
}

// The last "0x..." token of the operands that stands alone (a branch's target), -1 when none.
int64_t branch_target(const std::string& ops) {
  int64_t found = -1;
  for (size_t i = 0; i + 1 < ops.size(); ++i) {
    if (ops.compare(i, 2, "0x") != 0) continue;
    if (i > 0 && !(ops[i - 1] == ' ' || ops[i - 1] == ',' || ops[i - 1] == '(')) continue;
    size_t j = i + 2;
    uint64_t v = 0;
    while (j < ops.size() && is_hex(ops[j]) && j - i < 18) {
      const char c = char(std::tolower(static_cast<unsigned char>(ops[j])));
      v = v * 16 + uint64_t(c <= '9' ? c - '0' : c - 'a' + 10);
      ++j;
    }
    if (j == i + 2) continue;
    if (j < ops.size() && !(ops[j] == ' ' || ops[j] == ',' || ops[j] == ')')) continue;
    if (v <= uint64_t(INT64_MAX)) found = int64_t(v);
  }
  return found;
}

}  // namespace

std::string SassListing::origin() const {
  if (!available) return "no listing: " + why;
  std::string s = (tool.empty() ? std::string("an unnamed tool") : tool) +
                  (build_time ? " at build time" : " at run time");
  if (!made.empty()) s += " (" + made + ")";
  if (arch > 0) s += ", sm_" + std::to_string(arch);
  if (!engine.empty()) s += ", from " + engine;
  return s;
}

// [SECTION] The archive.
namespace {

std::atomic<const BuildSassArchive*> g_program_listings{nullptr};

std::shared_ptr<const std::string> archive_text(const BuildSassArchive& a) {
  static std::mutex mu;
  static std::map<const unsigned char*, std::shared_ptr<const std::string>> cache;
  std::lock_guard<std::mutex> lock(mu);
  auto& slot = cache[a.blob];
  if (!slot) {
    auto text = std::make_shared<std::string>(a.text_bytes, '\0');
    if (a.text_bytes > 0)
      zstd_decompress(std::string(reinterpret_cast<const char*>(a.blob), a.blob_bytes), text->data(),
                      a.text_bytes);
    slot = std::move(text);
  }
  return slot;
}

}  // namespace

void set_program_listings(const BuildSassArchive* archive) {
  g_program_listings.store(archive);
}
const BuildSassArchive* program_listings() {
  return g_program_listings.load();
}

SassListing built_in_sass(const BuildSassArchive& archive, const std::string& kernel, int tile, int arch) {
  SassListing l;
  l.kernel = kernel;
  l.tile = tile;
  if (archive.count == 0) {
    l.why = archive.note && *archive.note ? archive.note : "this build has no machine code listings";
    return l;
  }
  std::vector<const BuildSassRow*> rows;
  for (size_t i = 0; i < archive.count; ++i) {
    const BuildSassRow& r = archive.rows[i];
    if (r.aligned && kernel == r.kernel && r.tile == tile) rows.push_back(&r);
  }
  if (rows.empty()) {
    bool kernel_known = false;
    for (size_t i = 0; i < archive.count; ++i) kernel_known |= kernel == archive.rows[i].kernel;
    l.why = kernel_known ? "no listing of " + kernel + " at tile " + std::to_string(tile) + " in this build"
                         : "no listing of " + kernel +
                               " in this build (cuBLAS's kernels are closed; a person's kernel is "
                               "disassembled when it is built)";
    return l;
  }
  // The architecture asked; else the nearest below; else the nearest above; arch 0: the newest.
  const BuildSassRow* pick = nullptr;
  for (const BuildSassRow* r : rows) {
    if (arch <= 0) {
      if (!pick || r->arch > pick->arch) pick = r;
    } else if (r->arch <= arch && (!pick || pick->arch > arch || r->arch > pick->arch)) {
      pick = r;
    } else if (r->arch > arch && (!pick || (pick->arch > arch && r->arch < pick->arch))) {
      pick = r;
    }
  }
  if (arch > 0 && pick->arch != arch)
    l.note = "sm_" + std::to_string(arch) + " not compiled in this build: the sm_" +
             std::to_string(pick->arch) + " listing";
  const auto text = archive_text(archive);
  if (size_t(pick->offset) + pick->size > text->size()) {
    l.why = "the build's archive of listings is damaged (a listing past its end)";
    return l;
  }
  l.available = true;
  l.function = pick->function;
  l.arch = pick->arch;
  l.text = text->substr(pick->offset, pick->size);
  l.tool = archive.tool;
  l.build_time = true;
  l.made = archive.made;
  l.regs = pick->regs;
  l.static_smem = pick->static_smem;
  l.spill_bytes = pick->spill_bytes;
  l.stack_bytes = pick->stack_bytes;
  l.threads = pick->threads;
  l.tile_m = pick->tile_m;
  l.tile_n = pick->tile_n;
  return l;
}

// [SECTION] Parsing.
std::string Instruction::base() const {
  const size_t dot = opcode.find('.');
  return dot == std::string::npos ? opcode : opcode.substr(0, dot);
}

std::vector<Instruction> parse_sass(const std::string& text) {
  std::vector<Instruction> out;
  size_t pos = 0, line_no = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    if (line_no >= kMaxSassLines)
      throw std::invalid_argument("a listing of more than " + std::to_string(kMaxSassLines) + " lines");
    const std::string line = text.substr(pos, end - pos);
    pos = end + 1;
    const size_t ln = line_no++;
    size_t i = 0;
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    if (line.compare(i, 2, "/*") != 0) continue;
    size_t j = i + 2;
    uint64_t addr = 0;
    while (j < line.size() && is_hex(line[j]) && j - i < 12) {
      const char c = char(std::tolower(static_cast<unsigned char>(line[j])));
      addr = addr * 16 + uint64_t(c <= '9' ? c - '0' : c - 'a' + 10);
      ++j;
    }
    if (j == i + 2 || line.compare(j, 2, "*/") != 0) continue;  // an encoding line, or not an instruction
    if (addr > UINT32_MAX) continue;
    const size_t semi = line.find(';', j + 2);
    if (semi == std::string::npos) continue;
    std::string body = trim(line.substr(j + 2, semi - (j + 2)));
    if (body.empty()) continue;
    Instruction in;
    in.address = uint32_t(addr);
    in.line = ln;
    if (body[0] == '@') {
      const size_t sp = body.find(' ');
      if (sp == std::string::npos) continue;
      in.predicate = body.substr(0, sp);
      body = trim(body.substr(sp + 1));
    }
    const size_t sp = body.find(' ');
    in.opcode = sp == std::string::npos ? body : body.substr(0, sp);
    in.operands = sp == std::string::npos ? "" : trim(body.substr(sp + 1));
    if (in.opcode.empty()) continue;
    if (is_branch(in.base())) in.target = branch_target(in.operands);
    out.push_back(std::move(in));
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const Instruction& a, const Instruction& b) { return a.address < b.address; });
  return out;
}

// [SECTION] Loops.
std::vector<Loop> find_loops(const std::vector<Instruction>& code) {
  std::vector<Loop> loops;
  for (size_t i = 0; i < code.size(); ++i) {
    const Instruction& in = code[i];
    const std::string b = in.base();
    if ((b != "BRA" && b != "JMP") || in.target < 0 || in.target >= int64_t(in.address)) continue;
    // A branch to itself is the trap after EXIT that every function ends with, not a loop.
    const auto head = std::lower_bound(code.begin(), code.end(), uint32_t(in.target),
                                       [](const Instruction& x, uint32_t a) { return x.address < a; });
    if (head == code.end() || head->address != uint32_t(in.target)) continue;
    Loop l;
    l.first = size_t(head - code.begin());
    l.last = i;
    loops.push_back(l);
  }
  std::sort(loops.begin(), loops.end(), [](const Loop& a, const Loop& b) {
    return a.first != b.first ? a.first < b.first : a.last > b.last;
  });
  loops.erase(
      std::unique(loops.begin(), loops.end(),
                  [](const Loop& a, const Loop& b) { return a.first == b.first && a.last == b.last; }),
      loops.end());
  for (size_t i = 0; i < loops.size(); ++i) {
    // The smallest earlier loop that contains it (sorted by start, the longer first at the same start).
    for (size_t j = i; j-- > 0;) {
      if (loops[j].first <= loops[i].first && loops[j].last >= loops[i].last) {
        loops[i].parent = int(j);
        loops[i].depth = loops[j].depth + 1;
        break;
      }
    }
  }
  return loops;
}

// [SECTION] The mix.
const char* to_string(SassClass c) {
  switch (c) {
    case SassClass::Ffma:
      return "FFMA";
    case SassClass::Lds:
      return "LDS";
    case SassClass::Sts:
      return "STS";
    case SassClass::Ldg:
      return "LDG/LDGSTS";
    case SassClass::Bar:
      return "BAR";
    case SassClass::Mma:
      return "HMMA/HGMMA";
    case SassClass::Other:
      return "other";
    case SassClass::Count:
      break;
  }
  return "?";
}

SassClass classify(const Instruction& in) {
  const std::string b = in.base();
  if (b == "FFMA") return SassClass::Ffma;
  if (b == "LDS" || b == "LDSM") return SassClass::Lds;
  if (b == "STS" || b == "STSM") return SassClass::Sts;
  if (b == "LDG" || b == "LDGSTS" || b == "UTMALDG" || b == "UBLKCP") return SassClass::Ldg;
  if (b == "BAR" || b == "SYNCS") return SassClass::Bar;
  if (b == "HMMA" || b == "HGMMA" || b == "IMMA" || b == "IGMMA" || b == "QGMMA" || b == "DMMA" ||
      b == "BMMA")
    return SassClass::Mma;
  return SassClass::Other;
}

SassMix mix_of(const std::vector<Instruction>& code, size_t first, size_t last) {
  SassMix m;
  for (size_t i = first; i <= last && i < code.size(); ++i) {
    ++m.counts[int(classify(code[i]))];
    ++m.total;
  }
  return m;
}

double macs_per_thread(const Instruction& in) {
  const std::string b = in.base();
  if (b == "FFMA") return 1;
  const size_t dot = in.opcode.find('.');
  if (dot == std::string::npos) return 0;
  const size_t end = in.opcode.find('.', dot + 1);
  const std::string shape =
      in.opcode.substr(dot + 1, end == std::string::npos ? std::string::npos : end - dot - 1);
  if (b == "HMMA") {  // "1688" = m16 n8 k8, "16816" = m16 n8 k16, "884" = m8 n8 k4, per warp
    if (shape.size() < 3 || !std::all_of(shape.begin(), shape.end(), is_digit)) return 0;
    const int m = shape.compare(0, 2, "16") == 0 ? 16 : shape[0] - '0';
    const size_t at = m == 16 ? 2 : 1;
    if (shape[at] != '8') return 0;
    const int k = std::atoi(shape.c_str() + at + 1);
    return double(m) * 8 * k / 32;
  }
  if (b == "HGMMA") {  // "64x128x8": m x n x k per warpgroup of 128 threads
    int m = 0, n = 0, k = 0;
    if (std::sscanf(shape.c_str(), "%dx%dx%d", &m, &n, &k) != 3 || m <= 0 || n <= 0 || k <= 0 || m > 1024 ||
        n > 1024 || k > 1024)
      return 0;
    return double(m) * n * k / 128;
  }
  return 0;
}

double SassAnalysis::compute_share() const {
  return loop.total > 0 ? double(loop.count(SassClass::Ffma) + loop.count(SassClass::Mma)) / loop.total : 0;
}

SassAnalysis analyse_sass(const std::string& text, int threads, int tile_m, int tile_n) {
  SassAnalysis an;
  an.code = parse_sass(text);
  an.loops = find_loops(an.code);
  if (!an.code.empty()) an.whole = mix_of(an.code, 0, an.code.size() - 1);
  double best = 0;
  for (size_t i = 0; i < an.loops.size(); ++i) {
    double macs = 0;
    for (size_t j = an.loops[i].first; j <= an.loops[i].last; ++j) macs += macs_per_thread(an.code[j]);
    const bool better = macs > best || (macs == best && macs > 0 && an.main_loop >= 0 &&
                                        an.loops[i].size() < an.loops[size_t(an.main_loop)].size());
    if (better) {
      best = macs;
      an.main_loop = int(i);
    }
  }
  if (an.code.empty()) {
    an.main_loop_why = "no instructions";
    return an;
  }
  if (an.loops.empty()) {
    an.main_loop_why = "no loop: no backward branch in the code";
    return an;
  }
  if (an.main_loop < 0) {
    an.main_loop_why = std::to_string(an.loops.size()) + " loop(s), none with FFMA, HMMA or HGMMA";
    return an;
  }
  const Loop& l = an.loops[size_t(an.main_loop)];
  an.loop_all = mix_of(an.code, l.first, l.last);
  // Its inner loops: every loop whose chain of parents reaches the main loop.
  an.in_inner.assign(an.code.size(), false);
  for (size_t i = 0; i < an.loops.size(); ++i) {
    int p = an.loops[i].parent;
    while (p >= 0 && p != an.main_loop) p = an.loops[size_t(p)].parent;
    if (p != an.main_loop) continue;
    ++an.inner_loops;
    for (size_t j = an.loops[i].first; j <= an.loops[i].last; ++j) an.in_inner[j] = true;
  }
  best = 0;
  for (size_t j = l.first; j <= l.last; ++j) {
    if (an.in_inner[j]) continue;
    ++an.loop.counts[int(classify(an.code[j]))];
    ++an.loop.total;
    best += macs_per_thread(an.code[j]);
  }
  an.main_loop_why = "of " + std::to_string(an.loops.size()) +
                     " loop(s), the one with the most multiply-adds (FFMA, HMMA, HGMMA; the innermost where "
                     "nested loops hold the same)";
  if (an.inner_loops > 0)
    an.main_loop_why += "; its " + std::to_string(an.inner_loops) + " inner loop(s) (" +
                        std::to_string(an.loop_all.total - an.loop.total) +
                        " instructions) left out of the mix";
  // k per iteration: the block's multiply-adds in one iteration over its C tile.
  if (threads > 0 && tile_m > 0 && tile_n > 0) {
    const double k = best * threads / (double(tile_m) * tile_n);
    if (k > 0) {
      an.k_per_iteration = k;
      const double rounded = std::round(k);
      an.k_note = "one iteration covers " +
                  (std::fabs(k - rounded) < 1e-6 ? std::to_string(int64_t(rounded)) : fixed(k, 2)) +
                  " k step(s): " + fixed(best, best == std::floor(best) ? 0 : 1) +
                  " multiply-adds per thread x " + std::to_string(threads) + " threads over a " +
                  std::to_string(tile_m) + " x " + std::to_string(tile_n) + " tile of C";
      for (int c = 0; c < int(SassClass::Count); ++c) an.per_k.push_back(an.loop.counts[c] / k);
    }
  } else {
    an.k_note = "k per iteration unknown (no launch shape for this kernel)";
  }
  return an;
}

SassAnalysis analyse_sass(const SassListing& l) {
  return analyse_sass(l.text, l.threads, l.tile_m, l.tile_n);
}

// [SECTION] Diff.
std::string normalised(const Instruction& in) {
  auto anonymise = [](const std::string& s) {
    std::string out;
    for (size_t i = 0; i < s.size();) {
      const bool boundary = i == 0 || std::string(" ,[-!|(~+{@").find(s[i - 1]) != std::string::npos;
      size_t p = 0;
      if (boundary) {
        for (const char* prefix : {"UR", "UP", "R", "P", "B"}) {
          const size_t n = std::char_traits<char>::length(prefix);
          if (s.compare(i, n, prefix) == 0 && i + n < s.size() && is_digit(s[i + n])) {
            p = n;
            break;
          }
        }
      }
      if (p == 0) {
        out += s[i++];
        continue;
      }
      out.append(s, i, p);
      i += p;
      while (i < s.size() && is_digit(s[i])) ++i;
      if (s.compare(i, 6, ".reuse") == 0) i += 6;
    }
    return out;
  };
  std::string ops = in.operands;
  if (in.target >= 0) {
    const size_t at = ops.rfind("0x");
    if (at != std::string::npos) ops = ops.substr(0, at) + "<target>";
  }
  std::string s = in.predicate.empty() ? "" : anonymise(in.predicate) + " ";
  return s + in.opcode + (ops.empty() ? "" : " " + anonymise(ops));
}

SassDiff diff_sass(const SassListing& a, const SassListing& b) {
  SassDiff d;
  d.a = analyse_sass(a);
  d.b = analyse_sass(b);
  for (int c = 0; c < int(SassClass::Count); ++c) d.delta[c] = d.b.loop.counts[c] - d.a.loop.counts[c];
  if (!d.a.per_k.empty() && !d.b.per_k.empty())
    for (int c = 0; c < int(SassClass::Count); ++c) d.per_k_delta.push_back(d.b.per_k[c] - d.a.per_k[c]);
  if (d.a.main_loop < 0 || d.b.main_loop < 0) return d;
  std::vector<std::string> x, y;
  for (size_t i = d.a.loops[d.a.main_loop].first; i <= d.a.loops[d.a.main_loop].last; ++i)
    x.push_back(normalised(d.a.code[i]));
  for (size_t i = d.b.loops[d.b.main_loop].first; i <= d.b.loops[d.b.main_loop].last; ++i)
    y.push_back(normalised(d.b.code[i]));
  const size_t n = x.size(), m = y.size();
  constexpr size_t kMaxCells = size_t(12) << 20;  // 24 MiB of 16-bit lengths
  if (n > 60000 || m > 60000 || (n + 1) * (m + 1) > kMaxCells) {
    d.truncated = true;
    std::map<std::string, int> count;
    for (const auto& s : x) ++count[s];
    for (const auto& s : y) {
      auto it = count.find(s);
      if (it != count.end() && it->second > 0) {
        --it->second;
        ++d.same;
      } else {
        ++d.added;
      }
    }
    d.removed = int(n) - d.same;
    return d;
  }
  // Longest common subsequence, then the walk that prints it.
  std::vector<uint16_t> t((n + 1) * (m + 1), 0);
  auto at = [&](size_t i, size_t j) -> uint16_t& { return t[i * (m + 1) + j]; };
  for (size_t i = n; i-- > 0;)
    for (size_t j = m; j-- > 0;)
      at(i, j) = x[i] == y[j] ? uint16_t(at(i + 1, j + 1) + 1) : std::max(at(i + 1, j), at(i, j + 1));
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && x[i] == y[j]) {
      d.lines.push_back({' ', x[i]});
      ++d.same;
      ++i;
      ++j;
    } else if (j < m && (i == n || at(i, j + 1) >= at(i + 1, j))) {
      d.lines.push_back({'+', y[j++]});
      ++d.added;
    } else {
      d.lines.push_back({'-', x[i++]});
      ++d.removed;
    }
  }
  return d;
}

// [SECTION] Text.
std::string demangle(const std::string& mangled) {
  int status = 0;
  char* s = abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status);
  if (status != 0 || !s) {
    std::free(s);
    return mangled;
  }
  std::string out = s;
  std::free(s);
  return out;
}

std::string format_mix(const SassAnalysis& an) {
  std::string s;
  if (an.main_loop < 0) return "main loop: none (" + an.main_loop_why + ")\n";
  const Loop& l = an.loops[size_t(an.main_loop)];
  s += "main loop: " + hex_address(an.code[l.first].address) + " .. " + hex_address(an.code[l.last].address) +
       ", " + std::to_string(l.size()) + " instructions, depth " + std::to_string(l.depth) + " (" +
       an.main_loop_why + ")\n";
  s += an.k_note.empty() ? "" : an.k_note + "\n";
  char buf[160];
  std::snprintf(buf, sizeof buf, "%-12s %10s %10s %8s\n", "class", "/iteration", "/k step", "share");
  s += buf;
  for (int c = 0; c < int(SassClass::Count); ++c) {
    const std::string perk = an.per_k.empty() ? "-" : fixed(an.per_k[size_t(c)], 2);
    std::snprintf(buf, sizeof buf, "%-12s %10d %10s %7.1f%%\n", to_string(SassClass(c)), an.loop.counts[c],
                  perk.c_str(), 100 * an.loop.share(SassClass(c)));
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "%-12s %10d %10s %7.1f%%\n", "total", an.loop.total,
                an.per_k.empty() ? "-" : fixed(an.loop.total / an.k_per_iteration, 2).c_str(), 100.0);
  s += buf;
  if (an.inner_loops > 0)
    s += "with its inner loops counted once: " + std::to_string(an.loop_all.total) + " instructions, FFMA " +
         fixed(100 * an.loop_all.share(SassClass::Ffma), 1) + "%, HMMA/HGMMA " +
         fixed(100 * an.loop_all.share(SassClass::Mma), 1) + "%\n";
  return s;
}

std::string format_diff(const SassDiff& d, const std::string& name_a, const std::string& name_b,
                        bool with_lines) {
  std::string s = "a: " + name_a + "\nb: " + name_b + "\n";
  char buf[200];
  std::snprintf(buf, sizeof buf, "%-12s %8s %8s %8s %10s %10s %9s\n", "class", "a/iter", "b/iter", "delta",
                "a/k", "b/k", "share b-a");
  s += buf;
  for (int c = 0; c < int(SassClass::Count); ++c) {
    const auto cls = SassClass(c);
    const std::string ak = d.a.per_k.empty() ? "-" : fixed(d.a.per_k[size_t(c)], 2);
    const std::string bk = d.b.per_k.empty() ? "-" : fixed(d.b.per_k[size_t(c)], 2);
    std::snprintf(buf, sizeof buf, "%-12s %8d %8d %+8d %10s %10s %+8.1f%%\n", to_string(cls),
                  d.a.loop.count(cls), d.b.loop.count(cls), d.delta[c], ak.c_str(), bk.c_str(),
                  100 * (d.b.loop.share(cls) - d.a.loop.share(cls)));
    s += buf;
  }
  std::snprintf(buf, sizeof buf, "%-12s %8d %8d %+8d\n", "total", d.a.loop.total, d.b.loop.total,
                d.b.loop.total - d.a.loop.total);
  s += buf;
  std::snprintf(buf, sizeof buf, "k per iteration: a %s, b %s\n",
                d.a.k_per_iteration > 0 ? fixed(d.a.k_per_iteration, 1).c_str() : "unknown",
                d.b.k_per_iteration > 0 ? fixed(d.b.k_per_iteration, 1).c_str() : "unknown");
  s += buf;
  if (d.a.main_loop < 0 || d.b.main_loop < 0) return s + "no opcode diff: a main loop is missing\n";
  s += "main loops, registers made anonymous: " + std::to_string(d.same) + " same, " +
       std::to_string(d.removed) + " only in a, " + std::to_string(d.added) + " only in b" +
       (d.truncated ? " (too long to align line by line: counted by instruction)" : "") + "\n";
  if (with_lines)
    for (const auto& l : d.lines) s += std::string(1, l.op) + " " + l.text + "\n";
  return s;
}

}  // namespace ts
