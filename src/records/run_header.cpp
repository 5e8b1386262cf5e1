// RunHeader: what a run's header line says (its config, environment, calibration, lab settings, processes), read
// through typed accessors; empty or NaN where the header lacks it.
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

using namespace fields;

namespace {

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

}  // namespace

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

bool RunHeader::pooled_process() const { return json.is_object() && json.contains("process"); }
std::optional<std::pair<std::int64_t, std::int64_t>> RunHeader::pool_process() const {
  const char* keys[] = {"index", "count"};  // the schema's words (process.index, process.count)
  const Json& index = header_at(json, {"process", keys[0]});
  const Json& count = header_at(json, {"process", keys[1]});
  if (!index.is_number_integer() || !count.is_number_integer()) return std::nullopt;
  return std::make_pair(index.get<std::int64_t>(), count.get<std::int64_t>());
}

}  // namespace labrun
