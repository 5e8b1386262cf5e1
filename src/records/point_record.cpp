#include "point_record.hpp"

#include "tenants.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <unordered_map>

#include <fmt/format.h>

#include <labrun/axis.hpp>
#include <labrun/point.hpp>
#include <labrun/status.hpp>

#include "format.hpp"  // printable
#include "interrupt.hpp"
#include "lab_settings.hpp"
#include "name_table.hpp"
#include "record_fields.hpp"
#include "result_paths.hpp"

#include "output_file.hpp"

namespace labrun {

namespace {

using namespace fields;  // the rows and codecs of the tables below, and the reading checks (record_fields.hpp)

/// A point's status: a required string, the name of a Status (labrun/status.hpp's table). @throws ResultError
/// "status: \"exploded\" is not a point status (ok, incorrect, ...)" for any other string.
struct StatusWord : RequiredText {
  static Json write(Status s) { return to_string(s); }
  static void read(const Json& v, const std::string& where, Status& out) {
    std::string text;
    Text::read(v, where, text);
    const std::optional<Status> s = parse_status(text);
    if (!s) throw ResultError(where + ": " + shown(v) + " is not a point status (" + status_names() + ")");
    out = *s;
  }
};

// ---- One table per record type: its keys in the order they are written (lab.cpp's, stats.cpp's and
// interpret_point()'s), each with its member and codec. ---------------------------------------------------------

// stats.cpp's to_json(Summary, "time_s") order.
constexpr Field<TimeSummary> kTimeSummaryFields[] = {
    always<&TimeSummary::count, Int>("count"),
    always<&TimeSummary::median_time_s, Real>("median_time_s"),
    always<&TimeSummary::mean_time_s, Real>("mean_time_s"),
    always<&TimeSummary::stddev_time_s, Real>("stddev_time_s"),
    always<&TimeSummary::min_time_s, Real>("min_time_s"),
    always<&TimeSummary::max_time_s, Real>("max_time_s"),
    always<&TimeSummary::p5_time_s, Real>("p5_time_s"),
    always<&TimeSummary::p25_time_s, Real>("p25_time_s"),
    always<&TimeSummary::p75_time_s, Real>("p75_time_s"),
    always<&TimeSummary::p95_time_s, Real>("p95_time_s"),
    always<&TimeSummary::rel_iqr, Real>("rel_iqr"),
    always<&TimeSummary::ci95_low_time_s, Real>("ci95_low_time_s"),
    always<&TimeSummary::ci95_high_time_s, Real>("ci95_high_time_s"),
    always<&TimeSummary::ci95_rel_halfwidth, Real>("ci95_rel_halfwidth"),
    always<&TimeSummary::outliers, Int>("outliers"),
};

// cost.hpp's order; a quantity that is NaN (absent) is left out.
constexpr Field<Cost> kCostFields[] = {
    if_set<&Cost::bytes_read, Real>("bytes_read"),
    if_set<&Cost::bytes_written, Real>("bytes_written"),
    if_set<&Cost::bytes, Real>("bytes"),
    if_set<&Cost::compulsory_bytes, Real>("compulsory_bytes"),
    if_set<&Cost::flop, Real>("flop"),
    if_set<&Cost::launches, Real>("launches"),
    if_set<&Cost::host_syncs, Real>("host_syncs"),
    if_set<&Cost::peak_work_bytes, Real>("peak_work_bytes"),
};

constexpr Field<ProcessStats> kProcessStatsFields[] = {
    always<&ProcessStats::count, Int>("count"),
    always<&ProcessStats::time_s, Reals>("time_s"),
    always<&ProcessStats::spread, Real>("spread"),
    if_set<&ProcessStats::host_probe_time_s, Maybe<Reals>>("host_probe_time_s"),
};

// timing.method: a string, read into Timing::method (TimingMethod's table), a spelling it lacks kept in other_method.
void write_timing_method(const Timing& t, Json& j, const char* key) { j[key] = t.method_name(); }
void read_timing_method(Timing& t, const Json& j, const char* key, const std::string& where) {
  read_member<&Timing::other_method, Text>(t, j, key, where);
  if (const std::optional<TimingMethod> m = parse_timing_method(t.other_method)) {
    t.method = *m;
    t.other_method.clear();
  }
}

// lab.cpp's order. The host probe's two keys are left out of records from before it (host_probe_recorded false).
constexpr Field<Timing> kTimingFields[] = {
    always<&Timing::mode, Text>("mode"),
    always<&Timing::l2, Text>("l2"),
    Field<Timing>{"method", &write_timing_method, &read_timing_method},
    always<&Timing::batch, Int>("batch"),
    always<&Timing::interleaved_points, Int>("interleaved_points"),
    always<&Timing::stop_reason, Text>("stop_reason"),
    always<&Timing::target_rel_ci, Real>("target_rel_ci"),
    always<&Timing::median_ci_rel_halfwidth, Real>("median_ci_rel_halfwidth"),
    always<&Timing::host_syncs_per_iteration, Real>("host_syncs_per_iteration"),
    always<&Timing::wall, Maybe<Object<kTimeSummaryFields>>>("wall"),
    always<&Timing::device, Maybe<Object<kTimeSummaryFields>>>("device"),
    always<&Timing::submit, Maybe<Object<kTimeSummaryFields>>>("submit"),
    always<&Timing::wall_samples_s, Reals>("wall_samples_s"),
    always<&Timing::device_samples_s, RealsOrNull>("device_samples_s"),
    always<&Timing::submit_samples_s, RealsOrNull>("submit_samples_s"),
    if_flag<&Timing::host_probe, Maybe<Object<kTimeSummaryFields>>>("host_probe", &Timing::host_probe_recorded),
    if_flag<&Timing::host_probe_samples_s, RealsOrNull>("host_probe_samples_s", &Timing::host_probe_recorded),
    always<&Timing::time_s, Real>("time_s"),
    if_set<&Timing::processes, Maybe<Object<kProcessStatsFields>>>("processes"),
};

// The headline of `correctness`, as it is written: the reported comparison's numbers, then the detail.
struct CorrectnessHeadline {
  double value = kNoValue, reference = kNoValue, abs_error = kNoValue, tolerance = kNoValue;
  bool passed = false;
  Json detail = Json::object();
};

constexpr Field<CorrectnessHeadline> kCorrectnessFields[] = {
    always<&CorrectnessHeadline::value, Real>("value"),
    always<&CorrectnessHeadline::reference, Real>("reference"),
    always<&CorrectnessHeadline::abs_error, Real>("abs_error"),
    always<&CorrectnessHeadline::tolerance, Real>("tolerance"),
    always<&CorrectnessHeadline::passed, Flag>("passed"),
    always<&CorrectnessHeadline::detail, Opaque>("detail"),
};

// One comparison (labrun/experiment.hpp's CheckResult) in `correctness.detail`; its notes follow these keys.
constexpr Field<CheckResult> kCheckResultFields[] = {
    always<&CheckResult::kind, Text>("kind"),
    always<&CheckResult::array, Text>("array"),
    always<&CheckResult::worst, Real>("worst_ratio"),
    always<&CheckResult::worst_index, Int>("worst_index"),
    always<&CheckResult::worst_value, Real>("worst_value"),
    always<&CheckResult::worst_reference, Real>("worst_reference"),
    always<&CheckResult::worst_bound, Real>("worst_bound"),
    always<&CheckResult::compared, Int>("compared"),
    always<&CheckResult::mismatches, Int>("mismatches"),
    always<&CheckResult::not_finite, Int>("not_finite"),
    always<&CheckResult::max_abs_error, Real>("max_abs_error"),
    always<&CheckResult::max_rel_error, Real>("max_rel_error"),
    always<&CheckResult::scale, Real>("tolerance_scale"),
};

/// `correctness`'s own object: a field that is a record of its own (Correctness), by to_json and
/// correctness_from_json.
struct CorrectnessCodec : Codec {
  static Json write(const Correctness& c) { return to_json(c); }
  static void read(const Json& v, const std::string& where, Correctness& out) {
    require_object(v, where);
    out = correctness_from_json(v);
  }
};

constexpr Named<CheckState> kCheckStates[] = {
    {CheckState::passed, "passed"},   {CheckState::failed, "failed"}, {CheckState::off, "off"},
    {CheckState::not_run, "not_run"}, {CheckState::warned, "warned"},
};

/// An integrity check's state: the name of a CheckState. @throws ResultError for any other string.
struct CheckStateWord : Codec {
  static Json write(CheckState s) { return to_string(s); }
  static void read(const Json& v, const std::string& where, CheckState& out) {
    std::string text;
    Text::read(v, where, text);
    const auto s = parse_in(kCheckStates, text);
    if (!s) throw ResultError(where + ": " + shown(v) + " is not a check state (" + names_in(kCheckStates) + ")");
    out = *s;
  }
};

constexpr Field<IntegrityCheck> kIntegrityCheckFields[] = {
    always<&IntegrityCheck::state, CheckStateWord>("state"),
    always<&IntegrityCheck::reason, OptText>("reason"),
};

constexpr Field<AuditFindings> kAuditFoundFields[] = {
    if_set<&AuditFindings::escaped, OptText>("escaped"),
    always<&AuditFindings::syncs, Texts>("syncs"),
    always<&AuditFindings::allocations, Texts>("allocations"),
    always<&AuditFindings::stream_ordered, Texts>("stream_ordered"),
};

constexpr Field<Integrity> kIntegrityFields[] = {
    always<&Integrity::fences, Object<kIntegrityCheckFields>>("fences"),
    always<&Integrity::inputs, Object<kIntegrityCheckFields>>("inputs"),
    always<&Integrity::recheck, Object<kIntegrityCheckFields>>("recheck"),
    if_set<&Integrity::audit, Maybe<Object<kIntegrityCheckFields>>>("audit"),
    if_set<&Integrity::audit_found, Maybe<Object<kAuditFoundFields>>>("audit_found"),
    if_set<&Integrity::retimed, OptText>("retimed"),
};

constexpr Field<SanitizerFinding> kSanitizerFindingFields[] = {
    always<&SanitizerFinding::kind, Text>("kind"),
    always<&SanitizerFinding::kernel, Text>("kernel"),
    always<&SanitizerFinding::array, OptText>("array"),
    always<&SanitizerFinding::detail, Text>("detail"),
};

constexpr Field<SanitizerArray> kSanitizerArrayFields[] = {
    always<&SanitizerArray::name, Text>("name"),
    always<&SanitizerArray::role, Text>("role"),
    always<&SanitizerArray::address, Text>("address"),
    always<&SanitizerArray::bytes, Int>("bytes"),
};

constexpr Field<SanitizerReport> kSanitizerFields[] = {
    always<&SanitizerReport::tool, Text>("tool"),
    always<&SanitizerReport::errors, Int>("errors"),
    always<&SanitizerReport::findings, List<kSanitizerFindingFields>>("findings"),
    always<&SanitizerReport::arrays, List<kSanitizerArrayFields>>("arrays"),
};

constexpr Field<KernelTime> kKernelTimeFields[] = {
    always<&KernelTime::op, Text>("op"),
    always<&KernelTime::bytes, Real>("bytes"),
    always<&KernelTime::time_s, Real>("time_s"),
    always<&KernelTime::bandwidth_Bps, FiniteReal>("bandwidth_Bps"),
};

constexpr Field<LaunchTime> kLaunchTimeFields[] = {
    always<&LaunchTime::name, Text>("name"),     always<&LaunchTime::kind, Text>("kind"),
    always<&LaunchTime::stream, Text>("stream"), always<&LaunchTime::grid, Text>("grid"),
    always<&LaunchTime::block, Text>("block"),   always<&LaunchTime::bytes, FiniteReal>("bytes"),
    always<&LaunchTime::time_s, Real>("time_s"),
};

constexpr Field<Warning> kWarningFields[] = {
    always<&Warning::kind, Text>("kind"),
    always<&Warning::message, Text>("message"),
};

constexpr Field<Note> kNoteFields[] = {
    always<&Note::measured, Text>("measured"),
    always<&Note::bound, Text>("bound"),
    always<&Note::evidence, Text>("evidence"),
    always<&Note::next_change, Text>("next_change"),
    always<&Note::other_cause_checked, Text>("other_cause_checked"),
};

// interpret_point()'s order, here and in the three tables after it.
constexpr Field<Ceilings> kCeilingsFields[] = {
    always<&Ceilings::memory_bandwidth_Bps, FiniteReal>("memory_bandwidth_Bps"),
    always<&Ceilings::memory_source, OptText>("memory_source"),
    always<&Ceilings::copy_bandwidth_Bps, FiniteReal>("copy_bandwidth_Bps"),
    always<&Ceilings::read_bandwidth_Bps, FiniteReal>("read_bandwidth_Bps"),
    always<&Ceilings::theoretical_bandwidth_Bps, FiniteReal>("theoretical_bandwidth_Bps"),
    always<&Ceilings::peak_bandwidth_Bps, FiniteReal>("peak_bandwidth_Bps"),
    always<&Ceilings::compute_flop_per_s, FiniteReal>("compute_flop_per_s"),
    always<&Ceilings::bf16_gemm_flop_per_s, FiniteReal>("bf16_gemm_flop_per_s"),
    always<&Ceilings::peak_compute_flop_per_s, FiniteReal>("peak_compute_flop_per_s"),
    always<&Ceilings::launch_time_s, FiniteReal>("launch_time_s"),
    always<&Ceilings::l2_bytes, FiniteReal>("l2_bytes"),
};

constexpr Field<Fractions> kFractionsFields[] = {
    always<&Fractions::memory_ceiling, FiniteReal>("memory_ceiling"),
    always<&Fractions::copy, FiniteReal>("copy"),
    always<&Fractions::read, FiniteReal>("read"),
    always<&Fractions::theoretical, FiniteReal>("theoretical"),
    always<&Fractions::compute_ceiling, FiniteReal>("compute_ceiling"),
    always<&Fractions::bf16_gemm, FiniteReal>("bf16_gemm"),
    always<&Fractions::roofline, FiniteReal>("roofline"),
};

// host_probe_time_s is left out of records from before the host probe (host_probe_recorded false).
constexpr Field<Evidence> kEvidenceFields[] = {
    always<&Evidence::rule, Text>("rule"),
    always<&Evidence::fraction_of_memory_ceiling, FiniteReal>("fraction_of_memory_ceiling"),
    always<&Evidence::fraction_of_compute_ceiling, FiniteReal>("fraction_of_compute_ceiling"),
    always<&Evidence::launch_overhead_share, FiniteReal>("launch_overhead_share"),
    always<&Evidence::host_stall_share, FiniteReal>("host_stall_share"),
    always<&Evidence::host_syncs_per_iteration, FiniteReal>("host_syncs_per_iteration"),
    if_flag<&Evidence::host_probe_time_s, FiniteReal>("host_probe_time_s", &Evidence::host_probe_recorded),
    always<&Evidence::ideal_time_per_launch_s, FiniteReal>("ideal_time_per_launch_s"),
    always<&Evidence::time_s, FiniteReal>("time_s"),
    always<&Evidence::time_floor_s, FiniteReal>("time_floor_s"),
};

constexpr Field<Interpretation> kInterpretationFields[] = {
    always<&Interpretation::time_s, FiniteReal>("time_s"),
    always<&Interpretation::wall_time_s, FiniteReal>("wall_time_s"),
    always<&Interpretation::device_time_s, FiniteReal>("device_time_s"),
    always<&Interpretation::submit_time_s, FiniteReal>("submit_time_s"),
    always<&Interpretation::iteration_time_s, FiniteReal>("iteration_time_s"),
    always<&Interpretation::iteration_time_basis, OptText>("iteration_time_basis"),
    always<&Interpretation::timing_method, OptText>("timing_method"),
    always<&Interpretation::achieved_bandwidth_Bps, FiniteReal>("achieved_bandwidth_Bps"),
    always<&Interpretation::compulsory_bandwidth_Bps, FiniteReal>("compulsory_bandwidth_Bps"),
    always<&Interpretation::flop_per_s, FiniteReal>("flop_per_s"),
    always<&Interpretation::arithmetic_intensity_flop_per_byte, FiniteReal>("arithmetic_intensity_flop_per_byte"),
    always<&Interpretation::ceilings, Object<kCeilingsFields>>("ceilings"),
    always<&Interpretation::fraction_of, Object<kFractionsFields>>("fraction_of"),
    always<&Interpretation::roofline_ceiling_flop_per_s, FiniteReal>("roofline_ceiling_flop_per_s"),
    always<&Interpretation::ridge_point_flop_per_byte, FiniteReal>("ridge_point_flop_per_byte"),
    always<&Interpretation::time_floor_s, FiniteReal>("time_floor_s"),
    always<&Interpretation::launch_overhead_share, FiniteReal>("launch_overhead_share"),
    always<&Interpretation::host_stall_share, FiniteReal>("host_stall_share"),
    always<&Interpretation::host_syncs_per_iteration, FiniteReal>("host_syncs_per_iteration"),
    always<&Interpretation::ideal_time_per_launch_s, FiniteReal>("ideal_time_per_launch_s"),
    always<&Interpretation::l2_resident, Flag>("l2_resident"),
    always<&Interpretation::bound, Text>("bound"),
    always<&Interpretation::confidence, OptText>("confidence"),
    always<&Interpretation::reason, Text>("reason"),
    always<&Interpretation::evidence, Object<kEvidenceFields>>("evidence"),
    always<&Interpretation::suspect, Flag>("suspect"),
    always<&Interpretation::suspect_reason, OptText>("suspect_reason"),
    always<&Interpretation::note, Object<kNoteFields>>("note"),
};

// lab.cpp's order, after "type". Read in three passes, so that a record with several bad fields is refused for the
// same one as always: the five required strings (pass 0), then axes, backend, reason and failed_phase (pass 1),
// then the rest (pass 2).
constexpr Field<PointRecord> kPointFields[] = {
    always<&PointRecord::id, RequiredText>("id", 0),
    always<&PointRecord::key, RequiredText>("key", 0),
    always<&PointRecord::experiment, RequiredText>("experiment", 0),
    always<&PointRecord::variant, RequiredText>("variant", 0),
    always<&PointRecord::axes, OpaqueObject>("axes", 1),
    always<&PointRecord::backend, Text>("backend", 1),
    always<&PointRecord::status, StatusWord>("status", 0),
    always<&PointRecord::reason, OptText>("reason", 1),
    always<&PointRecord::warnings, List<kWarningFields>>("warnings", 2),
    if_set<&PointRecord::device_state, Opaque>("device_state", 2),
    if_flag<&PointRecord::cost, Object<kCostFields>>("cost", &PointRecord::cost_recorded, 2),
    if_set<&PointRecord::memory, Opaque>("memory", 2),
    if_set<&PointRecord::correctness, Maybe<CorrectnessCodec>>("correctness", 2),
    if_set<&PointRecord::integrity, Maybe<Object<kIntegrityFields>>>("integrity", 2),
    if_set<&PointRecord::timing, Maybe<Object<kTimingFields>>>("timing", 2),
    if_set<&PointRecord::kernels, Maybe<List<kKernelTimeFields>>>("kernels", 2),
    if_set<&PointRecord::launches, Maybe<List<kLaunchTimeFields>>>("launches", 2),
    if_set<&PointRecord::sanitizer, Maybe<Object<kSanitizerFields>>>("sanitizer", 2),
    if_set<&PointRecord::interpretation, Maybe<Object<kInterpretationFields>>>("interpretation", 2),
    if_set<&PointRecord::failed_phase, OptText>("failed_phase", 1),
    if_set<&PointRecord::phases, Opaque>("phases", 2),
};

/// The record of table `Rows` in `j`, read at `where`. @throws ResultError as Object<Rows>::read.
template <class T, const auto& Rows>
T read_record(const Json& j, const std::string& where) {
  T x;
  Object<Rows>::read(j, where, x);
  return x;
}

}  // namespace

// ---- TimeSummary, Cost, ProcessStats, Timing ----------------------------------------------------------------

TimeSummary TimeSummary::of(const Summary& s) {
  TimeSummary t;
  t.count = static_cast<std::int64_t>(s.count);
  t.median_time_s = s.median;
  t.mean_time_s = s.mean;
  t.stddev_time_s = s.stddev;
  t.min_time_s = s.min;
  t.max_time_s = s.max;
  t.p5_time_s = s.p5;
  t.p25_time_s = s.p25;
  t.p75_time_s = s.p75;
  t.p95_time_s = s.p95;
  t.rel_iqr = s.rel_iqr;
  t.ci95_low_time_s = s.ci_low;
  t.ci95_high_time_s = s.ci_high;
  t.ci95_rel_halfwidth = s.ci_rel_halfwidth;
  t.outliers = static_cast<std::int64_t>(s.outliers);
  return t;
}

// A record type's to_json and its reader (NAME_from_json) through its field table: write_fields writes every
// field in the table's order, read_record checks each one's type and names `what` (the record's key) in errors.
#define LABRUN_RECORD_JSON(Type, reader, fields, what)            \
  Json to_json(const Type& x) { return write_fields(fields, x); } \
  Type reader(const Json& j) { return read_record<Type, fields>(j, what); }

LABRUN_RECORD_JSON(TimeSummary, time_summary_from_json, kTimeSummaryFields, "")

Json to_json(const Cost& c) { return write_fields(kCostFields, c); }
Cost cost_from_json(const Json& j) { return j.is_null() ? Cost{} : read_record<Cost, kCostFields>(j, "cost"); }

LABRUN_RECORD_JSON(ProcessStats, process_stats_from_json, kProcessStatsFields, "processes")

LABRUN_RECORD_JSON(Timing, timing_from_json, kTimingFields, "timing")

// ---- Correctness, kernels, warnings -----------------------------------------------------------------------

namespace {

bool is_result_key(const std::string& key) {
  for (const auto& row : kCheckResultFields)
    if (key == row.key) return true;
  return false;
}

Json result_json(const CheckResult& r) {
  Json j = write_fields(kCheckResultFields, r);
  for (const auto& [name, v] : r.notes) j[name] = json_real(v);
  return j;
}

// A comparison from its object: the table's keys, every other key but `skip`'s a note. Whether it passed is not
// written: a comparison passed iff no element is over its bound (same_buffer: iff the buffer was the input's).
// @throws ResultError for a field of the wrong type or a note that is not a number.
CheckResult result_from_json(const Json& j, const std::string& where, const std::vector<std::string>& skip) {
  require_object(j, where);
  CheckResult r;
  read_fields(kCheckResultFields, j, where, r);
  for (const auto& [key, v] : j.items()) {
    if (is_result_key(key) || std::find(skip.begin(), skip.end(), key) != skip.end()) continue;
    r.notes.emplace_back(key, real_of(v, at(where, key.c_str())));
  }
  if (r.kind == "same_buffer") {
    r.passed = false;
    for (const auto& [name, v] : r.notes) r.passed = r.passed || (name == "same_buffer" && v == 1);
  } else {
    r.passed = r.mismatches == 0;
  }
  return r;
}

// The outcome a detail spells; ResultError when it is not one (a record of an older labrun's own keys).
CheckOutcome outcome_from_detail(const Json& d) {
  require_object(d, "correctness.detail");
  CheckOutcome out;
  if (const auto it = d.find("poisoned"); it != d.end()) {
    if (!it->is_boolean()) bad("correctness.detail.poisoned", "true or false", *it);
    out.poisoned = it->get<bool>();
  }
  if (const auto it = d.find("error"); it != d.end()) {
    if (!it->is_string()) bad("correctness.detail.error", "a string", *it);
    out.error = it->get<std::string>();
    return out;
  }
  if (!d.contains("kind")) bad("correctness.detail", "a comparison", d);
  if (const auto it = d.find("checks"); it != d.end()) {
    if (!it->is_array()) bad("correctness.detail.checks", "an array", *it);
    for (std::size_t i = 0; i < it->size(); ++i)
      out.comparisons.push_back(result_from_json((*it)[i], "correctness.detail.checks[" + std::to_string(i) + "]", {}));
  } else {
    out.comparisons.push_back(result_from_json(d, "correctness.detail", {"poisoned"}));
  }
  return out;
}

}  // namespace

Json to_json(const Correctness& c) {
  if (!c.as_written.is_null()) return c.as_written;
  const CheckOutcome& o = c.outcome;
  CorrectnessHeadline h{o.value(), o.reference(), o.abs_error(), o.tolerance(), o.passed(), Json::object()};
  if (const CheckResult* r = o.reported()) {
    h.detail = result_json(*r);
    if (o.comparisons.size() > 1) {
      Json all = Json::array();
      for (const auto& each : o.comparisons) all.push_back(result_json(each));
      h.detail["checks"] = all;
    }
  } else if (!o.error.empty()) {
    h.detail["error"] = o.error;
  }
  if (o.poisoned) h.detail["poisoned"] = *o.poisoned;
  return write_fields(kCorrectnessFields, h);
}

Correctness correctness_from_json(const Json& j) {
  read_record<CorrectnessHeadline, kCorrectnessFields>(j, "correctness");  // the headline's types, as ever
  Correctness c;
  try {
    c.outcome = outcome_from_detail(j.at("detail"));
    if (to_json(c).dump() == j.dump()) return c;  // byte for byte: 0 and 0.0 compare equal as Json
  } catch (const std::exception&) {               // not an outcome: kept as written
  }
  c.outcome = CheckOutcome{};
  c.as_written = j;
  return c;
}

LABRUN_RECORD_JSON(KernelTime, kernel_time_from_json, kKernelTimeFields, "kernels[]")

LABRUN_RECORD_JSON(Warning, warning_from_json, kWarningFields, "warnings[]")

// ---- Interpretation ---------------------------------------------------------------------------------------

LABRUN_RECORD_JSON(Note, note_from_json, kNoteFields, "note")

LABRUN_RECORD_JSON(Ceilings, ceilings_from_json, kCeilingsFields, "ceilings")

LABRUN_RECORD_JSON(Fractions, fractions_from_json, kFractionsFields, "fraction_of")

LABRUN_RECORD_JSON(Evidence, evidence_from_json, kEvidenceFields, "evidence")

LABRUN_RECORD_JSON(Interpretation, interpretation_from_json, kInterpretationFields, "interpretation")
#undef LABRUN_RECORD_JSON

// ---- PointRecord -------------------------------------------------------------------------------------------

double PointRecord::sm_clock_hz(const char* when) const { return json_number(device_state, {when, "sm_clock_hz"}); }

double PointRecord::axis_number(const std::string& name) const {
  if (!axes.is_object()) return kNoValue;
  const auto it = axes.find(name);
  if (it == axes.end() || it->is_boolean()) return kNoValue;
  if (it->is_number()) return it->get<double>();
  if (it->is_string()) {
    try {
      return real_from_json(*it);
    } catch (const std::invalid_argument&) {
    }
  }
  return kNoValue;
}

std::string PointRecord::axis_word(const std::string& name) const {
  if (!axes.is_object()) return "";
  const auto it = axes.find(name);
  if (it == axes.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_number_unsigned()) return std::to_string(it->get<std::uint64_t>());
  if (it->is_number_integer()) return to_string(AxisValue(it->get<std::int64_t>()));
  if (it->is_number_float()) return to_string(AxisValue(it->get<double>()));
  return it->is_null() ? "" : it->dump();
}

const char* to_string(CheckState s) { return name_in(kCheckStates, s); }
std::optional<CheckState> parse_check_state(const std::string& name) { return parse_in(kCheckStates, name); }

Json to_json(const Integrity& i) {
  Json j = Json::object();
  put_fields(kIntegrityFields, i, j);
  return j;
}

Integrity integrity_from_json(const Json& j) { return read_record<Integrity, kIntegrityFields>(j, "integrity"); }

Json to_json(const SanitizerReport& s) {
  Json j = Json::object();
  put_fields(kSanitizerFields, s, j);
  return j;
}

SanitizerReport sanitizer_report_from_json(const Json& j) {
  return read_record<SanitizerReport, kSanitizerFields>(j, "sanitizer");
}

Json to_json(const PointRecord& p) {
  Json j = Json::object();
  j["type"] = "point";
  put_fields(kPointFields, p, j);
  return j;
}

PointRecord point_from_json(const Json& j) {
  if (!j.is_object()) bad("point record", "an object", j);
  if (const auto it = j.find("type"); it != j.end() && *it != "point") bad("type", "\"point\"", *it);
  PointRecord p;
  read_fields(kPointFields, j, "", p);
  return p;
}

DeviceState device_state_of(const PointRecord& point, const char* when) {
  DeviceState st;
  if (!point.device_state.is_object() || !point.device_state.contains(when)) return st;
  const Json& j = point.device_state[when];
  if (!j.is_object()) return st;
  st.recorded = true;
  st.sm_clock_hz = json_number(j, {"sm_clock_hz"});
  st.memory_clock_hz = json_number(j, {"memory_clock_hz"});
  st.sync_round_trip_time_s = json_number(j, {"sync_round_trip_time_s"});
  st.throttled = j.contains("throttled") && j["throttled"] == true;
  if (j.contains("clocks_event_reasons")) st.reasons = j["clocks_event_reasons"].dump();
  if (const auto t = j.find("tenants"); t != j.end() && t->is_array()) {
    st.tenants_recorded = true;
    st.tenant_count = t->size();
    st.tenants = tenants_text(*t);
  }
  return st;
}

PointRecord point_from_json_tolerant(const Json& j) {
  try {
    return point_from_json(j);
  } catch (const ResultError&) {
  }
  // The fields that read on their own; the rest keep the defaults of a record without them.
  PointRecord p;
  if (!j.is_object()) return p;
  const auto text = [&](const char* key) {
    const auto it = j.find(key);
    return (it != j.end() && it->is_string()) ? it->get<std::string>() : std::string();
  };
  p.id = text("id");
  p.key = text("key");
  p.experiment = text("experiment");
  p.variant = text("variant");
  p.backend = text("backend");
  p.status = parse_status(text("status")).value_or(Status::error);
  if (const auto it = j.find("reason"); it != j.end() && it->is_string()) p.reason = it->get<std::string>();
  if (const auto it = j.find("axes"); it != j.end() && it->is_object()) p.axes = *it;
  if (const auto it = j.find("device_state"); it != j.end()) p.device_state = *it;
  if (const auto it = j.find("cost"); it != j.end()) try {
      p.cost = cost_from_json(*it);
    } catch (const ResultError&) {
    }
  if (const auto it = j.find("timing"); it != j.end() && it->is_object()) try {
      p.timing = timing_from_json(*it);
    } catch (const ResultError&) {
    }
  return p;
}

}  // namespace labrun
