// import_nvbench (import.hpp): nvbench's JSON printer's document read into a labrun run. The shape read is
// nvbench's (nvbench/json_printer.cu, json version 1): meta {argv, version}, devices [...], benchmarks [{name, axes,
// states [{name, device, axis_values [{name, type, value}], summaries [{tag, data [{name, type, value}]}],
// is_skipped, skip_reason}]}]; every number of a summary or an axis value is a string there.
#include "import.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include <labrun/point.hpp>

#include "import_common.hpp"

namespace labrun {
namespace {

using namespace import_detail;

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

// An int64 written as nvbench writes it (a string of digits, or a JSON integer), exactly: no detour through a double.
std::int64_t integer_of(const Json& v, const std::string& path, const ImportOptions& o) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (!v.is_string()) refuse(o, path, "not an integer");
  const std::string s = v.get<std::string>();
  char* end = nullptr;
  errno = 0;
  const long long x = std::strtoll(s.c_str(), &end, 10);
  if (s.empty() || end != s.c_str() + s.size() || errno == ERANGE) refuse(o, path, "not an int64: \"" + s + "\"");
  return x;
}

// A boolean where the document has one, else `fallback` when absent.
bool flag_member(const Json& j, const char* key, bool fallback, const std::string& path, const ImportOptions& o) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_boolean()) refuse(o, path + "." + key, "not true or false");
  return it->get<bool>();
}

// A state's summaries by tag: the value of each one's data entry "value", with its JSON path.
struct Summaries {
  std::map<std::string, std::pair<const Json*, std::string>> by_tag;
  /// The per-sample files --jsonbin names (tag "nv/json/bin:nv/cold/sample_times"): {filename, size} with its path.
  std::map<std::string, std::pair<const Json*, std::string>> files;
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
    if (s.by_tag.count(tag) || s.files.count(tag)) refuse(o, at, "a second summary tagged " + tag);
    if (tag.rfind("nv/json/", 0) == 0) {  // a sample file (--jsonbin): data {filename, size}, no value
      s.files[tag] = {&list[i], at};
      continue;
    }
    for (std::size_t k = 0; k < data.size(); ++k)
      if (text_member(data[k], "name", fmt::format("{}.data[{}]", at, k), o) == "value")
        s.by_tag[tag] = {&member(data[k], "value", fmt::format("{}.data[{}]", at, k), o),
                         fmt::format("{}.data[{}].value", at, k)};
    if (!s.by_tag.count(tag) && tag.rfind("nv/", 0) == 0) refuse(o, at, "a summary of nvbench's without a value");
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
      axes.emplace_back(name, integer_of(value, at + ".value", o));
    } else if (type == "float64") {
      const double x = number_of(value, at + ".value", o);
      if (!std::isfinite(x)) refuse(o, at + ".value", "a float64 axis value that is not finite");
      axes.emplace_back(name, x);
    } else {
      axes.emplace_back(name, value.is_string() ? value.get<std::string>() : value.dump());
    }
  }
  return axes;
}

