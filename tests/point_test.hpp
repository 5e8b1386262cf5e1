// The points the experiments' host and GPU tests build by hand: an experiment's own axes, then the run mode and a hot
// L2, as every experiment test header wrote them out again (gemv, layout, gelu, attention, kv_cache, ...).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <labrun/point.hpp>

#include "point_record.hpp"

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

/// An eager, hot-L2 timing of `time_s` seconds a iteration as the report tests record it by hand: host steady-clock
/// wall samples (20) with a 95% CI of ±1% around the median.
inline Timing hot_timing(double time_s) {
  Timing t;
  t.mode = "eager";
  t.l2 = "hot";
  t.method = TimingMethod::host_steady_clock;
  TimeSummary wall;
  wall.count = 20;
  wall.median_time_s = time_s;
  wall.ci95_low_time_s = time_s * 0.99;
  wall.ci95_high_time_s = time_s * 1.01;
  wall.ci95_rel_halfwidth = 0.01;
  t.wall = wall;
  t.time_s = time_s;
  return t;
}

}  // namespace labrun::test
