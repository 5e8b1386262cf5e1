// `labrun export FORMAT RESULTS... [-o FILE]`: result files (as report reads them: files, comma-separated lists of
// shards, folders) written in another tool's format, chosen from outputs() (output_table.hpp; docs/formats.md). A point
// that may not leave as a number is left out and listed on stderr.
#include <CLI/CLI.hpp>

#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "exporter.hpp"
#include "output_table.hpp"
#include "merge.hpp"
#include "output_file.hpp"
#include "point_record.hpp"
#include "record.hpp"

namespace labrun {

int cmd_export(const std::string& format, const std::vector<std::string>& paths, const std::string& output, bool force,
               const ExportOptions& options, std::ostream& out, std::ostream& err) {
  const OutputRow* row = find_output(Product::exported, format);
  if (!row || format.empty()) {
    std::string names;
    for (const OutputRow* r : outputs_of(Product::exported)) names += (names.empty() ? "" : ", ") + r->name;
    err << "labrun export: unknown format '" << format << "' (expected " << names << ")\n";
    return kExitUsage;
  }
  if (paths.empty()) {
    err << "labrun export: no result files given\n";
    return kExitUsage;
  }
  const bool to_stdout = output == "-";
  if (output.empty()) {
    err << "labrun export: -o must not be empty: it takes a file, or - for standard output\n";
    return kExitUsage;
  }
  // The document never replaces a result file it was made from.
  for (const auto& path : paths) {
    std::error_code ec;
    if (!to_stdout && std::filesystem::equivalent(output, path, ec)) {
      err << "labrun export: -o " << output << " is the result file " << path
          << " it reads; labrun never overwrites its input (choose another -o)\n";
      return kExitUsage;
    }
  }
  std::vector<Run> runs;
  try {
    ResultSet set = load_results(paths, LoadDepth::full);  // full: correctness is read too
    for (const auto& w : set.warnings) err << "labrun export: note: " << w << "\n";
    if (!set.first_duplicate.empty()) throw ResultError(set.first_duplicate);
    merge_shard_runs(set.runs);  // shards of one sweep read as one run, by the rules of `labrun merge`
    runs = std::move(set.runs);
  } catch (const ResultError& e) {
    err << "labrun export: " << e.what() << "\n";
    return kExitUsage;
  }
  // One number per point: two runs holding one key would read as repetitions of one benchmark.
  std::map<std::string, std::string> seen;  // key -> file
  for (const Run& run : runs)
    for (const PointRecord& p : run.points)
      if (const auto [it, fresh] = seen.emplace(p.key, run.file); !fresh) {
        err << "labrun export: point " << p.key << " is in " << it->second << " and in " << run.file
            << ": export one run at a time (or the shards of one sweep)\n";
        return kExitUsage;
      }
  const Exported exported = export_runs(row->name, runs, options);
  for (const LeftOut& l : exported.left_out) err << "labrun export: left out " << l.key << " (" << l.why << ")\n";
  if (exported.written == 0) {
    // An empty document is an error dashboards report far from here ("No benchmark result was found").
    err << "labrun export: no point to export (" << exported.left_out.size()
        << " left out: not ok, flagged or untimed); nothing written\n";
    return kExitPointsFailed;
  }
  const std::string text = exported.document.dump(2) + "\n";
  if (to_stdout) {
    out << text << std::flush;
    if (!out) return kExitOutput;  // the reason is said once, at exit (src/base/standard_output.hpp)
  } else {
    try {
      write_texts_whole({TextFile{output, text, force}});
    } catch (const OutputError& e) {
      err << "labrun export: " << e.what() << "\n";
      return kExitOutput;
    }
  }
  err << "labrun export: " << exported.written << (exported.written == 1 ? " point" : " points") << " as " << row->name;
  if (!exported.left_out.empty()) err << ", " << exported.left_out.size() << " left out (not ok, flagged or untimed)";
  err << (to_stdout ? "" : " -> " + output) << "\n";
  return kExitOk;
}

namespace {

struct ExportCommandOptions {
  std::string format;
  std::vector<std::string> paths;  ///< as given: files, comma-separated lists or folders
  std::string output = "-";
  bool force = false;
  ExportOptions options;
};

}  // namespace

Command add_export_command(CLI::App& app, const CommandContext&) {
  auto o = std::make_shared<ExportCommandOptions>();
  CLI::App* command = app.add_subcommand("export",
                                         "result files in another tool's format: Google Benchmark JSON, Bencher, "
                                         "github-action-benchmark (docs/formats.md)");
  std::string formats;
  std::vector<std::string> names;
  for (const OutputRow* row : outputs_of(Product::exported)) {
    formats += "\n  " + row->name + ": " + row->summary;
    names.push_back(row->name);
  }
  command->add_option("format", o->format, "the format:" + formats)->required()->check(CLI::IsMember(names));
  command->add_option("results", o->paths, "result files: .jsonl files, comma-separated lists or folders")->required();
  command
      ->add_option("-o,--output", o->output,
                   "write to FILE (whole or not at all; never one of the result files) instead of standard output (-)")
      ->type_name("FILE");
  command->add_flag("--force", o->force, "replace FILE if it exists");
  command->add_flag("--one-per-point", o->options.one_per_point,
                    "gbench: a pooled point as its pooled time alone, not one repetition per process and their "
                    "aggregates (for dashboards that take every entry as a benchmark)");
  command->footer(
      "Only points that are ok, passed their checks and were not flagged by an integrity check leave as numbers; the "
      "others are listed on stderr. A profiler-mode, unsynchronized or delayed (lab.delay_s) run exports nothing.\n"
      "Exit status: 0 written; 1 no point to export (nothing written); 2 bad input; 4 FILE cannot be written.");
  return {command,
          [o] {
    return cmd_export(o->format, result_paths(o->paths), o->output, o->force, o->options, std::cout, std::cerr);
          },
          {}};
}

}  // namespace labrun
