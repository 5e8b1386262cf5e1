// The export formats (src/export/, docs/formats.md): each conversion from labrun's records, on records whose numbers
// are known, and the command's handling of bad input. compare.py reading a committed H200 run, and the documented
// schemas, are checked by tests/export/check_exports.sh.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <stdexcept>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "exporter.hpp"
#include "output_table.hpp"
#include "point_record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

TimeSummary summary(double median_s, double low_s, double high_s, std::int64_t count) {
  TimeSummary s;
  s.count = count;
  s.median_time_s = median_s;
  s.ci95_low_time_s = low_s;
  s.ci95_high_time_s = high_s;
  return s;
}

PointRecord ok_point(const std::string& key, double time_s) {
  PointRecord p;
  p.key = key;
  p.status = Status::ok;
  Timing t;
  t.method = TimingMethod::cuda_events;
  t.batch = 10;
  t.time_s = time_s;
  t.device = summary(time_s, 0.95 * time_s, 1.05 * time_s, 50);
  t.device->ci95_rel_halfwidth = 0.05;
  t.wall = summary(1.5 * time_s, 1.4 * time_s, 1.6 * time_s, 50);
  t.wall->ci95_rel_halfwidth = 0.07;
  p.timing = t;
  p.cost.bytes = 1e6;
  Interpretation i;
  i.achieved_bandwidth_Bps = 1e6 / time_s;
  p.interpretation = i;
  return p;
}

// A run of four points: ok; ok and pooled from three processes; incorrect; ok but the audit warned.
Run sample_run() {
  Run run;
  run.file = "a.jsonl";
  run.has_header = true;
  run.header.json = {{"type", "header"},
                     {"created_utc", "2026-12-06T10:00:00.000Z"},
                     {"environment",
                      {{"labrun", {{"version", "0.3.0"}, {"git_sha", "abc1234"}, {"build_type", "Release"}}},
                       {"host", {{"hostname", "gpu-7"}}},
                       {"device", {{"name", "NVIDIA H200"}}}}}};
  run.points.push_back(ok_point("e/a/n=1", 2e-6));
  PointRecord pooled = ok_point("e/b/n=1", 1.1e-6);
  pooled.timing->processes = ProcessStats{3, {1e-6, 1.2e-6, 1.1e-6}, 0.2, std::nullopt};
  run.points.push_back(pooled);
  PointRecord bad = ok_point("e/c/n=1", 1e-6);
  bad.status = Status::incorrect;
  bad.reason = "wrote past the end of y (first at element 4)";
  run.points.push_back(bad);
  PointRecord warned = ok_point("e/d/n=1", 1e-6);
  Integrity integrity;
  integrity.audit = IntegrityCheck{CheckState::warned, std::string("waits on the host in cudaStreamSynchronize")};
  warned.integrity = integrity;
  run.points.push_back(warned);
  return run;
}

const Json* find_named(const Json& benchmarks, const std::string& name, std::int64_t repetition = 0) {
  for (const Json& b : benchmarks)
    if (b["name"] == name && b.value("repetition_index", std::int64_t{0}) == repetition) return &b;
  return nullptr;
}

TEST(Export, TheTableListsEachFormatOnce) {
  std::vector<std::string> names;
  for (const labrun::OutputRow* row : labrun::outputs_of(labrun::Product::exported)) names.push_back(row->name);
  EXPECT_EQ(names, (std::vector<std::string>{"gbench", "bmf", "github-action-benchmark"}));
  EXPECT_EQ(labrun::find_output(labrun::Product::exported, "bmf")->name, "bmf");
  EXPECT_EQ(labrun::find_output(labrun::Product::exported, "csv"), nullptr);
  EXPECT_THROW(labrun::export_runs("csv", {}), std::invalid_argument);
}

// Every output is one row of one table: each product's names are distinct, and each row makes its Output.
TEST(Outputs, EveryRowMakesItsOutputAndNamesAreUniqueWithinAProduct) {
  std::set<std::pair<int, std::string>> seen;
  labrun::JsonlWriter* no_file = nullptr;
  for (const labrun::OutputRow& row : labrun::outputs()) {
    EXPECT_TRUE(seen.insert({static_cast<int>(row.product), row.name}).second) << row.name;
    if (row.product == labrun::Product::records) continue;  // needs a writer (args.file)
    labrun::OutputArgs args;
    args.file = no_file;
    EXPECT_NE(row.make(args), nullptr) << row.name;
  }
  EXPECT_EQ(labrun::output_names(labrun::Product::diff, true), "table (default), markdown, json or html");
  EXPECT_EQ(labrun::output_names(labrun::Product::history), "table, markdown or json");
  EXPECT_EQ(labrun::find_output(labrun::Product::history, "")->name, "table");
  std::vector<std::string> report;
  for (const labrun::OutputRow* row : labrun::outputs_of(labrun::Product::report)) report.push_back(row->name);
  EXPECT_EQ(report, (std::vector<std::string>{"points.csv", "ceilings.json", "plots.json", "*.png", "report.md",
                                              "index.html"}));
}

