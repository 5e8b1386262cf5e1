// The files of a report folder, each an Output (report_files.hpp).
#include "report_files.hpp"

#include <fstream>
#include <ostream>

#include "output_file.hpp"
#include "report_csv.hpp"
#include "report_markdown.hpp"
#include "report_plots.hpp"

namespace labrun {

namespace {

class PointsCsv final : public Output {
 public:
  void report(ReportBuild& b, const std::filesystem::path& file) override { write_points_csv(b.context, file); }
};

class CeilingsJson final : public Output {
 public:
  void report(ReportBuild& b, const std::filesystem::path& file) override { write_ceilings_json(b.context, file); }
};

class PlotSpecs final : public Output {
 public:
  void report(ReportBuild& b, const std::filesystem::path& file) override {
    write_plot_specs(b.context, file, b.options.max_plots);
  }
};

/// The PNGs drawn from the data files when asked (a failure to draw is a warning, never an error).
class Plots final : public Output {
 public:
  void report(ReportBuild& b, const std::filesystem::path&) override {
    if (!b.options.plots) return;  // build.plots stays null: not asked
    b.plots = draw_plots(b.staging, b.options.plot_script, b.err, &b.not_drawn);
    if (b.not_drawn > 0)
      b.err << "labrun report: note: " << b.not_drawn << " more time plot(s) not drawn (over --max-plots "
            << b.options.max_plots << ")\n";
  }
};

class ReportMd final : public Output {
 public:
  void report(ReportBuild& b, const std::filesystem::path& file) override {
    std::ofstream md = open_for_write(file);
    md << render_report(b.context, b.paths, b.plots, b.not_drawn, b.options.max_plots, b.options.html);
    close_or_throw(md, file);
  }
};

}  // namespace

std::unique_ptr<Output> make_points_csv_output() { return std::make_unique<PointsCsv>(); }
std::unique_ptr<Output> make_ceilings_json_output() { return std::make_unique<CeilingsJson>(); }
std::unique_ptr<Output> make_plot_specs_output() { return std::make_unique<PlotSpecs>(); }
std::unique_ptr<Output> make_plots_output() { return std::make_unique<Plots>(); }
std::unique_ptr<Output> make_report_md_output() { return std::make_unique<ReportMd>(); }

}  // namespace labrun
