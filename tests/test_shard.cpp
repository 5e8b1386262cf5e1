// Tests of sharding and merging (issue 13, src/cluster/shard.hpp, src/cluster/merge.hpp): the shards of every shipped
// config are
// disjoint and cover it for N = 1..64, deterministically, with indivisible groups kept together and balanced by
// the estimate; merge rejects each bad set of shards with a clear error; --shard + merge and --devices give the
// serial run's point set and statuses; labrun slurm writes a job array and a merge job.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "config.hpp"
#include "merge.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "shard.hpp"
#include "slurm.hpp"
#include "sweep.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

std::vector<std::string> shipped_configs() {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(test::kSource + "/configs"))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Shard, ParseShard) {
  EXPECT_EQ(parse_shard("2/5").index, 2);
  EXPECT_EQ(parse_shard("2/5").count, 5);
  for (const char* bad : {"0/3", "4/3", "1/0", "a/b", "1/2x", "1-2", "", "1/5000"})
    EXPECT_THROW(parse_shard(bad), std::invalid_argument) << bad;
}

// Every shipped config, on both backends: for N = 1..64 the shards are disjoint, their union is the sweep, each
// keeps sweep order, the split is the same when computed again, and no indivisible group is cut.
TEST(Shard, ShardsOfEveryShippedConfigAreDisjointAndCoverIt) {
  const Registry& registry = test::builtin();
  for (const std::string& path : shipped_configs()) {
    const SweepConfig config = load_config(path, registry);
    const RegisteredExperiment& e = *registry.find(config.experiment);
    const std::vector<Point> points = expand(config, e);
    const auto groups = indivisible_groups(points, config.lab);
    for (const BackendKind kind : {BackendKind::host, BackendKind::cuda}) {
      for (int n = 1; n <= 64; ++n) {
        const std::vector<int> shard = assign_shards(points, e, config.lab, n, kind);
        ASSERT_EQ(shard.size(), points.size());
        EXPECT_EQ(shard, assign_shards(points, e, config.lab, n, kind)) << path << " N=" << n;
        std::multiset<std::string> all;
        for (int i = 1; i <= n; ++i)
          for (const Point& p : shard_points(points, e, config.lab, ShardSpec{i, n}, kind)) all.insert(p.id());
        std::multiset<std::string> expected;
        for (const Point& p : points) expected.insert(p.id());
        EXPECT_EQ(all, expected) << path << " N=" << n;
        for (const auto& [first, last] : groups)
          for (std::size_t i = first; i < last; ++i) ASSERT_EQ(shard[i], shard[first]) << path << " N=" << n;
      }
    }
  }
}

// The estimate balances: masking.yaml's shards on the GPU are within the largest group's cost of each other, and
// more shards than groups leave some empty.
TEST(Shard, BalancedByEstimateAndEmptyWhenTooMany) {
  const Registry& registry = test::builtin();
  const SweepConfig config = load_config(test::kSource + "/configs/masking.yaml", registry);
  const RegisteredExperiment& e = *registry.find(config.experiment);
  const std::vector<Point> points = expand(config, e);
  const auto groups = indivisible_groups(points, config.lab);
  double largest = 0;
  for (const auto& [first, last] : groups) {
    double c = 0;
    for (std::size_t i = first; i < last; ++i) c += estimated_point_time_s(points[i], e, config.lab, BackendKind::cuda);
    largest = std::max(largest, c);
  }
  for (const int n : {2, 4, 8}) {
    std::vector<double> load(static_cast<std::size_t>(n), 0);
    const auto shard = assign_shards(points, e, config.lab, n, BackendKind::cuda);
    for (std::size_t i = 0; i < points.size(); ++i)
      load[static_cast<std::size_t>(shard[i])] += estimated_point_time_s(points[i], e, config.lab, BackendKind::cuda);
    const auto [lo, hi] = std::minmax_element(load.begin(), load.end());
    EXPECT_LE(*hi - *lo, largest + 1e-9) << "N=" << n;
  }
  const int many = static_cast<int>(groups.size()) + 3;
  int empty = 0;
  for (int i = 1; i <= many; ++i)
    empty += shard_points(points, e, config.lab, ShardSpec{i, many}, BackendKind::cuda).empty();
  EXPECT_EQ(empty, 3);
}

