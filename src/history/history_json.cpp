// labrun history's JSON (`--format json`; to_json(HistoryResult), history.hpp) as an Output; the report folder's
// history.json too.
#include "history.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "history.hpp"
#include "format.hpp"
#include "output_file.hpp"
#include "spawn.hpp"

#include "history_text.hpp"
#include "output.hpp"

namespace labrun {
namespace {

using namespace history_text;
namespace fs = std::filesystem;

/// The full sha of commit `c`, as the JSON names commits.
const std::string& commit_sha(const HistoryResult& h, std::size_t c) { return h.commits[c].sha; }

Json real_or_null(const std::optional<double>& v) { return v ? json_real(*v) : Json(nullptr); }

Json commits_json(const HistoryResult& h) {
  Json commits = Json::array();
  for (std::size_t i = 0; i < h.commits.size(); ++i) {
    const HistoryCommit& c = h.commits[i];
    Json env = Json::object();
    for (const auto& [k, v] : c.environment) env[k] = v.empty() ? Json(nullptr) : Json(v);
    commits.push_back(Json{{"index", i},
                           {"sha", c.sha},
                           {"subject", c.subject.empty() ? Json(nullptr) : Json(c.subject)},
                           {"created_utc", c.created_utc},
                           {"files", c.files},
                           {"environment", env},
                           {"test_aids", c.test_aids},
                           {"dirty", c.dirty},
                           {"segment", c.segment},
                           {"project", c.project},
                           {"tool", c.tool}});
  }
  return commits;
}

/// One group of the JSON's "groups": its commits as shas, labels, bound classes, points and sizes.
Json group_json(const HistoryResult& h, const HistoryGroup& g) {
  Json bounds = Json::object();
  for (const auto& [b, n] : g.bounds) bounds[b] = n;
  Json points = Json::array();
  for (std::size_t i : g.steps) points.push_back(h.series[h.steps[i].series].id);
  return Json{{"kind", to_string(g.kind)},
              {"before", commit_sha(h, g.before)},
              {"after", commit_sha(h, g.after)},
              {"start", commit_sha(h, g.start)},
              {"slower", g.slower},
              {"environment", g.environment},
              {"tool", g.tool},
              {"bound", g.bound},
              {"bounds", bounds},
              {"points", points},
              {"median_ratio", json_real(g.median_ratio)},
              {"min_ratio", json_real(g.min_ratio)},
              {"max_ratio", json_real(g.max_ratio)},
              {"steps", g.steps}};
}

/// `text` as JSON, null when empty.
Json text_or_null(const std::string& text) { return text.empty() ? Json(nullptr) : Json(text); }

/// One step of the JSON's "steps": its point, commits as shas, size with interval and p/q, and labels.
Json step_json(const HistoryResult& h, const HistoryStep& s) {
  const HistorySeries& se = h.series[s.series];
  return Json{{"id", se.id},
              {"key", se.key},
              {"bound", se.bound},
              {"kind", to_string(s.kind)},
              {"before", commit_sha(h, s.before)},
              {"after", commit_sha(h, s.after)},
              {"start", commit_sha(h, s.start)},
              {"ratio", json_real(s.ratio)},
              {"ci_low", json_real(s.ci_low)},
              {"ci_high", json_real(s.ci_high)},
              {"p_value", json_real(s.p_value)},
              {"q_value", json_real(s.q_value)},
              {"environment", s.environment},
              {"environment_reason", text_or_null(s.environment_reason)},
              {"normalized_ratio", real_or_null(s.normalized_ratio)},
              {"normalized_p", real_or_null(s.normalized_p)},
              {"normalized_by", text_or_null(s.normalized_by)},
              {"test_aid", text_or_null(s.test_aid)},
              {"instance_change", text_or_null(s.instance_change)},
              {"tool", s.tool},
              {"tool_change", text_or_null(s.tool_change)}};
}

/// The "status_changes" array of the JSON: each point's status change with its commits as shas.
Json status_changes_json(const HistoryResult& h) {
  Json changes = Json::array();
  for (const auto& c : h.status_changes)
    changes.push_back(Json{{"id", h.series[c.series].id},
                           {"key", h.series[c.series].key},
                           {"before", commit_sha(h, c.before)},
                           {"after", commit_sha(h, c.after)},
                           {"from", to_string(c.from)},
                           {"to", to_string(c.to)}});
  return changes;
}

/// The "summary" object of the JSON: counts of commits, points, candidates, steps and groups, and of the steps by
/// label (slower and faster count neither environment nor tool steps).
Json summary_json(const HistoryResult& h) {
  std::size_t slower = 0, faster = 0, environment = 0, tool = 0;
  for (const HistoryStep& s : h.steps) {
    slower += !s.environment && !s.tool && s.ratio > 1;
    faster += !s.environment && !s.tool && s.ratio < 1;
    environment += s.environment;
    tool += s.tool;
  }
  return Json{{"commits", h.commits.size()},
              {"points", h.series.size()},
              {"candidates", h.candidates},
              {"steps", h.steps.size()},
              {"groups", h.groups.size()},
              {"slower", slower},
              {"faster", faster},
              {"environment", environment},
              {"tool", tool},
              {"small_shifts", h.small_shifts}};
}

/// The "series" array of the JSON (for the plots): the runs of every point that has a step.
Json series_json(const HistoryResult& h) {
  Json series = Json::array();
  std::vector<bool> stepped(h.series.size(), false);
  for (const HistoryStep& s : h.steps) stepped[s.series] = true;
  for (std::size_t i = 0; i < h.series.size(); ++i) {
    if (!stepped[i]) continue;
    Json runs = Json::array();
    for (const HistoryRun& r : h.series[i].runs)
      runs.push_back(Json{{"commit", r.commit},
                          {"status", r.status ? to_string(*r.status) : ""},
                          {"time_s", json_real(r.time_s)},
                          {"ci_low_s", json_real(r.ci_low_s)},
                          {"ci_high_s", json_real(r.ci_high_s)},
                          {"processes", r.process_s.size()}});
    series.push_back(Json{
        {"index", i}, {"id", h.series[i].id}, {"key", h.series[i].key}, {"bound", h.series[i].bound}, {"runs", runs}});
  }
  return series;
}

class HistoryJson final : public Output {
 public:
  void history(const HistoryResult& result, std::ostream& out) override { out << to_json(result).dump(2) << "\n"; }
};

}  // namespace

Json to_json(const HistoryResult& h, bool with_series) {
  Json groups = Json::array();
  for (const HistoryGroup& g : h.groups) groups.push_back(group_json(h, g));
  Json steps = Json::array();
  for (const HistoryStep& s : h.steps) steps.push_back(step_json(h, s));
  Json out{{"type", "history"},
           {"schema_version", 1},
           {"options",
            {{"min_effect", json_real(h.options.min_effect)},
             {"alpha", json_real(h.options.alpha)},
             {"alpha_history", json_real(h.options.alpha_history)},
             {"max_drift_commits", h.options.max_drift_commits},
             {"fail_on_newest", to_string(h.options.fail_on)}}},
           {"commits", commits_json(h)},
           {"notes", h.notes},
           {"warnings", h.warnings},
           {"noise_floor", json_real(h.noise_floor)},
           {"groups", groups},
           {"steps", steps},
           {"status_changes", status_changes_json(h)},
           {"summary", summary_json(h)},
           {"newest", {{"sha", h.commits.back().sha}, {"groups", h.newest}, {"fail", h.fail}}}};
  if (with_series) out["series"] = series_json(h);
  return out;
}

std::unique_ptr<Output> make_history_json_output() { return std::make_unique<HistoryJson>(); }

}  // namespace labrun
