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

std::string shown(const Json& v);

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

const Json& null_json() {
  static const Json null;
  return null;
}

// The value at `path` of a header, or null.
const Json& header_at(const Json& h, std::initializer_list<const char*> path) {
  const Json* v = json_find(h, path);
  return v ? *v : null_json();
}

std::string header_word(const Json& h, std::initializer_list<const char*> path) {
  const Json& v = header_at(h, path);
  return v.is_string() ? v.get<std::string>() : std::string();
}

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

Json to_json(const TimeSummary& s) { return write_fields(kTimeSummaryFields, s); }
TimeSummary time_summary_from_json(const Json& j) { return read_record<TimeSummary, kTimeSummaryFields>(j, ""); }

Json to_json(const Cost& c) { return write_fields(kCostFields, c); }
Cost cost_from_json(const Json& j) { return j.is_null() ? Cost{} : read_record<Cost, kCostFields>(j, "cost"); }

Json to_json(const ProcessStats& p) { return write_fields(kProcessStatsFields, p); }
ProcessStats process_stats_from_json(const Json& j) {
  return read_record<ProcessStats, kProcessStatsFields>(j, "processes");
}

Json to_json(const Timing& t) { return write_fields(kTimingFields, t); }
Timing timing_from_json(const Json& j) { return read_record<Timing, kTimingFields>(j, "timing"); }

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

Json to_json(const KernelTime& k) { return write_fields(kKernelTimeFields, k); }
KernelTime kernel_time_from_json(const Json& j) { return read_record<KernelTime, kKernelTimeFields>(j, "kernels[]"); }

Json to_json(const Warning& w) { return write_fields(kWarningFields, w); }
Warning warning_from_json(const Json& j) { return read_record<Warning, kWarningFields>(j, "warnings[]"); }

// ---- Interpretation ---------------------------------------------------------------------------------------

Json to_json(const Note& n) { return write_fields(kNoteFields, n); }
Note note_from_json(const Json& j) { return read_record<Note, kNoteFields>(j, "note"); }

Json to_json(const Ceilings& c) { return write_fields(kCeilingsFields, c); }
Ceilings ceilings_from_json(const Json& j) { return read_record<Ceilings, kCeilingsFields>(j, "ceilings"); }

Json to_json(const Fractions& f) { return write_fields(kFractionsFields, f); }
Fractions fractions_from_json(const Json& j) { return read_record<Fractions, kFractionsFields>(j, "fraction_of"); }

Json to_json(const Evidence& e) { return write_fields(kEvidenceFields, e); }
Evidence evidence_from_json(const Json& j) { return read_record<Evidence, kEvidenceFields>(j, "evidence"); }

Json to_json(const Interpretation& i) { return write_fields(kInterpretationFields, i); }
Interpretation interpretation_from_json(const Json& j) {
  return read_record<Interpretation, kInterpretationFields>(j, "interpretation");
}

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

// ---- RunHeader ---------------------------------------------------------------------------------------------

