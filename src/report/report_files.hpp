// The data files of a report folder, in one table: each file's name and its writer. report.md and the PNG plots
// are made from them (the plots from plots.json, report.md naming the plots drawn), so cmd_report writes this table
// first, then draws, then renders report.md. A new data file is one row here.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "report.hpp"
#include "report_context.hpp"

namespace labrun {

/// One data file of a report folder: its name in the folder, and what writes it from the report's context.
struct ReportFile {
  std::string name;
  /// Writes the file at `path` from `context` (and the options it reads: max_plots for plots.json).
  /// @throws OutputError when the file cannot be written.
  std::function<void(const ReportContext& context, const std::filesystem::path& path, const ReportOptions& options)>
      write;
};

/// points.csv (write_points_csv), ceilings.json (write_ceilings_json), plots.json (write_plot_specs), in that order:
/// the files scripts/plot_report.py reads.
const std::vector<ReportFile>& report_data_files();

}  // namespace labrun