// The cold samples of a state from the file --jsonbin wrote (summary "nv/json/bin:nv/cold/sample_times": data
// filename, relative to the JSON file's folder, and size; the file: `size` little-endian float32 seconds), looked up
// in o.samples_dir (the filename as written under it, else its last two parts, else its name). Empty when the
// state names no sample file. @throws ResultError naming the file for a missing or short file, a count other than
// nv/cold/sample_size, or a sample that is not a finite positive time.
std::vector<double> cold_samples(const Summaries& s, const ImportOptions& o, std::set<std::string>& files_read) {
  namespace fs = std::filesystem;
  const auto it = s.files.find("nv/json/bin:nv/cold/sample_times");
  if (it == s.files.end()) return {};
  const std::string at = it->second.second;
  std::string filename;
  std::int64_t size = -1;
  const Json& data = array_member(*it->second.first, "data", at, o);
  for (std::size_t k = 0; k < data.size(); ++k) {
    const std::string dat = fmt::format("{}.data[{}]", at, k);
    const std::string name = text_member(data[k], "name", dat, o);
    if (name == "filename") filename = text_member(data[k], "value", dat, o);
    if (name == "size") size = integer_of(member(data[k], "value", dat, o), dat + ".value", o);
  }
  if (filename.empty() || size < 1) refuse(o, at, "a sample file without a filename or a positive size");
  const fs::path written(filename);
  std::vector<fs::path> tries{fs::path(o.samples_dir) / written.relative_path()};
  if (written.has_parent_path())
    tries.push_back(fs::path(o.samples_dir) / written.parent_path().filename() / written.filename());
  tries.push_back(fs::path(o.samples_dir) / written.filename());
  std::error_code ec;
  const auto found = std::find_if(tries.begin(), tries.end(),
                                  [&](const fs::path& p) { return fs::is_regular_file(p, ec); });
  if (found == tries.end()) refuse(o, at, "its sample file " + filename + " is not in --samples " + o.samples_dir);
  if (!files_read.insert(fs::weakly_canonical(*found, ec).string()).second)
    refuse(o, at, "its sample file " + filename + " is another state's too");
  const std::uintmax_t bytes = fs::file_size(*found, ec);
  if (ec || bytes != static_cast<std::uintmax_t>(size) * 4)
    refuse(o, at,
           fmt::format("{}: {} bytes, expected {} ({} float32 samples)", found->string(), bytes, size * 4, size));
  const std::optional<std::int64_t> counted = s.count("nv/cold/sample_size");
  if (counted && *counted != size)
    refuse(o, at, fmt::format("{} samples in {}, but nv/cold/sample_size says {}", size, filename, *counted));
  std::ifstream in(*found, std::ios::binary);
  std::vector<unsigned char> raw(static_cast<std::size_t>(bytes));
  in.read(reinterpret_cast<char*>(raw.data()), static_cast<std::streamsize>(bytes));
  if (!in) refuse(o, at, "cannot read " + found->string());
  std::vector<double> samples(static_cast<std::size_t>(size));
  for (std::size_t i = 0; i < samples.size(); ++i) {
    std::uint32_t bits = 0;
    for (int b = 3; b >= 0; --b) bits = (bits << 8) | raw[i * 4 + static_cast<std::size_t>(b)];  // little-endian
    float x;
    std::memcpy(&x, &bits, sizeof x);
    if (!(std::isfinite(x) && x > 0))
      refuse(o, at, fmt::format("{}: sample {} is {} s (must be a finite time above 0)", found->string(), i, x));
    samples[i] = x;
  }
  // The samples must be the ones the summary was made from: nvbench's min and max are the samples' own (float32,
  // so within a part in a million). A file of another run, of the same count, is refused rather than compared.
  const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
  for (const auto& [tag, value] : {std::pair{"nv/cold/time/gpu/min", *lo}, std::pair{"nv/cold/time/gpu/max", *hi}})
    if (const std::optional<double> summary = s.seconds(tag);
        summary && std::fabs(value - *summary) > 1e-6 * std::max(value, *summary) + 1e-12)
      refuse(o, at,
             fmt::format("the samples in {} are not the ones its summary was made from: their {} is {} s, {} says "
                         "{} s (a sample file of another run?)",
                         filename, tag + std::string_view("nv/cold/time/gpu/").size(), value, tag, *summary));
  return samples;
}

