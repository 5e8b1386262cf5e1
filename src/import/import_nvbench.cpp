// import_nvbench (import_nvbench.hpp): nvbench's JSON printer's document read into a labrun run. The shape read is
// nvbench's (nvbench/json_printer.cu, json version 1): meta {argv, version}, devices [...], benchmarks [{name, axes,
// states [{name, device, axis_values [{name, type, value}], summaries [{tag, data [{name, type, value}]}],
// is_skipped, skip_reason}]}]; every number of a summary or an axis value is a string there.
#include "import_nvbench.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>

#include <fmt/format.h>

#include <labrun/point.hpp>

#include "build_info.hpp"
#include "sha256.hpp"

namespace labrun {
namespace {

// One place a document is found wanting: "FILE: PATH: WHAT".
[[noreturn]] void refuse(const ImportOptions& o, const std::string& path, const std::string& what) {
  throw ResultError(o.file + ": " + (path.empty() ? "" : path + ": ") + what);
}

const Json& member(const Json& j, const char* key, const std::string& path, const ImportOptions& o) {
  if (!j.is_object()) refuse(o, path, "not an object");
  const auto it = j.find(key);
  if (it == j.end()) refuse(o, path, std::string("has no \"") + key + "\" (is this nvbench's --json output?)");
  return *it;
}

const Json& array_member(const Json& j, const char* key, const std::string& path, const ImportOptions& o) {
  const Json& a = member(j, key, path, o);
  if (!a.is_array()) refuse(o, path + "." + key, "not an array");
  return a;
}

std::string text_member(const Json& j, const char* key, const std::string& path, const ImportOptions& o) {
  const Json& t = member(j, key, path, o);
  if (!t.is_string()) refuse(o, path + "." + key, "not a string");
  return t.get<std::string>();
}

// nvbench writes numbers as strings ("7.77e-06", "65936"); a JSON number is taken too.
double number_of(const Json& v, const std::string& path, const ImportOptions& o) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) refuse(o, path, "not a number");
  const std::string s = v.get<std::string>();
  char* end = nullptr;
  errno = 0;
  const double x = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE) refuse(o, path, "not a number: \"" + s + "\"");
  return x;
}

// A state's summaries by tag: the value of each one's data entry "value", with its JSON path.
struct Summaries {
  std::map<std::string, std::pair<const Json*, std::string>> by_tag;
  const ImportOptions* o = nullptr;

  bool has(const std::string& tag) const { return by_tag.count(tag) > 0; }
  // The summary's value as a number; nullopt when absent.
  std::optional<double> number(const std::string& tag) const {
    const auto it = by_tag.find(tag);
    if (it == by_tag.end()) return std::nullopt;
    return number_of(*it->second.first, it->second.second, *o);
  }
  // A time in seconds: finite and >= 0.
  std::optional<double> seconds(const std::string& tag) const {
    const auto x = number(tag);
    if (x && !(std::isfinite(*x) && *x >= 0))
      refuse(*o, by_tag.at(tag).second, fmt::format("a time of {} s (must be finite and not negative)", *x));
    return x;
  }
  // A sample count: a positive integer.
  std::optional<std::int64_t> count(const std::string& tag) const {
    const auto x = number(tag);
    if (!x) return std::nullopt;
    if (!(std::isfinite(*x) && *x >= 1 && *x == std::floor(*x) && *x < 9e15))
      refuse(*o, by_tag.at(tag).second, fmt::format("a sample count of {} (must be a positive integer)", *x));
    return static_cast<std::int64_t>(*x);
  }
};

