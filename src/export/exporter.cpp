// What every export format shares (exporter.hpp): which points may leave as numbers, the
// summary behind time_s, the unit conversion.
#include "exporter.hpp"

#include <cmath>
#include <utility>

#include <labrun/status.hpp>

#include "record.hpp"

namespace labrun {

namespace {

// The first integrity check of `i` that found something, as "integrity: NAME STATE: REASON".
std::optional<std::string> integrity_finding(const Integrity& i) {
  const std::pair<const char*, const IntegrityCheck*> checks[] = {
      {"fences", &i.fences}, {"inputs", &i.inputs}, {"recheck", &i.recheck}, {"audit", i.audit ? &*i.audit : nullptr}};
  for (const auto& [name, check] : checks) {
    if (!check || (check->state != CheckState::failed && check->state != CheckState::warned)) continue;
    return std::string("integrity: ") + name + " " + to_string(check->state) + ": " + check->reason.value_or("");
  }
  return std::nullopt;
}

// Whether the record's correctness check passed: its `passed` as written for a record of an older labrun (kept as
// written), else the typed outcome's.
bool correctness_passed(const Correctness& c) {
  if (!c.as_written.is_null()) {
    const auto it = c.as_written.find("passed");
    return it == c.as_written.end() || !it->is_boolean() || it->get<bool>();
  }
  return c.outcome.passed();
}

/// The document of one entry per exportable point (make_entry_per_point_output).
class EntryPerPoint final : public Output {
 public:
  EntryPerPoint(EntryLayout layout, PointEntry entry) : layout_(layout), entry_(std::move(entry)) {}

  void runs(const std::vector<Run>& runs, Exported& out) override {
    out.document = layout_ == EntryLayout::array ? Json::array() : Json::object();
    for_each_exportable(runs, out, [&](const PointRecord& p, const RunHeader& h) {
      if (layout_ == EntryLayout::array) out.document.push_back(entry_(p, h));
      else out.document[p.key] = entry_(p, h);
    });
  }

 private:
  EntryLayout layout_;
  PointEntry entry_;
};

}  // namespace

std::optional<std::string> run_not_exportable(const RunHeader& header) {
  const Json& lab = header.lab();
  if (lab.value("profile", false))
    return std::string("profiler mode (lab.profile): the times are the profiler's, not a measurement");
  if (header.lab_timing() == "unsynchronized")
    return std::string("lab.timing: unsynchronized: the times are the enqueue's, not the work's");
  if (const double delay_s = json_number(lab, {"delay_s"}); std::isfinite(delay_s) && delay_s > 0)
    return std::string("lab.delay_s: a test aid's delay kernel is in every time");
  return std::nullopt;
}

std::optional<std::string> not_exportable(const PointRecord& point) {
  if (point.status != Status::ok) return std::string(to_string(point.status)) + ": " + point.reason.value_or("");
  if (point.correctness && !correctness_passed(*point.correctness))
    return std::string("correctness: the check did not pass");
  if (point.integrity)
    if (auto finding = integrity_finding(*point.integrity)) return finding;
  const double t = point.timing ? point.timing->time_s : kNoValue;
  if (!(std::isfinite(t) && t > 0 && std::isfinite(to_ns(t)))) return std::string("no time");
  return std::nullopt;
}

void for_each_exportable(const std::vector<Run>& runs, Exported& out,
                         const std::function<void(const PointRecord&, const RunHeader&)>& write) {
  for (const Run& run : runs) {
    const auto run_why = run_not_exportable(run.header);
    for (const PointRecord& p : run.points) {
      if (const auto why = run_why ? run_why : not_exportable(p)) {
        out.left_out.push_back({p.key, *why});
        continue;
      }
      write(p, run.header);
      ++out.written;
    }
  }
}

std::optional<std::pair<double, double>> time_interval(const PointRecord& point) {
  if (!point.timing) return std::nullopt;
  const Timing& t = *point.timing;
  for (const OptionalSummary* s : {&t.device, &t.wall}) {
    if (!*s || (*s)->median_time_s != t.time_s) continue;
    const TimeSummary& m = **s;
    if (!std::isfinite(m.ci95_rel_halfwidth) || !std::isfinite(m.ci95_low_time_s) ||
        !std::isfinite(m.ci95_high_time_s) || m.ci95_low_time_s <= 0 || m.ci95_low_time_s > t.time_s ||
        m.ci95_high_time_s < t.time_s)
      return std::nullopt;
    return std::pair{m.ci95_low_time_s, m.ci95_high_time_s};
  }
  return std::nullopt;
}

std::vector<double> process_medians(const PointRecord& point) {
  if (!point.timing || !point.timing->processes) return {};
  const ProcessStats& p = *point.timing->processes;
  if (p.count < 2 || p.time_s.size() != static_cast<std::size_t>(p.count)) return {};
  for (const double m : p.time_s)
    if (!(std::isfinite(m) && m > 0 && std::isfinite(to_ns(m)))) return {};
  return p.time_s;
}

std::int64_t sample_count(const PointRecord& point) {
  if (!point.timing) return 0;
  if (point.timing->device) return point.timing->device->count;
  if (point.timing->wall) return point.timing->wall->count;
  return 0;
}

double to_ns(double seconds) { return seconds * 1e9; }

std::unique_ptr<Output> make_entry_per_point_output(EntryLayout layout, PointEntry entry) {
  return std::make_unique<EntryPerPoint>(layout, std::move(entry));
}

}  // namespace labrun
