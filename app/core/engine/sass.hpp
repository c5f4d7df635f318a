#pragma once
// [SECTION] Machine code (SASS) of a kernel: the listing as data, the build-time archive of the built-in
// kernels' listings, and the analysis the SASS panel and `tilescope sass` show. Plain C++: the listing is
// text that cuobjdump wrote (at build time for the built-in kernels, at run time for a person's kernel from
// the cubin NVRTC made); nothing here runs a GPU.
//
// Analysis, all static (what the code says, not what ran):
//   - parse: one Instruction per "/*addr*/ [@pred] OPCODE operands ;" line, branch targets read from the
//     operands of BRA / BRX / JMP / CALL / BSSY / BREAK-like opcodes that name an address;
//   - loops: every backward branch (target <= its own address) closes a loop [target, branch]; loops nest by
//     containment;
//   - the main loop: the loop whose instructions hold the most multiply-adds (FFMA, HMMA, HGMMA, counted
//     statically, inner loops included); when a loop inside it holds all of them, that inner one (the
//     innermost loop that carries the work). No loop: no main loop.
//   - the mix: per class (FFMA, LDS, STS, LDG/LDGSTS, BAR, HMMA/HGMMA, other) of one pass through the main
//     loop's body with its inner loops left out (a static count: each instruction once). Inner loops of the
//     main loop are loops with fewer multiply-adds (loaders nvcc unrolled by 4 with a remainder, spin-waits
//     on a barrier): counted whole, their bodies would outweigh what one iteration runs (blocktile2d 64's
//     loaders: 14 LDG written, 4 run). The mix with them is kept beside it (loop_all);
//   - k per iteration: the multiply-adds one iteration does for the block (inner loops left out; FFMA: one
//   per
//     thread; HMMA mMnNkK:
//     m*n*k per warp; HGMMA mMxNxK: m*n*k per warpgroup of 128 threads) divided by the block's C tile
//     (tile_m * tile_n): the k steps one iteration covers (one BK step of a tiled kernel when nvcc unrolled
//     it). Needs the launch's threads and tile; 0 when they are unknown.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace ts {

// [SECTION] A listing and where it comes from.
struct SassListing {
  bool available = false;
  std::string why;  // !available: why not (no tool at build time, a kernel with closed code, ...)
  std::string kernel;
  int tile = 0;
  std::string function;    // the kernel's mangled name in the cubin
  int arch = 0;            // compute capability major * 10 + minor of the code (sm_90a counts as 90)
  std::string text;        // one instruction per line: "/*0040*/ ISETP.GE.AND P0, PT, R3, 0x1, PT ;"
  std::string tool;        // e.g. "cuobjdump 13.2.51"
  bool build_time = true;  // false: disassembled at run time (a person's kernel)
  std::string made;        // when: the build's date (build time) or the disassembly's (run time), UTC
  std::string engine;      // the engine that answered (its device), filled by the backend
  // Resources (ptxas): -1 where unknown.
  int regs = -1, static_smem = -1, spill_bytes = -1, stack_bytes = -1;
  // The launch (for k per iteration): threads per block and C per block; 0 where unknown.
  int threads = 0, tile_m = 0, tile_n = 0;
  std::string note;  // e.g. "sm_80 not in this build: the sm_90 listing"

  // "cuobjdump 13.2.51 at build time (2026-11-27 10:38 UTC), sm_90": where the listing comes from.
  std::string origin() const;
};

// [SECTION] The build-time archive (the generated source of tilescope_build_resources defines it; a build
// without nvcc or without cuobjdump has none and says why).
struct BuildSassRow {
  const char* kernel;
  int tile;
  bool aligned;           // the launch of an aligned shape (4096^3) or a ragged one (4099^3)
  int arch;               // 90 for sm_90 and sm_90a
  const char* function;   // mangled
  uint32_t offset, size;  // of its listing in the archive's text
  int regs, static_smem, spill_bytes, stack_bytes, threads, tile_m, tile_n;
};
struct BuildSassArchive {
  const BuildSassRow* rows = nullptr;
  size_t count = 0;
  const unsigned char* blob = nullptr;  // the listings' text, zstd-compressed
  size_t blob_bytes = 0, text_bytes = 0;
  const char* tool = "";  // "cuobjdump 13.2.51" ("" when there was none)
  const char* made = "";  // the build's date, UTC
  const char* note = "";  // where the listings come from, or why there are none
};
const BuildSassArchive& build_sass_archive();
// The program's own archive: main() hands it over once, where the program links tilescope_build_sass
// (set_program_listings(&build_sass_archive())), and backends answer from it (Backend::sass_listing).
// nullptr before: then no built-in kernel has a listing, and the answer says so.
void set_program_listings(const BuildSassArchive* archive);
const BuildSassArchive* program_listings();

