// labrun diff's JSON (`--format json`, to_json(DiffResult), diff.hpp) as an Output.
#include "diff.hpp"

#include "diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format.hpp"
#include "interpret.hpp"  // format_time, display_width
#include "record.hpp"

#include "output.hpp"

namespace labrun {
namespace {

/// A number for JSON output: json_real, or null when there is none.
Json optional_real(std::optional<double> v) { return v ? json_real(*v) : Json(); }

Json optional_text(const std::optional<std::string>& v) { return v ? Json(*v) : Json(); }

Json to_json(const DiffEnvironmentSide& e) {
  Json j = Json::object();
  for (const auto& [name, value] : e.text) j[name] = optional_text(value);
  for (const auto& [name, value] : e.numbers) j[name] = optional_real(value);
  return j;
}

Json to_json(const DiffResult::HostSide& h) {
  const auto text = [](const std::string& t) { return t.empty() ? Json() : Json(t); };
  return {{"cpu_model", text(h.cpu_model)},
          {"sync_wait", text(h.sync_wait)},
          {"load_average_1m", std::isfinite(h.load_average_1m) ? json_real(h.load_average_1m) : Json()}};
}

Json to_json(const DiffPoint& p) {
  Json host = nullptr;
  if (p.host_adjusted)
    host = {{"per_probe_ratio", json_real(p.host_adjusted->per_probe.ratio)},
            {"per_probe_p", json_real(p.host_adjusted->per_probe.p_value)},
            {"elasticity", json_real(p.host_adjusted->elasticity)},
            {"covariate_ratio", json_real(p.host_adjusted->covariate.ratio)},
            {"covariate_p", json_real(p.host_adjusted->covariate.p_value)},
            {"probe_ratio", json_real(p.host_adjusted->probe_ratio)},
            {"slope", json_real(p.host_adjusted->slope)},
            {"slope_se", json_real(p.host_adjusted->slope_se)},
            {"adjusted_ratio", json_real(p.host_adjusted->adjusted_ratio)},
            {"adjusted_log_se", json_real(p.host_adjusted->adjusted_log_se)},
            {"adjusted_df", json_real(p.host_adjusted->adjusted_df)},
            {"probes_overlap", p.host_adjusted->probes_overlap},
            {"launch_ratio", json_real(p.host_adjusted->launch_ratio)},
            {"launch_moved", p.host_adjusted->launch_moved}};
  const auto count = [](std::optional<std::size_t> v) { return v ? Json(*v) : Json(); };
  return Json{{"id", p.id},
              {"key", p.key},
              {"variant", p.variant},
              {"axes", p.axes},
              {"base_status", to_string(p.base_status)},
              {"new_status", to_string(p.new_status)},
              {"verdict", to_string(p.verdict)},
              {"reason", optional_text(p.reason)},
              {"ratio", p.ratio ? json_real(p.ratio->ratio) : Json()},
              {"ratio_ci_low", p.ratio ? json_real(p.ratio->ci_low) : Json()},
              {"ratio_ci_high", p.ratio ? json_real(p.ratio->ci_high) : Json()},
              {"p_value", optional_real(p.p_value)},
              {"p_adjusted", optional_real(p.p_adjusted)},
              {"base_median_s", optional_real(p.base_median_s)},
              {"new_median_s", optional_real(p.new_median_s)},
              {"base_n", count(p.base_samples)},
              {"new_n", count(p.new_samples)},
              {"host_sensitive", p.host_sensitive},
              {"shared", p.shared},
              {"process_p", p.process ? json_real(p.process->p_value) : Json()},
              {"process_ratio", p.process ? json_real(p.process->ratio) : Json()},
              {"process_ratio_ci_low", p.process_interval ? json_real(p.process_interval->ci_low) : Json()},
              {"process_ratio_ci_high", p.process_interval ? json_real(p.process_interval->ci_high) : Json()},
              {"process_p_adjusted", optional_real(p.process_p_adjusted)},
              {"normalized_by", p.normalized ? Json(p.normalized_by) : Json()},
              {"normalized_ratio", p.normalized ? json_real(p.normalized->ratio) : Json()},
              {"normalized_elasticity", p.normalized ? json_real(p.normalized_elasticity) : Json()},
              {"normalized_ratio_ci_low", p.normalized_interval ? json_real(p.normalized_interval->ci_low) : Json()},
              {"normalized_ratio_ci_high", p.normalized_interval ? json_real(p.normalized_interval->ci_high) : Json()},
              {"base_processes", p.process ? Json(p.process_counts.first) : Json()},
              {"new_processes", p.process ? Json(p.process_counts.second) : Json()},
              {"host_adjusted", std::move(host)},
              {"gate", p.gate ? Json(to_string(*p.gate)) : Json()}};
}

Json to_json(const std::vector<DiffPointStub>& stubs) {
  Json j = Json::array();
  for (const auto& s : stubs) j.push_back(Json{{"id", s.id}, {"key", s.key}, {"status", to_string(s.status)}});
  return j;
}

class DiffJson final : public Output {
 public:
  void diff(const DiffResult& result, std::ostream& out) override { out << to_json(result).dump(2) << "\n"; }
};

}  // namespace

Json to_json(const DiffResult& diff) {
  Json points = Json::array(), status_changes = Json::array(), warnings = Json::array();
  for (const auto& p : diff.points) points.push_back(to_json(p));
  for (const auto& c : diff.status_changes)
    status_changes.push_back(Json{{"id", c.id},
                                  {"key", c.key},
                                  {"base_status", to_string(c.base_status)},
                                  {"new_status", to_string(c.new_status)},
                                  {"reason", optional_text(c.reason)}});
  for (const auto& w : diff.warnings) warnings.push_back(w);
  const DiffSummary& s = diff.summary;
  const Json summary{{"matched", s.matched},
                     {"compared", s.compared},
                     {"same", s.same},
                     {"slower", s.slower},
                     {"faster", s.faster},
                     {"inconclusive", s.inconclusive},
                     {"status_changed", s.status_changed},
                     {"not_compared", s.not_compared},
                     {"new", s.added},
                     {"missing", s.missing},
                     {"host_sensitive_changes", s.host_sensitive_changes},
                     {"shared", s.shared}};
  const Json noise{{"assumed_rel", json_real(diff.noise.assumed_rel)},
                   {"measured_points", diff.noise.measured_points},
                   {"median_rel", json_real(diff.noise.median_rel)},
                   {"p90_rel", json_real(diff.noise.p90_rel)}};
  const DiffOptions& o = diff.options;
  return Json{{"type", "diff"},
              {"schema_version", 1},
              {"options",
               {{"min_effect", o.min_effect},
                {"alpha", o.alpha},
                {"confidence", 1 - o.alpha},
                {"normalize", o.normalize},
                {"allow_shared", o.allow_shared},
                {"fail_on", to_string(o.fail_on)}}},
              {"environment",
               {{"warnings", std::move(warnings)},
                {"base", to_json(diff.base_environment)},
                {"new", to_json(diff.new_environment)}}},
              {"points", std::move(points)},
              {"new", to_json(diff.added)},
              {"missing", to_json(diff.missing)},
              {"status_changes", std::move(status_changes)},
              {"summary", summary},
              {"noise", noise},
              {"hosts",
               {{"probe_ratio", diff.host_probe_ratio ? json_real(*diff.host_probe_ratio) : Json()},
                {"probed_points", diff.host_probed_points},
                {"differ_points", diff.hosts_differ_points},
                {"base", to_json(diff.base_host)},
                {"new", to_json(diff.new_host)}}},
              {"regression", diff.regression}};
}

std::unique_ptr<Output> make_diff_json_output() { return std::make_unique<DiffJson>(); }

}  // namespace labrun
