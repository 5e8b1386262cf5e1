#include "cuda_backend.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <vector>

#include <nvtx3/nvToolsExt.h>
#include <spdlog/spdlog.h>

#include "audit.hpp"
#include "calibration.cuh"
#include "cublas_gemm.hpp"
#include "cupti_trace.hpp"
#include "nvml.hpp"
#include <labrun/parallel.hpp>
#include "stats.hpp"
#include <labrun/status.hpp>

namespace labrun {

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// How samples are issued and timed. `queue` is set when samples may be queued behind a blocking kernel.
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

// Longest a blocking kernel holds the stream. Queuing a capped batch takes milliseconds; a timeout means the
// driver's launch queue filled up before the batch was queued (the host blocked inside a launch).
constexpr double kBlockTimeout_s = 1.0;

// Sync round trips per host probe; the probe is their median.
constexpr int kProbeTrips = 5;

// Samples of each floor the calibration measures (the event pair, one queued launch, the host sync round trip).
constexpr int kFloorReps = 21;

// The host's speed now: the median wall time of kProbeTrips sync round trips, each an empty kernel, a 4-byte
// device-to-host copy into pinned memory and a stream synchronize: the pattern of a variant that reads a count
// back, with no work of its own. The host's share of a live point's time moves with it.
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

// One iteration as issued eagerly: the variant's launches, then the optional test-aid delay kernel.
void issue_eager(Workload& w, LaunchContext& ctx, double delay_s) {
  w.run();
  if (delay_s > 0) lab_kernels::spin(delay_s, ctx.stream());
}

// Launches per eager iteration from the workload's cost model (a conservative 16 where it has none), plus the
// delay kernel.
std::int64_t eager_launches(const Cost& cost, double delay_s) {
  const std::int64_t n = std::isfinite(cost.launches) ? static_cast<std::int64_t>(std::ceil(cost.launches)) : 16;
  return std::max<std::int64_t>(1, n) + (delay_s > 0 ? 1 : 0);
}

// One eager iteration, audited where lab.audit asks and CUPTI records (docs/integrity.md "The audit"): the CUDA API
// calls it made, judged by audit_iteration (src/lab/audit.hpp). Work that escaped the lab's stream ends the point
// `escaped` (the time would not measure it).
IterationAudit audited_eager(Workload& w, LaunchContext& ctx, const Timing& how) {
  IterationAudit a;
  if (how.audit && how.audited_elsewhere) {  // the pool's first process audited it
    a.findings = *how.audited_elsewhere;
    a.elsewhere = how.audited_where;
    issue_eager(w, ctx, how.delay_s);
    if (a.findings->escaped)
      throw PointOutcome(Status::escaped, *a.findings->escaped + " (found by the audit, in " + a.elsewhere + ")");
    return a;
  }
  CallTracer* tracer = how.audit ? &CallTracer::instance() : nullptr;
  if (!how.audit) a.not_run = "lab.audit: false";
  else if (tracer->unavailable()) a.not_run = *tracer->unavailable();
  static bool told = false;  // stderr says once per process why the audit does not run; every record says it
  if (how.audit && !a.not_run.empty() && !told) {
    told = true;
    spdlog::warn("the audit of each point's CUDA calls does not run: {} (docs/integrity.md \"The audit\")", a.not_run);
  }
  if (!a.not_run.empty()) {
    issue_eager(w, ctx, how.delay_s);
    return a;
  }
  tracer->start(how.launches);
  if (tracer->unavailable()) {  // enabling the callbacks failed: the iteration runs unrecorded
    a.not_run = *tracer->unavailable();
    issue_eager(w, ctx, how.delay_s);
    return a;
  }
  try {
    issue_eager(w, ctx, how.delay_s);
  } catch (...) {
    (void)tracer->stop();
    throw;
  }
  const auto stream = static_cast<TraceStream>(reinterpret_cast<std::uintptr_t>(ctx.stream()));
  const std::vector<TraceCall> calls = tracer->stop();
  a.findings = audit_iteration(calls, stream);
  a.launches = launch_times(calls, tracer->activity(), stream);
  if (a.findings->escaped) throw PointOutcome(Status::escaped, *a.findings->escaped + " (found by the audit)");
  return a;
}

// The audit's syncs and allocations per iteration: each is a host wait the lab did not see through read_to_host (a
// free waits for the device), so the iteration is timed live and counts them.
std::int64_t audited_waits(const IterationAudit& a) {
  if (!a.findings) return 0;
  return static_cast<std::int64_t>(a.findings->syncs.size() + a.findings->allocations.size());
}

class EagerExecutor : public Executor {
 public:
  // `cost`: the workload's cost model, read for its launches and host syncs per iteration.
  EagerExecutor(Workload& w, LaunchContext& ctx, Timing how, const Cost& cost)
      : w_(w), ctx_(ctx), how_(how), launches_(eager_launches(cost, how.delay_s)),
        eager_launches_without_delay_(eager_launches(cost, 0)),
        syncs_seen_(std::isfinite(cost.host_syncs) && cost.host_syncs > 0) {}
  void iterate() override {
    const std::int64_t s0 = ctx_.host_syncs();
    if (!audit_) {  // the first iteration, before any sample is queued behind the blocking kernel
      audit_ = audited_eager(w_, ctx_, how_);
      undeclared_ = audited_waits(*audit_);
      syncs_seen_ += undeclared_;
    } else {
      issue_eager(w_, ctx_, how_.delay_s);
    }
    syncs_seen_ += ctx_.host_syncs() - s0;
  }
  void wait() override { LABRUN_CUDA(cudaStreamSynchronize(ctx_.stream())); }
  bool add_delay(double delay_s) override {
    how_.delay_s += delay_s;
    if (how_.delay_s > 0 && launches_ == eager_launches_without_delay_) ++launches_;  // the spin is one more launch
    return true;
  }
  // An iteration that synchronizes with the host would wait on the blocked stream: such variants (by their
  // cost model, by a sync seen in any earlier iteration, or by the audit's undeclared syncs) are timed live.
  Sample sample(std::int64_t batch) override {
    Sample s = timed(ctx_, batch, how_, launches_, syncs_seen_ == 0, [&] { issue_eager(w_, ctx_, how_.delay_s); });
    s.host_syncs += undeclared_ * s.iterations;
    return s;
  }
  std::optional<IterationAudit> audit() const override { return audit_; }
  std::optional<IterationAudit> audit_again() override {
    if (how_.audited_elsewhere) return std::nullopt;  // audited again there
    auto again = audited_eager(w_, ctx_, how_);
    wait();
    return again;
  }

