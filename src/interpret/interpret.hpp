// The interpretation step of the lab pass, per point: what bounded each measured point (with the numbers that
// say so), whether its time is physically believable, and a five-part note. Pure host code: typed records in
// (point_record.hpp), an Interpretation out. The cross-point analysis (winners, crossovers, hypothesis verdicts)
// is analysis.hpp; the text helpers are format.hpp (included here for callers that use them with it). Formulas and
// thresholds: docs/metrics.md, section "Interpretation" (the table there mirrors InterpretThresholds below).
#pragma once

#include <string>
#include <vector>

#include "format.hpp"
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

/// Interprets one point against the header (calibration, environment) of the run that produced it.
///
/// Reads from `point`: status, reason, variant, axes (and the lab axis mode when timing has none), timing.{time_s,
/// method, mode, l2, host_syncs_per_iteration, wall/device/submit/host_probe medians and CIs}, cost.{bytes,
/// compulsory_bytes, flop, launches}, device_state.{before, after}. From `header`, through its accessors only:
/// calibration(copy|read, bandwidth_Bps), calibration(fp32_fma|bf16_gemm, flop_per_s), calibration(launch,
/// eager_time_s|graph_time_s), calibration_backend(), theoretical_bandwidth_Bps(), l2_bytes().
/// Any of them may be missing or non-finite: the quantities that need it become NaN (written as null) and the
/// bound `unknown` with a reason. Never throws on record content.
///
/// Returns the point's interpretation (stored as its "interpretation"; to_json(Interpretation) writes it), SI
/// units throughout:
/// - achieved_bandwidth_Bps = cost.bytes / time_s; compulsory_bandwidth_Bps = cost.compulsory_bytes / time_s;
///   flop_per_s = cost.flop / time_s; arithmetic_intensity_flop_per_byte = cost.flop / cost.compulsory_bytes;
/// - ceilings: memory = max(copy, read) (a read-heavy stream beats the copy figure on the H200: 4.3-4.5 TB/s read
/// vs 4.2 copy, results/h200/),
///   compute = fp32_fma; peak_bandwidth = max(copy, read, theoretical) and peak_compute = max(fp32_fma,
///   bf16_gemm) for the floor;
/// - fraction_of.{memory_ceiling, copy, read, theoretical, compute_ceiling, bf16_gemm, roofline};
///   roofline_ceiling_flop_per_s = min(memory ceiling × intensity, compute ceiling) (Williams, Waterman and
///   Patterson, "Roofline", CACM 2009);
/// - time_floor_s = max(compulsory_bytes / peak_bandwidth, flop / peak_compute); l2_resident when timed with a
///   hot L2 and compulsory_bytes fit in it (the suspect test then keeps only the flop term: a cache can beat DRAM);
/// - launch_overhead_share = launches × calibrated launch time (eager or graph by timing.mode) / time_s, or,
///   with blocked samples (timing.method TimingMethod::cuda_events_blocked), the measured timing.submit median /
///   time_s;
///   host_stall_share = (wall − device) / wall of the medians (NaN for blocked samples, whose wall is enqueue
///   then execution);
/// - submit_time_s, iteration_time_s and iteration_time_basis: see iteration_time();
/// - bound ∈ {memory, compute, launch, sync, latency, unknown}, confidence ("strong", "weak" or nullopt), reason,
///   evidence (the numbers and the rule that decided);
/// - suspect and suspect_reason: time below the floor by more than 5%, a cold-L2 compulsory rate above the
///   measured memory ceiling, or timing.method TimingMethod::host_clock_unsynchronized (the time measures the
///   enqueue);
/// - note: {measured, bound, evidence, next_change, other_cause_checked}, plain English with numbers.
/// The one entry point the lab, pooling and the report use.
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
/// The iteration time of `point` (see IterationTime). Never throws.
IterationTime iteration_time(const PointRecord& point);

// ---- JSON shims, kept until every caller is typed --------------------------------------------------------------

/// Deprecated, kept until every caller is typed: to_json(interpret(point_from_json_tolerant(point), header))
/// with `header` wrapped as a RunHeader (an empty one when it is not an object). Never throws on record content.
Json interpret_point(const Json& point, const Json& header);

/// Deprecated, kept until every caller is typed: iteration_time(point_from_json_tolerant(point)).
IterationTime iteration_time(const Json& point);

}  // namespace labrun
