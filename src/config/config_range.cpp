#include "config_range.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

#include "config.hpp"  // bound_text, tidy

namespace labrun::config_yaml {

/// What a range's values are checked against: the range's map, its path and the axis it is for.
struct RangeReader::Range {
  const Item& item;
  const std::string& path;
  const AxisDecl& decl;
};

void RangeReader::check_bounds(const AxisValue& value, const std::string& text, const SourceLoc& at,
                               const std::string& path, const AxisDecl& decl) const {
  // long double holds every int64 and every double exactly on the platforms labrun targets, so the
  // comparison does not round a large integer onto a bound.
  long double v = 0;
  if (const auto* i = std::get_if<std::int64_t>(&value)) v = static_cast<long double>(*i);
  else if (const auto* d = std::get_if<double>(&value)) v = *d;
  else return;
  const bool below = decl.min && v < static_cast<long double>(*decl.min);
  const bool above = decl.max && v > static_cast<long double>(*decl.max);
  if (!below && !above) return;
  std::string message = text + " is ";
  if (decl.min && decl.max) message += "outside [" + bound_text(*decl.min) + ", " + bound_text(*decl.max) + "]";
  else if (below) message += "below the minimum " + bound_text(*decl.min);
  else message += "above the maximum " + bound_text(*decl.max);
  fail(at, path, message + " of axis '" + decl.name + "'");
}

std::vector<AxisValue> RangeReader::range(const Item& item, const std::string& path, const AxisDecl& decl) const {
  if (decl.kind == AxisKind::Word)
    fail(item.loc, path, "axis '" + decl.name + "' takes words; a range needs a numeric axis");
  const auto keys = entries(item, path);
  if (keys.empty()) fail(item.loc, path, "an empty map is not a range; write " + std::string(kRangeForms));
  std::map<std::string, const Entry*> by_key;
  for (const auto& entry : keys) {
    if (std::find(kRangeKeys.begin(), kRangeKeys.end(), entry.key) == kRangeKeys.end())
      fail(entry.key_loc, entry.path,
           "unknown range key" + suggest(entry.key, kRangeKeys) + "; a range is " + kRangeForms);
    by_key[entry.key] = &entry;
  }
  const Range r{item, path, decl};
  for (const auto& [name, factor] : {std::pair<std::string, std::int64_t>{"decades", 10}, {"powers_of_two", 2}}) {
    const auto it = by_key.find(name);
    if (it == by_key.end()) continue;
    if (keys.size() != 1) fail(item.loc, path, "a range is exactly one of " + std::string(kRangeForms));
    return geometric_range(r, *it->second, name, factor);
  }
  for (const char* needed : {"from", "to", "step"})
    if (!by_key.count(needed))
      fail(item.loc, path, "the range has no '" + std::string(needed) + "'; a range is " + kRangeForms);
  if (decl.kind == AxisKind::Integer) return integer_range(r, *by_key["from"], *by_key["to"], *by_key["step"]);
  return real_range(r, *by_key["from"], *by_key["to"], *by_key["step"]);
}

/// Appends `value` to a range's `values`: fails past kMaxRangeValues values or outside the axis' bounds.
void RangeReader::add_value(const Range& r, std::vector<AxisValue>& values, AxisValue value) const {
  if (values.size() >= kMaxRangeValues)
    fail(r.item.loc, r.path, "the range yields more than " + std::to_string(kMaxRangeValues) + " values");
  check_bounds(value, to_string(value), r.item.loc, r.path, r.decl);
  values.push_back(std::move(value));
}

/// {decades: [FIRST, LAST]} (factor 10) or {powers_of_two: [FIRST, LAST]} (factor 2) of an integer axis:
/// FIRST, FIRST * factor, ... up to LAST.
std::vector<AxisValue> RangeReader::geometric_range(const Range& r, const Entry& entry, const std::string& name,
                                                    std::int64_t factor) const {
  if (r.decl.kind != AxisKind::Integer)
    fail(entry.key_loc, entry.path, "'" + name + "' needs an integer axis; use {from: A, to: B, step: S}");
  if (!entry.value.node.IsSequence() || entry.value.node.size() != 2)
    fail(entry.value.loc, entry.path, "expected [FIRST, LAST], got " + describe(entry.value.node));
  const auto bounds = elements(entry.value);
  const std::int64_t first = integer(bounds[0], entry.path, "a positive integer");
  const std::int64_t last = integer(bounds[1], entry.path, "an integer");
  if (first <= 0) fail(bounds[0].loc, entry.path, "the first value must be > 0, got " + std::to_string(first));
  if (last < first)
    fail(bounds[1].loc, entry.path,
         "the last value " + std::to_string(last) + " is below the first " + std::to_string(first));
  std::vector<AxisValue> values;
  // Stop before multiplying past `last`, so that the product never overflows int64.
  for (std::int64_t v = first;; v *= factor) {
    add_value(r, values, v);
    if (v > last / factor) break;
  }
  return values;
}

/// {from: A, to: B, step: S} of an integer axis: A, A + S, ... up to B.
std::vector<AxisValue> RangeReader::integer_range(const Range& r, const Entry& from, const Entry& to,
                                                  const Entry& step) const {
  const std::int64_t a = integer(from.value, from.path, "an integer");
  const std::int64_t b = integer(to.value, to.path, "an integer");
  const std::int64_t s = integer(step.value, step.path, "a positive integer");
  if (s <= 0) fail(step.value.loc, step.path, "the step must be > 0, got " + std::to_string(s));
  if (b < a)
    fail(to.value.loc, to.path, "'to' (" + std::to_string(b) + ") is below 'from' (" + std::to_string(a) + ")");
  // Unsigned arithmetic: b - a can exceed int64 when a is negative.
  const std::uint64_t count =
      (static_cast<std::uint64_t>(b) - static_cast<std::uint64_t>(a)) / static_cast<std::uint64_t>(s) + 1;
  if (count > kMaxRangeValues)
    fail(r.item.loc, r.path, "the range yields more than " + std::to_string(kMaxRangeValues) + " values");
  std::vector<AxisValue> values;
  for (std::uint64_t i = 0; i < count; ++i)
    add_value(r, values, static_cast<std::int64_t>(static_cast<std::uint64_t>(a) + i * static_cast<std::uint64_t>(s)));
  return values;
}

/// {from: A, to: B, step: S} of a real axis: A + i*S up to B (within 1e-9 relative).
std::vector<AxisValue> RangeReader::real_range(const Range& r, const Entry& from, const Entry& to,
                                               const Entry& step) const {
  const double a = real(from.value, from.path, "a number");
  const double b = real(to.value, to.path, "a number");
  const double s = real(step.value, step.path, "a positive number");
  if (!(s > 0)) fail(step.value.loc, step.path, "the step must be > 0, got " + step.value.node.Scalar());
  if (b < a)
    fail(to.value.loc, to.path,
         "'to' (" + to.value.node.Scalar() + ") is below 'from' (" + from.value.node.Scalar() + ")");
  if ((b - a) / s >= static_cast<double>(kMaxRangeValues))
    fail(r.item.loc, r.path, "the range yields more than " + std::to_string(kMaxRangeValues) + " values");
  // Each value is a + i*s rather than a running sum, so rounding does not accumulate; the last one is
  // accepted (as exactly `to`) when it lands within 1e-9 relative of `to`.
  const double tolerance = 1e-9 * std::max({std::fabs(a), std::fabs(b), s});
  std::vector<AxisValue> values;
  for (std::size_t i = 0;; ++i) {
    const double v = a + static_cast<double>(i) * s;
    if (v > b + tolerance) break;
    add_value(r, values, std::fabs(v - b) <= tolerance ? b : tidy(v));
  }
  return values;
}

}  // namespace labrun::config_yaml