std::string RunHeader::experiment() const { return header_word(json, {"config", "experiment"}); }
std::string RunHeader::description() const { return header_word(json, {"config", "description"}); }
std::string RunHeader::config_path() const { return header_word(json, {"config", "path"}); }
std::string RunHeader::config_sha256() const { return header_word(json, {"config", "sha256"}); }
std::string RunHeader::only_filter() const {
  const Json& argv = header_at(json, {"argv"});
  if (!argv.is_array()) return "";
  std::string filter;
  for (std::size_t i = 0; i < argv.size(); ++i) {
    if (!argv[i].is_string()) continue;
    const std::string& word = argv[i].get_ref<const std::string&>();
    if (word == "--only" && i + 1 < argv.size() && argv[i + 1].is_string()) filter = argv[++i].get<std::string>();
    else if (word.starts_with("--only=")) filter = word.substr(7);
  }
  return filter;
}
std::string RunHeader::created_utc() const { return header_word(json, {"created_utc"}); }
std::string RunHeader::git_sha() const { return header_word(json, {"environment", "labrun", "git_sha"}); }
std::string RunHeader::code_project() const {
  return header_at(json, {"environment", "code"}).is_object() ? header_word(json, {"environment", "code", "project"})
                                                              : std::string("labrun");
}
std::string RunHeader::code_sha() const {
  return header_at(json, {"environment", "code"}).is_object() ? header_word(json, {"environment", "code", "git_sha"})
                                                              : git_sha();
}
std::optional<bool> RunHeader::code_dirty() const {
  if (!header_at(json, {"environment", "code"}).is_object()) return git_dirty();
  const Json& v = header_at(json, {"environment", "code", "git_dirty"});
  return v.is_boolean() ? std::optional<bool>(v.get<bool>()) : std::nullopt;
}
std::string RunHeader::code_source() const { return header_word(json, {"environment", "code", "source"}); }
std::string RunHeader::code_key() const {
  const std::string sha = code_sha();
  return code_project() + "@" + (sha.empty() ? std::string("unknown") : sha) +
         (code_dirty().value_or(false) ? "+dirty" : "") + " labrun " + labrun_version();
}
std::string RunHeader::device_name() const { return header_word(json, {"environment", "device", "name"}); }
std::string RunHeader::device_uuid() const { return header_word(json, {"environment", "device", "uuid"}); }
std::string RunHeader::backend() const { return header_word(json, {"environment", "backend"}); }
std::string RunHeader::driver_version() const { return header_word(json, {"environment", "device", "driver_version"}); }
std::string RunHeader::runtime_version() const {
  return header_word(json, {"environment", "device", "runtime_version"});
}
std::string RunHeader::build_type() const { return header_word(json, {"environment", "labrun", "build_type"}); }

double RunHeader::calibration(const char* ceiling, const char* key) const {
  return json_number(json, {"calibration", ceiling, key});
}

std::string RunHeader::calibration_backend() const { return header_word(json, {"calibration", "backend"}); }
double RunHeader::l2_bytes() const { return json_number(json, {"environment", "device", "l2_bytes"}); }
double RunHeader::theoretical_bandwidth_Bps() const {
  return json_number(json, {"environment", "device", "theoretical_bandwidth_Bps"});
}
double RunHeader::memory_bytes() const { return json_number(json, {"environment", "device", "memory_bytes"}); }
double RunHeader::point_count() const { return json_number(json, {"point_count"}); }
double RunHeader::process_count() const { return json_number(json, {"processes", "count"}); }

std::vector<double> RunHeader::process_calibration(const char* ceiling, const char* key) const {
  const Json& runs = header_at(json, {"processes", "runs"});
  std::vector<double> out;
  if (!runs.is_array()) return out;
  // A merge of several shards keeps the first shard's processes only: its calibrations are not the other shards'.
  if (const Json& shards = header_at(json, {"shards"}); shards.is_array() && shards.size() > 1) return out;
  for (const Json& r : runs) {
    const double v = r.is_object() ? json_number(r, {"calibration", ceiling, key}) : kNoValue;
    if (!std::isfinite(v) || v <= 0) return {};
    out.push_back(v);
  }
  return out;
}

std::string RunHeader::host_name() const { return header_word(json, {"environment", "host", "hostname"}); }
std::string RunHeader::cpu_model() const { return header_word(json, {"environment", "host", "cpu_model"}); }
std::string RunHeader::sync_wait() const { return header_word(json, {"environment", "device", "sync_wait"}); }

std::vector<double> RunHeader::load_averages_1m() const {
  std::vector<double> out;
  const auto first = [](const Json& host) {
    const Json* v = json_find(host, {"load", "load_average"});
    return v && v->is_array() && !v->empty() && (*v)[0].is_number() ? (*v)[0].get<double>() : kNoValue;
  };
  if (const Json& runs = header_at(json, {"processes", "runs"}); runs.is_array())
    for (const Json& r : runs)
      if (const Json* host = r.is_object() ? json_find(r, {"host"}) : nullptr; host != nullptr)
        if (const double v = first(*host); std::isfinite(v)) out.push_back(v);
  if (out.empty())
    if (const double v = first(header_at(json, {"environment", "host"})); std::isfinite(v)) out.push_back(v);
  return out;
}

const Json& RunHeader::lab() const {
  static const Json empty = Json::object();
  const Json& v = header_at(json, {"lab"});
  return v.is_object() ? v : empty;
}

