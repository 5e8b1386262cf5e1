// Tests of the sweep config loader: strict YAML (C01 duplicate keys, C02 exact integers, C03 unknown keys,
// wrong types, out-of-range values) against a hand-built registry that mirrors the masking experiment.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "config.hpp"
#include "registry.hpp"
#include "sha256.hpp"

namespace labrun {
namespace {

/// A registry with one experiment shaped like the real "masking" one, so that no test depends on it (the lab
/// axes mode and l2 are appended by Registry::add).
const Registry& registry() {
  static const Registry instance = [] {
    auto e = std::make_shared<ExperimentDef>("masking");
    e->describe("masked sum of squares")
        .int_axis("n", "", 0, 1e12, 1000)
        .real_axis("density", "", 0, 1, 0.5)
        .word_axis("dtype", "", {"f32", "f16", "bf16", "f64"}, "f32")
        .int_axis("downstream", "", 0, 1024, 0);
    for (const char* name : {"multiply", "index", "where", "sanitize"}) e->variant(name, "test variant");
    Registry r;
    r.add(e);
    return r;
  }();
  return instance;
}

SweepConfig parse(const std::string& text) { return parse_config(text, "test.yaml", registry()); }

/// The ConfigError that parsing `text` throws; records a test failure if it throws none.
ConfigError parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const ConfigError& e) {
    return e;
  }
  ADD_FAILURE() << "expected a ConfigError for:\n" << text;
  return ConfigError({}, "", "");
}

bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

std::vector<AxisValue> ints(std::initializer_list<std::int64_t> values) { return {values.begin(), values.end()}; }

// ---------------------------------------------------------------------------------------------------------
// C01: duplicate keys are errors naming both lines.

TEST(Config, C01_DuplicateAxisKey) {
  const ConfigError e = parse_error(
      "experiment: masking\n"
      "axes:\n"
      "  n: [1000]\n"
      "  n: [2000]\n");
  EXPECT_TRUE(contains(e.message(), "'n'")) << e.what();
  EXPECT_TRUE(contains(e.message(), "line 3")) << e.what();
  EXPECT_TRUE(contains(e.message(), "line 4")) << e.what();
  EXPECT_EQ(e.key(), "axes.n");
  EXPECT_EQ(e.loc().file, "test.yaml");
  EXPECT_EQ(e.loc().line, 4);
  EXPECT_EQ(std::string(e.what()).rfind("test.yaml:4:", 0), 0u) << e.what();
  EXPECT_STREQ(e.what(), "test.yaml:4: key 'axes.n': duplicate key 'n' (first at line 3, again at line 4)");
}

TEST(Config, C01_DuplicateTopLevelKey) {
  const ConfigError e = parse_error("experiment: masking\nlab: {seed: 1}\nexperiment: masking\n");
  EXPECT_EQ(e.key(), "experiment");
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_TRUE(contains(e.message(), "line 1")) << e.what();
}

TEST(Config, C01_DuplicateKeyDeepInsideHypothesisAndExclude) {
  ConfigError e = parse_error(
      "experiment: masking\n"
      "hypothesis:\n"
      "  claim:\n"
      "    x: 1\n"
      "    x: 2\n");
  EXPECT_EQ(e.key(), "hypothesis.claim.x");
  EXPECT_EQ(e.loc().line, 5);
  e = parse_error("experiment: masking\nexclude:\n  - {n: 1, n: 2}\n");
  EXPECT_EQ(e.key(), "exclude[0].n");
  EXPECT_EQ(e.loc().line, 3);
}

// ---------------------------------------------------------------------------------------------------------
// C02: integers written with exponents are exact; non-integers and out-of-range values name the value.

TEST(Config, C02_ExponentIntegersAreExact) {
  const SweepConfig c = parse("experiment: masking\naxes:\n  n: [1e7, 2.5e3]\n");
  ASSERT_EQ(c.axes.size(), 1u);
  EXPECT_EQ(c.axes[0].name, "n");
  ASSERT_EQ(c.axes[0].values.size(), 2u);
  ASSERT_TRUE(std::holds_alternative<std::int64_t>(c.axes[0].values[0]));
  EXPECT_EQ(std::get<std::int64_t>(c.axes[0].values[0]), 10000000);
  EXPECT_EQ(std::get<std::int64_t>(c.axes[0].values[1]), 2500);
  EXPECT_EQ(c.axes[0].loc.line, 3);
}

