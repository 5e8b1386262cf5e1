// Tests of the host_read experiment on the host: the input generator (and the seeds it drew before the SDK), the
// closed-form float64 reference against a step-by-step one, the host loop within the tolerance at every step (and a
// missing step, a NaN or a zero loss failing: case C07), k = 0 and n = 0 (case C04: no launch, exact zeros), the
// cost model (host syncs k against 1, 0 in a graph; launches; bytes), every point of configs/host_read.yaml, and
// point dispositions through run_point on the host backend. host_read is an SDK experiment: its check compares the
// k losses element by element (Compare::elementwise), so the comparisons here are CheckResults.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <labrun/counter_rng.hpp>

#include "config.hpp"
#include "host_backend.hpp"
#include "host_read/host_read.hpp"
#include "lab.hpp"
#include "point_test.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sdk_registry.hpp"
#include "sweep.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using host_read::Params;
using host_read::Variant;

constexpr std::uint64_t kSeed = 20261208;
const Variant kVariants[] = {Variant::item_per_step, Variant::accumulate_on_device};

const RegisteredExperiment& experiment() { return *test::builtin().find("host_read"); }

std::shared_ptr<SdkExperiment> sdk() { return test::builtin_sdk("host_read"); }

Point point(const std::string& variant, std::int64_t steps, std::int64_t n, const std::string& mode = "eager") {
  return test::hot_point("host_read", variant, {{"steps", steps}, {"n", n}}, mode);
}

using test::quick_lab;

Json run(const Point& p, const LabSettings& lab = quick_lab()) { return test::run_on_host(p, experiment(), lab); }

View view_of(const std::vector<float>& v) {
  return View{const_cast<float*>(v.data()), static_cast<std::int64_t>(v.size()), Elem::of(DType::f32)};
}

/// host_read::generate into a fresh vector of n floats.
std::vector<float> generate(std::int64_t n, std::uint64_t seed) {
  std::vector<float> x(static_cast<std::size_t>(n));
  host_read::generate(View{x.data(), n, Elem::of(DType::f32)}, seed);
  return x;
}

host_read::Losses reference(const std::vector<float>& x0, std::int64_t k) {
  return host_read::reference(view_of(x0), k);
}

std::vector<float> losses_of(const std::vector<float>& x0, std::int64_t k) {
  std::vector<float> x(x0.size() + 1), losses(static_cast<std::size_t>(k) + 1, std::numeric_limits<float>::quiet_NaN());
  host_read::host_run(x0.data(), static_cast<std::int64_t>(x0.size()), k, x.data(), losses.data());
  return losses;
}

/// The registered check (ExperimentDef::check) of the first k entries of `losses` against `ref` for n elements,
/// with lab.tolerance_scale `scale`: the one comparison it makes.
CheckResult compare(const host_read::Losses& ref, std::int64_t n, const std::vector<float>& losses,
                    double scale = 1.0) {
  const std::int64_t k = static_cast<std::int64_t>(ref.loss.size());
  const Point p = point("accumulate_on_device", k, n);
  const Args args(p);
  Arrays none, outs;
  outs.put("loss", View{const_cast<float*>(losses.data()), k, Elem::of(DType::f32)});
  Reference r;
  r.array("loss", k) = ref.loss;
  r.array("elementwise_error", k) = ref.elementwise_error;
  Compare c(
      args, [&]() -> const Arrays& { return none; }, outs, r, scale);
  sdk()->def().check_fn()(c);
  EXPECT_EQ(c.results().size(), 1u);
  return c.results().front();
}

TEST(HostReadGenerate, RangeAndReproducibility) {
  const auto a = generate(20000, kSeed), b = generate(20000, kSeed);
  const auto c = generate(20000, kSeed + 1);
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
  EXPECT_TRUE(generate(0, kSeed).empty());
  EXPECT_THROW(host_read::generate(View{nullptr, -1, Elem::of(DType::f32)}, kSeed), std::invalid_argument);
}

