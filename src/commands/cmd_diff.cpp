// `labrun diff BASE NEW` (cmd_diff, diff.hpp): its options (add_diff_command); loads each side with
// load_results(), checks that every file is a labrun result, runs diff_results() and writes the chosen rendering.
#include "diff.hpp"

#include <CLI/CLI.hpp>

#include <iostream>
#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "merge.hpp"
#include "point_record.hpp"

namespace labrun {
namespace {

/// A result file that cannot be diffed; the message names the file.
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// The runs of one result file (or of what load_results() reads for one argument), after checking that it holds
/// at least one point (load_results checks JSON, record types and fields, and refuses a file without a header
/// first). A torn last line (a killed run) is dropped with a note on `err`: the complete records before it are
/// still a valid result.
std::vector<Run> load_result_file(const std::string& path, std::ostream& err) {
  ResultSet set;
  try {
    set = load_results({path}, LoadDepth::comparison);
  } catch (const ResultError& e) {
    throw BadInput(e.what());
  }
  for (const auto& warning : set.warnings) err << "labrun diff: note: " << warning << "\n";
  std::size_t points = 0;
  for (const Run& run : set.runs) points += run.points.size();
  // A shard may hold no points (more shards than groups of points); the side as a whole must hold some.
  if (points == 0 && !(set.runs.size() == 1 && is_shard(set.runs.front().header)))
    throw BadInput(path + ": no point records (did the run stop after its header?)");
  return std::move(set.runs);
}

// One side: its files' runs, the shards of one sweep merged into one run as `labrun merge` does.
std::vector<Run> load_side(const std::vector<std::string>& paths, std::ostream& err) {
  std::vector<Run> all;
  for (const auto& path : paths) {
    std::vector<Run> runs = load_result_file(path, err);
    all.insert(all.end(), std::make_move_iterator(runs.begin()), std::make_move_iterator(runs.end()));
  }
  try {
    merge_shard_runs(all);
  } catch (const ResultError& e) {
    throw BadInput(e.what());
  }
  return all;
}

}  // namespace

int cmd_diff(const std::vector<std::string>& base_paths, const std::vector<std::string>& new_paths,
             const DiffOptions& options, const std::string& format, std::ostream& out, std::ostream& err) {
  const Rendering<DiffResult>* rendering = diff_renderings().find(format);
  if (!rendering) {
    err << "labrun diff: unknown format '" << format << "' (expected " << diff_renderings().names() << ")\n";
    return kDiffBadInput;
  }
  if (base_paths.empty() || new_paths.empty()) {
    err << "labrun diff: need at least one base and one new result file\n";
    return kDiffBadInput;
  }
  DiffResult diff;
  try {
    const std::vector<Run> base = load_side(base_paths, err);
    const std::vector<Run> current = load_side(new_paths, err);
    diff = diff_results(base, current, options);
  } catch (const BadInput& e) {
    err << "labrun diff: " << e.what() << "\n";
    return kDiffBadInput;
  } catch (const std::invalid_argument& e) {
    err << "labrun diff: " << e.what() << "\n";
    return kDiffBadInput;
  }
  out << rendering->render(diff);
  return diff.regression ? kDiffRegression : kDiffNoRegression;
}

namespace {

/// The diff command's options as parsed, as given on the command line.
struct DiffCommandOptions {
  std::string base_arg, new_arg, min_effect = "5%", format = diff_renderings().default_name(), fail_on = "slower",
                                 alpha = "0.05";
  bool normalize = false;
};

// The diff command once parsed: its options checked, then cmd_diff on the two sides' files.
int run_diff(const DiffCommandOptions& o) {
  DiffOptions options;
  options.min_effect = parse_percent(o.min_effect);
  options.alpha = parse_percent(o.alpha);
  options.normalize = o.normalize;
  options.fail_on = parse_fail_on(o.fail_on);
  return cmd_diff(result_paths(o.base_arg), result_paths(o.new_arg), options, o.format, std::cout, std::cerr);
}

}  // namespace

Command add_diff_command(CLI::App& app, const CommandContext&) {
  auto o = std::make_shared<DiffCommandOptions>();
  CLI::App* diff = app.add_subcommand("diff", "compare two runs point by point (docs/diff.md); exit 1 on a regression");
  diff->add_option("base", o->base_arg, "base results: a .jsonl file, a comma-separated list (shards) or a folder")
      ->required();
  diff->add_option("new", o->new_arg, "new results, same forms")->required();
  diff->add_option("--min-effect", o->min_effect, "smallest change that counts, e.g. 5% (default) or 0.05");
  diff->add_option("--alpha", o->alpha,
                   "false discovery rate over the whole diff (Benjamini-Hochberg): 0.05 (default) or 5%");
  diff->add_option("--format", o->format, diff_renderings().help());
  diff->add_option("--fail-on", o->fail_on, "slower (default) or any (also status changes)");
  diff->add_flag("--normalize", o->normalize, "compare times scaled by each run's calibrated copy bandwidth");
  return {diff, [o] { return run_diff(*o); }, {}};
}

}  // namespace labrun