// The cold measurement's timing: its GPU-time summary (nv/cold/time/gpu/*), checked as one set of samples' summary.
Timing cold_timing(const Summaries& s, const std::string& where) {
  if (!s.has("nv/cold/sample_size")) throw ResultError(where + ": a cold measurement without nv/cold/sample_size");
  Timing t = imported_timing("cold", TimingMethod::nvbench_cold);
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
  if (!(t.time_s > 0)) throw ResultError(where + ": a cold measurement without a GPU median or mean above 0 s");
  // What a summary of one set of samples must be: min <= q1 <= median <= q3 <= max, the mean within [min, max], the
  // standard deviation at most max - min.
  const auto ordered = [](std::initializer_list<double> xs) {
    double last = -1;
    for (double x : xs) {
      if (!std::isfinite(x)) continue;
      if (x < last) return false;
      last = x;
    }
    return true;
  };
  if (!ordered({d.min_time_s, d.p25_time_s, d.median_time_s, d.p75_time_s, d.max_time_s}) ||
      !ordered({d.min_time_s, d.mean_time_s, d.max_time_s}))
    throw ResultError(
        fmt::format("{}: the cold GPU times are not ordered as one set of samples' are (min {} s, q1 {} s, "
                    "median {} s, mean {} s, q3 {} s, max {} s): it lies outside its own min and max",
                    where, d.min_time_s, d.p25_time_s, d.median_time_s, d.mean_time_s, d.p75_time_s, d.max_time_s));
  if (std::isfinite(d.stddev_time_s) && std::isfinite(d.min_time_s) && std::isfinite(d.max_time_s) &&
      d.stddev_time_s > d.max_time_s - d.min_time_s)
    throw ResultError(fmt::format("{}: the cold GPU standard deviation {} s exceeds max - min ({} s)", where,
                                  d.stddev_time_s, d.max_time_s - d.min_time_s));
  t.device = d;
  return t;
}

// The batch measurement's timing: its count and GPU mean (nv/batch/*), the only summary nvbench writes of it.
Timing batch_timing(const Summaries& s, const std::string& where) {
  if (!s.has("nv/batch/sample_size")) throw ResultError(where + ": a batch measurement without nv/batch/sample_size");
  Timing t = imported_timing("hot", TimingMethod::nvbench_batch);
  TimeSummary d;
  d.count = s.count("nv/batch/sample_size").value_or(0);
  d.mean_time_s = s.seconds("nv/batch/time/gpu/mean").value_or(kNoValue);
  if (!(d.mean_time_s > 0)) throw ResultError(where + ": a batch measurement without a GPU mean above 0 s");
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
  axes.emplace_back("l2", l2);
  return imported_point("nvbench", benchmark, std::move(axes), "cuda:0");
}

Json device_json(const Json& d, const std::string& path, const ImportOptions& o) {
  Json out = {{"kind", "cuda"}, {"name", text_member(d, "name", path, o)}};
  const auto num = [&](const char* key) {
    const auto it = d.find(key);
    return it == d.end() ? kNoValue : number_of(*it, path + "." + key, o);
  };
  if (const double sm = num("sm_version"); std::isfinite(sm) && sm >= 10)
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

// The tool's record from meta: nvbench's JSON version, which must be 1.x (the shape read here), and nvbench's own
// version, git_sha and git_dirty where the file has them.
Json tool_of(const Json& meta, const ImportOptions& o) {
  const Json* json_major = json_find(meta, {"version", "json", "major"});
  if (!json_major || !json_major->is_number_integer() || json_major->get<std::int64_t>() != 1)
    refuse(o, "meta.version.json.major",
           "not 1: this labrun reads version 1 of nvbench's JSON (" + (json_major ? json_major->dump() : "absent") +
               ")");
  Json tool = {{"name", "nvbench"},
               {"json_version", text_member(meta["version"]["json"], "string", "meta.version.json", o)}};
  if (const Json* v = json_find(meta, {"version", "nvbench"}); v && v->is_object()) {
    tool["version"] = text_member(*v, "string", "meta.version.nvbench", o);
    if (v->contains("git_sha")) tool["git_sha"] = text_member(*v, "git_sha", "meta.version.nvbench", o);
    tool["git_dirty"] = flag_member(*v, "git_is_dirty", false, "meta.version.nvbench", o);
  }
  return tool;
}

// meta.argv, every element a string; an empty array when the file has none.
Json argv_of(const Json& meta, const ImportOptions& o) {
  if (!meta.contains("argv")) return Json::array();
  const Json& a = array_member(meta, "argv", "meta", o);
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!a[i].is_string()) refuse(o, fmt::format("meta.argv[{}]", i), "not a string");
  return a;
}

// The devices the file lists: the first one's record (the header's environment.device) and every one's name.
struct DeviceList {
  Json first = nullptr;
  std::vector<std::string> names;
};