// Points that differ only in the variant share inputs and stay together; interleave windows too.
TEST(Shard, IndivisibleGroups) {
  auto point = [](const std::string& variant, std::int64_t n) { return Point{"x", variant, {{"n", n}}}; };
  const std::vector<Point> points = {point("a", 1), point("b", 1), point("a", 2), point("b", 2), point("a", 3)};
  LabSettings lab;
  using G = std::vector<std::pair<std::size_t, std::size_t>>;
  EXPECT_EQ(indivisible_groups(points, lab), (G{{0, 2}, {2, 4}, {4, 5}}));
  lab.interleave = 2;  // windows [0,2), [2,4), [4,5): they coincide with the input groups here
  EXPECT_EQ(indivisible_groups(points, lab), (G{{0, 2}, {2, 4}, {4, 5}}));
  lab.interleave = 3;  // window [0,3) takes point 2 in, whose inputs are point 3's, and [3,6) takes point 4
  EXPECT_EQ(indivisible_groups(points, lab), (G{{0, 5}}));
}

// labrun `args` in `dir`: exit status and output.
test::Logged run(const TempDir& dir, const std::string& args) {
  return test::run_logged(dir.path().string(), "'" + test::kBinary + "' " + args, dir.file("log.txt"));
}

std::map<std::string, std::string> statuses(const std::string& path) {
  std::map<std::string, std::string> out;
  for (const Json& r : read_jsonl(path))
    if (r["type"] == "point") EXPECT_TRUE(out.emplace(r["id"], r["status"]).second) << "duplicate " << r["id"];
  return out;
}

const std::string kSmoke = "'" + test::kSource + "/configs/smoke.yaml' --device cpu -q";

// --shard I/N then merge, and --devices 0,1 (two host workers at once), give the serial run's points and statuses;
// report and diff read the shards directly.
TEST(Shard, ShardsMergeAndDevicesEqualTheSerialRun) {
  TempDir dir;
  ASSERT_EQ(run(dir, "sweep " + kSmoke + " -o serial.jsonl").code, 0);
  const auto serial = statuses(dir.file("serial.jsonl"));
  std::string shards;
  for (int i = 1; i <= 3; ++i) {
    const std::string f = "s" + std::to_string(i) + ".jsonl";
    ASSERT_EQ(run(dir, "sweep " + kSmoke + " --shard " + std::to_string(i) + "/3 -o " + f).code, 0);
    shards += " " + f;
    const Json header = read_jsonl(dir.file(f)).front();
    EXPECT_EQ(header["shard"]["index"], i);
    EXPECT_EQ(header["shard"]["count"], 3);
  }
  const test::Logged merged = run(dir, "merge -o merged.jsonl" + shards);
  EXPECT_EQ(merged.code, 0) << merged.log;
  EXPECT_EQ(statuses(dir.file("merged.jsonl")), serial);
  const Json header = read_jsonl(dir.file("merged.jsonl")).front();
  EXPECT_FALSE(header.contains("shard"));
  EXPECT_EQ(header["point_count"], 288);
  ASSERT_EQ(header["shards"].size(), 3u);
  EXPECT_EQ(header["shards"][1]["index"], 2);
  EXPECT_EQ(header["shards"][1]["backend"], "host");
  // The merged file reads in the serial sweep's order.
  std::vector<std::string> order_serial, order_merged;
  for (const Json& r : read_jsonl(dir.file("serial.jsonl")))
    if (r["type"] == "point") order_serial.push_back(r["id"]);
  for (const Json& r : read_jsonl(dir.file("merged.jsonl")))
    if (r["type"] == "point") order_merged.push_back(r["id"]);
  EXPECT_EQ(order_merged, order_serial);
  // report and diff of the shards themselves, through the same rules.
  const test::Logged diff = run(dir, "diff merged.jsonl s1.jsonl,s2.jsonl,s3.jsonl --fail-on any");
  EXPECT_NE(diff.log.find("288 matched"), std::string::npos) << diff.log;
  EXPECT_NE(diff.log.find("0 status changed"), std::string::npos) << diff.log;
  const test::Logged report = run(dir, "report s1.jsonl s2.jsonl s3.jsonl -o rep --no-plots");
  EXPECT_EQ(report.code, 0) << report.log;
  EXPECT_NE(report.log.find("288 points"), std::string::npos) << report.log;
  // The merged file and one of its shards together hold the same points twice: each reader says so by name.
  for (const std::string command : {"export gbench merged.jsonl s2.jsonl", "report merged.jsonl s2.jsonl -o rep2",
                                    "diff merged.jsonl merged.jsonl,s2.jsonl"}) {
    const test::Logged both = run(dir, command);
    EXPECT_EQ(both.code, 2) << command << ": " << both.log;
    EXPECT_NE(both.log.find("s2.jsonl is a shard of the sweep merged in merged.jsonl: give the merged file or the "
                            "shards, not both"),
              std::string::npos)
        << command << ": " << both.log;
  }
  // --devices on the host backend: one worker supervisor per "device", all at once, merged.
  const test::Logged devices = run(dir, "sweep " + kSmoke + " --devices 0,1 -o devices.jsonl");
  EXPECT_EQ(devices.code, 0) << devices.log;
  EXPECT_EQ(statuses(dir.file("devices.jsonl")), serial);
  EXPECT_EQ(read_jsonl(dir.file("devices.jsonl")).front()["shards"].size(), 2u);
  EXPECT_FALSE(fs::exists(dir.file("devices.jsonl.devices")));
}