 private:
  Workload& w_;
  LaunchContext& ctx_;
  Timing how_;
  std::int64_t launches_;
  std::int64_t eager_launches_without_delay_;
  std::int64_t syncs_seen_ = 0;
  std::int64_t undeclared_ = 0;  // the audit's host waits per iteration
  std::optional<IterationAudit> audit_;
};

class GraphExecutor : public Executor {
 public:
  // Captures one iteration into a graph after an eager pre-run (module load, CUB's first launch, pool
  // growth) — temporary storage was allocated when the workload was built (C12).
  GraphExecutor(Workload& w, LaunchContext& ctx, Timing how) : ctx_(ctx), how_(how) {
    // The eager pre-run is audited: a host wait or an allocation cannot be captured, and the audit names it where
    // the capture would end with a CUDA error's name only.
    audit_ = audited_eager(w, ctx, how);
    if (audit_->findings && (!audit_->findings->syncs.empty() || !audit_->findings->allocations.empty())) {
      const auto& f = *audit_->findings;
      std::vector<std::string> calls = f.syncs;
      calls.insert(calls.end(), f.allocations.begin(), f.allocations.end());
      throw PointOutcome(Status::capture_unsupported, "the iteration calls " + AuditFindings::summary(calls) +
                                                          ", which a CUDA graph cannot hold (found by the audit)");
    }
    LABRUN_CUDA(cudaStreamSynchronize(ctx.stream()));
    auto t0 = Clock::now();
    LABRUN_CUDA(cudaStreamBeginCapture(ctx.stream(), cudaStreamCaptureModeThreadLocal));
    try {
      issue_eager(w, ctx, how.delay_s);
    } catch (const CudaError& e) {
      abandon_capture();
      throw PointOutcome(Status::capture_unsupported, std::string(e.name()) +
                                                          ": the variant cannot be captured into a CUDA graph (" +
                                                          e.what() + ")");
    } catch (const std::exception& e) {
      // A variant's own checked call that the capture refused (a host wait or an allocation, with the audit off:
      // lab.audit false, or a sanitizer sweep) invalidates the capture: the variant cannot be captured, not an error.
      cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
      const bool invalidated = cudaStreamIsCapturing(ctx.stream(), &status) == cudaSuccess &&
                               status == cudaStreamCaptureStatusInvalidated;
      abandon_capture();  // never leave the shared stream capturing for the next point
      if (invalidated)
        throw PointOutcome(Status::capture_unsupported,
                           std::string("the variant cannot be captured into a CUDA graph (") + e.what() + ")");
      throw;
    } catch (...) {
      abandon_capture();
      throw;
    }
    const cudaError_t end = cudaStreamEndCapture(ctx.stream(), &graph_);
    if (end != cudaSuccess) {
      if (graph_) cudaGraphDestroy(graph_);
      graph_ = nullptr;
      (void)cudaGetLastError();
      throw PointOutcome(Status::capture_unsupported, std::string(cudaGetErrorName(end)) + ": capture ended invalid");
    }
    capture_s_ = since(t0);
    try {
      t0 = Clock::now();
      LABRUN_CUDA(cudaGraphInstantiate(&exec_, graph_, 0));
      LABRUN_CUDA(cudaGraphUpload(exec_, ctx.stream()));
      LABRUN_CUDA(cudaStreamSynchronize(ctx.stream()));
      instantiate_s_ = since(t0);
      size_t nodes = 0;
      LABRUN_CUDA(cudaGraphGetNodes(graph_, nullptr, &nodes));
      nodes_ = static_cast<std::int64_t>(nodes);
    } catch (...) {
      release();  // the destructor does not run for a constructor that throws
      throw;
    }
  }
  ~GraphExecutor() override { release(); }
  void iterate() override { LABRUN_CUDA(cudaGraphLaunch(exec_, ctx_.stream())); }
  void wait() override { LABRUN_CUDA(cudaStreamSynchronize(ctx_.stream())); }
  // Case C13: events are recorded on the stream outside the graph, around the replays.
  Sample sample(std::int64_t batch) override {
    // A captured graph cannot hold a host synchronization, so replays can always be queued blocked.
    return timed(ctx_, batch, how_, std::max<std::int64_t>(1, nodes_), true,
                 [&] { LABRUN_CUDA(cudaGraphLaunch(exec_, ctx_.stream())); });
  }
  ExecutorSetup setup_record() const override {
    return ExecutorSetup{.capture_time_s = capture_s_, .instantiate_time_s = instantiate_s_, .graph_nodes = nodes_};
  }
  std::optional<IterationAudit> audit() const override { return audit_; }

