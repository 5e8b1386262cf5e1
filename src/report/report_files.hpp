// Every file of a report folder is an Output (output.hpp), listed in outputs() (src/commands/output_table.hpp) in
// the order they are made: the data files (points.csv, ceilings.json, plots.json), then the PNG plots drawn from them
// (scripts/plot_report.py reads the three), then report.md, which links the plots drawn. Each writes through the
// `report` hook from one shared ReportBuild: what every row reads (the context, the options, the staging folder,
// the error stream) and what earlier rows produced for later ones (the plots drawn, the count not drawn).
// cmd_report runs the rows into its staging folder; a new file of the report folder is an Output and a row.
#pragma once

#include <cstddef>
#include <filesystem>
#include <memory>
#include <iosfwd>
#include <string>
#include <vector>

#include "output.hpp"
#include "report.hpp"
#include "report_context.hpp"

namespace labrun {

/// The state the report outputs share while one report folder is made.
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

/// The files of a report folder, each an Output (output.hpp) writing the `report` hook, listed in outputs()
/// (src/commands/output_table.hpp) in the order they are made, each row named by its file:
/// - points.csv (write_points_csv), ceilings.json (write_ceilings_json), plots.json (write_plot_specs with max_plots);
/// - "*.png", the plots (draw_plots when options.plots, setting build.plots and build.not_drawn, with a note on err
///   when some were not drawn; named by plots.json);
/// - report.md (render_report, linking build.plots);
/// - index.html, the report's HTML view (docs/html.md): every run, hypothesis, group and point as data for
///   scripts/labrun_view.js, with it and Chart.js inline (html_page.hpp); written point by point.
std::unique_ptr<Output> make_points_csv_output();
std::unique_ptr<Output> make_ceilings_json_output();
std::unique_ptr<Output> make_plot_specs_output();
std::unique_ptr<Output> make_plots_output();
std::unique_ptr<Output> make_report_md_output();
std::unique_ptr<Output> make_report_html_output();

}  // namespace labrun
