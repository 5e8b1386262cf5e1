#include "lab.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "env.hpp"
#include "integrity.hpp"
#include "interpret.hpp"
#include "lab_axes.hpp"
#include "record.hpp"
#include "stats.hpp"
#include "stopping.hpp"
#include "interrupt.hpp"
#include <labrun/status.hpp>

namespace labrun {

Json axes_json(const Point& p) {
  Json axes = Json::object();
  for (const auto& [name, value] : p.axes) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) axes[name] = *i;
    else if (const auto* d = std::get_if<double>(&value)) axes[name] = json_real(*d);
    else axes[name] = std::get<std::string>(value);
  }
  return axes;
}

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

}  // namespace

std::optional<SlowerAid> slower_aid() {
  const char* v = std::getenv("LABRUN_TESTAID_SLOWER");
  if (v == nullptr || *v == '\0') return std::nullopt;
  const std::string text(v);
  const std::size_t colon = text.rfind(':');
  SlowerAid aid;
  char* end = nullptr;
  if (colon != std::string::npos && colon > 0) {
    aid.variant = text.substr(0, colon);
    const std::string share = text.substr(colon + 1);
    aid.share = std::strtod(share.c_str(), &end);
    if (!share.empty() && end == share.c_str() + share.size() && aid.share > 0 && aid.share <= 1) return aid;
  }
  throw std::invalid_argument("LABRUN_TESTAID_SLOWER=" + text +
                              ": takes VARIANT:SHARE with SHARE in (0, 1], e.g. where:0.1");
}

namespace {

// The value of a word axis if the point has it, else `fallback` (lab-wide setting).
std::string axis_word(const Point& p, const std::string& axis, const std::string& fallback) {
  for (const auto& a : p.axes)
    if (a.first == axis) return std::get<std::string>(a.second);
  return fallback;
}

}  // namespace

namespace {

// Pops the profiler range on scope exit, including when a phase throws.
struct Range {
  Backend& b;
  Range(Backend& backend, const std::string& name) : b(backend) { b.range_push(name); }
  ~Range() { b.range_pop(); }
};

}  // namespace

namespace {

// One point between its correctness check and its record: what the (possibly interleaved) timing needs.
struct PointRun {
  PointRecord rec;
  Json phases = Json::object();
  ExecOptions opts;
  std::unique_ptr<Workload> workload;
  std::unique_ptr<Executor> exec;
  std::int64_t batch = 1;
  std::vector<double> wall, device, submit, host_probe;
  std::int64_t syncs = 0, iterations = 0;
  double timed_s = 0;                            // time spent in this point's own samples (caps count only these)
  std::unique_ptr<StoppingCriterion> stopping;   // lab.stopping's criterion, told each sample
  std::string stop;                              // its stop reason once it finished
  std::optional<IntegrityChecks> integrity;      // from setup on: the integrity checks (docs/integrity.md)
  std::optional<std::string> recheck_elsewhere;  // why the re-check runs in another process (recheck_elsewhere())
  std::vector<Warning> audit_warnings;           // what the audit of the first iteration warns of
  bool finished = false;  // true once rec is final (ended before timing, or timing done and finalised)
};

}  // namespace

PointRecord new_point_record(const Point& point, const std::string& backend_name) {
  PointRecord rec;
  rec.id = point.id();
  rec.key = point.key();
  rec.experiment = point.experiment;
  rec.variant = point.variant;
  rec.axes = axes_json(point);
  rec.backend = backend_name;
  rec.status = Status::error;
  rec.cost_recorded = false;  // set once the workload gives its cost model
  return rec;
}

