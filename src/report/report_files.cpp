// The table of a report folder's data files (report_files.hpp).
#include "report_files.hpp"

#include "report_csv.hpp"
#include "report_plots.hpp"

namespace labrun {

const std::vector<ReportFile>& report_data_files() {
  static const std::vector<ReportFile> table{
      {"points.csv",
       [](const ReportContext& c, const std::filesystem::path& p, const ReportOptions&) { write_points_csv(c, p); }},
      {"ceilings.json",
       [](const ReportContext& c, const std::filesystem::path& p, const ReportOptions&) { write_ceilings_json(c, p); }},
      {"plots.json", [](const ReportContext& c, const std::filesystem::path& p,
                        const ReportOptions& o) { write_plot_specs(c, p, o.max_plots); }},
  };
  return table;
}

}  // namespace labrun
