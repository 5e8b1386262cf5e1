// Checks for sense of what a result file holds (check_header, check_point, check_segment; docs/records.md): the
// schema version, lab settings, process fields, times, summaries, phases and timestamps, each failure a ResultError
// naming the key and the value.
#include "point_record.hpp"

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

using namespace fields;  // shown() and the reading checks (record_fields.hpp)

namespace {

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

bool is_utc_timestamp(const std::string& text) {
  try {
    check_timestamp(Json{{"t", text}}, "t");
    return true;
  } catch (const ResultError&) {
    return false;
  }
}

}  // namespace labrun
