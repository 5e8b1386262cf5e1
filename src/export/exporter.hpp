// The way result records leave labrun in another tool's format (`labrun export`, docs/formats.md): one Exporter per
// format, one file each (export_<format>.cpp), all listed in one table (exporters()). Adding a format is its file and
// its row; the command, its --help and the tests read the table.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "point_record.hpp"
#include "record.hpp"

namespace labrun {

/// A point that an export left out, and why: "KEY: incorrect: wrote past the end of y".
struct LeftOut {
  std::string key;
  std::string why;
};

/// What an export wrote: the document, the points it wrote as numbers and those it left out.
struct Exported {
  Json document;
  std::size_t written = 0;
  std::vector<LeftOut> left_out;  ///< every point not written as a number, in file order
};

/// One export format. Implementations are stateless; the table owns one of each.
class Exporter {
 public:
  virtual ~Exporter() = default;
  /// The format's name on the command line ("gbench").
  virtual std::string name() const = 0;
  /// One line for --help: the tool that reads it.
  virtual std::string summary() const = 0;
  /// The format's document for every point of `runs` (load_results(), LoadDepth::analysis or fuller), in file order.
  /// A point that not_exportable() refuses is left out and listed in `left_out`. Never throws for a record
  /// load_results() accepted.
  virtual Exported write(const std::vector<Run>& runs) const = 0;
};

/// Every export format, in the order `labrun export --help` lists them.
const std::vector<std::unique_ptr<Exporter>>& exporters();
/// The format named `name`, or nullptr.
const Exporter* find_exporter(const std::string& name);

/// Why `point` may not leave labrun as a number, or nullopt when it may: its status is not `ok` ("incorrect:
/// REASON"), an integrity check found something (failed, or warned: "integrity: audit warned: ..."), or it has no
/// finite time_s ("no time").
std::optional<std::string> not_exportable(const PointRecord& point);

/// The timing summary behind a point's time_s: timing.device when recorded, else timing.wall; nullptr without timing.
const TimeSummary* primary_summary(const PointRecord& point);

/// Seconds to nanoseconds (the unit Google Benchmark's JSON, Bencher's `latency` and the github-action-benchmark
/// export use): s * 1e9.
double to_ns(double seconds);

}  // namespace labrun