namespace {

void end_with(PointRun& run, Status s, const std::string& reason) {
  if (run.integrity) run.rec.integrity = run.integrity->record();
  run.rec.status = s;
  run.rec.reason = reason.empty() ? std::nullopt : std::optional<std::string>(reason);
  run.rec.phases = run.phases;
  run.finished = true;
  run.exec.reset();
  run.workload.reset();
}

// Ends `run` as an error in `phase`: the phase as failed_phase, the reason "PHASE: WHAT".
void fail_in(PointRun& run, Phase phase, const std::exception& e) {
  run.rec.failed_phase = to_string(phase);
  end_with(run, Status::error, std::string(to_string(phase)) + ": " + e.what());
}

// environment: the device state as found, before any work of this point.
void record_environment(PointRun& run, Backend& backend) {
  const auto t0 = Clock::now();
  run.rec.device_state = {{"before", backend.device_state()}, {"after", nullptr}};
  run.phases[to_string(Phase::environment)] = {{"time_s", seconds_since(t0)}};
}

// The point's variant, once it may run here: throws PointOutcome (error, not_supported or skipped) with the
// reason when the variant is unknown, refuses the point or its mode, or the point's estimate does not fit.
const VariantDef& runnable_variant(const Point& point, const RegisteredExperiment& experiment, Backend& backend,
                                   const LabSettings& lab, const ExecOptions& opts) {
  const VariantDef* variant = experiment.find_variant(point.variant);
  if (!variant) throw PointOutcome(Status::error, "unknown variant '" + point.variant + "'");
  if (variant->unsupported_fn())
    if (auto why = variant->unsupported_fn()(Args(point))) throw PointOutcome(Status::not_supported, *why);
  const std::vector<std::string>& declared = variant->modes();
  if (std::find(declared.begin(), declared.end(), opts.mode) == declared.end()) {
    std::string modes;
    for (const auto& m : declared) modes += (modes.empty() ? "" : ", ") + m;
    throw PointOutcome(Status::not_supported, "variant '" + point.variant + "' does not run in " + opts.mode +
                                                  " mode (it declares: " + modes + ")");
  }
  if (auto why = backend.mode_unsupported(opts.mode)) throw PointOutcome(Status::not_supported, *why);
  if (experiment.estimate) {
    const PointEstimate estimate = experiment.estimate(point);
    if (auto why = over_budget(estimate, backend, lab)) throw PointOutcome(Status::skipped, *why);
    // Free memory now, before this point allocates: too little is a skip with both numbers, not an OOM.
    if (auto why = over_free_memory(estimate, opts.cold_l2 ? backend.flush_bytes() : 0, backend))
      throw PointOutcome(Status::skipped, *why);
  }
  return *variant;
}

// setup: the variant's workload for this backend, and its cost model; the memory peak is marked from here.
void set_up(PointRun& run, const Point& point, const RegisteredExperiment& experiment, Backend& backend,
            const LabSettings& lab) {
  const auto t0 = Clock::now();
  backend.memory_mark();  // the point's memory peak: from here to the end of its first iteration
  {
    Range r(backend, to_string(Phase::setup));
    runnable_variant(point, experiment, backend, lab, run.opts);
    const CreateFn* impl = experiment.implementation(point.variant, backend.kind());
    if (!impl)
      throw PointOutcome(Status::not_supported, std::string("variant '") + point.variant + "' has no " +
                                                    to_string(backend.kind()) + " implementation");
    run.workload = (*impl)(point, backend, lab);
    run.integrity.emplace(*run.workload, lab, run.recheck_elsewhere);
  }
  run.rec.cost = run.workload->cost();
  run.rec.cost_recorded = true;
  run.phases[to_string(Phase::setup)] = {{"time_s", seconds_since(t0)}};
}

// How the chunks of warmup after the first iteration ended.
struct WarmupChunks {
  std::int64_t iterations = 1;  // the first iteration included
  const char* stop = "max_time";
  double steady_s = 0;  // time per iteration of the last chunk (the first iteration's time without a chunk)
};

// Chunks of iterations after the first one (which took `first_s`), each synchronized and timed, until steady
// state, warmup_iterations done with no time to spend, or warmup_time_s since `t0` (begin_point's warmup).
WarmupChunks warm_in_chunks(Executor& exec, const LabSettings& lab, Clock::time_point t0, double first_s) {
  WarmupChunks w;
  std::int64_t chunk = std::max<std::int64_t>(1, lab.warmup_iterations - 1);
  double previous_s = std::numeric_limits<double>::quiet_NaN();
  w.steady_s = first_s;
  while (w.iterations < lab.warmup_iterations || seconds_since(t0) < lab.warmup_time_s) {
    const auto t1 = Clock::now();
    for (std::int64_t i = 0; i < chunk; ++i) {
      exec.iterate();
      if ((i + 1) % 64 == 0) exec.wait();  // bound the queue of unfinished work
    }
    exec.wait();
    const double chunk_s = seconds_since(t1);
    w.iterations += chunk;
    w.steady_s = chunk_s / static_cast<double>(chunk);
    if (chunk_s < lab.min_sample_time_s) {
      // Too short to judge: the next chunk is sized from this one's time per iteration to last 1.25x
      // min_sample_time_s (at least double), instead of doubling up to it: for a 5 us kernel the ramp of
      // doublings cost as much warmup as the two chunks that judge steady state.
      const double per_iteration_s = std::max(w.steady_s, 1e-9);
      const double wanted = std::ceil(1.25 * lab.min_sample_time_s / per_iteration_s);
      chunk = std::max<std::int64_t>(2 * chunk, static_cast<std::int64_t>(std::min(wanted, 1e9)));
      previous_s = std::numeric_limits<double>::quiet_NaN();
      continue;
    }
    if (w.iterations >= lab.warmup_iterations && std::isfinite(previous_s) &&
        std::fabs(w.steady_s / previous_s - 1) < lab.warmup_tolerance) {
      w.stop = "steady";
      return w;
    }
    previous_s = w.steady_s;
  }
  if (w.iterations >= lab.warmup_iterations && lab.warmup_time_s <= 0) w.stop = "iterations";
  return w;
}

// warmup: first iteration timed apart (first-run cost: module load, allocation, capture), then chunks of
// iterations, each synchronized and timed, doubling until a chunk lasts min_sample_time_s: warmup ends at
// steady state (two consecutive such chunks' times per iteration within warmup_tolerance, and at least
// warmup_iterations done), or at warmup_time_s, whichever comes first (docs/metrics.md "Warmup").
// Makes run.exec; returns the steady time per iteration in seconds.
double warm_up(PointRun& run, Backend& backend, const LabSettings& lab) {
  const auto t0 = Clock::now();
  Range r(backend, to_string(Phase::warmup));
  run.exec = backend.executor(*run.workload, run.opts);
  const double mode_setup_s = seconds_since(t0);
  const auto t1 = Clock::now();
  run.exec->iterate();
  run.exec->wait();
  const double first_s = seconds_since(t1);
  // The audit of the first iteration (eager: that one; graph: the eager pre-run of the capture).
  const auto first_audit = run.exec->audit();
  run.audit_warnings = run.integrity->audit(first_audit);
  if (first_audit && !first_audit->launches.empty()) run.rec.launches = first_audit->launches;
  const auto memory = backend.memory_since_mark();
  run.rec.memory = memory ? to_json(*memory) : Json(nullptr);
  if (run.rec.memory.is_object() && std::isfinite(run.rec.cost.peak_work_bytes))
    run.rec.memory["predicted_peak_work_bytes"] = json_real(run.rec.cost.peak_work_bytes);
  const WarmupChunks w = warm_in_chunks(*run.exec, lab, t0, first_s);
  run.phases[to_string(Phase::warmup)] = {{"iterations", w.iterations},
                                          {"stop_reason", w.stop},
                                          {"time_s", seconds_since(t0)},
                                          {"mode_setup_time_s", mode_setup_s},
                                          {"first_iteration_time_s", first_s},
                                          {"steady_iteration_time_s", w.steady_s},
                                          {"mode_setup", to_json(run.exec->setup_record())}};
  return w.steady_s;
}

// correctness: poisoned output, one iteration in the point's mode, compared with the reference. Returns whether
// it passed; a point that failed is finished `incorrect`.
bool check_correctness(PointRun& run, Backend& backend) {
  const auto t0 = Clock::now();
  CheckOutcome check;
  {
    Range r(backend, to_string(Phase::correctness));
    check = run.workload->check([&] { run.exec->iterate(); });
  }
  run.rec.correctness = Correctness{check, Json()};
  // The lab's memory after the variant's iterations so far (setup, warmup, the correctness iteration): a write
  // outside an array or into an input names its cause, where the comparison would show only its effect.
  const auto finding = run.integrity->memory(*run.workload, "after the correctness iteration");
  run.phases[to_string(Phase::correctness)] = {{"time_s", seconds_since(t0)}};
  if (finding) {
    end_with(run, Status::incorrect, *finding + "; not timed");
    return false;
  }
  if (check.passed()) return true;
  end_with(run, Status::incorrect, describe_failure(check));
  return false;
}

// A sanitizer sweep's point after its setup: where its arrays lie (the supervisor reads the tool's findings and maps
// their addresses to them: src/run/sanitize.hpp).
void record_extents(PointRun& run, const std::string& tool) {
  SanitizerReport report;
  report.tool = tool;
  for (const ArrayExtent& e : run.workload->extents()) {
    char address[24];
    std::snprintf(address, sizeof address, "0x%llx", static_cast<unsigned long long>(e.address));
    report.arrays.push_back(SanitizerArray{e.name, e.role, address, static_cast<std::int64_t>(e.bytes)});
  }
  run.rec.sanitizer = std::move(report);
}

// The test aid LABRUN_TESTAID_SLOWER=VARIANT:SHARE: an eager point of VARIANT gets a spin kernel of SHARE of its own
// device time per iteration (one untimed sample) added to every later iteration, so it is slower by SHARE and one
// launch; the spin's length goes to phases.warmup.slower_aid_delay_s.
void slow_down_for_aid(PointRun& run) {
  const std::optional<SlowerAid> aid = slower_aid();
  if (!aid || aid->variant != run.rec.variant || run.opts.mode != "eager" || !run.exec) return;
  const Sample s = run.exec->sample(run.batch);
  if (!s.device_time_s) return;
  const double delay_s = aid->share * *s.device_time_s / static_cast<double>(s.iterations);
  if (run.exec->add_delay(delay_s)) {
    run.opts.delay_s += delay_s;
    run.phases[to_string(Phase::warmup)]["slower_aid_delay_s"] = delay_s;
  }
}

// environment -> setup -> warmup -> correctness. Leaves `run` ready for timing, or finished with a status.
void begin_point(PointRun& run, const Point& point, const RegisteredExperiment& experiment, Backend& backend,
                 const LabSettings& lab, const PhaseListener& listener = {}) {
  run.rec = new_point_record(point, backend.name());
  run.opts.mode = axis_word(point, kModeAxis, "eager");
  run.opts.synchronized = lab.timing != "unsynchronized";
  run.opts.cold_l2 = axis_word(point, kL2Axis, lab.l2) == "cold";
  run.opts.delay_s = lab.delay_s;
  run.opts.blocking = lab.blocking_kernel;
  run.opts.audit = lab.audit;
  run.opts.launches = lab.audit && lab.launches;
  // Profiler mode names the point's ranges by its key alone, for `ncu --nvtx --nvtx-include` (docs/profiling.md).
  Range point_range(backend, lab.profile ? profile_range_name(point.key()) : point.variant + " " + point.label());
  Phase phase = Phase::environment;
  const auto enter = [&](Phase next) {
    phase = next;
    if (listener) listener(run.rec.id, phase);
  };
  enter(Phase::environment);
  try {
    record_environment(run, backend);
    enter(Phase::setup);
    set_up(run, point, experiment, backend, lab);
    if (lab.sanitize != "none" && run.workload && !run.finished) record_extents(run, lab.sanitize);
    enter(Phase::warmup);
    const double steady_s = warm_up(run, backend, lab);
    enter(Phase::correctness);
    if (!check_correctness(run, backend)) return;
    if (lab.sanitize != "none")  // untimed: the tool's findings are the point's result (src/run/sanitize.hpp)
      return end_with(run, Status::sanitized,
                      "setup and the correctness iteration ran under compute-sanitizer " + lab.sanitize +
                          "; not timed");
    // Batches of back-to-back iterations lasting min_sample_time_s; one iteration per sample with a cold L2.
    run.batch = run.opts.cold_l2 ? 1 : choose_batch(steady_s, lab.min_sample_time_s);
    slow_down_for_aid(run);
  } catch (const PointOutcome& o) {
    run.rec.failed_phase = to_string(phase);
    if (o.status() == Status::escaped && run.integrity) run.integrity->audit_failed(o.what());
    end_with(run, o.status(), o.what());
  } catch (const std::exception& e) {
    fail_in(run, phase, e);
  }
}

// One timed sample. Returns true when sampling of this point is over, as lab.stopping's criterion decides (the
// default, noise: the median's 95% CI within the target, or a sample or time cap hit; never before min_samples).
bool sample_point(PointRun& run, Backend& backend, const LabSettings& lab, bool interleaved) {
  Range r(backend, lab.profile ? profile_range_name(run.rec.key) : run.rec.variant + " " + to_string(Phase::timing));
  // Interleaved with other points, the cache holds their data: one untimed iteration restores this point's hot
  // state, as back-to-back timing has it (with a cold L2 the flush resets it anyway).
  if (interleaved && !run.opts.cold_l2) {
    run.exec->iterate();
    run.exec->wait();
  }
  const auto t0 = Clock::now();
  const Sample s = run.exec->sample(run.batch);
  const double duration_s = seconds_since(t0);
  run.timed_s += duration_s;
  const double b = static_cast<double>(s.iterations);
  run.wall.push_back(s.wall_time_s / b);
  if (s.device_time_s) run.device.push_back(*s.device_time_s / b);
  if (s.submit_time_s) run.submit.push_back(*s.submit_time_s / b);
  if (s.host_probe_time_s) run.host_probe.push_back(*s.host_probe_time_s);  // per round trip already
  run.batch = s.iterations;  // a blocked sample may time fewer iterations than asked (queue depth)
  run.syncs += s.host_syncs;
  run.iterations += s.iterations;
  if (!run.stopping) run.stopping = make_stopping_criterion(lab);
  run.stopping->add_sample(
      {run.wall.back(), s.device_time_s ? std::optional(run.device.back()) : std::nullopt, duration_s});
  if (run.stopping->is_finished()) run.stop = run.stopping->stop_reason();
  return !run.stop.empty();
}

// How `run`'s samples were timed: unsynchronized by lab.timing; else by what the executor's samples held (device
// times: CUDA events; with submit times: queued behind the blocking kernel).
TimingMethod timing_method_of(const PointRun& run) {
  if (!run.opts.synchronized) return TimingMethod::host_clock_unsynchronized;
  if (run.device.empty()) return TimingMethod::host_steady_clock;
  return run.submit.empty() ? TimingMethod::cuda_events : TimingMethod::cuda_events_blocked;
}

// Before timing: where the re-check runs in this process, its host work (the second set and its reference) starts
// on an idle-priority thread of its own, to overlap the samples instead of following them (Workload::prepare_recheck).
void prepare_recheck(PointRun& run) {
  if (!run.finished && run.workload && run.integrity && run.integrity->rechecks()) try {
      run.workload->prepare_recheck();
    } catch (const std::exception&) {  // the re-check makes them itself then, and reports what failed
    }
}

// After timing, outside every sample (docs/integrity.md): one more iteration audited (eager), the inputs as generated,
// then the re-check on fresh inputs, then the fences (the re-check's iteration included), and the inputs again where
// the re-check ran (it wrote its second set into them). The first finding, or nullopt.
std::optional<std::string> verify_after_timing(PointRun& run) {
  const auto t0 = Clock::now();
  IntegrityChecks& checks = *run.integrity;
  // One more iteration audited (eager): what the variant calls after some calls (throws escaped).
  std::optional<std::string> finding;
  if (checks.audits()) {
    const auto again = run.exec->audit_again();
    // The breakdown of a warm iteration, where one ran, in place of the first iteration's.
    if (again && !again->launches.empty()) run.rec.launches = again->launches;
    finding = checks.audit_again(again);
  }
  if (!finding) finding = checks.inputs(*run.workload, "after timing");
  if (!finding) finding = checks.recheck(*run.workload, [&] { run.exec->iterate(); });
  const auto memory = checks.rechecks() ? checks.memory(*run.workload, "after timing")
                                        : checks.fences(*run.workload, "after timing");
  if (!finding) finding = memory;
  run.phases[to_string(Phase::integrity)] = {{"time_s", seconds_since(t0)}};
  return finding;
}

// The run's header as the interpretation reads it (an empty one when the caller has none).
RunHeader run_header(const Json& header) { return header_from_json(header.is_object() ? header : Json::object()); }
// timing's record, the device state after, and the kernel breakdown: what the samples say, taken before any
// integrity check changes what the device holds (the re-check's second input set). False when the point ended.
bool record_timing(PointRun& run, Backend& backend, const LabSettings& lab, std::size_t interleaved) {
  try {
    Timing timing;
    timing.mode = run.opts.mode;
    timing.l2 = run.opts.cold_l2 ? "cold" : "hot";
    timing.method = timing_method_of(run);
    timing.batch = run.batch;
    timing.interleaved_points = static_cast<std::int64_t>(interleaved);
    timing.stop_reason = run.stop;
    timing.target_rel_ci = lab.target_rel_ci;
    timing.host_syncs_per_iteration = static_cast<double>(run.syncs) / static_cast<double>(run.iterations);
    set_timing_samples(timing, run.wall, run.device, run.submit, run.host_probe);
    run.rec.timing = timing;
    run.phases[to_string(Phase::timing)] = {{"time_s", run.timed_s}};
    run.rec.device_state["after"] = backend.device_state();
    if (run.opts.mode == "eager" && run.opts.delay_s == 0) {
      if (auto kernels = backend.kernel_breakdown(*run.workload)) run.rec.kernels = std::move(*kernels);
    }
    return true;
  } catch (const std::exception& e) {
    fail_in(run, Phase::timing, e);
    return false;
  }
}

// The integrity checks after timing, then interpretation: derived quantities against the calibrated ceilings, the
// bound with its evidence, the five-part note (src/interpret/interpret.cpp), and the warnings. Interpreted once
// per point: a process of a pooled run leaves it to the pool, which interprets the pooled samples.
void verify_and_interpret(PointRun& run, Backend& backend, const LabSettings& lab, const RunHeader& header,
                          const PhaseListener& listener) {
  Phase phase = Phase::integrity;
  try {
    if (listener) listener(run.rec.id, phase);
    if (const auto finding = verify_after_timing(run)) {
      end_with(run, Status::incorrect, *finding + "; timed, but its time is not used");
      return;
    }
    phase = Phase::interpretation;
    if (listener) listener(run.rec.id, phase);
    const auto t0 = Clock::now();
    run.rec.warnings = point_warnings(run.rec, lab, backend.cache_bytes(),
                                      header.calibration("sync", "round_trip_time_s"));
    for (const Warning& w : run.rec.warnings)
      if (w.kind == "slow_sync") spdlog::warn("{}: {}", run.rec.key, w.message);
    run.rec.warnings.insert(run.rec.warnings.end(), run.audit_warnings.begin(), run.audit_warnings.end());
    run.rec.status = Status::ok;  // the interpretation reads the status
    if (!header.pooled_process()) {
      run.rec.interpretation = interpret(run.rec, header);
      run.phases[to_string(Phase::interpretation)] = {{"time_s", seconds_since(t0)}};
    }
    end_with(run, Status::ok, "");
  } catch (const PointOutcome& o) {  // the audit of an iteration after timing saw work escape the lab's stream
    run.rec.failed_phase = to_string(phase);
    const std::string reason = std::string(o.what()) +
                               ", in an iteration after timing; timed, but its time is not used";
    if (o.status() == Status::escaped) run.integrity->audit_failed(reason);
    end_with(run, o.status(), reason);
  } catch (const std::exception& e) {
    fail_in(run, phase, e);
  }
}

// A point's record once its sampling is over: timing, integrity, interpretation.
void finish_point(PointRun& run, Backend& backend, const LabSettings& lab, std::size_t interleaved,
                  const RunHeader& header, const PhaseListener& listener = {}) {
  if (record_timing(run, backend, lab, interleaved)) verify_and_interpret(run, backend, lab, header, listener);
}

}  // namespace

