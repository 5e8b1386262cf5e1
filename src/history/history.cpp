// labrun history, the model: builds each point's series over the commits from its process medians (as labrun diff
// reads them, diff.hpp), finds its steps by binary segmentation with the false discovery rate held over all points
// (one point's model: history_fit.hpp), fits drifts, labels environment changes and groups the steps of many points
// (docs/history.md).
#include "history.hpp"

#include <algorithm>
#include <filesystem>
#include <optional>
#include <functional>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "diff.hpp"
#include "history_fit.hpp"
#include "history_steps.hpp"
#include "lab_settings.hpp"
#include "merge.hpp"
#include "stats.hpp"
#include <labrun/status.hpp>

namespace labrun {
namespace {

// One point's model (observations, splits, shapes) is this file's vocabulary, with what history_groups.cpp shares.
using namespace history_fit;
using namespace history_detail;

/// The lab settings documented as test aids (src/config/lab_settings.hpp: "test aid: ..."): runs that differ only in
/// them are one series.
const char* const kTestAids[] = {"delay_s"};

/// The lab settings' defaults as a header writes them (to_json(LabSettings{})).
const Json& lab_defaults() {
  static const Json defaults = to_json(LabSettings{});
  return defaults;
}

bool is_test_aid(const std::string& key) {
  for (const char* aid : kTestAids)
    if (key == aid) return true;
  return false;
}

std::string join_distinct(const std::vector<std::string>& values) {
  std::vector<std::string> seen;
  for (const auto& v : values)
    if (!v.empty() && std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  std::string out;
  for (const auto& s : seen) out += (out.empty() ? "" : " | ") + s;
  return out;
}

std::string short_sha(const std::string& sha) { return sha.substr(0, 10); }

// ---- Building the series --------------------------------------------------------------------------------------------

struct EnvField {
  const char* name;
  const char* label;
  std::string (RunHeader::*read)() const;
  /// Another instance of the same kind (another card of the same model, another host): such a change alone is not
  /// an environment step when the step survives each run's calibrated ceiling taken out (a pool of GPUs hands
  /// every run another card; the ceilings measure that card).
  bool instance;
};
const EnvField kEnvFields[] = {
    {"gpu", "GPU", &RunHeader::device_name, false},
    {"gpu_uuid", "GPU uuid", &RunHeader::device_uuid, true},
    {"driver_version", "driver", &RunHeader::driver_version, false},
    {"runtime_version", "CUDA runtime", &RunHeader::runtime_version, false},
    {"build_type", "build type", &RunHeader::build_type, false},
    {"host", "host", &RunHeader::host_name, true},
};

/// Where two commits' environments differ, as "GPU uuid A -> B; driver X -> Y"; "" when they agree.
std::string environment_change(const HistoryCommit& a, const HistoryCommit& b) {
  std::string out;
  for (std::size_t i = 0; i < a.environment.size() && i < b.environment.size(); ++i)
    if (a.environment[i].second != b.environment[i].second)
      out += fmt::format("{}{} {} -> {}", out.empty() ? "" : "; ", kEnvFields[i].label,
                         a.environment[i].second.empty() ? "unknown" : a.environment[i].second,
                         b.environment[i].second.empty() ? "unknown" : b.environment[i].second);
  return out;
}

}  // namespace

SpanChange history_detail::span_change(const std::vector<HistoryCommit>& commits, std::size_t before,
                                       std::size_t after) {
  SpanChange out;
  for (std::size_t c = before + 1; c <= after; ++c) {
    const HistoryCommit &a = commits[c - 1], &b = commits[c];
    const std::string env = environment_change(a, b);
    if (env.empty()) continue;
    out.change += (out.change.empty() ? "" : "; ") + env;
    for (std::size_t i = 0; i < a.environment.size() && i < b.environment.size(); ++i)
      if (a.environment[i].second != b.environment[i].second && !kEnvFields[i].instance) out.instance_only = false;
  }
  return out;
}

namespace {

std::string test_aid_change(const HistoryCommit& a, const HistoryCommit& b) {
  std::string out;
  for (const char* aid : kTestAids) {
    const auto value = [&](const HistoryCommit& c) {
      const auto it = c.test_aids.find(aid);
      return it == c.test_aids.end() ? std::string("0") : it->dump();
    };
    if (value(a) != value(b)) out += fmt::format("{}lab.{} {} -> {}", out.empty() ? "" : "; ", aid, value(a), value(b));
  }
  return out;
}

/// labrun itself changed over a step's commits (before, after] while the code under test is another project:
/// "labrun 0.1.0 (abc) -> labrun 0.2.0 (def)" per change, "; "-joined; "" when it did not, or when the code under
/// test is labrun (then a new labrun commit is the code's change).
std::string tool_change(const std::vector<HistoryCommit>& commits, std::size_t before, std::size_t after) {
  std::string out;
  for (std::size_t c = before + 1; c <= after; ++c) {
    const HistoryCommit &a = commits[c - 1], &b = commits[c];
    if (a.project == "labrun" || b.project == "labrun" || a.tool == b.tool) continue;
    out += fmt::format("{}{} -> {}", out.empty() ? "" : "; ", a.tool, b.tool);
  }
  return out;
}

/// The commit's metadata from its runs' headers.
HistoryCommit describe_commit(const CommitRuns& c) {
  HistoryCommit h;
  h.sha = c.sha;
  std::vector<std::string> times;
  std::vector<std::vector<std::string>> env(std::size(kEnvFields));
  std::vector<std::string> tools;
  Json lab = Json::object();
  for (const Run& run : c.runs) {
    h.files.push_back(run.file);
    if (!run.has_header) continue;
    const RunHeader& hd = run.header;
    if (h.config_path.empty()) h.config_path = hd.config_path();
    if (!hd.created_utc().empty()) times.push_back(hd.created_utc());
    for (std::size_t i = 0; i < std::size(kEnvFields); ++i) env[i].push_back((hd.*kEnvFields[i].read)());
    for (const auto& [key, value] : hd.lab().items()) {
      if (is_test_aid(key)) {
        if (!(value.is_number() && value.get<double>() == 0)) h.test_aids[key] = value;
      } else if (const auto d = lab_defaults().find(key); d != lab_defaults().end() && *d != value) {
        // Only settings away from labrun's default split a series: a setting added later at its default (an
        // older header lacks it) or one labrun no longer has (nothing to compare it with) does not.
        lab[key] = value;
      }
    }
    h.dirty = h.dirty || hd.code_dirty().value_or(false);
    if (h.project.empty()) h.project = hd.code_project();
    const std::string sha = hd.git_sha();
    tools.push_back("labrun " + (hd.labrun_version().empty() ? std::string("?") : hd.labrun_version()) +
                    (sha.empty() ? "" : " (" + sha.substr(0, 12) + ")"));
  }
  h.tool = join_distinct(tools);
  std::sort(times.begin(), times.end());
  h.created_utc = times.empty() ? "" : times.front();
  for (std::size_t i = 0; i < std::size(kEnvFields); ++i)
    h.environment.emplace_back(kEnvFields[i].name, join_distinct(env[i]));
  h.lab = lab.dump();
  return h;
}

/// One point's records at one commit, pooled: status, process medians, ceilings as times.
void add_record(HistoryRun& run, const PointRecord& rec, const RunHeader* header, std::size_t& unusable) {
  if (!run.status || *run.status == Status::ok) run.status = rec.status;
  if (rec.status != Status::ok) return;
  std::vector<double> times;
  const ProcessData pd = read_processes(rec);
  if (pd.pooled && pd.problem.empty()) {
    times = pd.times;
  } else if (!pd.pooled) {
    const Samples s = read_samples(rec);
    if (s.problem.empty() && !s.seconds.empty()) times.push_back(median(s.seconds));
  }
  if (times.empty()) {
    ++unusable;
    return;
  }
  // The ceiling of the point's bound, per process where the header keeps it, else the run's, as a time.
  std::vector<double> ceiling;
  if (const auto c = ceiling_for(rec); c && header != nullptr) {
    ceiling = header->process_calibration(c->ceiling, c->key);
    if (ceiling.size() != times.size()) {
      ceiling.clear();
      const double v = header->calibration(c->ceiling, c->key);
      if (std::isfinite(v) && v > 0) ceiling.assign(times.size(), v);
    }
    if (c->rate)
      for (double& x : ceiling) x = 1 / x;
  }
  // A point without a ceiling at one of its records has none at this commit.
  const bool had = !run.process_s.empty();
  if (!had || !run.ceiling_s.empty()) {
    if (ceiling.empty()) run.ceiling_s.clear();
    else run.ceiling_s.insert(run.ceiling_s.end(), ceiling.begin(), ceiling.end());
  }
  run.process_s.insert(run.process_s.end(), times.begin(), times.end());
}

double sd_of_logs(const std::vector<double>& x) {
  if (x.size() < 2) return kNoValue;
  double m = 0, ss = 0;
  for (double t : x) m += std::log(t);
  m /= static_cast<double>(x.size());
  for (double t : x) ss += (std::log(t) - m) * (std::log(t) - m);
  return std::sqrt(ss / static_cast<double>(x.size() - 1));
}

/// The normalised step of a point across [a, s) | [e, b): each process's time with its ceiling taken out
/// (covariate_adjust over the two stretches), the level of each run again, and the two-sample t of the stretches.
/// Leaves the step's normalized_* empty when a run in the window has no ceiling.
void normalize_step(const HistorySeries& series, const PointFit& f, std::size_t a, std::size_t s, std::size_t e,
                    std::size_t b, const HistoryOptions& o, HistoryStep& step, const std::string& by) {
  std::vector<double> bt, bc, nt, nc;
  std::vector<std::size_t> counts;
  for (std::size_t j = a; j < b; ++j) {
    if (j >= s && j < e) continue;
    const HistoryRun& r = series.runs[f.obs[j].run];
    if (r.ceiling_s.size() != r.process_s.size() || r.ceiling_s.empty()) return;
    auto& t = j < s ? bt : nt;
    auto& c = j < s ? bc : nc;
    t.insert(t.end(), r.process_s.begin(), r.process_s.end());
    c.insert(c.end(), r.ceiling_s.begin(), r.ceiling_s.end());
    counts.push_back(r.process_s.size());
  }
  if (bt.size() < 2 || nt.size() < 2) return;
  CovariateAdjusted adj;
  try {
    adj = covariate_adjust(bt, bc, nt, nc);
  } catch (const std::invalid_argument&) {
    return;
  }
  std::vector<double> left, right;
  std::size_t at = 0, bi = 0, ni = 0;
  for (std::size_t j = a; j < b; ++j) {
    if (j >= s && j < e) continue;
    const std::size_t k = counts[at++];
    double m = 0;
    for (std::size_t i = 0; i < k; ++i) m += std::log(j < s ? adj.base[bi++] : adj.current[ni++]);
    (j < s ? left : right).push_back(m / static_cast<double>(k));
  }
  const auto mean = [](const std::vector<double>& v) {
    double m = 0;
    for (double x : v) m += x;
    return m / static_cast<double>(v.size());
  };
  const double ml = mean(left), mr = mean(right);
  double ss = 0;
  for (double x : left) ss += (x - ml) * (x - ml);
  for (double x : right) ss += (x - mr) * (x - mr);
  const double n = static_cast<double>(left.size() + right.size());
  double var = n > 2 ? ss / (n - 2) : 0, df = n - 2;
  if (var < f.vbar) {
    var = f.vbar;
    df = std::max(df, f.process_df);
  }
  step.normalized_by = by;
  step.normalized_ratio = std::exp(mr - ml);
  const double se = std::sqrt(var * (1 / static_cast<double>(left.size()) + 1 / static_cast<double>(right.size())));
  step.normalized_p = se > 0 && df >= 1 ? student_t_two_sided_p(std::fabs(mr - ml) / se, df) : 1.0;
  const double up = 1 + o.min_effect;
  const bool same_direction = (step.ratio > 1) == (*step.normalized_ratio > 1);
  const bool beyond = *step.normalized_ratio >= up || *step.normalized_ratio <= 1 / up;
  if (!(same_direction && beyond && *step.normalized_p <= o.alpha)) {
    step.environment = true;
    const std::string why = fmt::format(
        "with each process's calibrated {} taken out the step is {:+.1f}% (p {:.2g}): the machine moved", by,
        100 * (*step.normalized_ratio - 1), *step.normalized_p);
    step.environment_reason += (step.environment_reason.empty() ? "" : "; ") + why;
  }
}

void check_options(const HistoryOptions& o) {
  if (!(o.min_effect >= 0) || !std::isfinite(o.min_effect))
    throw std::invalid_argument(fmt::format("min effect must be a finite fraction >= 0, got {}", o.min_effect));
  if (!(o.alpha >= 1e-12 && o.alpha <= 0.5))
    throw std::invalid_argument(fmt::format("alpha must lie in [1e-12, 0.5] (e.g. 0.05 or 5%), got {}", o.alpha));
  if (!(o.alpha_history > 0 && o.alpha_history <= o.alpha))
    throw std::invalid_argument(fmt::format("alpha_history must lie in (0, alpha], got {}", o.alpha_history));
}

}  // namespace

const char* to_string(HistoryOptions::FailOn fail_on) {
  return fail_on == HistoryOptions::FailOn::any ? "any" : "slower";
}

HistoryOptions::FailOn parse_history_fail_on(const std::string& text) {
  if (text == "slower") return HistoryOptions::FailOn::slower;
  if (text == "any") return HistoryOptions::FailOn::any;
  throw std::invalid_argument("--fail-on-newest: expected 'slower' or 'any', got '" + text + "'");
}

const char* to_string(StepKind kind) { return kind == StepKind::drift ? "drift" : "step"; }

namespace {

/// Throws when two runs give different values of `label` (`value_of`; empty values are skipped when `skip_empty`):
/// "FILE: LABEL V differs from W in FIRST_FILE: WHY". One experiment, one config, one code under test per history.
/// @throws std::invalid_argument as above.
void require_one(const std::vector<CommitRuns>& commits, const char* label, bool skip_empty, const char* why,
                 const std::function<std::string(const Run&)>& value_of) {
  std::optional<std::string> first;
  std::string first_file;
  for (const CommitRuns& c : commits)
    for (const Run& run : c.runs) {
      const std::string v = value_of(run);
      if (skip_empty && v.empty()) continue;
      if (!first) {
        first = v;
        first_file = run.file;
      } else if (v != *first) {
        throw std::invalid_argument(
            fmt::format("{}: {} {} differs from {} in {}: {}", run.file, label, v, *first, first_file, why));
      }
    }
}

// ---- history_results, step by step ----------------------------------------------------------------------------------

/// Checks the options and that the runs make one history: one experiment, one config, one code under test.
/// @throws std::invalid_argument as history_results().
void check_inputs(const std::vector<CommitRuns>& commits, const HistoryOptions& o) {
  check_options(o);
  if (commits.empty()) throw std::invalid_argument("no runs: a history needs at least one commit");

  // One experiment, one config (by file name: the same file's bytes may change between commits).
  require_one(commits, "experiment", true, "a history is of one config", [](const Run& run) {
    std::string e = run.header.experiment();
    if (e.empty() && !run.points.empty()) e = run.points.front().experiment;
    return e;
  });
  require_one(commits, "config", true, "a history is of one config at many commits (run history once per config)",
              [](const Run& run) {
    const std::string path = run.header.config_path();
    return path.empty() ? path : std::filesystem::path(path).filename().string();
  });

  // One code under test: commits of two projects have no order between them.
  require_one(commits, "code under test", false, "a history is of one repository (environment.code.project)",
              [](const Run& run) { return run.header.code_project(); });
}

/// Fills h.commits: each commit's metadata, its stretch of equal lab settings, and the warnings where the lab
/// settings, the machine or labrun changed from the commit before.
void describe_commits(const std::vector<CommitRuns>& commits, HistoryResult& h) {
  for (const CommitRuns& c : commits) h.commits.push_back(describe_commit(c));
  for (std::size_t i = 1; i < h.commits.size(); ++i) {
    HistoryCommit& cur = h.commits[i];
    const HistoryCommit& prev = h.commits[i - 1];
    cur.segment = prev.segment + (cur.lab != prev.lab);
    if (cur.lab != prev.lab)
      h.warnings.push_back(
          fmt::format("lab settings differ from commit {} on ({} -> {}): the series is split there, "
                      "no step is sought across it",
                      short_sha(cur.sha), prev.lab, cur.lab));
    if (const std::string env = environment_change(prev, cur); !env.empty())
      h.warnings.push_back(fmt::format("the machine changed at commit {}: {}", short_sha(cur.sha), env));
    if (const std::string tool = tool_change(h.commits, i - 1, i); !tool.empty())
      h.warnings.push_back(
          fmt::format("labrun changed at commit {} of {}: {}; a step there is labelled tool (the "
                      "measuring tool changed, not necessarily the code) and does not fail the "
                      "newest commit",
                      short_sha(cur.sha), cur.project, tool));
  }
}

/// Notes the commits that ran with a documented test aid (they stay in the one series, so the aid shows as a step).
void note_test_aids(HistoryResult& h) {
  std::vector<std::string> with;
  Json aids = Json::object();
  for (const auto& c : h.commits)
    if (!c.test_aids.empty()) {
      with.push_back(short_sha(c.sha));
      aids = c.test_aids;
    }
  if (with.empty()) return;
  std::string list;
  for (const auto& w : with) list += (list.empty() ? "" : ", ") + w;
  h.notes.push_back(
      fmt::format("{} of {} commits ran with a documented test aid ({}; e.g. lab.delay_s adds a spin kernel to every "
                  "iteration): history treats them as one series with the others, so the aid shows as a step: {}",
                  with.size(), h.commits.size(), aids.dump(), list));
}

/// Warns about commits built from a modified tree: their times may not be the commit's.
void warn_dirty_builds(HistoryResult& h) {
  std::size_t dirty = 0;
  for (const auto& c : h.commits) dirty += c.dirty;
  if (dirty > 0)
    h.warnings.push_back(
        fmt::format("{} commit(s) were built from a modified tree (git_dirty): their times may "
                    "not be the commit's",
                    dirty));
}

/// Fills h.series: every point's records, pooled per commit, in order of first appearance. Returns, per series,
/// the calibration its bound is normalised by ("" for none).
std::vector<std::string> gather_series(const std::vector<CommitRuns>& commits, HistoryResult& h) {
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::string> ceiling_by;
  std::size_t unusable = 0;
  for (std::size_t ci = 0; ci < commits.size(); ++ci)
    for (const Run& run : commits[ci].runs)
      for (const PointRecord& rec : run.points) {
        const auto [it, inserted] = index.try_emplace(rec.id, h.series.size());
        if (inserted) h.series.push_back({rec.id, rec.key, rec.variant, "", rec.axes, {}});
        HistorySeries& s = h.series[it->second];
        if (rec.interpretation && !rec.interpretation->bound.empty()) s.bound = rec.interpretation->bound;
        if (ceiling_by.size() < h.series.size()) ceiling_by.resize(h.series.size());
        if (const auto c = ceiling_for(rec)) ceiling_by[it->second] = std::string(c->ceiling) + "." + c->key;
        if (s.runs.empty() || s.runs.back().commit != ci) s.runs.push_back(HistoryRun{ci, std::nullopt, {}, {}});
        add_record(s.runs.back(), rec, &run.header, unusable);
      }
  if (unusable > 0)
    h.warnings.push_back(fmt::format(
        "{} ok record(s) had no usable time (a timing.processes block that cannot be "
        "used, samples that are not finite positive times, or no samples at all: nvbench's imported results "
        "and Google Benchmark's aggregates alone hold summaries, which history does not read) and are "
        "left out",
        unusable));
  return ceiling_by;
}

/// Sets one run's level from its process medians: the mean log, its variance (floored at `floor2`, the squared
/// noise floor) and, when pooled, the (1 - alpha) interval of its time.
void set_run_level(HistoryRun& r, double floor2, double alpha) {
  const double k = static_cast<double>(r.process_s.size());
  double m = 0;
  for (double t : r.process_s) m += std::log(t);
  m /= k;
  const double sd = sd_of_logs(r.process_s);
  r.log_time = m;
  r.log_var = std::max(std::isfinite(sd) ? sd * sd : 0.0, floor2) / k;
  r.time_s = std::exp(m);
  if (r.process_s.size() >= 2) {
    const double half = student_t_quantile_two_sided(alpha, k - 1) * std::sqrt(r.log_var);
    r.ci_low_s = std::exp(m - half);
    r.ci_high_s = std::exp(m + half);
  }
}

/// Sets h.noise_floor (the median sd of log process medians over the pooled point-commits) and each run's level;
/// warns about the point-commits run in one process.
void set_levels(HistoryResult& h) {
  std::vector<double> spreads;
  for (const auto& s : h.series)
    for (const auto& r : s.runs)
      if (const double sd = sd_of_logs(r.process_s); std::isfinite(sd)) spreads.push_back(sd);
  h.noise_floor = spreads.empty() ? kNoValue : median(spreads);
  const double floor2 = std::isfinite(h.noise_floor) ? h.noise_floor * h.noise_floor : 0.0;
  std::size_t unpooled = 0;
  for (auto& s : h.series)
    for (auto& r : s.runs) {
      if (r.process_s.empty()) continue;
      unpooled += r.process_s.size() < 2;
      set_run_level(r, floor2, h.options.alpha);
    }
  if (unpooled > 0)
    h.warnings.push_back(
        fmt::format("{} point-commit(s) were run in one process: their spread between runs is "
                    "estimated from the history alone (lab.processes: 3 or more makes it surer)",
                    unpooled));
}

/// Fills h.status_changes: each point's status differing between two consecutive commits where it has records.
void find_status_changes(HistoryResult& h) {
  for (std::size_t si = 0; si < h.series.size(); ++si) {
    const auto& runs = h.series[si].runs;
    for (std::size_t j = 1; j < runs.size(); ++j)
      if (runs[j].status != runs[j - 1].status)
        h.status_changes.push_back({si, runs[j - 1].commit, runs[j].commit, runs[j - 1].status.value_or(Status::ok),
                                    runs[j].status.value_or(Status::ok)});
  }
}

/// One fit per series: its usable runs as observations, the lab settings' boundaries, and the prior they share.
std::vector<PointFit> build_fits(const HistoryResult& h) {
  std::vector<PointFit> fits(h.series.size());
  for (std::size_t si = 0; si < h.series.size(); ++si) {
    PointFit& f = fits[si];
    const auto& runs = h.series[si].runs;
    double vsum = 0;
    for (std::size_t j = 0; j < runs.size(); ++j) {
      if (!std::isfinite(runs[j].log_time)) continue;
      Obs ob{runs[j].log_time,         runs[j].log_var,
             runs[j].process_s.size(), j,
             runs[j].commit,           h.commits[runs[j].commit].segment};
      if (!f.obs.empty() && f.obs.back().segment != ob.segment) f.forced.insert(f.obs.size());
      f.obs.push_back(ob);
      f.s1.push_back(f.s1.back() + ob.y);
      f.s2.push_back(f.s2.back() + ob.y * ob.y);
      vsum += ob.v;
      f.process_df += static_cast<double>(ob.k - 1);
    }
    f.vbar = f.obs.empty() ? 0 : vsum / static_cast<double>(f.obs.size());
  }

  const VariancePrior prior = variance_prior(fits);
  for (PointFit& f : fits) f.prior = prior;
  return fits;
}

// ---- The steps: each split measured and labelled --------------------------------------------------------------------

}  // namespace

void history_detail::relabel(const std::vector<HistoryCommit>& commits, HistoryStep& step,
                             const std::pair<bool, std::string>& normalized) {
  step.environment = false;
  step.environment_reason.clear();
  step.test_aid.clear();
  // A change of instance only (another card of the same model) counts when the step could not be taken out of
  // the machine (no ceiling for it in the headers); a step that survives the ceiling taken out is the code's.
  const bool survives_normalized = step.normalized_ratio.has_value() && !normalized.first;
  const SpanChange span = span_change(commits, step.before, step.after);
  step.instance_change.clear();
  if (!span.change.empty()) {
    if (survives_normalized && span.instance_only) {
      step.instance_change = span.change;
    } else {
      step.environment = true;
      step.environment_reason = span.change;
    }
  }
  for (std::size_t c = step.before + 1; c <= step.after; ++c) {
    if (const std::string aid = test_aid_change(commits[c - 1], commits[c]); !aid.empty())
      step.test_aid += (step.test_aid.empty() ? "" : "; ") + aid;
  }
  if (normalized.first) {
    step.environment = true;
    step.environment_reason += (step.environment_reason.empty() ? "" : "; ") + normalized.second;
  }
  step.tool_change = tool_change(commits, step.before, step.after);
  step.tool = !step.environment && !step.tool_change.empty();
}

namespace {

/// Measures each split of series `si` (its size and interval), counts those below min_effect in h.small_shifts
/// and adds the others to `found`, normalised by `ceiling_by` where it names a calibration, and labelled.
void measure_steps(std::size_t si, const PointFit& f, const std::string& ceiling_by, HistoryResult& h,
                   FoundSteps& found) {
  const HistoryOptions& o = h.options;
  const std::vector<std::size_t> b = f.bounds();
  const double model = f.model_ss(b);
  const auto var = run_variance(f, model, b.size() - 1);
  for (const auto& [at, info] : f.splits) {
    const auto pos = std::find(b.begin(), b.end(), at) - b.begin();
    const std::size_t prev = b[pos - 1], next = b[pos + 1];
    // One point's shape is a step: 1% a commit is not resolvable in one point's noise (a drift is fitted to a
    // group's mean shape, below).
    const Shape shape{at, at, false, 1};
    const std::size_t s = shape.drift ? shape.s : at, e = shape.drift ? shape.e : at;
    HistoryStep step;
    step.series = si;
    step.kind = shape.drift ? StepKind::drift : StepKind::step;
    step.before = f.obs[s - 1].commit;
    step.start = f.obs[s].commit;
    step.after = f.obs[e].commit;
    step.p_value = info.p_value;
    step.q_value = info.q_value;
    const double d = f.mean(e, next) - f.mean(prev, s);
    step.ratio = std::exp(d);
    if (var) {
      const double se = std::sqrt(var->first * (1 / static_cast<double>(next - e) + 1 / static_cast<double>(s - prev)));
      const double half = student_t_quantile_two_sided(o.alpha, var->second) * se;
      step.ci_low = std::exp(d - half);
      step.ci_high = std::exp(d + half);
    }
    const double up = 1 + o.min_effect;
    if (!(step.ratio >= up || step.ratio <= 1 / up)) {
      ++h.small_shifts;
      continue;
    }
    // The machine taken out, where the headers have the point's ceiling; then the environment label.
    HistoryStep probe = step;
    if (!ceiling_by.empty()) normalize_step(h.series[si], f, prev, s, e, next, o, probe, ceiling_by);
    step.normalized_ratio = probe.normalized_ratio;
    step.normalized_p = probe.normalized_p;
    step.normalized_by = probe.normalized_by;
    found.normalized_env.push_back({probe.environment, probe.environment_reason});
    relabel(h.commits, step, found.normalized_env.back());
    found.all.push_back(std::move(step));
    found.spans.push_back({prev, s, e, next});
  }
}

/// Each split moved to its best position between its neighbours, then measured, shaped and labelled.
FoundSteps find_steps(std::vector<PointFit>& fits, const std::vector<std::string>& ceiling_by, HistoryResult& h) {
  FoundSteps found;
  for (std::size_t si = 0; si < fits.size(); ++si) {
    PointFit& f = fits[si];
    if (f.splits.empty()) continue;
    move_splits(f);
    measure_steps(si, f, ceiling_by[si], h, found);
  }
  return found;
}

}  // namespace

// ---- history_results ------------------------------------------------------------------------------------------------

HistoryResult history_results(const std::vector<CommitRuns>& commits, const HistoryOptions& o) {
  check_inputs(commits, o);
  HistoryResult h;
  h.options = o;

  // Commits, their stretches of equal lab settings, the notes and warnings they call for.
  describe_commits(commits, h);
  note_test_aids(h);
  warn_dirty_builds(h);

  // The series: every point's records, pooled per commit; the noise floor and each run's level.
  const std::vector<std::string> ceiling_by = gather_series(commits, h);
  set_levels(h);
  find_status_changes(h);

  // The fits, and binary segmentation with the false discovery rate held over all points.
  std::vector<PointFit> fits = build_fits(h);
  std::set<std::size_t> passed;
  const double inflate = first_round(fits, o, h.candidates, passed);
  later_rounds(fits, o, inflate, std::move(passed));

  // The steps, their groups, and the verdict on the newest commit.
  FoundSteps found = find_steps(fits, ceiling_by, h);
  std::vector<HistoryGroup> groups = group_steps(h, fits, found);
  order_steps(found.all, std::move(groups), h);
  note_instance_steps(h);
  judge_newest(h);
  return h;
}

}  // namespace labrun
