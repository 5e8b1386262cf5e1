#include "report.hpp"

#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>

#include "exit_codes.hpp"
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

int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
               std::ostream& err, const ReportOptions& options) {
  namespace fs = std::filesystem;
  if (paths.empty()) {
    err << "labrun report: no result files given\n";
    return kExitUsage;
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
    loaded.emplace(load_results(paths), registry);
  } catch (const ResultError& e) {
    err << "labrun report: " << e.what() << "\n";
    return kExitUsage;
  }
  const ReportContext& context = *loaded;
  for (const auto& w : context.warnings()) err << "labrun report: warning: " << w << "\n";
  const fs::path dir(out_dir);
  try {
    std::error_code ec;
    if (options.replace) fs::remove_all(dir, ec);  // no stale plots from an earlier report
    fs::create_directories(dir, ec);
    if (ec || !fs::is_directory(dir)) throw OutputError("cannot create directory " + out_dir + ": " + ec.message());
    write_points_csv(context, dir / "points.csv");
    write_ceilings_json(context, dir / "ceilings.json");
    write_plot_specs(context, dir / "plots.json");
    const Json plots = options.plots ? draw_plots(dir, options.plot_script, err) : Json(nullptr);  // null: not asked
    const fs::path md_path = dir / "report.md";
    std::ofstream md(md_path);
    md << render_report(context, paths, plots);
    if (!md) throw OutputError("cannot write " + md_path.string());
    const std::size_t points = context.point_count();
    out << "labrun report: " << points << " points from " << paths.size() << (paths.size() == 1 ? " file" : " files")
        << " -> " << md_path.string() << ", " << (dir / "points.csv").string() << ", " << plots.size()
        << (plots.size() == 1 ? " plot" : " plots") << "\n";
  } catch (const OutputError& e) {
    err << "labrun report: " << e.what() << "\n";
    return kExitOutput;
  }
  return kExitOk;
}

}  // namespace labrun