namespace {

// A point that failed because the device broke (a sticky CUDA error) becomes `device_fault`: the error's name
// and the phase it surfaced in. Returns true if it did.
bool mark_device_fault(PointRun& run, Backend& backend) {
  if (!run.finished || run.rec.status != Status::error) return false;
  const auto sticky = backend.sticky_error();
  if (!sticky) return false;
  const std::string phase = run.rec.failed_phase.value_or("?");
  run.rec.status = Status::device_fault;
  run.rec.reason = *sticky + " (in phase " + phase + "; was: " + run.rec.reason.value_or("") +
                   "); the device context is lost, a fresh worker runs the next point";
  return true;
}

}  // namespace

// Why this process does not re-check (nullopt: it does): a process of a pooled sweep other than the first. The code
// under test is the same in every process, the re-check's cost (a second reference, a second comparison) is paid
// once, and the first process's record is the base of the pooled record (src/run/processes.hpp).
std::optional<std::string> recheck_elsewhere(const RunHeader& header) {
  const auto process = header.pool_process();
  if (!process || process->first == 1) return std::nullopt;
  return "re-checked in process 1 of " + std::to_string(process->second) +
         " of the pool (the code under test is the same in each)";
}

// Drops a point's samples, so it can be timed again from its first sample.
void reset_samples(PointRun& run) {
  run.wall.clear();
  run.device.clear();
  run.submit.clear();
  run.host_probe.clear();
  run.syncs = run.iterations = 0;
  run.timed_s = 0;
  run.stopping.reset();
  run.stop.clear();
}

