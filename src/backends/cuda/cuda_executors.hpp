// The CUDA backend's executors: eager (the variant's launches issued each iteration, the first one audited) and
// CUDA graph (one iteration captured after an audited eager pre-run, then replayed), both timed by cuda_timing.hpp.
#pragma once

#include <memory>

#include "backend.hpp"
#include "cuda_runtime.hpp"
#include "cuda_timing.hpp"

namespace labrun {

/// An executor that issues `w`'s iterations eagerly on `ctx`'s stream, timed as `how` says; its first iteration is
/// audited (docs/integrity.md "The audit"). `cost`: the workload's cost model, read for its launches and host syncs
/// per iteration. Never throws itself; the audit's PointOutcome(escaped) comes with the first iterate().
std::unique_ptr<Executor> make_eager_executor(Workload& w, LaunchContext& ctx, const cuda_timing::Timing& how,
                                              const Cost& cost);

/// An executor that captures one iteration of `w` into a CUDA graph after an audited eager pre-run and replays it
/// on `ctx`'s stream, timed as `how` says.
/// @throws PointOutcome(capture_unsupported) when the iteration cannot be captured (a host wait or an allocation, a
/// refused call), PointOutcome(escaped) as the audit finds it, CudaError when instantiating the graph fails.
std::unique_ptr<Executor> make_graph_executor(Workload& w, LaunchContext& ctx, const cuda_timing::Timing& how);

}  // namespace labrun
