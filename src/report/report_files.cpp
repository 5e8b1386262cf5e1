// The table of every file of a report folder (report_files.hpp).
#include "report_files.hpp"

#include <fstream>
#include <ostream>

#include "output_file.hpp"
#include "report_csv.hpp"
#include "report_markdown.hpp"
#include "report_plots.hpp"

namespace labrun {

namespace {

/// The plots row: the PNGs drawn from the data files when asked (a failure to draw is a warning, never an error).
void draw_report_plots(ReportBuild& b, const std::filesystem::path&) {
  if (!b.options.plots) return;  // build.plots stays null: not asked
  b.plots = draw_plots(b.staging, b.options.plot_script, b.err, &b.not_drawn);
  if (b.not_drawn > 0)
    b.err << "labrun report: note: " << b.not_drawn << " more time plot(s) not drawn (over --max-plots "
          << b.options.max_plots << ")\n";
}

void write_report_md(ReportBuild& b, const std::filesystem::path& path) {
  std::ofstream md = open_for_write(path);
  md << render_report(b.context, b.paths, b.plots, b.not_drawn, b.options.max_plots);
  close_or_throw(md, path);
}

}  // namespace

const std::vector<ReportFile>& report_files() {
  static const std::vector<ReportFile> table{
      {"points.csv", [](ReportBuild& b, const std::filesystem::path& p) { write_points_csv(b.context, p); }},
      {"ceilings.json", [](ReportBuild& b, const std::filesystem::path& p) { write_ceilings_json(b.context, p); }},
      {"plots.json",
       [](ReportBuild& b, const std::filesystem::path& p) { write_plot_specs(b.context, p, b.options.max_plots); }},
      {"*.png", draw_report_plots},
      {"report.md", write_report_md},
  };
  return table;
}

}  // namespace labrun
