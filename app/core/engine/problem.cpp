#include "core/engine/problem.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>

namespace ts {

const char* to_string(InputKind k) {
  switch (k) {
    case InputKind::Random:
      return "random";
    case InputKind::Symmetric:
      return "symmetric";
    case InputKind::Identity:
      return "identity";
    case InputKind::Ones:
      return "ones";
    case InputKind::Ramp:
      return "ramp";
    case InputKind::File:
      return "file";
  }
  return "?";
}

const std::vector<InputKind>& generated_input_kinds() {
  static const std::vector<InputKind> kinds = {InputKind::Random, InputKind::Symmetric, InputKind::Identity,
                                               InputKind::Ones, InputKind::Ramp};
  return kinds;
}

InputKind parse_input_kind(const std::string& s) {
  for (InputKind k : generated_input_kinds())
    if (s == to_string(k)) return k;
  throw ValidationError("unknown input kind '" + s + "' (allowed: random, symmetric, identity, ones, ramp)");
}

const char* to_string(BackendChoice b) {
  switch (b) {
    case BackendChoice::Auto:
      return "auto";
    case BackendChoice::Cuda:
      return "cuda";
    case BackendChoice::Cpu:
      return "cpu";
  }
  return "?";
}

BackendChoice parse_backend_choice(const std::string& s) {
  if (s == "auto") return BackendChoice::Auto;
  if (s == "cuda") return BackendChoice::Cuda;
  if (s == "cpu") return BackendChoice::Cpu;
  throw ValidationError("unknown backend '" + s + "' (allowed: auto, cuda, cpu)");
}

double parse_positive(const std::string& text, const char* what, double max) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(v) || !(v > 0))
    throw ValidationError(std::string(what) + " = '" + text + "' is not a positive number");
  if (v > max) {
    std::ostringstream os;
    os << what << " = " << text << " is above the limit of " << max;
    throw ValidationError(os.str());
  }
  return v;
}

double parse_seconds(const std::string& text, const std::string& what, double lo, double hi) {
  double v = 0;
  try {
    v = parse_positive(text, what.c_str(), hi);
  } catch (const ValidationError&) {
  }
  if (!(v > 0) || !(v >= lo)) {
    char range[64];
    if (lo > 0)
      std::snprintf(range, sizeof range, "from %g to %g", lo, hi);
    else
      std::snprintf(range, sizeof range, "in (0, %g]", hi);
    throw ValidationError(what + " = '" + text + "' is not a number of seconds " + range);
  }
  return v;
}

uint64_t parse_seed(const std::string& text, const char* what) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 19)
    throw ValidationError(std::string(what) + " = '" + text +
                          "' is not a whole number from 0 to 9999999999999999999");
  return std::stoull(text);
}

size_t first_invalid_utf8(const std::string& text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const unsigned char c = p[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    const int len = (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 : (c & 0xf8) == 0xf0 ? 4 : 0;
    if (len == 0 || i + size_t(len) > n) return i;
    uint32_t cp = c & (len == 2 ? 0x1f : len == 3 ? 0x0f : 0x07);
    for (int j = 1; j < len; ++j) {
      if ((p[i + size_t(j)] & 0xc0) != 0x80) return i;
      cp = (cp << 6) | (p[i + size_t(j)] & 0x3f);
    }
    if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
        (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) || (cp >= 0xd800 && cp <= 0xdfff))
      return i;
    i += size_t(len);
  }
  return std::string::npos;
}

void require_utf8(const std::string& text, const std::string& what) {
  const size_t at = first_invalid_utf8(text);
  if (at == std::string::npos) return;
  char b[96];
  std::snprintf(b, sizeof b, " is not valid UTF-8 (byte 0x%02X at offset %zu); give it in UTF-8",
                unsigned(static_cast<unsigned char>(text[at])), at);
  throw ValidationError(what + b);
}

int64_t small_dim_like(int64_t d) {
  return d <= 511 ? d : 256 + d % 256;
}