TEST(Config, C02_NonIntegerIsRejectedNamingTheValue) {
  const ConfigError e = parse_error("experiment: masking\naxes:\n  n: [12.5]\n");
  EXPECT_TRUE(contains(e.message(), "12.5")) << e.what();
  EXPECT_TRUE(contains(e.message(), "not an integer")) << e.what();
  EXPECT_EQ(e.key(), "axes.n");
  EXPECT_EQ(e.loc().line, 3);
}

TEST(Config, C02_OutOfInt64RangeIsRejectedNamingTheValue) {
  const ConfigError e = parse_error("experiment: masking\naxes:\n  n: [1e20]\n");
  EXPECT_TRUE(contains(e.message(), "1e20")) << e.what();
  EXPECT_TRUE(contains(e.message(), "64-bit")) << e.what();
}

TEST(Config, C02_ParseExactInteger) {
  std::string why;
  EXPECT_EQ(parse_exact_integer("0", &why), 0);
  EXPECT_EQ(parse_exact_integer("-0", &why), 0);
  EXPECT_EQ(parse_exact_integer("+42", &why), 42);
  EXPECT_EQ(parse_exact_integer("-4", &why), -4);
  EXPECT_EQ(parse_exact_integer("1e7", &why), 10000000);
  EXPECT_EQ(parse_exact_integer("2.5e3", &why), 2500);
  EXPECT_EQ(parse_exact_integer("1.0E+02", &why), 100);
  EXPECT_EQ(parse_exact_integer("100e-2", &why), 1);
  EXPECT_EQ(parse_exact_integer("0.000e999999999999999999999", &why), 0);
  EXPECT_EQ(parse_exact_integer("9223372036854775807", &why), INT64_MAX);
  EXPECT_EQ(parse_exact_integer("-9223372036854775808", &why), INT64_MIN);
  EXPECT_EQ(parse_exact_integer("9.223372036854775807e18", &why), INT64_MAX);
  EXPECT_EQ(parse_exact_integer("007", &why), 7);

  auto rejects = [](const std::string& text, const std::string& reason_part) {
    std::string reason;
    EXPECT_FALSE(parse_exact_integer(text, &reason).has_value()) << text;
    EXPECT_TRUE(contains(reason, reason_part)) << text << " -> " << reason;
  };
  rejects("9223372036854775808", "outside the 64-bit integer range");
  rejects("-9223372036854775809", "outside the 64-bit integer range");
  rejects("1e20", "1e20 is outside the 64-bit integer range");
  rejects("1e999999999999999999999", "outside");
  rejects("12.5", "12.5 is not an integer");
  rejects("150e-2", "150e-2 is not an integer");
  rejects("1e-999999999999999999999", "not an integer");
  for (const char* bad : {"", "0x10", "1e", "1e+", "inf", "nan", " 1", "1 ", "+", "-", ".", "1_000", "--1", "e5"})
    rejects(bad, "is not a decimal number");
}

// ---------------------------------------------------------------------------------------------------------
// C03: unknown keys with suggestions, wrong types, out-of-range values.

TEST(Config, C03_UnknownAxisSuggestsNearest) {
  const ConfigError e = parse_error("experiment: masking\naxes:\n  n: 1000\n  densty: [0.5]\n");
  EXPECT_TRUE(contains(e.message(), "did you mean 'density'?")) << e.what();
  EXPECT_EQ(e.key(), "axes.densty");
  EXPECT_EQ(e.loc().line, 4);
}

TEST(Config, C03_RealAxisRejectsTextOnItsLine) {
  const ConfigError e = parse_error("experiment: masking\naxes:\n  n: 1000\n  density:\n    - 0.5\n    - abc\n");
  EXPECT_TRUE(contains(e.message(), "'abc' is not a number")) << e.what();
  EXPECT_EQ(e.key(), "axes.density");
  EXPECT_EQ(e.loc().line, 6);
}

TEST(Config, C03_RealAxisOutOfRange) {
  const ConfigError e = parse_error("experiment: masking\naxes:\n  density: [0.5, 1.5]\n");
  EXPECT_TRUE(contains(e.message(), "1.5 is outside [0, 1]")) << e.what();
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_TRUE(contains(parse_error("experiment: masking\naxes:\n  n: -1\n").message(), "-1 is outside"));
  EXPECT_TRUE(contains(parse_error("experiment: masking\naxes:\n  density: .nan\n").message(), "not a number"));
}