 private:
  void release() noexcept {
    if (exec_) LABRUN_CUDA_NOTHROW(cudaGraphExecDestroy(exec_));
    if (graph_) LABRUN_CUDA_NOTHROW(cudaGraphDestroy(graph_));
    exec_ = nullptr;
    graph_ = nullptr;
  }

  // Case C11: end the broken capture, drop its graph, clear the error so the next point captures normally.
  void abandon_capture() {
    cudaGraph_t g = nullptr;
    (void)cudaStreamEndCapture(ctx_.stream(), &g);
    if (g) (void)cudaGraphDestroy(g);
    (void)cudaGetLastError();
    (void)cudaStreamSynchronize(ctx_.stream());
    (void)cudaGetLastError();
  }

  LaunchContext& ctx_;
  Timing how_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
  double capture_s_ = 0, instantiate_s_ = 0;
  std::int64_t nodes_ = 0;
  std::optional<IterationAudit> audit_;
};

std::string uuid_text(const cudaUUID_t& u) {
  std::string s = "GPU-";
  char buf[3];
  for (int i = 0; i < 16; ++i) {
    std::snprintf(buf, sizeof buf, "%02x", static_cast<unsigned char>(u.bytes[i]));
    s += buf;
    if (i == 3 || i == 5 || i == 7 || i == 9) s += '-';
  }
  return s;
}

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

/// The host-side test aid for docs/diff.md "Across hosts": with LABRUN_TESTAID_BLOCKING_SYNC=1 the context is
/// created with cudaDeviceScheduleBlockingSync, so every host wait (stream and event synchronization, a
/// device-to-host copy) sleeps until the GPU's interrupt instead of spinning: a slower host path, GPU untouched.
/// Throws std::invalid_argument for any other non-empty value.
bool blocking_sync_requested() {
  const char* v = std::getenv("LABRUN_TESTAID_BLOCKING_SYNC");
  if (v == nullptr || *v == '\0' || std::string(v) == "0") return false;
  if (std::string(v) == "1") return true;
  throw std::invalid_argument(std::string("LABRUN_TESTAID_BLOCKING_SYNC=") + v + ": takes 1 (blocking sync) or 0");
}

/// How the context's host thread waits for the GPU (cudaGetDeviceFlags' schedule bits): auto, spin, yield or
/// blocking (CUDA Runtime API, cudaSetDeviceFlags).
std::string sync_wait_text() {
  unsigned flags = 0;
  if (cudaGetDeviceFlags(&flags) != cudaSuccess) return "unknown";
  switch (flags & cudaDeviceScheduleMask) {
    case cudaDeviceScheduleSpin: return "spin";
    case cudaDeviceScheduleYield: return "yield";
    case cudaDeviceScheduleBlockingSync: return "blocking";
    default: return "auto";
  }
}

int attribute(cudaDeviceAttr a, int dev) {
  int v = 0;
  return cudaDeviceGetAttribute(&v, a, dev) == cudaSuccess ? v : -1;
}

}  // namespace

