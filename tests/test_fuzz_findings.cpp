// Regression tests of what fuzzing found (fuzz/fuzz_config.cpp, fuzz/fuzz_results.cpp; scripts/sanitize.sh runs
// them): a crash or an undocumented exception the fuzzer reported, or a hang within reach of its time limit. Each
// input is also in the seed corpus (fuzz/corpus/<target>/finding-*), so the fuzzers start from it.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "config.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "sweep.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::builtin;
using test::TempDir;

std::string seed(const std::string& name) {
  std::ifstream in(std::string(LABRUN_SOURCE_DIR) + "/fuzz/corpus/" + name, std::ios::binary);
  if (!in) throw std::runtime_error("no seed " + name);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// fuzz_results: a number beyond the range of a double is valid JSON grammar but not a double; nlohmann throws
// out_of_range 406, not the parse_error the record layer documented. The loader reports it as bad JSON with the
// file and line (every caller catches std::exception); parse_record_line now documents the exception.
TEST(FuzzFindings, NumberBeyondADoubleIsBadJsonNamingTheLine) {
  try {
    (void)parse_record_line("{\"time_s\":2e308}");
    FAIL() << "2e308 parsed";
  } catch (const Json::out_of_range& e) {
    EXPECT_STREQ(e.what(), "[json.exception.out_of_range.406] number overflow parsing '2e308'");
  }
  TempDir dir;
  const std::string path = dir.file("overflow.jsonl");
  std::ofstream(path, std::ios::binary) << seed("results/finding-number-overflow.jsonl");
  try {
    (void)load_results({path});
    FAIL() << "load_results accepted 2e308";
  } catch (const ResultError& e) {
    EXPECT_EQ(std::string(e.what()),
              path + ":2: not JSON: [json.exception.out_of_range.406] number overflow parsing '2e308'");
  }
}

// Config path: an axis given as a range of 100000 values was checked for duplicates by comparing every pair (5e9
// comparisons), and an exclude rule of as many values was searched linearly for every point: this 90-byte config
// took 2 minutes to validate in a release build. Duplicates now go through a set and rules through masks.
TEST(FuzzFindings, LongRangesAndLongExcludeRulesTakeLinearTime) {
  const std::string text = seed("config/finding-long-exclude-rule.yaml");
  const auto start = std::chrono::steady_clock::now();
  const SweepConfig config = parse_config(text, "long.yaml", builtin());
  ASSERT_EQ(config.axes.size(), 1u);
  EXPECT_EQ(config.axes[0].values.size(), 100000u);
  ASSERT_EQ(config.excludes.size(), 1u);
  // The rule drops every point: matched against all of them, then refused as a sweep that runs nothing (H10).
  try {
    (void)expand(config, *builtin().find("rank"));
    FAIL() << "a sweep of 0 points accepted";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("the exclude rules remove every point of the sweep"), std::string::npos)
        << e.what();
  }
  // Generous for a sanitized build (about 1 s there, 0.1 s in a release build); the quadratic scans took minutes.
  EXPECT_LT(seconds_since(start), 30.0);

  // The duplicate found through the set is still the first value equal to an earlier one, at its own line.
  try {
    (void)parse_config("experiment: rank\naxes:\n  n:\n    - 1\n    - 2\n    - 1\n    - 2\n", "dup.yaml", builtin());
    FAIL() << "duplicates accepted";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "dup.yaml:6: key 'axes.n': value 1 is given twice");
  }
}

// Config path: 400 one-value exclude rules over a sweep of 900000 points (a 5 KB config) were each matched
// against every point, and each rule's check built a set of the axis' 100000 values: seconds in a release build,
// a minute under the sanitizers. The rules are now one mask per group of axes, the swept values one set per axis.
TEST(FuzzFindings, HundredsOfExcludeRulesTakeTimeInProportionToThePoints) {
  const std::string text = seed("config/finding-many-exclude-rules.yaml");
  const auto start = std::chrono::steady_clock::now();
  const SweepConfig config = parse_config(text, "many.yaml", builtin());
  ASSERT_EQ(config.excludes.size(), 400u);
  const std::vector<Point> points = expand(config, *builtin().find("rank"));
  // 100000 n x 3 densities x 3 variants, less n = 1..400 (one rule each) at every density and variant.
  EXPECT_EQ(points.size(), 896400u);
  EXPECT_EQ(points.front().key(), "rank/indexed_assign/density=0.1,l2=hot,mode=eager,n=401");
  EXPECT_LT(seconds_since(start), 30.0);  // about 3 s in a sanitized build
}