const Json& RunHeader::hypothesis() const { return header_at(json, {"config", "hypothesis"}); }
const Json& RunHeader::device() const { return header_at(json, {"environment", "device"}); }
const Json& RunHeader::build() const { return header_at(json, {"environment", "labrun"}); }
const Json& RunHeader::calibration_json() const { return header_at(json, {"calibration"}); }

const Json& RunHeader::warnings() const {
  static const Json empty = Json::array();
  const Json& v = header_at(json, {"warnings"});
  return v.is_array() ? v : empty;
}

std::string RunHeader::device_kind() const { return header_word(json, {"environment", "device", "kind"}); }
std::string RunHeader::device_arch() const { return header_word(json, {"environment", "device", "arch"}); }
double RunHeader::sm_count() const { return json_number(json, {"environment", "device", "sm_count"}); }
std::string RunHeader::labrun_version() const { return header_word(json, {"environment", "labrun", "version"}); }
std::optional<bool> RunHeader::git_dirty() const {
  const Json& v = header_at(json, {"environment", "labrun", "git_dirty"});
  return v.is_boolean() ? std::optional<bool>(v.get<bool>()) : std::nullopt;
}
std::string RunHeader::cxx_compiler() const { return header_word(json, {"environment", "labrun", "cxx_compiler"}); }
std::string RunHeader::cuda_compiler() const { return header_word(json, {"environment", "labrun", "cuda_compiler"}); }
std::string RunHeader::lab_timing() const { return header_word(json, {"lab", "timing"}); }
std::string RunHeader::lab_l2() const { return header_word(json, {"lab", "l2"}); }
double RunHeader::lab_target_rel_ci() const { return json_number(json, {"lab", "target_rel_ci"}); }

Json to_json(const RunHeader& h) { return h.json; }

RunHeader header_from_json(const Json& j) {
  if (!j.is_object()) bad("header", "an object", j);
  if (const auto it = j.find("type"); it != j.end() && *it != "header") bad("type", "\"header\"", *it);
  return RunHeader{j};
}

// ---- Checks for sense (check_header, check_point) ---------------------------------------------------------

namespace {

/// "-1.0" and the like: a value as JSON text, cut at 80 characters.
std::string shown(const Json& v) {
  std::string text = v.dump();
  return text.size() > 80 ? text.substr(0, 77) + "..." : text;
}

bool is_count(const Json& v) { return v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0); }

void check_schema_version(const Json& h) {
  const std::string known = "the integers 1 to " + std::to_string(kRecordSchemaVersion);
  const auto it = h.find("schema_version");
  if (it == h.end())
    throw ResultError("schema_version: missing; every labrun header has one (this labrun reads " + known + ")");
  const bool ok = it->is_number_integer() && it->get<std::int64_t>() >= 1 &&
                  it->get<std::int64_t>() <= kRecordSchemaVersion;
  if (!ok)
    throw ResultError("schema_version: " + shown(*it) + " is not a schema this labrun reads (it reads " + known +
                      "; a file of a newer labrun?)");
}

// One lab setting this build knows against its rule (src/config/lab_settings.hpp): its JSON type (an integer, a number,
// one of its words, true or false; null for an optional setting left unset, such as tolerance_scale) and its least
// value. Its greatest value is not checked: the upper bounds of case H09 came later than some result files, and a
// record says what ran. Settings this build does not know (of older schemas, such as host_max_n) are left alone.
void check_lab_value(const std::string& key, const Json& v) {
  const LabSettingInfo* info = find_lab_setting(key);
  if (!info) return;
  const LabRule& rule = info->rule;
  if (v.is_null()) {
    if (!info->to_json(LabSettings{}).is_null())  // only an optional setting is written as null when unset
      throw ResultError("lab." + key + ": null, but this setting always has a value");
    return;
  }
  const std::string where = "lab." + key + ": " + shown(v);
  switch (rule.kind) {
    case LabRule::Kind::Bool:
      if (!v.is_boolean()) throw ResultError(where + " is not true or false, as this setting is");
      return;
    case LabRule::Kind::Word: {
      std::string words;
      for (const auto& w : rule.words) words += (words.empty() ? "" : ", ") + w;
      if (!v.is_string() || std::find(rule.words.begin(), rule.words.end(), v.get<std::string>()) == rule.words.end())
        throw ResultError(where + " is not one of this setting's words (" + words + ")");
      return;
    }
    case LabRule::Kind::Integer:
      if (!v.is_number_integer()) throw ResultError(where + " is not an integer, as this setting is");
      break;
    case LabRule::Kind::Real:
      if (!v.is_number()) throw ResultError(where + " is not a number, as this setting is");
      break;
  }
  const double x = v.get<double>();
  if (x < rule.min || (!rule.inclusive && x == rule.min))
    throw ResultError(where + " is out of range: the setting is " + (rule.inclusive ? "at least " : "more than ") +
                      fmt::format("{}", rule.min) + " (docs/config.md)");
}

