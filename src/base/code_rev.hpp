// The revision of the code under test: which repository and commit a runner binary was built from. For the
// built-in `labrun` binary that is labrun itself; for a user's runner (labrun's commands + the user's experiments,
// built from the user's repository) it is the user's repository, not labrun's. Written into every run header as
// `environment.code` (docs/records.md); diff, history, --resume and merge key on it (with labrun's version).
#pragma once

#include <optional>
#include <string>

#include "record.hpp"

namespace labrun {

/// What code a run measured.
struct CodeRev {
  std::string project;    ///< the code's project name, e.g. "labrun" or the user's CMake project
  std::string git_sha;    ///< its commit (40 hex digits), or "unknown" when the build had no repository
  bool git_dirty = true;  ///< modified tracked files or untracked, non-ignored files at build time (true if unknown)
  /// Where the values came from: "build" (captured when the runner was built, scripts/code_rev.cmake),
  /// "--code-rev" (the sweep option) or "LABRUN_CODE_REV" (the environment variable); "default" when no code
  /// revision was captured (a binary that links no generated code_rev.cpp): then labrun's own build info.
  std::string source;
};

/// Called by the code_rev.cpp that scripts/code_rev.cmake generates, at static initialization (plain data, no
/// CUDA call): records the runner's captured revision with source "build". `git_sha` "unknown" for a build without
/// a repository. A second call replaces the first. Never throws.
void set_built_code_rev(const char* project, const char* git_sha, bool git_dirty);

/// What the build captured: set_built_code_rev()'s values, or, when nothing called it, labrun's own build info
/// (project "labrun", build_info().git_sha/git_dirty, source "default"). Never throws.
CodeRev built_code_rev();

/// Reads an override "SHA[+dirty]": SHA is 7 to 40 hex digits (a full or abbreviated commit) or "unknown",
/// optionally followed by "+dirty" (git_dirty true; without it false). Surrounding spaces are not allowed.
/// `project` and `source` are copied into the result. @throws std::invalid_argument naming `source` and the
/// accepted form for anything else (empty, "abc", "1234567+clean").
CodeRev parse_code_rev(const std::string& text, const std::string& project, const std::string& source);

/// The revision in force from its three sources, the first present winning: `option` (--code-rev; nullopt or
/// empty when not given), then `env` (LABRUN_CODE_REV; nullptr or empty when unset), then `built`. An override keeps
/// `built.project`. @throws std::invalid_argument for a malformed override (parse_code_rev()).
CodeRev resolve_code_rev(const CodeRev& built, const std::optional<std::string>& option, const char* env);

/// Sets the process's --code-rev value (apply_code_rev_option in src/commands/command_inputs.cpp does, for
/// `labrun sweep` and `labrun env`); "" clears it. The text is checked here. @throws std::invalid_argument for a
/// malformed value.
void set_code_rev_option(const std::string& text);

/// The process's --code-rev value as given ("" when none).
const std::string& code_rev_option();

/// The revision in force for this process: resolve_code_rev(built_code_rev(), the --code-rev value, the
/// LABRUN_CODE_REV environment variable). @throws std::invalid_argument when LABRUN_CODE_REV is malformed.
CodeRev code_rev();

/// {"project", "git_sha", "git_dirty", "source"}: the header's `environment.code`.
Json to_json(const CodeRev& rev);

/// "project sha12" with " (dirty)" when dirty, e.g. "myrepo 0123456789ab (dirty)"; the sha cut to 12 digits.
std::string describe(const CodeRev& rev);

}  // namespace labrun
