// `labrun report RESULTS.jsonl...`: the results loaded (load_results()), every point with its stored
// interpretation (computed by interpret() only for records without one), the cross-point analysis, and its
// renderings: report.md (src/report/report_markdown.hpp), points.csv and ceilings.json (src/report/report_csv.hpp),
// and, where python3 with matplotlib is present, PNG plots drawn by scripts/plot_report.py from plots.json
// (src/report/report_plots.hpp). What sections read is a ReportContext (src/report/report_context.hpp).
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace labrun {

class Registry;

/// Options of cmd_report beyond its arguments.
struct ReportOptions {
  /// Draw plots (needs python3 with matplotlib; failure to plot is a warning, never an error).
  bool plots = true;
  /// At most this many time-vs-axis PNGs (the rooflines, one per run, are always drawn); the report says how
  /// many more there were. 0: no cap. Matplotlib takes about 1.3 s a figure of 100,000 points on one core.
  std::size_t max_plots = 16;
  /// The plotting script; empty: scripts/plot_report.py looked up from the working directory, then from the
  /// directories above the running executable.
  std::string plot_script;
  /// Replace an earlier report in the output folder (--force): the new one is made beside it and moved in file by
  /// file once it is whole, so a bad input or a failed write never costs the old report; other files stay. Without
  /// it a folder holding a report is refused (4).
  bool replace = false;
  /// The experiments (size axis, plots, report sections) the runs are looked up in by name; nullptr: a
  /// registry of the built-in experiments (register_builtin). A run whose experiment is not there gets the
  /// generic report.
  const Registry* registry = nullptr;
};

/// The command (defined in src/commands/cmd_report.cpp, which adds its options); the rendering is src/report/'s.
/// Reads the JSONL result files in `paths` (each a file, a comma-separated list of files or a folder, as
/// load_results() reads them), runs analyze(), and writes into `out_dir` (created if needed):
/// - report.md: summary (device, build, calibration, sweep size, status and bound counts; a note for runs on
///   the host backend), hypothesis verdicts ("host only" for host runs), each experiment's own section
///   (Experiment::report_section), plots (linked only if drawn), winners, crossovers (along the size axis
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
int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
               std::ostream& err);

/// cmd_report with explicit options.
int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
               std::ostream& err, const ReportOptions& options);

}  // namespace labrun
