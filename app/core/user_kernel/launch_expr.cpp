#include "core/user_kernel/launch_expr.hpp"

#include <cctype>
#include <cstdlib>
#include <numeric>

#include "core/engine/problem.hpp"

namespace ts {

namespace {

// An exact fraction num / den (den > 0, reduced). Every operation checks that it stays within int64.
struct Frac {
  int64_t num = 0, den = 1;
};

class Parser {
 public:
  Parser(const std::string& text, const ExprVars* vars, const std::string& what)
      : m_text(text), m_vars(vars), m_what(what) {}

  Frac parse_all() {
    if (m_text.size() > size_t(kMaxExprChars))
      fail("is " + std::to_string(m_text.size()) + " characters long; a formula may have at most " +
           std::to_string(kMaxExprChars));
    skip_space();
    if (m_pos >= m_text.size()) fail_plain("is empty; write a number or a formula such as ceil(N / TILE)");
    Frac f = expr(0);
    skip_space();
    if (m_pos < m_text.size()) fail_at("unexpected '" + std::string(1, m_text[m_pos]) + "'");
    return f;
  }
  unsigned names() const { return m_names; }

 private:
  [[noreturn]] void fail_plain(const std::string& why) const {
    throw ValidationError(m_what + " = '" + m_text + "' " + why);
  }
  [[noreturn]] void fail(const std::string& why) const { fail_plain(why); }
  [[noreturn]] void fail_at(const std::string& why) const {
    throw ValidationError(m_what + " = '" + m_text + "': " + why + " at column " + std::to_string(m_pos + 1));
  }

