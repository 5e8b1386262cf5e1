// The commands of the labrun command line, one file each in src/commands/ (cmd_<name>.cpp). Each adds its CLI11
// subcommand with its options and help to the app and returns what runs it once the command line is parsed;
// run_cli (src/app/cli.cpp) adds them in the order `labrun --help` lists them, runs the chosen one and maps what
// it throws to an exit code.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "device_hooks.hpp"
#include "exporter.hpp"
#include "diff.hpp"
#include "history.hpp"
#include "report.hpp"
#include "slurm.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace labrun {

/// What every command may need besides its own options.
struct CommandContext {
  const DeviceHooks& hooks;
  std::vector<std::string> argv;  ///< the whole command line, as a sweep records it in its header
};

/// One command: its subcommand and what runs it.
struct Command {
  CLI::App* subcommand = nullptr;
  /// Runs the command; returns its exit code. What it throws, run_cli maps to an exit code (ExitCode).
  std::function<int()> run;
  /// The log level the command asks for (sweep's -v, -q, --log-level); empty: "info".
  std::function<std::string()> log_level;
};

/// Adds a command's subcommand to `app`; `context` outlives the returned Command.
using AddCommand = Command (*)(CLI::App& app, const CommandContext& context);

Command add_sweep_command(CLI::App& app, const CommandContext& context);
Command add_validate_command(CLI::App& app, const CommandContext& context);
Command add_list_command(CLI::App& app, const CommandContext& context);
Command add_merge_command(CLI::App& app, const CommandContext& context);
Command add_slurm_command(CLI::App& app, const CommandContext& context);
Command add_diff_command(CLI::App& app, const CommandContext& context);
Command add_history_command(CLI::App& app, const CommandContext& context);
Command add_report_command(CLI::App& app, const CommandContext& context);
Command add_env_command(CLI::App& app, const CommandContext& context);
Command add_export_command(CLI::App& app, const CommandContext& context);
/// `labrun import TOOL FILE -o OUT`: another tool's results (nvbench's JSON) as a labrun result file
/// (src/import/, docs/formats.md "Import"). Exit 0 written, 2 bad input (nothing written), 4 output not writable.
Command add_import_command(CLI::App& app, const CommandContext& context);

/// What `labrun import` is given (its options, as typed).
struct ImportArgs {
  std::string tool;                  ///< "nvbench" or "gbench"
  std::string input;                 ///< the tool's file
  std::string output;                ///< the labrun result file to write
  std::string code_rev;              ///< --code-rev SHA[+dirty]; "" for none
  std::string project = "imported";  ///< --project
  std::string created;               ///< --created; "" for the file's own date, else its modification time
  std::string samples;               ///< --samples DIR (nvbench's --jsonbin files); "" for none
  bool force = false;                ///< --force: replace the output
};

/// `labrun import`: `input` read (at most 1 GiB, JSON), turned into a run (import_nvbench or import_gbench), written
/// beside `output`, read back with load_results' checks and moved into place; messages on `err`.
/// @return kExitOk; kExitUsage for bad input (unknown tool, unreadable or malformed file, FILE:LINE:COLUMN for JSON
/// that does not parse, FILE: PATH for a value that makes no sense; nothing written); kExitOutput when the output
/// exists without `force` or cannot be written.
int cmd_import(const ImportArgs& args, std::ostream& err);

// ---- The entry points the tests call too (each defined in its cmd_<name>.cpp) ---------------------------------

/// `labrun export`: the points of `paths` (load_results, shards of one sweep merged) in the export format `format`
/// (a Product::exported row of outputs(), output_table.hpp) with `options`, to `out` when `output` is "-", else written
/// whole to that file (refused if it exists without `force`, and if it is one of `paths`). Every point left out is
/// listed on `err`, then one summary line.
/// @return kExitOk; kExitPointsFailed when no point could be exported (nothing written); kExitUsage for an unknown
/// format, no files, an empty `output` or one that is an input, a result file that cannot be read or a point in two
/// runs; kExitOutput when `output` cannot be written. Never throws for bad input.
int cmd_export(const std::string& format, const std::vector<std::string>& paths, const std::string& output, bool force,
               const ExportOptions& options, std::ostream& out, std::ostream& err);

