// `labrun export bmf`: Bencher Metric Format (bencher.dev/docs/reference/bencher-metric-format), the JSON `bencher
// run --adapter json` reads: {BENCHMARK: {MEASURE: {value, lower_value, upper_value}}}. Mapping (docs/formats.md):
// one benchmark per ok point named by its key; `latency` (Bencher's built-in measure, nanoseconds) = time_s with the
// 95% confidence interval of its median as the bounds; `bandwidth` (a measure of labrun's own, bytes per second)
// = the achieved bandwidth of the interpretation, where the cost model knows the bytes, its bounds the bytes over
// the interval's ends. BMF has no error entry: a point that may not leave as a number is left out.
#include <cmath>

#include "exporter.hpp"

namespace labrun {

namespace {

// A point's measures: {latency: {value, lower_value?, upper_value?}, bandwidth?: {...}}.
Json measures(const PointRecord& p, const RunHeader&) {
  const double time_s = p.timing->time_s;
  const auto interval = time_interval(p);
  Json m = Json::object();
  Json latency = {{"value", to_ns(time_s)}};
  if (interval) {
    latency["lower_value"] = to_ns(interval->first);
    latency["upper_value"] = to_ns(interval->second);
  }
  m["latency"] = latency;
  const double bw = p.interpretation ? p.interpretation->achieved_bandwidth_Bps : kNoValue;
  if (std::isfinite(bw) && bw > 0) {
    Json bandwidth = {{"value", bw}};
    // The bytes the interpretation divided by time_s, over the interval's ends (a longer time: a lower rate).
    const double bytes = bw * time_s;
    if (interval && std::isfinite(bytes)) {
      bandwidth["lower_value"] = bytes / interval->second;
      bandwidth["upper_value"] = bytes / interval->first;
    }
    m["bandwidth"] = bandwidth;
  }
  return m;
}

}  // namespace

std::unique_ptr<Output> make_bmf_output() { return make_entry_per_point_output(EntryLayout::object_by_key, measures); }

}  // namespace labrun
