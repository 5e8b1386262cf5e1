// `labrun export github-action-benchmark`: the `customSmallerIsBetter` input of github-action-benchmark
// (github.com/benchmark-action/github-action-benchmark, "Examples" > custom): a JSON array of {name, unit, value,
// range, extra}. Mapping (docs/formats.md): one entry per ok point named by its key; value = time_s in "ns"; range
// = "± H" with H the half-width of the 95% confidence interval of the median, in ns (left out without a finite
// interval); extra = the timing method, the
// samples and processes, the device and the code, one line. The format has no error entry: a point that may not
// leave as a number is left out.
#include <cmath>

#include <fmt/format.h>

#include "exporter.hpp"

namespace labrun {

namespace {

// A point's entry: {name, unit, value, range?, extra}.
Json entry(const PointRecord& p, const RunHeader& h) {
  const Timing& t = *p.timing;
  Json e = Json::object();
  e["name"] = p.key;
  e["unit"] = "ns";
  e["value"] = to_ns(t.time_s);
  // Half the interval's width, in full (fmt's shortest text that reads back as the same double).
  if (const auto interval = time_interval(p))
    e["range"] = fmt::format("± {}", to_ns((interval->second - interval->first) / 2));
  std::string extra = fmt::format("{}; {} samples", t.method_name(), sample_count(p));
  if (const auto medians = process_medians(p); !medians.empty())
    extra += fmt::format(" pooled from {} processes", medians.size());
  if (!h.device_name().empty()) extra += "; " + h.device_name();
  if (!h.code_key().empty()) extra += "; " + h.code_key();
  e["extra"] = extra;
  return e;
}

}  // namespace

std::unique_ptr<Output> make_github_action_output() { return make_entry_per_point_output(EntryLayout::array, entry); }

}  // namespace labrun
