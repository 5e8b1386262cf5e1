// The CUDA backend: one device, one non-blocking stream, event + synchronized wall timing, eager and
// CUDA-graph executors, calibration of the device's ceilings.
#pragma once

#include <memory>
#include <string>

#include "backend.hpp"
#include "cuda_runtime.hpp"
#include "registry.hpp"

namespace labrun {

class CudaBackend : public Backend {
 public:
  /// Opens device `index`. @throws CudaError if the device cannot be initialised.
  explicit CudaBackend(int index);
  BackendKind kind() const override { return BackendKind::cuda; }
  std::string name() const override { return "cuda:" + std::to_string(index_); }
  /// Device name, UUID, compute capability, SM count, L2 and memory size, ECC, clocks, bus width, the
  /// theoretical DRAM bandwidth (2 * memory clock * bus width / 8), driver and runtime versions.
  Json environment() override;
  /// Device-to-device copy bandwidth (bytes read + written, 1 GiB buffers, median of 10 cudaMemcpyAsync),
  /// read-only stream bandwidth (1 GiB, 16-byte loads), and the time of an empty kernel launch (eager: the
  /// mean of 1000 back-to-back launches; graph: the same launches replayed from one graph).
  Json calibrate() override;
  std::optional<std::string> mode_unsupported(const std::string& mode) const override;
  std::unique_ptr<Executor> executor(Workload& workload, const std::string& mode, const LabSettings& lab) override;
  /// Median per-op device time over 5 eager iterations, marked by the workload through LaunchContext::mark.
  Json kernel_breakdown(Workload& workload, const LabSettings& lab) override;

  LaunchContext& context() { return ctx_; }

 private:
  int index_;
  LaunchContext ctx_;
};

/// Opens CUDA device `index` for `--device auto|cuda[:N]`. Returns nullptr and sets `why` (CUDA error name
/// and text) when there is no driver (cudaErrorInsufficientDriver), no device (cudaErrorNoDevice), or the
/// index is out of range. Never throws.
std::unique_ptr<Backend> open_cuda_backend(int index, std::string* why);

/// Adds the CUDA implementations of the built-in experiments (experiments/cuda/).
void register_cuda_experiments(Registry& registry);

}  // namespace labrun
