// `labrun import nvbench|gbench FILE -o OUT.jsonl`: another tool's results as a labrun result file (src/import/,
// docs/formats.md "Import"), which report and diff then read as they read a sweep's. The file is read
// whole (at most kMaxImportBytes), turned into a run, written to a sibling temporary file, read back with every check
// labrun applies to a result file, and only then moved to OUT: a refused import writes nothing.
#include <CLI/CLI.hpp>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>

#include <fmt/format.h>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "import.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "output_file.hpp"
#include "output.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;

/// The largest file import reads (nvbench's JSON of thousands of states is a few MB).
constexpr std::uintmax_t kMaxImportBytes = std::uintmax_t{1} << 30;

// "LINE:COLUMN" of byte offset `byte` (1-based, as nlohmann's parse errors count it) in `text`.
std::string line_and_column(const std::string& text, std::size_t byte) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i + 1 < byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return fmt::format("{}:{}", line, column);
}

// The file's modification time as labrun writes a timestamp (UTC, "YYYY-MM-DDTHH:MM:SS.000Z").
std::string modified_utc(const fs::path& path) {
  const auto t = fs::last_write_time(path);
  const auto sys = std::chrono::time_point_cast<std::chrono::seconds>(std::chrono::file_clock::to_sys(t));
  const std::time_t secs = std::chrono::system_clock::to_time_t(sys);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S.000Z", &tm);
  return buf;
}

/// Why an import stops before it writes OUT: the message (cmd_import adds "; nothing written") and the exit code.
struct Refusal {
  std::string what;
  int code;
};

// The command's arguments checked before FILE is read: the tool, FILE (a regular file of at most kMaxImportBytes),
// OUT (named, not FILE, a regular file or none, replaced only with --force), --samples (nvbench's, a folder) and
// --created (a UTC timestamp). nullopt when the import may go on.
std::optional<Refusal> refused_arguments(const ImportArgs& o) {
  if (o.tool != "nvbench" && o.tool != "gbench")
    return Refusal{"unknown tool '" + o.tool + "' (expected nvbench or gbench)", kExitUsage};
  std::error_code ec;
  if (!fs::is_regular_file(o.input, ec)) return Refusal{o.input + ": not a readable file", kExitUsage};
  if (fs::file_size(o.input, ec) > kMaxImportBytes)
    return Refusal{fmt::format("{}: larger than {} bytes: not a results file this command reads", o.input,
                               kMaxImportBytes),
                   kExitUsage};
  if (fs::exists(o.output, ec) && fs::equivalent(o.input, o.output, ec))
    return Refusal{"-o " + o.output + " is the file it imports; labrun never overwrites its input", kExitUsage};
  if (o.output.empty() || o.output == "-")
    return Refusal{"-o must name the labrun result file to write (import writes a file, not standard output)",
                   kExitUsage};
  try {  // a device, a FIFO, a folder or a dangling link is never replaced, --force or not
    require_regular_target(o.output);
  } catch (const OutputError& e) {
    return Refusal{e.what(), kExitOutput};
  }
  if (fs::exists(fs::symlink_status(o.output, ec)) && !o.force)
    return Refusal{o.output + " exists (--force replaces it)", kExitOutput};
  if (!o.samples.empty() && o.tool != "nvbench")
    return Refusal{"--samples reads nvbench's per-sample files (--jsonbin); " + o.tool + " has none", kExitUsage};
  if (!o.samples.empty() && !fs::is_directory(o.samples, ec))
    return Refusal{"--samples " + o.samples + ": not a folder", kExitUsage};
  if (!o.created.empty() && !is_utc_timestamp(o.created))
    return Refusal{"--created " + o.created + ": not a UTC time as labrun writes one (YYYY-MM-DDTHH:MM:SS.mmmZ, e.g. " +
                       "2026-12-01T10:00:00.000Z)",
                   kExitUsage};
  return std::nullopt;
}

// The whole text of the file at `path`.
std::string whole_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream all;
  all << in.rdbuf();
  return all.str();
}

// FILE's text (`text`) as a run, by the tool's importer. A run whose created_utc neither --created nor the file gave
// gets FILE's modification time, and `created_from` says so. @throws ResultError when the text is not JSON or the
// importer refuses it.
Run read_run(const ImportArgs& o, const std::string& text, std::string& created_from) {
  ImportOptions options;
  options.file = o.input;
  options.code_rev = o.code_rev;
  options.project = o.project;
  options.created_utc = o.created;
  options.samples_dir = o.samples;  // empty: the file's own date (gbench's context.date), else its modification time
  Json doc;
  try {
    doc = Json::parse(text);
  } catch (const Json::parse_error& e) {
    throw ResultError(o.input + ":" + line_and_column(text, e.byte) + ": not JSON (" + e.what() + ")");
  }
  Run run = o.tool == "nvbench" ? import_nvbench(doc, options) : import_gbench(doc, options);
  if (run.header.json.value("created_utc", std::string()).empty()) {
    run.header.json["created_utc"] = modified_utc(o.input);
    created_from = "the file's modification time";
  }
  return run;
}