void check_process_fields(const Json& h) {
  if (const Json* c = json_find(h, {"processes", "count"}); c && !(is_count(*c) && c->get<std::int64_t>() >= 1))
    throw ResultError("processes.count: " + shown(*c) + " is not a number of processes (an integer >= 1)");
  const Json* process = json_find(h, {"process"});
  if (!process) return;
  std::int64_t got[2] = {-1, -1};  // index, count: -1 when absent or not a count
  const char* keys[] = {"index", "count"};
  for (int k = 0; k < 2; ++k)
    if (const Json* v = process->is_object() ? json_find(*process, {keys[k]}) : nullptr; v && is_count(*v))
      got[k] = v->get<std::int64_t>();
  if (got[0] < 1 || got[0] > got[1])
    throw ResultError("process: " + shown(*process) + " is not {index, count} with 1 <= index <= count");
}

// A time in seconds: NaN (no value) or at least 0.
void check_time(double t, const std::string& where) {
  if (t < 0) throw ResultError(where + ": " + shown(json_real(t)) + " is negative; a time is at least 0 s");
}

void check_times(const std::vector<double>& ts, const std::string& where) {
  for (std::size_t i = 0; i < ts.size(); ++i) check_time(ts[i], where + "[" + std::to_string(i) + "]");
}

void check_at_least(std::int64_t n, std::int64_t least, const std::string& where) {
  if (n < least)
    throw ResultError(where + ": " + std::to_string(n) + " is not a count (at least " + std::to_string(least) + ")");
}

void check_summary(const OptionalSummary& s, const std::string& where) {
  if (!s) return;
  check_at_least(s->count, 0, where + ".count");
  check_at_least(s->outliers, 0, where + ".outliers");
  const std::pair<const char*, double> times[] = {{"median_time_s", s->median_time_s}, {"mean_time_s", s->mean_time_s},
                                                  {"min_time_s", s->min_time_s},       {"max_time_s", s->max_time_s},
                                                  {"p5_time_s", s->p5_time_s},         {"p25_time_s", s->p25_time_s},
                                                  {"p75_time_s", s->p75_time_s},       {"p95_time_s", s->p95_time_s}};
  for (const auto& [key, t] : times) check_time(t, where + "." + key);
}

void check_timing(const Timing& t) {
  check_time(t.time_s, "timing.time_s");
  check_at_least(t.batch, 1, "timing.batch");
  check_at_least(t.interleaved_points, 1, "timing.interleaved_points");
  check_summary(t.wall, "timing.wall");
  check_summary(t.device, "timing.device");
  check_summary(t.submit, "timing.submit");
  check_summary(t.host_probe, "timing.host_probe");
  check_times(t.wall_samples_s, "timing.wall_samples_s");
  check_times(t.device_samples_s, "timing.device_samples_s");
  check_times(t.submit_samples_s, "timing.submit_samples_s");
  check_times(t.host_probe_samples_s, "timing.host_probe_samples_s");
  if (!t.processes) return;
  check_at_least(t.processes->count, 0, "timing.processes.count");
  check_times(t.processes->time_s, "timing.processes.time_s");
  if (t.processes->host_probe_time_s)
    check_times(*t.processes->host_probe_time_s, "timing.processes.host_probe_time_s");
}

// The interpretation's times (what a loop costs, the medians it read, the floor the ceilings allow).
void check_interpretation(const Interpretation& in) {
  const std::pair<const char*, double> times[] = {{"time_s", in.time_s},
                                                  {"wall_time_s", in.wall_time_s},
                                                  {"device_time_s", in.device_time_s},
                                                  {"submit_time_s", in.submit_time_s},
                                                  {"iteration_time_s", in.iteration_time_s},
                                                  {"time_floor_s", in.time_floor_s}};
  for (const auto& [key, t] : times) check_time(t, std::string("interpretation.") + key);
}

