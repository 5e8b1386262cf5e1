// The points the experiments' host and GPU tests build by hand: an experiment's own axes, then the run mode and a hot
// L2, as every experiment test header wrote them out again (gemv, layout, gelu, attention, kv_cache, ...).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <labrun/point.hpp>

namespace labrun::test {

/// The lab's default seed (src/config/lab_settings.hpp `seed`), which the experiment tests draw their inputs from.
inline constexpr std::uint64_t kSeed = 20261129;

/// A point of `experiment`'s `variant`: the experiment's own `axes` in the order given, then "mode" = `mode`
/// ("eager" or "graph", not checked here) and "l2" = "hot", the axis order the experiment tests have always built
/// (it shows in Point::label()). Throws nothing beyond std::bad_alloc; an unknown axis or value is only found when the
/// point is used.
inline Point hot_point(const std::string& experiment, const std::string& variant,
                       std::vector<std::pair<std::string, AxisValue>> axes, const std::string& mode) {
  axes.emplace_back("mode", mode);
  axes.emplace_back("l2", std::string("hot"));
  return Point{experiment, variant, std::move(axes)};
}

}  // namespace labrun::test