  void skip_space() {
    while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos]))) ++m_pos;
  }
  bool eat(char c) {
    skip_space();
    if (m_pos < m_text.size() && m_text[m_pos] == c) {
      ++m_pos;
      return true;
    }
    return false;
  }
  void expect(char c) {
    if (!eat(c)) {
      if (m_pos >= m_text.size()) fail_at(std::string("expected '") + c + "' but the formula ends");
      fail_at(std::string("expected '") + c + "' but found '" + m_text[m_pos] + "'");
    }
  }

  // [SECTION] Checked arithmetic on fractions.
  Frac make(__int128 num, __int128 den) const {
    if (!m_vars && (den == 0)) return Frac{0, 1};  // checking the text only: values are stand-ins
    if (den == 0) fail_plain("divides by zero");
    if (den < 0) {
      num = -num;
      den = -den;
    }
    __int128 a = num < 0 ? -num : num, b = den;
    while (b != 0) {
      const __int128 t = a % b;
      a = b;
      b = t;
    }
    const __int128 g = a == 0 ? 1 : a;
    num /= g;
    den /= g;
    const __int128 lim = __int128(INT64_MAX);
    if (num > lim || num < -lim || den > lim) {
      if (!m_vars) return Frac{0, 1};
      fail_plain("overflows: a value grows past 2^63");
    }
    return Frac{int64_t(num), int64_t(den)};
  }
  Frac add(Frac a, Frac b, int sign) const {
    return make(__int128(a.num) * b.den + sign * __int128(b.num) * a.den, __int128(a.den) * b.den);
  }
  Frac mul(Frac a, Frac b) const { return make(__int128(a.num) * b.num, __int128(a.den) * b.den); }
  Frac div(Frac a, Frac b) const {
    if (b.num == 0) {
      if (!m_vars) return Frac{0, 1};
      fail_plain("divides by zero");
    }
    return make(__int128(a.num) * b.den, __int128(a.den) * b.num);
  }
  static int64_t floor_of(Frac a) {
    int64_t q = a.num / a.den;
    if (a.num % a.den != 0 && a.num < 0) --q;
    return q;
  }
  static int64_t ceil_of(Frac a) {
    int64_t q = a.num / a.den;
    if (a.num % a.den != 0 && a.num > 0) ++q;
    return q;
  }
  static bool less(Frac a, Frac b) { return __int128(a.num) * b.den < __int128(b.num) * a.den; }

  // [SECTION] Recursive descent, with the nesting depth bounded.
  void enter(int depth) const {
    if (depth > kMaxExprDepth)
      fail("nests deeper than " + std::to_string(kMaxExprDepth) + " levels of parentheses and calls");
  }

  Frac expr(int depth) {
    enter(depth);
    Frac v = term(depth);
    for (;;) {
      if (eat('+'))
        v = add(v, term(depth), 1);
      else if (eat('-'))
        v = add(v, term(depth), -1);
      else
        return v;
    }
  }
  Frac term(int depth) {
    Frac v = unary(depth);
    for (;;) {
      if (eat('*'))
        v = mul(v, unary(depth));
      else if (eat('/'))
        v = div(v, unary(depth));
      else
        return v;
    }
  }
  Frac unary(int depth) {
    int sign = 1;
    int signs = 0;
    for (;;) {
      if (eat('-')) {
        sign = -sign;
      } else if (!eat('+')) {
        break;
      }
      if (++signs > kMaxExprDepth) fail_at("too many signs in a row");
    }
    Frac v = primary(depth);
    return sign < 0 ? make(-__int128(v.num), v.den) : v;
  }
  Frac primary(int depth) {
    skip_space();
    if (m_pos >= m_text.size()) fail_at("the formula ends where a value was expected");
    const char c = m_text[m_pos];
    if (c == '(') {
      ++m_pos;
      Frac v = expr(depth + 1);
      expect(')');
      return v;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const size_t start = m_pos;
      __int128 v = 0;
      while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) {
        v = v * 10 + (m_text[m_pos] - '0');
        if (v > __int128(INT64_MAX)) {
          m_pos = start;
          fail_at("the number is larger than 2^63");
        }
        ++m_pos;
      }
      if (m_pos < m_text.size() &&
          (m_text[m_pos] == '.' || std::isalpha(static_cast<unsigned char>(m_text[m_pos])))) {
        m_pos = start;
        fail_at("'" + m_text.substr(start, 12) + "' is not a whole number (formulas use integers)");
      }
      return Frac{int64_t(v), 1};
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t start = m_pos;
      while (m_pos < m_text.size() &&
             (std::isalnum(static_cast<unsigned char>(m_text[m_pos])) || m_text[m_pos] == '_'))
        ++m_pos;
      const std::string name = m_text.substr(start, m_pos - start);
      skip_space();
      const bool call = m_pos < m_text.size() && m_text[m_pos] == '(';
      if (call) {
        if (name != "ceil" && name != "floor" && name != "min" && name != "max") {
          m_pos = start;
          fail_at("unknown function '" + name + "' (known: ceil, floor, min, max)");
        }
        ++m_pos;
        Frac a = expr(depth + 1);
        if (name == "ceil" || name == "floor") {
          expect(')');
          return Frac{name == "ceil" ? ceil_of(a) : floor_of(a), 1};
        }
        expect(',');
        Frac b = expr(depth + 1);
        expect(')');
        return (name == "min") == less(a, b) ? a : b;
      }
      int bit = -1;
      int64_t value = 0;
      if (name == "M") bit = 0, value = m_vars ? m_vars->m : 1;
      if (name == "N") bit = 1, value = m_vars ? m_vars->n : 1;
      if (name == "K") bit = 2, value = m_vars ? m_vars->k : 1;
      if (name == "TILE") bit = 3, value = m_vars ? m_vars->tile : 1;
      if (bit < 0) {
        m_pos = start;
        std::string hint = " (known: M, N, K, TILE)";
        if (name == "float" || name == "double" || name == "int" || name == "unsigned")
          hint = " (no casts are needed: '/' divides exactly, ceil() and floor() round)";
        else if (name == "m" || name == "n" || name == "k" || name == "tile")
          hint = " (names are upper case: M, N, K, TILE)";
        fail_at("unknown name '" + name + "'" + hint);
      }
      m_names |= 1u << bit;
      return Frac{value, 1};
    }
    fail_at("unexpected '" + std::string(1, c) + "'");
  }

  const std::string& m_text;
  const ExprVars* m_vars;
  const std::string& m_what;
  size_t m_pos = 0;
  unsigned m_names = 0;
};

}  // namespace

int64_t eval_launch_expr(const std::string& text, const ExprVars& v, const std::string& what) {
  Parser p(text, &v, what);
  const Frac f = p.parse_all();
  return f.num / f.den;  // rounded toward zero, as C's integer division rounds
}

void check_launch_expr(const std::string& text, const std::string& what) {
  Parser p(text, nullptr, what);
  p.parse_all();
}

unsigned launch_expr_names(const std::string& text, const std::string& what) {
  Parser p(text, nullptr, what);
  p.parse_all();
  return p.names();
}

}  // namespace ts
