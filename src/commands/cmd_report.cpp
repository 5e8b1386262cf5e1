// `labrun report RESULTS...` (cmd_report, report.hpp): its options (add_report_command), and the report folder
// made from the result files: loaded and analysed by src/report/ (report_context), its files made in a staging
// folder by the report rows of outputs() (output_table.hpp: the data files, the plots, report.md), then moved into
// place whole.
#include "report.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <ostream>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "interrupt.hpp"
#include "merge.hpp"
#include "output_file.hpp"
#include "output_table.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "report_context.hpp"
#include "report_files.hpp"

namespace labrun {

int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out,
               std::ostream& err) {
  return cmd_report(paths, out_dir, out, err, ReportOptions{});
}

namespace {

/// cmd_report without its handling of signals.
int make_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out, std::ostream& err,
                const ReportOptions& options) {
  namespace fs = std::filesystem;
  if (paths.empty()) {
    err << "labrun report: no result files given\n";
    return kExitUsage;
  }
  // The output folder first, before any input is read: a regular folder that is new, empty or an earlier report
  // (only with replace), and one writer at a time (src/base/output_file.hpp).
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
    ReportBuild build{context, options, paths, folder->begin(), err};
    for (const OutputRow* row : outputs_of(Product::report)) row->make({})->report(build, build.staging / row->name);
    throw_if_interrupted();  // a plot script stopped by the same Ctrl-C is not a finished report
    folder->commit();
    const fs::path md_path = fs::path(out_dir) / "report.md";
    const std::size_t points = context.point_count();
    out << "labrun report: " << points << " points from " << paths.size() << (paths.size() == 1 ? " file" : " files")
        << " -> " << md_path.string() << ", "
        << (options.html ? (fs::path(out_dir) / "index.html").string() + ", " : std::string())
        << (fs::path(out_dir) / "points.csv").string() << ", " << build.plots.size()
        << (build.plots.size() == 1 ? " plot" : " plots") << "\n";
  } catch (const OutputError& e) {
    err << "labrun report: " << e.what() << "\n";
    return kExitOutput;
  }
  return kExitOk;
}

}  // namespace

int cmd_report(const std::vector<std::string>& paths, const std::string& out_dir, std::ostream& out, std::ostream& err,
               const ReportOptions& options) {
  // Ctrl-C or SIGTERM: the staging folder goes (ReportFolder), the folder keeps what it held.
  return run_interruptible("report", [&] { return make_report(paths, out_dir, out, err, options); });
}

namespace {

/// The report command's options as parsed.
struct ReportCommandOptions {
  std::vector<std::string> paths;  ///< as given: files, comma-separated lists or folders
  std::string dir = "report";
  bool no_plots = false;
  bool no_html = false;
  std::size_t max_plots = ReportOptions{}.max_plots;
  bool force = false;
};

// The report command once parsed: its files listed, then cmd_report.
int run_report(const ReportCommandOptions& o) {
  ReportOptions options;
  options.plots = !o.no_plots;
  options.html = !o.no_html;
  options.max_plots = o.max_plots;
  options.replace = o.force;
  return cmd_report(result_paths(o.paths), o.dir, std::cout, std::cerr, options);
}

}  // namespace

Command add_report_command(CLI::App& app, const CommandContext&) {
  auto o = std::make_shared<ReportCommandOptions>();
  CLI::App* report = app.add_subcommand("report", "markdown + CSV + plots from result files (docs/metrics.md)");
  report->add_option("results", o->paths, "result files: .jsonl files, comma-separated lists or folders")->required();
  report->add_option("-o,--output", o->dir, "output folder (default ./report)");
  report->add_flag("--no-plots", o->no_plots, "skip the matplotlib plots");
  report->add_flag("--no-html", o->no_html, "skip index.html, the HTML view (docs/html.md)");
  report->add_option("--max-plots", o->max_plots, "draw at most this many time plots (0: all; rooflines always)")
      ->capture_default_str()
      ->check(count_validator());
  report->add_flag("--force", o->force, "replace an existing report in the output folder");
  return {report, [o] { return run_report(*o); }, {}};
}

}  // namespace labrun
