// The typed view an experiment's report section reads (ExperimentDef::report_section): the runs of its experiment,
// each with its variants, varying axes, points (status, cost model, iteration time with its CI, interpretation,
// kernel breakdown), the analysis' groups (points of one run with the same axes, by variant) and crossovers; and the
// text helpers the report's own sections use, so that a section reads like them. Plain values: no JSON, nothing of
// labrun's internals. Built by the report from what it loaded and analysed (src/report/report_view.cpp).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cost.hpp"
#include "point.hpp"

namespace labrun {

/// Axis values by name, in the record's order.
using AxisValues = std::vector<std::pair<std::string, AxisValue>>;

/// The value of `axis` as a number (integer or real axes), NaN when absent or a word.
double axis_number(const AxisValues& axes, const std::string& axis);
/// The value of `axis` as a word; a number as its JSON text; "" when absent.
std::string axis_word(const AxisValues& axes, const std::string& axis);

/// One op of a point's kernel breakdown (the record's `kernels[]`, docs/records.md): an op the variant marked with
/// Launch::mark, timed with CUDA events from the previous mark (or the iteration's start) to its own, over one
/// marked eager iteration (the median of the breakdown's repetitions).
struct KernelShare {
  std::string op;     ///< the op's name, as the variant marked it
  double time_s = 0;  ///< the op's time, seconds; NaN where the record has none
  /// The op's share of the marked iteration, a fraction: time_s over the sum of the breakdown's times, so the
  /// shares of a breakdown sum to 1. NaN where time_s is NaN or the sum is not positive.
  double share = 0;
};

/// One point of a run: what the lab recorded and how it was interpreted. NaN where a number is missing.
struct PointView {
  std::string id, variant, status;
  AxisValues axes;
  Cost cost;
  /// What one loop iteration costs and the 95% CI of its median, seconds (the report's iteration-time rule:
  /// host-paced samples by their submission time, else the measured time).
  double time_s = 0, ci95_low_s = 0, ci95_high_s = 0;
  bool host_paced = false;
  std::string bound;                 ///< "memory", "compute", "launch", "sync", "latency", "unknown" or ""
  double launch_overhead_share = 0;  ///< share of the time the calibrated launches explain
  double host_stall_share = 0;       ///< share of the wall time the host stalled (a lower bound)
  double host_syncs_per_iteration = 0;
  double memory_ceiling_fraction = 0;   ///< achieved bytes per second over the memory ceiling
  double compute_ceiling_fraction = 0;  ///< achieved flop per second over the compute ceiling (FP32 FMA)
  /// achieved flop per second over the calibrated bf16 GEMM rate (the tensor cores); NaN without that calibration
  double bf16_gemm_fraction = 0;
  bool suspect = false;
  /// The kernel breakdown, in the order the ops ran (eager CUDA points whose variant marks its ops); empty where
  /// the record has none (the host backend, graph mode, a variant that marks nothing, a point that did not run).
  std::vector<KernelShare> kernels;
  double axis_number(const std::string& axis) const { return labrun::axis_number(axes, axis); }
  std::string axis_word(const std::string& axis) const { return labrun::axis_word(axes, axis); }
};

/// Points of one run with the same axes (the lab axes included), by variant.
struct GroupView {
  AxisValues axes;
  std::map<std::string, double> time_s;     ///< iteration time per variant (NaN: not ok)
  std::map<std::string, PointView> points;  ///< the point per variant
  /// The variant's time, NaN when the group has none.
  double time(const std::string& variant) const;
  /// The variant's point, nullptr when the group has none.
  const PointView* point(const std::string& variant) const;
};

/// Where two variants swap places along an axis, as the analysis found it.
struct CrossoverView {
  std::string faster_below, faster_above;
  bool significant = false;  ///< significant at both ends
  std::string text;          ///< one sentence, markdown
};

/// One run of the experiment (one input file's header and its points).
struct RunView {
  std::size_t number = 0;             ///< the run's number in the report
  std::string heading;                ///< "### Run R (`file`)\n\n" when the report has several runs, else ""
  std::vector<std::string> variants;  ///< in first-seen order
  std::vector<std::string> varying;   ///< axes with more than one value, in first-seen order
  std::vector<PointView> points;      ///< in file order
  std::vector<GroupView> groups;      ///< in the analysis' order
  std::vector<CrossoverView> crossovers;
  bool has_variant(const std::string& variant) const;
};

/// The runs of one experiment in a report, in input order.
class ReportView {
 public:
  explicit ReportView(std::vector<RunView> runs) : runs_(std::move(runs)) {}
  const std::vector<RunView>& runs() const { return runs_; }

 private:
  std::vector<RunView> runs_;
};

// ---- text helpers, as the report's own sections write numbers --------------------------------------------------

/// A time ratio as "1.23×"; "n/a" when not finite.
std::string ratio_text(double ratio);
/// Counts as "12 ok, 3 error" (largest first, ties in key order); "none" when empty.
std::string counts_text(const std::map<std::string, int>& counts);
/// The median of `values` (the mean of the middle two for an even count); NaN when empty.
double median_of(std::vector<double> values);
/// A markdown table cell: pipes escaped, newlines flattened to spaces.
std::string cell(const std::string& text);
/// Axes as "x=1e8, y=0.7, mode=graph"; only the names in `only` when it is not empty.
std::string axes_text(const AxisValues& axes, const std::vector<std::string>& only = {});
/// One axis value as axes_text writes it.
std::string axis_text(const AxisValue& value);
/// Seconds as "114 µs", "2.99 ms"; "0 s" for zero.
std::string format_time(double seconds);
/// A fraction as a percentage: 0.987 → "99%", 0.0123 → "1.2%".
std::string format_percent(double fraction);
/// A number short and exact enough for axis values: 1e8 → "1e8", 0.04 → "0.04", 1024 → "1024".
std::string format_number(double value);

}  // namespace labrun
