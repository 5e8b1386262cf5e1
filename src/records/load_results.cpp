// load_results: result files read into runs (a header, its points and segment lines; shards and resumed files as
// one run each), what a reader does not need trimmed away, and write_whole.
#include "point_record.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <unordered_map>

#include <fmt/format.h>

#include <labrun/axis.hpp>
#include <labrun/point.hpp>
#include <labrun/status.hpp>

#include "format.hpp"  // printable
#include "interrupt.hpp"
#include "lab_settings.hpp"
#include "name_table.hpp"
#include "record_fields.hpp"
#include "result_paths.hpp"

#include "output_file.hpp"

namespace labrun {

using namespace fields;

namespace {

namespace fs = std::filesystem;

/// The number of lines of the regular file `path` (newlines, plus an unterminated last line), read in 1 MiB
/// blocks, for reserving the points' vector; stops early with Interrupted once a signal arrived. It stops at the
/// first line longer than kMaxRecordLineBytes, counting that line and no more: the reader refuses that line when it
/// gets there (RecordLines), so a file is never read past its first over-long line (a sparse 10 GiB file without a
/// newline is refused after 64 MiB, not after all of it; case H02).
std::size_t count_lines(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> block(1 << 20);
  std::size_t lines = 0, line_bytes = 0;
  while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
    throw_if_interrupted();
    const char* p = block.data();
    const char* const end = p + in.gcount();
    while (p < end) {
      const auto* newline = static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
      line_bytes += static_cast<std::size_t>((newline ? newline : end) - p);
      if (line_bytes > kMaxRecordLineBytes) return lines + 1;
      if (!newline) break;
      ++lines;
      line_bytes = 0;
      p = newline + 1;
    }
  }
  return lines + (line_bytes > 0);
}

/// Empties `v` and frees its buffer.
void drop(std::vector<double>& v) { std::vector<double>().swap(v); }

/// The message of a header in the middle of a run.
std::string mid_run_header(std::size_t held, double announced, std::size_t header_line) {
  return "a second header after " + std::to_string(held) + " of the " +
         std::to_string(static_cast<std::int64_t>(announced)) + " points the header of line " +
         std::to_string(header_line) +
         " announces: a header starts a file, or a whole run after another whole one (concatenated runs)";
}

/// One file through load_results(): its lines in order, each record checked and added to the run it belongs to.
class FileLoader {
 public:
  FileLoader(const std::string& path, ResultSet& set, LoadDepth depth)
      : in_(path), path_(path), set_(set), depth_(depth), lines_(count_lines(path)) {}

  /// Reads the whole file into set.runs. @throws ResultError as load_results, Interrupted on a signal.
  void load();

 private:
  void record(Json& r);
  void header(const Json& r);
  void point(const Json& r);
  std::string where() const { return printable(path_) + ":" + std::to_string(in_.line_number()); }

  RecordLines in_;
  std::string path_;
  ResultSet& set_;
  LoadDepth depth_;
  std::size_t lines_;
  std::optional<Run> run_;
  std::size_t header_line_ = 0, duplicates_ = 0;
  std::unordered_map<std::string, std::size_t> ids_;  // of the current run, with their lines
};

void FileLoader::load() {
  std::size_t records = 0;
  for (std::string line; in_.next(line);) {
    throw_if_interrupted();  // a sweep's --resume check of a large file stops on Ctrl-C (src/base/interrupt.hpp)
    if (line.empty()) continue;
    std::optional<Json> parsed = parse_line_or_torn(line, in_.unterminated(), where(), set_.warnings);
    if (!parsed) break;
    ++records;
    try {
      record(*parsed);
    } catch (const ResultError& e) {
      throw ResultError(where() + ": " + e.what());
    }
  }
  if (records == 0) throw ResultError(path_ + ": empty; expected a labrun result file (JSON Lines, header first)");
  if (!run_) throw ResultError(path_ + ": no header and no point records");
  set_.runs.push_back(std::move(*run_));
}

// One record, by its type; the caller adds the file and line to a ResultError.
void FileLoader::record(Json& r) {
  if (!r.is_object()) throw ResultError("not a JSON object, so not a labrun record");
  const auto type = r.find("type");
  if (type == r.end() || !type->is_string()) throw ResultError("not a labrun record (no string \"type\")");
  if (*type == "header") {
    header(r);
  } else if (*type == "point") {
    point(r);
  } else if (*type == "segment") {
    if (!run_) throw ResultError("a segment before any header: a labrun result file starts with its header line");
    check_segment(r);
    run_->segments.push_back(std::move(r));
  } else {
    throw ResultError("type: " + shown(*type) +
                      " is not a record type of a labrun result file (header, point, segment): a line of another "
                      "tool, or an edited one");
  }
}

// A header starts the file, or a new run after a whole one (a concatenation of runs).
void FileLoader::header(const Json& r) {
  RunHeader h = header_from_json(r);
  check_header(h);
  if (run_) {
    const double announced = run_->header.point_count();
    if (std::isfinite(announced) && static_cast<double>(run_->points.size()) < announced)
      throw ResultError(mid_run_header(run_->points.size(), announced, header_line_));
    set_.runs.push_back(std::move(*run_));
  }
  run_ = Run{path_, std::move(h), true, {}, {}};
  header_line_ = in_.line_number();
  ids_.clear();
}

void FileLoader::point(const Json& r) {
  if (!run_)
    throw ResultError(
        "a point before any header: a labrun result file starts with its header line (is this a "
        "labrun result file?)");
  PointRecord p = point_from_json(r);
  check_point(p);
  check_point_of_run(p, run_->header);
  const std::size_t line = in_.line_number();
  if (const auto [it, fresh] = ids_.emplace(p.id, line); !fresh) {
    const std::string text = where() + ": point " + p.id + " (" + p.key + ") is also at line " +
                             std::to_string(it->second) + " of the same run (two writers on one file?)";
    if (set_.first_duplicate.empty()) set_.first_duplicate = text;
    if (duplicates_++ < 3) set_.warnings.push_back(text);
  }
  // One allocation for a file of one run (the usual case) instead of a doubling vector of 2 KB records.
  if (run_->points.empty()) run_->points.reserve(lines_ > line ? lines_ - line + 1 : 1);
  run_->points.push_back(std::move(p));
  if (depth_ == LoadDepth::analysis) trim_for_analysis(run_->points.back());
  if (depth_ == LoadDepth::comparison) trim_for_comparison(run_->points.back());
}

void load_file(const std::string& path, ResultSet& set, LoadDepth depth) {
  std::error_code ec;
  if (fs::is_directory(path, ec))
    throw ResultError("cannot read " + printable(path) + ": a folder in a list of result files");
  FileLoader(path, set, depth).load();
}

}  // namespace