// The listing of a built-in kernel x tile from an archive: the aligned launch's function for `arch` (0: the
// newest architecture compiled; an architecture not compiled: the nearest below, else above, and the note
// says so). Not available (why says so) for a kernel or tile not in it. Decompresses the archive once.
SassListing built_in_sass(const BuildSassArchive& archive, const std::string& kernel, int tile, int arch);

// [SECTION] Parsing.
struct Instruction {
  uint32_t address = 0;
  std::string predicate;     // "@!P0" or ""
  std::string opcode;        // with modifiers: "FFMA", "LDS.128", "HGMMA.64x128x8.F32.TF32"
  std::string operands;      // as written, without the ';'
  int64_t target = -1;       // a branch's target address, -1 when none
  size_t line = 0;           // its line in the listing (0-based)
  std::string base() const;  // the opcode without modifiers: "LDS"
};
// Lines that are not instructions (headers, labels, blank lines) are skipped. Throws std::invalid_argument
// for an instruction line it cannot read (an address that is not hex) and for a listing over kMaxSassLines.
inline constexpr size_t kMaxSassLines = size_t(1) << 20;
std::vector<Instruction> parse_sass(const std::string& text);

// [SECTION] Loops.
struct Loop {
  size_t first = 0, last = 0;  // indices into the instructions: [first, last], last is the backward branch
  int depth = 0;               // 0: outermost
  int parent = -1;             // index of the loop that contains it
  size_t size() const { return last - first + 1; }
};
// Every backward branch's loop, outermost first by start (a loop that shares its head with a longer one is
// nested in it). Instructions are in address order.
std::vector<Loop> find_loops(const std::vector<Instruction>& code);

// [SECTION] The mix.
enum class SassClass { Ffma, Lds, Sts, Ldg, Bar, Mma, Other, Count };
const char* to_string(SassClass c);  // "FFMA", "LDS", "STS", "LDG/LDGSTS", "BAR", "HMMA/HGMMA", "other"
SassClass classify(const Instruction& in);
struct SassMix {
  int counts[int(SassClass::Count)] = {};
  int total = 0;
  int count(SassClass c) const { return counts[int(c)]; }
  double share(SassClass c) const { return total > 0 ? double(counts[int(c)]) / total : 0; }
};
SassMix mix_of(const std::vector<Instruction>& code, size_t first, size_t last);

// Multiply-adds per thread one instruction does (FFMA: 1; HMMA.1688: 16*8*8 / 32; HGMMA.64x128x8: 64*128*8 /
// 128; DFMA/HFMA2 and the rest: 0 here).
double macs_per_thread(const Instruction& in);

struct SassAnalysis {
  std::vector<Instruction> code;
  std::vector<Loop> loops;
  int main_loop = -1;          // index into loops, -1: none
  std::string main_loop_why;   // how it was chosen, or why there is none
  SassMix whole;               // of the whole function
  SassMix loop;                // one main-loop iteration, its inner loops left out
  SassMix loop_all;            // every instruction from the loop's head to its branch back, inner loops in
  int inner_loops = 0;         // loops nested in the main loop
  std::vector<bool> in_inner;  // per instruction: inside a loop nested in the main loop
  double k_per_iteration = 0;  // k steps one iteration covers (0: unknown)
  std::string k_note;          // what one iteration covers, in words
  // The loop's mix per k step (loop / k_per_iteration; empty when k_per_iteration is 0).
  std::vector<double> per_k;
  double compute_share() const;  // FFMA + HMMA/HGMMA over all instructions of one iteration
};
// threads, tile_m, tile_n: the launch (0: unknown; k per iteration is then 0).
SassAnalysis analyse_sass(const std::string& text, int threads, int tile_m, int tile_n);
SassAnalysis analyse_sass(const SassListing& l);

// [SECTION] Diff of two listings.
// An instruction with its registers made anonymous ("FFMA R12, R3, R40, R12" -> "FFMA R, R, R, R"; UR, P,
// UP, B likewise), so the same code with other registers compares equal.
std::string normalised(const Instruction& in);
struct SassDiffLine {
  char op = ' ';     // ' ' in both, '-' only in the first, '+' only in the second
  std::string text;  // normalised
};
struct SassDiff {
  SassAnalysis a, b;
  int delta[int(SassClass::Count)] = {};  // b's loop mix minus a's (per iteration)
  std::vector<double> per_k_delta;        // b minus a per k step (empty when either k is unknown)
  std::vector<SassDiffLine> lines;        // the main loops, opcode level (empty when either has none)
  int added = 0, removed = 0, same = 0;
  bool truncated = false;  // the loops were too long to align line by line: counts only
};
SassDiff diff_sass(const SassListing& a, const SassListing& b);

// [SECTION] Text for the command line and the panel.
std::string demangle(const std::string& mangled);  // the name itself when it cannot be demangled
std::string format_mix(const SassAnalysis& an);    // a small table: class, per iteration, per k, share
std::string format_diff(const SassDiff& d, const std::string& name_a, const std::string& name_b,
                        bool with_lines);

}  // namespace ts