int64_t parse_dim(const std::string& text, const char* what) {
  std::string t = text;
  t.erase(t.begin(), std::find_if(t.begin(), t.end(), [](unsigned char c) { return !std::isspace(c); }));
  t.erase(std::find_if(t.rbegin(), t.rend(), [](unsigned char c) { return !std::isspace(c); }).base(),
          t.end());
  const std::string shown = "'" + text + "'";
  if (t.empty())
    throw ValidationError(std::string(what) + " is empty; give a whole number from 1 to " +
                          std::to_string(kMaxDim));
  bool negative = t[0] == '-';
  size_t start = (t[0] == '-' || t[0] == '+') ? 1 : 0;
  if (start == t.size() ||
      !std::all_of(t.begin() + start, t.end(), [](unsigned char c) { return std::isdigit(c); }))
    throw ValidationError(std::string(what) + " = " + shown + " is not a whole number (allowed: 1 to " +
                          std::to_string(kMaxDim) + ")");
  if (negative) throw ValidationError(std::string(what) + " = " + t + " is negative; it must be at least 1");
  if (t.size() - start > 12)
    throw ValidationError(std::string(what) + " = " + t + " is above the limit of " +
                          std::to_string(kMaxDim));
  int64_t v = std::stoll(t.substr(start));
  if (v < 1) throw ValidationError(std::string(what) + " = " + t + " must be at least 1");
  if (v > kMaxDim)
    throw ValidationError(std::string(what) + " = " + t + " is above the limit of " +
                          std::to_string(kMaxDim));
  return v;
}

std::vector<std::string> split_fields(const std::string& text, char sep) {
  std::vector<std::string> out(1);
  for (char c : text) {
    if (c == sep)
      out.emplace_back();
    else
      out.back() += c;
  }
  return out;
}

void validate_shape(const ProblemSpec& s) {
  auto check = [](int64_t v, const char* name) {
    if (v < 1) throw ValidationError(std::string(name) + " = " + std::to_string(v) + " must be at least 1");
    if (v > kMaxDim)
      throw ValidationError(std::string(name) + " = " + std::to_string(v) + " is above the limit of " +
                            std::to_string(kMaxDim));
  };
  check(s.m, "M");
  check(s.n, "N");
  check(s.k, "K");
  if (s.input == InputKind::Symmetric && !(s.m == s.k && s.k == s.n)) {
    std::ostringstream os;
    os << "symmetric inputs need square matrices, but M x N x K = " << s.m << " x " << s.n << " x " << s.k;
    throw ValidationError(os.str());
  }
}

Tolerance tolerance_for(int64_t k, double max_abs_a, double max_abs_b, bool tf32) {
  const double u = std::ldexp(1.0, -24);  // unit roundoff of float32
  const double kd = double(k);
  Tolerance t;
  t.fixed = 8.0 * kd * u * max_abs_a * max_abs_b;  // mixed signs: rounding errors that cancel
  t.per_max_ref = 2.0 * kd * u;                    // one sign: errors that add up, |C| = sum |a b|
  if (tf32) {
    const double r = std::ldexp(1.0, -10);  // the most TF32 rounding or truncation changes an input, relative
    t.fixed += 4.0 * std::sqrt(kd) * r * max_abs_a * max_abs_b;
    t.per_max_ref += 3.0 * r;
  }
  return t;
}

const char* tolerance_formula(bool tf32) {
  return tf32
             ? "Tolerance = (8 K u + 4 sqrt(K) 2^-10) max|A| max|B| + (2 K u + 3 * 2^-10) max|ref|, u = "
               "2^-24: TF32 inputs keep 10 mantissa bits, and their errors grow like sqrt(K) where signs mix "
               "and add up where products share a sign."
             : "Tolerance = 8 K u max|A| max|B| + 2 K u max|ref|, u = 2^-24: rounding errors cancel where "
               "signs mix and add up where products share a sign (as in the ramp).";
}

}  // namespace ts