TEST(Export, OnlyOkUnflaggedTimedPointsLeaveAsNumbers) {
  const labrun::Run run = sample_run();
  EXPECT_FALSE(not_exportable(run.points[0]));
  EXPECT_EQ(*not_exportable(run.points[2]), "incorrect: wrote past the end of y (first at element 4)");
  EXPECT_EQ(*not_exportable(run.points[3]), "integrity: audit warned: waits on the host in cudaStreamSynchronize");
  PointRecord untimed = run.points[0];
  untimed.timing->time_s = std::nan("");
  EXPECT_EQ(*not_exportable(untimed), "no time");
}

// Google Benchmark JSON: real_time = time_s and cpu_time = the wall median, in ns; a pooled point one repetition per
// process and the mean, median (= time_s) and stddev aggregates; the others left out.
TEST(Export, GbenchMapsTimesRepetitionsAndErrors) {
  const Exported e = labrun::export_runs("gbench", {sample_run()});
  EXPECT_EQ(e.written, 2u);
  ASSERT_EQ(e.left_out.size(), 2u);
  EXPECT_EQ(e.left_out[0].key, "e/c/n=1");
  const Json& c = e.document["context"];
  EXPECT_EQ(c["date"], "2026-12-06T10:00:00.000Z");
  EXPECT_EQ(c["host_name"], "gpu-7");
  EXPECT_EQ(c["library_build_type"], "release");
  EXPECT_EQ(c["labrun_device"], "NVIDIA H200");
  const Json& b = e.document["benchmarks"];
  const Json* a = find_named(b, "e/a/n=1");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ((*a)["run_type"], "iteration");
  EXPECT_EQ((*a)["time_unit"], "ns");
  EXPECT_DOUBLE_EQ((*a)["real_time"].get<double>(), 2e-6 * 1e9);
  EXPECT_DOUBLE_EQ((*a)["cpu_time"].get<double>(), 3e-6 * 1e9);
  EXPECT_EQ((*a)["iterations"], 500);  // 50 samples of 10 iterations
  EXPECT_DOUBLE_EQ((*a)["bytes_per_second"].get<double>(), 1e6 / 2e-6);
  for (std::int64_t i = 0; i < 3; ++i) {
    const Json* r = find_named(b, "e/b/n=1", i);
    ASSERT_NE(r, nullptr) << i;
    EXPECT_EQ((*r)["repetitions"], 3);
    const double medians[] = {1e-6, 1.2e-6, 1.1e-6};
    EXPECT_DOUBLE_EQ((*r)["real_time"].get<double>(), medians[i] * 1e9);
    EXPECT_DOUBLE_EQ((*r)["cpu_time"].get<double>(), medians[i] * 1e9) << "no per-process wall: its own time";
    EXPECT_DOUBLE_EQ((*r)["bytes_per_second"].get<double>(), 1e6 / medians[i]);
  }
  const Json* mean = find_named(b, "e/b/n=1_mean");
  const Json* median = find_named(b, "e/b/n=1_median");
  const Json* stddev = find_named(b, "e/b/n=1_stddev");
  ASSERT_TRUE(mean && median && stddev);
  EXPECT_EQ((*median)["run_type"], "aggregate");
  EXPECT_EQ((*median)["run_name"], "e/b/n=1");
  EXPECT_EQ((*median)["aggregate_name"], "median");
  EXPECT_NEAR((*mean)["real_time"].get<double>(), 1100.0, 1e-9);
  EXPECT_DOUBLE_EQ((*median)["real_time"].get<double>(), 1.1e-6 * 1e9);
  EXPECT_NEAR((*stddev)["real_time"].get<double>(), 100.0, 1e-9);  // sample stddev of 1000, 1200, 1100 ns
  EXPECT_FALSE(stddev->contains("bytes_per_second"));
  EXPECT_DOUBLE_EQ((*median)["cpu_time"].get<double>(), 1.5 * 1.1e-6 * 1e9) << "the pooled wall median";
  EXPECT_EQ(c["caches"], Json::array()) << "Bencher's cpp_google adapter requires it";

  // --one-per-point: the pooled point as its pooled time alone.
  ExportOptions one;
  one.one_per_point = true;
  const Json single = labrun::export_runs("gbench", {sample_run()}, one).document["benchmarks"];
  EXPECT_EQ(single.size(), 2u);
  EXPECT_EQ(find_named(single, "e/b/n=1_median"), nullptr);
  EXPECT_DOUBLE_EQ((*find_named(single, "e/b/n=1"))["real_time"].get<double>(), 1.1e-6 * 1e9);
  EXPECT_EQ(find_named(b, "e/c/n=1"), nullptr) << "left out, not an error entry (compare.py reads its real_time)";
  EXPECT_EQ(find_named(b, "e/d/n=1"), nullptr);
}

