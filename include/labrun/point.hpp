// A sweep point: one variant of one experiment at one value of every axis. Its identity is what diff, resume
// and sharding key on.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "axis.hpp"

namespace labrun {

/// One point of a sweep. `axes` holds every axis of the experiment (written or defaulted), in sweep order.
struct Point {
  std::string experiment;
  std::string variant;
  std::vector<std::pair<std::string, AxisValue>> axes;

  /// Value on axis `name`. @throws std::out_of_range if the point has no such axis.
  const AxisValue& at(const std::string& name) const;
  /// Integer value of an Integer axis. @throws std::out_of_range / std::bad_variant_access.
  std::int64_t integer(const std::string& name) const;
  /// Real value of a Real axis (an Integer axis value is converted). @throws as at().
  double real(const std::string& name) const;
  /// Word value of a Word axis. @throws as at().
  const std::string& word(const std::string& name) const;

  /// Stable identity text: "experiment/variant/a=1,b=0.5,c=f32" with axes sorted by name, so that the
  /// order in which a config writes its axes does not change identities.
  std::string key() const;
  /// 16 hex digits: FNV-1a 64 (Fowler-Noll-Vo, parameters from the IETF draft-eastlake-fnv) of key().
  std::string id() const;
  /// "a=1,b=0.5" in sweep order, for tables and logs.
  std::string label() const;
};

/// 64-bit FNV-1a of a byte string (offset basis 14695981039346656037, prime 1099511628211).
std::uint64_t fnv1a64(const std::string& bytes);

}  // namespace labrun