// `phases` is kept as written (an object of phase -> {time_s, ...}); each phase's times (its keys that end in
// "time_s": time_s, first_iteration_time_s, ...) are numbers of at least 0 s.
void check_phases(const Json& phases) {
  if (phases.is_null()) return;
  if (!phases.is_object()) bad("phases", "an object", phases);
  for (const auto& [name, phase] : phases.items()) {
    const std::string where = "phases." + name;
    if (!phase.is_object()) bad(where, "an object", phase);
    for (const auto& [key, value] : phase.items())
      if (key.ends_with("time_s")) check_time(real_of(value, where + "." + key), where + "." + key);
  }
}

// A timestamp as labrun writes it (utc_timestamp(): "2026-12-06T07:20:02.123Z", the fraction optional), when
// present and not null.
void check_timestamp(const Json& r, const char* key) {
  const auto it = r.find(key);
  if (it == r.end() || it->is_null()) return;
  static const std::regex form(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z)");
  if (!it->is_string() || it->get_ref<const std::string&>().size() > 40 ||
      !std::regex_match(it->get_ref<const std::string&>(), form))
    throw ResultError(std::string(key) + ": " + shown(*it) +
                      " is not a UTC timestamp as labrun writes one (YYYY-MM-DDTHH:MM:SS.mmmZ)");
  // A time that exists (history orders runs by it): a year from 1970, a month's own days, hours, minutes, seconds.
  const std::string& t = it->get_ref<const std::string&>();
  const auto field = [&](std::size_t at, std::size_t n) { return std::stoi(t.substr(at, n)); };
  const int year = field(0, 4), month = field(5, 2), day = field(8, 2);
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool date = year >= 1970 && month >= 1 && month <= 12 && day >= 1 &&
                    day <= kDays[std::max(1, std::min(month, 12)) - 1] + (month == 2 && leap ? 1 : 0);
  if (!date || field(11, 2) > 23 || field(14, 2) > 59 || field(17, 2) > 60)
    throw ResultError(std::string(key) + ": " + shown(*it) + " is not a time that exists (a date from 1970 on)");
}

// An object, when present and not null.
void check_object(const Json& r, const char* key) {
  if (const auto it = r.find(key); it != r.end() && !it->is_null() && !it->is_object())
    throw ResultError(std::string(key) + ": " + shown(*it) + " is not an object");
}

}  // namespace

void check_segment(const Json& s) {
  static const std::string kIndexKey{"index", 5};  // the schema's word for a segment's number
  const auto index = s.find(kIndexKey);
  if (index == s.end() || !is_count(*index) || index->get<double>() < 2)
    throw ResultError("index: " + (index == s.end() ? std::string("missing") : shown(*index)) +
                      " is not a segment's index (an integer >= 2: the header is segment 1)");
  check_timestamp(s, "created_utc");
  for (const char* key : {"environment", "calibration", "lab"}) check_object(s, key);
  if (const auto it = s.find("points_held"); it != s.end() && !it->is_null() && !is_count(*it))
    throw ResultError("points_held: " + shown(*it) + " is not a count (an integer >= 0)");
  if (const auto it = s.find("argv"); it != s.end() && !it->is_null()) {
    bool words = it->is_array();
    if (words)
      for (const Json& a : *it) words = words && a.is_string();
    if (!words) throw ResultError("argv: " + shown(*it) + " is not an array of strings");
  }
  if (const auto it = s.find("lab"); it != s.end() && it->is_object())
    for (const auto& [key, value] : it->items()) check_lab_value(key, value);
}

void check_header(const RunHeader& header) {
  const Json& h = header.json;
  check_schema_version(h);
  check_timestamp(h, "created_utc");
  for (const char* key : {"environment", "calibration"}) check_object(h, key);
  if (const auto it = h.find("point_count"); it != h.end() && !it->is_null() && !is_count(*it))
    throw ResultError("point_count: " + shown(*it) + " is not a count (an integer >= 0)");
  if (const auto it = h.find("lab"); it != h.end() && !it->is_null() && !it->is_object())
    throw ResultError("lab: " + shown(*it) + " is not an object of lab settings");
  for (const auto& [key, value] : header.lab().items()) check_lab_value(key, value);
  check_process_fields(h);
}