CudaBackend::CudaBackend(int index) : index_(index), ctx_((LABRUN_CUDA(cudaSetDevice(index)), index)) {
  cudaDeviceProp p{};
  LABRUN_CUDA(cudaGetDeviceProperties(&p, index));
  l2_bytes_ = static_cast<std::size_t>(p.l2CacheSize);
  memory_bytes_ = static_cast<std::size_t>(p.totalGlobalMem);
  nvml_ = std::make_unique<Nvml>(uuid_text(p.uuid));
  pinned_cpu_ = pin_this_thread();
  LABRUN_CUDA(cudaMemset(probe_word_.get(), 0, probe_word_.bytes()));
  // cudaMemset runs on the legacy default stream, which labrun's non-blocking streams do not wait for: done now.
  LABRUN_CUDA(cudaDeviceSynchronize());
}

CudaBackend::~CudaBackend() = default;

Json CudaBackend::device_state() {
  Json s = nvml_->state();
  // The host sync round trip now (case C23's other face: a process left on the GPU made every round trip take
  // milliseconds); held to the run's calibration.sync by point_warnings.
  Timing probe;
  probe.probe_word = &probe_word_;
  probe.probe_host = &probe_host_;
  s["sync_round_trip_time_s"] = host_probe(ctx_, probe);
  return s;
}

void CudaBackend::range_push(const std::string& name) { nvtxRangePushA(name.c_str()); }

void CudaBackend::range_pop() { nvtxRangePop(); }

void CudaBackend::memory_mark() {
  DeviceMemory::reset_peak();
  mark_work_bytes_ = DeviceMemory::held_bytes(MemoryRole::work);
  const auto free = free_memory_bytes();
  mark_used_bytes_ = free ? static_cast<double>(memory_bytes_) - *free : std::nan("");
}

std::optional<PointMemory> CudaBackend::memory_since_mark() {
  const std::size_t peak = DeviceMemory::peak_work_bytes();
  PointMemory m;
  m.peak_work_bytes = peak > mark_work_bytes_ ? peak - mark_work_bytes_ : 0;
  m.input_bytes = DeviceMemory::held_bytes(MemoryRole::input);
  const auto free = free_memory_bytes();
  if (free && std::isfinite(mark_used_bytes_))
    m.device_used_delta_bytes = static_cast<double>(memory_bytes_) - *free - mark_used_bytes_;
  return m;
}

