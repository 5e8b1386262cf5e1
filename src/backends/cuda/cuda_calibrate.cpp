// CudaBackend::calibrate (cuda_backend.hpp): the device's measured ceilings (copy and read bandwidth, FP32 FMA and
// bf16 GEMM throughput) and launch costs (eager, graph and queued launches, the blocked sample's floors, the host
// sync round trip), each with how it was measured.
#include "cuda_backend.hpp"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "calibration.cuh"
#include "cublas_gemm.hpp"
#include "cuda_timing.hpp"
#include "stats.hpp"

namespace labrun {

namespace {

using cuda_timing::host_probe;
using cuda_timing::kProbeTrips;
using cuda_timing::timed;
using cuda_timing::Timing;

// Samples of each floor the calibration measures (the event pair, one queued launch, the host sync round trip).
constexpr int kFloorReps = 21;

// The bandwidth buffers' size, bytes.
constexpr std::size_t kCopyBytes = std::size_t{1} << 30;

// Empty kernels per eager or graph launch sample.
constexpr int kLaunches = 1000;

// What calibrate() measured, seconds unless named otherwise.
struct Measured {
  double copy_s = 0, read_s = 0;    // a device-to-device copy of kCopyBytes; a streaming read of them
  double eager_s = 0, graph_s = 0;  // per launch, eager and replayed from one graph
  double queued_s = 0;              // per launch, queued behind the blocking kernel (GPU side)
  std::int64_t queued = 0;          // how many were queued
  double pair_s = 0, one_s = 0;     // blocked samples of nothing and of one empty kernel
  double sync_s = 0;                // the host sync round trip
  double fma_s = 0, fma_flop = 0;   // the FMA chains' time and flop
};

// The median event time of calls of `issue` on the context's stream, each between two events, after 3 untimed.
class EventClock {
 public:
  explicit EventClock(LaunchContext& ctx) : ctx_(ctx) {}
  double median_of(int reps, const std::function<void()>& issue) {
    for (int i = 0; i < 3; ++i) issue();
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      e0_.record(ctx_.stream());
      issue();
      e1_.record(ctx_.stream());
      e1_.synchronize();
      t.push_back(e1_.seconds_since(e0_));
    }
    return summarize(t).median;
  }

