// Tests of the host_read experiment on the host: the input generator, the closed-form float64 reference against a
// step-by-step one, the host loop within the tolerance at every step (and a missing step, a NaN or a zero loss
// failing: case C07), k = 0 and n = 0 (case C04: no launch, exact zeros), the cost model (host syncs k against 1,
// 0 in a graph; launches; bytes), every point of configs/host_read.yaml, and point dispositions through run_point
// on the host backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "config.hpp"
#include "host_backend.hpp"
#include "host_read/host_read.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sweep.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using host_read::Params;
using host_read::Variant;

constexpr std::uint64_t kSeed = 20261208;
const Variant kVariants[] = {Variant::item_per_step, Variant::accumulate_on_device};

const Experiment& experiment() { return *test::builtin().find("host_read"); }

Point point(const std::string& variant, std::int64_t steps, std::int64_t n, const std::string& mode = "eager") {
  return Point{"host_read", variant, {{"steps", steps}, {"n", n}, {"mode", mode}, {"l2", std::string("hot")}}};
}

LabSettings quick_lab() {
  LabSettings lab;
  lab.warmup_iterations = 1;
  lab.warmup_time_s = 0;
  lab.min_samples = 1;
  lab.max_samples = 2;
  lab.max_time_s = 0;
  lab.min_sample_time_s = 0;
  return lab;
}

Json run(const Point& p, const LabSettings& lab = quick_lab()) {
  HostBackend backend;
  return run_point(p, experiment(), backend, lab);
}

std::vector<float> losses_of(const std::vector<float>& x0, std::int64_t k) {
  std::vector<float> x, losses(static_cast<std::size_t>(k) + 1, std::numeric_limits<float>::quiet_NaN());
  host_read::host_run(x0, k, x, losses.data());
  return losses;
}

TEST(HostReadGenerate, RangeAndReproducibility) {
  const auto a = host_read::generate(20000, kSeed), b = host_read::generate(20000, kSeed);
  const auto c = host_read::generate(20000, kSeed + 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  double lo = 10, hi = 0, mean = 0;
  for (float v : a) {
    lo = std::min<double>(lo, v);
    hi = std::max<double>(hi, v);
    mean += v / 20000.0;
  }
  EXPECT_GE(lo, 0.25);
  EXPECT_LT(lo, 0.26);
  EXPECT_LE(hi, 2.0);
  EXPECT_GT(hi, 1.99);
  EXPECT_NEAR(mean, 1.125, 0.02);
  EXPECT_TRUE(host_read::generate(0, kSeed).empty());
  EXPECT_THROW(host_read::generate(-1, kSeed), std::invalid_argument);
}

// The closed form a^{j+1}·Σx0 + n·d_{j+1} against x stepped in double element by element; the error sums E_j
// follow their recurrence; the offsets cycle with period 8.
TEST(HostReadReference, ClosedFormEqualsSteppedDouble) {
  const auto x0 = host_read::generate(777, kSeed);
  const std::int64_t k = 40;
  const host_read::Reference ref = host_read::reference(x0, k);
  ASSERT_EQ(ref.loss.size(), 40u);
  std::vector<double> x(x0.begin(), x0.end());
  double e = 0;
  for (std::int64_t j = 0; j < k; ++j) {
    double sum = 0;
    for (double& v : x) {
      v = 0.75 * v + (0.25 + 0.125 * static_cast<double>(j % 8));
      sum += v;
    }
    EXPECT_NEAR(ref.loss[j], sum, 1e-12 * sum) << j;
    e = 0.75 * e + 0x1.0p-24 * sum;
    EXPECT_NEAR(ref.elementwise_error[j], e, 1e-12 * e) << j;
  }
  EXPECT_EQ(host_read::offset(0), 0.25f);
  EXPECT_EQ(host_read::offset(7), 1.125f);
  EXPECT_EQ(host_read::offset(8), 0.25f);
  EXPECT_THROW(host_read::reference(x0, -1), std::invalid_argument);
}

// The f32 loop's losses (fma per element, summed in double, rounded to f32) are within the tolerance at every
// step, well inside it; the tolerance is small enough that a step done twice or skipped fails.
TEST(HostReadHost, LossesWithinToleranceAndStepsDistinguished) {
  for (std::int64_t n : {1, 1000, 100003}) {
    const auto x0 = host_read::generate(n, kSeed);
    const std::int64_t k = 50;
    const host_read::Reference ref = host_read::reference(x0, k);
    auto losses = losses_of(x0, k);
    Check c = host_read::compare(ref, losses.data(), 1.0);
    EXPECT_TRUE(c.passed) << c.detail.dump();
    EXPECT_LT(c.value, 0.5) << n;
    EXPECT_EQ(c.detail["steps"], 50);
    EXPECT_EQ(c.detail["mismatches"], 0);
    for (std::int64_t j = 0; j < k; ++j) EXPECT_LT(host_read::tolerance(ref, j, 1.0), 1e-4 * ref.loss[j]);
    // One step behind: step j reports step j − 1's loss.
    std::vector<float> shifted = losses;
    for (std::int64_t j = 1; j < k; ++j) shifted[j] = losses[j - 1];
    c = host_read::compare(ref, shifted.data(), 1.0);
    EXPECT_FALSE(c.passed);
    EXPECT_GT(c.detail["mismatches"].get<int>(), 40);
  }
}

// Case C07: a NaN (the poison), an infinity or a zero loss never passes; case C04: n = 0 gives exact zeros and
// k = 0 an empty check that passes with value 0.
TEST(HostReadCompare, NaNZeroAndEmpty) {
  const auto x0 = host_read::generate(5000, kSeed);
  const host_read::Reference ref = host_read::reference(x0, 10);
  auto losses = losses_of(x0, 10);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 0.0f}) {
    auto copy = losses;
    copy[6] = bad;
    const Check c = host_read::compare(ref, copy.data(), 1.0);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.detail["worst_step"], 6);
    EXPECT_EQ(c.detail["mismatches"], 1);
  }
  const std::vector<float> none;
  const host_read::Reference zero_n = host_read::reference(none, 5);
  auto zeros = losses_of(none, 5);
  for (int j = 0; j < 5; ++j) EXPECT_EQ(zeros[j], 0.0f);
  Check c = host_read::compare(zero_n, zeros.data(), 1.0);
  EXPECT_TRUE(c.passed);
  EXPECT_EQ(c.value, 0.0);
  const host_read::Reference zero_k = host_read::reference(x0, 0);
  c = host_read::compare(zero_k, losses.data(), 1.0);
  EXPECT_TRUE(c.passed);
  EXPECT_EQ(c.value, 0.0);
  EXPECT_EQ(c.detail["steps"], 0);
}

