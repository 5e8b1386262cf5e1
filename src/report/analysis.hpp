// The cross-point analysis of the lab pass: over the points of one or more runs, the winner of each group of
// variants, the crossovers between variants along a numeric axis (the experiment's size axis where known), and
// the verdicts on the config's hypotheses. Pure host code: typed records in (point_record.hpp), JSON out (the
// report and `labrun report --json` render it). Thresholds: InterpretThresholds (interpret.hpp); formulas and
// the meaning of each verdict: docs/metrics.md, section "Interpretation".
#pragma once

#include <map>
#include <string>
#include <vector>

#include "point_record.hpp"
#include "record.hpp"

namespace labrun {

/// Cross-point analysis of loaded results, run by run in order. Each point is interpreted against its run's
/// header (interpret()); only points with status "ok", a positive finite iteration time (iteration_time()) and
/// not `suspect` take part (are "usable"). Variants are compared on their iteration time.
///
/// `size_axes` maps an experiment name to its size axis (RegisteredExperiment::size_axis, registry.hpp). For a run's
/// experiment with an entry, crossovers are computed along that axis only; for one without (an empty map:
/// every experiment), along every numeric axis that varies in the run.
///
/// Returns an object:
/// - runs: [{run, experiment, config_path, device, backend, created_utc, points, usable_points, varying_axes}];
/// - groups: points of one run and experiment with identical axes, differing by variant:
///   {run, experiment, axes, times_s {variant: time}, ids {variant: id}, winner, winner_time_s, runner_up,
///   runner_up_time_s, margin_ratio = time(runner_up) / time(winner), significant (the 95% CIs of the medians
///   do not overlap: timing.device.ci95_* or, with no device timing, timing.wall.ci95_*; timing.submit.ci95_*
///   for a host-paced point)};
/// - crossovers: for each crossing axis, pair of variants and slice (all other axes fixed), each pair of
///   consecutive axis values where log(time_a / time_b) changes sign: {run, experiment, axis, size_axis (true
///   when `axis` is the experiment's size axis from `size_axes`), scale ("log" for positive integer axes
///   spanning >= 100×, else "linear"), between [x0, x1], at (the interpolated zero of log(time_a / time_b),
///   linear in the axis or in its log), faster_below, faster_above, ratio_below and ratio_above (slower /
///   faster time at x0 and x1), fixed (the slice's varying axes), significant (CIs apart at both ends), text};
/// - hypotheses: one per entry of the header's config.hypothesis ({faster: A, than: B, when: {axis: [lo, hi] |
///   value | [values...]}, by_at_least: r}): {run, index, faster, than, when, by_at_least, verdict,
///   host_verdict, reason, matched, passed, skipped (matching points where A or B is not usable),
///   skipped_because {"variant status": count}, fraction_passed, ratio_min/median/max (time_B / time_A),
///   min_point, max_point, counterexamples, points [{id_faster, id_than, key, axes, ratio, passed}]}.
///   On a device backend, verdict is what the data says: `confirmed` when at least confirm_fraction of the
///   matched points have ratio >= by_at_least, `refuted` when fewer than refute_fraction do, `inconclusive` in
///   between, with no matched point, or for a hypothesis without `faster` and `than`; host_verdict is null.
///   On the host backend (RunHeader::backend() "host"; for points without a header, every point's backend
///   "host") the timings are the host CPU's and say nothing about a GPU prediction: verdict is `host_only`,
///   host_verdict holds what the host data says (confirmed | refuted | inconclusive, by the same rule), and the
///   reason says so before the host data's own reason.
/// Never throws on record content.
Json analyze(const ResultSet& results, const std::map<std::string, std::string>& size_axes = {});

/// Deprecated, kept until every caller is typed: analyze() over JSON records of one or more JSONL files, in
/// file order. Each "header" record starts a run and applies to the "point" records after it (points before
/// any header form a run without a header); other records are skipped. Points are read with
/// point_from_json_tolerant() (interpret.hpp), so a malformed record never throws.
Json analyze(const std::vector<Json>& records, const std::map<std::string, std::string>& size_axes = {});

/// Whether a point whose axes are `axes` ({axis: value}, as a record's `axes`) lies inside a hypothesis's `when`
/// ({axis: condition}; docs/config.md "hypothesis"): a list of two numbers [lo, hi] is the inclusive range, another
/// list any of its values, a scalar that value; every condition holds for an axis the point has. No `when`: true.
bool inside_when(const Json& axes, const Json& when);

/// Whether a `when` condition is a range: a list of two numbers [lo, hi] (docs/config.md "hypothesis").
bool is_when_range(const Json& cond);

/// The words one phrasing of a `when` puts around each axis's condition (describe_when; report.md's hypotheses).
struct WhenWords {
  std::string (*value)(const Json&);  ///< a value's text
  const char* range_open;             ///< after the axis, before a range's two ends: " in ["
  const char* range_close;            ///< after its ends: "]"
  const char* list_open;              ///< after the axis, before a list's values (joined by ", "): " one of "
  const char* list_close;             ///< after its values: ""
  const char* none;                   ///< the whole text for no `when` (not an object, or empty): "every point"
};

/// `when` ({axis: condition}) as one phrase per axis, joined by ", ": AXIS + range_open + LO + ", " + HI +
/// range_close for a range (is_when_range), AXIS + list_open + VALUES + list_close for another list, AXIS + " = " +
/// VALUE for a scalar; words.none for none. Throws what words.value throws.
std::string when_phrases(const Json& when, const WhenWords& words);

/// How `when` reads, one phrase per axis, for validate: "density in [0.1, 0.9] (a range: a list of two numbers is
/// one), dtype = f32, n one of 100000, 1000000, 10000000"; "every point" for none.
std::string describe_when(const Json& when);

}  // namespace labrun