Json CudaBackend::environment() {
  cudaDeviceProp p{};
  LABRUN_CUDA(cudaGetDeviceProperties(&p, index_));
  int driver = 0, runtime = 0;
  LABRUN_CUDA(cudaDriverGetVersion(&driver));
  LABRUN_CUDA(cudaRuntimeGetVersion(&runtime));
  const int mem_khz = attribute(cudaDevAttrMemoryClockRate, index_);
  const int bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, index_);
  Json e;
  e["kind"] = "cuda";
  e.emplace("index", index_);
  e["name"] = p.name;
  e["uuid"] = uuid_text(p.uuid);
  e["compute_capability"] = std::to_string(p.major) + "." + std::to_string(p.minor);
  e["arch"] = "sm_" + std::to_string(p.major) + std::to_string(p.minor);
  e["sm_count"] = p.multiProcessorCount;
  e["l2_bytes"] = p.l2CacheSize;
  e["memory_bytes"] = static_cast<std::int64_t>(p.totalGlobalMem);
  e["ecc_enabled"] = attribute(cudaDevAttrEccEnabled, index_) == 1;
  e["sm_clock_max_hz"] = static_cast<double>(attribute(cudaDevAttrClockRate, index_)) * 1e3;
  e["memory_clock_max_hz"] = static_cast<double>(mem_khz) * 1e3;
  e["memory_bus_bits"] = bus_bits;
  // Double data rate: two transfers per memory clock (CUDA samples' bandwidth formula).
  e["theoretical_bandwidth_Bps"] = 2.0 * static_cast<double>(mem_khz) * 1e3 * bus_bits / 8.0;
  e["driver_version"] = nvml_->driver_version();
  e["driver_cuda_version"] = version_text(driver);
  e["nvml"] = nvml_->available() ? Json("available") : Json(nvml_->why_unavailable());
  e["state_at_start"] = nvml_->state();
  e["runtime_version"] = version_text(runtime);
  e["host_thread_cpu"] = pinned_cpu_;
  e["sync_wait"] = sync_wait_text();
  e["pci_bus_id"] = [&] {
    char bus[32] = {0};
    return cudaDeviceGetPCIBusId(bus, sizeof bus, index_) == cudaSuccess ? std::string(bus) : std::string("unknown");
  }();
  return e;
}

