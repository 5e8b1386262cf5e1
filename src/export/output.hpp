// Every way results leave labrun is one Output: the interface below, one implementation per format in a file of its
// own, all listed in one table (outputs(), src/commands/output_table.hpp), which is where a command chooses them.
// An Output has a hook per kind of result, each doing nothing by default, as nvbench's printer_base and Google
// Benchmark's BenchmarkReporter have; a format overrides the hooks of the results it writes:
// - the records of a run as they are made (line, text_line, point, finish): the JSON Lines result file (JsonlSink,
//   here: every record line labrun writes leaves through one), a sweep's progress lines and its summary table
//   (console.hpp);
// - a diff (diff): its table, markdown and JSON (src/diff/diff_{table,markdown,json}.cpp);
// - a history (history): its table, markdown and JSON (src/history/history_{table,markdown,json}.cpp);
// - a report folder's files (report): points.csv, ceilings.json, plots.json, the PNG plots and report.md
//   (src/report/);
// - result files in another tool's format (runs): gbench, bmf, github-action-benchmark (src/export/export_*.cpp).
// The result types live in the modules above this one (src/modules.txt) and are only declared here. A new format is
// its file and its row in outputs().
#pragma once

#include <cstddef>
#include <filesystem>
#include <iosfwd>
#include <string>
#include <vector>

#include "point_record.hpp"
#include "record.hpp"

namespace labrun {

struct DiffResult;     // src/diff/diff.hpp
struct HistoryResult;  // src/history/history.hpp
struct ReportBuild;    // src/report/report_files.hpp
struct Exported;       // src/export/exporter.hpp

/// Which result an output writes: the command that chooses it from outputs().
enum class Product {
  records,   ///< a run's records as they are made (sweep, merge, import): the JSON Lines file
  console,   ///< a sweep's records on the console: progress lines, the summary table
  report,    ///< one file (or the plots) of a report folder (`labrun report`)
  diff,      ///< a diff on standard output (`labrun diff --format`)
  history,   ///< a history on standard output (`labrun history --format`)
  exported,  ///< result files in another tool's format (`labrun export FORMAT`)
};

/// One way results leave labrun (the header's comment lists them). Every hook does nothing by default.
class Output {
 public:
  virtual ~Output() = default;

  // ---- a run's records, as they are made ----
  /// A line that is not a point: the header of a fresh file, the `segment` line of a continued one.
  virtual void line(const Json& record) { (void)record; }
  /// A record already written once, as its JSON text without the newline (merge copies shards' lines byte for byte).
  virtual void text_line(const std::string& text) { (void)text; }
  /// The run's point number `index` (1-based, in the order the points finish) is final.
  virtual void point(std::size_t index, const PointRecord& record) {
    (void)index;
    (void)record;
  }
  /// Every point of the run is in. @throws what the destination throws (OutputError for a file).
  virtual void finish() {}

  // ---- whole results, each written once ----
  /// Writes `result` to `out` (whole text, newline-terminated).
  virtual void diff(const DiffResult& result, std::ostream& out) {
    (void)result;
    (void)out;
  }
  /// Writes `result` to `out` (whole text, newline-terminated).
  virtual void history(const HistoryResult& result, std::ostream& out) {
    (void)result;
    (void)out;
  }
  /// Writes the output's file of a report folder at `file` (build.staging / the row's name; the plots write into
  /// build.staging), reading `build` and recording there what later rows read. @throws OutputError.
  virtual void report(ReportBuild& build, const std::filesystem::path& file) {
    (void)build;
    (void)file;
  }
  /// The format's document for every point of `runs` (load_results(), LoadDepth::analysis or fuller), in file order,
  /// into `out`; a point that not_exportable() refuses is listed in out.left_out. Never throws for a record
  /// load_results() accepted.
  virtual void runs(const std::vector<Run>& runs, Exported& out) {
    (void)runs;
    (void)out;
  }
};

/// The sinks of one run, fed in the order given: each line, point and finish goes to every sink in turn.
class FanOut final : public Output {
 public:
  explicit FanOut(std::vector<Output*> sinks) : sinks_(std::move(sinks)) {}
  void line(const Json& record) override;
  void text_line(const std::string& text) override;
  /// Numbers the points itself (1, 2, ...): call it with any index, e.g. point(0, rec), or through add().
  void point(std::size_t index, const PointRecord& record) override;
  /// point() with the next number.
  void add(const PointRecord& record) { point(0, record); }
  void finish() override;

 private:
  std::vector<Output*> sinks_;
  std::size_t points_ = 0;
};

/// The run's JSON Lines result file (docs/records.md): each line as written, each point as to_json(PointRecord); at
/// finish, a pending replacement is renamed into place (JsonlWriter::commit: a shard with no points is a header
/// alone and still replaces the old file). @throws OutputError from the writer.
class JsonlSink final : public Output {
 public:
  explicit JsonlSink(JsonlWriter& writer) : writer_(writer) {}
  void line(const Json& record) override;
  void text_line(const std::string& text) override;
  void point(std::size_t index, const PointRecord& record) override;
  void finish() override;

 private:
  JsonlWriter& writer_;
};

/// Writes `run` (its header, its segments, its points) to `path` whole or not at all through a JsonlSink (write_whole,
/// src/records/point_record.hpp: a full disk or a kill never leaves a partial file at `path`).
/// @throws OutputError as write_whole.
void write_run_file(const std::string& path, const Run& run, bool replace);

}  // namespace labrun
