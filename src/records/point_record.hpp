// Typed records of labrun's JSON Lines result files (docs/records.md), each with one to_json and one
// *_from_json, and the one loader of result files that report, diff and pooling share.
//
// Style: for every record type X there is a free `Json to_json(const X&)` and a free `X x_from_json(const Json&)`
// (time_summary_, cost_, process_stats_, timing_, correctness_, kernel_time_, warning_, note_, ceilings_,
// fractions_, evidence_, interpretation_, point_ and header_from_json). to_json(x_from_json(j)) == j, with the
// same keys in the same order and the same values (and the same text from dump()), for every record labrun
// writes (schema_version 1): tested on every committed file under results/ and on host-backend runs. The few
// inputs that do not round-trip are named at their type. Numbers: reals are written with json_real() ("NaN",
// "Infinity", "-Infinity" for non-finite values) except in `interpretation` and `kernels[].bandwidth_Bps`, where a
// missing or non-finite quantity is `null`; in memory, NaN stands for both. Integers stay JSON integers.
//
// Reading never throws on a missing optional field (it takes the default: NaN, "", 0, false, nullopt, empty);
// every *_from_json throws ResultError, naming the field's dotted path, when a field is present with the wrong
// JSON type (e.g. a string where a number belongs, other than the json_real spellings).
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <stdexcept>
#include <functional>
#include <string>
#include <vector>

#include "boxed.hpp"
#include "check_outcome.hpp"
#include "kernel_time.hpp"
#include <labrun/cost.hpp>
#include <labrun/status.hpp>
#include "record.hpp"
#include "stats.hpp"
#include "trace_call.hpp"
#include "timing_method.hpp"

namespace labrun {

/// NaN: the in-memory value of a real a record does not have (absent, or null where null means "not
/// applicable"). Every real of the structs below starts as kNoValue, as a missing key reads.
inline constexpr double kNoValue = std::numeric_limits<double>::quiet_NaN();

// ResultError (a result file that cannot be used; the message names file and line, or the field) is in record.hpp.

/// One summary of timing samples, as `timing.wall|device|submit|host_probe` (stats.hpp to_json(Summary,
/// "time_s")): seconds per iteration (host_probe: seconds per sync round trip), dimensionless rel_iqr and
/// ci95_rel_halfwidth, counts of samples and outliers.
struct TimeSummary;
/// A summary that may be absent, on the heap (boxed.hpp): what Timing holds.
using OptionalSummary = Boxed<TimeSummary>;

struct TimeSummary {
  std::int64_t count = 0;
  double median_time_s = kNoValue, mean_time_s = kNoValue, stddev_time_s = kNoValue, min_time_s = kNoValue,
         max_time_s = kNoValue;
  double p5_time_s = kNoValue, p25_time_s = kNoValue, p75_time_s = kNoValue, p95_time_s = kNoValue;
  double rel_iqr = kNoValue;
  double ci95_low_time_s = kNoValue, ci95_high_time_s = kNoValue;
  double ci95_rel_halfwidth = kNoValue;  ///< +inf for fewer than 6 samples (written "Infinity")
  std::int64_t outliers = 0;

