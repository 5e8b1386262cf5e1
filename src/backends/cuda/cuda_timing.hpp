// How the CUDA backend times a sample (shared by its executors, its calibration and its device state): a batch of
// iterations between two events, synchronized with the host's wall clock, optionally queued behind a blocking kernel
// and after a cold-L2 flush; and the host probe, the sync round trip read after every live sample.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "backend.hpp"
#include "cuda_runtime.hpp"
#include "trace_call.hpp"

namespace labrun::cuda_timing {

using Clock = std::chrono::steady_clock;

/// Seconds of the steady clock since `t0`.
inline double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

/// How samples are issued and timed. `queue` is set when samples may be queued behind a blocking kernel.
struct Timing {
  bool synchronized = true;
  DeviceBuffer* flush = nullptr;  // set for a cold L2: read before the sample, outside the timed region
  DeviceBuffer* flush_sink = nullptr;
  double delay_s = 0;
  StreamBlocker* blocker = nullptr;          // lab.blocking_kernel: the backend's blocker
  std::int64_t* queue_launches = nullptr;    // launches queued behind it at most (learned, shared by the backend)
  const DeviceBuffer* probe_word = nullptr;  // set to probe the host's speed after every live sample
  const PinnedBuffer* probe_host = nullptr;
  bool audit = true;                               // lab.audit
  bool launches = false;                           // lab.launches
  std::optional<AuditFindings> audited_elsewhere;  // ExecOptions::audited_elsewhere
  std::string audited_where;
};

/// Sync round trips per host probe; the probe is their median.
constexpr int kProbeTrips = 5;

/// The host's speed now: the median wall time, in seconds, of kProbeTrips sync round trips, each an empty kernel, a
/// 4-byte device-to-host copy into pinned memory (`how.probe_word` into `how.probe_host`, both set) and a stream
/// synchronize: the pattern of a variant that reads a count back, with no work of its own. The host's share of a live
/// point's time moves with it. @throws CudaError on a failed copy or synchronize.
double host_probe(LaunchContext& ctx, const Timing& how);

/// Times up to `batch` calls of `issue` between two events on the stream, with the host wall clock synchronized
/// at both ends (stream drained before the start; stop event waited for before the wall clock is read).
/// With a blocker and `blockable` (no host synchronization inside an iteration), the events and the batch are
/// queued while a blocking kernel holds the stream, then released: the events time the GPU's execution of the
/// queued work, and the host's enqueue time is returned as submit_time_s. The batch is capped so that at most
/// *queue_launches launches wait in the queue; a blocker that times out halves that cap and the sample is
/// taken again (nvbench warns the safe depth is device- and driver-dependent). A live sample is followed by a
/// host probe when `how` has its buffers. Times in seconds.
/// @throws CudaError on a failed CUDA call; std::runtime_error when the blocker times out with one launch queued.
Sample timed(LaunchContext& ctx, std::int64_t batch, const Timing& how, std::int64_t launches_per_iteration,
             bool blockable, const std::function<void()>& issue);

}  // namespace labrun::cuda_timing