Summaries summaries_of(const Json& state, const std::string& path, const ImportOptions& o) {
  Summaries s;
  s.o = &o;
  const Json& list = array_member(state, "summaries", path, o);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("{}.summaries[{}]", path, i);
    const std::string tag = text_member(list[i], "tag", at, o);
    const Json& data = array_member(list[i], "data", at, o);
    for (std::size_t k = 0; k < data.size(); ++k)
      if (text_member(data[k], "name", fmt::format("{}.data[{}]", at, k), o) == "value")
        s.by_tag[tag] = {&member(data[k], "value", fmt::format("{}.data[{}]", at, k), o),
                         fmt::format("{}.data[{}].value", at, k)};
  }
  return s;
}

// The state's axes as labrun axis values: int64 as integers, float64 as reals, the rest as words.
std::vector<std::pair<std::string, AxisValue>> axes_of(const Json& state, const std::string& path,
                                                       const ImportOptions& o) {
  std::vector<std::pair<std::string, AxisValue>> axes;
  const Json& list = array_member(state, "axis_values", path, o);
  for (std::size_t i = 0; i < list.size(); ++i) {
    const std::string at = fmt::format("{}.axis_values[{}]", path, i);
    const std::string name = text_member(list[i], "name", at, o);
    const std::string type = text_member(list[i], "type", at, o);
    if (name.empty() || name == "l2" || name == "mode")
      refuse(o, at + ".name", "axis name \"" + name + "\" is empty or one labrun reserves (l2, mode)");
    const Json& value = member(list[i], "value", at, o);
    if (type == "int64") {
      const double x = number_of(value, at + ".value", o);
      if (x != std::floor(x) || !std::isfinite(x)) refuse(o, at + ".value", "an int64 axis value that is no integer");
      axes.emplace_back(name, static_cast<std::int64_t>(x));
    } else if (type == "float64") {
      axes.emplace_back(name, number_of(value, at + ".value", o));
    } else {
      axes.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  return axes;
}

// timing for one measurement: the GPU-time summary under `prefix` ("nv/cold/time/gpu/").
Timing cold_timing(const Summaries& s, const std::string& where) {
  Timing t;
  t.mode = "eager";
  t.l2 = "cold";
  t.method = TimingMethod::nvbench_cold;
  t.stop_reason = "imported";
  TimeSummary d;
  const std::string p = "nv/cold/time/gpu/";
  d.count = s.count("nv/cold/sample_size").value_or(0);
  d.median_time_s = s.seconds(p + "median").value_or(kNoValue);
  d.mean_time_s = s.seconds(p + "mean").value_or(kNoValue);
  d.stddev_time_s = s.seconds(p + "stdev/absolute").value_or(kNoValue);
  d.min_time_s = s.seconds(p + "min").value_or(kNoValue);
  d.max_time_s = s.seconds(p + "max").value_or(kNoValue);
  d.p25_time_s = s.seconds(p + "q1").value_or(kNoValue);
  d.p75_time_s = s.seconds(p + "q3").value_or(kNoValue);
  d.rel_iqr = s.number(p + "iqr/relative").value_or(kNoValue);
  // The median where nvbench wrote one (newer nvbench), else the mean.
  t.time_s = std::isfinite(d.median_time_s) ? d.median_time_s : d.mean_time_s;
  if (!std::isfinite(t.time_s)) throw ResultError(where + ": a cold measurement without a GPU median or mean");
  if (std::isfinite(d.min_time_s) && std::isfinite(d.max_time_s) &&
      !(d.min_time_s <= t.time_s && t.time_s <= d.max_time_s))
    throw ResultError(fmt::format("{}: the cold GPU time {} s lies outside its own min {} s and max {} s", where,
                                  t.time_s, d.min_time_s, d.max_time_s));
  t.device = d;
  return t;
}

Timing batch_timing(const Summaries& s, const std::string& where) {
  Timing t;
  t.mode = "eager";
  t.l2 = "hot";
  t.method = TimingMethod::nvbench_batch;
  t.stop_reason = "imported";
  TimeSummary d;
  d.count = s.count("nv/batch/sample_size").value_or(0);
  d.mean_time_s = s.seconds("nv/batch/time/gpu/mean").value_or(kNoValue);
  if (!std::isfinite(d.mean_time_s)) throw ResultError(where + ": a batch measurement without a GPU mean");
  t.time_s = d.mean_time_s;
  t.device = d;
  return t;
}

// Bytes the benchmark declared it moves (nvbench's add_global_memory_reads/writes): NaN when it declared none.
double declared_bytes(const Summaries& s) {
  double bytes = 0;
  bool any = false;
  for (const auto& [tag, value] : s.by_tag)
    if (tag.rfind("nv/gmem/reads/", 0) == 0 || tag.rfind("nv/gmem/writes/", 0) == 0) {
      const double b = number_of(*value.first, value.second, *s.o);
      if (!(std::isfinite(b) && b >= 0)) refuse(*s.o, value.second, "a byte count that is negative or not finite");
      bytes += b;
      any = true;
    }
  return any ? bytes : kNoValue;
}

PointRecord point_of(const std::string& benchmark, std::vector<std::pair<std::string, AxisValue>> axes,
                     const std::string& l2) {
  Point p{"nvbench", benchmark, std::move(axes)};
  p.axes.emplace_back("l2", l2);
  PointRecord rec;
  rec.id = p.id();
  rec.key = p.key();
  rec.experiment = p.experiment;
  rec.variant = p.variant;
  for (const auto& [name, value] : p.axes) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) rec.axes[name] = *i;
    else if (const auto* d = std::get_if<double>(&value)) rec.axes[name] = json_real(*d);
    else rec.axes[name] = std::get<std::string>(value);
  }
  rec.backend = "cuda:0";
  return rec;
}

