// What the importers share (import_common.hpp).
#include "import_common.hpp"

#include <algorithm>
#include <cctype>

#include "build_info.hpp"
#include "sha256.hpp"

namespace labrun::import_detail {

ImportOptions expecting(const ImportOptions& given, const std::string& expected) {
  ImportOptions o = given;
  o.expected = expected;
  return o;
}

Run imported_run(const ImportOptions& o) {
  Run run;
  run.file = o.file;
  run.has_header = true;
  return run;
}

void refuse(const ImportOptions& o, const std::string& path, const std::string& what) {
  throw ResultError(o.file + ": " + (path.empty() ? "" : path + ": ") + what);
}

const Json& member(const Json& j, const char* key, const std::string& path, const ImportOptions& o) {
  if (!j.is_object()) refuse(o, path, "not an object");
  const auto it = j.find(key);
  if (it == j.end())
    refuse(o, path,
           std::string("has no \"") + key + "\"" + (o.expected.empty() ? "" : " (is this " + o.expected + "?)"));
  return *it;
}

const Json& object_member(const Json& j, const char* key, const std::string& path, const ImportOptions& o) {
  const Json& m = member(j, key, path, o);
  if (!m.is_object()) refuse(o, path + (path.empty() ? "" : ".") + key, "not an object");
  return m;
}

const Json& array_member(const Json& j, const char* key, const std::string& path, const ImportOptions& o) {
  const Json& a = member(j, key, path, o);
  if (!a.is_array()) refuse(o, path + (path.empty() ? "" : ".") + key, "not an array");
  return a;
}

std::string text_member(const Json& j, const char* key, const std::string& path, const ImportOptions& o) {
  const Json& t = member(j, key, path, o);
  if (!t.is_string()) refuse(o, path + (path.empty() ? "" : ".") + key, "not a string");
  return t.get<std::string>();
}

Json code_json(const ImportOptions& o) {
  std::string sha = o.code_rev;
  bool dirty = false;
  if (const auto plus = sha.find('+'); plus != std::string::npos) {
    if (sha.substr(plus) != "+dirty") throw ResultError("--code-rev " + o.code_rev + ": expected SHA or SHA+dirty");
    dirty = true;
    sha.resize(plus);
  }
  // git's shortest unambiguous abbreviation is 4 digits and a full sha 40 (64 in a SHA-256 repository): 7 or more,
  // as `git rev-parse --short` gives, so that history --repo finds the commit.
  if (sha.size() < 7 || sha.size() > 64 ||
      !std::all_of(sha.begin(), sha.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); }))
    throw ResultError("--code-rev " + o.code_rev +
                      ": expected a commit sha (7 to 64 hex digits, as git rev-parse gives), optionally +dirty");
  return {{"project", o.project}, {"git_sha", sha}, {"git_dirty", dirty}, {"source", "--code-rev"}};
}

Timing imported_timing(const char* l2, TimingMethod method) {
  Timing t;
  t.mode = "eager";
  t.l2 = l2;
  t.method = method;
  t.stop_reason = "imported";
  return t;
}

PointRecord imported_point(const std::string& experiment, const std::string& variant,
                           std::vector<std::pair<std::string, AxisValue>> axes, const std::string& backend) {
  Point p{experiment, variant, std::move(axes)};
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
  rec.backend = backend;
  return rec;
}

Json imported_header(const ImportedHeader& h, const ImportOptions& o, std::size_t points) {
  Json env = h.environment;
  env["labrun"] = {{"version", build_info().version}, {"git_sha", build_info().git_sha}};
  // The code under test: --code-rev's commit, else unknown (never labrun's own commit, which a header without
  // environment.code would stand for).
  env["code"] = o.code_rev.empty() ? Json{{"project", o.project},
                                          {"git_sha", nullptr},
                                          {"git_dirty", nullptr},
                                          {"source", "not given (labrun import without --code-rev)"}}
                                   : code_json(o);
  return {
      {"type", "header"},
      {"schema_version", kRecordSchemaVersion},
      {"created_utc", o.created_utc},
      {"argv", h.argv},
      {"config",
       {{"path", h.suite}, {"sha256", sha256_hex(h.identity)}, {"experiment", h.tool}, {"description", h.description}}},
      {"lab", Json::object()},
      {"environment", env},
      {"import", {{"tool", h.tool}, {"file", o.file}}},
      {"warnings", Json::array()},
      {"point_count", points}};
}

}  // namespace labrun::import_detail
