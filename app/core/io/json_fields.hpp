#pragma once
// [SECTION] A JSON format written once. A type's fields are listed in one function template,
// `fields(io, x)`, that names each key with what a reader accepts (its range, whether null may stand for a
// value never measured); JsonWriter walks the list to write an object, JsonReader walks the same list to read
// one back, strictly: every failure names where and what ("record 3: 'median_ms' is not a number"). As the
// worker's wire format (worker_protocol.hpp), adding a field is one line, and the writer and the reader
// cannot drift apart.
//
//   template <class Io, class T> void fields(Io& io, T& x) {   // T is const when writing
//     io.integer("count", x.count, 0, 100);
//     io.number("median", x.median, 0, 1e9, /*null_ok=*/false);
//     io.derived("noise", x.noise(), 0, 1e15);                  // written for readers, checked, not kept
//     io.check([&] { return x.count > 0 || x.median == 0; }, [] { return "'median' without samples"; });
//   }
//
// Doubles are written with round-trip precision; a non-finite one as null, read back as NaN.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ts::io {

// Writes the fields of a list into a JSON object.
class JsonWriter {
 public:
  static constexpr bool reading = false;
  explicit JsonWriter(nlohmann::json& out) : m_out(out) {
    if (!m_out.is_object()) m_out = nlohmann::json::object();
  }
  static nlohmann::json num(double v) {
    return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr);
  }
  static std::string fmt(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return b;
  }

  void text(const char* key, const std::string& v) { m_out[key] = v; }
  // Older files may lack it: then the reader keeps the text it has.
  void optional_text(const char* key, const std::string& v) { text(key, v); }
  void flag(const char* key, bool v) { m_out[key] = v; }
  // Older files may lack it: then the reader keeps the value it has.
  void optional_flag(const char* key, bool v) { flag(key, v); }
  void number(const char* key, double v, double /*lo*/, double /*hi*/, bool /*null_ok*/ = true) {
    m_out[key] = num(v);
  }
  template <class Int>
  void integer(const char* key, const Int& v, int64_t /*lo*/, int64_t /*hi*/) {
    m_out[key] = v;
  }
  void unsigned_integer(const char* key, uint64_t v) { m_out[key] = v; }
  // Older files may lack it: then the reader keeps the value it has.
  template <class Int>
  void optional_integer(const char* key, const Int& v, int64_t lo, int64_t hi) {
    integer(key, v, lo, hi);
  }
  // Times, each in 0..hi, at most `most` of them.
  void samples(const char* key, const std::vector<double>& v, double /*hi*/, int64_t /*most*/) {
    nlohmann::json a = nlohmann::json::array();
    for (double x : v) a.push_back(num(x));
    m_out[key] = std::move(a);
  }
  // A value derived from others: written for people and other programs, checked when read, not kept.
  void derived(const char* key, double v, double /*lo*/, double /*hi*/, bool /*null_ok*/ = true) {
    m_out[key] = num(v);
  }
  // A nested object: `list(io)` walks its fields with a writer of its own.
  template <class List>
  void object(const char* key, List&& list) {
    nlohmann::json sub = nlohmann::json::object();
    JsonWriter w(sub);
    list(w);
    m_out[key] = std::move(sub);
  }
  template <class List>
  void optional_object(const char* key, List&& list) {
    object(key, std::forward<List>(list));
  }
  // Whole numbers, each in lo..hi, at most `most` of them.
  template <class Int>
  void integers(const char* key, const std::vector<Int>& v, int64_t /*lo*/, int64_t /*hi*/,
                int64_t /*most*/) {
    m_out[key] = v;
  }
  // A list of objects, at most `most`: `fields(io, item)` walks each item's fields with a writer of its own.
  template <class T, class Fields>
  void list(const char* key, const std::vector<T>& v, int64_t /*most*/, Fields&& fields) {
    nlohmann::json a = nlohmann::json::array();
    for (const T& item : v) {
      nlohmann::json sub = nlohmann::json::object();
      JsonWriter w(sub);
      fields(w, item);
      a.push_back(std::move(sub));
    }
    m_out[key] = std::move(a);
  }
  template <class Ok, class What>
  void check(Ok&&, What&&) {}

 private:
  nlohmann::json& m_out;
};

// Reads the fields of a list from a JSON object, strictly: a key that is missing, of the wrong kind or
// outside its range throws `Error` (a std::exception constructible from the message) naming where it is.
template <class Error>
class JsonReader {
 public:
  static constexpr bool reading = true;
  JsonReader(const nlohmann::json& j, std::string where) : m_j(j), m_where(std::move(where)) {
    if (!m_j.is_object()) throw Error(m_where + " is not an object");
  }

  const nlohmann::json& at(const char* key) const {
    auto it = m_j.find(key);
    if (it == m_j.end()) throw Error(m_where + ": '" + key + "' is missing");
    return *it;
  }
  bool has(const char* key) const { return m_j.contains(key); }
  const std::string& where() const { return m_where; }

