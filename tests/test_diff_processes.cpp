// The process as the unit of replication (docs/diff.md "Two levels: processes within runs"): synthetic diffs of
// 1000 points pooled from 5 processes per side, each process at its own level (a lognormal spread between
// processes, as measured on the H200: 1-5%) with 1% noise within it. Verdicts must rest on the processes: an A/A
// with a 5% spread between process levels gives no verdict; a +10% change with a 1% spread is slower almost
// everywhere; a +8% change hidden in a 5% spread is never called the same.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "diff.hpp"
#include "merge.hpp"
#include "point_record.hpp"
#include "stats.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

constexpr std::size_t kPoints = 1000, kProcesses = 5, kSamplesPerProcess = 20;

/// One side of one point: kProcesses processes, process k at level `median` * exp(N(0, between)), each with
/// kSamplesPerProcess samples lognormal around its level with log-sd `within`; the record pools them as
/// processes.cpp does (the samples concatenated, one median per process in timing.processes).
PointRecord pooled_point(std::mt19937_64& rng, const std::string& id, double median, double between, double within) {
  std::normal_distribution<double> z(0.0, 1.0);
  PointRecord p = test::point_record(id, "exp/v/i=" + id, Status::ok);
  p.axes = Json{{"i", id}};
  p.backend = "cuda:0";
  Timing& t = p.timing.emplace();
  ProcessStats& ps = t.processes.emplace();
  ps.count = kProcesses;
  for (std::size_t k = 0; k < kProcesses; ++k) {
    const double level = median * std::exp(between * z(rng));
    std::vector<double> samples(kSamplesPerProcess);
    for (double& s : samples) s = level * std::exp(within * z(rng));
    t.device_samples_s.insert(t.device_samples_s.end(), samples.begin(), samples.end());
    std::sort(samples.begin(), samples.end());
    ps.time_s.push_back(quantile_sorted(samples, 0.5));
  }
  t.time_s = ps.time_s.front();
  return p;
}

/// A run of kPoints pooled points with true ratio `ratio` (the new side's level over the base's, 1 for an A/A).
Run side(std::mt19937_64& rng, double ratio, double between) {
  Run run{"synthetic.jsonl", header_from_json(Json{{"type", "header"}, {"schema_version", 1}}), true, {}, {}};
  for (std::size_t i = 0; i < kPoints; ++i)
    run.points.push_back(pooled_point(rng, "p" + std::to_string(i), 1e-4 * ratio, between, 0.01));
  return run;
}

DiffResult synthetic_diff(std::uint64_t seed, double ratio, double between) {
  std::mt19937_64 rng(seed);
  const Run base = side(rng, 1.0, between), current = side(rng, ratio, between);
  return diff_results({base}, {current}, DiffOptions{});
}

TEST(DiffProcesses, AaWithFivePercentSpreadBetweenProcessesGivesNoVerdict) {
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    const DiffResult d = synthetic_diff(seed, 1.0, 0.05);
    EXPECT_EQ(d.summary.slower + d.summary.faster, 0u) << "seed " << seed;
    EXPECT_FALSE(d.regression) << "seed " << seed;
    EXPECT_EQ(d.summary.compared, kPoints);
    // The measured noise floor sees the spread it was given (sd of log process medians ~ 5%).
    EXPECT_NEAR(d.noise.median_rel, 0.05, 0.01) << "seed " << seed;
    EXPECT_EQ(d.noise.measured_points, 2 * kPoints);
  }
}

TEST(DiffProcesses, TenPercentChangeWithOnePercentSpreadIsSlowerAlmostEverywhere) {
  const DiffResult d = synthetic_diff(4, 1.10, 0.01);
  EXPECT_GE(d.summary.slower, kPoints * 95 / 100);
  EXPECT_EQ(d.summary.faster + d.summary.same, 0u);
  EXPECT_TRUE(d.regression);
  for (const DiffPoint& row : d.points) {
    ASSERT_TRUE(row.process_p_adjusted.has_value());
    ASSERT_TRUE(row.process_interval.has_value());
    EXPECT_EQ(row.gate, Gate::processes);
  }
}

TEST(DiffProcesses, EightPercentChangeInFivePercentSpreadIsNeverSame) {
  const DiffResult d = synthetic_diff(5, 1.08, 0.05);
  EXPECT_EQ(d.summary.same, 0u);
  EXPECT_EQ(d.summary.faster, 0u);
  // The rows that are not slower say what would decide them.
  std::size_t told = 0;
  for (const DiffPoint& row : d.points)
    if (row.verdict == Verdict::inconclusive && row.reason) told += !row.reason->empty();
  EXPECT_EQ(told, d.summary.inconclusive);
}

