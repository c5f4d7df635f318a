#pragma once
// [SECTION] A person's own kernel, understood: which parameter is A, B, C or a size, which symbol is the tile
// (bound to the Tile control), and how to launch it (grid, block and dynamic shared memory as formulas over
// M, N, K and TILE). propose_spec() guesses all of it from names and order; the person corrects it in a small
// form (or with --param / --grid / --block / --smem on the command line), and validate_spec() says, in words,
// what could not be mapped. Then the sources NVRTC compiles: the plain build (host code left out, the tile
// and size symbols substituted in place, so compiler messages keep their line numbers) and the traced build
// (the kernel's body as a device function called from a generated kernel that stamps %smid and %globaltimer,
// so the person changes nothing). Plain C++: no CUDA, no NVRTC (kernels/nvrtc_compile.* compiles).
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/user_kernel/kernel_source.hpp"
#include "core/user_kernel/launch_expr.hpp"

namespace ts {

enum class ParamRole { A, B, C, Value, Unmapped };
const char* to_string(ParamRole r);

struct ParamBinding {
  ParamRole role = ParamRole::Unmapped;
  std::string value;  // Value: a formula over M, N, K, TILE ("K" for wA, "1" for alpha)
  std::string why;    // how it was decided, or why it could not be
};

// The compile limit when the kernel's form or --compile-limit says nothing, and its range (seconds).
inline constexpr double kDefaultCompileLimitS = 120;
inline constexpr double kMinCompileLimitS = 1, kMaxCompileLimitS = 3600;

struct UserKernelSpec {
  std::string kernel;                // the __global__ function's name in the source
  std::vector<ParamBinding> params;  // one per parameter, in order
  std::string tile_symbol;           // macro, constant or template parameter bound to TILE ("": none)
  std::vector<int> tiles;            // the Tile control's values
  int default_tile = 16;
  std::array<std::string, 3> grid{"ceil(N / TILE)", "ceil(M / TILE)", "1"};
  std::array<std::string, 3> block{"TILE", "TILE", "1"};
  std::string smem = "0";      // dynamic shared memory, bytes
  bool x_covers_rows = false;  // blockIdx.x walks down the rows of C (M) instead of along N
  bool tf32 = false;           // checked with the TF32 tolerance (a kernel on TF32 tensor cores)
  double hang_limit_s = 5;     // the watchdog's patience beyond the expected time of a launch
  double compile_limit_s = kDefaultCompileLimitS;  // NVRTC is stopped when a build takes longer
  // Size symbols: a macro or constant that fixes a dimension (#define N 1024), bound to "M", "N" or "K" and
  // substituted per run.
  std::vector<std::pair<std::string, std::string>> size_symbols;
};

// What TileScope understood of one kernel of a file.
struct KernelUnderstanding {
  const KernelDecl* decl = nullptr;
  UserKernelSpec spec;
  bool square_only = false;        // the kernel knows one size only: it runs on M = N = K
  std::vector<std::string> notes;  // guesses and limits, in words
};

// Guesses the roles, the tile symbol and the default launch rule for `decl`.
KernelUnderstanding understand_kernel(const SourceScan& scan, const KernelDecl& decl);

// The kernel called `name` in the scan (or the only one when `name` is empty). Throws ValidationError: no
// __global__ function ("...no __global__ function: TileScope needs a CUDA kernel"), an unknown name, or
// several kernels and no name (listing them, "choose one with --kernel NAME").
const KernelDecl& choose_kernel(const SourceScan& scan, const std::string& name, const std::string& label);

// Every binding usable and the formulas well-formed. Throws ValidationError that says what was understood
// and what is missing ("yours: matmul(Matrix A, ...): parameter 'A' is of type 'Matrix', which TileScope
// cannot fill; understood: ...").
void validate_spec(const KernelDecl& decl, const UserKernelSpec& spec);

// Applies "NAME=ROLE" corrections (--param): ROLE is A, B, C or a formula. Throws ValidationError.
void apply_param_override(const KernelDecl& decl, UserKernelSpec& spec, const std::string& assignment);

// Which dimensions the kernel is told (bit 0: M, 1: N, 2: K), from its parameters and size symbols.
unsigned dims_known(const UserKernelSpec& spec);
bool is_square_only(const UserKernelSpec& spec);

// One line per parameter and the rest, for `tilescope list --kernel-file` and the window.
std::string describe_params(const KernelDecl& decl, const UserKernelSpec& spec);
std::string describe_launch(const UserKernelSpec& spec);
std::string describe_tile(const SourceScan& scan, const UserKernelSpec& spec);

// [SECTION] Launching.
struct LaunchGeometry {
  std::array<int64_t, 3> grid{1, 1, 1}, block{1, 1, 1};
  int64_t smem = 0;
  int64_t threads() const { return block[0] * block[1] * block[2]; }
  int64_t blocks() const { return grid[0] * grid[1] * grid[2]; }
};
// Evaluates the formulas for one problem and checks the limits every CUDA device shares (grid.x < 2^31,
// grid.y and grid.z <= 65535, block.z <= 64, at most 1024 threads, every value >= 1). Throws ValidationError
// with the numbers ("block = 64 x 64 x 1 = 4096 threads (TILE = 64): a block may have at most 1024").
LaunchGeometry launch_geometry(const UserKernelSpec& spec, const ExprVars& v);

// One kernel argument, as the worker passes it to cudaLaunchKernel.
struct KernelArg {
  ParamType type = ParamType::I32;
  ParamRole role = ParamRole::Value;  // A, B, C: the matrix pointers; Value: `value`
  int64_t value = 0;
};
// Evaluates every value formula and checks that it fits its parameter's type. Throws ValidationError.
std::vector<KernelArg> kernel_args(const KernelDecl& decl, const UserKernelSpec& spec, const ExprVars& v);

// [SECTION] What NVRTC compiles.
struct BuildSource {
  std::string source;                // same lines as the file (host code blanked, symbols substituted)
  std::vector<std::string> defines;  // -D options (tile names used but defined nowhere)
  std::string name_expression;       // "&matmul_kernel" or "&matmul_kernel<16>"
};
BuildSource plain_build(const KernelSource& src, const SourceScan& scan, const KernelDecl& decl,
                        const UserKernelSpec& spec, int tile, const ExprVars& sizes);
// The traced build, or nullopt with the reason in `why_not`. `max_regs` > 0 caps the traced kernel at the
// plain build's registers (as the built-in traced kernels are), so tracing does not cost resident blocks.
std::optional<BuildSource> traced_build(const KernelSource& src, const SourceScan& scan,
                                        const KernelDecl& decl, const UserKernelSpec& spec, int tile,
                                        const ExprVars& sizes, int max_regs, std::string* why_not);
inline constexpr const char* kTracedKernelName = "tilescope_traced";

// The part of the key of a build that depends on the problem: the sizes substituted (only when size symbols
// are bound; otherwise one build serves every shape).
ExprVars build_sizes(const UserKernelSpec& spec, const ExprVars& v);

}  // namespace ts