TEST(HostReadCost, Numbers) {
  Params p;
  p.n = 1000;
  p.steps = 100;
  p.variant = Variant::item_per_step;
  Cost c = host_read::cost(p);
  EXPECT_EQ(c.host_syncs, 100.0);
  EXPECT_EQ(c.launches, 300.0);
  EXPECT_EQ(c.bytes_read, 100 * 4000.0 + 400);
  EXPECT_EQ(c.bytes_written, 100 * 4004.0);
  EXPECT_EQ(c.compulsory_bytes, 8000.0 + 400);
  EXPECT_EQ(c.flop, 3.0 * 1000 * 100);
  EXPECT_EQ(c.peak_work_bytes, 4000.0 + 400 + 4.0 * host_read::kMaxBlocks);
  p.mode = "graph";  // item_per_step cannot be captured; its model does not change
  EXPECT_EQ(host_read::cost(p).host_syncs, 100.0);
  p.variant = Variant::accumulate_on_device;
  p.mode = "eager";
  c = host_read::cost(p);
  EXPECT_EQ(c.host_syncs, 1.0);
  EXPECT_EQ(c.launches, 201.0);
  EXPECT_EQ(c.bytes, 100 * 4000.0 + 400 + 100 * 4004.0);
  p.mode = "graph";
  EXPECT_EQ(host_read::cost(p).host_syncs, 0.0);
  EXPECT_EQ(host_read::cost(p).launches, 201.0);
  // Case C04: k = 0 runs nothing.
  for (Variant v : kVariants) {
    p.variant = v;
    p.steps = 0;
    p.mode = "eager";
    c = host_read::cost(p);
    EXPECT_EQ(c.bytes, 0.0);
    EXPECT_EQ(c.launches, 0.0);
    EXPECT_EQ(c.host_syncs, 0.0);
    EXPECT_EQ(c.peak_work_bytes, 4000.0 + 16 + 4.0 * host_read::kMaxBlocks);
  }
  p.n = 0;
  EXPECT_EQ(host_read::working_set_bytes(p), 32.0 + 4.0 * host_read::kMaxBlocks);
}

// Every point of configs/host_read.yaml: 3 step counts × 5 sizes × 2 variants × 2 modes = 60, with estimates;
// the four points of one (steps, n) consecutive, as interleave: 4 assumes; two hypotheses.
TEST(HostReadConfig, EveryPointValidates) {
  const SweepConfig config = load_config(std::string(LABRUN_SOURCE_DIR) + "/configs/host_read.yaml", test::builtin());
  EXPECT_EQ(config.experiment, "host_read");
  EXPECT_EQ(config.lab.interleave, 4);
  const auto points = expand(config, experiment());
  ASSERT_EQ(points.size(), 60u);
  for (const Point& pt : points) {
    (void)host_read::params_of(pt);
    const PointEstimate e = experiment().estimate(pt);
    EXPECT_GT(e.working_set_bytes, 0);
    EXPECT_GT(e.bytes, 0);
  }
  for (std::size_t i = 0; i < points.size(); i += 4)
    for (std::size_t j = i; j < i + 4; ++j) {
      EXPECT_EQ(points[j].integer("n"), points[i].integer("n"));
      EXPECT_EQ(points[j].integer("steps"), points[i].integer("steps"));
    }
  ASSERT_TRUE(config.hypothesis.is_array());
  EXPECT_EQ(config.hypothesis.size(), 2u);
}

// Through the lab pass on the host backend: both variants ok with a passing check and their cost; graph
// not_supported on the host; k = 0 and n = 0 ok (C04).
TEST(HostReadRunPoint, HostStatuses) {
  for (Variant v : kVariants) {
    const std::string name = host_read::to_string(v);
    const Json rec = run(point(name, 20, 3001));
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_EQ(rec["correctness"]["passed"], true);
    EXPECT_LE(real_from_json(rec["correctness"]["value"]), 1.0);
    EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], true);
    EXPECT_EQ(real_from_json(rec["cost"]["host_syncs"]), v == Variant::item_per_step ? 20.0 : 1.0);
    EXPECT_EQ(run(point(name, 20, 3001, "graph"))["status"], "not_supported");
    for (auto [k, n] : {std::pair<std::int64_t, std::int64_t>{0, 1000}, {7, 0}}) {
      const Json edge = run(point(name, k, n));
      ASSERT_EQ(edge["status"], "ok") << edge.dump();
      EXPECT_EQ(edge["correctness"]["passed"], true);
      EXPECT_EQ(real_from_json(edge["correctness"]["value"]), 0.0);
    }
  }
}

}  // namespace
}  // namespace labrun