namespace {

/// What neither report nor diff reads: `phases`, `correctness.detail` but the comparison the point reports (its
/// worst element, shown in the report's drill-down), device_state but the clocks and throttle state, the raw submit
/// and host-probe samples, and the raw wall samples of a point that has device samples.
void trim_unread(PointRecord& p) {
  p.phases = Json();
  p.launches.reset();
  if (p.correctness) {
    CheckOutcome& o = p.correctness->outcome;
    if (const CheckResult* reported = o.reported()) {
      CheckResult kept = *reported;  // passed() reads the same of it alone: it is a failed one if any failed
      o.comparisons.assign(1, std::move(kept));
    } else {
      o.comparisons.clear();
    }
    p.correctness->as_written = Json();
  }
  // device_state keeps what device_state_of() reads (clocks, throttle flag and reasons, the tenants), not temperature
  // or power.
  if (p.device_state.is_object()) {
    Json kept = Json::object();
    for (const char* when : {"before", "after"}) {
      const auto it = p.device_state.find(when);
      if (it == p.device_state.end()) continue;
      if (!it->is_object()) {
        kept[when] = *it;
        continue;
      }
      Json& k = kept[when] = Json::object();
      for (const char* name :
           {"sm_clock_hz", "memory_clock_hz", "throttled", "clocks_event_reasons", "tenants", "sync_round_trip_time_s"})
        if (const auto f = it->find(name); f != it->end()) k[name] = *f;
    }
    p.device_state = std::move(kept);
  }
  if (!p.timing) return;
  Timing& t = *p.timing;
  drop(t.submit_samples_s);
  drop(t.host_probe_samples_s);
  if (!t.device_samples_s.empty()) drop(t.wall_samples_s);  // the primary samples are the device's
}

}  // namespace

void trim_for_analysis(PointRecord& p) {
  trim_unread(p);
  if (p.timing) {  // report reads the summaries, never the samples
    drop(p.timing->wall_samples_s);
    drop(p.timing->device_samples_s);
  }
}

void trim_for_comparison(PointRecord& p) {
  trim_unread(p);
  p.correctness.reset();
  p.memory = Json();
  p.kernels.reset();
  if (p.timing) {  // diff reads the raw samples and the process medians, not the summaries; a record without samples
    // (another tool's, imported) is compared from its device summary, else its wall summary, which it keeps
    const bool summary_only = p.timing->device_samples_s.empty() && p.timing->wall_samples_s.empty();
    OptionalSummary* kept = !summary_only ? nullptr : p.timing->device ? &p.timing->device : &p.timing->wall;
    for (OptionalSummary* s : {&p.timing->wall, &p.timing->device, &p.timing->submit, &p.timing->host_probe})
      if (s != kept) s->reset();
  }
  if (p.interpretation) {  // diff reads the bound class alone (a host-bound point is compared host-aware)
    std::string bound = std::move(p.interpretation->bound);
    std::optional<std::string> memory_source = std::move(p.interpretation->ceilings.memory_source);
    p.interpretation.emplace();  // destroys the old one: assigning would keep its strings' buffers
    p.interpretation->bound = std::move(bound);
    p.interpretation->ceilings.memory_source = std::move(memory_source);  // the bound-normalised comparison's
  }
}

std::optional<Json> parse_line_or_torn(const std::string& line, bool at_eof, const std::string& where,
                                       std::vector<std::string>& warnings) {
  try {
    return parse_record_line(line);
  } catch (const std::exception& e) {
    // The last line without a newline: the record being written when the run was killed.
    if (at_eof) {
      warnings.push_back(where + ": dropped a torn last line (was the run killed?)");
      return std::nullopt;
    }
    // A bound of parse_record_line (nesting, keys per object, a duplicate key) says what it is; nlohmann's
    // errors are the JSON's.
    if (dynamic_cast<const ResultError*>(&e)) throw ResultError(where + ": " + e.what());
    throw ResultError(where + ": not JSON: " + e.what());
  }
}

ResultSet load_results(const std::vector<std::string>& paths, LoadDepth depth) {
  ResultSet set;
  for (const auto& arg : paths)
    for (const auto& file : expand_result_path(arg)) load_file(file, set, depth);
  return set;
}

void write_whole(const std::string& path, bool replace, const std::function<void(JsonlWriter&)>& lines) {
  write_beside_then_rename(path, replace, [&](const std::string& sibling) {  // src/base/output_file.hpp
    JsonlWriter w(sibling, false);
    lines(w);
    w.sync();
  });
}

}  // namespace labrun