Json device_json(const Json& d, const std::string& path, const ImportOptions& o) {
  Json out = {{"kind", "cuda"}, {"name", text_member(d, "name", path, o)}};
  const auto num = [&](const char* key) {
    const auto it = d.find(key);
    return it == d.end() ? kNoValue : number_of(*it, path + "." + key, o);
  };
  if (const double sm = num("sm_version"); std::isfinite(sm))
    out["arch"] = fmt::format("sm_{}", static_cast<long long>(sm) / 10);
  const std::pair<const char*, const char*> keys[] = {{"number_of_sms", "sm_count"},
                                                      {"l2_cache_size", "l2_bytes"},
                                                      {"global_memory_size", "memory_bytes"},
                                                      {"global_memory_bus_bandwidth", "theoretical_bandwidth_Bps"},
                                                      {"sm_default_clock_rate", "sm_clock_max_hz"}};
  for (const auto& [from, to] : keys)
    if (const double x = num(from); std::isfinite(x)) out[to] = x;
  return out;
}

// "SHA" or "SHA+dirty" as environment.code.
Json code_json(const ImportOptions& o) {
  std::string sha = o.code_rev;
  bool dirty = false;
  if (const auto plus = sha.find('+'); plus != std::string::npos) {
    if (sha.substr(plus) != "+dirty") throw ResultError("--code-rev " + o.code_rev + ": expected SHA or SHA+dirty");
    dirty = true;
    sha.resize(plus);
  }
  if (sha.empty() ||
      !std::all_of(sha.begin(), sha.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    throw ResultError("--code-rev " + o.code_rev + ": expected a commit sha (hex digits), optionally +dirty");
  return {{"project", o.project}, {"git_sha", sha}, {"git_dirty", dirty}, {"source", "--code-rev"}};
}

}  // namespace

Run import_nvbench(const Json& doc, const ImportOptions& o) {
  const Json& meta = member(doc, "meta", "", o);
  const Json& devices = array_member(doc, "devices", "", o);
  const Json& benchmarks = array_member(doc, "benchmarks", "", o);
  Json tool = {{"name", "nvbench"}};
  if (const Json* v = json_find(meta, {"version", "nvbench"}); v && v->is_object()) {
    tool["version"] = v->value("string", "");
    tool["git_sha"] = v->value("git_sha", "");
    tool["git_dirty"] = v->value("git_is_dirty", false);
  }
  if (const Json* v = json_find(meta, {"version", "json", "string"}); v && v->is_string()) tool["json_version"] = *v;
  Run run;
  run.file = o.file;
  run.has_header = true;
  std::vector<std::string> device_names;
  Json device = nullptr;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    Json d = device_json(devices[i], fmt::format("devices[{}]", i), o);
    device_names.push_back(d["name"]);
    if (i == 0) device = d;
  }
  const bool several_devices = devices.size() > 1;
  for (std::size_t b = 0; b < benchmarks.size(); ++b) {
    const std::string bpath = fmt::format("benchmarks[{}]", b);
    const std::string name = text_member(benchmarks[b], "name", bpath, o);
    const Json& states = array_member(benchmarks[b], "states", bpath, o);
    for (std::size_t s = 0; s < states.size(); ++s) {
      const std::string spath = fmt::format("{}.states[{}]", bpath, s);
      const std::string where = o.file + ": " + spath;
      auto axes = axes_of(states[s], spath, o);
      if (!several_devices)
        axes.erase(std::remove_if(axes.begin(), axes.end(), [](const auto& a) { return a.first == "Device"; }),
                   axes.end());
      if (states[s].value("is_skipped", false)) {
        PointRecord rec = point_of(name, axes, "cold");
        rec.status = Status::skipped;
        rec.reason = "skipped by nvbench: " + states[s].value("skip_reason", std::string("no reason given"));
        rec.cost_recorded = false;
        run.points.push_back(std::move(rec));
        continue;
      }
      const Summaries sums = summaries_of(states[s], spath, o);
      const double bytes = declared_bytes(sums);
      const auto add = [&](const std::string& l2, Timing timing) {
        PointRecord rec = point_of(name, axes, l2);
        rec.status = Status::ok;
        rec.cost.bytes = bytes;
        rec.timing = std::move(timing);
        run.points.push_back(std::move(rec));
      };
      const bool cold = sums.has("nv/cold/time/gpu/mean") || sums.has("nv/cold/time/gpu/median");
      const bool batch = sums.has("nv/batch/time/gpu/mean");
      if (!cold && !batch)
        refuse(o, spath, "a state with no cold or batch GPU time (nv/cold/time/gpu/*, nv/batch/time/gpu/mean)");
      if (cold) add("cold", cold_timing(sums, where));
      if (batch) add("hot", batch_timing(sums, where));
    }
  }
  if (run.points.empty()) refuse(o, "benchmarks", "no benchmark state to import");
  Json env = {{"tool", tool},
              {"labrun", {{"version", build_info().version}, {"git_sha", build_info().git_sha}}},
              {"backend", "cuda:0"},
              {"device", device}};
  if (several_devices) env["devices"] = device_names;
  if (!o.code_rev.empty()) env["code"] = code_json(o);
  // The suite's identity (its benchmarks and their axes, not the numbers): two runs of one nvbench binary share it,
  // as two runs of one labrun config do.
  Json suite = Json::array();
  for (const Json& b : benchmarks) suite.push_back({{"name", b.value("name", "")}, {"axes", b.value("axes", Json())}});
  run.header.json = {{"type", "header"},
                     {"schema_version", kRecordSchemaVersion},
                     {"created_utc", o.created_utc},
                     {"argv", meta.value("argv", Json::array())},
                     {"config",
                      {{"path", o.file},
                       {"sha256", sha256_hex(suite.dump())},
                       {"experiment", "nvbench"},
                       {"description", "imported from nvbench's JSON (" + o.file + ")"}}},
                     {"lab", Json::object()},
                     {"environment", env},
                     {"import", {{"tool", "nvbench"}, {"file", o.file}}},
                     {"warnings", Json::array()},
                     {"point_count", run.points.size()}};
  return run;
}

}  // namespace labrun
