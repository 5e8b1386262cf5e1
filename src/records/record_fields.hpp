// Table-driven JSON fields of the typed records of point_record.hpp. Each record type lists its fields once, as
// rows of (JSON key, member pointer, codec, when the key is written); one writer and one reader walk the rows, so
// a record's keys are written in the order of its table and every field is read with the same checks and the same
// messages. The way of src/config/lab_settings.hpp's table of lab settings, for the result records.
//
// A row is made by always<&T::m, Codec>("key") (the key is always written), if_set<...>("key") (written only when
// the value is set: an optional or Boxed with a value, a non-null Json, a real that is not NaN) or
// if_flag<...>("key", &T::flag) (written only when the bool member `flag` is true; reading sets `flag` to whether
// any key of its rows is present, null included). An optional last argument is the row's reading pass (Field::pass).
// A codec says how one value is written and read; see "Codecs".
//
// Reading: an absent key leaves the member at its default (every record struct's defaults are what a missing key
// reads as), and so does null unless the codec reads null itself; a present value of the wrong type is a
// ResultError naming its dotted path ("timing.wall.count: expected an integer, got ...").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "boxed.hpp"
#include "record.hpp"

namespace labrun::fields {

/// "-1.0" and the like: a value as JSON text for an error message, cut at 80 characters.
std::string shown(const Json& v);

// ---- Reading values ---------------------------------------------------------------------------------------

/// The dotted path of `key` inside `where` ("timing" + "wall" -> "timing.wall"; "" + "id" -> "id").
std::string at(const std::string& where, const char* key);

/// Throws ResultError "WHERE: expected EXPECTED, got TEXT" (TEXT cut at 80 characters; WHERE "" is "record").
[[noreturn]] void bad(const std::string& where, const char* expected, const Json& got);

/// Throws as bad() unless `j` is an object.
void require_object(const Json& j, const std::string& where);

/// A real: a JSON number, a json_real() spelling ("NaN", "Infinity", "-Infinity") or null (NaN).
/// @throws ResultError for anything else.
double real_of(const Json& v, const std::string& where);

// ---- Rows -------------------------------------------------------------------------------------------------

/// One field of record type T: its key, how its member is written into and read from the record's object, the
/// flag that gates it (if_flag rows) and the pass it is read in (lower first; then in table order).
template <class T>
struct Field {
  const char* key;
  void (*write)(const T& x, Json& j, const char* key);  ///< puts j[key], or leaves it out (if_set)
  void (*read)(T& x, const Json& j, const char* key, const std::string& where);  ///< read_member
  bool T::*gate = nullptr;  ///< if_flag rows: the key is written only when x.*gate
  int pass = 0;             ///< reading order: every row of pass 0, then of pass 1, ...
};

/// The owner type of a pointer to a data member.
template <class>
struct MemberOf;
template <class T, class V>
struct MemberOf<V T::*> {
  using Owner = T;
};
template <auto M>
using Owner = typename MemberOf<decltype(M)>::Owner;

/// Whether a value is set, for if_set rows: an optional or Boxed holds a value; a Json is not null; a real is not
/// NaN.
template <class X>
bool is_set(const std::optional<X>& v) {
  return v.has_value();
}
template <class X>
bool is_set(const Boxed<X>& v) {
  return v.has_value();
}
inline bool is_set(const Json& v) { return !v.is_null(); }
inline bool is_set(double v) { return !std::isnan(v); }

/// Writes member M of `x` as `key` with codec C.
template <auto M, class C>
void write_always(const Owner<M>& x, Json& j, const char* key) {
  j[key] = C::write(x.*M);
}

/// Writes member M of `x` as `key` with codec C when it is set (is_set); else leaves the key out.
template <auto M, class C>
void write_if_set(const Owner<M>& x, Json& j, const char* key) {
  if (is_set(x.*M)) j[key] = C::write(x.*M);
}

/// Reads `key` of the object `j` into member M of `x` with codec C: an absent key is C::missing's (a required
/// field) or leaves the default, as does null unless C reads null.
template <auto M, class C>
void read_member(Owner<M>& x, const Json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end()) {
    if constexpr (requires { C::missing(key); }) C::missing(key);
    return;
  }
  if (it->is_null() && !C::kReadsNull) return;
  C::read(*it, at(where, key), x.*M);
}

/// A row whose key is always written.
template <auto M, class C>
constexpr Field<Owner<M>> always(const char* key, int pass = 0) {
  return {key, &write_always<M, C>, &read_member<M, C>, nullptr, pass};
}

/// A row whose key is written only when the value is set (is_set).
template <auto M, class C>
constexpr Field<Owner<M>> if_set(const char* key, int pass = 0) {
  return {key, &write_if_set<M, C>, &read_member<M, C>, nullptr, pass};
}

/// A row whose key is written only when the flag member `gate` is true; reading sets the flag from the key's
/// presence (records from before the field existed lack the key and write none back).
template <auto M, class C>
constexpr Field<Owner<M>> if_flag(const char* key, bool Owner<M>::*gate, int pass = 0) {
  return {key, &write_always<M, C>, &read_member<M, C>, gate, pass};
}

/// Adds the keys of `x` to the object `j`: its table's keys in table order, each as its row writes it.
template <class Rows, class T>
void put_fields(const Rows& rows, const T& x, Json& j) {
  for (const Field<T>& row : rows)
    if (!row.gate || x.*row.gate) row.write(x, j, row.key);
}