// BMF: latency in ns with the 95% interval as its bounds; bandwidth in B/s, bounded by the bytes over the interval.
TEST(Export, BmfCarriesTheIntervalAsBounds) {
  const Exported e = labrun::export_runs("bmf", {sample_run()});
  EXPECT_EQ(e.written, 2u);
  EXPECT_EQ(e.left_out.size(), 2u);
  EXPECT_FALSE(e.document.contains("e/c/n=1"));
  const Json& latency = e.document["e/a/n=1"]["latency"];
  EXPECT_DOUBLE_EQ(latency["value"].get<double>(), 2e-6 * 1e9);
  EXPECT_DOUBLE_EQ(latency["lower_value"].get<double>(), 0.95 * 2e-6 * 1e9);
  EXPECT_DOUBLE_EQ(latency["upper_value"].get<double>(), 1.05 * 2e-6 * 1e9);
  const Json& bw = e.document["e/a/n=1"]["bandwidth"];
  EXPECT_DOUBLE_EQ(bw["value"].get<double>(), 1e6 / 2e-6);
  EXPECT_NEAR(bw["lower_value"].get<double>(), 1e6 / (1.05 * 2e-6), 1e-3);
  EXPECT_NEAR(bw["upper_value"].get<double>(), 1e6 / (0.95 * 2e-6), 1e-3);
}

TEST(Export, GithubActionBenchmarkIsCustomSmallerIsBetter) {
  const Exported e = labrun::export_runs("github-action-benchmark", {sample_run()});
  ASSERT_TRUE(e.document.is_array());
  ASSERT_EQ(e.document.size(), 2u);
  const Json& a = e.document[0];
  EXPECT_EQ(a["name"], "e/a/n=1");
  EXPECT_EQ(a["unit"], "ns");
  EXPECT_DOUBLE_EQ(a["value"].get<double>(), 2000.0);
  EXPECT_EQ(a["range"], "± 100");  // half of (2100 - 1900) ns
  EXPECT_EQ(a["extra"], "cuda_events+synchronized_wall; 50 samples; NVIDIA H200; labrun@abc1234 labrun 0.3.0");
  EXPECT_EQ(
      e.document[1]["extra"],
      "cuda_events+synchronized_wall; 50 samples pooled from 3 processes; NVIDIA H200; labrun@abc1234 labrun 0.3.0");
}

// The command: a result file of a host sweep, to a file that is then refused without --force; bad input.
TEST(Export, TheCommandWritesWholeAndRefusesBadInput) {
  const test::TempDir dir;
  const std::string run = test::schema1_masking_run(dir);
  if (run.empty()) GTEST_SKIP() << "gzip unavailable";
  std::ostringstream out, err;
  EXPECT_EQ(cmd_export("gbench", {run}, "-", false, {}, out, err), kExitOk) << err.str();
  const Json doc = Json::parse(out.str());
  EXPECT_TRUE(doc["benchmarks"].is_array());
  EXPECT_NE(err.str().find(" as gbench"), std::string::npos) << err.str();
  const std::string target = dir.file("a.json");
  std::ostringstream out2, err2, out3, err3, out4, err4;
  EXPECT_EQ(cmd_export("bmf", {run}, target, false, {}, out2, err2), kExitOk) << err2.str();
  EXPECT_EQ(cmd_export("bmf", {run}, target, false, {}, out3, err3), kExitOutput);
  EXPECT_NE(err3.str().find("exists"), std::string::npos) << err3.str();
  EXPECT_EQ(cmd_export("bmf", {run}, target, true, {}, out3, err3), kExitOk);
  EXPECT_EQ(cmd_export("csv", {run}, "-", false, {}, out4, err4), kExitUsage);
  EXPECT_NE(err4.str().find("unknown format 'csv' (expected gbench, bmf, github-action-benchmark)"), std::string::npos);
  std::ostringstream out5, err5;
  EXPECT_EQ(cmd_export("gbench", {run, run}, "-", false, {}, out5, err5), kExitUsage) << "one key in two runs";
  EXPECT_NE(err5.str().find("export one run at a time"), std::string::npos) << err5.str();
  std::ostringstream out6, err6;
  EXPECT_EQ(cmd_export("bmf", {run}, run, true, {}, out6, err6), kExitUsage) << "the output is the input";
  EXPECT_NE(err6.str().find("never overwrites its input"), std::string::npos) << err6.str();
  std::ostringstream out7, err7;
  EXPECT_EQ(cmd_export("bmf", {run}, "", false, {}, out7, err7), kExitUsage);
}