// merge refuses each bad set of shards with a message naming it, exit 2, and writes nothing.
TEST(Shard, MergeRejectsBadShardSets) {
  TempDir dir;
  for (int i = 1; i <= 2; ++i)
    ASSERT_EQ(
        run(dir, "sweep " + kSmoke + " --shard " + std::to_string(i) + "/2 -o s" + std::to_string(i) + ".jsonl").code,
        0);
  ASSERT_EQ(run(dir, "sweep " + kSmoke + " --shard 1/3 -o t1.jsonl").code, 0);
  ASSERT_EQ(run(dir, "sweep " + kSmoke + " -o serial.jsonl").code, 0);
  ASSERT_EQ(run(dir, "sweep " + kSmoke + " --shard 2/2 --lab seed=7 -o lab2.jsonl").code, 0);
  std::ofstream(dir.file("other.yaml")) << test::slurp(test::kSource + "/configs/smoke.yaml") << "\n# another config\n";
  ASSERT_EQ(run(dir, "sweep other.yaml --device cpu -q --shard 2/2 -o other2.jsonl").code, 0);
  // A shard file with one of its points duplicated into the other shard, and one cut short.
  {
    const auto s1 = read_jsonl(dir.file("s1.jsonl"));
    std::ofstream dup(dir.file("dup2.jsonl"));
    for (const Json& r : read_jsonl(dir.file("s2.jsonl"))) dup << r.dump() << "\n";
    dup << s1[1].dump() << "\n";
    std::ofstream cut(dir.file("cut2.jsonl"));
    const auto s2 = read_jsonl(dir.file("s2.jsonl"));
    for (std::size_t i = 0; i + 1 < s2.size(); ++i) cut << s2[i].dump() << "\n";
  }
  const std::pair<std::string, std::string> cases[] = {
      {"s1.jsonl", "shard 2 of 2 is missing (given: 1 shards)"},
      {"s1.jsonl s1.jsonl", "shard 1 of 2 is given twice: s1.jsonl and s1.jsonl"},
      {"s1.jsonl t1.jsonl", "t1.jsonl is shard 1 of 3, but s1.jsonl is one of 2: shards of different splits"},
      {"s1.jsonl serial.jsonl", "serial.jsonl: not a shard"},
      {"s1.jsonl lab2.jsonl", "lab2.jsonl: run with other lab settings than s1.jsonl (--lab differs)"},
      {"s1.jsonl other2.jsonl", "other2.jsonl: points of another config (sha256 "},
      {"s1.jsonl dup2.jsonl", "dup2.jsonl: shard 2 of 2 holds"},
      {"s1.jsonl cut2.jsonl", "cut2.jsonl: shard 2 of 2 holds"},
  };
  for (const auto& [args, message] : cases) {
    const test::Logged r = run(dir, "merge -o out.jsonl " + args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.log;
    EXPECT_NE(r.log.find(message), std::string::npos) << args << ": " << r.log;
    EXPECT_NE(r.log.find("nothing written"), std::string::npos) << r.log;
    EXPECT_FALSE(fs::exists(dir.file("out.jsonl")));
  }
}

// Overlapping shards (a point in two of them) and mixed builds, on the typed runs.
TEST(Shard, MergeShardsRejectsOverlapAndMixedBuilds) {
  auto shard = [](int index, const std::string& sha, const std::vector<std::string>& ids) {
    labrun::Run r;
    r.file = "s" + std::to_string(index) + ".jsonl";
    r.has_header = true;
    Json h = {{"type", "header"},
              {"config", {{"sha256", "abc"}}},
              {"lab", Json::object()},
              {"environment", {{"labrun", {{"git_sha", sha}}}}},
              {"shard", {{"index", index}, {"count", 2}}},
              {"point_count", ids.size()}};
    r.header = header_from_json(h);
    for (const auto& id : ids) {
      PointRecord p;
      p.id = id;
      p.key = "k/" + id;
      p.status = Status::ok;
      r.points.push_back(p);
    }
    return r;
  };
  try {
    merge_shards({shard(1, "aaa", {"p1", "p2"}), shard(2, "aaa", {"p2", "p3"})});
    ADD_FAILURE() << "overlap accepted";
  } catch (const ResultError& e) {
    EXPECT_STREQ(e.what(), "point p2 (k/p2) is in s1.jsonl and in s2.jsonl: shards overlap");
  }
  try {
    merge_shards({shard(1, "aaa", {"p1"}), shard(2, "bbb", {"p2"})});
    ADD_FAILURE() << "mixed builds accepted";
  } catch (const ResultError& e) {  // the way out, as any reader of shards (merge, report, diff, export) says it
    EXPECT_NE(std::string(e.what()).find("(`labrun merge --allow-mixed-builds` merges them into one file"),
              std::string::npos)
        << e.what();
  }
  MergeOptions mixed;
  mixed.allow_mixed_builds = true;
  const labrun::Run m = merge_shards({shard(1, "aaa", {"p1"}), shard(2, "bbb", {"p2"})}, mixed);
  EXPECT_EQ(m.points.size(), 2u);
  EXPECT_EQ(m.header.json["shards"][1]["git_sha"], "bbb");
  EXPECT_EQ(m.header.json["warnings"].back()["kind"], "mixed_builds");
}

// labrun slurm (without --submit) writes the array script (one shard per task, %K, GPUs, time, one log per task)
// and the merge job, and prints the sbatch commands.
TEST(Shard, SlurmWritesArrayAndMergeScripts) {
  TempDir dir;
  const test::Logged r = run(dir, "slurm '" + test::kSource +
                                      "/configs/smoke.yaml' --shards 4 --array-limit 2 --partition gpu "
                                      "--time 01:00:00 --account lab --lab seed=3 -o jobs");
  EXPECT_EQ(r.code, 0) << r.log;
  std::string array, merge;
  for (const auto& e : fs::directory_iterator(dir.file("jobs"))) {
    if (e.path().string().ends_with("-array.sbatch")) array = test::slurp(e.path().string());
    if (e.path().string().ends_with("-merge.sbatch")) merge = test::slurp(e.path().string());
  }
  for (const char* line :
       {"#SBATCH --array=0-3%2\n", "#SBATCH --partition=gpu\n", "#SBATCH --time=01:00:00\n", "#SBATCH --account=lab\n",
        "#SBATCH --gpus-per-task=1\n", "-task%a.log\n", "I=$((SLURM_ARRAY_TASK_ID + 1))\n",
        "--shard \"$I/4\" -o \"$OUT\" --force '--lab' 'seed=3'\n"})
    EXPECT_NE(array.find(line), std::string::npos) << line << "\n" << array;
  EXPECT_NE(merge.find(" merge -o '"), std::string::npos) << merge;
  EXPECT_NE(merge.find("-shard-4-of-4.jsonl'\n"), std::string::npos) << merge;
  EXPECT_NE(r.log.find("sbatch --dependency=afterok:"), std::string::npos) << r.log;
}

}  // namespace
}  // namespace labrun
