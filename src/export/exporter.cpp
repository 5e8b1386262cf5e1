// The table of export formats (exporter.hpp) and what every format shares: which points may leave as numbers, the
// summary behind time_s, the unit conversion.
#include "exporter.hpp"

#include <cmath>

#include <labrun/status.hpp>

namespace labrun {

// Each format's factory, in its own file.
std::unique_ptr<Exporter> make_gbench_exporter();
std::unique_ptr<Exporter> make_bmf_exporter();
std::unique_ptr<Exporter> make_github_action_exporter();

const std::vector<std::unique_ptr<Exporter>>& exporters() {
  static const std::vector<std::unique_ptr<Exporter>> table = [] {
    std::vector<std::unique_ptr<Exporter>> t;
    t.push_back(make_gbench_exporter());
    t.push_back(make_bmf_exporter());
    t.push_back(make_github_action_exporter());
    return t;
  }();
  return table;
}

const Exporter* find_exporter(const std::string& name) {
  for (const auto& e : exporters())
    if (e->name() == name) return e.get();
  return nullptr;
}

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

}  // namespace

std::optional<std::string> not_exportable(const PointRecord& point) {
  if (point.status != Status::ok) return std::string(to_string(point.status)) + ": " + point.reason.value_or("");
  if (point.integrity)
    if (auto finding = integrity_finding(*point.integrity)) return finding;
  if (!point.timing || !std::isfinite(point.timing->time_s)) return std::string("no time");
  return std::nullopt;
}

const TimeSummary* primary_summary(const PointRecord& point) {
  if (!point.timing) return nullptr;
  if (point.timing->device) return &*point.timing->device;
  if (point.timing->wall) return &*point.timing->wall;
  return nullptr;
}

double to_ns(double seconds) { return seconds * 1e9; }

}  // namespace labrun
