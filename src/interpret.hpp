// The interpretation step of the lab pass: what bounded each measured point (with the numbers that say so),
// whether its time is physically believable, a five-part note per point, and across points the winners,
// crossovers and the verdicts on the config's hypotheses. Pure host code: JSON records in, JSON out.
// Formulas and thresholds: docs/metrics.md, section "Interpretation" (the table there mirrors
// InterpretThresholds below).
#pragma once

#include <string>
#include <vector>

#include "point_record.hpp"
#include "record.hpp"

namespace labrun {

/// Every threshold the interpretation uses, in one place. docs/metrics.md ("Interpretation") justifies each.
struct InterpretThresholds {
  /// `suspect` when time < (1 - suspect_margin) × the physical time floor (issue 5: "more than 5%").
  double suspect_margin = 0.05;
  /// sync-bound: host_syncs_per_iteration >= 1 and host_stall_share >= sync_stall_share ...
  double sync_stall_share = 0.2;
  /// ... or launch_overhead_share + host_stall_share >= sync_host_share (a sync stops the host queueing ahead,
  /// so every launch after it is exposed; the sum is a lower bound of the sync's cost).
  double sync_host_share = 0.3;
  /// launch-bound: launches × calibrated launch time >= launch_share of the time. With blocked samples (a
  /// measured submission time) the threshold is 1: submission slower than the GPU paces the loop.
  double launch_share = 0.5;
  /// memory- or compute-bound: achieved rate >= roof_fraction of the calibrated ceiling (the larger fraction
  /// of the two decides).
  double roof_fraction = 0.6;
  /// latency-bound: neither roof reached and the time is under latency_time_s ...
  double latency_time_s = 10e-6;
  /// ... or each launch streams less than latency_per_launch_s of ideal work (bytes / launches / memory ceiling):
  /// a kernel's fill and drain (a few µs) is then comparable with its work.
  double latency_per_launch_s = 5e-6;
  /// Below roof_fraction but at or above weak_roof_fraction of the nearer roof: that roof, confidence "weak".
  double weak_roof_fraction = 0.4;
  /// Hypothesis verdict: confirmed when at least confirm_fraction of the matching points meet by_at_least ...
  double confirm_fraction = 0.9;
  /// ... refuted when fewer than refute_fraction do; inconclusive in between or with no matching point.
  double refute_fraction = 0.5;
  /// A working set (compulsory bytes) at most this multiple of the L2 size, timed with a hot L2, can be served
  /// from cache: the DRAM part of the time floor is then not applied.
  double l2_resident_multiple = 1.0;
};

/// The thresholds labrun uses.
inline constexpr InterpretThresholds kInterpretThresholds{};

/// Interprets one point record against the header (calibration, environment) of the run that produced it.
///
/// Inputs read from `point`: status, variant, axes, timing.{time_s, method, mode, l2, host_syncs_per_iteration,
/// wall.median_time_s, device.median_time_s}, cost.{bytes, compulsory_bytes, flop, launches}, device_state.
/// From `header`: calibration.{copy,read}.bandwidth_Bps, calibration.{fp32_fma,bf16_gemm}.flop_per_s,
/// calibration.launch.{eager,graph}_time_s, environment.device.{theoretical_bandwidth_Bps, l2_bytes}.
/// Any of them may be missing, null or non-finite: the quantities that need it become null and the bound
/// `unknown` with a reason. Never throws on record content.
///
/// Returns an object (stored as the point's "interpretation"), SI units throughout:
/// - achieved_bandwidth_Bps = cost.bytes / time_s; compulsory_bandwidth_Bps = cost.compulsory_bytes / time_s;
///   flop_per_s = cost.flop / time_s; arithmetic_intensity_flop_per_byte = cost.flop / cost.compulsory_bytes;
/// - ceilings: memory = max(copy, read) (a read-heavy stream beats the copy figure, shared/GPU.md),
///   compute = fp32_fma; peak_bandwidth = max(copy, read, theoretical) and peak_compute = max(fp32_fma,
///   bf16_gemm) for the floor;
/// - fraction_of.{memory_ceiling, copy, read, theoretical, compute_ceiling, bf16_gemm, roofline};
///   roofline_ceiling_flop_per_s = min(memory ceiling × intensity, compute ceiling) (Williams, Waterman and
///   Patterson, "Roofline", CACM 2009);
/// - time_floor_s = max(compulsory_bytes / peak_bandwidth, flop / peak_compute); l2_resident when timed with a
///   hot L2 and compulsory_bytes fit in it (the suspect test then keeps only the flop term: a cache can beat DRAM);
/// - launch_overhead_share = launches × calibrated launch time (eager or graph by timing.mode) / time_s, or,
///   with blocked samples (timing.method "cuda_events_blocked+synchronized_wall"), the measured
///   timing.submit.median_time_s / time_s; host_stall_share = (wall − device) / wall of the medians (null for
///   blocked samples, whose wall is enqueue then execution);
/// - submit_time_s, iteration_time_s and iteration_time_basis: see iteration_time();
/// - bound ∈ {memory, compute, launch, sync, latency, unknown}, confidence ("strong", "weak" or null), reason,
///   evidence (the numbers and the rule that decided);
/// - suspect (bool) and suspect_reason: time below the floor by more than 5%, or timing.method
///   "host_clock_unsynchronized" (the time measures the enqueue, not the work);
/// - note: {measured, bound, evidence, next_change, other_cause_checked}, plain English with numbers.
/// Quantities that cannot be computed are null.
Json interpret_point(const Json& point, const Json& header);

/// Typed form of interpret_point(): the interpretation of `point` against its run's header. The one entry
/// point the lab, pooling and the report use.
Interpretation interpret(const PointRecord& point, const RunHeader& header);

/// What one loop iteration of a point costs, with the 95% CI of its median (seconds; NaN where missing).
/// Blocked samples time the GPU and the host's submission apart; an eager loop runs at the slower of the two
/// (the host cannot issue faster than its submission time, the GPU cannot run ahead of what was issued), so
/// the time is the submission's when it exceeds the GPU time (`host_paced`), else timing.time_s with the
/// device (or, without device timing, wall) CI.
struct IterationTime {
  double time_s, ci95_low_s, ci95_high_s;
  bool host_paced;
};
IterationTime iteration_time(const Json& point);

/// Cross-point analysis of the records of one or more JSONL files, in file order: each "header" line starts a
/// run and applies to the "point" lines after it (points before any header form a run with an empty header).
/// Only points with status "ok", a positive finite time and not `suspect` take part.
///
/// Returns an object:
/// - runs: [{run, experiment, config_path, device, created_utc, points, usable_points, varying_axes}];
/// - groups: points of one run and experiment with identical axes, differing by variant:
///   {run, experiment, axes, times_s {variant: time}, ids {variant: id}, winner, runner_up, margin_ratio =
///   time(runner_up) / time(winner), significant (the median's 95% CIs do not overlap: timing.device.ci95_* or,
///   with no device timing, timing.wall.ci95_*)};
/// - crossovers: for each numeric axis, pair of variants and slice (all other axes fixed), each pair of
///   consecutive axis values where log(time_a / time_b) changes sign: {run, experiment, axis, scale ("log" for
///   positive integer axes spanning >= 100×, else "linear"), between [x0, x1], at (the interpolated zero of
///   log(time_a / time_b), linear in the axis or in its log), faster_below, faster_above, ratio_below and
///   ratio_above (slower / faster time at x0 and x1), fixed (the slice's varying axes), significant (CIs apart at
///   both ends), text};
/// - hypotheses: one per entry of the header's config.hypothesis ({faster: A, than: B, when: {axis: [lo, hi] |
///   value | [values...]}, by_at_least: r}): {run, index, faster, than, when, by_at_least, verdict (confirmed |
///   refuted | inconclusive), reason, matched, passed, skipped (matching points where A or B is not usable),
///   skipped_because {"variant status": count}, fraction_passed, ratio_min/median/max (time_B / time_A),
///   min_point, max_point, counterexamples, points [{id, key, axes, ratio, passed}]}.
Json analyze(const std::vector<Json>& records);

/// analyze() over loaded results: each run's header, then its points, in order.
Json analyze(const ResultSet& results);

// Text for notes and reports: three significant figures with an SI prefix; "n/a" for a non-finite value.

/// Seconds as "114 µs", "2.99 ms", "850 ns".
std::string format_time(double seconds);
/// Terminal columns of UTF-8 text: its code points ("µs" is 3 bytes, 2 columns), for aligning tables.
std::size_t display_width(const std::string& text);
/// A rate in base units per second with an SI prefix: format_rate(4.37e12, "B/s") is "4.37 TB/s".
std::string format_rate(double per_second, const std::string& unit);
/// Bytes as "500 MB" (decimal prefixes).
std::string format_bytes(double bytes);
/// A fraction as a percentage: 0.987 → "99%", 0.0123 → "1.2%", 0.00012 → "0.012%".
std::string format_percent(double fraction);
/// A number short and exact enough for axis values: 1e8 → "1e8", 1600000 → "1.6e6", 0.04 → "0.04", 1024 → "1024".
std::string format_number(double value);
/// One axis value (JSON number, json_real string or word) as text.
std::string format_axis_value(const Json& value);
/// Axes as "n=1e8, density=0.7, mode=graph"; only the names in `only` when it is not empty.
std::string format_axes(const Json& axes, const std::vector<std::string>& only = {});

}  // namespace labrun
