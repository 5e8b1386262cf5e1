// `labrun history RESULTS...` (cmd_history, history.hpp): its options (add_history_command, --min-effect and
// --alpha through command_inputs.hpp's add_effect_options); loads every result file with load_result_file
// (command_inputs.hpp: a labrun result with points), orders the commits (git rev-list when --repo is given), runs
// history_results() and writes the chosen output (output_table.hpp), the --bisect text or the report folder.
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "diff.hpp"
#include "history.hpp"
#include "interrupt.hpp"
#include "output_file.hpp"
#include "output_table.hpp"
#include "point_record.hpp"
#include "spawn.hpp"

namespace labrun {
namespace {

bool is_full_sha(const std::string& s) {
  if (s.size() != 40) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

/// The repository's commits as `git -C repo log --topo-order --format=%H%x09%s HEAD` lists them (the order of
/// `git rev-list --topo-order HEAD`): full shas, newest first, and each one's subject line (for the HTML view).
struct RevList {
  std::vector<std::string> shas;
  std::map<std::string, std::string> subjects;  ///< by full sha
};

/// One git call for both. @throws BadInput when git fails.
RevList rev_list(const std::string& repo) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(repo, ec)) throw BadInput("--repo " + repo + ": not a folder");
  const fs::path out = fs::temp_directory_path() / ("labrun-history-revlist-" + std::to_string(::getpid()) + ".txt");
  SpawnOptions options;
  options.output = out.string();
  const int rc = run_process({"git", "-C", repo, "log", "--topo-order", "--format=%H%x09%s", "HEAD"}, options);
  RevList revs;
  std::string first_other;
  {
    std::ifstream in(out);
    for (std::string line; std::getline(in, line);) {
      const std::size_t tab = line.find('\t');
      const std::string sha = line.substr(0, tab);
      if (is_full_sha(sha)) {
        revs.shas.push_back(sha);
        if (tab != std::string::npos) revs.subjects[sha] = line.substr(tab + 1);
      } else if (first_other.empty()) {
        first_other = line;
      }
    }
  }
  fs::remove(out, ec);
  if (rc != 0 || revs.shas.empty())
    throw BadInput("--repo " + repo + ": git log --topo-order HEAD failed (exit status " + std::to_string(rc) + ")" +
                   (first_other.empty() ? "" : ": " + first_other));
  return revs;
}

}  // namespace

namespace {

/// cmd_history without its handling of signals.
int run_history(const HistoryArgs& args, std::ostream& out, std::ostream& err) {
  const OutputRow* output = find_output(Product::history, args.format);  // empty: the default
  if (!output) {
    err << "labrun history: unknown format '" << args.format << "' (expected " << output_names(Product::history)
        << ")\n";
    return kHistoryBadInput;
  }
  if (args.paths.empty()) {
    err << "labrun history: need at least one result file\n";
    return kHistoryBadInput;
  }
  std::optional<ReportFolder> folder;  // claimed first: refused before any work
  if (!args.report_dir.empty()) {
    try {
      folder.emplace(args.report_dir, "history", args.force);
    } catch (const OutputError& e) {
      err << "labrun history: " << e.what() << "\n";
      return kHistoryOutput;
    }
  }
  HistoryResult history;
  RevList revs;
  try {
    std::vector<Run> runs;
    for (const auto& path : args.paths)
      for (Run& run : load_result_file(path, "history", err, EmptyShard::refuse)) runs.push_back(std::move(run));
    if (!args.repo.empty()) revs = rev_list(args.repo);
    std::vector<CommitRuns> commits;
    try {
      commits = order_commits(std::move(runs), args.repo.empty() ? nullptr : &revs.shas);
    } catch (const ResultError& e) {
      throw BadInput(e.what());
    }
    history = history_results(commits, args.options);
    for (HistoryCommit& c : history.commits)
      if (const auto it = revs.subjects.find(c.sha); it != revs.subjects.end()) c.subject = it->second;
    if (!args.bisect.empty()) {
      out << history_bisect(history, args.bisect, args.repo.empty() ? nullptr : &revs.shas);
      return history.fail ? kHistoryStep : kHistoryNoStep;
    }
  } catch (...) {
    return bad_input_exit("labrun history", err, kHistoryBadInput);
  }
  output->make({})->history(history, out);
  if (folder) {
    try {
      write_history_report(history, folder->begin().string(), args.plot_script, args.max_plots, err);
      throw_if_interrupted();  // a plot script stopped by the same Ctrl-C is not a finished report
      folder->commit();
      err << "labrun history: wrote " << args.report_dir << "/history.md and " << args.report_dir << "/index.html\n";
    } catch (const OutputError& e) {
      err << "labrun history: " << e.what() << "\n";
      return kHistoryOutput;
    }
  }
  return history.fail ? kHistoryStep : kHistoryNoStep;
}

}  // namespace

int cmd_history(const HistoryArgs& args, std::ostream& out, std::ostream& err) {
  // Ctrl-C or SIGTERM: the staging folder of -o goes (ReportFolder), the folder keeps what it held.
  return run_interruptible("history", [&] { return run_history(args, out, err); });
}

namespace {

/// The history command's options as parsed; those given as text are checked when it runs.
struct HistoryCommandOptions {
  HistoryArgs args;
  std::vector<std::string> paths;  ///< as given: files, comma-separated lists or folders
  std::string min_effect = "2%", alpha = "0.05", fail_on = "slower";
};

// The history command once parsed: its options checked, its files listed, then cmd_history.
int run_history_command(HistoryCommandOptions& o) {
  HistoryOptions& options = o.args.options;
  options.min_effect = parse_percent(o.min_effect);
  options.alpha = parse_percent(o.alpha);
  options.alpha_history = std::min(options.alpha_history, options.alpha);
  options.fail_on = parse_history_fail_on(o.fail_on);
  o.args.paths = result_paths(o.paths);
  return cmd_history(o.args, std::cout, std::cerr);
}

}  // namespace

Command add_history_command(CLI::App& app, const CommandContext&) {
  auto o = std::make_shared<HistoryCommandOptions>();
  HistoryArgs& a = o->args;
  CLI::App* history = app.add_subcommand(
      "history", "find the commits where points' times stepped, over runs of many commits (docs/history.md)");
  history
      ->add_option("results", o->paths, "result files of many commits: .jsonl files, comma-separated lists or folders")
      ->required();
  history->add_option("--repo", a.repo, "order the commits as git rev-list --topo-order HEAD in this repository");
  history->add_option("--format", a.format, output_names(Product::history, true));
  history->add_option("--fail-on-newest", o->fail_on, "exit 1 on a step at the newest commit: slower (default) or any");
  history->add_option("--bisect", a.bisect, "print the commits still to test for this point (id or key)");
  history->add_option("-o,--output", a.report_dir, "also write a report folder: history.md, history.json, plots");
  history->add_flag("--force", a.force, "replace an earlier history report in the -o folder");
  add_effect_options(*history, o->min_effect, "smallest step reported, e.g. 2% (default) or 0.02", o->alpha,
                     "false discovery rate over the points' steps: 0.05 (default)");
  history->add_option("--max-plots", a.max_plots, "draw at most this many group plots (default 16)")
      ->check(count_validator());
  return {history, [o] { return run_history_command(*o); }, {}};
}

}  // namespace labrun