/// `labrun diff`: reads every file of each side (load_results), checks that each is a labrun result (a header
/// line first, at least one point; load_results checks JSON and the records' fields), runs diff_results() and
/// writes it to `out` as `format` "table", "markdown" or "json". Errors go to `err`, naming the file (and
/// line); so does a note when a file's torn last line (a killed run) was dropped.
/// @return a DiffExit code. Never throws for bad input.
int cmd_diff(const std::vector<std::string>& base_paths, const std::vector<std::string>& new_paths,
             const DiffOptions& options, const std::string& format, std::ostream& out, std::ostream& err);

/// `labrun history`: loads every file (load_results), orders the commits (git -C repo rev-list --topo-order HEAD
/// when repo is set), runs history_results() and writes the rendering (or the bisect text) to `out`, the report
/// folder when asked (claimed before any input is read: new, empty or an earlier history report with `force`, one
/// writer; made beside and moved in, src/base/output_file.hpp). Errors go to `err`, naming the file (and key).
/// @return a HistoryExit code. Never throws for bad input.
int cmd_history(const HistoryArgs& args, std::ostream& out, std::ostream& err);

/// `labrun report` (cmd_report.cpp; the rendering is src/report/'s).
/// Reads the JSONL result files in `paths` (each a file, a comma-separated list of files or a folder, as
/// load_results() reads them), runs analyze(), and writes into `out_dir` (created if needed):
/// - report.md: summary (device, build, calibration, sweep size, status and bound counts; a note for runs on
///   the host backend), hypothesis verdicts ("host only" for host runs), each experiment's own section
///   (ExperimentDef::report_section), plots (linked only if drawn), winners, crossovers (along the size axis
///   first), roofline, five-part notes for a representative point per variant and mode and for every suspect
///   point, and time and bandwidth tables by variant;
/// - points.csv: one row per point (run, id, experiment, variant, each axis, status, times, rates, fractions of
///   the ceilings, shares, bound, suspect, the run's ceilings);
/// - ceilings.json: each run's calibrated ceilings (for the roofline plot);
/// - plots.json: the figures to draw (always written), with the list of those drawn once the script ran;
/// - *.png, when plotting works.
/// Progress and warnings (a torn last line, plotting problems) go to `out` and `err`.
/// @return 0 on success; 2 (bad input: the message names the file) when no file is given, or a file cannot be
///   read, is not JSON Lines, holds no records or a line that is not a labrun record; 4 when out_dir cannot be
///   written (the message carries the reason), is not a folder, holds a report without `replace` or files that are
///   not a report, or is being written by another labrun (ReportFolder, src/base/output_file.hpp).
int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out, std::ostream& err);

/// cmd_report with explicit options.
int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out, std::ostream& err,
               const ReportOptions& options);

/// `labrun slurm` (cmd_slurm.cpp).
/// Writes both scripts into plan.dir (<base>-array.sbatch, <base>-merge.sbatch), together or not at all (each beside
/// its target, both renamed only once both were written whole; src/base/output_file.hpp), and, with `submit`, runs
/// sbatch for each (the merge with the dependency on the array) and prints the job ids and the command that shows
/// the merged result; without it prints the two sbatch commands. Returns the exit status.
/// @throws OutputError (exit 4, nothing touched) when either script exists and `force` is false ("output file PATH
///   exists; ... (use --force ...)"), or is not a regular file; OutputError when the scripts cannot be written (no
///   script written, the reason given); std::runtime_error when sbatch fails.
int cmd_slurm(const SlurmPlan& plan, bool submit, bool force);

}  // namespace labrun
