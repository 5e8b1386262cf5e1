// import_gbench (import.hpp): Google Benchmark's JSON reporter's document read into a labrun run. The shape read is
// the library's (src/json_reporter.cc, v1.6 to v1.9): context {date, host_name, executable, num_cpus, mhz_per_cpu,
// cpu_scaling_enabled, caches, load_avg, library_build_type, library_version}, benchmarks [{name, run_name,
// run_type "iteration" | "aggregate", repetitions, repetition_index, threads, iterations, real_time, cpu_time,
// time_unit, aggregate_name, aggregate_unit, error_occurred, error_message, bytes_per_second, ...}].
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <fmt/format.h>

#include "import.hpp"
#include "import_common.hpp"
#include "stats.hpp"

namespace labrun {
namespace {

using namespace import_detail;

// Seconds per time_unit (Google Benchmark's TimeUnit: kNanosecond, kMicrosecond, kMillisecond, kSecond).
double seconds_per(const std::string& unit, const std::string& path, const ImportOptions& o) {
  if (unit == "ns") return 1e-9;
  if (unit == "us") return 1e-6;
  if (unit == "ms") return 1e-3;
  if (unit == "s") return 1;
  refuse(o, path, "time_unit \"" + unit + "\" is none of ns, us, ms, s");
}

double number_member(const Json& j, const char* key, const std::string& path, const ImportOptions& o) {
  const Json& v = member(j, key, path, o);
  if (!v.is_number()) refuse(o, path + "." + key, "not a number");
  return v.get<double>();
}

std::int64_t count_member(const Json& j, const char* key, const std::string& path, const ImportOptions& o) {
  const Json& v = member(j, key, path, o);
  if (!v.is_number_integer() || v.get<std::int64_t>() < 1)
    refuse(o, path + "." + key, "not a positive integer: " + v.dump());
  return v.get<std::int64_t>();
}

// context.date ("2026-12-06T17:29:05+00:00", the offset of the machine's zone) as labrun's UTC timestamp.
std::string utc_of_date(const std::string& date, const ImportOptions& o) {
  std::tm tm{};
  int off_h = 0, off_m = 0;
  char sign = '+';
  int used = 0;
  if (std::sscanf(date.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c%2d:%2d%n", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                  &tm.tm_min, &tm.tm_sec, &sign, &off_h, &off_m, &used) != 9 ||
      static_cast<std::size_t>(used) != date.size() || (sign != '+' && sign != '-'))
    refuse(o, "context.date",
           "\"" + date + "\" is not a date as Google Benchmark writes one (2026-12-06T17:29:05+00:00)");
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const std::time_t local = timegm(&tm);
  const std::time_t utc = local - (sign == '+' ? 1 : -1) * (off_h * 3600 + off_m * 60);
  std::tm out{};
  gmtime_r(&utc, &out);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000Z", &out);
  if (!is_utc_timestamp(buf)) refuse(o, "context.date", "\"" + date + "\" is not a time that exists");
  return buf;
}

// An argument's value: an int64 where the text is one (Google Benchmark's arguments are), else the text.
AxisValue axis_value(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(text.c_str(), &end, 10);
  if (!text.empty() && end == text.c_str() + text.size() && errno != ERANGE) return static_cast<std::int64_t>(x);
  return text;
}

/// A benchmark's run_name split into the family (the variant) and its axes: "BM_Copy/n:8/64/threads:4/real_time" is
/// variant BM_Copy with axes n = 8, arg1 = 64, threads = 4 and options = "real_time" (the run's settings that name
/// it: real_time, process_time, manual_time, iterations:N, repeats:N, min_time:X, min_warmup_time:X).
struct ParsedName {
  std::string variant;
  std::vector<std::pair<std::string, AxisValue>> axes;
};

ParsedName parse_name(const std::string& run_name, const std::string& path, const ImportOptions& o) {
  ParsedName p;
  std::vector<std::string> parts;
  std::size_t start = 0;
  for (std::size_t slash; (slash = run_name.find('/', start)) != std::string::npos; start = slash + 1)
    parts.push_back(run_name.substr(start, slash - start));
  parts.push_back(run_name.substr(start));
  p.variant = parts.front();
  if (p.variant.empty()) refuse(o, path, "a benchmark name with no family before its first '/': \"" + run_name + "\"");
  static const std::set<std::string> settings_flags{"real_time", "process_time", "manual_time"};
  static const std::set<std::string> settings_keys{"iterations", "repeats", "min_time", "min_warmup_time"};
  std::string options;
  std::size_t unnamed = 0;
  std::set<std::string> names;
  const auto add = [&](const std::string& name, AxisValue value, bool ours = false) {
    if (name.empty() || name == "l2" || name == "mode" || (name == "options" && !ours) || !names.insert(name).second)
      refuse(o, path,
             "argument \"" + name + "\" of \"" + run_name + "\" is empty, given twice or a name labrun " +
                 "reserves (l2, mode, options)");
    p.axes.emplace_back(name, std::move(value));
  };
  for (std::size_t i = 1; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const auto colon = part.find(':');
    const std::string key = colon == std::string::npos ? "" : part.substr(0, colon);
    if (settings_flags.count(part) || settings_keys.count(key)) {
      options += (options.empty() ? "" : "/") + part;
    } else if (key == "threads") {
      add("threads", axis_value(part.substr(colon + 1)));
    } else if (colon != std::string::npos) {
      add(key, axis_value(part.substr(colon + 1)));  // ArgNames: "n:8"
    } else {
      add(fmt::format("arg{}", unnamed++), axis_value(part));  // state.range(k)
    }
  }
  if (!options.empty()) add("options", options, true);
  return p;
}

/// What one run_name's entries say: each repetition's time, its aggregates, or its error.
struct Group {
  std::string run_name, path;            ///< path: the first entry's JSON path
  std::vector<double> times_s;           ///< each repetition's real time per iteration
  std::vector<std::int64_t> iterations;  ///< each repetition's iterations
  std::set<std::int64_t> repetitions_seen;
  std::map<std::string, double> aggregates_s;  ///< aggregate_name -> real time (aggregate_unit "time" only)
  std::int64_t repetitions = 0;
  std::vector<double> bytes;              ///< bytes per iteration where it reported bytes_per_second
  std::optional<double> aggregate_bytes;  ///< the same from the mean aggregate (used where no repetition has it)
  std::optional<std::string> error;
};

// The bytes per iteration entry `b` (real time `real_s`, its unit's seconds `scale`) says the benchmark moves:
// bytes_per_second times the time Google Benchmark divided by, which is the real time for a run with UseRealTime or
// UseManualTime (its name says /real_time, /manual_time), else the CPU time. nullopt without a positive rate.
std::optional<double> bytes_per_iteration(const Json& b, const std::string& run_name, double real_s, double scale,
                                          const std::string& path, const ImportOptions& o) {
  if (!b.contains("bytes_per_second")) return std::nullopt;
  const bool real_based = run_name.find("/real_time") != std::string::npos ||
                          run_name.find("/manual_time") != std::string::npos;
  const double per = real_based ? real_s : number_member(b, "cpu_time", path, o) * scale;
  const double bps = number_member(b, "bytes_per_second", path, o);
  if (!(std::isfinite(bps) && bps > 0 && std::isfinite(per) && per > 0)) return std::nullopt;
  return bps * per;
}

// Reads entry `b` into its group.
void read_entry(const Json& b, const std::string& path, Group& g, const ImportOptions& o) {
  if (b.contains("error_occurred") && !b["error_occurred"].is_boolean())
    refuse(o, path + ".error_occurred", "not true or false");
  if (b.value("error_occurred", false)) {
    g.error = b.contains("error_message") ? text_member(b, "error_message", path, o) : std::string("no message");
    return;
  }
  const std::string type = b.contains("run_type") ? text_member(b, "run_type", path, o) : "iteration";
  const std::string unit = b.contains("time_unit") ? text_member(b, "time_unit", path, o) : "ns";
  const double scale = seconds_per(unit, path + ".time_unit", o);
  const double real = number_member(b, "real_time", path, o) * scale;
  if (b.contains("repetitions")) g.repetitions = std::max(g.repetitions, count_member(b, "repetitions", path, o));
  if (type == "iteration") {
    if (!(std::isfinite(real) && real > 0))
      refuse(o, path + ".real_time", fmt::format("a time of {} s per iteration (must be finite and above 0)", real));
    std::int64_t rep = 0;
    if (b.contains("repetition_index")) {
      if (!b["repetition_index"].is_number_integer() || b["repetition_index"].get<std::int64_t>() < 0)
        refuse(o, path + ".repetition_index", "not an integer of 0 or more");
      rep = b["repetition_index"].get<std::int64_t>();
    }
    if (!g.repetitions_seen.insert(rep).second)
      refuse(o, path, fmt::format("repetition {} of {} given twice", rep, g.run_name));
    g.times_s.push_back(real);
    g.iterations.push_back(count_member(b, "iterations", path, o));
    if (const auto bytes = bytes_per_iteration(b, g.run_name, real, scale, path, o)) g.bytes.push_back(*bytes);
  } else if (type == "aggregate") {
    const std::string name = text_member(b, "aggregate_name", path, o);
    const std::string aunit = b.contains("aggregate_unit") ? text_member(b, "aggregate_unit", path, o) : "time";
    if (aunit != "time") return;  // cv (a percentage) and user aggregates of other units: not a time
    if (!(std::isfinite(real) && real >= 0))
      refuse(o, path + ".real_time", fmt::format("an aggregate time of {} s (must be finite and not negative)", real));
    if (!g.aggregates_s.emplace(name, real).second)
      refuse(o, path, "a second \"" + name + "\" aggregate of " + g.run_name);
    if (name == "mean") g.aggregate_bytes = bytes_per_iteration(b, g.run_name, real, scale, path, o);
  } else {
    refuse(o, path + ".run_type", "\"" + type + "\" is neither iteration nor aggregate");
  }
}

// A group's timing: from its repetitions (each a sample, and with two or more each a process median), else from its
// aggregates (mean, median, stddev: a summary without samples, as an nvbench file gives).
Timing timing_of(const Group& g, const ImportOptions& o) {
  Timing t = imported_timing("hot", TimingMethod::gbench);
  if (!g.times_s.empty()) {
    std::vector<std::int64_t> its = g.iterations;
    std::sort(its.begin(), its.end());
    t.batch = its[its.size() / 2];
    t.wall = TimeSummary::of(summarize(g.times_s));
    t.wall_samples_s = g.times_s;
    t.time_s = t.wall->median_time_s;
    if (g.times_s.size() >= 2) {
      ProcessStats p;
      p.count = static_cast<std::int64_t>(g.times_s.size());
      p.time_s = g.times_s;
      const auto [lo, hi] = std::minmax_element(g.times_s.begin(), g.times_s.end());
      p.spread = *hi / *lo - 1;
      t.processes = p;
    }
    return t;
  }
  const auto agg = [&](const char* name) {
    const auto it = g.aggregates_s.find(name);
    return it == g.aggregates_s.end() ? kNoValue : it->second;
  };
  TimeSummary s;
  s.count = g.repetitions;
  s.mean_time_s = agg("mean");
  s.median_time_s = agg("median");
  s.stddev_time_s = agg("stddev");
  s.min_time_s = agg("min");
  s.max_time_s = agg("max");
  t.time_s = std::isfinite(s.median_time_s) ? s.median_time_s : s.mean_time_s;
  if (!(t.time_s > 0)) refuse(o, g.path, "no repetition and no mean or median aggregate above 0 s for " + g.run_name);
  t.wall = s;
  return t;
}

// The document's entries grouped by run_name, in the order each name first appears. @throws ResultError when there
// is none.
std::vector<Group> groups_of(const Json& benchmarks, const ImportOptions& o) {
  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;  // run_name -> groups[]
  for (std::size_t i = 0; i < benchmarks.size(); ++i) {
    const std::string path = fmt::format("benchmarks[{}]", i);
    const std::string name = text_member(benchmarks[i], "name", path, o);
    const std::string run_name = benchmarks[i].contains("run_name") ? text_member(benchmarks[i], "run_name", path, o)
                                                                    : name;
    auto [it, fresh] = index.emplace(run_name, groups.size());
    if (fresh) {
      groups.emplace_back();
      groups.back().run_name = run_name;
      groups.back().path = path;
    }
    read_entry(benchmarks[i], path, groups[it->second], o);
  }
  if (groups.empty()) refuse(o, "benchmarks", "no benchmark to import");
  return groups;
}

// What a group measured, into its point: the error Google Benchmark reported, else its timing and bytes.
void measure(const Group& g, const ImportOptions& o, PointRecord& rec) {
  if (g.error) {
    rec.status = Status::error;
    rec.reason = "Google Benchmark reported an error: " + *g.error;
    rec.cost_recorded = false;
  } else {
    rec.status = Status::ok;
    rec.timing = timing_of(g, o);
    if (!g.bytes.empty()) rec.cost.bytes = median(g.bytes);
    else if (g.aggregate_bytes) rec.cost.bytes = *g.aggregate_bytes;
  }
}

// A point per group, named by its run_name (refused when two groups name one point); `names` gets each run_name.
std::vector<PointRecord> points_of(const std::vector<Group>& groups, const ImportOptions& o, Json& names) {
  std::vector<PointRecord> points;
  std::map<std::string, std::string> seen;  // key -> the run_name that made it
  for (const Group& g : groups) {
    ParsedName parsed = parse_name(g.run_name, g.path + ".run_name", o);
    PointRecord rec = imported_point("gbench", parsed.variant, std::move(parsed.axes), "host");
    if (const auto [it, fresh] = seen.emplace(rec.key, g.run_name); !fresh)
      refuse(o, g.path, "\"" + g.run_name + "\" is the same point as \"" + it->second + "\" (" + rec.key + ")");
    names.push_back(g.run_name);
    measure(g, o, rec);
    points.push_back(std::move(rec));
  }
  return points;
}

// The tool's record from context: the library's version and build type, the benchmark's executable.
Json tool_of(const Json& context, const ImportOptions& o) {
  Json tool = {{"name", "gbench"}};
  for (const char* key : {"library_version", "library_build_type", "executable"})
    if (context.contains(key)) tool[key] = text_member(context, key, "context", o);
  return tool;
}

// The host's record from context: its name, CPU count, and the load (load average, CPU clock) where given.
Json host_of(const Json& context, const ImportOptions& o) {
  Json host = Json::object();
  if (context.contains("host_name")) host["hostname"] = text_member(context, "host_name", "context", o);
  if (context.contains("num_cpus")) host["logical_cpus"] = count_member(context, "num_cpus", "context", o);
  Json load = Json::object();
  if (context.contains("load_avg") && context["load_avg"].is_array()) load["load_average"] = context["load_avg"];
  if (context.contains("mhz_per_cpu"))
    load["cpu_frequency_hz"] = number_member(context, "mhz_per_cpu", "context", o) * 1e6;
  if (!load.empty()) host["load"] = load;
  return host;
}

// What Google Benchmark itself warns of when it runs, as header warnings ({kind, message}, as a sweep's).
void add_warnings(const Json& context, const Json& tool, Json& header) {
  if (context.value("cpu_scaling_enabled", false))
    header["warnings"].push_back(
        to_json(Warning{"cpu_scaling",
                        "Google Benchmark: CPU scaling was enabled when it ran: its times may move with the CPU's "
                        "frequency"}));
  if (tool.value("library_build_type", std::string()) == "debug")
    header["warnings"].push_back(to_json(
        Warning{"debug_build", "Google Benchmark: the library was a debug build (context.library_build_type)"}));
}

}  // namespace

Run import_gbench(const Json& doc, const ImportOptions& given) {
  ImportOptions o = expecting(given, "Google Benchmark's JSON output (--benchmark_format=json or --benchmark_out)");
  const Json& context = object_member(doc, "context", "", o);
  const Json& benchmarks = array_member(doc, "benchmarks", "", o);
  if (o.created_utc.empty() && context.contains("date"))
    o.created_utc = utc_of_date(text_member(context, "date", "context", o), o);
  const std::vector<Group> groups = groups_of(benchmarks, o);
  Run run = imported_run(o);
  Json names = Json::array();
  run.points = points_of(groups, o, names);
  const Json tool = tool_of(context, o);
  ImportedHeader h;
  h.tool = "gbench";
  h.environment = {{"tool", tool},
                   {"host", host_of(context, o)},
                   {"backend", "host"},
                   {"device", {{"kind", "host"}, {"name", "host CPU (Google Benchmark)"}}}};
  // The suite is the benchmark binary: its runs share config.path and config.sha256 (its benchmarks' names).
  const std::string exe = tool.value("executable", std::string());
  h.suite = "gbench:" + (exe.empty() ? groups.front().run_name : std::filesystem::path(exe).filename().string());
  h.identity = names.dump();
  h.description = "imported from Google Benchmark's JSON (" + o.file + ")";
  run.header.json = imported_header(h, o, run.points.size());
  add_warnings(context, tool, run.header.json);
  return run;
}

}  // namespace labrun