// An A/A with a small spread is mostly `same`, and a row of a same-looking point whose processes are spread says
// how many processes per side would decide it.
TEST(DiffProcesses, SameNeedsTheProcessLevelIntervalInsideTheBounds) {
  const DiffResult tight = synthetic_diff(6, 1.0, 0.005);
  EXPECT_GE(tight.summary.same, kPoints * 95 / 100);
  const DiffResult loose = synthetic_diff(7, 1.0, 0.03);
  std::size_t asks_for_processes = 0;
  for (const DiffPoint& row : loose.points) {
    if (row.verdict != Verdict::same) continue;
    EXPECT_GE(row.process_interval->ci_low, 1 / 1.05);
    EXPECT_LE(row.process_interval->ci_high, 1.05);
  }
  for (const DiffPoint& row : loose.points)
    asks_for_processes += row.reason && row.reason->find("processes per side") != std::string::npos;
  EXPECT_GT(asks_for_processes, 0u);
  EXPECT_EQ(loose.summary.slower + loose.summary.faster, 0u);
}

// A pooled run of `points` launch-bound eager points whose processes' GPU-side launch times are drawn (`z` over
// `rng`, one stream for a test's runs) about `launch_s` (log-normal, `sd`) and written in the header's per-process
// calibrations; point i's median is `median_s(i)`, and each process's level (its median and samples) moves with its
// launch time against `reference_s`. `uuid`: the header's environment.device.uuid ("" for none).
labrun::Run launch_bound_run(std::mt19937_64& rng, std::normal_distribution<double>& z, const std::string& file,
                             double launch_s, double sd, double reference_s, const std::string& uuid,
                             std::size_t points, const std::function<double(std::size_t)>& median_s) {
  std::vector<double> launch(kProcesses);
  Json runs = Json::array();
  for (std::size_t k = 0; k < kProcesses; ++k) {
    launch[k] = launch_s * std::exp(sd * z(rng));
    runs.push_back({{"index", k + 1}, {"calibration", {{"launch", {{"eager_queued_time_s", launch[k]}}}}}});
  }
  Json header{{"type", "header"}, {"schema_version", 1}};
  if (!uuid.empty()) header["environment"] = {{"device", {{"uuid", uuid}}}};
  header["processes"] = {{"count", kProcesses}, {"runs", runs}};
  labrun::Run r{file, header_from_json(header), true, {}, {}};
  for (std::size_t i = 0; i < points; ++i) {
    PointRecord p = pooled_point(rng, "p" + std::to_string(i), median_s(i), 0.0, 0.01);
    p.axes["mode"] = "eager";
    p.interpretation.emplace().bound = "launch";
    for (std::size_t k = 0; k < kProcesses; ++k) {  // process k's level moves with its launch time
      const double f = launch[k] / reference_s;
      p.timing->processes->time_s[k] *= f;
      for (std::size_t s = 0; s < kSamplesPerProcess; ++s) p.timing->device_samples_s[k * kSamplesPerProcess + s] *= f;
    }
    r.points.push_back(std::move(p));
  }
  return r;
}

// The machine taken out (docs/diff.md "Bound-normalised"): launch-bound points whose process levels follow each
// process's calibrated GPU-side launch time (spread 6%, as the H200's 1.26-1.42 us) are too spread to call `same`
// raw, and `same` once each median is divided by its process's launch time; a true +10% still holds normalised.
TEST(DiffProcesses, LaunchBoundPointsAreComparedWithEachProcesssLaunchTimeTakenOut) {
  std::mt19937_64 rng(8);
  std::normal_distribution<double> z(0.0, 1.0);
  auto run = [&](double ratio) {
    return launch_bound_run(rng, z, "synthetic.jsonl", 1.3e-6, 0.06, 1.3e-6, "", 200,
                            [ratio](std::size_t) { return 1e-5 * ratio; });
  };
  const labrun::Run base = run(1.0), same = run(1.0), slower = run(1.10);
  const DiffResult aa = diff_results({base}, {same}, DiffOptions{});
  EXPECT_EQ(aa.summary.slower + aa.summary.faster, 0u);
  EXPECT_GE(aa.summary.same, 190u);
  std::size_t by_normalized = 0;
  for (const DiffPoint& row : aa.points) {
    ASSERT_TRUE(row.normalized.has_value());
    EXPECT_EQ(row.normalized_by, "launch.eager_queued_time_s");
    by_normalized += row.gate == Gate::normalized;
  }
  EXPECT_GT(by_normalized, 100u) << "the raw process intervals alone should not have sufficed";
  const DiffResult change = diff_results({base}, {slower}, DiffOptions{});
  EXPECT_GE(change.summary.slower, 190u);
  EXPECT_EQ(change.summary.same + change.summary.faster, 0u);
}