  /// The same numbers as `s` (count and outliers as int64); to_json of it equals to_json(s, "time_s").
  static TimeSummary of(const Summary& s);
};

/// The object {count, median_time_s, ..., outliers}, keys in stats.cpp's order, reals as json_real.
Json to_json(const TimeSummary& s);
/// Reads a summary object; missing keys take 0 (counts) or NaN (reals). @throws ResultError if `j` is not an
/// object or a key has the wrong type.
TimeSummary time_summary_from_json(const Json& j);

// Cost (the variant's cost model per iteration: bytes_read, bytes_written, bytes, compulsory_bytes, flop,
// launches, host_syncs; NaN = absent; empty() when all are) is the struct of cost.hpp, shared with the workloads.

/// The object `cost` with the quantities that are not NaN, in cost.hpp's order (bytes_read, bytes_written,
/// bytes, compulsory_bytes, flop, launches, host_syncs), as json_real; an empty object when empty(). (A "NaN"
/// written for a quantity reads back as absent and is then left out: labrun never writes one.)
Json to_json(const Cost& c);
/// Reads `cost`; null or a missing key is NaN. @throws ResultError if `j` is neither null nor an object, or a
/// quantity is not a number.
Cost cost_from_json(const Json& j);

/// `timing.processes` of a pooled lab.processes record: one median per process, in process order.
struct ProcessStats {
  std::int64_t count = 0;      ///< processes pooled
  std::vector<double> time_s;  ///< each process's median time, seconds
  double spread = kNoValue;    ///< max/min − 1 of time_s, dimensionless
  /// Each process's host probe median (s per sync round trip), written only where every process probed.
  std::optional<std::vector<double>> host_probe_time_s;
};

/// {count, time_s, spread[, host_probe_time_s]}.
Json to_json(const ProcessStats& p);
/// @throws ResultError if `j` is not an object or a field has the wrong type.
ProcessStats process_stats_from_json(const Json& j);

/// A point's `timing`: how it was sampled, the summaries and the raw per-iteration samples (seconds).
struct Timing {
  std::string mode;  ///< "eager" or "graph"
  std::string l2;    ///< "hot" or "cold"
  /// How the samples were timed; `other` for a spelling this build does not know, kept in other_method.
  TimingMethod method = TimingMethod::other;
  std::string other_method;  ///< timing.method as read when it is none of TimingMethod's ("" when absent)
  std::int64_t batch = 1;    ///< iterations one sample timed
  std::int64_t interleaved_points = 1;
  std::string stop_reason;  ///< "ci_target", "max_samples", "max_time", "mixed"
  double target_rel_ci = kNoValue;
  double median_ci_rel_halfwidth = kNoValue;
  double host_syncs_per_iteration = kNoValue;
  /// nullopt is written as null. Boxed (heap): a reader that drops them (trim_for_comparison) keeps 8 bytes each.
  OptionalSummary wall, device, submit, host_probe;
  std::vector<double> wall_samples_s;        ///< always written, as an array (empty: [])
  std::vector<double> device_samples_s;      ///< empty is written as null
  std::vector<double> submit_samples_s;      ///< empty is written as null
  std::vector<double> host_probe_samples_s;  ///< empty is written as null
  /// False for records written before the host probe existed (older schema_version 1 files): they have
  /// neither `host_probe` nor `host_probe_samples_s`, and to_json then writes neither. Records that have the
  /// keys (null or not) read as true.
  bool host_probe_recorded = true;
  double time_s = kNoValue;               ///< the device median, or the wall median without device timing
  std::optional<ProcessStats> processes;  ///< pooled runs only; nullopt: no key

