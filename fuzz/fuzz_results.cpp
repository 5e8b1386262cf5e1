// libFuzzer harness: reading result files, the path `labrun report` and `labrun diff` take with a JSONL file's
// bytes (src/base/record.hpp, src/records/point_record.hpp), and what they do with what loaded.
//
// The bytes are a result file. Two ways in:
// 1. line by line, as the record layer reads them: parse_record_line(), then header_from_json() or
//    point_from_json() by the record's type, point_from_json_tolerant() on every line (the JSON shims' reader),
//    and the typed records written back with to_json();
// 2. the file as a whole: written to a temporary file and read by load_results() (the one loader of report,
//    diff and pooling), then the analysis (analyze()), the report's context and markdown (ReportContext,
//    render_report, plot_figures: all in memory), and diff_results() of the runs against themselves and of the
//    first half of the runs against the rest, rendered as JSON, table and markdown.
// Caught, as documented: parse_record_line's ResultError (nesting deeper than kMaxJsonDepth, more than
// kMaxObjectKeys keys in an object, a duplicate key) and RecordLines' (the bounds of docs/records.md "Bounds"),
// nlohmann::json::parse_error and nlohmann::json::out_of_range (a number beyond a double), ResultError from the
// readers and the loader, std::invalid_argument from diff_results (no point in common). Anything else escaping,
// a crash, a leak, undefined behaviour, a hang or memory beyond -rss_limit_mb is a finding. scripts/sanitize.sh
// runs it.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "diff.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "fuzz_registry.hpp"
#include "registry.hpp"
#include "report_context.hpp"
#include "report_markdown.hpp"
#include "report_plots.hpp"

namespace {

using labrun::Json;

const labrun::Registry& registry() { return labrun::fuzz::builtin_registry(); }

// One temporary file per fuzzing process, rewritten for every input; removed at exit.
std::string temp_file() {
  static const std::string path = [] {
    std::string dir = (std::filesystem::temp_directory_path() / "labrun-fuzz-results-XXXXXX").string();
    if (::mkdtemp(dir.data()) == nullptr) std::abort();
    static std::string remove_dir;
    remove_dir = dir;
    std::atexit([] { std::filesystem::remove_all(remove_dir); });
    return dir + "/input.jsonl";
  }();
  return path;
}

void write_file(const std::string& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  if (std::fclose(f) != 0) std::abort();
}

// Way 1: each line through the record layer.
void records(const std::string& bytes) {
  std::size_t start = 0;
  while (start < bytes.size()) {
    std::size_t end = bytes.find('\n', start);
    if (end == std::string::npos) end = bytes.size();
    const std::string line = bytes.substr(start, end - start);
    start = end + 1;
    if (line.empty()) continue;
    Json j;
    try {
      j = labrun::parse_record_line(line);
    } catch (const Json::parse_error&) {
      continue;
    } catch (const Json::out_of_range&) {  // a number beyond a double (406), e.g. 1e400
      continue;
    } catch (const std::runtime_error&) {  // nested deeper than kMaxJsonDepth
      continue;
    }
    // Never throws, whatever the record.
    const labrun::PointRecord tolerant = labrun::point_from_json_tolerant(j);
    (void)labrun::to_json(tolerant).dump();
    (void)tolerant.axis_number("n");
    (void)tolerant.axis_word("dtype");
    (void)labrun::device_state_of(tolerant, "before");
    try {
      const auto type = j.is_object() ? j.find("type") : j.end();
      if (j.is_object() && type != j.end() && *type == "header") {
        const labrun::RunHeader header = labrun::header_from_json(j);
        labrun::check_header(header);
        (void)header.experiment();
        (void)header.backend();
        (void)header.point_count();
        (void)header.calibration("copy", "bandwidth_Bps");
        (void)header.git_dirty();
        (void)labrun::to_json(header).dump();
      } else {
        const labrun::PointRecord point = labrun::point_from_json(j);
        (void)labrun::to_json(point).dump();
        labrun::check_point(point);
      }
    } catch (const labrun::ResultError&) {
    }
  }
}

// Way 2: the file through the loader, and what report and diff do with it.
void file(const std::uint8_t* data, std::size_t size) {
  const std::string path = temp_file();
  write_file(path, data, size);
  labrun::ResultSet set;
  try {
    set = labrun::load_results({path});
  } catch (const labrun::ResultError&) {
    return;
  }
  (void)labrun::analyze(set).dump();

  labrun::DiffOptions options;
  const auto diff = [&](const std::vector<labrun::Run>& base, const std::vector<labrun::Run>& current) {
    try {
      const labrun::DiffResult result = labrun::diff_results(base, current, options);
      (void)labrun::to_json(result).dump();
      (void)labrun::diff_table(result, true);
      (void)labrun::diff_markdown(result);
    } catch (const std::invalid_argument&) {  // no point in common
    }
  };
  diff(set.runs, set.runs);
  if (set.runs.size() >= 2) {
    const auto middle = set.runs.begin() + static_cast<std::ptrdiff_t>(set.runs.size() / 2);
    diff(std::vector<labrun::Run>(set.runs.begin(), middle), std::vector<labrun::Run>(middle, set.runs.end()));
  }
  options.normalize = true;
  diff(set.runs, set.runs);

  const labrun::ReportContext context(std::move(set), &registry());
  (void)labrun::plot_figures(context);
  (void)labrun::render_report(context, {path}, Json::array());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  records(std::string(reinterpret_cast<const char*>(data), size));
  file(data, size);
  return 0;
}
