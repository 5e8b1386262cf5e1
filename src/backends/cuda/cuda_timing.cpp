// The CUDA backend's sample timing (cuda_timing.hpp): the event-timed batch, blocked or live, and the host probe.
#include "cuda_timing.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>

#include "calibration.cuh"

namespace labrun::cuda_timing {

namespace {

// Longest a blocking kernel holds the stream. Queuing a capped batch takes milliseconds; a timeout means the
// driver's launch queue filled up before the batch was queued (the host blocked inside a launch).
constexpr double kBlockTimeout_s = 1.0;

}  // namespace

double host_probe(LaunchContext& ctx, const Timing& how) {
  std::array<double, kProbeTrips> trips{};
  for (double& t : trips) {
    const auto t0 = Clock::now();
    lab_kernels::empty(ctx.stream());
    LABRUN_CUDA(
        cudaMemcpyAsync(how.probe_host->as<void>(), how.probe_word->get(), 4, cudaMemcpyDeviceToHost, ctx.stream()));
    LABRUN_CUDA(cudaStreamSynchronize(ctx.stream()));
    t = since(t0);
  }
  std::nth_element(trips.begin(), trips.begin() + kProbeTrips / 2, trips.end());
  return trips[kProbeTrips / 2];
}

// Times up to `batch` calls of `issue` between two events on the stream, with the host wall clock synchronized
// at both ends (stream drained before the start; stop event waited for before the wall clock is read).
// With a blocker and `blockable` (no host synchronization inside an iteration), the events and the batch are
// queued while a blocking kernel holds the stream, then released: the events time the GPU's execution of the
// queued work, and the host's enqueue time is returned as submit_time_s. The batch is capped so that at most
// *queue_launches launches wait in the queue; a blocker that times out halves that cap and the sample is
// taken again (nvbench warns the safe depth is device- and driver-dependent). A live sample is followed by a
// host probe when `how` has its buffers.
Sample timed(LaunchContext& ctx, std::int64_t batch, const Timing& how, std::int64_t launches_per_iteration,
             bool blockable, const std::function<void()>& issue) {
  Event& start = ctx.sample_start();
  Event& stop = ctx.sample_stop();
  const bool blocked = how.synchronized && how.blocker && blockable;
  for (;;) {
    Sample s;
    s.iterations = blocked ? std::clamp(*how.queue_launches / std::max<std::int64_t>(1, launches_per_iteration),
                                        std::int64_t{1}, batch)
                           : batch;
    if (how.flush)
      lab_kernels::l2_flush(how.flush->get(), how.flush->bytes(), how.flush_sink->as<unsigned int>(), ctx.sm_count(),
                            ctx.stream());
    LABRUN_CUDA(cudaStreamSynchronize(ctx.stream()));
    const std::int64_t syncs0 = ctx.host_syncs();
    const auto t0 = Clock::now();
    if (!how.synchronized) {
      // Teaching demo of the classic trap: a host clock around enqueued work measures the enqueue.
      for (std::int64_t i = 0; i < s.iterations; ++i) issue();
      s.wall_time_s = since(t0);
      LABRUN_CUDA(cudaStreamSynchronize(ctx.stream()));
    } else if (blocked) {
      how.blocker->block(ctx.stream(), kBlockTimeout_s);
      const auto t1 = Clock::now();
      start.record(ctx.stream());
      for (std::int64_t i = 0; i < s.iterations; ++i) issue();
      stop.record(ctx.stream());
      s.submit_time_s = since(t1);
      how.blocker->unblock();
      stop.synchronize();
      s.wall_time_s = since(t0);
      s.device_time_s = stop.seconds_since(start);
      if (how.blocker->timed_out()) {
        if (*how.queue_launches <= 1)
          throw std::runtime_error(
              "the blocking kernel timed out with one launch queued behind it; set "
              "lab.blocking_kernel: false");
        *how.queue_launches /= 2;  // the sample is void: the host stalled inside a launch while the queue was held
        continue;
      }
    } else {
      start.record(ctx.stream());
      for (std::int64_t i = 0; i < s.iterations; ++i) issue();
      stop.record(ctx.stream());
      stop.synchronize();
      s.wall_time_s = since(t0);
      s.device_time_s = stop.seconds_since(start);
    }
    s.host_syncs = ctx.host_syncs() - syncs0;
    if (how.synchronized && !blocked && how.probe_word) s.host_probe_time_s = host_probe(ctx, how);  // live only
    return s;
  }
}

}  // namespace labrun::cuda_timing
