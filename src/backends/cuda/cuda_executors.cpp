// The CUDA backend's eager and graph executors (cuda_executors.hpp), and the audit of an eager iteration.
#include "cuda_executors.hpp"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "audit.hpp"
#include "calibration.cuh"
#include "cupti_trace.hpp"
#include <labrun/status.hpp>

namespace labrun {

namespace {

using cuda_timing::Clock;
using cuda_timing::since;
using cuda_timing::timed;
using cuda_timing::Timing;

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

}  // namespace

std::unique_ptr<Executor> make_eager_executor(Workload& w, LaunchContext& ctx, const Timing& how, const Cost& cost) {
  return std::make_unique<EagerExecutor>(w, ctx, how, cost);
}

std::unique_ptr<Executor> make_graph_executor(Workload& w, LaunchContext& ctx, const Timing& how) {
  return std::make_unique<GraphExecutor>(w, ctx, how);
}

}  // namespace labrun