// What is not a measurement never leaves: a profiler-mode, unsynchronized or delayed run, a point whose check failed,
// a time that is no finite positive number of nanoseconds; and an interval is written only where it is one.
TEST(Export, RunsAndPointsThatAreNoMeasurementStayOut) {
  labrun::Run run = sample_run();
  EXPECT_FALSE(run_not_exportable(run.header));
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, Json>>{{"profile", true}, {"timing", "unsynchronized"}, {"delay_s", 2e-5}}) {
    labrun::Run r = sample_run();
    r.header.json["lab"] = {{key, value}};
    ASSERT_TRUE(run_not_exportable(r.header)) << key;
    for (const labrun::OutputRow* row : labrun::outputs_of(labrun::Product::exported)) {
      const Exported x = labrun::export_runs(row->name, {r});
      EXPECT_EQ(x.written, 0u) << row->name << " " << key;
      EXPECT_EQ(x.left_out.size(), 4u);
    }
  }
  PointRecord failed = ok_point("e/f/n=1", 1e-6);
  CheckResult wrong;
  wrong.passed = false;
  failed.correctness = Correctness{};
  failed.correctness->outcome.comparisons.push_back(wrong);
  EXPECT_EQ(*not_exportable(failed), "correctness: the check did not pass");
  PointRecord huge = ok_point("e/g/n=1", 1e300);
  EXPECT_EQ(*not_exportable(huge), "no time") << "1e300 s is no finite number of ns";
  PointRecord zero = ok_point("e/h/n=1", 0.0);
  EXPECT_EQ(*not_exportable(zero), "no time");

  PointRecord few = ok_point("e/i/n=1", 1e-6);
  few.timing->device->ci95_rel_halfwidth = std::numeric_limits<double>::infinity();  // fewer than 6 samples
  EXPECT_FALSE(time_interval(few));
  PointRecord inverted = ok_point("e/j/n=1", 1e-6);
  inverted.timing->device->ci95_low_time_s = 2e-6;
  EXPECT_FALSE(time_interval(inverted)) << "an interval that does not hold time_s";
  PointRecord other = ok_point("e/k/n=1", 1e-6);
  other.timing->device.reset();  // time_s is not the wall median either: no interval of another summary
  EXPECT_FALSE(time_interval(other));
  const Exported bmf = labrun::export_runs("bmf", {labrun::Run{"x", run.header, true, {few}, {}}});
  EXPECT_FALSE(bmf.document["e/i/n=1"]["latency"].contains("lower_value"));
  const Exported gab = labrun::export_runs("github-action-benchmark", {labrun::Run{"x", run.header, true, {few}, {}}});
  EXPECT_FALSE(gab.document[0].contains("range"));

  PointRecord nan_process = ok_point("e/l/n=1", 1e-6);
  nan_process.timing->processes = ProcessStats{3, {1e-6, std::nan(""), 1e-6}, 0.1, std::nullopt};
  EXPECT_TRUE(process_medians(nan_process).empty()) << "written as one entry, not with a null repetition";
  const Json b = labrun::export_runs("gbench", {labrun::Run{"x", run.header, true, {nan_process}, {}}}).document;
  ASSERT_EQ(b["benchmarks"].size(), 1u);
  EXPECT_DOUBLE_EQ(b["benchmarks"][0]["real_time"].get<double>(), 1000.0);
}

// No point to export: exit 1, nothing written, rather than an empty document a dashboard rejects later.
TEST(Export, NothingToExportIsAnErrorAndWritesNothing) {
  const test::TempDir dir;
  const std::string path = dir.file("bad.jsonl");
  {
    labrun::Run run = sample_run();
    std::ofstream f(path);
    Json header = run.header.json;
    header["schema_version"] = 1;
    f << header.dump() << "\n";
  }
  std::ostringstream out, err;
  const std::string target = dir.file("out.json");
  EXPECT_EQ(cmd_export("bmf", {path}, target, false, {}, out, err), kExitPointsFailed) << err.str();
  EXPECT_NE(err.str().find("no point to export"), std::string::npos) << err.str();
  EXPECT_FALSE(std::filesystem::exists(target));
}

}  // namespace
}  // namespace labrun
