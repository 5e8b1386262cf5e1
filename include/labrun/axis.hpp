// Axis values and axis declarations: the vocabulary shared by configs, sweep points and experiments.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace labrun {

/// One value on one axis of a sweep: an exact integer (e.g. N), a real number (e.g. density), or a word
/// (e.g. dtype "f32"). Integers are kept as int64 so that `1e7` in a config is exactly 10000000 (case C02).
using AxisValue = std::variant<std::int64_t, double, std::string>;

/// Canonical text of a value, used in point identities and tables: integers in decimal, reals in the
/// shortest form that reads back to the same double (e.g. "0.7", "1e-03" is never produced), words as is.
std::string to_string(const AxisValue& value);

/// The kind of value an axis takes.
enum class AxisKind { Integer, Real, Word };

/// Name of an AxisKind as used in error messages: "integer", "number", "one of the words".
const char* to_string(AxisKind kind);

/// What an experiment declares about one of its axes. A config may only name declared axes, and each value
/// must satisfy the declaration (kind, [min, max] for numbers, `choices` for words); an axis the config leaves
/// out takes `default_value`.
struct AxisDecl {
  std::string name;  ///< e.g. "size", "dtype"
  AxisKind kind = AxisKind::Integer;
  std::string description;           ///< one line, shown by `labrun list`
  std::optional<double> min;         ///< inclusive lower bound for Integer/Real axes
  std::optional<double> max;         ///< inclusive upper bound for Integer/Real axes
  std::vector<std::string> choices;  ///< allowed words for Word axes
  AxisValue default_value;           ///< value used when the config does not name the axis
};

}  // namespace labrun
