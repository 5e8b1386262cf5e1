// `labrun export gbench`: Google Benchmark's JSON output (benchmark/src/json_reporter.cc, v1.7), as its
// tools/compare.py, github-action-benchmark (`tool: 'googlecpp'`) and Bencher's `cpp_google` adapter read it.
// Mapping (docs/formats.md): one benchmark per ok point named by its key; real_time = time_s (the time `labrun diff`
// compares), cpu_time = the wall time per iteration (timing.wall's median), both in time_unit "ns"; a pooled point
// (lab.processes) is one repetition per process (real_time = that process's median) and the aggregates mean and
// stddev over them, and median = the pooled time_s. A point that may not leave as a number is left out.
#include <cmath>
#include <string>

#include "exporter.hpp"

namespace labrun {

namespace {

// The run's context: Google Benchmark's keys where labrun has them, then labrun's own as strings (its custom
// context, benchmark::AddCustomContext).
Json context_of(const std::vector<Run>& runs) {
  Json c = Json::object();
  const RunHeader h = runs.empty() ? RunHeader{} : runs.front().header;
  c["date"] = h.created_utc();
  c["host_name"] = h.host_name();
  c["executable"] = "labrun";
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
           std::int64_t repetitions, std::int64_t repetition_index) {
  Json b = Json::object();
  b["name"] = name;
  b["family_index"] = family;
  b["per_family_instance_index"] = 0;
  b["run_name"] = run_name;
  b["run_type"] = run_type;
  b["repetitions"] = repetitions;
  b["repetition_index"] = repetition_index;
  b["threads"] = 1;
  return b;
}

void times(Json& b, std::int64_t iterations, double real_s, double cpu_s) {
  b["iterations"] = iterations;
  b["real_time"] = to_ns(real_s);
  b["cpu_time"] = to_ns(cpu_s);
  b["time_unit"] = "ns";
}

class GbenchExporter final : public Exporter {
 public:
  std::string name() const override { return "gbench"; }
  std::string summary() const override {
    return "Google Benchmark JSON (compare.py, github-action-benchmark tool 'googlecpp', Bencher cpp_google)";
  }

  Exported write(const std::vector<Run>& runs) const override {
    Exported out;
    Json benchmarks = Json::array();
    std::size_t family = 0;
    for (const Run& run : runs)
      for (const PointRecord& p : run.points) {
        // Left out, not written as Google Benchmark's error entry: compare.py (v1.7) reads real_time of every
        // entry for its geometric mean and fails on one without it, and a zero time would be a number.
        if (const auto why = not_exportable(p)) {
          out.left_out.push_back({p.key, *why});
          continue;
        }
        write_point(p, family++, benchmarks);
        ++out.written;
      }
    out.document = Json::object();
    out.document["context"] = context_of(runs);
    out.document["benchmarks"] = benchmarks;
    return out;
  }

 private:
  static void write_point(const PointRecord& p, std::size_t family, Json& benchmarks) {
    const Timing& t = *p.timing;
    const double wall_s = t.wall ? t.wall->median_time_s : t.time_s;
    const std::int64_t samples = primary_summary(p) ? primary_summary(p)->count : 0;
    const std::int64_t iterations = std::max<std::int64_t>(1, samples * std::max<std::int64_t>(1, t.batch));
    const bool pooled = t.processes && t.processes->count > 1 &&
                        t.processes->time_s.size() == static_cast<std::size_t>(t.processes->count);
    if (!pooled) {
      Json b = entry(p.key, p.key, family, "iteration", 1, 0);
      times(b, iterations, t.time_s, wall_s);
      bytes_per_second(b, p, t.time_s);
      benchmarks.push_back(b);
      return;
    }
    const std::vector<double>& medians = t.processes->time_s;
    const auto n = static_cast<std::int64_t>(medians.size());
    for (std::int64_t i = 0; i < n; ++i) {
      Json b = entry(p.key, p.key, family, "iteration", n, i);
      times(b, std::max<std::int64_t>(1, iterations / n), medians[static_cast<std::size_t>(i)], wall_s);
      benchmarks.push_back(b);
    }
    double mean = 0;
    for (double m : medians) mean += m;
    mean /= static_cast<double>(n);
    double squares = 0;
    for (double m : medians) squares += (m - mean) * (m - mean);
    const double stddev = std::sqrt(squares / static_cast<double>(n - 1));  // as Google Benchmark: n - 1
    const std::pair<const char*, double> aggregates[] = {{"mean", mean}, {"median", t.time_s}, {"stddev", stddev}};
    for (const auto& [aggregate, value] : aggregates) {
      Json b = entry(p.key + "_" + aggregate, p.key, family, "aggregate", n, 0);
      b.erase("repetition_index");  // aggregates have none
      b["aggregate_name"] = aggregate;
      b["aggregate_unit"] = "time";
      times(b, n, value, std::string(aggregate) == "stddev" ? 0.0 : wall_s);
      if (std::string(aggregate) == "median") bytes_per_second(b, p, t.time_s);
      benchmarks.push_back(b);
    }
  }

  // Google Benchmark's counter for SetBytesProcessed: the cost model's bytes over `time_s`, where it knows them.
  static void bytes_per_second(Json& b, const PointRecord& p, double time_s) {
    if (std::isfinite(p.cost.bytes) && time_s > 0) b["bytes_per_second"] = p.cost.bytes / time_s;
  }
};

}  // namespace

std::unique_ptr<Exporter> make_gbench_exporter() { return std::make_unique<GbenchExporter>(); }

}  // namespace labrun
