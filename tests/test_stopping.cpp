// The stopping criteria of a point's sampling (src/config/stopping.hpp): the default `noise` reproduces the rule the
// lab pass had inline before lab.stopping existed, sample for sample.
#include <gtest/gtest.h>

#include <cstdint>
#include <cmath>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "lab.hpp"
#include "stopping.hpp"

namespace labrun {
namespace {

// Tells `c` the samples until it is finished; returns how many it took (all of them if it never finished).
std::size_t run_until_finished(StoppingCriterion& c, const std::vector<StoppingSample>& samples) {
  for (std::size_t i = 0; i < samples.size(); ++i) {
    c.add_sample(samples[i]);
    if (c.is_finished()) return i + 1;
  }
  return samples.size();
}

// The rule as sample_point (src/lab/lab.cpp) wrote it inline before the criterion: the sample count it stops at and
// its stop reason, for the same samples.
std::pair<std::size_t, std::string> inline_rule(const LabSettings& lab, const std::vector<StoppingSample>& samples) {
  std::vector<double> wall, device;
  double timed_s = 0;
  for (const StoppingSample& s : samples) {
    wall.push_back(s.wall_time_s);
    if (s.device_time_s) device.push_back(*s.device_time_s);
    timed_s += s.duration_s;
    const auto count = static_cast<std::int64_t>(wall.size());
    if (count < lab.min_samples) continue;
    std::string stop;
    if (median_ci_rel_halfwidth(device.empty() ? wall : device) <= lab.target_rel_ci) stop = "ci_target";
    else if (count >= lab.max_samples) stop = "max_samples";
    else if (timed_s >= lab.max_time_s) stop = "max_time";
    if (!stop.empty()) return {wall.size(), stop};
  }
  return {samples.size(), ""};
}

std::vector<StoppingSample> constant(std::size_t n, double t_s, double duration_s) {
  return std::vector<StoppingSample>(n, StoppingSample{t_s, std::nullopt, duration_s});
}

TEST(Stopping, NoiseIsTheDefaultAndTheOnlyCriterionSoFar) {
  EXPECT_EQ(LabSettings{}.stopping, "noise");
  ASSERT_FALSE(stopping_criteria().empty());
  EXPECT_STREQ(stopping_criteria().front().name, "noise");
  EXPECT_EQ(stopping_criterion_names(), std::vector<std::string>{"noise"});
  LabSettings lab;
  lab.stopping = "nosie";
  EXPECT_THROW(make_stopping_criterion(lab), std::invalid_argument);
}

// Steady samples meet the CI target as soon as min_samples allows: 10 samples, ci_target.
TEST(Stopping, NoiseStopsAtMinSamplesWhenTheMedianIsTight) {
  const LabSettings lab;  // min 10, max 200, 2 s, +-1%
  const auto c = make_stopping_criterion(lab);
  EXPECT_EQ(run_until_finished(*c, constant(1000, 1e-3, 1e-3)), 10u);
  EXPECT_EQ(c->stop_reason(), "ci_target");
}

// Samples alternating 1 ms and 2 ms never give a median CI within +-1%: the sample cap ends it at 200, or, with
// 1/32 s per sample, the time cap at 64 samples (64 x 0.03125 s = 2 s exactly).
TEST(Stopping, NoiseStopsAtACapWhenTheSamplesAreNoisy) {
  std::vector<StoppingSample> noisy;
  for (int i = 0; i < 1000; ++i) noisy.push_back({i % 2 ? 2e-3 : 1e-3, std::nullopt, 1e-3});
  const LabSettings lab;
  auto c = make_stopping_criterion(lab);
  EXPECT_EQ(run_until_finished(*c, noisy), 200u);
  EXPECT_EQ(c->stop_reason(), "max_samples");
  for (auto& s : noisy) s.duration_s = 0.03125;
  c = make_stopping_criterion(lab);
  EXPECT_EQ(run_until_finished(*c, noisy), 64u);
  EXPECT_EQ(c->stop_reason(), "max_time");
  // Never before min_samples, even with the time spent long before.
  for (auto& s : noisy) s.duration_s = 5;
  c = make_stopping_criterion(lab);
  EXPECT_EQ(run_until_finished(*c, noisy), 10u);
  EXPECT_EQ(c->stop_reason(), "max_time");
  EXPECT_FALSE(make_stopping_criterion(lab)->is_finished());
  EXPECT_EQ(make_stopping_criterion(lab)->stop_reason(), "");
}

// Device times, where there are any, decide: noisy wall times with steady device times stop at 10 on ci_target.
TEST(Stopping, NoiseReadsTheDeviceSamplesWhereThereAreAny) {
  std::vector<StoppingSample> s;
  for (int i = 0; i < 1000; ++i) s.push_back({i % 2 ? 2e-3 : 1e-3, 1e-3, 1e-3});
  const auto c = make_stopping_criterion(LabSettings{});
  EXPECT_EQ(run_until_finished(*c, s), 10u);
  EXPECT_EQ(c->stop_reason(), "ci_target");
}

// The default reproduces the inline rule it replaced: on random sample sequences of several noise levels, with and
// without device times and under several settings, both stop at the same sample with the same reason.
TEST(Stopping, NoiseReproducesTheInlineRuleSampleForSample) {
  std::mt19937_64 rng(20261129);
  std::size_t checked = 0;
  for (const double noise : {0.001, 0.01, 0.05, 0.3})
    for (const bool device : {false, true})
      for (const auto& [min, max, time_s, target] : std::vector<std::tuple<std::int64_t, std::int64_t, double, double>>{
               {10, 200, 2.0, 0.01}, {6, 50, 0.05, 0.02}, {20, 20, 2.0, 0.001}, {1, 1000, 0.3, 0.05}}) {
        LabSettings lab;
        lab.min_samples = min;
        lab.max_samples = max;
        lab.max_time_s = time_s;
        lab.target_rel_ci = target;
        std::lognormal_distribution<double> t(std::log(1e-4), noise);
        std::uniform_real_distribution<double> d(1e-4, 2e-3);
        std::vector<StoppingSample> samples;
        for (int i = 0; i < 1200; ++i)
          samples.push_back({t(rng), device ? std::optional<double>(t(rng)) : std::nullopt, d(rng)});
        const auto [count, reason] = inline_rule(lab, samples);
        const auto c = make_stopping_criterion(lab);
        EXPECT_EQ(run_until_finished(*c, samples), count) << noise << " " << device << " " << min;
        EXPECT_EQ(c->stop_reason(), reason) << noise << " " << device << " " << min;
        EXPECT_FALSE(reason.empty());
        ++checked;
      }
  EXPECT_EQ(checked, 32u);
}

}  // namespace
}  // namespace labrun
