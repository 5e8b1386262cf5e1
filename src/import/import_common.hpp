// What the importers of other tools' files share (import_nvbench.cpp, import_gbench.cpp): refusing a document with the
// file and the JSON path, reading its members, the code under test from --code-rev, what an imported measurement's
// timing says of how it was taken, a point's record from its experiment, variant and axes, and the header of an
// imported run. Internal to src/import/.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <labrun/point.hpp>

#include "import.hpp"
#include "point_record.hpp"
#include "record.hpp"

namespace labrun::import_detail {

/// `given` with o.expected set to `expected`, the tool's format that a refusal names ("nvbench's --json output"):
/// the options an importer reads its document under. Never throws.
ImportOptions expecting(const ImportOptions& given, const std::string& expected);

/// The run an importer fills: file o.file, with a header (has_header); no points yet, an empty header. Never throws.
Run imported_run(const ImportOptions& o);

/// Throws ResultError "FILE: PATH: WHAT" (PATH left out when empty).
[[noreturn]] void refuse(const ImportOptions& o, const std::string& path, const std::string& what);

/// j[key], refusing when `j` is not an object or has no `key` (naming o.expected, the tool's format).
const Json& member(const Json& j, const char* key, const std::string& path, const ImportOptions& o);
/// j[key] as an object, refused otherwise ("PATH.KEY: not an object").
const Json& object_member(const Json& j, const char* key, const std::string& path, const ImportOptions& o);
/// j[key] as an array, refused otherwise.
const Json& array_member(const Json& j, const char* key, const std::string& path, const ImportOptions& o);
/// j[key] as a string, refused otherwise.
std::string text_member(const Json& j, const char* key, const std::string& path, const ImportOptions& o);

/// What every imported measurement's timing shares: eager launches, L2 `l2` ("cold", "hot"), timed by `method`, no
/// stopping rule (stop_reason "imported").
Timing imported_timing(const char* l2, TimingMethod method);

/// environment.code from o.code_rev ("SHA" or "SHA+dirty"): {project, git_sha, git_dirty, source "--code-rev"}.
/// @throws ResultError when it is neither.
Json code_json(const ImportOptions& o);

/// The record of point (experiment, variant, axes) on `backend`: its id, key, experiment, variant and axes (int64 as
/// integers, reals through json_real, words as strings); status and timing are the caller's.
PointRecord imported_point(const std::string& experiment, const std::string& variant,
                           std::vector<std::pair<std::string, AxisValue>> axes, const std::string& backend);

/// What an imported run's header says besides its points.
struct ImportedHeader {
  std::string tool;         ///< "nvbench", "gbench": header.import.tool and config.experiment
  std::string suite;        ///< config.path: the suite's name, the same for every run of it ("gbench:bench")
  std::string identity;     ///< what config.sha256 hashes: the suite's benchmarks and axes, not its numbers
  std::string description;  ///< config.description
  Json argv = Json::array();
  Json environment;  ///< {tool, backend, device, host?...}; labrun's version and the code are added
};

/// The header of an imported run of `points` points: type, schema_version, created_utc (o.created_utc), argv,
/// config {path, sha256, experiment, description}, an empty lab, environment (with labrun's version and, with a
/// code_rev, the code), import {tool, file}, warnings, point_count.
Json imported_header(const ImportedHeader& h, const ImportOptions& o, std::size_t points);

}  // namespace labrun::import_detail