TEST(Config, C03_RealAxisAcceptsIntegersAndExponents) {
  const SweepConfig c = parse("experiment: masking\naxes:\n  density: [0, 1, 2.5e-1, +0.75]\n");
  ASSERT_EQ(c.axes.size(), 1u);
  EXPECT_EQ(c.axes[0].values, (std::vector<AxisValue>{0.0, 1.0, 0.25, 0.75}));
}

TEST(Config, C03_UnknownTopLevelKey) {
  const ConfigError e = parse_error("experiment: masking\naxis:\n  n: 1\n");
  EXPECT_EQ(e.key(), "axis");
  EXPECT_EQ(e.loc().line, 2);
  EXPECT_TRUE(contains(e.message(), "did you mean 'axes'?")) << e.what();
}

TEST(Config, C03_UnknownLabKey) {
  const ConfigError e = parse_error("experiment: masking\nlab:\n  min_sample: 3\n");
  EXPECT_EQ(e.key(), "lab.min_sample");
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_TRUE(contains(e.message(), "did you mean 'min_samples'?")) << e.what();
}

TEST(Config, ParseDecimalIsPlainDecimalOnly) {
  EXPECT_EQ(parse_decimal("12"), 12.0);
  EXPECT_EQ(parse_decimal("-0.5"), -0.5);
  EXPECT_EQ(parse_decimal(".5"), 0.5);
  EXPECT_EQ(parse_decimal("1e7"), 1e7);
  EXPECT_EQ(parse_decimal("2.5E-3"), 2.5e-3);
  EXPECT_EQ(parse_decimal("+3."), 3.0);
  for (const char* bad : {"", "0x10", "inf", "nan", " 5", "5 ", "1e", "e5", ".", "1e400", "5%", "1,5"})
    EXPECT_FALSE(parse_decimal(bad).has_value()) << bad;
}

// lab.stopping names a stopping criterion of the table (src/config/stopping.cpp); noise is the default, any other
// word an error at its file, line and key.
TEST(Config, StoppingIsACriterionOfTheTable) {
  EXPECT_EQ(parse("experiment: masking\n").lab.stopping, "noise");
  EXPECT_EQ(parse("experiment: masking\nlab:\n  stopping: noise\n").lab.stopping, "noise");
  const ConfigError e = parse_error("experiment: masking\nlab:\n  stopping: nosie\n");
  EXPECT_EQ(e.key(), "lab.stopping");
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_TRUE(contains(e.message(), "'nosie' is not one of noise")) << e.what();
}

TEST(Config, BlockingKernelIsTrueOrFalse) {
  EXPECT_TRUE(parse("experiment: masking\n").lab.blocking_kernel);  // the default
  EXPECT_FALSE(parse("experiment: masking\nlab:\n  blocking_kernel: false\n").lab.blocking_kernel);
  const ConfigError e = parse_error("experiment: masking\nlab:\n  blocking_kernel: maybe\n");
  EXPECT_EQ(e.key(), "lab.blocking_kernel");
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_TRUE(contains(e.message(), "'maybe' is not one of")) << e.what();
  // A quoted "true" is a string, refused as a quoted number is (C03).
  const ConfigError quoted = parse_error("experiment: masking\nlab:\n  blocking_kernel: \"true\"\n");
  EXPECT_EQ(quoted.key(), "lab.blocking_kernel");
  EXPECT_TRUE(contains(quoted.message(), "where a boolean belongs")) << quoted.what();
}

TEST(Config, C03_WrongTypeForLabMinSamples) {
  ConfigError e = parse_error("experiment: masking\nlab:\n  min_samples: [1, 2]\n");
  EXPECT_EQ(e.key(), "lab.min_samples");
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_TRUE(contains(e.message(), "got a list")) << e.what();
  e = parse_error("experiment: masking\nlab:\n  min_samples: ten\n");
  EXPECT_TRUE(contains(e.message(), "'ten' is not a decimal number")) << e.what();
  e = parse_error("experiment: masking\nlab:\n  min_samples: 0\n");
  EXPECT_TRUE(contains(e.message(), ">= 1")) << e.what();
  e = parse_error("experiment: masking\nlab:\n  min_samples:\n");
  EXPECT_TRUE(contains(e.message(), "got nothing")) << e.what();
  EXPECT_EQ(e.loc().line, 3);
}

