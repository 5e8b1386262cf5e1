// The host backend: runs each variant's host implementation on the CPU, timed with a steady clock.
// It is what CI exercises and what runs when no GPU is present.
#pragma once

#include "backend.hpp"

namespace labrun {

class HostBackend : public Backend {
 public:
  BackendKind kind() const override { return BackendKind::host; }
  std::string name() const override { return "host"; }
  Json environment() override;
  /// The host backend calibrates nothing yet: returns {"backend": "host"}.
  Json calibrate() override;
  /// "eager" runs; "graph" is not supported (CUDA graphs need a device).
  std::optional<std::string> mode_unsupported(const std::string& mode) const override;
  /// Eager executor timed with the steady clock. cold_l2 and delay_s do not apply on the host and are ignored
  /// (the record's timing.l2 says "hot" for host points).
  std::unique_ptr<Executor> executor(Workload& workload, const ExecOptions& options) override;
};

}  // namespace labrun