  void text(const char* key, std::string& v) const {
    const nlohmann::json& x = at(key);
    if (!x.is_string()) bad(key, "is not text");
    v = x.get<std::string>();
  }
  void optional_text(const char* key, std::string& v) const {
    if (has(key)) text(key, v);
  }
  void flag(const char* key, bool& v) const {
    const nlohmann::json& x = at(key);
    if (!x.is_boolean()) bad(key, "is not true or false");
    v = x.get<bool>();
  }
  void optional_flag(const char* key, bool& v) const {
    if (has(key)) flag(key, v);
  }
  // A number in lo..hi, or null (read as NaN: a value that was never measured) when `null_ok`.
  void number(const char* key, double& v, double lo, double hi, bool null_ok = true) const {
    v = checked(at(key), key, lo, hi, null_ok);
  }
  template <class Int>
  void integer(const char* key, Int& v, int64_t lo, int64_t hi) const {
    v = Int(whole(at(key), key, lo, hi));
  }
  void unsigned_integer(const char* key, uint64_t& v) const {
    const nlohmann::json& x = at(key);
    if (!x.is_number_unsigned()) bad(key, "is not a whole number >= 0");
    v = x.get<uint64_t>();
  }
  template <class Int>
  void optional_integer(const char* key, Int& v, int64_t lo, int64_t hi) const {
    if (has(key)) integer(key, v, lo, hi);
  }
  void samples(const char* key, std::vector<double>& v, double hi, int64_t most) const {
    const nlohmann::json& a = at(key);
    if (!a.is_array()) throw Error(m_where + ": '" + key + "' is not a list");
    if (a.size() > size_t(most))
      throw Error(m_where + ": " + std::to_string(a.size()) + " samples, more than the limit of " +
                  std::to_string(most));
    v.clear();
    v.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      const nlohmann::json& x = a[i];
      if (x.is_number() && x.get<double>() >= 0 && x.get<double>() <= hi)
        v.push_back(x.get<double>());
      else  // the reason, with the sample's place
        checked(x, std::string(key) + "[" + std::to_string(i) + "]", 0, hi, false);
    }
  }
  void derived(const char* key, double /*v*/, double lo, double hi, bool null_ok = true) const {
    checked(at(key), key, lo, hi, null_ok);
  }
  template <class List>
  void object(const char* key, List&& list) const {
    JsonReader sub(at(key), m_where + "." + key);
    list(sub);
  }
  template <class List>
  void optional_object(const char* key, List&& list) const {
    if (has(key)) object(key, std::forward<List>(list));
  }
  template <class Int>
  void integers(const char* key, std::vector<Int>& v, int64_t lo, int64_t hi, int64_t most) const {
    const nlohmann::json& a = list_at(key, most);
    v.clear();
    v.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i)
      v.push_back(Int(whole(a[i], std::string(key) + "[" + std::to_string(i) + "]", lo, hi)));
  }
  template <class T, class Fields>
  void list(const char* key, std::vector<T>& v, int64_t most, Fields&& fields) const {
    const nlohmann::json& a = list_at(key, most);
    v.clear();
    v.reserve(a.size());
    for (size_t i = 0; i < a.size(); ++i) {
      JsonReader sub(a[i], m_where + "." + key + "[" + std::to_string(i) + "]");
      T item{};
      fields(sub, item);
      v.push_back(std::move(item));
    }
  }
  // What the fields must say together: `ok()` false throws "<where>: <what()>".
  template <class Ok, class What>
  void check(Ok&& ok, What&& what) const {
    if (!ok()) throw Error(m_where + ": " + std::string(what()));
  }

  static std::string fmt(double x) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", x);
    return b;
  }

 private:
  // A whole number in lo..hi.
  int64_t whole(const nlohmann::json& x, const std::string& key, int64_t lo, int64_t hi) const {
    if (!x.is_number_integer()) bad(key, "is not a whole number");
    const bool huge = x.is_number_unsigned() && x.get<uint64_t>() > uint64_t(INT64_MAX);
    const int64_t i = huge ? 0 : x.get<int64_t>();
    if (huge || i < lo || i > hi)
      throw Error(m_where + ": '" + key + "' = " + x.dump() + " is outside " + std::to_string(lo) + ".." +
                  std::to_string(hi));
    return i;
  }
  // The list under `key`, of at most `most` items.
  const nlohmann::json& list_at(const char* key, int64_t most) const {
    const nlohmann::json& a = at(key);
    if (!a.is_array()) throw Error(m_where + ": '" + key + "' is not a list");
    if (a.size() > size_t(most))
      throw Error(m_where + ": '" + key + "' holds " + std::to_string(a.size()) +
                  " items, more than the limit of " + std::to_string(most));
    return a;
  }
  double checked(const nlohmann::json& v, const std::string& key, double lo, double hi, bool null_ok) const {
    if (v.is_null()) {
      if (!null_ok) bad(key, "is null, not a number");
      return std::numeric_limits<double>::quiet_NaN();
    }
    if (!v.is_number()) bad(key, "is not a number");
    const double x = v.get<double>();
    if (!(x >= lo && x <= hi))
      throw Error(m_where + ": '" + key + "' = " + v.dump() + " is outside " + fmt(lo) + ".." + fmt(hi));
    return x;
  }
  [[noreturn]] void bad(const std::string& key, const char* what) const {
    throw Error(m_where + ": '" + key + "' " + what);
  }

  const nlohmann::json& m_j;
  std::string m_where;
};

}  // namespace ts::io