Json CudaBackend::calibrate() {
  const std::size_t bytes = std::size_t{1} << 30;
  DeviceBuffer a(bytes), b(bytes);
  LABRUN_CUDA(cudaMemsetAsync(a.get(), 0x5a, bytes, ctx_.stream()));
  LABRUN_CUDA(cudaMemsetAsync(b.get(), 0x3c, bytes, ctx_.stream()));
  DeviceBuffer sink(static_cast<std::size_t>(lab_kernels::read_stream_sink_words(ctx_.sm_count())) * 4);
  Event e0, e1;
  auto median_of = [&](int reps, const std::function<void()>& issue) {
    for (int i = 0; i < 3; ++i) issue();
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
      e0.record(ctx_.stream());
      issue();
      e1.record(ctx_.stream());
      e1.synchronize();
      t.push_back(e1.seconds_since(e0));
    }
    return summarize(t).median;
  };
  const double copy_s = median_of(10, [&] {
    LABRUN_CUDA(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, ctx_.stream()));
  });
  const double read_s = median_of(10, [&] {
    lab_kernels::read_stream(a.get(), bytes, sink.as<unsigned int>(), ctx_.sm_count(), ctx_.stream());
  });
  constexpr int kLaunches = 1000;
  const double eager_s = median_of(
                             5,
                             [&] {
    for (int i = 0; i < kLaunches; ++i) lab_kernels::empty(ctx_.stream());
                             }) /
      kLaunches;
  // The GPU side of an eager launch: empty kernels queued behind the blocking kernel, so the host's launch
  // rate is out of the time. What eager points made of short kernels pay per launch when timed blocked.
  Timing queue;
  queue.blocker = &blocker_;
  queue.queue_launches = &queue_launches_;
  std::int64_t queued = 0;
  std::vector<double> per_launch;
  for (int i = 0; i < 5; ++i) {
    const Sample q = timed(ctx_, 200, queue, 1, true, [&] { lab_kernels::empty(ctx_.stream()); });
    queued = q.iterations;
    per_launch.push_back(*q.device_time_s / static_cast<double>(q.iterations));
  }
  const double queued_s = summarize(per_launch).median;
  // Blocked samples of nothing and of one empty kernel: the launch path's own figures. They are not a floor to take
  // out of a point's event time, which agrees with Nsight Compute as it is (docs/metrics.md "Kernel time").
  std::vector<double> pair, one;
  for (int i = 0; i < kFloorReps; ++i) {
    pair.push_back(*timed(ctx_, 1, queue, 1, true, [] {}).device_time_s);
    one.push_back(*timed(ctx_, 1, queue, 1, true, [&] { lab_kernels::empty(ctx_.stream()); }).device_time_s);
  }
  const double pair_s = summarize(pair).median, one_s = summarize(one).median;
  // The host sync round trip as this process finds it at start: the reference a point's round trips are held to.
  Timing probe;
  probe.probe_word = &probe_word_;
  probe.probe_host = &probe_host_;
  std::vector<double> trips;
  for (int i = 0; i < kFloorReps; ++i) trips.push_back(host_probe(ctx_, probe));
  const double sync_s = summarize(trips).median;
  cudaGraph_t graph = nullptr;
  cudaGraphExec_t exec = nullptr;
  LABRUN_CUDA(cudaStreamBeginCapture(ctx_.stream(), cudaStreamCaptureModeThreadLocal));
  for (int i = 0; i < kLaunches; ++i) lab_kernels::empty(ctx_.stream());
  LABRUN_CUDA(cudaStreamEndCapture(ctx_.stream(), &graph));
  LABRUN_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  const double graph_s = median_of(5, [&] { LABRUN_CUDA(cudaGraphLaunch(exec, ctx_.stream())); }) / kLaunches;
  LABRUN_CUDA(cudaGraphExecDestroy(exec));
  LABRUN_CUDA(cudaGraphDestroy(graph));
  DeviceBuffer fma_sink(lab_kernels::fma_chain_sink_floats(ctx_.sm_count()) * sizeof(float));
  double fma_flop = 0;
  const double fma_s = median_of(5, [&] {
    fma_flop = lab_kernels::fma_chain(fma_sink.as<float>(), ctx_.sm_count(), 1 << 14, ctx_.stream());
  });
  a = DeviceBuffer();  // the GEMM needs the memory more than the copy buffers do
  b = DeviceBuffer();
  Json c;
  c["fp32_fma"] = {{"flop", fma_flop},
                   {"time_s", fma_s},
                   {"flop_per_s", fma_flop / fma_s},
                   {"method", "8 independent FMA chains per thread, 8 blocks of 256 per SM, 16384 steps; median of 5"}};
  c["bf16_gemm"] = cublas_bf16_gemm(8192, 10, ctx_.stream());
  c["copy"] = {{"bytes", 2 * bytes},
               {"time_s", copy_s},
               {"bandwidth_Bps", 2.0 * bytes / copy_s},
               {"method", "cudaMemcpyAsync device-to-device of 1 GiB; bytes read + written; median of 10"}};
  c["read"] = {{"bytes", bytes},
               {"time_s", read_s},
               {"bandwidth_Bps", bytes / read_s},
               {"method", "16-byte streaming loads of 1 GiB, 8 blocks of 256 per SM; median of 10"}};
  c["launch"] = {{"eager_time_s", eager_s},
                 {"graph_time_s", graph_s},
                 {"eager_queued_time_s", queued_s},
                 {"method",
                  "1000 empty <<<1,1>>> kernels back to back, eager and replayed from one graph; per launch. "
                  "eager_queued: " +
                      std::to_string(queued) +
                      " empty kernels queued behind a blocking "
                      "kernel (GPU side only); median of 5"}};
  c["launch"]["event_pair_time_s"] = pair_s;
  c["launch"]["one_queued_time_s"] = one_s;
  c["launch"]["floor_method"] =
      "event_pair: two events queued behind a blocking kernel with nothing between; one_queued: the same with one "
      "empty kernel between; device time; median of " +
      std::to_string(kFloorReps);
  c["sync"] = {{"round_trip_time_s", sync_s},
               {"method",
                "an empty kernel, a 4-byte device-to-host copy into pinned memory and a stream "
                "synchronize, host wall time; median of " +
                    std::to_string(kFloorReps) + " probes of " + std::to_string(kProbeTrips) + " round trips each"}};
  return c;
}

std::optional<std::string> CudaBackend::mode_unsupported(const std::string& mode) const {
  if (mode == "eager" || mode == "graph") return std::nullopt;
  return "unknown mode '" + mode + "'";
}

