// The timing arithmetic of the lab pass: how many iterations a sample batches, and a point's samples summarised
// into its Timing (the primary summary of the device samples, else the wall samples).
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "lab.hpp"
#include "stats.hpp"

namespace labrun {

std::int64_t choose_batch(double iteration_time_s, double min_sample_time_s) {
  if (!(iteration_time_s > 0)) return 1;
  // The relative nudge keeps 1e-3 / 1e-6 (= 1000.0000000000001 in binary) from rounding up to 1001.
  const double b = std::ceil(min_sample_time_s / iteration_time_s * (1 - 1e-12));
  return static_cast<std::int64_t>(std::clamp(b, 1.0, 100000.0));
}

void set_timing_samples(Timing& timing, const std::vector<double>& wall, const std::vector<double>& device,
                        const std::vector<double>& submit, const std::vector<double>& host_probe) {
  const Summary primary = summarize(device.empty() ? wall : device);
  auto summary = [](const std::vector<double>& v) {
    return v.empty() ? std::nullopt : OptionalSummary(TimeSummary::of(summarize(v)));
  };
  timing.median_ci_rel_halfwidth = primary.ci_rel_halfwidth;
  timing.wall = TimeSummary::of(summarize(wall));
  timing.device = summary(device);
  timing.submit = summary(submit);
  timing.wall_samples_s = wall;
  timing.device_samples_s = device;
  timing.submit_samples_s = submit;
  timing.host_probe = summary(host_probe);
  timing.host_probe_samples_s = host_probe;
  timing.host_probe_recorded = true;
  timing.time_s = primary.median;
}

double median_ci_rel_halfwidth(std::vector<double> v) {
  return v.empty() ? std::numeric_limits<double>::infinity() : summarize(std::move(v)).ci_rel_halfwidth;
}

}  // namespace labrun