// Interleaved timing shares the inputs among the group's points: a variant that writes into an input during its
// samples would change what the others are timed on. So after the group's timing its inputs are checked (and
// restored); if one changed, no sample of the group is trusted: each point still timing is timed again alone and
// finished at once, its inputs checked after its own timing, so the variant that writes is named (`incorrect`) and
// the others' times are taken on the generated inputs. Nothing is retimed in a group whose inputs held.
void retime_if_inputs_changed(std::vector<PointRun>& runs, Backend& backend, const LabSettings& lab,
                              const RunHeader& header, const PhaseListener& listener) {
  std::optional<std::string> changed;
  std::size_t timing = 0;
  for (auto& run : runs) {
    if (run.finished) continue;
    ++timing;
    if (!run.integrity->guards_inputs()) continue;
    if (auto c = run.workload->input_change(); c && !changed) changed = c;
  }
  if (!changed) return;
  const std::string why = "inputs changed during the interleaved timing of " + std::to_string(timing) + " points (" +
                          *changed + "): the group's samples were dropped and each point was timed again alone";
  for (auto& run : runs) {
    if (run.finished) continue;
    run.integrity->set_retimed(why);
    reset_samples(run);
    try {
      while (!sample_point(run, backend, lab, false)) {
      }
    } catch (const std::exception& e) {
      fail_in(run, Phase::timing, e);
      continue;
    }
    finish_point(run, backend, lab, 1, header, listener);
  }
}