std::unique_ptr<Executor> CudaBackend::executor(Workload& workload, const ExecOptions& options) {
  Timing how;
  how.synchronized = options.synchronized;
  how.delay_s = options.delay_s;
  how.probe_word = &probe_word_;
  how.probe_host = &probe_host_;
  how.audit = options.audit;
  how.launches = options.launches;
  how.audited_elsewhere = options.audited_elsewhere;
  how.audited_where = options.audited_where;
  if (options.blocking) {
    how.blocker = &blocker_;
    how.queue_launches = &queue_launches_;
  }
  if (options.cold_l2) {
    if (!flush_.get()) {
      flush_ = DeviceBuffer((2 * l2_bytes_ + 15) / 16 * 16, MemoryRole::lab);
      flush_sink_ = DeviceBuffer(static_cast<std::size_t>(lab_kernels::read_stream_sink_words(ctx_.sm_count())) * 4,
                                 MemoryRole::lab);
      LABRUN_CUDA(cudaMemsetAsync(flush_.get(), 0x5a, flush_.bytes(), ctx_.stream()));  // written once, read per sample
    }
    how.flush = &flush_;
    how.flush_sink = &flush_sink_;
  }
  if (options.mode == "graph") return std::make_unique<GraphExecutor>(workload, ctx_, how);
  return std::make_unique<EagerExecutor>(workload, ctx_, how, workload.cost());
}

std::optional<double> CudaBackend::free_memory_bytes() const {
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) {
    (void)cudaGetLastError();
    return std::nullopt;
  }
  return static_cast<double>(free);
}

double CudaBackend::flush_bytes() const { return flush_.get() ? 0.0 : 2.0 * static_cast<double>(l2_bytes_); }

std::optional<std::string> CudaBackend::sticky_error() {
  (void)cudaGetLastError();
  const cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) return std::nullopt;
  return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
}

std::optional<std::vector<KernelTime>> CudaBackend::kernel_breakdown(Workload& workload) {
  constexpr int kReps = 5;
  std::vector<std::vector<std::tuple<std::string, double, double>>> runs;
  for (int r = 0; r < kReps; ++r) {
    ctx_.begin_marks();
    try {
      workload.run();
    } catch (...) {
      (void)ctx_.end_marks();  // never leave marking on for later points and their timed samples
      throw;
    }
    runs.push_back(ctx_.end_marks());
  }
  std::vector<KernelTime> out;
  if (runs.empty() || runs[0].empty()) return std::nullopt;
  for (std::size_t i = 0; i < runs[0].size(); ++i) {
    std::vector<double> t;
    for (const auto& run : runs)
      if (i < run.size()) t.push_back(std::get<2>(run[i]));
    const double med = summarize(t).median;
    const double bytes = std::get<1>(runs[0][i]);
    out.push_back(KernelTime{.op = std::get<0>(runs[0][i]),
                             .bytes = bytes,
                             .time_s = med,
                             .bandwidth_Bps = med > 0 ? bytes / med : std::numeric_limits<double>::quiet_NaN()});
  }
  return out;
}

int cuda_device_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return n;
}

std::unique_ptr<Backend> open_cuda_backend(int index, std::string* why) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    (void)cudaGetLastError();
    *why = std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
    // Without any NVIDIA driver the runtime also answers cudaErrorInsufficientDriver.
    if (e == cudaErrorInsufficientDriver) *why = "no usable NVIDIA driver (" + *why + ")";
    if (e == cudaErrorNoDevice) *why = "no CUDA device (" + *why + ")";
    return nullptr;
  }
  if (index >= count) {
    *why = "device " + std::to_string(index) + " requested, " + std::to_string(count) + " present";
    return nullptr;
  }
  try {
    LABRUN_CUDA(cudaSetDevice(index));
    if (blocking_sync_requested()) LABRUN_CUDA(cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync));
    LABRUN_CUDA(cudaFree(nullptr));  // create the context now, so a broken device fails here
    return std::make_unique<CudaBackend>(index);
  } catch (const std::exception& ex) {
    *why = ex.what();
    return nullptr;
  }
}

LaunchContext& launch_context(Backend& backend) {
  auto* cuda = dynamic_cast<CudaBackend*>(&backend);
  if (!cuda)
    throw PointOutcome(Status::not_supported, "a CUDA implementation needs the CUDA backend, not " + backend.name());
  return cuda->context();
}

}  // namespace labrun