// The SDK draws the seeds host_read drew before it: the pre-SDK key host_read/n (x0 depends on n only, not on the
// steps, the variant or the mode), so results from then compare point for point.
TEST(HostReadGenerate, InputSeedsAreThoseBeforeTheSdk) {
  EXPECT_EQ(sdk()->input_seed(Args(point("item_per_step", 100, 1000000)), kSeed),
            splitmix64(kSeed ^ fnv1a64("host_read/1000000")));
  EXPECT_EQ(sdk()->input_seed(Args(point("accumulate_on_device", 10, 1000, "graph")), 3),
            splitmix64(3 ^ fnv1a64("host_read/1000")));
  EXPECT_EQ(sdk()->input_seed(Args(point("accumulate_on_device", 7, 1000, "graph")), 3),
            sdk()->input_seed(Args(point("item_per_step", 1000, 1000)), 3));
  // The registered generator fills x0 with exactly host_read::generate's values for that seed.
  const Point p = point("item_per_step", 3, 4099);
  const auto in = sdk()->inputs(Args(p), kSeed);
  const View& x0 = in->arrays()["x0"];
  ASSERT_EQ(x0.count, 4099);
  const auto expected = generate(4099, splitmix64(kSeed ^ fnv1a64("host_read/4099")));
  EXPECT_EQ(std::vector<float>(x0.as<const float>(), x0.as<const float>() + 4099), expected);
}

// The closed form a^{j+1}·Σx0 + n·d_{j+1} against x stepped in double element by element; the error sums E_j
// follow their recurrence; the offsets cycle with period 8.
TEST(HostReadReference, ClosedFormEqualsSteppedDouble) {
  const auto x0 = generate(777, kSeed);
  const std::int64_t k = 40;
  const host_read::Losses ref = reference(x0, k);
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
  EXPECT_THROW(reference(x0, -1), std::invalid_argument);
}

// The f32 loop's losses (fma per element, summed in double, rounded to f32) are within the tolerance at every
// step, well inside it; the tolerance is small enough that a step done twice or skipped fails.
TEST(HostReadHost, LossesWithinToleranceAndStepsDistinguished) {
  for (std::int64_t n : {1, 1000, 100003}) {
    const auto x0 = generate(n, kSeed);
    const std::int64_t k = 50;
    const host_read::Losses ref = reference(x0, k);
    auto losses = losses_of(x0, k);
    CheckResult c = compare(ref, n, losses);
    EXPECT_TRUE(c.passed) << c.worst << " at step " << c.worst_index;
    EXPECT_LT(c.worst, 0.5) << n;
    EXPECT_EQ(c.compared, 50);
    EXPECT_EQ(test::note(c, "steps"), 50.0);
    EXPECT_EQ(c.mismatches, 0);
    for (std::int64_t j = 0; j < k; ++j)
      EXPECT_LT(host_read::bound(ref.elementwise_error[j], ref.loss[j], n), 1e-4 * ref.loss[j]);
    // One step behind: step j reports step j − 1's loss.
    std::vector<float> shifted = losses;
    for (std::int64_t j = 1; j < k; ++j) shifted[j] = losses[j - 1];
    c = compare(ref, n, shifted);
    EXPECT_FALSE(c.passed);
    EXPECT_GT(c.mismatches, 40);
  }
}

