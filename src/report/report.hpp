// `labrun report RESULTS.jsonl...`: the results loaded (load_results()), every point with its stored
// interpretation (computed by interpret() only for records without one), the cross-point analysis, and its
// renderings: report.md (src/report/report_markdown.hpp), points.csv and ceilings.json (src/report/report_csv.hpp),
// and, where python3 with matplotlib is present, PNG plots drawn by scripts/plot_report.py from plots.json
// (src/report/report_plots.hpp); each file of the report folder is one row of one table (src/report/report_files.hpp).
// What sections read is a ReportContext (src/report/report_context.hpp).
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
  /// Write index.html, the HTML view (docs/html.md); --no-html leaves it out.
  bool html = true;
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

}  // namespace labrun