DeviceList devices_of(const Json& devices, const ImportOptions& o) {
  DeviceList list;
  for (std::size_t i = 0; i < devices.size(); ++i) {
    Json d = device_json(devices[i], fmt::format("devices[{}]", i), o);
    (void)integer_of(member(devices[i], "id", fmt::format("devices[{}]", i), o), fmt::format("devices[{}].id", i), o);
    list.names.push_back(d["name"]);
    if (i == 0) list.first = d;
  }
  return list;
}

/// Reads the benchmarks' states into points, one state at a time, remembering across states what the run needs:
/// the points' keys (no two states make one point), the sample files read (no two states share one) and whether a
/// state names sample files that --samples did not ask to read.
class StateReader {
 public:
  StateReader(const ImportOptions& o, const Json& devices, Run& run) : o_(o), devices_(devices), run_(run) {}

  // Every state of benchmarks[b].
  void read_benchmark(const Json& benchmark, std::size_t b) {
    const std::string bpath = fmt::format("benchmarks[{}]", b);
    const std::string name = text_member(benchmark, "name", bpath, o_);
    const Json& states = array_member(benchmark, "states", bpath, o_);
    for (std::size_t s = 0; s < states.size(); ++s) read_state(name, states[s], fmt::format("{}.states[{}]", bpath, s));
  }

  bool names_unread_samples() const { return names_samples_; }

 private:
  // One state: a skipped point, or a point per measurement it has (cold, batch).
  void read_state(const std::string& name, const Json& state, const std::string& spath) {
    auto axes = axes_of(state, spath, o_);
    axes.erase(std::remove_if(axes.begin(), axes.end(), [](const auto& a) { return a.first == "Device"; }), axes.end());
    const std::int64_t device_id = device_of(state, spath);
    if (devices_.size() > 1) axes.emplace_back("Device", device_id);
    if (flag_member(state, "is_skipped", false, spath, o_)) {
      add_skipped(name, axes, state, spath);
      return;
    }
    add_measured(name, axes, summaries_of(state, spath, o_), spath);
  }

  // The device a state ran on: state.device, an id of devices[] (an axis where the file has several).
  std::int64_t device_of(const Json& state, const std::string& spath) const {
    const std::int64_t device_id = integer_of(member(state, "device", spath, o_), spath + ".device", o_);
    bool known = false;
    for (const Json& d : devices_) known = known || (d.contains("id") && d["id"] == device_id);
    if (!known) refuse(o_, spath + ".device", fmt::format("device {} is not one of devices[]", device_id));
    return device_id;
  }

  // A state nvbench skipped: one point, `skipped`, with nvbench's reason.
  void add_skipped(const std::string& name, const std::vector<std::pair<std::string, AxisValue>>& axes,
                   const Json& state, const std::string& spath) {
    PointRecord rec = point_of(name, axes, "cold");
    rec.status = Status::skipped;
    rec.reason = "skipped by nvbench: " + (state.contains("skip_reason") ? text_member(state, "skip_reason", spath, o_)
                                                                         : std::string("no reason given"));
    rec.cost_recorded = false;
    add(std::move(rec), spath);
  }

  // A measured state: its cold point (with its samples under --samples) and its batch point, each where it has one.
  void add_measured(const std::string& name, const std::vector<std::pair<std::string, AxisValue>>& axes,
                    const Summaries& sums, const std::string& spath) {
    const std::string where = o_.file + ": " + spath;
    const double bytes = declared_bytes(sums);
    const auto add_ok = [&](const std::string& l2, Timing timing) {
      PointRecord rec = point_of(name, axes, l2);
      rec.status = Status::ok;
      rec.cost.bytes = bytes;
      rec.timing = std::move(timing);
      add(std::move(rec), spath);
    };
    const bool cold = sums.has("nv/cold/time/gpu/mean") || sums.has("nv/cold/time/gpu/median");
    const bool batch = sums.has("nv/batch/time/gpu/mean");
    if (!cold && !batch)
      refuse(o_, spath, "a state with no cold or batch GPU time (nv/cold/time/gpu/*, nv/batch/time/gpu/mean)");
    if (cold) add_ok("cold", cold_timing_with_samples(sums, where, spath));
    if (batch) add_ok("hot", batch_timing(sums, where));
  }