void check_point(const PointRecord& p) {
  // The id is the key's (Point::id(): FNV-1a 64 of the key, 16 hex digits): an id that is not names another point,
  // and resume, report and diff, which match points by id, would count this one twice or not at all.
  if (const std::string id = fmt::format("{:016x}", fnv1a64(p.key)); p.id != id)
    throw ResultError("id: " + shown(Json(p.id)) + " is not the id of key " + shown(Json(p.key)) + " (" + id +
                      ", the FNV-1a 64 of the key): the line was edited, or written by another tool");
  if (p.timing) check_timing(*p.timing);
  if (p.interpretation) check_interpretation(*p.interpretation);
  check_phases(p.phases);
  if (p.kernels)
    for (std::size_t i = 0; i < p.kernels->size(); ++i)
      check_time((*p.kernels)[i].time_s, "kernels[" + std::to_string(i) + "].time_s");
  if (p.launches)
    for (std::size_t i = 0; i < p.launches->size(); ++i)
      check_time((*p.launches)[i].time_s, "launches[" + std::to_string(i) + "].time_s");
}

void check_point_of_run(const PointRecord& p, const RunHeader& header) {
  const std::string e = header.experiment();
  if (!e.empty() && p.experiment != e)
    throw ResultError("experiment: " + p.experiment + ", but the header of this run is of experiment " + e +
                      " (points of another run appended to this file?)");
}

// ---- load_results -------------------------------------------------------------------------------------------

namespace {

namespace fs = std::filesystem;

/// The number of lines of the regular file `path` (newlines, plus an unterminated last line), read in 1 MiB
/// blocks, for reserving the points' vector; stops early with Interrupted once a signal arrived. It stops at the
/// first line longer than kMaxRecordLineBytes, counting that line and no more: the reader refuses that line when it
/// gets there (RecordLines), so a file is never read past its first over-long line (a sparse 10 GiB file without a
/// newline is refused after 64 MiB, not after all of it; case H02).
std::size_t count_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> block(1 << 20);
  std::size_t lines = 0, line_bytes = 0;
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    throw_if_interrupted();
    const char* p = block.data();
    const char* const end = p + in.gcount();
    while (p < end) {
      const auto* newline = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      line_bytes += static_cast<std::size_t>((newline ? newline : end) - p);
      if (line_bytes > kMaxRecordLineBytes) return lines + 1;
      if (!newline) break;
      ++lines;
      line_bytes = 0;
      p = newline + 1;
    }
  }
  return lines + (line_bytes > 0);
}

/// Empties `v` and frees its buffer.
void drop(std::vector<double>& v) { std::vector<double>().swap(v); }

/// The message of a header in the middle of a run.
std::string mid_run_header(std::size_t held, double announced, std::size_t header_line) {
  return "a second header after " + std::to_string(held) + " of the " +
         std::to_string(static_cast<std::int64_t>(announced)) + " points the header of line " +
         std::to_string(header_line) +
         " announces: a header starts a file, or a whole run after another whole one (concatenated runs)";
}

/// One file through load_results(): its lines in order, each record checked and added to the run it belongs to.
class FileLoader {
 public:
  FileLoader(const std::string& path, ResultSet& set, LoadDepth depth)
      : in_(path), path_(path), set_(set), depth_(depth), lines_(count_lines(path)) {}

  /// Reads the whole file into set.runs. @throws ResultError as load_results, Interrupted on a signal.
  void load();

 private:
  void record(Json& r);
  void header(const Json& r);
  void point(const Json& r);
  std::string where() const { return printable(path_) + ":" + std::to_string(in_.line_number()); }

  RecordLines in_;
  std::string path_;
  ResultSet& set_;
  LoadDepth depth_;
  std::size_t lines_;
  std::optional<Run> run_;
  std::size_t header_line_ = 0, duplicates_ = 0;
  std::unordered_map<std::string, std::size_t> ids_;  // of the current run, with their lines
};