// Case C24, launch-bound points across the GPUs of a fleet: each side on its own GPU, whose GPU-side launch time sits
// 8% apart (1.28 against 1.38 us, each process +-3% about its GPU's level: the sides' ranges do not overlap), and
// every launch-bound point's process levels follow its process's launch time. Raw, every point reads 8% slower; with
// each process's calibration taken out, none is slower or faster and at least 95% are `same`; a real +10% on a tenth of
// the points (one variant of a sweep) is still `slower` on the other GPU, and nothing else is.
TEST(DiffProcesses, C24_LaunchBoundPointsAcrossGpusAreJudgedWithEachGpusLaunchTimeTakenOut) {
  std::mt19937_64 rng(24);
  std::normal_distribution<double> z(0.0, 1.0);
  constexpr std::size_t kFleetPoints = 200;
  auto run = [&](double gpu_launch_s, double changed_ratio) {
    return launch_bound_run(rng, z, "fleet.jsonl", gpu_launch_s, 0.03, 1.28e-6,
                            gpu_launch_s < 1.3e-6 ? "GPU-a" : "GPU-b", kFleetPoints, [changed_ratio](std::size_t i) {
                              return 1e-5 * (1 + 0.01 * static_cast<double>(i)) * (i % 10 == 0 ? changed_ratio : 1.0);
                            });
  };
  const labrun::Run gpu_a = run(1.28e-6, 1.0), gpu_b = run(1.38e-6, 1.0), gpu_b_changed = run(1.38e-6, 1.10);
  for (const auto& [base, current] : {std::pair{&gpu_a, &gpu_b}, std::pair{&gpu_b, &gpu_a}}) {
    const DiffResult aa = diff_results({*base}, {*current}, DiffOptions{});
    EXPECT_EQ(aa.summary.slower + aa.summary.faster, 0u);
    EXPECT_GE(aa.summary.same, kFleetPoints * 95 / 100);
  }
  // Power both ways: +10% on a GPU whose launches are 8% slower (raw +19%), and on one whose launches are 8% faster
  // (raw +2%, which the raw medians alone would call `same`).
  const labrun::Run gpu_a_changed = run(1.28e-6, 1.10);
  for (const auto& [base, current] : {std::pair{&gpu_a, &gpu_b_changed}, std::pair{&gpu_b, &gpu_a_changed}}) {
    const DiffResult change = diff_results({*base}, {*current}, DiffOptions{});
    for (const DiffPoint& row : change.points) {
      const bool changed = std::stoul(row.id.substr(1)) % 10 == 0;
      EXPECT_EQ(row.verdict == Verdict::slower, changed) << row.id << " " << to_string(row.verdict);
      EXPECT_TRUE(row.across_gpus);
      EXPECT_EQ(row.gate, Gate::normalized);
    }
  }
  // The same GPU on both sides: the raw comparison as before (not across GPUs).
  EXPECT_FALSE(diff_results({gpu_a}, {gpu_a}, DiffOptions{}).points.front().across_gpus);
}

