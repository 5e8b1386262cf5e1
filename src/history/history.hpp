// labrun history: the runs of one config at many commits, ordered by the commit order of a git repository (or by
// their header time), searched point by point for the commit where a time stepped or drifted — with false alarms
// held down across the sweep's many points as labrun diff holds them (Benjamini-Hochberg), each step's size with
// its interval, steps of many points at one commit reported once with their common bound class, and steps where
// the machine changed labelled `environment`. Host code only; docs/history.md.
#pragma once

// Three parts: src/history/history.cpp builds the series and finds the steps (HistoryResult), with one point's
// model (its segmentation, the shape of a change) in src/history/history_fit.cpp; its outputs write one
// (src/history/history_{json,table,markdown}.cpp, the --bisect text in history_bisect.cpp, the report folder with its
// plots in history_report.cpp; their shared cells in history_text.hpp); src/commands/cmd_history.cpp is
// cmd_history, which loads the files, orders the commits (git rev-list) and picks the output from outputs(). The
// per-point process medians and the bound's calibrated ceiling are read as labrun diff reads them (diff.hpp).
#include <cstddef>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "output.hpp"
#include "point_record.hpp"
#include "record.hpp"

namespace labrun {

/// Settings of one history.
struct HistoryOptions {
  /// Smallest step reported, as a fraction of the time: a significant step is reported when its estimated
  /// ratio after/before is >= 1 + min_effect or <= 1 / (1 + min_effect). Smaller significant shifts still split
  /// the series (they are counted, not reported). >= 0. Default 2%: docs/history.md "Measured rates".
  double min_effect = 0.02;
  /// False discovery rate over the candidate steps of every point (Benjamini-Hochberg), and 1 - the confidence of
  /// the size intervals. In [1e-12, 0.5].
  double alpha = 0.05;
  /// The false alarm rate of one point's history: every split must also have its scan p-value (Bonferroni over
  /// the split positions) at or below this. In (0, alpha]. With BH alone a sweep where most points stepped (a new
  /// GPU) would test every other split at alpha itself.
  double alpha_history = 0.001;
  /// Longest drift sought, in commits (a ramp from the old level to the new); 0: steps only.
  std::size_t max_drift_commits = 8;
  /// What makes `fail` true (and cmd_history exit 1), for the newest commit only.
  enum class FailOn {
    slower,  ///< a step up (slower) at the newest commit that is not `environment`, or a status that became a failure
    any,     ///< any step at the newest commit (faster and environment too), or any status change there
  };
  FailOn fail_on = FailOn::slower;
};

/// "slower" or "any".
const char* to_string(HistoryOptions::FailOn fail_on);
/// Reads "slower" or "any". @throws std::invalid_argument naming the accepted words.
HistoryOptions::FailOn parse_history_fail_on(const std::string& text);

/// The runs of one commit (the shards of a sweep merged), as read.
struct CommitRuns {
  std::string sha;        ///< the runs' code under test: environment.code.git_sha (schema <= 2: environment.labrun's)
  std::vector<Run> runs;  ///< at least one, with a header
};

/// Groups runs by the commit of their code under test (RunHeader::code_sha: environment.code.git_sha, or
/// environment.labrun.git_sha in a header of schema <= 2) and orders the commits oldest first. With `rev_list` (the
/// output of `git rev-list --topo-order HEAD`: full shas, newest first) by that order; a header sha may be abbreviated
/// (a unique prefix of >= 7 hex digits). Without it by the earliest created_utc of each commit's runs (ISO 8601, so
/// text order is time order). Shards of one sweep at one commit are merged (merge_shard_runs).
/// @throws std::invalid_argument naming the file: a run without a header, without
/// a code sha (or with "unknown"), whose commit is not in `rev_list`, or (without `rev_list`) without
/// created_utc; ResultError from merging shards.
std::vector<CommitRuns> order_commits(std::vector<Run> runs, const std::vector<std::string>* rev_list);

/// One commit of the history.
struct HistoryCommit {
  std::string sha;
  std::string subject;             ///< the commit's subject line (git log %s) with --repo; "" without
  std::string created_utc;         ///< the earliest of its runs'
  std::vector<std::string> files;  ///< its runs' files, in order
  /// gpu, gpu_uuid, driver_version, runtime_version, build_type, host: distinct values over its runs, " | "-joined.
  std::vector<std::pair<std::string, std::string>> environment;
  std::string lab;                  ///< the lab settings without the test aids, as JSON text
  Json test_aids = Json::object();  ///< the documented test aids set (lab.delay_s != 0), as written
  bool dirty = false;               ///< a run's code was built from a modified tree (environment.code.git_dirty)
  std::string project;              ///< the code under test's project (environment.code.project; "labrun" before it)
  /// The tool that measured it: "labrun VERSION (sha12)" over its runs, " | "-joined when they differ. A change
  /// between two commits of a code that is not labrun itself labels the steps there `tool`.
  std::string tool;
  std::string config_path;  ///< config.path of its first run (for --bisect's command)
  std::size_t segment = 0;  ///< which stretch of equal lab settings it belongs to (0, 1, ...)
};

/// One point at one commit. Times in seconds; log_* are natural logs of seconds.
struct HistoryRun {
  std::size_t commit = 0;  ///< index into HistoryResult::commits
  /// ok when every record of the point at this commit is ok, else the first other; nullopt before any record
  std::optional<Status> status;
  std::vector<double> process_s;  ///< the process medians pooled (timing.processes.time_s; one sample median unpooled)
  /// The process's calibrated ceiling for the point's bound as a time (1 / rate for a bandwidth or FLOP rate), one
  /// per process median; empty where a header lacks it.
  std::vector<double> ceiling_s;
  double log_time = kNoValue;                        ///< mean of the logs of process_s: the run's level
  double log_var = kNoValue;                         ///< its variance from the processes: max(sd², floor²) / count
  double time_s = kNoValue;                          ///< exp(log_time), the geometric mean of the process medians
  double ci_low_s = kNoValue, ci_high_s = kNoValue;  ///< exp(log_time -+ t_{1-alpha/2, k-1} sd / sqrt(k)), pooled only
};

/// One point's series: the point's record at each commit where it has one.
struct HistorySeries {
  std::string id, key, variant, bound;  ///< bound: interpretation.bound of its newest record ("" if none)
  Json axes = Json::object();
  std::vector<HistoryRun> runs;  ///< in commit order
};

/// A step is a jump between two commits; a drift a ramp over several commits to the new level.
enum class StepKind { step, drift };
const char* to_string(StepKind kind);

/// A detected change of one point's time.
struct HistoryStep {
  std::size_t series = 0;  ///< index into HistoryResult::series
  StepKind kind = StepKind::step;
  std::size_t before = 0;          ///< the last commit at the old level (commit index)
  std::size_t after = 0;           ///< the first commit at the new level: the step's commit, a drift's last commit
  std::size_t start = 0;           ///< a drift's first commit off the old level (== after for a step)
  double ratio = 1;                ///< level after / level before (geometric means of the two stretches' runs)
  double ci_low = 0, ci_high = 0;  ///< its (1 - alpha) interval
  double p_value = 1;              ///< the split's scan p-value (Bonferroni over the positions tried)
  double q_value = 1;              ///< BH-adjusted over the first round's candidates; later rounds: p m / R (docs)
  bool environment = false;        ///< the machine changed here, or the step vanishes with the calibration taken out
  std::string environment_reason;
  std::optional<double> normalized_ratio, normalized_p;  ///< with each process's ceiling taken out
  std::string normalized_by;                             ///< e.g. "launch.eager_queued_time_s"
  std::string test_aid;  ///< "lab.delay_s 0 -> 2e-05" when a documented test aid changed here
  /// "GPU uuid A -> B" when only the instance changed here (same GPU model, driver, runtime, build type) and the
  /// step survives each run's calibrated ceiling taken out: then it is not `environment` (docs/history.md).
  std::string instance_change;
  /// labrun itself changed here (version or commit, "labrun 0.1.0 (abc) -> labrun 0.2.0 (def)"), in a history of
  /// code that is not labrun; "" otherwise. Set whether or not the step is labelled `tool`.
  std::string tool_change;
  /// Labelled `tool`: labrun changed between the commits (tool_change) and the step is not `environment`. A tool
  /// step is not the code's: it never fails --fail-on-newest slower.
  bool tool = false;
};

/// Steps of several points at one commit (within one), in one direction, reported once.
struct HistoryGroup {
  std::vector<std::size_t> steps;  ///< indices into HistoryResult::steps
  StepKind kind = StepKind::step;
  std::size_t before = 0, after = 0, start = 0;  ///< as HistoryStep, from the members' mean shape
  bool slower = true;
  bool environment = false;
  bool tool = false;                                        ///< every member is a `tool` step (labrun changed)
  std::string bound;                                        ///< the members' common bound class, or "mixed"
  std::vector<std::pair<std::string, std::size_t>> bounds;  ///< bound class -> members, most first
  double median_ratio = 1, min_ratio = 1, max_ratio = 1;
};

/// A point whose status differs between two consecutive commits where it has records.
struct HistoryStatusChange {
  std::size_t series = 0, before = 0, after = 0;
  Status from = Status::ok, to = Status::ok;
};

/// The outcome of history_results().
struct HistoryResult {
  HistoryOptions options;
  std::vector<HistoryCommit> commits;  ///< oldest first
  std::vector<HistorySeries> series;   ///< in order of first appearance
  std::vector<HistoryStep> steps;      ///< reported steps (|size| >= min_effect), by commit then size
  std::vector<HistoryGroup> groups;    ///< every reported step is in exactly one group
  std::vector<HistoryStatusChange> status_changes;
  std::vector<std::string> notes;     ///< e.g. test aids treated as one series
  std::vector<std::string> warnings;  ///< environment changes, lab settings that split the series, ...
  double noise_floor = kNoValue;      ///< median sd of log process medians over the point-commits pooled
  std::size_t candidates = 0;         ///< splits tested in the first round (the BH family)
  std::size_t small_shifts = 0;       ///< significant splits below min_effect (not reported)
  std::vector<std::size_t> newest;    ///< indices of groups whose step is at the newest commit
  bool fail = false;                  ///< per options.fail_on
};

/// Builds every point's series over `commits` (oldest first, order_commits()) and finds its steps.
///
/// Per point and commit the level is y = mean log of the process medians (timing.processes.time_s; a record not
/// pooled gives its samples' median as one process), with variance v = max(s², f²)/k from its k processes (s their
/// sd of logs, f the noise floor: the median s over all pooled point-commits, as labrun diff floors). Per point,
/// binary segmentation on y: the split of a stretch that maximises the two-sample t (the pooled residual variance
/// of the point's whole piecewise-constant fit, floored at the mean v) is kept when its scan p-value (Bonferroni
/// over the positions) passes Benjamini-Hochberg over the first round's candidates of all points at alpha and is
/// <= alpha_history; later splits of a point whose first split passed are tested at alpha R/m (Benjamini &
/// Bogomolov 2014) and alpha_history. Splits are then moved to their best position between their neighbours, a
/// ramp over up to max_drift_commits is fitted in place of a step where it fits significantly better (a drift),
/// and a step is labelled `environment` where the GPU (name, uuid), driver, runtime, build type or host changed
/// or the step, with each process's calibrated ceiling taken out (covariate_adjust), is no longer significant or
/// no longer min_effect. Lab settings that differ split the series there (no step is sought across); the
/// documented test aids (lab.delay_s) do not. A step across a change of labrun itself (version or commit) in a
/// history of code that is not labrun (environment.code.project != "labrun") is labelled `tool` unless it is
/// `environment`; neither label fails FailOn::slower. docs/history.md has the formulas and sources.
/// @throws std::invalid_argument for options out of range, no commit, or runs of more than one experiment or of
/// more than one project (environment.code.project; the message names a file of each).
HistoryResult history_results(const std::vector<CommitRuns>& commits, const HistoryOptions& options);

/// The series of `point` (its id, or its key), or nullptr.
const HistorySeries* find_series(const HistoryResult& history, const std::string& point);

// ---- Outputs (src/history/history_{json,table,markdown,bisect,report}.cpp)
// --------------------------------------------------------------

/// The `--format json` object: {"type": "history", "schema_version": 1, "options", "commits": [{index, sha,
/// created_utc, files, environment, test_aids, dirty, segment, project, tool}], "notes", "warnings", "noise_floor",
/// "groups": [{kind, before, after, start (shas), slower, environment, tool, bound, bounds, points, median_ratio,
/// min_ratio, max_ratio, steps: [indices]}], "steps": [{id, key, bound, kind, before, after, start, ratio, ci_low,
/// ci_high, p_value, q_value, environment, environment_reason, normalized_ratio, normalized_p, normalized_by,
/// test_aid, instance_change, tool, tool_change}], "status_changes", "summary": {commits, points, candidates, steps,
/// groups, slower, faster (neither counting environment or tool steps), environment, tool, small_shifts}, "newest":
/// {sha, groups, fail}}. With `with_series`, also "series": the runs of every point that has a step ({id, key, bound,
/// runs: [{commit, time_s, ci_low_s, ci_high_s, processes}]}), for the plots.
Json to_json(const HistoryResult& history, bool with_series = false);

/// Aligned plain text: notes, warnings, one row per group (commit range, points, bound, size, label), then the
/// newest commit's verdict.
std::string history_table(const HistoryResult& history);

/// Markdown to paste into an issue: headline, notes and warnings, a table of the groups, each group's steps (the
/// points, with size, interval and q) folded in <details>, and `plots` (file names relative to the markdown, one
/// per group, in group order; empty strings for none) under their group.
std::string history_markdown(const HistoryResult& history, const std::vector<std::string>& plots = {});

/// history's outputs (output.hpp), one file each, listed in outputs() (src/commands/output_table.hpp) as `--format`
/// table (history_table, the default; history_table.cpp), markdown (history_markdown without plots;
/// history_markdown.cpp) and json (to_json without series, indented by 2, then a newline; history_json.cpp).
std::unique_ptr<Output> make_history_table_output();
std::unique_ptr<Output> make_history_markdown_output();
std::unique_ptr<Output> make_history_json_output();

/// What `--bisect POINT` prints: for each step of the point, the commits still untested between the last commit
/// before and the first after (from `rev_list`, newest first; none without it), `git bisect start` for them and
/// the `labrun sweep CONFIG --only ...` command that runs just that point. @throws std::invalid_argument if no
/// series has that id or key.
std::string history_bisect(const HistoryResult& history, const std::string& point,
                           const std::vector<std::string>* rev_list);

/// Writes REPORT_DIR/history.md, history.json (`dir`: the staging folder of a ReportFolder, src/base/output_file.hpp)
/// (with the series), index.html (the HTML view of the same JSON, docs/html.md) and, when python3 with matplotlib is
/// found, one
/// PNG per group (at most `max_plots`) drawn by scripts/plot_history.py (`script`, or found from the working
/// directory or above the executable). Plotting problems are warnings on `err`, never errors.
/// @throws OutputError when the folder or a file cannot be written.
void write_history_report(const HistoryResult& history, const std::string& dir, const std::string& script,
                          std::size_t max_plots, std::ostream& err);

// ---- The command's exit codes and arguments (the command: cmd_history in src/commands/commands.hpp) ---------

/// Exit codes of `labrun history`, as labrun diff's.
enum HistoryExit : int {
  kHistoryNoStep = 0,    ///< no step at the newest commit per fail_on
  kHistoryStep = 1,      ///< a step at the newest commit per fail_on
  kHistoryBadInput = 2,  ///< a file unreadable or not a result, a commit not in the repo, bad options or format
  kHistoryOutput = 4,    ///< -o REPORT_DIR: exists without --force, not a folder, being written, or unwritable
};

/// What `labrun history` was asked.
struct HistoryArgs {
  std::vector<std::string> paths;  ///< files, comma-separated lists or folders (each a result_paths argument)
  std::string repo;                ///< --repo DIR; empty: order by header time
  std::string format;              ///< a history output of outputs() by name; empty: the default (table)
  std::string bisect;              ///< --bisect POINT (id or key); empty: none
  std::string report_dir;          ///< -o REPORT_DIR; empty: none
  bool force = false;              ///< --force: replace an earlier history report in report_dir
  std::string plot_script;         ///< empty: scripts/plot_history.py looked up
  std::size_t max_plots = 16;
  HistoryOptions options;
};

}  // namespace labrun