// The masks of expand() drop exactly the points matches() (the definition) matches: every shipped config, and
// rules over the variant, over two and three axes, and over an axis the config leaves at its default.
TEST(FuzzFindings, ExpandDropsExactlyThePointsMatchesMatches) {
  std::vector<std::string> texts;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(LABRUN_SOURCE_DIR) + "/configs")) {
    if (!entry.is_regular_file() || entry.path().extension() != ".yaml") continue;  // configs/subsets/ included
    std::ifstream in(entry.path(), std::ios::binary);
    texts.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  texts.push_back(
      "experiment: masking\naxes:\n  n: [0, 1000, 100000]\n  density: [0.1, 0.5, 0.9]\n  dtype: [f32, bf16]\n"
      "exclude:\n  - {variant: [index, fused], n: [0, 1000]}\n  - {density: 0.5, dtype: bf16}\n"
      "  - {nonfinite: none, n: 100000, variant: where}\n  - {n: 1000, density: [0.1, 0.9], dtype: f32}\n");
  texts.push_back("experiment: rank\nvariants: [fused, scan_select]\nexclude:\n  - {variant: fused}\n");
  int with_rules = 0;
  for (const auto& text : texts) {
    const SweepConfig config = parse_config(text, "c.yaml", builtin());
    const RegisteredExperiment& experiment = *builtin().find(config.experiment);
    SweepConfig all = config;
    all.excludes.clear();
    std::vector<std::string> expected;
    for (const Point& p : expand(all, experiment)) {
      bool dropped = false;
      for (const auto& rule : config.excludes) dropped = dropped || matches(rule, p);
      if (!dropped) expected.push_back(p.key());
    }
    std::vector<std::string> got;
    for (const Point& p : expand(config, experiment)) got.push_back(p.key());
    EXPECT_EQ(got, expected) << text;
    with_rules += config.excludes.empty() ? 0 : 1;
  }
  EXPECT_GE(with_rules, 5);
}

// ---- Seeds of the readers' bounds and checks (fuzz/corpus/results/): each one's message at load -------------

// The message load_results() refuses the seed `name` with (copied to `dir` under the same name).
std::string seed_message(const TempDir& dir, const std::string& name) {
  const std::string path = dir.file(name);
  std::ofstream(path, std::ios::binary) << seed("results/" + name);
  try {
    (void)load_results({path});
  } catch (const ResultError& e) {
    return e.what();
  }
  return "(no error)";
}

// H03: a point of 2,000 extra keys loads (the keys of a wide object are appended, not searched one by one).
TEST(FuzzFindings, H03_WideObjectSeedLoads) {
  TempDir dir;
  EXPECT_EQ(seed_message(dir, "wide-object.jsonl"), "(no error)");
  const Json j = parse_record_line(
      seed("results/wide-object.jsonl").substr(seed("results/wide-object.jsonl").find('\n') + 1));
  EXPECT_TRUE(j.contains("x1999"));
}

// H06: the seeds of a bad schema_version, a bad status and a negative time are refused naming file, line and key.
TEST(FuzzFindings, H06_NonsenseSeedsAreRefusedNamingTheKey) {
  TempDir dir;
  EXPECT_EQ(seed_message(dir, "bad-schema-version.jsonl"),
            dir.file("bad-schema-version.jsonl") +
                ":1: schema_version: 99 is not a schema this labrun reads (it reads the integers 1 to 3; a file of a "
                "newer labrun?)");
  EXPECT_EQ(seed_message(dir, "bad-status.jsonl").find(dir.file("bad-status.jsonl") + ":2: status: \"exploded\""), 0u);
  EXPECT_EQ(seed_message(dir, "negative-time.jsonl"),
            dir.file("negative-time.jsonl") + ":2: timing.time_s: -1.0 is negative; a time is at least 0 s");
}

// H10: the gzip seed is named as compressed, with the command that unpacks it.
TEST(FuzzFindings, H10_GzipSeedIsNamedAsCompressed) {
  TempDir dir;
  const std::string path = dir.file("gzip-magic.jsonl");
  EXPECT_EQ(seed_message(dir, "gzip-magic.jsonl"),
            path + ": gzip-compressed: unpack it first (gunzip -k " + path + ")");
}

}  // namespace
}  // namespace labrun