void FileLoader::load() {
  std::size_t records = 0;
  for (std::string line; in_.next(line);) {
    throw_if_interrupted();  // a sweep's --resume check of a large file stops on Ctrl-C (src/base/interrupt.hpp)
    if (line.empty()) continue;
    std::optional<Json> parsed = parse_line_or_torn(line, in_.unterminated(), where(), set_.warnings);
    if (!parsed) break;
    ++records;
    try {
      record(*parsed);
    } catch (const ResultError& e) {
      throw ResultError(where() + ": " + e.what());
    }
  }
  if (records == 0) throw ResultError(path_ + ": empty; expected a labrun result file (JSON Lines, header first)");
  if (!run_) throw ResultError(path_ + ": no header and no point records");
  set_.runs.push_back(std::move(*run_));
}

// One record, by its type; the caller adds the file and line to a ResultError.
void FileLoader::record(Json& r) {
  if (!r.is_object()) throw ResultError("not a JSON object, so not a labrun record");
  const auto type = r.find("type");
  if (type == r.end() || !type->is_string()) throw ResultError("not a labrun record (no string \"type\")");
  if (*type == "header") {
    header(r);
  } else if (*type == "point") {
    point(r);
  } else if (*type == "segment") {
    if (!run_) throw ResultError("a segment before any header: a labrun result file starts with its header line");
    check_segment(r);
    run_->segments.push_back(std::move(r));
  } else {
    throw ResultError("type: " + shown(*type) +
                      " is not a record type of a labrun result file (header, point, segment): a line of another "
                      "tool, or an edited one");
  }
}

// A header starts the file, or a new run after a whole one (a concatenation of runs).
void FileLoader::header(const Json& r) {
  RunHeader h = header_from_json(r);
  check_header(h);
  if (run_) {
    const double announced = run_->header.point_count();
    if (std::isfinite(announced) && static_cast<double>(run_->points.size()) < announced)
      throw ResultError(mid_run_header(run_->points.size(), announced, header_line_));
    set_.runs.push_back(std::move(*run_));
  }
  run_ = Run{path_, std::move(h), true, {}, {}};
  header_line_ = in_.line_number();
  ids_.clear();
}

void FileLoader::point(const Json& r) {
  if (!run_)
    throw ResultError(
        "a point before any header: a labrun result file starts with its header line (is this a "
        "labrun result file?)");
  PointRecord p = point_from_json(r);
  check_point(p);
  check_point_of_run(p, run_->header);
  const std::size_t line = in_.line_number();
  if (const auto [it, fresh] = ids_.emplace(p.id, line); !fresh) {
    const std::string text = where() + ": point " + p.id + " (" + p.key + ") is also at line " +
                             std::to_string(it->second) + " of the same run (two writers on one file?)";
    if (set_.first_duplicate.empty()) set_.first_duplicate = text;
    if (duplicates_++ < 3) set_.warnings.push_back(text);
  }
  // One allocation for a file of one run (the usual case) instead of a doubling vector of 2 KB records.
  if (run_->points.empty()) run_->points.reserve(lines_ > line ? lines_ - line + 1 : 1);
  run_->points.push_back(std::move(p));
  if (depth_ == LoadDepth::analysis) trim_for_analysis(run_->points.back());
  if (depth_ == LoadDepth::comparison) trim_for_comparison(run_->points.back());
}

void load_file(const std::string& path, ResultSet& set, LoadDepth depth) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw ResultError("cannot read " + printable(path) + ": a folder in a list of result files");
  FileLoader(path, set, depth).load();
}

}  // namespace

namespace {

/// What neither report nor diff reads: `phases`, `correctness.detail` but the comparison the point reports (its
/// worst element, shown in the report's drill-down), device_state but the clocks and throttle state, the raw submit
/// and host-probe samples, and the raw wall samples of a point that has device samples.
void trim_unread(PointRecord& p) {
  p.phases = Json();
  p.launches.reset();
  if (p.correctness) {
    CheckOutcome& o = p.correctness->outcome;
    if (const CheckResult* reported = o.reported()) {
      CheckResult kept = *reported;  // passed() reads the same of it alone: it is a failed one if any failed
      o.comparisons.assign(1, std::move(kept));
    } else {
      o.comparisons.clear();
    }
    p.correctness->as_written = Json();
  }
  // device_state keeps what device_state_of() reads (clocks, throttle flag and reasons, the tenants), not temperature
  // or power.
  if (p.device_state.is_object()) {
    Json kept = Json::object();
    for (const char* when : {"before", "after"}) {
      const auto it = p.device_state.find(when);
      if (it == p.device_state.end()) continue;
      if (!it->is_object()) {
        kept[when] = *it;
        continue;
      }
      Json& k = kept[when] = Json::object();
      for (const char* name :
           {"sm_clock_hz", "memory_clock_hz", "throttled", "clocks_event_reasons", "tenants", "sync_round_trip_time_s"})
        if (const auto f = it->find(name); f != it->end()) k[name] = *f;
    }
    p.device_state = std::move(kept);
  }
  if (!p.timing) return;
  Timing& t = *p.timing;
  drop(t.submit_samples_s);
  drop(t.host_probe_samples_s);
  if (!t.device_samples_s.empty()) drop(t.wall_samples_s);  // the primary samples are the device's
}

}  // namespace

