// An axis' values as a config gives them, beyond a plain value or list: a range map ({decades: [A, B]},
// {powers_of_two: [A, B]} or {from: A, to: B, step: S}) expanded into its values, and every value checked against
// the axis' declared bounds. config.cpp's Parser reads the rest of the config on top of it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <labrun/axis.hpp>

#include "config_yaml.hpp"

namespace labrun::config_yaml {

/// The most values one range (or one axis) may yield: more is an error, never a truncation.
inline constexpr std::size_t kMaxRangeValues = 100'000;

/// The keys a range map may hold.
inline const std::vector<std::string> kRangeKeys = {"decades", "powers_of_two", "from", "to", "step"};

/// The forms of a range, for messages.
inline constexpr const char* kRangeForms = "{decades: [A, B]}, {powers_of_two: [A, B]} or {from: A, to: B, step: S}";

/// The YAML reader with an axis' ranges and bounds. Every error is a ConfigError with file, line and key.
class RangeReader : public YamlReader {
 protected:
  explicit RangeReader(std::string file) : YamlReader(std::move(file)) {}

  /// Fails (ConfigError at `at`, key `path`) when a numeric `value` (written as `text`) lies outside `decl`'s
  /// min/max; words pass.
  void check_bounds(const AxisValue& value, const std::string& text, const SourceLoc& at, const std::string& path,
                    const AxisDecl& decl) const;

  /// Expands a range map ({decades}, {powers_of_two} or {from, to, step}) into its values, each within `decl`'s
  /// bounds, at most kMaxRangeValues of them.
  std::vector<AxisValue> range(const Item& item, const std::string& path, const AxisDecl& decl) const;

 private:
  struct Range;
  void add_value(const Range& r, std::vector<AxisValue>& values, AxisValue value) const;
  std::vector<AxisValue> geometric_range(const Range& r, const Entry& entry, const std::string& name,
                                         std::int64_t factor) const;
  std::vector<AxisValue> integer_range(const Range& r, const Entry& from, const Entry& to, const Entry& step) const;
  std::vector<AxisValue> real_range(const Range& r, const Entry& from, const Entry& to, const Entry& step) const;
};

}  // namespace labrun::config_yaml
