// The lab pass: the fixed sequence of phases every point goes through, and the sweep driver.
//   environment -> setup -> warmup -> correctness -> timing -> integrity -> interpretation (docs/integrity.md)
// A phase ends the pass early with a status (PointOutcome); a failing point never stops the sweep.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include "config.hpp"
#include <labrun/point.hpp>
#include "phase.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "registry.hpp"

namespace labrun {

/// The record a point starts with (identity, backend name, status "error" until a phase sets it): also what a
/// supervisor writes for a point whose worker crashed or hung (status crashed/timeout).
PointRecord new_point_record(const Point& point, const std::string& backend_name);

/// A point's axes as a record writes them (`axes`): {name: value}, integers as integers, reals as json_real().
Json axes_json(const Point& point);

/// Runs one point's lab pass on `backend` and returns its record (docs/records.md). `header` is the run's
/// record header (make_header), whose calibration the interpretation reads; without one the bound is
/// `unknown`; a header with `process` (a process of a pooled lab.processes run) leaves the interpretation to
/// the pool. Never throws for a point-level failure: the status says what happened ("error" with the message
/// for the unexpected).
PointRecord lab_pass(const Point& point, const RegisteredExperiment& experiment, Backend& backend,
                     const LabSettings& lab, const Json& header = Json());

/// lab_pass() as the JSON line a result file holds (to_json of the record): for tests and tools.
Json run_point(const Point& point, const RegisteredExperiment& experiment, Backend& backend, const LabSettings& lab,
               const Json& header = Json());

/// Rates the host-backend time estimate assumes (a slow 2-core machine, one thread per variant): an
/// estimated iteration time is bytes / kHostEstimateBandwidth_Bps + flop / kHostEstimateFlopPerS.
inline constexpr double kHostEstimateBandwidth_Bps = 2e9;
inline constexpr double kHostEstimateFlopPerS = 5e8;

/// Why a point with estimate `e` must not run on `backend` (nullopt: it may): on the host, a working set over
/// lab.host_max_bytes or an estimated iteration time over lab.host_max_time_s; on any backend, a working set
/// over 90% of its memory (Backend::memory_bytes).
std::optional<std::string> over_budget(const PointEstimate& e, const Backend& backend, const LabSettings& lab);

/// Why a point with estimate `e` must not allocate now (nullopt: it may): its footprint, the working set plus
/// `extra_bytes` (the L2 flush buffer of a cold point, not yet allocated), exceeds the backend's free memory
/// (Backend::free_memory_bytes; no check where that is unknown). The reason names both numbers.
std::optional<std::string> over_free_memory(const PointEstimate& e, double extra_bytes, const Backend& backend);

/// Warnings of a finished point (docs/records.md): noise above target when sampling stopped, fewer samples
/// than asked, an L2-resident working set in hot mode, throttle reasons, another process on the device
/// (`shared_device`), clocks changed during timing, and `slow_sync`: a host sync round trip before or after timing
/// (device_state.*.sync_round_trip_time_s) at kSlowSyncFactor times `calibrated_sync_s` or more (the run's
/// calibration.sync.round_trip_time_s, seconds; NaN: not checked).
std::vector<Warning> point_warnings(const PointRecord& record, const LabSettings& lab,
                                    std::optional<double> cache_bytes,
                                    double calibrated_sync_s = std::numeric_limits<double>::quiet_NaN());

/// How many times the calibrated sync round trip a point's round trip may take before it is `slow_sync` (issue of
/// case C23: a process left on the GPU made round trips of 1.2-2.4 ms against 10-12 us calibrated).
inline constexpr double kSlowSyncFactor = 3.0;

/// What the lab cannot check on the device `device` (a header's environment.device) describes, as header warnings of
/// kind `nvml`: without NVML, the tenant, throttle and clock checks; with NVML that cannot list processes, the tenant
/// check (case C23). Empty for a device that allows every check, and for the host backend.
std::vector<Warning> unchecked_device(const Json& device);

/// The record header: schema version, argv, config (path, sha256, text), build, host and device environment,
/// calibration, lab settings.
Json make_header(const SweepConfig& config, const std::vector<std::string>& argv, Backend& backend,
                 const Json& calibration, std::size_t point_count);

/// Told when a point (by id) enters a phase (kPhases, in order: src/records/phase.hpp), then Phase::done once its
/// record went to the sink. A worker forwards these to its supervisor, which attributes a crash or a hang to the
/// point and phase last named (src/run/supervisor.hpp).
using PhaseListener = std::function<void(const std::string& point_id, Phase phase)>;

/// Thrown by run_sweep() after it wrote a `device_fault` point: the device context is lost (a sticky CUDA
/// error), so no later point can run in this process. what() is the point's reason.
class DeviceFault : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The audits of a lab.processes pool's first process, for its later processes: they take a point's findings from
/// here (ExecOptions::audited_elsewhere) instead of attaching CUPTI, which once attached stays in the process and
/// slows its later graph launches and host waits (docs/integrity.md "The audit"). A point not here is audited.
struct PoolAudits {
  std::string from;                             ///< "process 1 of 5 of the pool"
  std::map<std::string, AuditFindings> by_key;  ///< Integrity::audit_found of each point that has it, by key
};

/// The PoolAudits of `first`, the records of a pool's first process (`count` processes): every point whose
/// integrity has audit_found.
PoolAudits pool_audits(const std::vector<PointRecord>& first, int count);

/// Runs every point, writing each record through `sink` as soon as it finishes (a group of lab.interleave
/// points finishes together); `progress` is told after each, `listener` at each phase. Returns the records
/// without their raw wall samples (for the summary table).
/// @throws Interrupted (src/base/interrupt.hpp) between samples or points once SIGINT/SIGTERM arrived: the points
/// in progress are abandoned, unwritten. @throws DeviceFault after writing a point that broke the device; the
/// rest of its interleave group is abandoned, unwritten.
std::vector<PointRecord> run_sweep(const std::vector<Point>& points, const RegisteredExperiment& experiment,
                                   Backend& backend, const LabSettings& lab, const Json& header,
                                   const std::function<void(const PointRecord&)>& sink,
                                   const std::function<void(std::size_t, std::size_t, const PointRecord&)>& progress,
                                   const PhaseListener& listener = {}, const PoolAudits& pool = {});

/// The test aid LABRUN_TESTAID_SLOWER=VARIANT:SHARE (docs/diff.md "Across GPUs"): every eager point of VARIANT is made
/// slower by SHARE of its own device time per iteration (a spin kernel, plus that kernel's launch).
struct SlowerAid {
  std::string variant;
  double share = 0;  ///< in (0, 1]
};
/// The aid as LABRUN_TESTAID_SLOWER sets it; nullopt when unset or empty. @throws std::invalid_argument for a value
/// that is not VARIANT:SHARE with SHARE in (0, 1].
std::optional<SlowerAid> slower_aid();

/// Number of iterations per sample so that one sample lasts about `min_sample_time_s`, from the time of one
/// iteration; at least 1, at most 100000.
std::int64_t choose_batch(double iteration_time_s, double min_sample_time_s);

/// Writes the sample-derived fields of a point's `timing` from per-iteration samples in seconds:
/// `median_ci_rel_halfwidth` and `time_s` of the primary samples (device, or wall without device samples), the
/// `wall`, `device`, `submit` and `host_probe` summaries (null when empty) and the raw `*_samples_s`.
/// `host_probe` holds seconds per sync round trip, one per sample (Sample::host_probe_time_s). Used by the lab
/// pass and by pool_processes (src/run/processes.hpp). @throws std::invalid_argument if `wall` is empty.
void set_timing_samples(Timing& timing, const std::vector<double>& wall, const std::vector<double>& device,
                        const std::vector<double>& submit, const std::vector<double>& host_probe = {});

/// Relative half-width of the distribution-free 95% confidence interval of the median of `values`
/// (Summary::ci_rel_halfwidth); +inf when there are fewer than 6 values.
double median_ci_rel_halfwidth(std::vector<double> values);

}  // namespace labrun
