#include "core/user_kernel/user_kernel.hpp"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>

#include "core/engine/problem.hpp"

namespace ts {

namespace {

std::string lower_no_underscore(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += char(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// Matrix pointers by name: the letters of textbooks (A, B, C; PMPP's M, N, P and Md, Nd, Pd) and common
// words.
ParamRole pointer_role_by_name(const std::string& raw) {
  std::string n = raw;
  for (char& c : n) c = char(std::tolower(static_cast<unsigned char>(c)));
  for (const char* prefix : {"d_", "dev_", "g_", "gpu_", "d", "p_"})
    if (n.size() > std::string(prefix).size() + 0 && n.rfind(prefix, 0) == 0) {
      const std::string rest = n.substr(std::string(prefix).size());
      if (!rest.empty() && (rest == "a" || rest == "b" || rest == "c" || rest == "out" || rest == "in1" ||
                            rest == "in2" || rest == "result" || rest == "output"))
        n = rest;
    }
  for (const char* suffix : {"_d", "_dev", "_gpu", "_ptr", "_device", "_in", "_out", "_mat"})
    if (n.size() > std::string(suffix).size()) {
      const std::string s = suffix;
      if (n.compare(n.size() - s.size(), s.size(), s) == 0) {
        const std::string rest = n.substr(0, n.size() - s.size());
        if (rest == "a" || rest == "b" || rest == "c") n = rest;
      }
    }
  n = lower_no_underscore(n);
  static const std::map<std::string, ParamRole> kNames = {
      {"a", ParamRole::A},       {"mata", ParamRole::A},    {"matrixa", ParamRole::A},
      {"ma", ParamRole::A},      {"m1", ParamRole::A},      {"mat1", ParamRole::A},
      {"md", ParamRole::A},      {"m", ParamRole::A},       {"lhs", ParamRole::A},
      {"left", ParamRole::A},    {"in1", ParamRole::A},     {"input1", ParamRole::A},
      {"ina", ParamRole::A},     {"amat", ParamRole::A},    {"b", ParamRole::B},
      {"matb", ParamRole::B},    {"matrixb", ParamRole::B}, {"mb", ParamRole::B},
      {"m2", ParamRole::B},      {"mat2", ParamRole::B},    {"nd", ParamRole::B},
      {"n", ParamRole::B},       {"rhs", ParamRole::B},     {"right", ParamRole::B},
      {"in2", ParamRole::B},     {"input2", ParamRole::B},  {"inb", ParamRole::B},
      {"bmat", ParamRole::B},    {"c", ParamRole::C},       {"matc", ParamRole::C},
      {"matrixc", ParamRole::C}, {"mc", ParamRole::C},      {"out", ParamRole::C},
      {"output", ParamRole::C},  {"res", ParamRole::C},     {"result", ParamRole::C},
      {"prod", ParamRole::C},    {"product", ParamRole::C}, {"p", ParamRole::C},
      {"pd", ParamRole::C},      {"dst", ParamRole::C},     {"cmat", ParamRole::C},
      {"m3", ParamRole::C},      {"mat3", ParamRole::C}};
  const auto it = kNames.find(n);
  return it == kNames.end() ? ParamRole::Unmapped : it->second;
}

// Sizes by name: M, N, K and their many spellings, the CUDA samples' wA / wB, the UIUC course's numARows.
struct SizeName {
  const char* formula;
  const char* meaning;
};
const SizeName* size_by_name(const std::string& raw) {
  static const std::map<std::string, SizeName> kSizes = {
      {"m", {"M", "rows of A and C"}},
      {"nrows", {"M", "rows of A and C"}},
      {"rows", {"M", "rows of A and C"}},
      {"numrows", {"M", "rows of A and C"}},
      {"n", {"N", "the size"}},
      {"width", {"N", "the size (the width of the square matrices)"}},
      {"size", {"N", "the size"}},
      {"dim", {"N", "the size"}},
      {"matrixsize", {"N", "the size"}},
      {"matsize", {"N", "the size"}},
      {"nsize", {"N", "the size"}},
      {"sz", {"N", "the size"}},
      {"ncols", {"N", "columns of B and C"}},
      {"cols", {"N", "columns of B and C"}},
      {"numcols", {"N", "columns of B and C"}},
      {"k", {"K", "columns of A, rows of B"}},
      {"depth", {"K", "columns of A, rows of B"}},
      {"inner", {"K", "columns of A, rows of B"}},
      {"common", {"K", "columns of A, rows of B"}},
      {"wa", {"K", "the width of A: K"}},
      {"widtha", {"K", "the width of A: K"}},
      {"colsa", {"K", "the columns of A: K"}},
      {"acols", {"K", "the columns of A: K"}},
      {"ncolsa", {"K", "the columns of A: K"}},
      {"numacolumns", {"K", "the columns of A: K"}},
      {"numacols", {"K", "the columns of A: K"}},
      {"ha", {"M", "the height of A: M"}},
      {"heighta", {"M", "the height of A: M"}},
      {"rowsa", {"M", "the rows of A: M"}},
      {"arows", {"M", "the rows of A: M"}},
      {"nrowsa", {"M", "the rows of A: M"}},
      {"numarows", {"M", "the rows of A: M"}},
      {"wb", {"N", "the width of B: N"}},
      {"widthb", {"N", "the width of B: N"}},
      {"colsb", {"N", "the columns of B: N"}},
      {"bcols", {"N", "the columns of B: N"}},
      {"ncolsb", {"N", "the columns of B: N"}},
      {"numbcolumns", {"N", "the columns of B: N"}},
      {"numbcols", {"N", "the columns of B: N"}},
      {"hb", {"K", "the height of B: K"}},
      {"heightb", {"K", "the height of B: K"}},
      {"rowsb", {"K", "the rows of B: K"}},
      {"brows", {"K", "the rows of B: K"}},
      {"nrowsb", {"K", "the rows of B: K"}},
      {"numbrows", {"K", "the rows of B: K"}},
      {"wc", {"N", "the width of C: N"}},
      {"widthc", {"N", "the width of C: N"}},
      {"colsc", {"N", "the columns of C: N"}},
      {"ccols", {"N", "the columns of C: N"}},
      {"numccolumns", {"N", "the columns of C: N"}},
      {"numccols", {"N", "the columns of C: N"}},
      {"hc", {"M", "the height of C: M"}},
      {"heightc", {"M", "the height of C: M"}},
      {"rowsc", {"M", "the rows of C: M"}},
      {"crows", {"M", "the rows of C: M"}},
      {"numcrows", {"M", "the rows of C: M"}},
      {"lda", {"K", "the leading dimension of row-major A: K"}},
      {"ldb", {"N", "the leading dimension of row-major B: N"}},
      {"ldc", {"N", "the leading dimension of row-major C: N"}},
      {"tile", {"TILE", "the tile size"}},
      {"tilewidth", {"TILE", "the tile size"}},
      {"tilesize", {"TILE", "the tile size"}},
      {"tiledim", {"TILE", "the tile size"}},
      {"blocksize", {"TILE", "the block size"}},
  };
  // Case matters for the single letters only in that "M" and "m" mean the same; everything is lower-cased.
  const auto it = kSizes.find(lower_no_underscore(raw));
  return it == kSizes.end() ? nullptr : &it->second;
}

// Tile symbols, best first.
int tile_rank(const std::string& name) {
  static const char* kExact[] = {"TILE_WIDTH",  "TILE_SIZE", "TILE_DIM",   "TILE",      "TILEWIDTH",
                                 "TILESIZE",    "TILEDIM",   "BLOCK_SIZE", "BLOCKSIZE", "BLOCK_DIM",
                                 "BLOCK_WIDTH", "BLOCKDIM",  "BLOCK",      "BS",        "TS",
                                 "TW",          "TILE_W",    "T"};
  int r = 0;
  for (const char* e : kExact) {
    if (name == e) return r;
    ++r;
  }
  std::string up;
  for (char c : name) up += char(std::toupper(static_cast<unsigned char>(c)));
  if (up.find("TILE") != std::string::npos) return 100;
  if (up.find("BLOCK") != std::string::npos) return 200;
  return -1;
}

const char* size_symbol_dim(const std::string& name) {
  static const std::map<std::string, const char*> k = {
      {"N", "N"},           {"WIDTH", "N"},    {"SIZE", "N"},       {"DIM", "N"},
      {"MATRIX_SIZE", "N"}, {"MAT_SIZE", "N"}, {"MATRIX_DIM", "N"}, {"M", "M"},
      {"K", "K"},           {"ROWS", "M"},     {"COLS", "N"}};
  const auto it = k.find(name);
  return it == k.end() ? nullptr : it->second;
}

// The name of the one integer template parameter (template <int TILE>), or "".
std::string template_tile_param(const KernelDecl& decl) {
  if (decl.template_params.empty() || decl.template_params.find(',') != std::string::npos) return "";
  std::istringstream ts(decl.template_params);
  std::string type, name, extra;
  ts >> type;
  if (type == "const") ts >> type;
  ts >> name >> extra;
  if ((type == "int" || type == "unsigned" || type == "uint" || type == "size_t") && !name.empty() &&
      extra.empty())
    return name;
  return "";
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

}  // namespace

const char* to_string(ParamRole r) {
  switch (r) {
    case ParamRole::A:
      return "A";
    case ParamRole::B:
      return "B";
    case ParamRole::C:
      return "C";
    case ParamRole::Value:
      return "value";
    case ParamRole::Unmapped:
      return "unmapped";
  }
  return "?";
}

// [SECTION] Choosing and understanding.
const KernelDecl& choose_kernel(const SourceScan& scan, const std::string& name, const std::string& label) {
  if (scan.kernels.empty())
    throw ValidationError(label + " has no __global__ function: TileScope needs a CUDA kernel to run");
  std::vector<std::string> names;
  for (const auto& k : scan.kernels) names.push_back(k.name + " (line " + std::to_string(k.line) + ")");
  if (name.empty()) {
    if (scan.kernels.size() == 1) return scan.kernels[0];
    throw ValidationError(label + " has " + std::to_string(scan.kernels.size()) +
                          " __global__ functions: " + join(names, ", ") + "; choose one with --kernel NAME");
  }
  for (const auto& k : scan.kernels)
    if (k.name == name) return k;
  throw ValidationError(label + " has no __global__ function called '" + name + "' (it has " +
                        join(names, ", ") + ")");
}

KernelUnderstanding understand_kernel(const SourceScan& scan, const KernelDecl& decl) {
  KernelUnderstanding u;
  u.decl = &decl;
  UserKernelSpec& s = u.spec;
  s.kernel = decl.name;
  s.params.resize(decl.params.size());

  // Matrix pointers: by name first, then const-ness (const pointers are inputs), then order.
  std::vector<size_t> ptrs;
  for (size_t i = 0; i < decl.params.size(); ++i)
    if (decl.params[i].kind == ParamType::F32Ptr) ptrs.push_back(i);
  std::map<ParamRole, std::vector<size_t>> by_name;
  for (size_t i : ptrs) {
    const ParamRole r = pointer_role_by_name(decl.params[i].name);
    if (r != ParamRole::Unmapped) by_name[r].push_back(i);
  }
  std::set<ParamRole> taken;
  for (auto& [role, idx] : by_name)
    if (idx.size() == 1 && ptrs.size() <= 3) {
      s.params[idx[0]].role = role;
      s.params[idx[0]].why = "named " + decl.params[idx[0]].name;
      taken.insert(role);
    }
  auto free_roles = [&] {
    std::vector<ParamRole> f;
    for (ParamRole r : {ParamRole::A, ParamRole::B, ParamRole::C})
      if (!taken.count(r)) f.push_back(r);
    return f;
  };
  std::vector<size_t> open;
  for (size_t i : ptrs)
    if (s.params[i].role == ParamRole::Unmapped) open.push_back(i);
  if (ptrs.size() == 3 && !open.empty()) {
    // The one pointer that is not const is the output, when the others are const.
    std::vector<size_t> writable;
    for (size_t i : ptrs)
      if (!decl.params[i].const_pointee) writable.push_back(i);
    if (writable.size() == 1 && !taken.count(ParamRole::C) &&
        s.params[writable[0]].role == ParamRole::Unmapped) {
      s.params[writable[0]].role = ParamRole::C;
      s.params[writable[0]].why = "the only pointer that is not const: the output";
      taken.insert(ParamRole::C);
    }
    std::vector<ParamRole> roles = free_roles();
    size_t r = 0;
    for (size_t i : ptrs)
      if (s.params[i].role == ParamRole::Unmapped && r < roles.size()) {
        s.params[i].role = roles[r++];
        s.params[i].why = "by position (a guess: correct it if it is wrong)";
        u.notes.push_back(std::string("guessed ") + decl.params[i].name + " = " +
                          to_string(s.params[i].role) + " from its position");
      }
  } else if (ptrs.size() != 3) {
    for (size_t i : ptrs) {
      s.params[i].role = ParamRole::Unmapped;
      s.params[i].why = ptrs.size() > 3
                            ? "TileScope passes three matrices (A, B, C); this kernel takes " +
                                  std::to_string(ptrs.size()) + " float pointers"
                            : "TileScope passes three matrices (A, B, C); this kernel takes only " +
                                  std::to_string(ptrs.size());
    }
  }

  // Scalars: sizes by name; alpha = 1, beta = 0; a lone unknown integer is taken as N.
  std::vector<size_t> unknown_ints;
  for (size_t i = 0; i < decl.params.size(); ++i) {
    const KernelParam& p = decl.params[i];
    ParamBinding& b = s.params[i];
    if (p.kind == ParamType::F32Ptr) continue;
    if (p.kind == ParamType::Unsupported) {
      b.why = p.why;
      continue;
    }
    const std::string low = lower_no_underscore(p.name);
    if (p.kind == ParamType::F32 || p.kind == ParamType::F64) {
      if (low == "alpha") {
        b = {ParamRole::Value, "1", "alpha: C = 1 * A B"};
      } else if (low == "beta") {
        b = {ParamRole::Value, "0", "beta: C = A B + 0 * C"};
      } else {
        b.why = "a floating-point value TileScope has no rule for (only alpha = 1 and beta = 0 are known)";
      }
      continue;
    }
    if (const SizeName* sn = size_by_name(p.name)) {
      b = {ParamRole::Value, sn->formula, std::string(sn->meaning)};
      continue;
    }
    unknown_ints.push_back(i);
  }
  bool any_size = false;
  for (const auto& b : s.params)
    any_size = any_size || (b.role == ParamRole::Value && b.value != "1" && b.value != "0");
  if (unknown_ints.size() == 1 && !any_size) {
    const size_t i = unknown_ints[0];
    s.params[i] = {ParamRole::Value, "N", "the only integer: taken as the size N (a guess)"};
    u.notes.push_back("guessed " + decl.params[i].name + " = N (the only integer parameter)");
  } else {
    for (size_t i : unknown_ints)
      s.params[i].why =
          "an integer whose name TileScope does not know: give its value (M, N, K, TILE or a "
          "formula)";
  }

  // Size symbols (#define N 1024) when the parameters carry no size.
  if (dims_known(s) == 0) {
    std::set<std::string> seen;
    for (const auto& sym : scan.symbols)
      if (const char* d = size_symbol_dim(sym.name); d && !seen.count(sym.name)) {
        seen.insert(sym.name);
        s.size_symbols.emplace_back(sym.name, d);
        u.notes.push_back(sym.name + " (line " + std::to_string(sym.line) +
                          ") fixes the size: TileScope sets it to " + d + " and compiles once per size");
      }
  }

  // The tile: a template parameter, a macro or constant, or a name used but defined nowhere.
  std::string best;
  int best_rank = 1 << 30;
  int64_t best_value = 0;
  if (!decl.template_params.empty()) {
    // template <int NAME>: the only form TileScope instantiates.
    best = template_tile_param(decl);
    if (!best.empty()) best_rank = -1;
  }
  if (best.empty()) {
    for (const auto& sym : scan.symbols) {
      const int r = tile_rank(sym.name);
      if (r >= 0 && r < best_rank && sym.value >= 1 && sym.value <= 1024) {
        best_rank = r;
        best = sym.name;
        best_value = sym.value;
      }
    }
    for (const auto& name : scan.identifiers_used) {
      const int r = tile_rank(name);
      if (r >= 0 && r < best_rank) {
        best_rank = r;
        best = name;
        best_value = 0;
      }
    }
  }
  s.tile_symbol = best;
  s.default_tile = best_value > 0 ? int(best_value) : 16;
  std::set<int> tiles = {8, 16, 32, s.default_tile};
  s.tiles.assign(tiles.begin(), tiles.end());
  if (best.empty())
    u.notes.push_back(
        "no tile macro found (TILE_WIDTH, TILE, BLOCK_SIZE...): the Tile control sets the block "
        "size only");
  if (decl.dynamic_smem) {
    s.smem = "2 * TILE * TILE * 4";
    u.notes.push_back(
        "the kernel uses extern __shared__: dynamic shared memory guessed as two TILE x TILE "
        "float tiles (2 * TILE * TILE * 4 bytes); correct it if it is wrong");
  }
  u.square_only = is_square_only(s);
  return u;
}

unsigned dims_known(const UserKernelSpec& spec) {
  unsigned d = 0;
  for (const auto& b : spec.params)
    if (b.role == ParamRole::Value) {
      try {
        d |= launch_expr_names(b.value, "value") & 7u;
      } catch (const ValidationError&) {
      }
    }
  for (const auto& [name, dim] : spec.size_symbols) d |= dim == "M" ? 1u : dim == "N" ? 2u : 4u;
  return d;
}

bool is_square_only(const UserKernelSpec& spec) {
  const unsigned d = dims_known(spec);
  return d == 1 || d == 2 || d == 4;
}

void apply_param_override(const KernelDecl& decl, UserKernelSpec& spec, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 >= assignment.size())
    throw ValidationError("--param '" + assignment +
                          "' is not NAME=ROLE (ROLE: A, B, C, or a value such as K)");
  const std::string name = assignment.substr(0, eq), role = assignment.substr(eq + 1);
  for (size_t i = 0; i < decl.params.size(); ++i) {
    if (decl.params[i].name != name) continue;
    ParamBinding& b = spec.params[i];
    if (role == "A" || role == "B" || role == "C") {
      if (decl.params[i].kind != ParamType::F32Ptr)
        throw ValidationError("--param " + assignment + ": '" + name + "' is " + decl.params[i].decl +
                              ", not a float pointer");
      b = {role == "A" ? ParamRole::A : role == "B" ? ParamRole::B : ParamRole::C, "", "given"};
    } else {
      if (decl.params[i].kind == ParamType::F32Ptr || decl.params[i].kind == ParamType::Unsupported)
        throw ValidationError("--param " + assignment + ": '" + name + "' (" + decl.params[i].decl +
                              ") takes A, B or C, not a value");
      check_launch_expr(role, "--param " + name);
      b = {ParamRole::Value, role, "given"};
    }
    return;
  }
  std::vector<std::string> names;
  for (const auto& p : decl.params) names.push_back(p.name.empty() ? "(unnamed)" : p.name);
  throw ValidationError("--param " + assignment + ": the kernel has no parameter '" + name + "' (it has " +
                        join(names, ", ") + ")");
}

std::string describe_params(const KernelDecl& decl, const UserKernelSpec& spec) {
  std::ostringstream os;
  for (size_t i = 0; i < decl.params.size(); ++i) {
    const KernelParam& p = decl.params[i];
    const ParamBinding& b = i < spec.params.size() ? spec.params[i] : ParamBinding{};
    os << "  " << (p.decl.empty() ? "?" : p.decl) << "  ->  ";
    if (b.role == ParamRole::Value)
      os << b.value;
    else if (b.role == ParamRole::Unmapped)
      os << "NOT MAPPED";
    else
      os << to_string(b.role);
    if (!b.why.empty()) os << "  (" << b.why << ")";
    os << "\n";
  }
  return os.str();
}

std::string describe_launch(const UserKernelSpec& s) {
  std::ostringstream os;
  os << "block (" << s.block[0] << ", " << s.block[1] << ", " << s.block[2] << "), grid (" << s.grid[0]
     << ", " << s.grid[1] << ", " << s.grid[2] << "), dynamic shared memory " << s.smem << " bytes"
     << (s.x_covers_rows ? "; blockIdx.x walks down the rows of C" : "");
  return os.str();
}

std::string describe_tile(const SourceScan& scan, const UserKernelSpec& s) {
  std::ostringstream os;
  if (s.tile_symbol.empty()) {
    os << "no tile symbol: TILE is the launch's block edge only";
  } else {
    const NumericSymbol* sym = nullptr;
    for (const auto& x : scan.symbols)
      if (x.name == s.tile_symbol) {
        sym = &x;
        break;
      }
    os << s.tile_symbol;
    if (sym)
      os << " (" << (sym->is_macro ? "#define" : "constant") << ", line " << sym->line << ", " << sym->value
         << " in the file)";
    else
      os << " (a template parameter or a name the file uses but never defines: TileScope defines it)";
    os << " -> the Tile control";
  }
  os << "; tiles ";
  for (size_t i = 0; i < s.tiles.size(); ++i) os << (i ? ", " : "") << s.tiles[i];
  os << " (default " << s.default_tile << ")";
  return os.str();
}

void validate_spec(const KernelDecl& decl, const UserKernelSpec& spec) {
  const std::string head = "yours: " + decl.name + "(" + [&] {
    std::vector<std::string> d;
    for (const auto& p : decl.params) d.push_back(p.decl);
    return join(d, ", ");
  }() + ")";
  std::vector<std::string> problems;
  if (spec.params.size() != decl.params.size())
    problems.push_back("the form lists a different number of parameters");
  std::map<ParamRole, int> count;
  for (size_t i = 0; i < decl.params.size() && i < spec.params.size(); ++i) {
    const KernelParam& p = decl.params[i];
    const ParamBinding& b = spec.params[i];
    const std::string pname = "parameter '" + (p.name.empty() ? std::to_string(i + 1) : p.name) + "'";
    if (p.kind == ParamType::Unsupported) {
      problems.push_back(pname + " is " + p.why);
      continue;
    }
    if (b.role == ParamRole::Unmapped) {
      problems.push_back(pname + " (" + p.decl +
                         ") is not mapped: " + (b.why.empty() ? "give its role" : b.why));
      continue;
    }
    if (b.role == ParamRole::Value) {
      if (p.kind == ParamType::F32Ptr) {
        problems.push_back(pname + " is a float pointer: it must be A, B or C");
        continue;
      }
      try {
        check_launch_expr(b.value, pname);
      } catch (const ValidationError& e) {
        problems.push_back(e.what());
      }
      continue;
    }
    if (p.kind != ParamType::F32Ptr) {
      problems.push_back(pname + " (" + p.decl + ") cannot be the matrix " + to_string(b.role));
      continue;
    }
    ++count[b.role];
  }
  for (ParamRole r : {ParamRole::A, ParamRole::B, ParamRole::C}) {
    if (count[r] == 0) problems.push_back(std::string("no parameter is the matrix ") + to_string(r));
    if (count[r] > 1)
      problems.push_back(std::string("more than one parameter is the matrix ") + to_string(r));
  }
  if (dims_known(spec) == 0)
    problems.push_back(
        "the kernel is told no size (no integer parameter for M, N or K and no #define N): "
        "TileScope cannot tell it how large the matrices are");
  const char* axes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    try {
      check_launch_expr(spec.grid[size_t(i)], std::string("grid ") + axes[i]);
      check_launch_expr(spec.block[size_t(i)], std::string("block ") + axes[i]);
    } catch (const ValidationError& e) {
      problems.push_back(e.what());
    }
  }
  try {
    check_launch_expr(spec.smem, "dynamic shared memory");
  } catch (const ValidationError& e) {
    problems.push_back(e.what());
  }
  if (!decl.template_params.empty()) {
    const std::string t = template_tile_param(decl);
    if (t.empty())
      problems.push_back(
          "a template kernel (template <" + decl.template_params +
          ">): TileScope instantiates templates with one integer parameter, bound to the tile");
    else if (spec.tile_symbol != t)
      problems.push_back("a template kernel: its parameter " + t + " must be bound to the Tile control");
  }
  if (spec.tiles.empty()) problems.push_back("no tile values are given");
  for (int t : spec.tiles)
    if (t < 1 || t > 1024) problems.push_back("tile " + std::to_string(t) + " is outside 1..1024");
  if (!(spec.hang_limit_s >= 0.5 && spec.hang_limit_s <= 600))
    problems.push_back("the hang limit must be 0.5 to 600 seconds");
  if (!(spec.compile_limit_s >= kMinCompileLimitS && spec.compile_limit_s <= kMaxCompileLimitS))
    problems.push_back("the compile limit must be 1 to 3600 seconds");
  if (problems.empty()) return;
  std::string understood = describe_params(decl, spec);
  throw ValidationError(
      head + ": TileScope cannot run it as it is:\n  - " + join(problems, "\n  - ") +
      "\nWhat TileScope understood:\n" + understood +
      "Correct the roles in the window's form or with --param NAME=ROLE (A, B, C, or a value "
      "such as K).");
}

// [SECTION] Launching.
LaunchGeometry launch_geometry(const UserKernelSpec& spec, const ExprVars& v) {
  LaunchGeometry g;
  const char* axes[3] = {"x", "y", "z"};
  for (int i = 0; i < 3; ++i) {
    g.grid[size_t(i)] = eval_launch_expr(spec.grid[size_t(i)], v, std::string("grid ") + axes[i]);
    g.block[size_t(i)] = eval_launch_expr(spec.block[size_t(i)], v, std::string("block ") + axes[i]);
  }
  g.smem = eval_launch_expr(spec.smem, v, "dynamic shared memory");
  auto dims = [](const std::array<int64_t, 3>& d) {
    return std::to_string(d[0]) + " x " + std::to_string(d[1]) + " x " + std::to_string(d[2]);
  };
  const std::string where = " (M x N x K = " + std::to_string(v.m) + " x " + std::to_string(v.n) + " x " +
                            std::to_string(v.k) + ", TILE = " + std::to_string(v.tile) + ")";
  for (int i = 0; i < 3; ++i) {
    if (g.grid[size_t(i)] < 1)
      throw ValidationError("grid " + std::string(axes[i]) + " = " + spec.grid[size_t(i)] + " = " +
                            std::to_string(g.grid[size_t(i)]) + where +
                            ": every grid dimension must be at least 1");
    if (g.block[size_t(i)] < 1)
      throw ValidationError("block " + std::string(axes[i]) + " = " + spec.block[size_t(i)] + " = " +
                            std::to_string(g.block[size_t(i)]) + where +
                            ": every block dimension must be at least 1");
  }
  const int64_t grid_max[3] = {(int64_t(1) << 31) - 1, 65535, 65535};
  for (int i = 0; i < 3; ++i)
    if (g.grid[size_t(i)] > grid_max[i])
      throw ValidationError("grid = " + dims(g.grid) + where + ": grid " + axes[i] + " may be at most " +
                            std::to_string(grid_max[i]));
  const int64_t block_max[3] = {1024, 1024, 64};
  for (int i = 0; i < 3; ++i)
    if (g.block[size_t(i)] > block_max[i])
      throw ValidationError("block = " + dims(g.block) + where + ": block " + axes[i] + " may be at most " +
                            std::to_string(block_max[i]));
  if (g.threads() > 1024)
    throw ValidationError("block = " + dims(g.block) + " = " + std::to_string(g.threads()) + " threads" +
                          where + ": a block may have at most 1024 threads");
  if (g.smem < 0 || g.smem > (int64_t(1) << 31) - 1)
    throw ValidationError("dynamic shared memory = " + spec.smem + " = " + std::to_string(g.smem) + " bytes" +
                          where + " is out of range");
  return g;
}

std::vector<KernelArg> kernel_args(const KernelDecl& decl, const UserKernelSpec& spec, const ExprVars& v) {
  std::vector<KernelArg> args;
  for (size_t i = 0; i < decl.params.size(); ++i) {
    const KernelParam& p = decl.params[i];
    const ParamBinding& b = spec.params.at(i);
    KernelArg a;
    a.type = p.kind;
    a.role = b.role;
    if (b.role == ParamRole::Value) {
      const std::string what = p.name.empty() ? "parameter " + std::to_string(i + 1) : p.name;
      a.value = eval_launch_expr(b.value, v, what);
      int64_t lo = INT64_MIN, hi = INT64_MAX;
      if (p.kind == ParamType::I32) lo = INT32_MIN, hi = INT32_MAX;
      if (p.kind == ParamType::U32) lo = 0, hi = UINT32_MAX;
      if (p.kind == ParamType::U64) lo = 0;
      if (a.value < lo || a.value > hi)
        throw ValidationError(what + " = " + b.value + " = " + std::to_string(a.value) +
                              " does not fit the kernel's " + p.decl + " (" + std::to_string(lo) + " .. " +
                              std::to_string(hi) + ")");
    }
    args.push_back(a);
  }
  return args;
}

// [SECTION] Sources for NVRTC.
namespace {

struct Edit {
  size_t begin, end;
  std::string with;
};

std::string apply_edits(std::string text, std::vector<Edit> edits) {
  // One pass from the end, into a new string: replacing in place moved the rest of the text for every edit,
  // quadratic for a file with tens of thousands of `#define N 1` lines.
  std::stable_sort(edits.begin(), edits.end(),
                   [](const Edit& a, const Edit& b) { return a.begin > b.begin; });
  std::vector<const Edit*> kept;  // from the end of the text to its start
  size_t limit = text.size();
  for (const Edit& e : edits) {
    if (e.end > limit || e.begin > e.end) continue;  // overlapping edits: the later one wins
    kept.push_back(&e);
    limit = e.begin;
  }
  std::string out;
  size_t at = 0;
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    out.append(text, at, (*it)->begin - at);
    out += (*it)->with;
    at = (*it)->end;
  }
  out.append(text, at, std::string::npos);
  return out;
}

std::vector<Edit> symbol_edits(const SourceScan& scan, const UserKernelSpec& spec, int tile,
                               const ExprVars& sizes) {
  std::vector<Edit> edits;
  for (const auto& sym : scan.symbols) {
    if (!spec.tile_symbol.empty() && sym.name == spec.tile_symbol)
      edits.push_back({sym.value_span.begin, sym.value_span.end, std::to_string(tile)});
    for (const auto& [name, dim] : spec.size_symbols)
      if (sym.name == name) {
        const int64_t v = dim == "M" ? sizes.m : dim == "K" ? sizes.k : sizes.n;
        edits.push_back({sym.value_span.begin, sym.value_span.end, std::to_string(v)});
      }
  }
  return edits;
}

bool tile_symbol_defined(const SourceScan& scan, const std::string& name) {
  for (const auto& s : scan.symbols)
    if (s.name == name) return true;
  return false;
}

std::string name_expression(const SourceScan& scan, const KernelDecl& decl, const UserKernelSpec& spec,
                            int tile, const std::string& name) {
  if (!decl.template_params.empty() && !spec.tile_symbol.empty())
    return "&" + scan.scope_of(decl) + name + "<" + std::to_string(tile) + ">";
  return "&" + scan.scope_of(decl) + name;
}

}  // namespace

ExprVars build_sizes(const UserKernelSpec& spec, const ExprVars& v) {
  ExprVars s;
  for (const auto& [name, dim] : spec.size_symbols) {
    if (dim == "M") s.m = v.m;
    if (dim == "N") s.n = v.n;
    if (dim == "K") s.k = v.k;
  }
  return s;
}

BuildSource plain_build(const KernelSource& src, const SourceScan& scan, const KernelDecl& decl,
                        const UserKernelSpec& spec, int tile, const ExprVars& sizes) {
  BuildSource b;
  const std::string blanked = blank_spans(src.text, scan.host_code);
  b.source = apply_edits(blanked, symbol_edits(scan, spec, tile, sizes));
  if (!spec.tile_symbol.empty() && decl.template_params.empty() &&
      !tile_symbol_defined(scan, spec.tile_symbol))
    b.defines.push_back("-D" + spec.tile_symbol + "=" + std::to_string(tile));
  b.name_expression = name_expression(scan, decl, spec, tile, decl.name);
  return b;
}

std::optional<BuildSource> traced_build(const KernelSource& src, const SourceScan& scan,
                                        const KernelDecl& decl, const UserKernelSpec& spec, int tile,
                                        const ExprVars& sizes, int max_regs, std::string* why_not) {
  for (size_t i = 0; i < decl.params.size(); ++i)
    if (decl.params[i].name.empty()) {
      *why_not = "parameter " + std::to_string(i + 1) + " (" + decl.params[i].decl +
                 ") has no name, so the traced copy of the kernel cannot pass it on";
      return std::nullopt;
    }
  if (!decl.template_params.empty() && spec.tile_symbol.empty()) {
    *why_not = "a template kernel whose parameter is not the tile";
    return std::nullopt;
  }
  const std::string body = src.text.substr(decl.body.begin, decl.body.end - decl.body.begin);
  {
    // The kernel launching itself (dynamic parallelism) would launch the renamed device function.
    size_t at = 0;
    while ((at = body.find(decl.name, at)) != std::string::npos) {
      const bool left =
          at == 0 || !(std::isalnum(static_cast<unsigned char>(body[at - 1])) || body[at - 1] == '_');
      const size_t r = at + decl.name.size();
      const bool right =
          r >= body.size() || !(std::isalnum(static_cast<unsigned char>(body[r])) || body[r] == '_');
      if (left && right) {
        *why_not = "the kernel refers to itself by name, so its body cannot become a device function";
        return std::nullopt;
      }
      at = r;
    }
  }
  const std::string body_name = decl.name + "__tilescope_body";
  std::vector<Edit> edits = symbol_edits(scan, spec, tile, sizes);
  edits.push_back({decl.global_kw.begin, decl.global_kw.end, "__device__ __forceinline__"});
  edits.push_back({decl.name_span.begin, decl.name_span.end, body_name});
  std::string attributes;
  for (const Span& a : decl.attributes) {
    attributes += src.text.substr(a.begin, a.end - a.begin) + " ";
    edits.push_back({a.begin, a.end, ""});
  }
  // __grid_constant__ belongs to kernel parameters only.
  const std::string params =
      src.text.substr(decl.params_span.begin, decl.params_span.end - decl.params_span.begin);
  for (size_t at = params.find("__grid_constant__"); at != std::string::npos;
       at = params.find("__grid_constant__", at + 1))
    edits.push_back({decl.params_span.begin + at, decl.params_span.begin + at + 17, ""});
  // Host code blanked first (the same lengths), then the edits.
  std::string text = apply_edits(blank_spans(src.text, scan.host_code), edits);

  std::vector<std::string> decls, names;
  for (const auto& p : decl.params) {
    decls.push_back(p.decl);
    names.push_back(p.name);
  }
  const bool templ = !decl.template_params.empty();
  std::ostringstream w;
  w << "\n// [TileScope] the traced build: the kernel above as a device function, stamped per block.\n"
    << "extern \"C\" __global__ void " << attributes
    << (max_regs > 0 && attributes.empty() ? "__maxnreg__(" + std::to_string(max_regs) + ") " : "")
    << kTracedKernelName << "(" << join(decls, ", ") << (decls.empty() ? "" : ", ")
    << "unsigned long long* tilescope_trace_) {\n"
    << "  const unsigned long long tilescope_b_ =\n"
    << "      ((unsigned long long)blockIdx.z * gridDim.y + blockIdx.y) * gridDim.x + blockIdx.x;\n"
    << "  unsigned long long* tilescope_r_ = tilescope_trace_ + 3 * tilescope_b_;\n"
    << "  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {\n"
    << "    unsigned int tilescope_sm_;\n"
    << "    unsigned long long tilescope_t_;\n"
    << "    asm volatile(\"mov.u32 %0, %%smid;\" : \"=r\"(tilescope_sm_));\n"
    << "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(tilescope_t_));\n"
    << "    reinterpret_cast<unsigned int*>(tilescope_r_ + 2)[0] = tilescope_sm_;\n"
    << "    tilescope_r_[0] = tilescope_t_;\n"
    << "  }\n"
    << "  " << scan.scope_of(decl) << body_name << (templ ? "<" + std::to_string(tile) + ">" : "") << "("
    << join(names, ", ") << ");\n"
    << "  __syncwarp();\n"
    << "  if (((threadIdx.z * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x) % 32 == 0) {\n"
    << "    unsigned long long tilescope_t_;\n"
    << "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(tilescope_t_));\n"
    << "    atomicMax(tilescope_r_ + 1, tilescope_t_);\n"
    << "  }\n"
    << "}\n";
  BuildSource b;
  b.source = text + w.str();
  if (!spec.tile_symbol.empty() && !templ && !tile_symbol_defined(scan, spec.tile_symbol))
    b.defines.push_back("-D" + spec.tile_symbol + "=" + std::to_string(tile));
  b.name_expression = std::string("&") + kTracedKernelName;
  return b;
}

}  // namespace ts