  /// timing.method as the record spells it: to_string(method), or other_method for `other`.
  std::string method_name() const { return method == TimingMethod::other ? other_method : to_string(method); }
};

/// The object `timing` in lab.cpp's order: mode, l2, method, batch, interleaved_points, stop_reason,
/// target_rel_ci, median_ci_rel_halfwidth, host_syncs_per_iteration, wall, device, submit, wall_samples_s,
/// device_samples_s, submit_samples_s, host_probe, host_probe_samples_s, time_s, processes.
Json to_json(const Timing& t);
/// @throws ResultError if `j` is not an object or a field has the wrong type.
Timing timing_from_json(const Json& j);

/// A point's `correctness`: the workload's typed outcome (CheckOutcome: the experiment's comparisons), written as
/// {value, reference, abs_error, tolerance, passed, detail} with the headline numbers of the reported comparison
/// and detail = that comparison's fields (worst_ratio, ..., tolerance_scale, then its notes), `checks` (every
/// comparison, when there are several) and `poisoned`; or {error[, poisoned]} when nothing was compared.
/// A record of an older labrun whose correctness the outcome does not reproduce (a detail of its experiment's own
/// keys) reads into `as_written` and is written back as it was: such records round-trip too.
struct Correctness {
  CheckOutcome outcome;
  Json as_written;  ///< null for what labrun writes now; else the record's correctness object as read
};

/// The object `correctness` (as above).
Json to_json(const Correctness& c);
/// @throws ResultError if `j` is not an object, or value, reference, abs_error, tolerance or passed has the wrong
/// type; a detail the outcome does not hold is kept in as_written, never an error.
Correctness correctness_from_json(const Json& j);

/// What became of one integrity check of a point (docs/integrity.md): it ran and found nothing, it ran and found
/// something (the point is then `incorrect`), a lab setting turned it off, or it did not run (the pass ended
/// earlier, or the workload does not implement it).
/// `warned`: the check found what the lab works around and says so (the audit's undeclared host wait: timed live,
/// with a warning); the point keeps its number.
enum class CheckState { passed, failed, off, not_run, warned };
/// "passed", "failed", "off", "not_run", "warned".
const char* to_string(CheckState s);
/// The state spelled `name`, or nullopt.
std::optional<CheckState> parse_check_state(const std::string& name);

/// One integrity check: its state and, unless it passed, why ("wrote past the end of y (first at element 17)",
/// "lab.recheck: false", "the pass ended in correctness").
struct IntegrityCheck {
  CheckState state = CheckState::not_run;
  std::optional<std::string> reason;  ///< null when passed; always written
};

/// A point's `integrity` (docs/integrity.md, docs/records.md): the three checks of the lab's memory and results that
/// need no tracing (cases C19-C21), and, for a point of an interleaved group whose inputs changed during the group's
/// timing, what happened then.
struct Integrity {
  IntegrityCheck fences;   ///< lab.fences: the guard regions around outputs, scratch and allocate()d memory
  IntegrityCheck inputs;   ///< lab.guard_inputs: the inputs against the generated set
  IntegrityCheck recheck;  ///< lab.recheck: one iteration on a second input set against its reference
  /// lab.audit: the CUDA API calls of the first iteration (docs/integrity.md "The audit"); absent in records of
  /// labrun before the audit and of the host backend's points written before it.
  std::optional<IntegrityCheck> audit;
  /// What the audit of the first iteration found, as data (the calls as AuditFindings lists them; empty lists: none),
  /// where the audit ran in this process; absent where it did not run. The later processes of a lab.processes pool
  /// take their first process's instead of auditing (CUPTI, once attached, stays in a process; docs/integrity.md).
  std::optional<AuditFindings> audit_found;
  /// Set when the inputs of this point's interleaved group changed during the group's timing: the group's samples
  /// were dropped and this point was timed again on its own ("the inputs changed during the interleaved timing of
  /// 6 points; timed again alone").
  std::optional<std::string> retimed;
};

/// {fences, inputs, recheck: {state, reason}[, retimed]}.
Json to_json(const Integrity& i);
/// @throws ResultError if `j` is not an object, a state is none of CheckState's names, or a field has the wrong type.
Integrity integrity_from_json(const Json& j);

/// One error or warning compute-sanitizer reported for a point (docs/integrity.md "The sanitizer sweep").
struct SanitizerFinding {
  std::string kind;    ///< the report's headline: "Invalid __global__ write of size 4 bytes", "Race reported ..."
  std::string kernel;  ///< the kernel (demangled, as the tool prints it); "" for an API error
  /// Where its address falls among the point's arrays: "y + 4108 bytes (past its end: y holds 4108 bytes)";
  /// nullopt when the report has no address or it falls near none of them.
  std::optional<std::string> array;
  std::string detail;  ///< the report's other lines, joined with "; " (host backtrace left out)
};

/// One of a point's device arrays as the sanitizer sweep saw it (Workload::extents), its address in hex text.
struct SanitizerArray {
  std::string name, role, address;
  std::int64_t bytes = 0;
};

/// A point's `sanitizer`: what compute-sanitizer reported of its setup and correctness iteration (sweep --sanitize).
struct SanitizerReport {
  std::string tool;                        ///< memcheck, racecheck, initcheck or synccheck
  std::int64_t errors = 0;                 ///< the errors the tool counted for this point's process
  std::vector<SanitizerFinding> findings;  ///< each reported error or warning, at most kMaxSanitizerFindings
  std::vector<SanitizerArray> arrays;      ///< the point's arrays, where they lay
};

/// Findings a record keeps of one point (the tool's own limit, --print-limit, is set to the same).
inline constexpr std::int64_t kMaxSanitizerFindings = 20;

/// {tool, errors, findings: [{kind, kernel, array, detail}], arrays: [{name, role, address, bytes}]}.
Json to_json(const SanitizerReport& s);
/// @throws ResultError if `j` is not an object or a field has the wrong type.
SanitizerReport sanitizer_report_from_json(const Json& j);

// KernelTime (one op of the eager per-kernel breakdown, `kernels[]`) and LaunchTime (one kernel, copy or memset of the
// traced breakdown, `launches[]`) are the backend's structs (kernel_time.hpp).

/// {op, bytes, time_s, bandwidth_Bps}; a NaN bandwidth_Bps is written as null.
Json to_json(const KernelTime& k);
/// @throws ResultError if `j` is not an object or a field has the wrong type.
KernelTime kernel_time_from_json(const Json& j);

/// One warning of a point or header: {kind, message}; kinds in docs/records.md.
struct Warning {
  std::string kind, message;
};

/// {kind, message}.
Json to_json(const Warning& w);
/// @throws ResultError if `j` is not an object or a field is not a string.
Warning warning_from_json(const Json& j);

/// The five-part note of an interpretation (docs/metrics.md): what was measured, the bound, the evidence, the
/// next change to try and the other cause checked. Plain text.
struct Note {
  std::string measured, bound, evidence, next_change, other_cause_checked;
};

/// {measured, bound, evidence, next_change, other_cause_checked}.
Json to_json(const Note& n);
/// @throws ResultError if `j` is not an object or a field is not a string.
Note note_from_json(const Json& j);

/// `interpretation.ceilings`: the ceilings a point was judged against (B/s, FLOP/s, s, bytes); NaN = null.
struct Ceilings {
  double memory_bandwidth_Bps = kNoValue;
  std::optional<std::string> memory_source;  ///< "read" or "copy"; null without a memory ceiling
  double copy_bandwidth_Bps = kNoValue, read_bandwidth_Bps = kNoValue, theoretical_bandwidth_Bps = kNoValue;
  double peak_bandwidth_Bps = kNoValue;
  double compute_flop_per_s = kNoValue, bf16_gemm_flop_per_s = kNoValue, peak_compute_flop_per_s = kNoValue;
  double launch_time_s = kNoValue, l2_bytes = kNoValue;
};

/// The object in interpret_point()'s order; NaN (and any non-finite value) as null.
Json to_json(const Ceilings& c);
/// @throws ResultError if `j` is not an object or a field has the wrong type.
Ceilings ceilings_from_json(const Json& j);

/// `interpretation.fraction_of`: achieved rate over each ceiling, dimensionless; NaN = null.
struct Fractions {
  double memory_ceiling = kNoValue, copy = kNoValue, read = kNoValue, theoretical = kNoValue;
  double compute_ceiling = kNoValue, bf16_gemm = kNoValue, roofline = kNoValue;
};

/// The object in interpret_point()'s order; NaN as null.
Json to_json(const Fractions& f);
/// @throws ResultError if `j` is not an object or a field has the wrong type.
Fractions fractions_from_json(const Json& j);

/// `interpretation.evidence`: the rule that placed the bound and the quantities it looked at; NaN = null.
struct Evidence {
  std::string rule;
  double fraction_of_memory_ceiling = kNoValue, fraction_of_compute_ceiling = kNoValue;
  double launch_overhead_share = kNoValue, host_stall_share = kNoValue, host_syncs_per_iteration = kNoValue;
  double host_probe_time_s = kNoValue;  ///< seconds per sync round trip
  /// False for records from before the host probe: they have no `host_probe_time_s` key, and to_json then
  /// writes none.
  bool host_probe_recorded = true;
  double ideal_time_per_launch_s = kNoValue, time_s = kNoValue, time_floor_s = kNoValue;
};

/// The object in interpret_point()'s order; NaN as null.
Json to_json(const Evidence& e);
/// @throws ResultError if `j` is not an object or a field has the wrong type.
Evidence evidence_from_json(const Json& j);

/// A point's `interpretation` (src/interpret/interpret.cpp interpret_point(), docs/metrics.md "Interpretation"): SI
/// units (s, B/s, FLOP/s, flop/B, bytes), shares and fractions dimensionless. NaN stands for null (not applicable or
/// not computable); nullopt strings for null.
struct Interpretation {
  double time_s = kNoValue, wall_time_s = kNoValue, device_time_s = kNoValue, submit_time_s = kNoValue;
  double iteration_time_s = kNoValue;
  std::optional<std::string> iteration_time_basis;  ///< "measured_time" or "host_submission"
  std::optional<std::string> timing_method;
  double achieved_bandwidth_Bps = kNoValue, compulsory_bandwidth_Bps = kNoValue, flop_per_s = kNoValue;
  double arithmetic_intensity_flop_per_byte = kNoValue;
  Ceilings ceilings;
  Fractions fraction_of;
  double roofline_ceiling_flop_per_s = kNoValue, ridge_point_flop_per_byte = kNoValue, time_floor_s = kNoValue;
  double launch_overhead_share = kNoValue, host_stall_share = kNoValue, host_syncs_per_iteration = kNoValue;
  double ideal_time_per_launch_s = kNoValue;
  bool l2_resident = false;
  std::string bound;                      ///< "memory", "compute", "launch", "sync", "latency", "unknown", ""
  std::optional<std::string> confidence;  ///< "strong", "weak" or null
  std::string reason;
  Evidence evidence;
  bool suspect = false;
  std::optional<std::string> suspect_reason;
  Note note;
};

/// The object in interpret_point()'s order (time_s, wall_time_s, ..., note); NaN as null.
Json to_json(const Interpretation& i);
/// @throws ResultError if `j` is not an object or a field has the wrong type.
Interpretation interpretation_from_json(const Json& j);

/// One point line (`"type": "point"`, docs/records.md). Optional parts are nullopt (or a null Json) when the
/// record does not have them, and to_json leaves them out.
struct PointRecord {
  std::string id;   ///< 16 hex digits, FNV-1a 64 of key
  std::string key;  ///< experiment/variant/axis=value,... (axes sorted by name)
  std::string experiment;
  std::string variant;
  /// Every axis of the experiment, in the experiment's order: JSON integers, json_real numbers or words.
  Json axes = Json::object();
  std::string backend;                ///< "host" or "cuda:N"
  Status status = Status::error;      ///< written as to_string(status) ("ok", "incorrect", ...; labrun/status.hpp)
  std::optional<std::string> reason;  ///< null for ok; always written
  std::optional<std::string> failed_phase;  ///< the phase that ended the pass; nullopt: no key
  std::vector<Warning> warnings;            ///< always written (possibly [])
  Json device_state;  ///< {before, after} as the backend reported them (opaque); null Json: no key
  /// The cost model, written as the object `cost` (an empty object when cost.empty()).
  Cost cost;
  /// False for a record without a `cost` key (its pass ended in setup, before the cost model): to_json then
  /// writes none, so such records round-trip. point_from_json sets it from the key's presence.
  bool cost_recorded = true;
  /// The device memory the point allocated (backends with device memory; null Json: no key): {peak_work_bytes
  /// (measured, DeviceMemory's work bytes at their peak over setup and one iteration, beyond what was held
  /// before), predicted_peak_work_bytes (cost.peak_work_bytes, when modelled), input_bytes (input buffers held
  /// at the peak's reading), device_used_delta_bytes (cudaMemGetInfo's used bytes after the first iteration
  /// minus before setup: allocator rounding and library allocations included)}.
  Json memory;
  // The large optional parts live on the heap (boxed.hpp): 100,000 records in memory cost what they hold.
  Boxed<Correctness> correctness;
  Boxed<Integrity> integrity;  ///< the integrity checks (docs/integrity.md); absent in records before them
  Boxed<Timing> timing;
  std::optional<std::vector<KernelTime>> kernels;
  /// The GPU work of one audited eager iteration after timing (the first iteration's where that one did not run),
  /// from CUPTI's trace (docs/integrity.md "The audit"); absent where the audit did not record GPU work.
  std::optional<std::vector<LaunchTime>> launches;
  Boxed<SanitizerReport> sanitizer;  ///< a sanitizer sweep's findings (sweep --sanitize); absent otherwise
  Boxed<Interpretation> interpretation;
  Json phases;  ///< per phase {time_s, ...} (opaque); null Json: no key

