// `labrun diff BASE NEW` (cmd_diff, diff.hpp): its options (add_diff_command, --min-effect and --alpha through
// command_inputs.hpp's add_effect_options); loads each side's files with load_result_file (command_inputs.hpp: a
// labrun result with points, or a lone empty shard), merges a side's shards, runs diff_results() and writes the
// chosen output (output_table.hpp).
#include "diff.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <memory>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "html_page.hpp"
#include "merge.hpp"
#include "output_file.hpp"
#include "output_table.hpp"
#include "point_record.hpp"

namespace labrun {
namespace {

// One side: its files' runs, the shards of one sweep merged into one run as `labrun merge` does.
std::vector<Run> load_side(const std::vector<std::string>& paths, std::ostream& err) {
  std::vector<Run> all;
  for (const auto& path : paths) {
    std::vector<Run> runs = load_result_file(path, "diff", err, EmptyShard::allow);
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
  const OutputRow* output = find_output(Product::diff, format);
  if (!output || format.empty()) {
    err << "labrun diff: unknown format '" << format << "' (expected " << output_names(Product::diff) << ")\n";
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
  } catch (...) {
    return bad_input_exit("labrun diff", err, kDiffBadInput);
  }
  output->make({})->diff(diff, out);
  return diff.regression ? kDiffRegression : kDiffNoRegression;
}

namespace {

/// The diff command's options as parsed, as given on the command line.
struct DiffCommandOptions {
  std::string base_arg, new_arg, min_effect = "5%", format = find_output(Product::diff, "")->name, fail_on = "slower",
                                 alpha = "0.05";
  std::string output;  ///< -o FILE: the diff written there whole (beside, then renamed) instead of standard output
  bool force = false;  ///< --force: -o may replace an existing file
  bool normalize = false;
  bool allow_shared = false;
};

// The diff command once parsed: its options checked, then cmd_diff on the two sides' files.
int run_diff(const DiffCommandOptions& o) {
  DiffOptions options;
  options.min_effect = parse_percent(o.min_effect);
  options.alpha = parse_percent(o.alpha);
  options.normalize = o.normalize;
  options.allow_shared = o.allow_shared;
  options.fail_on = parse_fail_on(o.fail_on);
  if (o.format == "html") std::cerr << html_assets_warning("diff", html_assets());
  if (o.output.empty())
    return cmd_diff(result_paths(o.base_arg), result_paths(o.new_arg), options, o.format, std::cout, std::cerr);
  std::error_code ec;
  if (!o.force && std::filesystem::exists(o.output, ec)) {  // refused before any work
    std::cerr << "labrun diff: " << o.output << " already exists (--force replaces it); nothing written\n";
    return kDiffOutput;
  }
  std::ostringstream text;
  const int rc = cmd_diff(result_paths(o.base_arg), result_paths(o.new_arg), options, o.format, text, std::cerr);
  if (rc == kDiffBadInput) return rc;
  try {
    // A folder the file names that does not exist yet is made, as report -o makes its folder.
    if (const auto parent = std::filesystem::path(o.output).parent_path(); !parent.empty())
      if (std::filesystem::create_directories(parent, ec); ec)
        throw OutputError("cannot create " + parent.string() + ": " + ec.message());
    write_beside_then_rename(o.output, o.force,
                             [&](const std::string& sibling) { write_text_file(sibling, text.str()); });
  } catch (const OutputError& e) {
    std::cerr << "labrun diff: " << e.what() << "; nothing written\n";
    return kDiffOutput;
  }
  std::cerr << "labrun diff: wrote " << o.output << "\n";
  return rc;
}

}  // namespace

Command add_diff_command(CLI::App& app, const CommandContext&) {
  auto o = std::make_shared<DiffCommandOptions>();
  CLI::App* diff = app.add_subcommand("diff", "compare two runs point by point (docs/diff.md); exit 1 on a regression");
  diff->add_option("base", o->base_arg, "base results: a .jsonl file, a comma-separated list (shards) or a folder")
      ->required();
  diff->add_option("new", o->new_arg, "new results, same forms")->required();
  add_effect_options(*diff, o->min_effect, "smallest change that counts, e.g. 5% (default) or 0.05", o->alpha,
                     "false discovery rate over the whole diff (Benjamini-Hochberg): 0.05 (default) or 5%");
  diff->add_option("--format", o->format, output_names(Product::diff, true));
  diff->add_option("-o,--output", o->output,
                   "write the diff to this file instead of standard output (html: one page that opens from disk)");
  diff->add_flag("--force", o->force, "with -o: replace an existing file");
  diff->add_option("--fail-on", o->fail_on, "slower (default) or any (also status changes)");
  diff->add_flag("--normalize", o->normalize, "compare times scaled by each run's calibrated copy bandwidth");
  diff->add_flag("--allow-shared", o->allow_shared,
                 "do not fail on points measured while another process held the GPU (never compared either way)");
  return {diff, [o] { return run_diff(*o); }, {}};
}

}  // namespace labrun
