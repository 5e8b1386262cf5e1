// Every file of a report folder, in one table of rows in the order they are made: the data files (points.csv,
// ceilings.json, plots.json), then the PNG plots drawn from them (scripts/plot_report.py reads the three), then
// report.md, which links the plots drawn. Each row's writer takes one shared ReportBuild: what every row reads
// (the context, the options, the staging folder, the error stream) and what earlier rows produced for later ones
// (the plots drawn, the count not drawn). cmd_report runs the table into its staging folder; a new file of the
// report folder is one row here.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "report.hpp"
#include "report_context.hpp"

namespace labrun {

/// The state the rows of report_files() share while one report folder is made.
struct ReportBuild {
  const ReportContext& context;
  const ReportOptions& options;
  const std::vector<std::string>& paths;  ///< the result files as given (report.md names them)
  std::filesystem::path staging;          ///< the folder the rows write into (ReportFolder::begin)
  std::ostream& err;                      ///< warnings and notes
  /// Produced by the plots row: the plots drawn ([{file, title}], draw_plots); null when plots were not asked.
  Json plots = nullptr;
  std::size_t not_drawn = 0;  ///< produced by the plots row: time plots left out for ReportOptions::max_plots
};

/// One row of a report folder: its file's name in the folder ("*.png" for the plots, which are many, named by
/// plots.json), and what makes it from the build state.
struct ReportFile {
  std::string name;
  /// Writes the row's file at `path` (build.staging / name; the plots row writes into build.staging instead),
  /// reading `build` and recording there what later rows read. @throws OutputError when a file cannot be written.
  std::function<void(ReportBuild& build, const std::filesystem::path& path)> write;
};

/// In order: points.csv (write_points_csv), ceilings.json (write_ceilings_json), plots.json (write_plot_specs with
/// max_plots); the PNG plots (draw_plots when options.plots, setting build.plots and build.not_drawn, with a note on
/// err when some were not drawn); report.md (render_report, linking build.plots).
const std::vector<ReportFile>& report_files();

}  // namespace labrun
