// The CUDA backend: one device, one non-blocking stream, event + synchronized wall timing, eager and
// CUDA-graph executors, calibration of the device's ceilings.
#pragma once

#include <memory>
#include <string>

#include "backend.hpp"
#include "cuda_runtime.hpp"
#include "registry.hpp"

namespace labrun {

class Nvml;

class CudaBackend : public Backend {
 public:
  /// Opens device `index` and pins the calling thread to its current CPU, so launch-bound timings do not
  /// move with the scheduler between runs. @throws CudaError if the device cannot be initialised.
  explicit CudaBackend(int index);
  ~CudaBackend() override;
  BackendKind kind() const override { return BackendKind::cuda; }
  std::string name() const override { return "cuda:" + std::to_string(index_); }
  /// Device name, UUID, compute capability, SM count, L2 and memory size, ECC, clocks, bus width, the
  /// theoretical DRAM bandwidth (2 * memory clock * bus width / 8), driver and runtime versions.
  Json environment() override;
  /// The measured ceilings: device-to-device copy bandwidth (bytes read + written, 1 GiB buffers, median of
  /// 10 cudaMemcpyAsync), read-only stream bandwidth (1 GiB, 16-byte loads), FP32 FMA throughput (FMA chains),
  /// bf16 tensor-core GEMM throughput through cuBLAS (8192^3), and the time of an empty kernel launch (eager:
  /// the mean of 1000 back-to-back launches; graph: the same launches replayed from one graph).
  Json calibrate() override;
  std::optional<std::string> mode_unsupported(const std::string& mode) const override;
  /// Eager or graph executor. With cold_l2, each sample first reads a buffer of twice the L2 size with plain
  /// loads (allocated and written once per backend, never per sample: case C10; reading leaves clean lines); with
  /// delay_s, a spin kernel follows every iteration. With blocking, samples of iterations that never synchronize with
  /// the host are queued behind a blocking kernel, at most queue_launches_ launches deep (Sample::iterations says how
  /// many iterations were timed). Every live synchronized sample is followed by a host probe
  /// (Sample::host_probe_time_s).
  std::unique_ptr<Executor> executor(Workload& workload, const ExecOptions& options) override;
  /// Median per-op device time over 5 eager iterations, marked by the workload through LaunchContext::mark.
  std::optional<std::vector<KernelTime>> kernel_breakdown(Workload& workload) override;

  /// SM and memory clocks, temperature, power and clock-event reasons through NVML ("unavailable" without).
  Json device_state() override;
  std::optional<double> cache_bytes() const override { return static_cast<double>(l2_bytes_); }
  std::optional<double> memory_bytes() const override { return static_cast<double>(memory_bytes_); }
  /// cudaMemGetInfo's free bytes on this device (nullopt if the call fails).
  std::optional<double> free_memory_bytes() const override;
  /// 2 x L2 until the flush buffer is allocated, then 0 (it is allocated once per process).
  double flush_bytes() const override;
  /// cudaGetLastError() clears a non-sticky error; then a cudaDeviceSynchronize() that still fails means the
  /// context is broken: returns "name: description" of that error.
  std::optional<std::string> sticky_error() override;
  void range_push(const std::string& name) override;
  void range_pop() override;
  void memory_mark() override;
  std::optional<PointMemory> memory_since_mark() override;

  LaunchContext& context() { return ctx_; }

 private:
  int index_;
  LaunchContext ctx_;
  std::size_t l2_bytes_ = 0;
  std::size_t memory_bytes_ = 0;
  std::size_t mark_work_bytes_ = 0;  // DeviceMemory's work bytes at memory_mark()
  double mark_used_bytes_ = 0;       // the device's used bytes (total - free) at memory_mark(); NaN if unknown
  int pinned_cpu_ = -1;              // the host CPU this backend's launches are issued from (pinned at open), -1 if not
  std::unique_ptr<Nvml> nvml_;
  DeviceBuffer flush_;       // 2 x L2, allocated and written once, on first cold-L2 use; read before each cold sample
  DeviceBuffer flush_sink_;  // where the flush kernel's loads go
  StreamBlocker blocker_;
  // Launches a blocked sample queues at most. The driver blocks a launch once its queue is full, which would
  // hold the host until the blocking kernel times out; nvbench calls ~32 safe. Halved on every timeout.
  std::int64_t queue_launches_ = 256;
  DeviceBuffer probe_word_{4, MemoryRole::lab};  // the host probe's round trip copies this word ...
  PinnedBuffer probe_host_{4};                   // ... into this one
};

/// Opens CUDA device `index` for `--device auto|cuda[:N]`. Returns nullptr and sets `why` (CUDA error name
/// and text) when there is no driver (cudaErrorInsufficientDriver), no device (cudaErrorNoDevice), or the
/// index is out of range. Never throws.
std::unique_ptr<Backend> open_cuda_backend(int index, std::string* why);

/// cudaGetDeviceCount, or 0 when it fails (no driver, no device).
int cuda_device_count();

/// The launch context (stream, host-sync counter, kernel marks) of a CUDA backend, for an experiment's CUDA
/// workload factory. @throws PointOutcome(not_supported) when `backend` is not a CUDA backend.
LaunchContext& launch_context(Backend& backend);

}  // namespace labrun