PointRecord lab_pass(const Point& point, const RegisteredExperiment& experiment, Backend& backend,
                     const LabSettings& lab, const Json& header) {
  PointRun run;
  run.recheck_elsewhere = recheck_elsewhere(run_header(header));
  begin_point(run, point, experiment, backend, lab);
  if (!run.finished) {
    try {
      prepare_recheck(run);
      while (!sample_point(run, backend, lab, false)) {
      }
      finish_point(run, backend, lab, 1, run_header(header));
    } catch (const std::exception& e) {
      fail_in(run, Phase::timing, e);
    }
  }
  mark_device_fault(run, backend);
  return run.rec;
}

Json run_point(const Point& point, const RegisteredExperiment& experiment, Backend& backend, const LabSettings& lab,
               const Json& header) {
  return to_json(lab_pass(point, experiment, backend, lab, header));
}

PoolAudits pool_audits(const std::vector<PointRecord>& first, int count) {
  PoolAudits pool;
  pool.from = "process 1 of " + std::to_string(count) + " of the pool";
  for (const PointRecord& p : first)
    if (p.integrity && p.integrity->audit_found) pool.by_key.emplace(p.key, *p.integrity->audit_found);
  return pool;
}

std::vector<PointRecord> run_sweep(const std::vector<Point>& points, const RegisteredExperiment& experiment,
                                   Backend& backend, const LabSettings& lab, const Json& header,
                                   const std::function<void(const PointRecord&)>& sink,
                                   const std::function<void(std::size_t, std::size_t, const PointRecord&)>& progress,
                                   const PhaseListener& listener, const PoolAudits& pool) {
  const RunHeader typed_header = run_header(header);  // once per sweep, not per point: the header is large
  std::vector<PointRecord> records;
  const auto group = static_cast<std::size_t>(std::max<std::int64_t>(1, lab.interleave));
  // A faulted point is written, and the sweep ends: the device context is lost for every later point.
  const auto fault = [&](PointRun& run, std::size_t index) {
    sink(run.rec);
    if (progress) progress(index + 1, points.size(), run.rec);
    throw DeviceFault(run.rec.reason.value_or("device fault"));
  };
  for (std::size_t first = 0; first < points.size(); first += group) {
    throw_if_interrupted();
    const std::size_t last = std::min(points.size(), first + group);
    // Every point of the group through correctness, then their samples taken round-robin, so a slow drift
    // of the machine (host launch speed, clocks) lands on all of them alike instead of on whichever ran then.
    std::vector<PointRun> runs(last - first);
    for (std::size_t i = first; i < last; ++i) {
      runs[i - first].recheck_elsewhere = recheck_elsewhere(typed_header);
      if (const auto it = pool.by_key.find(points[i].key()); it != pool.by_key.end()) {
        runs[i - first].opts.audited_elsewhere = it->second;
        runs[i - first].opts.audited_where = pool.from;
      }
      begin_point(runs[i - first], points[i], experiment, backend, lab, listener);
      if (mark_device_fault(runs[i - first], backend)) fault(runs[i - first], i);
      throw_if_interrupted();
    }
    std::size_t timing = 0;
    for (const auto& r : runs) timing += !r.finished;
    bool active = true;
    for (auto& run : runs) {
      if (!run.finished && listener) listener(run.rec.id, Phase::timing);
      prepare_recheck(run);
    }
    while (active) {
      active = false;
      for (std::size_t j = 0; j < runs.size(); ++j) {
        PointRun& run = runs[j];
        if (run.finished || !run.stop.empty()) continue;
        throw_if_interrupted();  // the point being sampled is abandoned: not written, run again on resume
        try {
          if (!sample_point(run, backend, lab, timing > 1)) active = true;
        } catch (const std::exception& e) {
          fail_in(run, Phase::timing, e);
          if (mark_device_fault(run, backend)) fault(run, first + j);
        }
      }
    }
    if (timing > 1) retime_if_inputs_changed(runs, backend, lab, typed_header, listener);
    // Every point's timing recorded (and its kernel breakdown taken) before any re-check loads a second input set.
    for (std::size_t i = first; i < last; ++i) {
      PointRun& run = runs[i - first];
      if (!run.finished) record_timing(run, backend, lab, timing);
      if (mark_device_fault(run, backend)) fault(run, i);
    }
    for (std::size_t i = first; i < last; ++i) {
      PointRun& run = runs[i - first];
      if (!run.finished) verify_and_interpret(run, backend, lab, typed_header, listener);
      if (mark_device_fault(run, backend)) fault(run, i);
      sink(run.rec);
      if (listener) listener(run.rec.id, Phase::done);
      if (progress) progress(i + 1, points.size(), run.rec);
      // Raw samples stay in the file; the summary keeps the rest.
      if (run.rec.timing) run.rec.timing->wall_samples_s.clear();
      records.push_back(std::move(run.rec));
    }
  }
  return records;
}

}  // namespace labrun