  /// device_state.<when>.sm_clock_hz, `when` "before" or "after" (the SM clock the backend read just before or
  /// after the timing), Hz; NaN when absent or not a number.
  double sm_clock_hz(const char* when) const;
  /// The numeric axis `name` (integer or json_real); NaN when absent or a word.
  double axis_number(const std::string& name) const;
  /// The word axis `name`, or a numeric axis's canonical text as in `key` (to_string(AxisValue): "100000",
  /// "0.001", "nan"); "" when absent.
  std::string axis_word(const std::string& name) const;
};

/// What a backend recorded of the device before or after a point's timing (`device_state.before|after`; NVML on
/// CUDA, nothing on the host). A typed view: every read of device_state belongs here.
struct DeviceState {
  bool recorded = false;          ///< an object was recorded (false: null, "unavailable" or absent)
  double sm_clock_hz = kNoValue;  ///< SM clock, Hz
  double memory_clock_hz = kNoValue;
  bool throttled = false;  ///< any clock-event reason that lowers the clock
  std::string reasons;     ///< clocks_event_reasons as JSON text ("" when none recorded)
  /// Whether the other processes on the device were listed (NVML's process queries; false: "unavailable", absent).
  bool tenants_recorded = false;
  std::size_t tenant_count = 0;  ///< the other processes that held a context on the device (case C23)
  std::string tenants;           ///< them as a phrase (tenants_text: "pid 4242 (python3, 2.1 GB)"); "" for none
  /// One host sync round trip (an empty kernel, a 4-byte copy to the host, a stream synchronize; the median of five)
  /// as the point found it, seconds; NaN where not recorded (the host backend, records from before it).
  double sync_round_trip_time_s = kNoValue;
};
/// device_state.<when> of `point`, `when` = "before" or "after". Never throws.
DeviceState device_state_of(const PointRecord& point, const char* when);

/// The point line in lab.cpp's key order: type, id, key, experiment, variant, axes, backend, status, reason,
/// warnings, device_state, cost, correctness, integrity, timing, kernels, sanitizer, interpretation, failed_phase,
/// phases (each optional part only when present).
Json to_json(const PointRecord& p);
/// Reads a point line. @throws ResultError if `j` is not an object, its `type` is present but not "point", one
/// of id, key, experiment, variant, status is missing or not a string, the status is none of Status's names
/// ("status: \"exploded\" is not a point status (ok, ...)"), or any present field has the wrong type (the message
/// names the field).
PointRecord point_from_json(const Json& j);

/// The typed point of a JSON point line for the JSON shims of interpret.hpp and analyze(const std::vector<Json>&):
/// point_from_json(j) when it accepts `j`; otherwise (a record in the making, or malformed) the fields that read
/// on their own (id, key, experiment, variant, backend, reason as strings, status when it is a Status's name (else
/// error), axes as an object,
/// device_state, cost and timing when their own *_from_json accepts them), the others left at their defaults.
/// Never throws. Kept until every caller is typed.
PointRecord point_from_json_tolerant(const Json& j);

/// The header line of a run (`"type": "header"`), kept whole: headers are large and vary between versions, so
/// this is a thin typed view. Every read of a header by its keys belongs in these accessors. Strings are ""
/// and numbers NaN when absent or of another type; none throws.
struct RunHeader {
  Json json = Json::object();  ///< the whole header line, as read