 private:
  LaunchContext& ctx_;
  Event e0_, e1_;
};

// The GPU side of an eager launch: empty kernels queued behind the blocking kernel, so the host's launch
// rate is out of the time. What eager points made of short kernels pay per launch when timed blocked.
void measure_queued_launch(LaunchContext& ctx, const Timing& queue, Measured& m) {
  std::vector<double> per_launch;
  for (int i = 0; i < 5; ++i) {
    const Sample q = timed(ctx, 200, queue, 1, true, [&] { lab_kernels::empty(ctx.stream()); });
    m.queued = q.iterations;
    per_launch.push_back(*q.device_time_s / static_cast<double>(q.iterations));
  }
  m.queued_s = summarize(per_launch).median;
}

// Blocked samples of nothing and of one empty kernel: the launch path's own figures. They are not a floor to take
// out of a point's event time, which agrees with Nsight Compute as it is (docs/metrics.md "Kernel time").
void measure_floors(LaunchContext& ctx, const Timing& queue, Measured& m) {
  std::vector<double> pair, one;
  for (int i = 0; i < kFloorReps; ++i) {
    pair.push_back(*timed(ctx, 1, queue, 1, true, [] {}).device_time_s);
    one.push_back(*timed(ctx, 1, queue, 1, true, [&] { lab_kernels::empty(ctx.stream()); }).device_time_s);
  }
  m.pair_s = summarize(pair).median;
  m.one_s = summarize(one).median;
}

// Per launch: kLaunches empty kernels captured into one graph, replayed.
double graph_launch_time(LaunchContext& ctx, EventClock& clock) {
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  LABRUN_CUDA(cudaStreamBeginCapture(ctx.stream(), cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kLaunches; ++i) lab_kernels::empty(ctx.stream());
  LABRUN_CUDA(cudaStreamEndCapture(ctx.stream(), &graph));
  LABRUN_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  const double graph_s = clock.median_of(5, [&] { LABRUN_CUDA(cudaGraphLaunch(exec, ctx.stream())); }) / kLaunches;
  LABRUN_CUDA(cudaGraphExecDestroy(exec));
  LABRUN_CUDA(cudaGraphDestroy(graph));
  return graph_s;
}

// The calibration record: what `m` holds, with `bf16_gemm` (cublas_bf16_gemm's record), each with its method.
Json calibration_record(const Measured& m, Json bf16_gemm) {
  const std::size_t bytes = kCopyBytes;
  Json c;
  c["fp32_fma"] = {{"flop", m.fma_flop},
                   {"time_s", m.fma_s},
                   {"flop_per_s", m.fma_flop / m.fma_s},
                   {"method", "8 independent FMA chains per thread, 8 blocks of 256 per SM, 16384 steps; median of 5"}};
  c["bf16_gemm"] = std::move(bf16_gemm);
  c["copy"] = {{"bytes", 2 * bytes},
               {"time_s", m.copy_s},
               {"bandwidth_Bps", 2.0 * bytes / m.copy_s},
               {"method", "cudaMemcpyAsync device-to-device of 1 GiB; bytes read + written; median of 10"}};
  c["read"] = {{"bytes", bytes},
               {"time_s", m.read_s},
               {"bandwidth_Bps", bytes / m.read_s},
               {"method", "16-byte streaming loads of 1 GiB, 8 blocks of 256 per SM; median of 10"}};
  c["launch"] = {{"eager_time_s", m.eager_s},
                 {"graph_time_s", m.graph_s},
                 {"eager_queued_time_s", m.queued_s},
                 {"method",
                  "1000 empty <<<1,1>>> kernels back to back, eager and replayed from one graph; per launch. "
                  "eager_queued: " +
                      std::to_string(m.queued) +
                      " empty kernels queued behind a blocking "
                      "kernel (GPU side only); median of 5"}};
  c["launch"]["event_pair_time_s"] = m.pair_s;
  c["launch"]["one_queued_time_s"] = m.one_s;
  c["launch"]["floor_method"] =
      "event_pair: two events queued behind a blocking kernel with nothing between; one_queued: the same with one "
      "empty kernel between; device time; median of " +
      std::to_string(kFloorReps);
  c["sync"] = {{"round_trip_time_s", m.sync_s},
               {"method",
                "an empty kernel, a 4-byte device-to-host copy into pinned memory and a stream "
                "synchronize, host wall time; median of " +
                    std::to_string(kFloorReps) + " probes of " + std::to_string(kProbeTrips) + " round trips each"}};
  return c;
}

}  // namespace

Json CudaBackend::calibrate() {
  const std::size_t bytes = kCopyBytes;
  DeviceBuffer a(bytes), b(bytes);
  LABRUN_CUDA(cudaMemsetAsync(a.get(), 0x5a, bytes, ctx_.stream()));
  LABRUN_CUDA(cudaMemsetAsync(b.get(), 0x3c, bytes, ctx_.stream()));
  DeviceBuffer sink(static_cast<std::size_t>(lab_kernels::read_stream_sink_words(ctx_.sm_count())) * 4);
  EventClock clock(ctx_);
  Measured m;
  m.copy_s = clock.median_of(10, [&] {
    LABRUN_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, ctx_.stream()));
  });
  m.read_s = clock.median_of(10, [&] {
    lab_kernels::read_stream(a.get(), bytes, sink.as<unsigned int>(), ctx_.sm_count(), ctx_.stream());
  });
  m.eager_s = clock.median_of(5, [&] {
    for (int i = 0; i < kLaunches; ++i) lab_kernels::empty(ctx_.stream());
  }) / kLaunches;
  Timing queue;
  queue.blocker = &blocker_;
  queue.queue_launches = &queue_launches_;
  measure_queued_launch(ctx_, queue, m);
  measure_floors(ctx_, queue, m);
  // The host sync round trip as this process finds it at start: the reference a point's round trips are held to.
  Timing probe;
  probe.probe_word = &probe_word_;
  probe.probe_host = &probe_host_;
  std::vector<double> trips;
  for (int i = 0; i < kFloorReps; ++i) trips.push_back(host_probe(ctx_, probe));
  m.sync_s = summarize(trips).median;
  m.graph_s = graph_launch_time(ctx_, clock);
  DeviceBuffer fma_sink(lab_kernels::fma_chain_sink_floats(ctx_.sm_count()) * sizeof(float));
  m.fma_s = clock.median_of(5, [&] {
    m.fma_flop = lab_kernels::fma_chain(fma_sink.as<float>(), ctx_.sm_count(), 1 << 14, ctx_.stream());
  });
  a = DeviceBuffer();  // the GEMM needs the memory more than the copy buffers do
  b = DeviceBuffer();
  return calibration_record(m, cublas_bf16_gemm(8192, 10, ctx_.stream()));
}

}  // namespace labrun