// Case C07: a NaN (the poison), an infinity or a zero loss never passes; case C04: n = 0 gives exact zeros and
// k = 0 an empty check that passes with value 0.
TEST(HostReadCompare, NaNZeroAndEmpty) {
  const auto x0 = generate(5000, kSeed);
  const host_read::Losses ref = reference(x0, 10);
  auto losses = losses_of(x0, 10);
  for (float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(), 0.0f}) {
    auto copy = losses;
    copy[6] = bad;
    const CheckResult c = compare(ref, 5000, copy);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.worst_index, 6);
    EXPECT_EQ(c.mismatches, 1);
    EXPECT_EQ(c.worst_reference, ref.loss[6]);
    EXPECT_EQ(c.not_finite, std::isfinite(bad) ? 0 : 1);
  }
  const std::vector<float> none;
  const host_read::Losses zero_n = reference(none, 5);
  auto zeros = losses_of(none, 5);
  for (int j = 0; j < 5; ++j) EXPECT_EQ(zeros[j], 0.0f);
  CheckResult c = compare(zero_n, 0, zeros);
  EXPECT_TRUE(c.passed);
  EXPECT_EQ(c.worst, 0.0);
  const host_read::Losses zero_k = reference(x0, 0);
  c = compare(zero_k, 5000, losses);
  EXPECT_TRUE(c.passed);
  EXPECT_EQ(c.worst, 0.0);
  EXPECT_EQ(c.compared, 0);
  EXPECT_EQ(test::note(c, "steps"), 0.0);
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
  // The estimate a point is skipped by: the arrays the SDK allocates, x0, the losses, x and the partial sums.
  for (const char* v : {"item_per_step", "accumulate_on_device"}) {
    EXPECT_EQ(experiment().estimate(point(v, 0, 0)).working_set_bytes, 4.0 * host_read::kMaxBlocks);
    const PointEstimate e = experiment().estimate(point(v, 100, 1000));
    EXPECT_EQ(e.working_set_bytes, 4000.0 + 400 + 4000 + 4.0 * host_read::kMaxBlocks);
    EXPECT_EQ(e.bytes, 100 * 4000.0 + 400 + 100 * 4004.0);
    EXPECT_EQ(e.flop, 3.0 * 1000 * 100);
  }
  // Through the registered cost model: the same numbers as host_read::cost, the mode read from the point.
  const Cost graph = sdk()->cost(Args(point("accumulate_on_device", 100, 1000, "graph")), Reference{});
  EXPECT_EQ(graph.host_syncs, 0.0);
  EXPECT_EQ(graph.launches, 201.0);
  EXPECT_EQ(graph.peak_work_bytes, 4000.0 + 400 + 4.0 * host_read::kMaxBlocks);
  EXPECT_EQ(sdk()->cost(Args(point("item_per_step", 100, 1000, "graph")), Reference{}).host_syncs, 100.0);
}

// Every point of configs/host_read.yaml: 3 step counts × 5 sizes × 2 variants × 2 modes = 60, with estimates;
// the four points of one (steps, n) consecutive, as interleave: 4 assumes; two hypotheses.
TEST(HostReadConfig, EveryPointValidates) {
  const auto [config, points] = test::shipped("host_read");
  EXPECT_EQ(config.lab.interleave, 4);
  ASSERT_EQ(points.size(), 60u);
  for (const Point& pt : points) {
    (void)host_read::params_of(Args(pt));
    const PointEstimate e = experiment().estimate(pt);
    EXPECT_GT(e.working_set_bytes, 0);
    EXPECT_GT(e.bytes, 0);
  }
  test::expect_groups_of(points, 4, {"n", "steps"});
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
    // The worst step's |loss - ref| / bound; value and reference are that step's loss and reference.
    EXPECT_LE(real_from_json(rec["correctness"]["detail"]["worst_ratio"]), 1.0);
    EXPECT_EQ(rec["correctness"]["detail"]["compared"], 20);
    EXPECT_EQ(rec["correctness"]["detail"]["mismatches"], 0);
    EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], true);
    EXPECT_EQ(real_from_json(rec["cost"]["host_syncs"]), v == Variant::item_per_step ? 20.0 : 1.0);
    EXPECT_EQ(run(point(name, 20, 3001, "graph"))["status"], "not_supported");
    for (auto [k, n] : {std::pair<std::int64_t, std::int64_t>{0, 1000}, {7, 0}}) {
      const Json edge = run(point(name, k, n));
      ASSERT_EQ(edge["status"], "ok") << edge.dump();
      EXPECT_EQ(edge["correctness"]["passed"], true);
      EXPECT_EQ(real_from_json(edge["correctness"]["value"]), 0.0);
      EXPECT_EQ(real_from_json(edge["correctness"]["detail"]["worst_ratio"]), 0.0);
    }
  }
}

}  // namespace
}  // namespace labrun