// Writes the run beside OUT, reads it back with every check of a result file, then moves it into place; nullopt
// when OUT now holds it. On a refusal nothing is left behind.
std::optional<Refusal> write_through_staging(const ImportArgs& o, const Run& run) {
  std::error_code ec;
  const fs::path staging = fs::path(o.output).parent_path() /
                           fmt::format(".{}.import-{}", fs::path(o.output).filename().string(), ::getpid());
  try {
    write_run_file(staging.string(), run, true);
    (void)load_results({staging.string()}, LoadDepth::full);
  } catch (const ResultError& e) {
    fs::remove(staging, ec);
    return Refusal{std::string("the imported records do not read back: ") + e.what(), kExitUsage};
  } catch (const OutputError& e) {
    fs::remove(staging, ec);
    return Refusal{e.what(), kExitOutput};
  }
  fs::rename(staging, o.output, ec);
  if (ec) {
    fs::remove(staging, ec);
    return Refusal{o.output + ": " + ec.message(), kExitOutput};
  }
  return std::nullopt;
}

// What the import wrote, on `err`: the file's warnings, then the points (how many skipped), FILE -> OUT and, without
// --created, the created_utc the run got and where it came from.
void tell_imported(const ImportArgs& o, const Run& run, const std::string& created_from, std::ostream& err) {
  std::size_t skipped = 0;
  for (const PointRecord& p : run.points) skipped += p.status == Status::skipped;
  for (const Json& w : run.header.json.value("warnings", Json::array()))
    if (w.is_object() && w.contains("message"))
      err << "labrun import: warning: " << w["message"].get<std::string>() << "\n";
  err << "labrun import: " << run.points.size() << (run.points.size() == 1 ? " point (" : " points (") << skipped
      << " skipped) from " << o.input << " -> " << o.output
      << (o.created.empty()
              ? " (created_utc " + run.header.json.value("created_utc", std::string()) + ": " + created_from + ")"
              : std::string())
      << "\n";
}

}  // namespace

int cmd_import(const ImportArgs& o, std::ostream& err) {
  const auto fail = [&](const Refusal& r) {
    err << "labrun import: " << r.what << "; nothing written\n";
    return r.code;
  };
  if (const auto refusal = refused_arguments(o)) return fail(*refusal);
  const std::string text = whole_file(o.input);
  Run run;
  std::string created_from = "the file's context.date";  // where created_utc came from when --created was not given
  try {
    run = read_run(o, text, created_from);
  } catch (const ResultError& e) {
    return fail({e.what(), kExitUsage});
  }
  if (const auto refusal = write_through_staging(o, run)) return fail(*refusal);
  tell_imported(o, run, created_from, err);
  return kExitOk;
}

Command add_import_command(CLI::App& app, const CommandContext&) {
  auto o = std::make_shared<ImportArgs>();
  CLI::App* command = app.add_subcommand(
      "import", "another tool's results as a labrun result file, for report and diff (docs/formats.md)");
  command
      ->add_option("tool", o->tool,
                   "the tool that wrote FILE: nvbench (its --json output) or gbench (Google Benchmark's "
                   "--benchmark_format=json or --benchmark_out)")
      ->required()
      ->check(CLI::IsMember({"nvbench", "gbench"}));
  command->add_option("file", o->input, "the tool's results file")->required();
  command->add_option("-o,--output", o->output, "the labrun result file to write (.jsonl)")->required();
  command->add_option("--code-rev", o->code_rev,
                      "the commit of the code that was measured, SHA or SHA+dirty (the record's environment.code)");
  command->add_option("--project", o->project, "the measured code's project name (default: imported)");
  command->add_option(
      "--created", o->created,
      "when it was measured, UTC as YYYY-MM-DDTHH:MM:SS.mmmZ (default: gbench's context.date, else FILE's "
      "modification time)");
  command
      ->add_option("--samples", o->samples,
                   "nvbench: the folder of the per-sample files its --jsonbin wrote (FILE.json-bin/), so diff "
                   "and history test the samples themselves")
      ->type_name("DIR");
  command->add_flag("--force", o->force, "replace the output file if it exists");
  command->footer("Exit status: 0 written; 2 bad input (nothing written); 4 the output cannot be written.");
  return {command, [o] { return cmd_import(*o, std::cerr); }, {}};
}

}  // namespace labrun
