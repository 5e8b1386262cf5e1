// What several commands of src/commands/ read alike: result files named on the command line (diff, history,
// report, merge), one result file loaded for diff or history (load_result_file, refusing a file with no points as
// BadInput), the registry of experiments, the sweep a config describes (sweep, validate, slurm), and the options
// they share (--lab, --code-rev, a count, diff's and history's --min-effect and --alpha).
#pragma once

#include <iosfwd>
#include <stdexcept>
#include <string>
#include <vector>

#include "backend.hpp"
#include "config.hpp"
#include "device_hooks.hpp"
#include <labrun/point.hpp>
#include "point_record.hpp"
#include "registry.hpp"

namespace CLI {
class App;
class Validator;
}  // namespace CLI

namespace labrun {

/// "a.jsonl", "a.jsonl,b.jsonl" (shards) or a folder (every .jsonl in it, sorted).
/// @throws std::invalid_argument for a folder without results, an empty name or a partial file (FILE.new-PID).
std::vector<std::string> result_paths(const std::string& arg);

/// result_paths() of each argument in turn, all in one list.
std::vector<std::string> result_paths(const std::vector<std::string>& args);

/// An input diff or history cannot use (a result file unreadable, not a result or without points; history's --repo
/// or commits that cannot be ordered): the command's bad-input exit. The message names the file.
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// For a command's `catch (...)`, inside the handler: a BadInput or std::invalid_argument (inputs or options the
/// command cannot use) is written to `err` as "COMMAND: MESSAGE" and `code` is returned; anything else is rethrown.
int bad_input_exit(const char* command, std::ostream& err, int code);

/// Whether load_result_file accepts a file that is one shard with no points.
enum class EmptyShard {
  refuse,
  allow,  ///< diff: a shard may hold no points (more shards than groups of points); the side as a whole must hold some
};

/// The runs of one result file (or of what load_results() reads for one argument), at LoadDepth::comparison, after
/// checking that it holds at least one point (load_results checks JSON, record types and fields, and refuses a file
/// without a header first). What load_results notes (a torn last line of a killed run, dropped: the complete records
/// before it are still a valid result) goes to `err` as "labrun <command>: note: ...". A file without points is
/// refused, unless it is one shard and `empty_shard` allows it. @throws BadInput naming the file.
std::vector<Run> load_result_file(const std::string& path, const std::string& command, std::ostream& err,
                                  EmptyShard empty_shard);

/// Adds --min-effect and --alpha to `command` (diff, history), in that order, each read as text into `min_effect` and
/// `alpha` (parse_percent when the command runs), with the command's own help texts.
void add_effect_options(CLI::App& command, std::string& min_effect, const std::string& min_effect_help,
                        std::string& alpha, const std::string& alpha_help);

/// A count on the command line (--max-plots): digits only.
CLI::Validator count_validator();

/// An option's value that must not be empty (--only, --devices: an empty one read as "not given", and ran every
/// point or the host backend); `what` says what it takes, after "must not be empty: it takes ".
CLI::Validator non_empty(const std::string& what);

/// Adds --lab to `command`: one KEY=VALUE per occurrence, repeatable, so it never swallows the config path after it.
void add_lab_option(CLI::App& command, std::vector<std::string>& overrides, const std::string& help);

/// The code under test (src/base/code_rev.hpp): --code-rev, else LABRUN_CODE_REV, else the build's. A malformed value
/// is bad input before anything runs.
void apply_code_rev_option(const std::string& text);

/// The built-in experiments and those the device layer adds.
Registry make_registry(const DeviceHooks& hooks);

/// A sweep config loaded as sweep, validate and slurm run it: its points (cut by --only) and the backend kind
/// whose lab section applies. Profiler mode (profile_settings) is the caller's to apply.
struct SweepInput {
  SweepConfig config;
  const RegisteredExperiment* experiment = nullptr;  ///< in the registry given to load_sweep
  std::vector<Point> points;
  BackendKind kind = BackendKind::host;
};

/// Loads `config_path` with the --lab `overrides`, expands its points and keeps those matching `only` (if given);
/// `device` (--device) picks the backend kind. @throws ConfigError, std::invalid_argument (no point matches).
SweepInput load_sweep(const std::string& config_path, const std::vector<std::string>& overrides,
                      const std::string& only, const std::string& device, const Registry& registry,
                      const DeviceHooks& hooks);

}  // namespace labrun
