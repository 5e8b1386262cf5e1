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
  /// Eager executor timed with the steady clock. @throws PointOutcome(not_supported) for cold_l2 or delay_s,
  /// which need a device.
  std::unique_ptr<Executor> executor(Workload& workload, const ExecOptions& options) override;
  /// MemAvailable of /proc/meminfo (the kernel's estimate of memory a new allocation can take without
  /// swapping); nullopt where it cannot be read.
  std::optional<double> free_memory_bytes() const override;
};

}  // namespace labrun
