#include "report.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>

#include "exit_codes.hpp"
#include "interrupt.hpp"
#include "merge.hpp"
#include "output_file.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "report_context.hpp"
#include "report_csv.hpp"
#include "report_markdown.hpp"
#include "report_plots.hpp"

namespace labrun {

int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
               std::ostream& err) {
  return cmd_report(paths, out_dir, out, err, ReportOptions{});
}

namespace {

/// cmd_report without its handling of signals.
int make_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
                std::ostream& err, const ReportOptions& options) {
  namespace fs = std::filesystem;
  if (paths.empty()) {
    err << "labrun report: no result files given\n";
    return kExitUsage;
  }
  // The output folder first, before any input is read: a regular folder that is new, empty or an earlier report
  // (only with replace), and one writer at a time (src/output_file.hpp).
  std::optional<ReportFolder> folder;
  try {
    folder.emplace(out_dir, "report", options.replace);
  } catch (const OutputError& e) {
    err << "labrun report: " << e.what() << "\n";
    return kExitOutput;
  }
  std::optional<Registry> builtin;
  const Registry* registry = options.registry;
  if (!registry) {
    builtin.emplace();
    register_builtin(*builtin);
    registry = &*builtin;
  }
  std::optional<ReportContext> loaded;
  try {
    ResultSet set = load_results(paths, LoadDepth::analysis);
    merge_shard_runs(set.runs);  // shards of one sweep read as one run, by the rules of `labrun merge`
    loaded.emplace(std::move(set), registry);
  } catch (const ResultError& e) {
    err << "labrun report: " << e.what() << "\n";
    return kExitUsage;
  }
  const ReportContext& context = *loaded;
  for (const auto& w : context.warnings()) err << "labrun report: warning: " << w << "\n";
  // The report is made in a sibling folder, then moved in file by file (each a rename, so each file is the old
  // one or the new one, never a partial one): an earlier report is never destroyed before the new one exists,
  // and nothing else in the folder is touched. The sibling goes on any failure.
  try {
    const fs::path& staging = folder->begin();
    write_points_csv(context, staging / "points.csv");
    write_ceilings_json(context, staging / "ceilings.json");
    write_plot_specs(context, staging / "plots.json", options.max_plots);
    std::size_t not_drawn = 0;
    const Json plots =  // null: not asked
        options.plots ? draw_plots(staging, options.plot_script, err, &not_drawn) : Json(nullptr);
    if (not_drawn > 0)
      err << "labrun report: note: " << not_drawn << " more time plot(s) not drawn (over --max-plots "
          << options.max_plots << ")\n";
    {
      std::ofstream md = open_for_write(staging / "report.md");
      md << render_report(context, paths, plots, not_drawn, options.max_plots);
      close_or_throw(md, staging / "report.md");
    }
    throw_if_interrupted();  // a plot script stopped by the same Ctrl-C is not a finished report
    folder->commit();
    const fs::path md_path = fs::path(out_dir) / "report.md";
    const std::size_t points = context.point_count();
    out << "labrun report: " << points << " points from " << paths.size() << (paths.size() == 1 ? " file" : " files")
        << " -> " << md_path.string() << ", " << (fs::path(out_dir) / "points.csv").string() << ", " << plots.size()
        << (plots.size() == 1 ? " plot" : " plots") << "\n";
  } catch (const OutputError& e) {
    err << "labrun report: " << e.what() << "\n";
    return kExitOutput;
  }
  return kExitOk;
}

}  // namespace

int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
               std::ostream& err, const ReportOptions& options) {
  // Ctrl-C or SIGTERM: the staging folder goes (ReportFolder), the folder keeps what it held.
  return run_interruptible("report", [&] { return make_report(paths, out_dir, out, err, options); });
}

}  // namespace labrun