/// The object of `x` by its table (put_fields into an empty object).
template <class Rows, class T>
Json write_fields(const Rows& rows, const T& x) {
  Json j = Json::object();
  put_fields(rows, x, j);
  return j;
}

/// Reads the object `j` (already checked to be one) into `x` (default-constructed) by its table: each flag from
/// the presence of its rows' keys, then the rows pass by pass, in table order within a pass.
template <class Rows, class T>
void read_fields(const Rows& rows, const Json& j, const std::string& where, T& x) {
  int last_pass = 0;
  for (const Field<T>& row : rows) {
    if (row.gate) x.*row.gate = false;
    last_pass = std::max(last_pass, row.pass);
  }
  for (const Field<T>& row : rows)
    if (row.gate && j.contains(row.key)) x.*row.gate = true;
  for (int pass = 0; pass <= last_pass; ++pass)
    for (const Field<T>& row : rows)
      if (row.pass == pass) row.read(x, j, row.key, where);
}

// ---- Codecs: how one value is written (write) and read (read, of a present value at `where`) -----------------

/// What the codecs share: null reads as absent (the member keeps its default).
struct Codec {
  static constexpr bool kReadsNull = false;
};

/// An integer (counts, batch): a JSON integer, or a JSON float with an integral value.
struct Int : Codec {
  static Json write(std::int64_t v) { return v; }
  static void read(const Json& v, const std::string& where, std::int64_t& out);
};

/// A real as json_real() writes it (non-finite values as "NaN", "Infinity", "-Infinity").
struct Real : Codec {
  static Json write(double v) { return json_real(v); }
  static void read(const Json& v, const std::string& where, double& out) { out = real_of(v, where); }
};

/// A real of interpret_point()'s encoding: a finite number, else null.
struct FiniteReal : Codec {
  static Json write(double v) { return std::isfinite(v) ? Json(v) : Json(nullptr); }
  static void read(const Json& v, const std::string& where, double& out) { out = real_of(v, where); }
};

/// A string.
struct Text : Codec {
  static Json write(const std::string& v) { return v; }
  static void read(const Json& v, const std::string& where, std::string& out);
};

/// A string a point record must have (id, key, ...): absent is "point record has no \"KEY\"", null is not a string.
struct RequiredText : Text {
  static constexpr bool kReadsNull = true;
  [[noreturn]] static void missing(const char* key);
};

/// A string or null (nullopt).
struct OptText : Codec {
  static Json write(const std::optional<std::string>& v) { return v ? Json(*v) : Json(nullptr); }
  static void read(const Json& v, const std::string& where, std::optional<std::string>& out);
};

/// true or false.
struct Flag : Codec {
  static Json write(bool v) { return v; }
  static void read(const Json& v, const std::string& where, bool& out);
};

/// An array of reals, each as Real (empty: []).
struct Reals : Codec {
  static Json write(const std::vector<double>& v) { return json_reals(v); }
  static void read(const Json& v, const std::string& where, std::vector<double>& out);
};

/// An array of strings (empty: []).
struct Texts : Codec {
  static Json write(const std::vector<std::string>& v) { return v; }
  static void read(const Json& v, const std::string& where, std::vector<std::string>& out);
};

/// lab.cpp's raw sample arrays: as Reals, but null when there are none.
struct RealsOrNull : Reals {
  static Json write(const std::vector<double>& v) { return v.empty() ? Json(nullptr) : json_reals(v); }
};

/// Any JSON, kept as written (null included).
struct Opaque : Codec {
  static constexpr bool kReadsNull = true;
  static Json write(const Json& v) { return v; }
  static void read(const Json& v, const std::string&, Json& out) { out = v; }
};

/// Any JSON object, kept as written.
struct OpaqueObject : Codec {
  static Json write(const Json& v) { return v; }
  static void read(const Json& v, const std::string& where, Json& out) {
    require_object(v, where);
    out = v;
  }
};

/// A record of its own table `Rows` (an array of Field<S>), as an object.
template <const auto& Rows>
struct Object : Codec {
  template <class S>
  static Json write(const S& v) {
    return write_fields(Rows, v);
  }
  template <class S>
  static void read(const Json& v, const std::string& where, S& out) {
    require_object(v, where);
    read_fields(Rows, v, where, out);
  }
};

/// An array of records of the table `Rows`, element i read at "WHERE[i]".
template <const auto& Rows>
struct List : Codec {
  template <class S>
  static Json write(const std::vector<S>& v) {
    Json a = Json::array();
    for (const S& s : v) a.push_back(Object<Rows>::write(s));
    return a;
  }
  template <class S>
  static void read(const Json& v, const std::string& where, std::vector<S>& out) {
    if (!v.is_array()) bad(where, "an array", v);
    for (std::size_t i = 0; i < v.size(); ++i)
      Object<Rows>::read(v[i], where + "[" + std::to_string(i) + "]", out.emplace_back());
  }
};

/// An optional (std::optional or Boxed) value of codec C: null when it has none; read into a new value.
template <class C>
struct Maybe : Codec {
  template <class O>
  static Json write(const O& v) {
    return v ? C::write(*v) : Json(nullptr);
  }
  template <class O>
  static void read(const Json& v, const std::string& where, O& out) {
    std::remove_cvref_t<decltype(*out)> value{};
    C::read(v, where, value);
    out = std::move(value);
  }
};

}  // namespace labrun::fields
