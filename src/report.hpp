// `labrun report RESULTS.jsonl...`: every point interpreted (interpret.hpp), the cross-point analysis, and its
// renderings: report.md (summary, hypothesis verdicts, winners, crossovers, tables, five-part notes), points.csv
// (one row per point) and, where python3 with matplotlib is present, PNG plots drawn by scripts/plot_report.py.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace labrun {

/// Options of cmd_report beyond its arguments.
struct ReportOptions {
  /// Draw plots (needs python3 with matplotlib; failure to plot is a warning, never an error).
  bool plots = true;
  /// The plotting script; empty: scripts/plot_report.py looked up from the working directory, then from the
  /// directories above the running executable.
  std::string plot_script;
  /// Replace an existing report: the output folder is emptied, but only once every input has loaded, so a bad
  /// input never costs the old report.
  bool replace = false;
};

/// Reads the JSONL result files in `paths` (each a header line and point lines), interprets every point with
/// its own file's header (recomputed even when the record already has an "interpretation"), runs analyze(),
/// and writes into `out_dir` (created if needed):
/// - report.md: summary (device, build, calibration, sweep size, status and bound counts), hypothesis verdicts,
///   for the masking experiment where boolean indexing loses and wins, plots (linked only if drawn), winners,
///   crossovers, five-part notes for a representative point per variant and mode and for every suspect point,
///   and time and bandwidth tables by variant;
/// - points.csv: one row per point (run, id, experiment, variant, each axis, status, times, rates, fractions of
///   the ceilings, shares, bound, suspect, the run's ceilings);
/// - ceilings.json: each run's calibrated ceilings (for the roofline plot);
/// - plots.json and *.png, when plotting works.
/// Progress and warnings go to `out` and `err`.
/// @return 0 on success; 2 (bad input: the message names the file) when a file cannot be read, is not JSON
///   Lines, holds no records or a line that is not a labrun record; 4 when out_dir cannot be written.
int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
               std::ostream& err);

/// cmd_report with explicit options.
int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
               std::ostream& err, const ReportOptions& options);

}  // namespace labrun