// A cluster run merged from shards on two nodes (docs/diff.md "Across hosts"; merge keeps each shard's host and
// calibration): each point is taken with its own shard's per-process calibrations, so the merged diff gives what
// the shard files give when each point keeps its own header, and every point is normalised; before, a merge kept
// only the first shard's processes and no point was.
TEST(DiffProcesses, MergedShardsAreAdjustedByTheirOwnShardsNumbers) {
  std::mt19937_64 rng(12);
  std::normal_distribution<double> z(0.0, 1.0);
  // One shard on a node whose GPU-side launch time is `node_launch`; its points' levels follow each process's.
  auto shard = [&](int index, double node_launch, double ratio) {
    std::vector<double> launch(kProcesses);
    Json runs = Json::array();
    for (std::size_t k = 0; k < kProcesses; ++k) {
      launch[k] = node_launch * std::exp(0.03 * z(rng));
      runs.push_back({{"index", k + 1},
                      {"calibration", {{"launch", {{"eager_queued_time_s", launch[k]}}}}},
                      {"host", {{"cpu_model", "node" + std::to_string(index)}}}});
    }
    labrun::Run r{"s" + std::to_string(index) + ".jsonl",
                  header_from_json(Json{
                      {"type", "header"},
                      {"schema_version", 1},
                      {"config", {{"sha256", "abc"}}},
                      {"lab", Json::object()},
                      {"environment",
                       {{"labrun", {{"git_sha", "aaa"}}}, {"host", {{"cpu_model", "node" + std::to_string(index)}}}}},
                      {"calibration", {{"launch", {{"eager_queued_time_s", node_launch}}}}},
                      {"shard", {{"index", index}, {"count", 2}}},
                      {"point_count", 50},
                      {"processes", {{"count", kProcesses}, {"runs", runs}}}}),
                  true,
                  {},
                  {}};
    for (std::size_t i = 0; i < 50; ++i) {
      PointRecord p = pooled_point(rng, "s" + std::to_string(index) + "p" + std::to_string(i), 1e-5 * ratio, 0.0, 0.01);
      p.axes["mode"] = "eager";
      p.interpretation.emplace().bound = "launch";
      for (std::size_t k = 0; k < kProcesses; ++k) {
        const double f = launch[k] / 1.3e-6;
        p.timing->processes->time_s[k] *= f;
        for (std::size_t s = 0; s < kSamplesPerProcess; ++s)
          p.timing->device_samples_s[k * kSamplesPerProcess + s] *= f;
      }
      r.points.push_back(std::move(p));
    }
    return r;
  };
  // Base: shard 1 on a fast node, shard 2 on a slow one; new: the other way round. No code change.
  const labrun::Run b1 = shard(1, 1.3e-6, 1.0), b2 = shard(2, 1.6e-6, 1.0), n1 = shard(1, 1.6e-6, 1.0),
                    n2 = shard(2, 1.3e-6, 1.0);
  const DiffResult each = diff_results({b1, b2}, {n1, n2}, DiffOptions{});
  const labrun::Run merged_base = merge_shards({b1, b2}), merged_new = merge_shards({n1, n2});
  ASSERT_EQ(merged_base.header.json["shards"][1]["processes"]["count"], kProcesses);
  ASSERT_EQ(merged_base.header.json["shards"][1]["host"]["cpu_model"], "node2");
  const DiffResult merged = diff_results({merged_base}, {merged_new}, DiffOptions{});
  ASSERT_EQ(merged.points.size(), each.points.size());
  for (std::size_t i = 0; i < merged.points.size(); ++i) {
    const DiffPoint& m = merged.points[i];
    const DiffPoint& e = each.points[i];
    EXPECT_EQ(m.id, e.id);
    ASSERT_TRUE(m.normalized.has_value()) << m.id << ": normalised by its own shard's calibrations";
    EXPECT_EQ(m.normalized_by, "launch.eager_queued_time_s");
    EXPECT_DOUBLE_EQ(m.normalized->ratio, e.normalized->ratio) << m.id;
    EXPECT_EQ(m.verdict, e.verdict) << m.id;
  }
  // The nodes moved every point by +-23% raw; with each shard's calibration taken out none is slower or faster, and
  // each withheld verdict says the machine moved.
  EXPECT_EQ(merged.summary.slower + merged.summary.faster, 0u);
  std::size_t machine_named = 0;
  for (const DiffPoint& m : merged.points)
    machine_named += m.reason && m.reason->find("the machine, not the code, may have moved") != std::string::npos;
  EXPECT_EQ(machine_named + merged.summary.same, merged.points.size());
  // Each side's CPU models are both nodes'.
  EXPECT_EQ(merged.base_host.cpu_model, "node1, node2");
}

TEST(DiffProcesses, WelchIntervalMatchesTheTQuantile) {
  // t_{0.975, 4} = 2.776445 (tables); Welch on two constant-variance sides of 3 has df 4.
  EXPECT_NEAR(student_t_quantile_two_sided(0.05, 4), 2.776445, 1e-5);
  EXPECT_NEAR(student_t_quantile_two_sided(0.05, 1e6), 1.959964, 1e-4);
  const WelchLog w = welch_log_test({1.0, 1.1, 0.9}, {2.0, 2.2, 1.8});
  const RatioEstimate r = welch_log_interval(w, 0.95);
  EXPECT_NEAR(std::log(r.ci_high / r.ratio), student_t_quantile_two_sided(0.05, w.df) * w.log_se, 1e-12);
  EXPECT_LT(r.ci_low, 2.0);
  EXPECT_GT(r.ci_high, 2.0);
}

}  // namespace
}  // namespace labrun
