// Where records go as they are made: one RecordSink per destination, and the sweep's worker writes through one FanOut
// of them. The sinks:
// - JsonlSink: a JSON Lines result file. Every record line labrun writes (a sweep's worker, the supervisor's record
//   of a crashed point, a sanitizer sweep, merge, a pooled run's whole file) leaves through one;
// - ProgressSink (console.hpp): a sweep's progress lines, one per point as it finishes, in the worker's FanOut;
// - SummarySink (console.hpp): a sweep's summary table, printed at finish from the points fed to it (cmd_sweep's
//   finish() feeds it the sweep's records).
// A new destination is one class here (or beside its kin) and one line where its records are fed: the worker's FanOut
// (src/commands/cmd_sweep.cpp) for a sink that follows the points as they finish.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "point_record.hpp"
#include "record.hpp"

namespace labrun {

/// One destination of a sweep's records. Every member does nothing by default.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
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
};

/// The sinks of one run, fed in the order given: each line, point and finish goes to every sink in turn.
class FanOut final : public RecordSink {
 public:
  explicit FanOut(std::vector<RecordSink*> sinks) : sinks_(std::move(sinks)) {}
  void line(const Json& record) override;
  void text_line(const std::string& text) override;
  /// Numbers the points itself (1, 2, ...): call it with any index, e.g. point(0, rec), or through add().
  void point(std::size_t index, const PointRecord& record) override;
  /// point() with the next number.
  void add(const PointRecord& record) { point(0, record); }
  void finish() override;

 private:
  std::vector<RecordSink*> sinks_;
  std::size_t points_ = 0;
};

/// The run's JSON Lines result file (docs/records.md): each line as written, each point as to_json(PointRecord); at
/// finish, a pending replacement is renamed into place (JsonlWriter::commit: a shard with no points is a header
/// alone and still replaces the old file). @throws OutputError from the writer.
class JsonlSink final : public RecordSink {
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
