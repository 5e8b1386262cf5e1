// Process-level replication of a sweep (lab.processes): the sweep runs in K child processes, one after
// another, and their records are pooled point by point. Some variation lives in the process, not the sample:
// on the H200 test machine the GPU-side cost of eager launches and the host's speed moved 5-15% between
// back-to-back processes while holding 1% within each (docs/metrics.md, "Measured on the H200, 2026-11-29"). Samples of
// one process cannot show that; pooling several processes puts it inside every point's distribution (Kalibera and
// Jones, "Rigorous Benchmarking in Reasonable Time", ISMM 2013: repeat at the level where the variation arises).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config.hpp"
#include "point_record.hpp"

namespace labrun {

using Json = nlohmann::ordered_json;

/// Pools the records of K runs of one sweep (`runs[k]` = one process's file as load_results() reads it: a header,
/// then points) into one run: a header, then one point per id in the first run's order.
///
/// Header: the first process's, with `calibration` the element-wise median of the processes' calibrations
/// (numbers; other values from the first), `argv` = `argv`, and `processes` = {count, runs: [{index,
/// created_utc, host_thread_cpu, calibration}]}.
///
/// Point, when every process says ok: the first process's record with `timing` recomputed from the
/// concatenated raw samples (`wall`, `device`, `submit` summaries, `time_s` = pooled device median, or wall
/// without device timing, `median_ci_rel_halfwidth` of it, `host_syncs_per_iteration` = mean), `stop_reason`
/// the common one or `mixed`, `timing.processes` = {count, time_s: [each process's median], spread =
/// max/min − 1}, `device_state.after` from the last process, `warnings` recomputed from the pooled record
/// (point_warnings with `lab`) plus `process_spread` when the spread exceeds 3 × lab.target_rel_ci, and
/// `interpretation` recomputed against the pooled header. Otherwise the first non-ok record, its reason
/// prefixed "process i of K: " unless every process recorded the same status and reason.
///
/// The processes' own records carry no interpretation (lab_pass leaves it to the pool): the pooled point's is
/// computed here, once.
///
/// @throws std::invalid_argument if `runs` is empty, a run has no header first, a point id of the first run
/// is missing from another (the processes ran different sweeps), or an ok point has no samples.
Run pool_processes(const std::vector<Run>& runs, const Json& argv, const LabSettings& lab);

}  // namespace labrun
