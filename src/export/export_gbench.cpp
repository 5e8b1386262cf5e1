// `labrun export gbench`: Google Benchmark's JSON output (benchmark/src/json_reporter.cc, v1.7), as its
// tools/compare.py, github-action-benchmark (`tool: 'googlecpp'`) and Bencher's `cpp_google` adapter read it.
// Mapping (docs/formats.md): one benchmark per ok point named by its key; real_time = time_s (the time `labrun diff`
// compares), cpu_time = the wall time per iteration (timing.wall's median), both in time_unit "ns"; a pooled point
// (lab.processes) is one repetition per process (real_time = that process's median) and the aggregates mean and
// stddev over them, and median = the pooled time_s (with --one-per-point, the pooled time alone). A point that may
// not leave as a number is left out.
#include <algorithm>
#include <cmath>
#include <string>

#include "exporter.hpp"

namespace labrun {

namespace {

// The run's context: Google Benchmark's keys where labrun has them (`caches` and `load_avg` empty: Bencher's
// cpp_google adapter requires `caches`), then labrun's own as strings (its custom context,
// benchmark::AddCustomContext).
Json context_of(const std::vector<Run>& runs) {
  Json c = Json::object();
  const RunHeader h = runs.empty() ? RunHeader{} : runs.front().header;
  c["date"] = h.created_utc();
  c["host_name"] = h.host_name();
  c["executable"] = "labrun";
  c["caches"] = Json::array();
  c["load_avg"] = Json::array();
  c["library_build_type"] = h.build_type() == "Release" ? "release" : "debug";
  c["labrun_version"] = h.labrun_version();
  c["labrun_code"] = h.code_key();
  c["labrun_config"] = h.config_path();
  c["labrun_device"] = h.device_name();
  c["labrun_backend"] = h.backend();
  return c;
}

// The keys every benchmark entry of Google Benchmark's JSON starts with.
Json entry(const std::string& name, const std::string& run_name, std::size_t family, const char* run_type,
           std::int64_t repetitions) {
  Json b = Json::object();
  b["name"] = name;
  b["family_index"] = family;
  b["per_family_instance_index"] = 0;
  b["run_name"] = run_name;
  b["run_type"] = run_type;
  b["repetitions"] = repetitions;
  return b;
}

// iterations, real_time, cpu_time and time_unit, and Google Benchmark's SetBytesProcessed counter where the cost
// model knows the bytes: cost.bytes / real_s.
void times(Json& b, std::int64_t iterations, double real_s, double cpu_s, const PointRecord& p) {
  b["threads"] = 1;
  b["iterations"] = iterations;
  b["real_time"] = to_ns(real_s);
  b["cpu_time"] = to_ns(cpu_s);
  b["time_unit"] = "ns";
  if (std::isfinite(p.cost.bytes) && p.cost.bytes > 0) b["bytes_per_second"] = p.cost.bytes / real_s;
}

class GbenchOutput final : public Output {
 public:
  explicit GbenchOutput(ExportOptions options) : options_(options) {}

  void runs(const std::vector<Run>& runs, Exported& out) override {
    Json benchmarks = Json::array();
    std::size_t family = 0;
    // A point that may not leave is left out, not written as Google Benchmark's error entry: compare.py (v1.7) reads
    // real_time of every entry for its geometric mean and fails on one without it, and a zero time would be a number.
    for_each_exportable(runs, out, [&](const PointRecord& p, const RunHeader&) {
      write_point(p, family++, options_, benchmarks);
    });
    out.document = Json::object();
    out.document["context"] = context_of(runs);
    out.document["benchmarks"] = benchmarks;
  }

 private:
  static void write_point(const PointRecord& p, std::size_t family, const ExportOptions& options, Json& benchmarks) {
    const Timing& t = *p.timing;
    const double wall_s = t.wall && std::isfinite(t.wall->median_time_s) ? t.wall->median_time_s : t.time_s;
    const std::int64_t iterations = std::max<std::int64_t>(1, sample_count(p) * std::max<std::int64_t>(1, t.batch));
    const std::vector<double> medians = options.one_per_point ? std::vector<double>{} : process_medians(p);
    if (medians.empty()) {
      Json b = entry(p.key, p.key, family, "iteration", 1);
      b["repetition_index"] = 0;
      times(b, iterations, t.time_s, wall_s, p);
      benchmarks.push_back(b);
      return;
    }
    // One repetition per process. labrun keeps neither a wall median nor an iteration count per process: a
    // repetition's cpu_time repeats its real_time (five equal cpu_times would read to compare.py's U test as a
    // certain change), and its iterations are the point's spread evenly over the processes.
    const auto n = static_cast<std::int64_t>(medians.size());
    for (std::int64_t i = 0; i < n; ++i) {
      const double m = medians[static_cast<std::size_t>(i)];
      Json b = entry(p.key, p.key, family, "iteration", n);
      b["repetition_index"] = i;
      times(b, std::max<std::int64_t>(1, iterations / n), m, m, p);
      benchmarks.push_back(b);
    }
    double mean = 0;
    for (double m : medians) mean += m;
    mean /= static_cast<double>(n);
    double squares = 0;
    for (double m : medians) squares += (m - mean) * (m - mean);
    const double stddev = std::sqrt(squares / static_cast<double>(n - 1));  // as Google Benchmark: n - 1
    for (const char* aggregate : {"mean", "median", "stddev"}) {
      const std::string a = aggregate;
      Json b = entry(p.key + "_" + a, p.key, family, "aggregate", n);
      b["aggregate_name"] = a;
      b["aggregate_unit"] = "time";
      if (a == "mean") times(b, n, mean, mean, p);
      if (a == "median") times(b, n, t.time_s, wall_s, p);  // labrun's pooled median, the number diff compares
      if (a == "stddev") {
        times(b, n, stddev, stddev, p);
        b.erase("bytes_per_second");  // a spread is no rate
      }
      benchmarks.push_back(b);
    }
  }

  ExportOptions options_;
};

}  // namespace

std::unique_ptr<Output> make_gbench_output(const ExportOptions& options) {
  return std::make_unique<GbenchOutput>(options);
}

}  // namespace labrun
