#pragma once
// [SECTION] Launch formulas: the grid, block and dynamic shared memory of a person's kernel, written as small
// expressions over the problem (M, N, K) and the Tile control (TILE), e.g. "ceil(N / TILE)".
// Grammar: integers, + - * /, unary -, parentheses, ceil(x), floor(x), min(a, b), max(a, b), the names M, N,
// K and TILE. '/' divides exactly (the value is a fraction until ceil() or floor() rounds it), so "ceil(N /
// TILE)" means what it says; a value that is still not whole at the end is rounded toward zero, as C's
// integer division rounds the usual "(N + TILE - 1) / TILE". Hand-written: no regular expressions, nesting
// bounded (kMaxExprDepth), the text bounded (kMaxExprChars), every intermediate value checked for overflow.
#include <cstdint>
#include <string>

namespace ts {

inline constexpr int kMaxExprDepth = 24;  // nested parentheses and calls
inline constexpr int kMaxExprChars = 256;

struct ExprVars {
  int64_t m = 0, n = 0, k = 0, tile = 0;
};

// Evaluates `text`. Throws ValidationError naming `what` (e.g. "grid x"), the text, the place and the reason:
// "grid x = 'ceil(N / TILD)': unknown name 'TILD' at column 11 (known: M, N, K, TILE)".
int64_t eval_launch_expr(const std::string& text, const ExprVars& v, const std::string& what);

// Parses `text` without values (every name checked, nothing evaluated). Throws like eval_launch_expr.
void check_launch_expr(const std::string& text, const std::string& what);

// Which of the names M, N, K, TILE the formula uses (bit 0: M, 1: N, 2: K, 3: TILE). Throws like check.
unsigned launch_expr_names(const std::string& text, const std::string& what);

}  // namespace ts