void trim_for_analysis(PointRecord& p) {
  trim_unread(p);
  if (p.timing) {  // report reads the summaries, never the samples
    drop(p.timing->wall_samples_s);
    drop(p.timing->device_samples_s);
  }
}

void trim_for_comparison(PointRecord& p) {
  trim_unread(p);
  p.correctness.reset();
  p.memory = Json();
  p.kernels.reset();
  if (p.timing) {  // diff reads the raw samples and the process medians, not the summaries; a record without samples
    // (another tool's, imported) is compared from its device summary, else its wall summary, which it keeps
    const bool summary_only = p.timing->device_samples_s.empty() && p.timing->wall_samples_s.empty();
    OptionalSummary* kept = !summary_only ? nullptr : p.timing->device ? &p.timing->device : &p.timing->wall;
    for (OptionalSummary* s : {&p.timing->wall, &p.timing->device, &p.timing->submit, &p.timing->host_probe})
      if (s != kept) s->reset();
  }
  if (p.interpretation) {  // diff reads the bound class alone (a host-bound point is compared host-aware)
    std::string bound = std::move(p.interpretation->bound);
    std::optional<std::string> memory_source = std::move(p.interpretation->ceilings.memory_source);
    p.interpretation.emplace();  // destroys the old one: assigning would keep its strings' buffers
    p.interpretation->bound = std::move(bound);
    p.interpretation->ceilings.memory_source = std::move(memory_source);  // the bound-normalised comparison's
  }
}

std::optional<Json> parse_line_or_torn(const std::string& line, bool at_eof, const std::string& where,
                                       std::vector<std::string>& warnings) {
  try {
    return parse_record_line(line);
  } catch (const std::exception& e) {
    // The last line without a newline: the record being written when the run was killed.
    if (at_eof) {
      warnings.push_back(where + ": dropped a torn last line (was the run killed?)");
      return std::nullopt;
    }
    // A bound of parse_record_line (nesting, keys per object, a duplicate key) says what it is; nlohmann's
    // errors are the JSON's.
    if (dynamic_cast<const ResultError*>(&e)) throw ResultError(where + ": " + e.what());
    throw ResultError(where + ": not JSON: " + e.what());
  }
}

ResultSet load_results(const std::vector<std::string>& paths, LoadDepth depth) {
  ResultSet set;
  for (const auto& arg : paths)
    for (const auto& file : expand_result_path(arg)) load_file(file, set, depth);
  return set;
}

void write_whole(const std::string& path, bool replace, const std::function<void(JsonlWriter&)>& lines) {
  write_beside_then_rename(path, replace, [&](const std::string& sibling) {  // src/base/output_file.hpp
    JsonlWriter w(sibling, false);
    lines(w);
    w.sync();
  });
}

bool RunHeader::pooled_process() const { return json.is_object() && json.contains("process"); }
std::optional<std::pair<std::int64_t, std::int64_t>> RunHeader::pool_process() const {
  const char* keys[] = {"index", "count"};  // the schema's words (process.index, process.count)
  const Json& index = header_at(json, {"process", keys[0]});
  const Json& count = header_at(json, {"process", keys[1]});
  if (!index.is_number_integer() || !count.is_number_integer()) return std::nullopt;
  return std::make_pair(index.get<std::int64_t>(), count.get<std::int64_t>());
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

bool is_utc_timestamp(const std::string& text) {
  try {
    check_timestamp(Json{{"t", text}}, "t");
    return true;
  } catch (const ResultError&) {
    return false;
  }
}

}  // namespace labrun
