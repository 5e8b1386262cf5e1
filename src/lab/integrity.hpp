// The integrity checks of the lab pass (docs/integrity.md): what the lab asks of a workload around its correctness
// iteration and after its timing, outside every timed sample, and how the answers land in the point's record
// (PointRecord::integrity). Cases C19 (a write outside an array), C20 (a write into an input) and C21 (a result
// replayed from a cache).
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "lab_settings.hpp"
#include "point_record.hpp"

namespace labrun {

/// The integrity checks of one point: which run (its lab settings and what its workload implements) and what they
/// found so far, as the record will hold it.
class IntegrityChecks {
 public:
  IntegrityChecks() = default;
  /// Each check `off` where its lab setting (lab.fences, lab.guard_inputs, lab.recheck) is false (reason
  /// "lab.fences: false"), `not_run` where `workload` does not implement it ("the workload does not implement it")
  /// or until it runs ("the pass ended before it ran").
  /// `recheck_elsewhere`: why the re-check does not run in this process though it is on (a process of a pooled
  /// sweep other than the first: the code under test is the same in each, and the first one's record is the pooled
  /// record's base); the re-check is then `not_run` with that reason.
  IntegrityChecks(const Workload& workload, const LabSettings& lab,
                  const std::optional<std::string>& recheck_elsewhere = std::nullopt);

  /// The fences, then the inputs (each where it runs): the first finding's reason, or nullopt. A check that ran and
  /// found nothing is `passed` (unless an earlier run of it failed); a finding is `failed` with its reason and
  /// `when` ("after the correctness iteration", "after timing"), as "changed input x at element 0 (found after
  /// timing)", and that is what is returned. The workload refills its guards and restores its
  /// inputs, so whatever runs next sees the lab's memory as it was set up.
  std::optional<std::string> memory(Workload& workload, const std::string& when);
  /// The fences alone, as memory().
  std::optional<std::string> fences(Workload& workload, const std::string& when);
  /// The inputs alone, as memory().
  std::optional<std::string> inputs(Workload& workload, const std::string& when);
  /// Whether the input check runs for this point (lab.guard_inputs and the workload implements it): the group check
  /// of interleaved timing asks the workload itself, without recording, as it cannot yet tell which point wrote.
  bool guards_inputs() const { return inputs_; }
  /// Whether the re-check runs in this process for this point.
  bool rechecks() const { return recheck_; }
  /// The re-check on fresh inputs (where it runs); `iterate` runs one iteration in the point's mode. Returns
  /// "re-check on fresh inputs failed: ..." (the comparison as describe_failure words it), or nullopt when it passed
  /// or does not run.
  std::optional<std::string> recheck(Workload& workload, const std::function<void()>& iterate);

  /// Records the audit of the first iteration (docs/integrity.md "The audit"): `audit` as the executor gives it
  /// (nullopt: the backend has none, "the host backend makes no CUDA calls"). Findings of host waits or
  /// allocations make the check `warned` and are returned as warnings to record (kind "undeclared_sync" or
  /// "allocation"); none: `passed`. (Work that escaped the lab's stream never reaches here: the point ended
  /// `escaped`.)
  std::vector<Warning> audit(const std::optional<IterationAudit>& audit);
  /// The audit of an iteration after timing (Executor::audit_again; nullopt: none ran) against the first's: a host
  /// wait or an allocation the first iteration did not make means the samples were taken as if the iteration did
  /// not make it (queued behind the blocking kernel, uncounted). Returns "an iteration after timing waits on the
  /// host in cudaStreamSynchronize, which the first did not (...)" and records the audit `failed`, or nullopt.
  std::optional<std::string> audit_again(const std::optional<IterationAudit>& again);
  /// Whether the audit runs for this point (lab.audit).
  bool audits() const { return record_.audit && record_.audit->state != CheckState::off; }
  /// Records the audit `failed` with `reason` (the point ended `escaped`).
  void audit_failed(const std::string& reason) { record_.audit = IntegrityCheck{CheckState::failed, reason}; }

  const Integrity& record() const { return record_; }
  /// Notes that the point's interleaved group was timed again point by point (Integrity::retimed).
  void set_retimed(std::string why) { record_.retimed = std::move(why); }

 private:
  Integrity record_;
  bool fences_ = false, inputs_ = false, recheck_ = false;  // which run
  std::optional<IterationAudit> first_audit_;               // the first iteration's, for audit_again
};

/// Whether `w` is one of the audit's warnings (IntegrityChecks::audit: "undeclared_sync", "allocation"): a finding
/// about the code, not a statistic of the samples, so a pooled record keeps its first process's
/// (src/run/processes.cpp).
bool is_audit_warning(const Warning& w);

}  // namespace labrun
