#include "integrity.hpp"

#include <algorithm>

#include "trace_call.hpp"

namespace labrun {

namespace {

IntegrityCheck initial(bool on, bool supported, const char* setting) {
  if (!on) return {CheckState::off, std::string("lab.") + setting + ": false"};
  if (!supported) return {CheckState::not_run, std::string("the workload does not implement it")};
  return {CheckState::not_run, std::string("the pass ended before it ran")};
}

// Records what one run of a check found; returns the finding with when it was found.
std::optional<std::string> note(IntegrityCheck& c, std::optional<std::string> finding, const std::string& when) {
  if (!finding) {
    if (c.state != CheckState::failed) c = {CheckState::passed, std::nullopt};
    return std::nullopt;
  }
  const std::string reason = *finding + " (found " + when + ")";
  c = {CheckState::failed, reason};
  return reason;
}

// describe_failure's words without its "; not timed": a re-check runs after timing.
std::string without_not_timed(std::string what) {
  const std::string suffix = "; not timed";
  if (what.size() >= suffix.size() && what.compare(what.size() - suffix.size(), suffix.size(), suffix) == 0)
    what.resize(what.size() - suffix.size());
  return what;
}

}  // namespace

IntegrityChecks::IntegrityChecks(const Workload& workload, const LabSettings& lab,
                                 const std::optional<std::string>& recheck_elsewhere) {
  const unsigned s = workload.integrity_support();
  fences_ = lab.fences && (s & Workload::kFenceCheck);
  inputs_ = lab.guard_inputs && (s & Workload::kInputCheck);
  recheck_ = lab.recheck && (s & Workload::kRecheck) && !recheck_elsewhere;
  record_.fences = initial(lab.fences, s & Workload::kFenceCheck, "fences");
  record_.inputs = initial(lab.guard_inputs, s & Workload::kInputCheck, "guard_inputs");
  record_.recheck = initial(lab.recheck, s & Workload::kRecheck, "recheck");
  if (lab.recheck && (s & Workload::kRecheck) && recheck_elsewhere)
    record_.recheck = {CheckState::not_run, *recheck_elsewhere};
  record_.audit = lab.audit ? IntegrityCheck{CheckState::not_run, std::string("the pass ended before it ran")}
                            : IntegrityCheck{CheckState::off, std::string("lab.audit: false")};
}

bool is_audit_warning(const Warning& w) { return w.kind == "undeclared_sync" || w.kind == "allocation"; }

std::vector<Warning> IntegrityChecks::audit(const std::optional<IterationAudit>& audit) {
  if (record_.audit->state == CheckState::off) return {};
  first_audit_ = audit;
  if (!audit) {
    record_.audit = {CheckState::not_run,
                     std::string("the backend has no audit (the host backend makes no CUDA calls)")};
    return {};
  }
  if (!audit->findings) {
    record_.audit = {CheckState::not_run, audit->not_run};
    return {};
  }
  const AuditFindings& f = *audit->findings;
  std::vector<Warning> warnings;
  std::string reason;
  if (!f.syncs.empty()) {
    reason = "the iteration waits on the host in " + AuditFindings::summary(f.syncs) +
             ", which the variant did not declare (Launch::read_to_host): timed live, as an iteration with host syncs";
    warnings.push_back({"undeclared_sync", reason});
  }
  if (!f.allocations.empty()) {
    const std::string words = "the iteration allocates or frees memory: " + AuditFindings::summary(f.allocations) +
                              " (case C18; Launch::allocate in setup or Launch::stream_alloc are the declared ways): "
                              "timed live";
    warnings.push_back({"allocation", words});
    reason += (reason.empty() ? "" : "; ") + words;
  }
  if (!f.stream_ordered.empty()) {
    const std::string words = "the iteration allocates or frees stream-ordered memory outside Launch::stream_alloc: " +
                              AuditFindings::summary(f.stream_ordered) + " (case C18; no host wait)";
    warnings.push_back({"allocation", words});
    reason += (reason.empty() ? "" : "; ") + words;
  }
  if (audit->elsewhere.empty()) record_.audit_found = f;
  else reason += (reason.empty() ? "" : "; ") + ("audited in " + audit->elsewhere);
  record_.audit = warnings.empty() ? IntegrityCheck{CheckState::passed,
                                                    reason.empty() ? std::nullopt : std::optional<std::string>(reason)}
                                   : IntegrityCheck{CheckState::warned, reason};
  return warnings;
}

std::optional<std::string> IntegrityChecks::audit_again(const std::optional<IterationAudit>& again) {
  if (!again || !again->findings || !first_audit_ || !first_audit_->findings) return std::nullopt;
  const AuditFindings& first = *first_audit_->findings;
  const AuditFindings& now = *again->findings;
  const auto new_calls = [](const std::vector<std::string>& before, const std::vector<std::string>& after) {
    std::vector<std::string> added;
    for (const auto& c : after)
      if (std::find(before.begin(), before.end(), c) == before.end()) added.push_back(c);
    return added;
  };
  std::vector<std::string> added = new_calls(first.syncs, now.syncs);
  for (const auto& c : new_calls(first.allocations, now.allocations)) added.push_back(c);
  if (added.empty()) return std::nullopt;
  const std::string reason = "an iteration after timing calls " + AuditFindings::summary(added) +
                             ", which the first iteration did not: the samples were taken as if it did not (found by "
                             "the audit)";
  record_.audit = IntegrityCheck{CheckState::failed, reason};
  return reason;
}

std::optional<std::string> IntegrityChecks::inputs(Workload& workload, const std::string& when) {
  if (!inputs_) return std::nullopt;
  return note(record_.inputs, workload.input_change(), when);
}

std::optional<std::string> IntegrityChecks::fences(Workload& workload, const std::string& when) {
  if (!fences_) return std::nullopt;
  return note(record_.fences, workload.fence_violation(), when);
}

std::optional<std::string> IntegrityChecks::memory(Workload& workload, const std::string& when) {
  const auto written = fences(workload, when);
  const auto changed = inputs(workload, when);  // even after a fence finding: it restores the inputs
  return written ? written : changed;
}

std::optional<std::string> IntegrityChecks::recheck(Workload& workload, const std::function<void()>& iterate) {
  if (!recheck_) return std::nullopt;
  const std::optional<CheckOutcome> outcome = workload.recheck(iterate);
  if (!outcome) {
    record_.recheck = {CheckState::not_run, std::string("the workload does not implement it")};
    return std::nullopt;
  }
  if (outcome->passed()) {
    record_.recheck = {CheckState::passed, std::nullopt};
    return std::nullopt;
  }
  const std::string reason = "re-check on fresh inputs failed: " + without_not_timed(describe_failure(*outcome)) +
                             " (found after timing)";
  record_.recheck = {CheckState::failed, reason};
  return reason;
}

}  // namespace labrun