TEST(Config, C03_WrongTypeForAxesAndExclude) {
  ConfigError e = parse_error("experiment: masking\naxes: [n, density]\n");
  EXPECT_EQ(e.key(), "axes");
  EXPECT_TRUE(contains(e.message(), "got a list")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  n: [[1, 2]]\n");
  EXPECT_TRUE(contains(e.message(), "got a list")) << e.what();
  e = parse_error("experiment: masking\nexclude: {n: 1}\n");
  EXPECT_EQ(e.key(), "exclude");
  e = parse_error("experiment: [masking]\n");
  EXPECT_EQ(e.key(), "experiment");
}

TEST(Config, C03_WordAxisSuggestsChoice) {
  const ConfigError e = parse_error("experiment: masking\naxes:\n  dtype: [f32, f33]\n");
  EXPECT_TRUE(contains(e.message(), "'f33' is not one of f32, f16, bf16, f64")) << e.what();
  EXPECT_TRUE(contains(e.message(), "did you mean 'f32'?")) << e.what();
}

TEST(Config, UnknownOrMissingExperiment) {
  ConfigError e = parse_error("experiment: maskng\n");
  EXPECT_EQ(e.key(), "experiment");
  EXPECT_TRUE(contains(e.message(), "did you mean 'masking'?")) << e.what();
  e = parse_error("description: no experiment\n");
  EXPECT_EQ(e.key(), "experiment");
  EXPECT_TRUE(contains(e.message(), "missing")) << e.what();
  e = parse_error("");
  EXPECT_EQ(e.key(), "experiment");
}

TEST(Config, VariantsValidated) {
  ConfigError e = parse_error("experiment: masking\nvariants: [index, mutliply]\n");
  EXPECT_EQ(e.key(), "variants");
  EXPECT_TRUE(contains(e.message(), "did you mean 'multiply'?")) << e.what();
  e = parse_error("experiment: masking\nvariants: [index, index]\n");
  EXPECT_TRUE(contains(e.message(), "twice")) << e.what();
  e = parse_error("experiment: masking\nvariants: []\n");
  EXPECT_TRUE(contains(e.message(), "empty")) << e.what();

  EXPECT_TRUE(parse("experiment: masking\nvariants: all\n").variants.empty());
  EXPECT_TRUE(parse("experiment: masking\n").variants.empty());
  EXPECT_EQ(parse("experiment: masking\nvariants: [where, index]\n").variants,
            (std::vector<std::string>{"where", "index"}));
}

TEST(Config, AxisValuesDuplicateOrEmpty) {
  ConfigError e = parse_error("experiment: masking\naxes:\n  n: [1000, 1e3]\n");
  EXPECT_TRUE(contains(e.message(), "1000 is given twice")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  n: []\n");
  EXPECT_TRUE(contains(e.message(), "empty")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  n:\n");
  EXPECT_TRUE(contains(e.message(), "got nothing")) << e.what();
  EXPECT_EQ(e.loc().line, 3);
}

TEST(Config, UnnamedAxesAreNotAdded) {
  const SweepConfig c = parse("experiment: masking\naxes:\n  dtype: f16\n  n: 5\n");
  ASSERT_EQ(c.axes.size(), 2u);
  EXPECT_EQ(c.axes[0].name, "dtype");
  EXPECT_EQ(c.axes[0].values, (std::vector<AxisValue>{std::string("f16")}));
  EXPECT_EQ(c.axes[1].name, "n");
  EXPECT_EQ(c.axes[1].values, ints({5}));
}

// ---------------------------------------------------------------------------------------------------------
// Ranges.

TEST(Config, RangeDecades) {
  const SweepConfig c = parse("experiment: masking\naxes:\n  n: {decades: [1e5, 1e8]}\n");
  EXPECT_EQ(c.axes.at(0).values, ints({100000, 1000000, 10000000, 100000000}));
  EXPECT_EQ(parse("experiment: masking\naxes:\n  n: {decades: [1, 500]}\n").axes.at(0).values, ints({1, 10, 100}));
}

TEST(Config, RangePowersOfTwo) {
  const SweepConfig c = parse("experiment: masking\naxes:\n  n: {powers_of_two: [1024, 8192]}\n");
  EXPECT_EQ(c.axes.at(0).values, ints({1024, 2048, 4096, 8192}));
}

TEST(Config, RangeFromToStep) {
  EXPECT_EQ(parse("experiment: masking\naxes:\n  downstream: {from: 0, to: 10, step: 4}\n").axes.at(0).values,
            ints({0, 4, 8}));
  const SweepConfig c = parse("experiment: masking\naxes:\n  density: {from: 0.1, to: 0.3, step: 0.1}\n");
  EXPECT_EQ(c.axes.at(0).values, (std::vector<AxisValue>{0.1, 0.2, 0.3}));
  EXPECT_EQ(parse("experiment: masking\naxes:\n  density: {from: 0, to: 1, step: 0.25}\n").axes.at(0).values,
            (std::vector<AxisValue>{0.0, 0.25, 0.5, 0.75, 1.0}));
}

TEST(Config, RangeErrors) {
  ConfigError e = parse_error("experiment: masking\naxes:\n  n: {decade: [1, 100]}\n");
  EXPECT_EQ(e.key(), "axes.n.decade");
  EXPECT_TRUE(contains(e.message(), "did you mean 'decades'?")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  n: {decades: [0, 100]}\n");
  EXPECT_TRUE(contains(e.message(), "> 0")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  n: {decades: [100, 10]}\n");
  EXPECT_TRUE(contains(e.message(), "below the first")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  n: {decades: [1e3, 1e13]}\n");
  EXPECT_TRUE(contains(e.message(), "10000000000000 is outside [0, 1000000000000]")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  n: {from: 1, to: 10}\n");
  EXPECT_TRUE(contains(e.message(), "'step'")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  n: {from: 1, to: 10, step: 0}\n");
  EXPECT_TRUE(contains(e.message(), "step must be > 0")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  n: {from: 0, to: 1e9, step: 1}\n");
  EXPECT_TRUE(contains(e.message(), "more than")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  dtype: {from: 0, to: 1, step: 1}\n");
  EXPECT_TRUE(contains(e.message(), "takes words")) << e.what();
  e = parse_error("experiment: masking\naxes:\n  density: {decades: [1, 10]}\n");
  EXPECT_TRUE(contains(e.message(), "integer axis")) << e.what();
}

// ---------------------------------------------------------------------------------------------------------
// Exclude rules.

TEST(Config, ExcludeRules) {
  const SweepConfig c = parse(
      "experiment: masking\n"
      "exclude:\n"
      "  - {variant: index, n: [1e7, 1e8]}\n"
      "  - dtype: f64\n"
      "    mode: [graph]\n");
  ASSERT_EQ(c.excludes.size(), 2u);
  const ExcludeRule& first = c.excludes[0];
  EXPECT_EQ(first.loc.line, 3);
  ASSERT_EQ(first.match.size(), 2u);
  EXPECT_EQ(first.match[0].first, "variant");
  EXPECT_EQ(first.match[0].second, (std::vector<AxisValue>{std::string("index")}));
  EXPECT_EQ(first.match[1].first, "n");
  EXPECT_EQ(first.match[1].second, ints({10000000, 100000000}));
  const ExcludeRule& second = c.excludes[1];
  EXPECT_EQ(second.loc.line, 4);
  ASSERT_EQ(second.match.size(), 2u);
  EXPECT_EQ(second.match[0].first, "dtype");
  EXPECT_EQ(second.match[0].second, (std::vector<AxisValue>{std::string("f64")}));
  EXPECT_EQ(second.match[1].first, "mode");
  EXPECT_EQ(second.match[1].second, (std::vector<AxisValue>{std::string("graph")}));
}

TEST(Config, ExcludeErrors) {
  ConfigError e = parse_error("experiment: masking\nexclude:\n  - {densty: 0.5}\n");
  EXPECT_EQ(e.key(), "exclude[0].densty");
  EXPECT_EQ(e.loc().line, 3);
  EXPECT_TRUE(contains(e.message(), "did you mean 'density'?")) << e.what();
  e = parse_error("experiment: masking\nexclude:\n  - {n: 1}\n  - {variant: [where, indx]}\n");
  EXPECT_EQ(e.key(), "exclude[1].variant");
  EXPECT_TRUE(contains(e.message(), "did you mean 'index'?")) << e.what();
  e = parse_error("experiment: masking\nexclude:\n  - {density: 2}\n");
  EXPECT_TRUE(contains(e.message(), "outside [0, 1]")) << e.what();
  e = parse_error("experiment: masking\nexclude:\n  - {}\n");
  EXPECT_TRUE(contains(e.message(), "every point")) << e.what();
}

// ---------------------------------------------------------------------------------------------------------
// Lab settings, hypothesis, description, syntax errors, files.

// lab.host / lab.cuda: settings on that backend, the base settings with the section's on top; a section in a
// section, or an unknown setting in one, is an error naming file, line and key.
TEST(Config, LabSectionsByBackend) {
  const SweepConfig c = parse(
      "experiment: masking\n"
      "lab:\n"
      "  processes: 5\n"
      "  min_samples: 20\n"
      "  host:\n"
      "    processes: 1\n"
      "  cuda:\n"
      "    max_time_s: 3\n");
  EXPECT_EQ(c.lab.processes, 5);
  ASSERT_EQ(c.lab_by_backend.count("host"), 1u);
  EXPECT_EQ(c.lab_by_backend.at("host").processes, 1);
  EXPECT_EQ(c.lab_by_backend.at("host").min_samples, 20);  // the base setting carries over
  EXPECT_EQ(c.lab_by_backend.at("cuda").processes, 5);
  EXPECT_DOUBLE_EQ(c.lab_by_backend.at("cuda").max_time_s, 3.0);
  try {
    parse("experiment: masking\nlab:\n  host:\n    host:\n      processes: 1\n");
    FAIL() << "a section inside a section was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.loc().line, 4);
    EXPECT_NE(std::string(e.what()).find("unknown lab setting"), std::string::npos) << e.what();
  }
  try {
    parse("experiment: masking\nlab:\n  host:\n    proceses: 1\n");
    FAIL() << "a misspelt setting in a section was accepted";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.loc().line, 4);
    EXPECT_NE(std::string(e.what()).find("processes"), std::string::npos) << e.what();  // the suggestion
  }
}

TEST(Config, LabSettingsParsed) {
  const SweepConfig c = parse(
      "experiment: masking\n"
      "lab:\n"
      "  warmup_iterations: 3\n"
      "  warmup_time_s: 0.5\n"
      "  min_samples: 20\n"
      "  max_samples: 1e3\n"
      "  max_time_s: 4\n"
      "  min_sample_time_s: 2e-3\n"
      "  seed: 12345678901234\n"
      "  tolerance_scale: 2\n"
      "  host_max_bytes: 1e6\n"
      "  timing: unsynchronized\n");
  EXPECT_EQ(c.lab.warmup_iterations, 3);
  EXPECT_DOUBLE_EQ(c.lab.warmup_time_s, 0.5);
  EXPECT_EQ(c.lab.min_samples, 20);
  EXPECT_EQ(c.lab.max_samples, 1000);
  EXPECT_DOUBLE_EQ(c.lab.max_time_s, 4.0);
  EXPECT_DOUBLE_EQ(c.lab.min_sample_time_s, 0.002);
  EXPECT_EQ(c.lab.seed, 12345678901234u);
  ASSERT_TRUE(c.lab.tolerance_scale.has_value());
  EXPECT_DOUBLE_EQ(*c.lab.tolerance_scale, 2.0);
  EXPECT_DOUBLE_EQ(c.lab.host_max_bytes, 1e6);
  EXPECT_EQ(c.lab.timing, "unsynchronized");

  const LabSettings defaults = parse("experiment: masking\n").lab;
  EXPECT_EQ(defaults.seed, LabSettings{}.seed);
  EXPECT_FALSE(defaults.tolerance_scale.has_value());
}

TEST(Config, LabSettingsErrors) {
  ConfigError e = parse_error("experiment: masking\nlab:\n  min_samples: 300\n");
  EXPECT_EQ(e.key(), "lab.min_samples");
  EXPECT_TRUE(contains(e.message(), "max_samples (200, the default) is below min_samples (300)")) << e.what();
  e = parse_error("experiment: masking\nlab:\n  min_samples: 5\n  max_samples: 4\n");
  EXPECT_EQ(e.key(), "lab.max_samples");
  EXPECT_EQ(e.loc().line, 4);
  e = parse_error("experiment: masking\nlab:\n  interleave: 1.5e0\n");
  EXPECT_TRUE(contains(e.message(), "1.5e0 is not an integer")) << e.what();
  e = parse_error("experiment: masking\nlab:\n  timing: synchronised\n");
  EXPECT_TRUE(contains(e.message(), "did you mean 'synchronized'?")) << e.what();
  e = parse_error("experiment: masking\nlab:\n  max_time_s: 0\n");
  EXPECT_EQ(e.key(), "lab.max_time_s");
  e = parse_error("experiment: masking\nlab:\n  seed: -1\n");
  EXPECT_EQ(e.key(), "lab.seed");
}

TEST(Config, HypothesisRoundTrip) {
  const SweepConfig c = parse(
      "experiment: masking\n"
      "description: masking costs\n"
      "hypothesis:\n"
      "  - {faster: where, than: index, when: {n: [1e6, 1e8], density: 0.5, dtype: bf16}, by_at_least: 1.2}\n");
  EXPECT_EQ(c.description, "masking costs");
  EXPECT_EQ(c.hypothesis.dump(),
            R"([{"faster":"where","than":"index","when":{"n":[1000000,100000000],"density":0.5,"dtype":"bf16"},)"
            R"("by_at_least":1.2}])");
  EXPECT_TRUE(c.hypothesis[0]["when"]["n"][0].is_number_integer());
  EXPECT_TRUE(parse("experiment: masking\n").hypothesis.is_null());
}

TEST(Config, YamlSyntaxErrorHasLine) {
  const ConfigError e = parse_error("experiment: masking\naxes:\n  n: [1, 2\n");
  EXPECT_GT(e.loc().line, 0);
  EXPECT_EQ(e.loc().file, "test.yaml");
  EXPECT_TRUE(contains(e.message(), "YAML syntax error")) << e.what();
  EXPECT_EQ(std::string(e.what()).rfind("test.yaml:" + std::to_string(e.loc().line) + ": YAML", 0), 0u) << e.what();
}

TEST(Config, SecondDocumentIsAnError) {
  const ConfigError e = parse_error("experiment: masking\n---\nexperiment: masking\n");
  EXPECT_EQ(e.loc().line, 2);                                 // the marker that starts the second document
  EXPECT_NO_THROW(parse("---\nexperiment: masking\n...\n"));  // a leading start and a trailing end marker
}

TEST(Config, RecursiveAliasIsAnError) {
  const ConfigError e = parse_error("experiment: masking\nhypothesis: &h [1, *h]\n");
  EXPECT_TRUE(contains(e.message(), "alias")) << e.what();
}

TEST(Config, ParseFillsTextPathAndSha) {
  const std::string text = "experiment: masking\n";
  const SweepConfig c = parse(text);
  EXPECT_EQ(c.path, "test.yaml");
  EXPECT_EQ(c.text, text);
  EXPECT_EQ(c.sha256, sha256_hex(text));
  EXPECT_EQ(c.experiment, "masking");
}

TEST(Config, LoadConfigReadsFileAndHashesIt) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("labrun_test_config_" + std::to_string(::getpid()) + ".yaml");
  {
    std::ofstream out(path, std::ios::binary);
    out << "experiment: masking\n";
  }
  const SweepConfig c = load_config(path.string(), registry());
  std::filesystem::remove(path);
  EXPECT_EQ(c.text, "experiment: masking\n");
  // Reference digest from `printf 'experiment: masking\n' | sha256sum`.
  EXPECT_EQ(c.sha256, "3b09447860144ff4323df4f9411127f6d4a143c38114c0d71d4fe354b4d1d96f");
  EXPECT_EQ(c.path, path.string());
}

TEST(Config, LoadConfigMissingFileThrows) {
  const std::string path = "/nonexistent/labrun/config.yaml";
  try {
    load_config(path, registry());
    FAIL() << "no ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(e.loc().file, path);
    EXPECT_EQ(e.loc().line, 0);
    EXPECT_TRUE(contains(e.message(), "No such file or directory")) << e.what();
  }
}

TEST(Config, EditDistanceAndNearest) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("densty", "density"), 1u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(nearest("densty", {"n", "density", "dtype"}), "density");
  EXPECT_EQ(nearest("zzzzzzzz", {"n", "density", "dtype"}), std::nullopt);
  EXPECT_EQ(nearest("x", {}), std::nullopt);
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// Case C03: a quoted number is a string, and a string where a number belongs is an error with file:line.
TEST(Config, C03_QuotedNumberIsAString) {
  Registry registry;
  register_builtin(registry);
  for (const char* yaml :
       {"experiment: masking\naxes:\n  density: [\"0.5\"]\n", "experiment: masking\naxes:\n  downstream: [!!str 2]\n",
        "experiment: masking\nlab:\n  seed: '123'\n"}) {
    try {
      parse_config(yaml, "q.yaml", registry);
      FAIL() << "accepted: " << yaml;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("q.yaml:3:"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("where a number belongs"), std::string::npos) << e.what();
    }
  }
}

// The hypothesis is checked when loading: a misspelled variant or axis or a non-numeric ratio is an error.
TEST(Config, HypothesisNamesAndNumbersAreChecked) {
  Registry registry;
  register_builtin(registry);
  const std::string head = "experiment: masking\nhypothesis:\n";
  EXPECT_NO_THROW(
      parse_config(head + "  - {faster: where, than: index, when: {density: [0.1, 0.9], n: 1e6}, by_at_least: 1.2}\n",
                   "h.yaml", registry));
  for (const char* bad :
       {"  - {faster: wehre, than: index}\n", "  - {faster: where, than: index, when: {densty: 0.5}}\n",
        "  - {faster: where, than: index, by_at_least: two}\n", "  - {faster: where}\n",
        "  - {faster: where, than: index, when: {density: [0.1, 2]}}\n"}) {
    try {
      parse_config(head + bad, "h.yaml", registry);
      FAIL() << "accepted: " << bad;
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("h.yaml:3:"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// One table drives the lab settings (src/config/lab_settings.hpp): every setting is documented in docs/config.md, the
// header's `lab` object lists them all in table order, and a new one needs no parser change.
TEST(Config, EveryLabSettingIsDocumentedAndInTheHeader) {
  std::ifstream in(std::string(LABRUN_SOURCE_DIR) + "/docs/config.md");
  const std::string doc((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const Json lab = to_json(LabSettings{});
  std::size_t i = 0;
  for (const auto& row : lab_settings_table()) {
    EXPECT_NE(doc.find(std::string("| `") + row.name + "`"), std::string::npos)
        << row.name << " is not in docs/config.md";
    ASSERT_LT(i, lab.size());
    EXPECT_EQ(std::next(lab.items().begin(), static_cast<long>(i)).key(), row.name);
    ++i;
  }
  EXPECT_EQ(lab.size(), lab_settings_table().size());
  EXPECT_TRUE(lab["tolerance_scale"].is_null());
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// An experiment's shipped hypotheses (ExperimentDef::hypotheses) stand in for a config that has none, checked
// as a config's; a config's own `hypothesis` wins.
TEST(Config, ShippedHypothesesApplyWhenTheConfigHasNone) {
  Registry r;
  auto e = std::make_shared<ExperimentDef>("toy");
  e->int_axis("size", "elements", 0.0, 1e9, 10);
  for (const char* v : {"lean", "bulky"}) e->variant(v, "test variant");
  e->hypotheses("- {faster: lean, than: bulky, when: {size: [1, 100]}, by_at_least: 2}\n");
  r.add(std::make_shared<ExperimentDef>(*e));
  const SweepConfig shipped = parse_config("experiment: toy\n", "toy.yaml", r);
  ASSERT_TRUE(shipped.hypothesis.is_array());
  EXPECT_EQ(shipped.hypothesis[0]["faster"], "lean");
  EXPECT_EQ(shipped.hypothesis[0]["by_at_least"], 2);
  const SweepConfig own = parse_config(
      "experiment: toy\nhypothesis:\n  - {faster: bulky, than: lean, when: {size: 5}, by_at_least: 1}\n", "toy.yaml",
      r);
  EXPECT_EQ(own.hypothesis[0]["faster"], "bulky");
  Registry bad;
  e->hypotheses("- {faster: lean, than: nosuch, when: {size: 5}, by_at_least: 2}\n");
  bad.add(e);
  try {
    parse_config("experiment: toy\n", "toy.yaml", bad);
    ADD_FAILURE() << "a shipped hypothesis naming an unknown variant must be refused";
  } catch (const ConfigError& err) {
    EXPECT_NE(std::string(err.what()).find("shipped hypotheses"), std::string::npos) << err.what();
  }
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// An exclude rule naming a value the config does not sweep can never match: refused with the rule's line (a
// typo in a rule would otherwise keep the points it meant to drop).
TEST(Config, C03_ExcludeValueNotSweptIsAnError) {
  const ConfigError e = parse_error("experiment: masking\naxes:\n  n: [1000, 2000]\nexclude:\n  - {n: 3000}\n");
  EXPECT_EQ(e.key(), "exclude[0].n");
  EXPECT_EQ(e.loc().line, 5);
  EXPECT_TRUE(contains(e.message(), "3000 is not a value the config sweeps")) << e.what();
  EXPECT_NO_THROW(parse("experiment: masking\naxes:\n  n: [1000, 2000]\nexclude:\n  - {n: 2000}\n"));
  EXPECT_NO_THROW(parse("experiment: masking\nexclude:\n  - {density: 0.5}\n"));  // an unwritten axis: its default
}

}  // namespace
}  // namespace labrun
