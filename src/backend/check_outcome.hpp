// What a workload's correctness iteration found (Workload::check): the typed comparisons of the experiment's check,
// as Compare made them (labrun/experiment.hpp's CheckResult), kept whole from the workload to the point's record.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <labrun/experiment.hpp>

namespace labrun {

/// The outcome of one correctness iteration: the comparisons the experiment's check made, or why none was made.
/// The point's record holds it as is (PointRecord::correctness; its JSON spelling, with value, reference,
/// abs_error and tolerance of the reported comparison: src/records/point_record.cpp, docs/records.md).
struct CheckOutcome {
  std::vector<CheckResult> comparisons;  ///< in the order the check made them; empty when `error` says why
  std::string error;                     ///< why nothing was compared; "" when something was
  /// Whether the outputs were poisoned (NaN bytes, case C07) before the iteration: false when a variant handed
  /// back its own memory as an output (Role::returned); unset when the check compared nothing.
  std::optional<bool> poisoned;

  /// Every comparison passed, and there was at least one.
  bool passed() const;
  /// The comparison a point reports: the first that failed, else the one closest to its bound (the first of equals);
  /// nullptr when there is none.
  const CheckResult* reported() const;
  /// The reported comparison's output at its worst element (units of the output); 0 when there is none.
  double value() const;
  /// The reference there; 0 when there is none.
  double reference() const;
  /// |value() − reference()|, infinity when the value is not finite; 0 when there is none.
  double abs_error() const;
  /// The bound there times lab.tolerance_scale (units of the output); 0 when there is none.
  double tolerance() const;
};

/// A failed outcome that compared nothing: `error` says why (e.g. an output the variant never handed back).
CheckOutcome check_error(std::string error, std::optional<bool> poisoned = std::nullopt);

/// How a failed check reads in a point's reason: for an elementwise or exact comparison the worst element, its
/// value against the reference, the error against scale × bound and the count of wrong elements; for a check that
/// compared nothing, why; otherwise the value against the reference and the tolerance. Ends in "; not timed".
std::string describe_failure(const CheckOutcome& check);

}  // namespace labrun