  std::string experiment() const;     ///< config.experiment
  std::string description() const;    ///< config.description
  std::string config_path() const;    ///< config.path
  std::string config_sha256() const;  ///< config.sha256
  /// The `--only` filter the sweep ran with, as its command line (`argv`) gives it (`--only F` or `--only=F`);
  /// "" when it ran without one. Shards of one sweep agree on it (src/cluster/merge.hpp).
  std::string only_filter() const;
  std::string created_utc() const;  ///< created_utc (ISO 8601)
  std::string git_sha() const;      ///< environment.labrun.git_sha (labrun's own commit)
  // The code under test (environment.code, schema 3). A header of schema <= 2 has none: its code under test was
  // labrun itself, so these fall back to project "labrun" and environment.labrun's git_sha and git_dirty.
  std::string code_project() const;        ///< environment.code.project; "labrun" when there is no environment.code
  std::string code_sha() const;            ///< environment.code.git_sha; else environment.labrun.git_sha
  std::optional<bool> code_dirty() const;  ///< environment.code.git_dirty; else environment.labrun.git_dirty
  std::string code_source() const;         ///< environment.code.source ("build", "--code-rev", ...); "" when absent
  /// What a run's numbers are keyed on across builds: "project@sha" plus "+dirty" when dirty, then " labrun
  /// VERSION"; e.g. "myrepo@0123abcd+dirty labrun 0.2.0". Runs with equal keys measured the same code with the
  /// same labrun release.
  std::string code_key() const;
  std::string device_name() const;      ///< environment.device.name ("" on the host backend)
  std::string device_uuid() const;      ///< environment.device.uuid
  std::string backend() const;          ///< environment.backend: "host" or "cuda:N"
  std::string driver_version() const;   ///< environment.device.driver_version (e.g. "580.159.04")
  std::string runtime_version() const;  ///< environment.device.runtime_version (e.g. "13.0")
  std::string build_type() const;       ///< environment.labrun.build_type (e.g. "Release")
  /// calibration.<ceiling>.<key>, e.g. ("copy", "bandwidth_Bps"), ("launch", "eager_time_s"): SI units.
  double calibration(const char* ceiling, const char* key) const;
  std::string calibration_backend() const;   ///< calibration.backend (set when there are no ceilings)
  double l2_bytes() const;                   ///< environment.device.l2_bytes
  double theoretical_bandwidth_Bps() const;  ///< environment.device.theoretical_bandwidth_Bps
  double memory_bytes() const;               ///< environment.device.memory_bytes
  double point_count() const;                ///< point_count: points announced; NaN when absent
  double process_count() const;              ///< processes.count of a pooled run; NaN otherwise
  /// calibration.<ceiling>.<key> of each process of a pooled run (processes.runs[i].calibration), in process
  /// order; empty unless every process has a finite positive value, and for a merge of several shards (whose
  /// header keeps one shard's processes).
  std::vector<double> process_calibration(const char* ceiling, const char* key) const;
  std::string host_name() const;  ///< environment.host.hostname ("" if absent)
  std::string cpu_model() const;  ///< environment.host.cpu_model ("" if absent)
  /// environment.device.sync_wait: how the host waits for the GPU (auto | spin | yield | blocking; "" if absent).
  std::string sync_wait() const;
  /// The 1-minute load average of the host, per process of a pooled run (processes.runs[i].host.load
  /// .load_average[0], as each process started), else the run's own (environment.host.load.load_average[0]);
  /// empty where not recorded (a run from before the record, or a host without /proc/loadavg).
  std::vector<double> load_averages_1m() const;
  /// True for the header of one process of a pooled lab.processes run (it has `process`: {index, count}).
  bool pooled_process() const;
  /// `process` {index, count} of one process of a pooled run (index 1-based); nullopt for any other header (or a
  /// `process` that is not two integers).
  std::optional<std::pair<std::int64_t, std::int64_t>> pool_process() const;
  const Json& lab() const;               ///< the `lab` object (settings in force); an empty object if absent
  const Json& hypothesis() const;        ///< config.hypothesis as written; null if absent
  const Json& device() const;            ///< the environment.device object; null if absent
  const Json& build() const;             ///< the environment.labrun object; null if absent
  const Json& calibration_json() const;  ///< the `calibration` object; null if absent
  const Json& warnings() const;          ///< header `warnings` array; an empty array if absent
  // For the report's summary (src/report/report_markdown.cpp):
  std::string device_kind() const;        ///< environment.device.kind, e.g. "cuda"
  std::string device_arch() const;        ///< environment.device.arch, e.g. "sm_90"
  double sm_count() const;                ///< environment.device.sm_count
  std::string labrun_version() const;     ///< environment.labrun.version
  std::optional<bool> git_dirty() const;  ///< environment.labrun.git_dirty; nullopt if absent or not a bool
  std::string cxx_compiler() const;       ///< environment.labrun.cxx_compiler
  std::string cuda_compiler() const;      ///< environment.labrun.cuda_compiler ("-" without CUDA)
  std::string lab_timing() const;         ///< lab.timing: "synchronized" or "unsynchronized"
  std::string lab_l2() const;             ///< lab.l2: "hot" or "cold"
  double lab_target_rel_ci() const;       ///< lab.target_rel_ci, dimensionless
};

/// The header line itself (h.json).
Json to_json(const RunHeader& h);
/// Wraps a header line. @throws ResultError if `j` is not an object or its `type` is present and not "header".
RunHeader header_from_json(const Json& j);

/// One run: a header and the points after it (up to the next header) in one file.
struct Run {
  std::string file;                 ///< the file it came from, as given
  RunHeader header;                 ///< {"type": "header"} alone when has_header is false
  bool has_header = false;          ///< false for points that came before any header of the file
  std::vector<PointRecord> points;  ///< in file order
  /// The `segment` lines after the header: one per worker that continued the file (a resumed run, a worker
  /// replaced after a fault), each with its own environment and calibration (docs/records.md "Segment").
  std::vector<Json> segments;
};

/// What load_results() read.
struct ResultSet {
  std::vector<Run> runs;              ///< in the order of the paths, then of the files' lines
  std::vector<std::string> warnings;  ///< e.g. "a.jsonl:9: dropped a torn last line (was the run killed?)"
  /// The first point found twice in one run: "a.jsonl:9: point ID (KEY) is also at line 4 of the same run (two
  /// writers on one file?)"; "" when none. report and diff warn (in `warnings`); `sweep --resume` refuses.
  std::string first_duplicate;
};

/// Checks a header line for sense beyond its JSON types (docs/records.md, "What a reader checks"):
/// `schema_version` an integer 1..kRecordSchemaVersion; `point_count` a count (an integer >= 0) when present;
/// each numeric `lab` setting this build knows an integer where the setting is one and at least its least value
/// (src/config/lab_settings.hpp; settings it does not know, of older schemas, are left alone); `processes.count` >= 1
/// and `process` {index, count} with 1 <= index <= count when present. @throws ResultError naming the key, e.g.
/// "schema_version: 99 is not a schema this labrun reads (it reads the integers 1 to 3)".
void check_header(const RunHeader& header);

/// Checks a point for sense beyond its JSON types (its `status`, a Status, is checked as point_from_json reads it):
/// every time at least 0 s (timing.time_s, each raw sample, the summaries' median, mean, min, max and percentiles,
/// the process medians, kernels[].time_s); counts at least 0 (summaries' count and outliers, timing.processes.count)
/// and timing.batch and interleaved_points at least 1. A time of no value (NaN, "NaN", null) passes. @throws
/// ResultError naming the key, e.g. "timing.time_s: -1.0 is negative; a time is at least 0 s".
void check_point(const PointRecord& point);
/// Checks a `segment` record (docs/records.md): `index` an integer >= 2; `created_utc` a UTC timestamp as labrun
/// writes one; `environment`, `calibration`, `lab` objects (each lab setting checked as a header's); `points_held` a
/// count; `argv` an array of strings. Absent or null keys pass. @throws ResultError naming the key.
void check_segment(const Json& segment);

/// Checks that `point` belongs to the run of `header`: the same experiment (when the header names one).
/// @throws ResultError "experiment: B, but the header of this run is of experiment A (...)".
void check_point_of_run(const PointRecord& point, const RunHeader& header);

/// How much of each point load_results() keeps.
enum class LoadDepth {
  full,        ///< every field, as read (resume, pooling, merge: what is written back)
  analysis,    ///< what report reads: trim_for_analysis() of each point, as it is read
  comparison,  ///< what diff reads: trim_for_comparison() of each point, as it is read
};

/// Drops what report does not read, for files of 100,000 points: `phases`, `correctness.detail`, every raw sample
/// (it reads the summaries), and device_state but the clocks and throttle state device_state_of() reads.
void trim_for_analysis(PointRecord& point);

/// Drops what diff does not read: `phases`, correctness, kernels, the timing summaries (but the device summary of a
/// record without samples: imported results are compared from it) and the raw samples but the
/// primary ones (device samples, else wall samples), device_state but the clocks and throttle state, and the
/// interpretation but its bound class and memory ceiling source.
void trim_for_comparison(PointRecord& point);

/// Reads result files, each through RecordLines (record.hpp: regular files only, the bounds of docs/records.md
/// "Bounds"), in time linear in their size. Each element of `paths` is a file, a comma-separated list of files
/// (shards), or a folder (every *.jsonl directly in it, sorted by name; .jsonl.gz files are not read, as for report and
/// diff). A file starts with its header; points belong to the header before them; a second header starts a new run (a
/// concatenation of whole runs) once the run before it holds the points its header's point_count announces; a
/// header with no points after it is a run without points. Every header passes check_header, every point
/// check_point and check_point_of_run. A point twice in one run is a warning (the first: `first_duplicate`).
/// Between lines the loader looks at interrupt_signal() (src/base/interrupt.hpp) and throws Interrupted once a signal
/// arrived (only where handlers are installed: a sweep's --resume check).
/// `segment` lines go to the run's `segments`; lines of any other `type` are skipped; blank lines are ignored. An
/// unterminated unparsable last line (a record torn by a killed run) is dropped with a warning in `warnings`.
/// @throws ResultError naming the file (and line) for a file that cannot be read or breaks a bound, a line that is
/// not JSON or not an object, a record without a string "type", a file with no record, a point before any header,
/// a header in the middle of a run, a record that fails its checks, a point or header that its
/// *_from_json rejects, a folder with no .jsonl file, or an empty name in a comma-separated list.
ResultSet load_results(const std::vector<std::string>& paths, LoadDepth depth = LoadDepth::full);

/// One line of a result file, read as every reader reads it (load_results, labrun merge): the record, or nullopt
/// for an unparsable line at end of file without a newline (`at_eof`: the record a killed run was writing), which
/// adds "WHERE: dropped a torn last line (was the run killed?)" to `warnings`; the reader stops there.
/// @throws ResultError "WHERE: not JSON: ..." for any other unparsable line, "WHERE: <message>" for a line
/// parse_record_line refuses by its bounds (nesting, keys per object, a duplicate key).
std::optional<Json> parse_line_or_torn(const std::string& line, bool at_eof, const std::string& where,
                                       std::vector<std::string>& warnings);

/// Writes `path` whole or not at all: `lines` writes every line into a sibling (replacement_path) that is then
/// fsync'ed and renamed over `path` (write_beside_then_rename, src/base/output_file.hpp). Without `replace` an existing
/// `path` is an OutputError, left untouched; so is a `path` that is not a regular file.
/// @throws OutputError when it cannot be written (the sibling is removed), and whatever `lines` throws.
void write_whole(const std::string& path, bool replace, const std::function<void(JsonlWriter&)>& lines);
// A run written whole (write_run_file) goes through the JSON Lines output: src/export/output.hpp.

/// Whether `text` is a UTC timestamp as labrun writes one and reads back (utc_timestamp(): "2026-12-06T07:20:02.123Z",
/// the fraction optional) of a time that exists, from 1970 on: what a header's created_utc must be.
bool is_utc_timestamp(const std::string& text);

}  // namespace labrun
