// What the lab says about a point before and after it runs: whether it fits the backend's budget and free memory,
// and the warnings its record earns (noise, throttling, clocks, outliers, a working set beside the cache).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "env.hpp"
#include "format.hpp"
#include "lab.hpp"
#include "record.hpp"
#include <labrun/status.hpp>

namespace labrun {

std::optional<std::string> over_budget(const PointEstimate& e, const Backend& backend, const LabSettings& lab) {
  if (backend.kind() == BackendKind::host) {
    if (e.working_set_bytes > lab.host_max_bytes)
      return "host backend runs working sets up to " + format_bytes(lab.host_max_bytes) +
             " (lab.host_max_bytes); this point's is " + format_bytes(e.working_set_bytes);
    const double t = e.bytes / kHostEstimateBandwidth_Bps + e.flop / kHostEstimateFlopPerS;
    if (t > lab.host_max_time_s)
      return "host backend runs points estimated at up to " + format_time(lab.host_max_time_s) +
             " per iteration (lab.host_max_time_s); this one is estimated at " + format_time(t);
  }
  if (const auto memory = backend.memory_bytes(); memory && e.working_set_bytes > 0.9 * *memory)
    return "the working set " + format_bytes(e.working_set_bytes) + " exceeds 90% of the device's " +
           format_bytes(*memory) + " of memory";
  return std::nullopt;
}

std::optional<std::string> over_free_memory(const PointEstimate& e, double extra_bytes, const Backend& backend) {
  const auto free = backend.free_memory_bytes();
  const double footprint = e.working_set_bytes + extra_bytes;
  if (!free || !(footprint > *free)) return std::nullopt;
  const std::string where = backend.kind() == BackendKind::host ? "the host" : "the device";
  return "the point needs " + format_bytes(footprint) + " (working set " + format_bytes(e.working_set_bytes) +
         (extra_bytes > 0 ? " + L2 flush buffer " + format_bytes(extra_bytes) : std::string()) + ") but " + where +
         " has " + format_bytes(*free) + " free" +
         (backend.memory_bytes() ? " of " + format_bytes(*backend.memory_bytes()) : std::string()) +
         "; not run, so it cannot run out of memory";
}

std::vector<Warning> point_warnings(const PointRecord& rec, const LabSettings& lab, std::optional<double> cache_bytes,
                                    double calibrated_sync_s) {
  std::vector<Warning> w;
  if (rec.timing) {
    const Timing& timing = *rec.timing;
    if (timing.stop_reason != "ci_target")
      w.push_back({"noise", "sampling stopped (" + timing.stop_reason + ") with the median's 95% CI at +-" +
                                format_percent(timing.median_ci_rel_halfwidth) + ", above the target +-" +
                                format_percent(lab.target_rel_ci)});
    if (!timing.wall || timing.wall->count < lab.min_samples)
      w.push_back({"few_samples", "fewer samples than lab.min_samples"});
    const double bytes = rec.cost.compulsory_bytes;
    if (timing.l2 == "hot" && cache_bytes && bytes > 0 && bytes < *cache_bytes)
      w.push_back({"l2_resident", "hot L2 and a working set of " + std::to_string(bytes / 1e6).substr(0, 6) +
                                      " MB under the " + std::to_string(*cache_bytes / 1e6).substr(0, 6) +
                                      " MB L2: repeated iterations read from cache, not DRAM"});
  }
  const DeviceState before = device_state_of(rec, "before"), after = device_state_of(rec, "after");
  for (const DeviceState* st : {&before, &after})
    if (st->throttled)
      w.push_back(
          {"throttle", "clock-event reasons " + st->reasons + " " + (st == &before ? "before" : "after") + " timing"});
  // Another process on the device (case C23): the time is not this code's alone.
  if (before.tenant_count > 0 || after.tenant_count > 0)
    w.push_back(
        {"shared_device", "another process held a context on the device " +
                              (before.tenant_count > 0 && after.tenant_count > 0 ? std::string("before and after")
                               : before.tenant_count > 0                         ? std::string("before")
                                                                                 : std::string("after")) +
                              " timing: " + (before.tenant_count > 0 ? before.tenants : after.tenants) +
                              "; the point is kept out of winners, crossovers and hypotheses, and diff does "
                              "not compare it (docs/cases.md C23)"});
  // A host sync round trip far above the run's own calibration: something else holds the GPU or the host (a process
  // left on the device made every round trip take milliseconds, and nothing else said so).
  if (calibrated_sync_s > 0) {
    const double slowest = std::fmax(before.sync_round_trip_time_s, after.sync_round_trip_time_s);
    if (slowest >= kSlowSyncFactor * calibrated_sync_s)
      w.push_back(
          {"slow_sync", "a host sync round trip took " + format_time(slowest) + " " +
                            (before.sync_round_trip_time_s >= after.sync_round_trip_time_s ? "before" : "after") +
                            " timing, " + fmt::format("{:.1f}x", slowest / calibrated_sync_s) +
                            " the run's calibrated " + format_time(calibrated_sync_s) +
                            ": something else holds the GPU or the host (docs/cases.md C23)"});
  }
  const double b = before.sm_clock_hz, a = after.sm_clock_hz;
  if (std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) > 0.02 * std::max(a, b))
    w.push_back({"clocks_changed", "SM clock " + std::to_string(static_cast<long>(b / 1e6)) + " MHz before, " +
                                       std::to_string(static_cast<long>(a / 1e6)) + " MHz after timing"});
  return w;
}

}  // namespace labrun
