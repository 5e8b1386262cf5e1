// labrun history, the renderings: JSON, the aligned table, markdown for an issue, the --bisect text and the report
// folder with its plots (scripts/plot_history.py). Nothing here decides anything: history.cpp does.
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

namespace labrun {
namespace {

namespace fs = std::filesystem;

std::string short_sha(const std::string& sha) { return sha.substr(0, 10); }

std::string percent(double ratio) { return fmt::format("{:+.1f}%", 100 * (ratio - 1)); }

Json real_or_null(const std::optional<double>& v) { return v ? json_real(*v) : Json(nullptr); }

std::string label(const HistoryGroup& g) {
  std::string out = g.environment ? "environment" : g.tool ? "tool" : g.slower ? "slower" : "faster";
  if (g.kind == StepKind::drift) out += " (drift)";
  return out;
}

/// "a1b2c3d4e5" or, for a drift, "a1b2c3d4e5..f6a7b8c9d0 (drift over 5 commits)".
std::string where(const HistoryResult& h, std::size_t before, std::size_t start, std::size_t after) {
  std::string out = short_sha(h.commits[before].sha) + ".." + short_sha(h.commits[after].sha);
  if (start != after) out += fmt::format(" (drift from {})", short_sha(h.commits[start].sha));
  return out;
}

std::string group_size(const HistoryGroup& g) {
  if (g.steps.size() == 1) return percent(g.median_ratio);
  return fmt::format("{} (points {}..{})", percent(g.median_ratio), percent(g.min_ratio), percent(g.max_ratio));
}

std::string group_bound(const HistoryGroup& g) {
  if (g.bounds.size() == 1) return g.bound;
  std::string out = "mixed:";
  for (const auto& [b, n] : g.bounds) out += fmt::format(" {} {}", b, n);
  return out;
}

/// A group's points by key, at most four, then how many more ("4 points, bound unknown" named none).
std::string group_points(const HistoryResult& h, const HistoryGroup& g) {
  std::string named;
  for (std::size_t i = 0; i < g.steps.size() && i < 4; ++i)
    named += (i ? ", " : "") + h.series[h.steps[g.steps[i]].series].key;
  if (g.steps.size() > 4) named += fmt::format(" and {} more", g.steps.size() - 4);
  return named;
}

/// One line of a group: "all 60 launch-bound points +10.1% at a1b2c3d4e5 (last before 0f1e2d3c4b)".
std::string group_sentence(const HistoryResult& h, const HistoryGroup& g) {
  const std::size_t n = g.steps.size();
  const std::string who = n == 1 ? "point " + h.series[h.steps[g.steps.front()].series].key
                                 : fmt::format("{} {}points ({})", n, g.bounds.size() == 1 ? g.bound + "-bound " : "",
                                               group_points(h, g));
  std::string what = g.kind == StepKind::drift
                         ? fmt::format("drifted {} over {}..{}, complete by {}", group_size(g),
                                       short_sha(h.commits[g.start].sha), short_sha(h.commits[g.after].sha),
                                       short_sha(h.commits[g.after].sha))
                         : fmt::format("{} at {} (last commit before: {})", group_size(g),
                                       short_sha(h.commits[g.after].sha), short_sha(h.commits[g.before].sha));
  return who + " " + what + (g.environment ? " — environment" : g.tool ? " — tool (labrun changed)" : "");
}

std::string axes_only(const HistorySeries& s) {
  std::string out = "variant=" + s.variant;
  for (const auto& [name, value] : s.axes.items())
    out += "," + name + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  return out;
}

/// The full sha of commit `c`, as the JSON names commits.
const std::string& commit_sha(const HistoryResult& h, std::size_t c) { return h.commits[c].sha; }

/// The "commits" array of the JSON: each commit's index, sha, files, environment (null where unknown) and labels.
Json commits_json(const HistoryResult& h) {
  Json commits = Json::array();
  for (std::size_t i = 0; i < h.commits.size(); ++i) {
    const HistoryCommit& c = h.commits[i];
    Json env = Json::object();
    for (const auto& [k, v] : c.environment) env[k] = v.empty() ? Json(nullptr) : Json(v);
    commits.push_back(Json{{"index", i},
                           {"sha", c.sha},
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

namespace {

std::string history_table_unescaped(const HistoryResult& h) {
  std::ostringstream out;
  out << fmt::format("labrun history: {} commits ({}..{}), {} points, {} step(s) in {} group(s)\n", h.commits.size(),
                     short_sha(h.commits.front().sha), short_sha(h.commits.back().sha), h.series.size(), h.steps.size(),
                     h.groups.size());
  for (const auto& n : h.notes) out << "note: " << n << "\n";
  for (const auto& w : h.warnings) out << "warning: " << w << "\n";
  if (!h.groups.empty()) {
    out << fmt::format("{:<46} {:>6}  {:<18} {:<28} {}\n", "commits (last before..first after)", "points", "bound",
                       "change (median, range)", "label");
    for (const HistoryGroup& g : h.groups)
      out << fmt::format("{:<46} {:>6}  {:<18} {:<28} {}\n    {}\n", where(h, g.before, g.start, g.after),
                         g.steps.size(), group_bound(g), group_size(g), label(g), group_points(h, g));
  }
  for (const auto& c : h.status_changes)
    out << fmt::format("status: {} {} -> {} at {}\n", h.series[c.series].key, to_string(c.from), to_string(c.to),
                       short_sha(h.commits[c.after].sha));
  out << fmt::format(
      "noise floor {:.2f}% (median sd of log process medians); {} significant shift(s) below the {:g}% "
      "minimum effect not reported\n",
      100 * h.noise_floor, h.small_shifts, 100 * h.options.min_effect);
  if (h.newest.empty()) out << fmt::format("newest commit {}: no step\n", short_sha(h.commits.back().sha));
  else
    out << fmt::format("newest commit {}: {} group(s) with a step{}\n", short_sha(h.commits.back().sha),
                       h.newest.size(),
                       h.fail ? fmt::format(" (fail: --fail-on-newest {})", to_string(h.options.fail_on)) : "");
  return out.str();
}

}  // namespace

// Case H10: keys, reasons and file names come from files anyone can edit; shown escaped (printable).
std::string history_table(const HistoryResult& h) { return printable(history_table_unescaped(h), true); }

namespace {

std::string history_markdown_unescaped(const HistoryResult& h, const std::vector<std::string>& plots) {
  std::ostringstream md;
  const std::string newest = short_sha(h.commits.back().sha);
  if (h.fail) md << "## :red_circle: labrun history: a step at the newest commit " << newest << "\n\n";
  else if (!h.newest.empty())
    md << "## :large_orange_diamond: labrun history: a change at the newest commit " << newest << " (not failing)\n\n";
  else md << "## :white_check_mark: labrun history: no step at the newest commit " << newest << "\n\n";
  md << fmt::format(
      "{} commits ({}..{}), {} points: **{} step(s)** in **{} group(s)**; minimum effect {:g}%, false "
      "discovery rate {:g}, per-history false alarm rate {:g}, noise floor {:.2f}%.\n\n",
      h.commits.size(), short_sha(h.commits.front().sha), newest, h.series.size(), h.steps.size(), h.groups.size(),
      100 * h.options.min_effect, h.options.alpha, h.options.alpha_history, 100 * h.noise_floor);
  if (!h.notes.empty()) {
    md << "> [!NOTE]\n";
    for (const auto& n : h.notes) md << "> " << n << "\n";
    md << "\n";
  }
  if (!h.warnings.empty()) {
    md << "> [!WARNING]\n";
    for (const auto& w : h.warnings) md << "> " << w << "\n";
    md << "\n";
  }
  if (!h.groups.empty()) {
    md << "| # | commits (last before..first after) | points | bound | change (median, range) | label |\n"
          "|---|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < h.groups.size(); ++i) {
      const HistoryGroup& g = h.groups[i];
      md << fmt::format("| {} | `{}` | {} | {} | {} | {} |\n", i + 1, where(h, g.before, g.start, g.after),
                        g.steps.size(), group_bound(g), group_size(g), label(g));
    }
    md << "\n";
    for (std::size_t i = 0; i < h.groups.size(); ++i) {
      const HistoryGroup& g = h.groups[i];
      md << fmt::format("### {}. {}\n\n", i + 1, group_sentence(h, g));
      if (i < plots.size() && !plots[i].empty()) md << fmt::format("![group {}]({})\n\n", i + 1, plots[i]);
      md << "<details><summary>" << g.steps.size() << " point(s)</summary>\n\n"
         << "| point | bound | change | interval | q | normalised | why environment or tool "
            "|\n|---|---|---|---|---|---|---|\n";
      for (std::size_t k : g.steps) {
        const HistoryStep& s = h.steps[k];
        const HistorySeries& se = h.series[s.series];
        md << fmt::format("| `{}` | {} | {} | [{}, {}] | {:.2g} | {} | {} |\n", se.key, se.bound, percent(s.ratio),
                          percent(s.ci_low), percent(s.ci_high), s.q_value,
                          s.normalized_ratio ? percent(*s.normalized_ratio) + " (" + s.normalized_by + ")" : "-",
                          !s.environment_reason.empty() ? s.environment_reason
                          : !s.tool_change.empty()      ? "labrun: " + s.tool_change
                                                        : "-");
      }
      md << "\n</details>\n\n";
    }
  }
  if (!h.status_changes.empty()) {
    md << "<details><summary>" << h.status_changes.size()
       << " status change(s)</summary>\n\n| point | from | to | at |\n|---|---|---|---|\n";
    for (const auto& c : h.status_changes)
      md << fmt::format("| `{}` | {} | {} | `{}` |\n", h.series[c.series].key, to_string(c.from), to_string(c.to),
                        short_sha(h.commits[c.after].sha));
    md << "\n</details>\n\n";
  }
  md << "<sub>labrun history (docs/history.md): binary segmentation of each point's log process medians, "
        "Benjamini–Hochberg over the points, "
     << h.small_shifts << " significant shift(s) below the minimum effect not shown.</sub>\n";
  return md.str();
}

}  // namespace

// Case H10: keys, reasons and file names come from files anyone can edit; shown escaped (printable).
std::string history_markdown(const HistoryResult& h, const std::vector<std::string>& plots) {
  return printable(history_markdown_unescaped(h, plots), true);
}

namespace {

std::string history_bisect_unescaped(const HistoryResult& h, const std::string& point,
                                     const std::vector<std::string>* rev_list) {
  const HistorySeries* s = find_series(h, point);
  if (s == nullptr) throw std::invalid_argument("--bisect: no point has the id or key '" + point + "'");
  const std::size_t index = static_cast<std::size_t>(s - h.series.data());
  std::ostringstream out;
  std::size_t found = 0;
  for (const HistoryStep& st : h.steps) {
    if (st.series != index) continue;
    ++found;
    const std::string before = h.commits[st.before].sha, after = h.commits[st.after].sha;
    out << fmt::format("{} {}: {} {} [{}, {}] between {} (last commit before) and {} (first commit after){}\n", s->key,
                       s->id, to_string(st.kind), percent(st.ratio), percent(st.ci_low), percent(st.ci_high),
                       short_sha(before), short_sha(after),
                       st.environment ? " — environment"
                       : st.tool      ? " — tool (labrun changed)"
                                      : "");
    if (rev_list != nullptr) {
      const auto pa = std::find(rev_list->begin(), rev_list->end(), after);
      const auto pb = std::find(rev_list->begin(), rev_list->end(), before);
      if (pa != rev_list->end() && pb != rev_list->end() && pa < pb) {
        std::vector<std::string> between(pa + 1, pb);
        std::reverse(between.begin(), between.end());
        if (between.empty()) {
          out << "  no commit in between: the step is pinned to " << short_sha(after) << "\n";
        } else {
          out << fmt::format("  {} commit(s) still to test (oldest first):", between.size());
          for (std::size_t i = 0; i < between.size() && i < 20; ++i) out << " " << short_sha(between[i]);
          if (between.size() > 20) out << " ...";
          out << "\n";
          out << fmt::format("  git bisect start {} {}\n", after, before);
        }
      }
    } else {
      out << "  (give --repo DIR to list the commits still to test)\n";
    }
    const std::string config = h.commits[st.after].config_path.empty() ? "CONFIG" : h.commits[st.after].config_path;
    out << fmt::format(
        "  at each: labrun sweep {} --only \"{}\" -o history-bisect-$(git rev-parse --short HEAD).jsonl\n", config,
        axes_only(*s));
  }
  if (found == 0)
    out << fmt::format("{} {}: no step over {} commits: nothing to bisect\n", s->key, s->id, h.commits.size());
  return out.str();
}

}  // namespace

// Case H10: keys, reasons and file names come from files anyone can edit; shown escaped (printable).
std::string history_bisect(const HistoryResult& h, const std::string& point, const std::vector<std::string>* rev_list) {
  return printable(history_bisect_unescaped(h, point, rev_list), true);
}

void write_history_report(const HistoryResult& h, const std::string& dir, const std::string& script_given,
                          std::size_t max_plots, std::ostream& err) {
  std::error_code ec;
  fs::create_directories(fs::path(dir) / "plots", ec);
  if (ec) throw OutputError("cannot create " + dir + "/plots: " + ec.message());
  const fs::path data = fs::path(dir) / "history.json";
  {
    Json j = to_json(h, true);
    j["max_plots"] = max_plots;
    std::ofstream f = open_for_write(data);
    f << j.dump(1) << "\n";
    close_or_throw(f, data);
  }
  std::vector<std::string> plots(h.groups.size());
  if (!h.groups.empty()) {
    const std::string script = find_script(script_given, "plot_history.py");
    std::string python;
    if (script.empty()) {
      err << "labrun history: warning: scripts/plot_history.py not found; no plots\n";
    } else {
      python = python_with_matplotlib();
      if (python.empty())
        err << "labrun history: warning: python3 with matplotlib not available (Debian: python3-matplotlib); no "
               "plots\n";
    }
    if (!python.empty()) {
      SpawnOptions logged;
      const fs::path log = fs::path(dir) / "plot.log";
      logged.output = log.string();
      const int rc = run_process({python, script, dir}, logged);
      if (rc != 0) {
        err << "labrun history: warning: plotting failed (exit status " << rc << "); see " << log.string() << "\n";
      } else {
        fs::remove(log, ec);
        for (std::size_t i = 0; i < h.groups.size(); ++i) {
          const std::string name = fmt::format("plots/group_{}.png", i + 1);
          if (fs::exists(fs::path(dir) / name, ec)) plots[i] = name;
        }
      }
    }
  }
  const fs::path md = fs::path(dir) / "history.md";
  std::ofstream f = open_for_write(md);
  f << history_markdown(h, plots);
  if (std::none_of(plots.begin(), plots.end(), [](const std::string& p) { return !p.empty(); }) && !h.groups.empty())
    f << "\nNo plots were drawn (python3 with matplotlib was not available, or plotting failed).\n";
  close_or_throw(f, md);
}

const Renderings<HistoryResult>& history_renderings() {
  static const Renderings<HistoryResult> table({
      {"table", [](const HistoryResult& h) { return history_table(h); }},
      {"markdown", [](const HistoryResult& h) { return history_markdown(h); }},
      {"json", [](const HistoryResult& h) { return to_json(h).dump(2) + "\n"; }},
  });
  return table;
}

}  // namespace labrun