  // The cold timing, with its samples where --samples was given (which the diff then tests).
  Timing cold_timing_with_samples(const Summaries& sums, const std::string& where, const std::string& spath) {
    Timing t = cold_timing(sums, where);
    if (!o_.samples_dir.empty()) {
      t.device_samples_s = cold_samples(sums, o_, files_read_);
      if (t.device_samples_s.empty())
        refuse(o_, spath,
               "names no sample file (nv/json/bin:nv/cold/sample_times), but --samples was given: was it run "
               "with --jsonbin?");
    }
    names_samples_ = names_samples_ || (o_.samples_dir.empty() && sums.files.count("nv/json/bin:nv/cold/sample_times"));
    return t;
  }

  // Adds the point, refused when an earlier state made the same one.
  void add(PointRecord rec, const std::string& path) {
    if (const auto [it, fresh] = seen_.emplace(rec.key, path); !fresh)
      refuse(o_, path,
             "the same point as " + it->second + " (" + rec.key +
                 "): a state given twice, or axis values "
                 "that read alike");
    run_.points.push_back(std::move(rec));
  }

  const ImportOptions& o_;
  const Json& devices_;
  Run& run_;
  std::set<std::string> files_read_;         // the sample files read so far: two states never share one
  bool names_samples_ = false;               // a state names a sample file (--jsonbin) that --samples did not read
  std::map<std::string, std::string> seen_;  // key -> the JSON path of the state that made it
};

// The suite's identity (its benchmarks and their axes, not the numbers): two runs of one nvbench binary share it,
// as two runs of one labrun config do. config.path names the suite, not the file (history keys a config by it, and
// each commit's file may be named differently): "nvbench:" and the benchmarks' names; the file is header.import.file.
void name_suite(const Json& benchmarks, ImportedHeader& h) {
  std::string suite_name;
  for (const Json& b : benchmarks) suite_name += (suite_name.empty() ? "" : "+") + b.value("name", std::string());
  Json suite = Json::array();
  for (const Json& b : benchmarks) suite.push_back({{"name", b.value("name", "")}, {"axes", b.value("axes", Json())}});
  h.suite = "nvbench:" + suite_name;
  h.identity = suite.dump();
}

}  // namespace

Run import_nvbench(const Json& doc, const ImportOptions& given) {
  const ImportOptions o = expecting(given, "nvbench's --json output");
  const Json& meta = object_member(doc, "meta", "", o);
  const Json& devices = array_member(doc, "devices", "", o);
  const Json& benchmarks = array_member(doc, "benchmarks", "", o);
  if (devices.empty()) refuse(o, "devices", "no device (nvbench lists the devices it ran on)");
  const Json tool = tool_of(meta, o);
  const Json argv = argv_of(meta, o);
  const DeviceList listed = devices_of(devices, o);
  Run run = imported_run(o);
  StateReader reader(o, devices, run);
  for (std::size_t b = 0; b < benchmarks.size(); ++b) reader.read_benchmark(benchmarks[b], b);
  if (run.points.empty()) refuse(o, "benchmarks", "no benchmark state to import");
  ImportedHeader h;
  h.tool = "nvbench";
  h.argv = argv;
  h.environment = {{"tool", tool}, {"backend", "cuda:0"}, {"device", listed.first}};
  if (devices.size() > 1) h.environment["devices"] = listed.names;
  name_suite(benchmarks, h);
  h.description = "imported from nvbench's JSON (" + o.file + ")";
  run.header.json = imported_header(h, o, run.points.size());
  if (!o.samples_dir.empty()) run.header.json["import"]["samples"] = o.samples_dir;
  if (reader.names_unread_samples())
    run.header.json["warnings"].push_back(
        to_json(Warning{"samples_not_read",
                        "the file names per-sample files (nvbench --jsonbin) that were not read: import "
                        "with --samples DIR so that diff and history test the samples"}));
  return run;
}

}  // namespace labrun
