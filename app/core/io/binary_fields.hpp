#pragma once
// [SECTION] The field lists of json_fields.hpp (problem, statistics, clock, device, ... in record_fields.hpp)
// walked into and out of the binary fields of a wire message (worker_protocol.hpp's Writer and Reader), so
// the remote engine's protocol (core/remote/protocol.hpp) carries a record with the same list, the same
// limits and the same checks as a session file, never a second list. Keys are not written; a reader holds
// every value to the limits its list gives and throws wire::ProtocolError naming where ("RunDone.clock:
// 'min_mhz' = ..."). Besides the JSON vocabulary, lists, enumerations and raw bytes, which only the wire has.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/io/worker_protocol.hpp"

namespace ts::io {

class BinaryWriter {
 public:
  static constexpr bool reading = false;
  explicit BinaryWriter(wire::Writer& w) : m_w(w) {}
  static std::string fmt(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return b;
  }

  void text(const char*, const std::string& v, size_t = 0) { m_w.str(v); }
  void bytes(const char*, const std::string& v, size_t = 0) { m_w.str(v); }
  void flag(const char*, bool v) { m_w.u8(v ? 1 : 0); }
  void optional_flag(const char* key, bool v) { flag(key, v); }
  // Non-finite numbers travel as NaN, as the JSON writer's null (a value never measured).
  void number(const char*, double v, double, double, bool = true) { m_w.f64(finite_or_nan(v)); }
  template <class Int>
  void integer(const char*, const Int& v, int64_t, int64_t) {
    m_w.i64(int64_t(v));
  }
  void unsigned_integer(const char*, uint64_t v) { m_w.u64(v); }
  template <class Int>
  void optional_integer(const char* key, const Int& v, int64_t lo, int64_t hi) {
    integer(key, v, lo, hi);
  }
  void samples(const char*, const std::vector<double>& v, double, int64_t) {
    m_w.u32(uint32_t(v.size()));
    for (double x : v) m_w.f64(x);
  }
  void derived(const char*, double v, double, double, bool = true) { m_w.f64(finite_or_nan(v)); }
  template <class List>
  void object(const char*, List&& list) {
    list(*this);
  }
  template <class List>
  void optional_object(const char* key, List&& list) {
    object(key, std::forward<List>(list));
  }
  template <class E>
  void enumeration(const char*, const E& v, E, E) {
    m_w.u8(uint8_t(v));
  }
  // A list of at most `most` elements, each walked by `each(io, element)`.
  template <class T, class Each>
  void list(const char*, const std::vector<T>& v, uint32_t, Each&& each) {
    m_w.u32(uint32_t(v.size()));
    for (const T& e : v) each(*this, e);
  }
  template <class Ok, class What>
  void check(Ok&&, What&&) {}

 private:
  static double finite_or_nan(double v) {
    return std::isfinite(v) ? v : std::numeric_limits<double>::quiet_NaN();
  }
  wire::Writer& m_w;
};

class BinaryReader {
 public:
  static constexpr bool reading = true;
  BinaryReader(wire::Reader& r, std::string where) : m_r(r), m_where(std::move(where)) {}
  static std::string fmt(double x) { return BinaryWriter::fmt(x); }

  void text(const char* key, std::string& v, size_t most = 1 << 20) { v = read_str(key, most); }
  void bytes(const char* key, std::string& v, size_t most = wire::kMaxPayload) { v = read_str(key, most); }
  void flag(const char* key, bool& v) {
    const uint8_t x = m_r.u8();
    if (x > 1) bad(key, "is not true or false");
    v = x == 1;
  }
  void optional_flag(const char* key, bool& v) { flag(key, v); }
  void number(const char* key, double& v, double lo, double hi, bool null_ok = true) {
    v = checked(key, m_r.f64(), lo, hi, null_ok);
  }
  template <class Int>
  void integer(const char* key, Int& v, int64_t lo, int64_t hi) {
    const int64_t i = m_r.i64();
    if (i < lo || i > hi)
      throw wire::ProtocolError(m_where + ": '" + key + "' = " + std::to_string(i) + " is outside " +
                                std::to_string(lo) + ".." + std::to_string(hi));
    v = Int(i);
  }
  void unsigned_integer(const char*, uint64_t& v) { v = m_r.u64(); }
  template <class Int>
  void optional_integer(const char* key, Int& v, int64_t lo, int64_t hi) {
    integer(key, v, lo, hi);
  }
  void samples(const char* key, std::vector<double>& v, double hi, int64_t most) {
    const uint32_t n = m_r.count(8);
    if (int64_t(n) > most)
      throw wire::ProtocolError(m_where + ": " + std::to_string(n) + " samples in '" + key +
                                "', more than the limit of " + std::to_string(most));
    v.clear();
    v.reserve(n);
    for (uint32_t i = 0; i < n; ++i)
      v.push_back(
          checked((std::string(key) + "[" + std::to_string(i) + "]").c_str(), m_r.f64(), 0, hi, false));
  }
  void derived(const char* key, double, double lo, double hi, bool null_ok = true) {
    checked(key, m_r.f64(), lo, hi, null_ok);
  }
  template <class List>
  void object(const char* key, List&& list) {
    BinaryReader sub(m_r, m_where + "." + key);
    list(sub);
  }
  template <class List>
  void optional_object(const char* key, List&& list) {
    object(key, std::forward<List>(list));
  }
  template <class E>
  void enumeration(const char* key, E& v, E lo, E hi) {
    const uint8_t x = m_r.u8();
    if (x < uint8_t(lo) || x > uint8_t(hi)) bad(key, "is not one of its kinds");
    v = E(x);
  }
  template <class T, class Each>
  void list(const char* key, std::vector<T>& v, uint32_t most, Each&& each) {
    const uint32_t n = m_r.count(1);
    if (n > most)
      throw wire::ProtocolError(m_where + ": '" + key + "' has " + std::to_string(n) +
                                " elements, more than the limit of " + std::to_string(most));
    v.clear();
    v.reserve(n);
    for (uint32_t i = 0; i < n; ++i) {
      T e{};
      BinaryReader sub(m_r, m_where + "." + key + "[" + std::to_string(i) + "]");
      each(sub, e);
      v.push_back(std::move(e));
    }
  }
  template <class Ok, class What>
  void check(Ok&& ok, What&& what) {
    if (!ok()) throw wire::ProtocolError(m_where + ": " + std::string(what()));
  }

 private:
  std::string read_str(const char* key, size_t most) {
    try {
      return m_r.str(most);
    } catch (const wire::ProtocolError& e) {
      throw wire::ProtocolError(m_where + ": '" + key + "': " + e.what());
    }
  }
  double checked(const char* key, double x, double lo, double hi, bool null_ok) const {
    if (std::isnan(x)) {
      if (!null_ok) bad(key, "is not a number");
      return x;
    }
    if (!(x >= lo && x <= hi))
      throw wire::ProtocolError(m_where + ": '" + key + "' = " + fmt(x) + " is outside " + fmt(lo) + ".." +
                                fmt(hi));
    return x;
  }
  [[noreturn]] void bad(const char* key, const char* what) const {
    throw wire::ProtocolError(m_where + ": '" + key + "' " + what);
  }

  wire::Reader& m_r;
  std::string m_where;
};

}  // namespace ts::io
