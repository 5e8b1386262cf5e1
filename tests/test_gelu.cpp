// Tests of the gelu experiment on the host: the float64 reference against hand-computed values, every host
// variant against it (tails, n = 0, the input range's ends), the per-element tolerance (hand-computed, and tight
// enough to tell one rounding from seven), NaN and poison never passing, the cost model's numbers, the input
// generator, every point of configs/gelu.yaml, and point dispositions through run_point on the host backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include <labrun/counter_rng.hpp>

#include "config.hpp"
#include <labrun/counter_rng.hpp>
#include "gelu_test.hpp"
#include "host_backend.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sweep.hpp"
#include "cost_expect.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using namespace test_gelu;

const RegisteredExperiment& experiment() { return *test::builtin().find("gelu"); }

using test::quick_lab;

Json run(const Point& p, const LabSettings& lab = quick_lab()) { return test::run_on_host(p, experiment(), lab); }

// gelu_tanh(x) = 0.5x(1 + tanh(sqrt(2/pi)(x + 0.044715x^3))), evaluated independently (Python, float64):
// gelu(1) = 0.8411919906082768, gelu(-1) = -0.15880800939172324, gelu(2) = 1.954597694087775,
// gelu(-3) = -0.0036373920817729943, gelu(0.5) = 0.34571400982514394, gelu(6) = 5.9999999999156035,
// gelu(-6) = -8.43964897967453e-11; gelu(0) = 0 and gelu(-x) = gelu(x) - x.
TEST(GeluReference, HandComputedValues) {
  const std::pair<double, double> cases[] = {{1, 0.8411919906082768},    {-1, -0.15880800939172324},
                                             {2, 1.954597694087775},     {-3, -0.0036373920817729943},
                                             {0.5, 0.34571400982514394}, {6, 5.9999999999156035},
                                             {-6, -8.43964897967453e-11}};
  for (const auto& [x, y] : cases) EXPECT_NEAR(gelu::reference_value(x), y, 4e-16 * std::fabs(y) + 1e-300) << x;
  EXPECT_EQ(gelu::reference_value(0.0), 0.0);
  for (double x : {0.1, 0.7, 1.3, 2.9, 5.5})
    EXPECT_NEAR(gelu::reference_value(-x), gelu::reference_value(x) - x, 1e-15);
  // reference() decodes each stored element exactly (bf16 0.1 is 0.10009765625).
  const Inputs in = inputs_of({1.0f, 0.1f}, DType::bf16);
  const auto ref = reference_of(in);
  ASSERT_EQ(ref.size(), 2u);
  EXPECT_EQ(ref[0], gelu::reference_value(1.0));
  EXPECT_EQ(ref[1], gelu::reference_value(0.10009765625));
}

// The constants as the f32 kernels use them.
TEST(GeluReference, F32Constants) {
  EXPECT_EQ(gelu::kSqrt2OverPiF, 0.7978845834732056f);
  EXPECT_EQ(gelu::kAlphaF, 0.044714998453855515f);
  EXPECT_EQ(gelu::kAlphaSqrt2OverPiF, 0.035677406936883926f);
  EXPECT_NEAR(gelu::kSqrt2OverPi, std::sqrt(2.0 / M_PI), 1e-16);
}

// Every host variant, every dtype, sizes with and without a vector tail (0, 1, 7, 8, 9, 1000, 100003): within the
// tolerance of the reference, every element written; n = 0 has worst ratio 0 and passes.
TEST(GeluHost, EveryVariantMatchesTheReference) {
  for (DType t : kDTypes)
    for (std::int64_t n : {0, 1, 7, 8, 9, 1000, 100003}) {
      const Inputs in = generate_inputs(n, t, kSeed);
      const auto ref = reference_of(in);
      for (Variant v : kVariants) {
        SCOPED_TRACE(std::string(name(v)) + " " + to_string(t) + " n=" + std::to_string(n));
        const auto out = run_host(v, in);
        const CheckOutcome c = compare(v, in, ref, out.data(), 1.0);
        EXPECT_TRUE(c.passed()) << test::detail_of(c).dump();
        EXPECT_LE(ratio(c), 1.0);
        EXPECT_EQ(test::detail_of(c)["not_finite"], 0);
        EXPECT_EQ(test::detail_of(c)["compared"], n);
        if (n == 0) {
          EXPECT_EQ(ratio(c), 0.0);
        }
        if (n > 1000) {
          EXPECT_GT(ratio(c), 0.05) << "the bound should be within a small factor of the real error";
        }
      }
    }
}

// Edge values: the ends of the input range, tiny magnitudes (x³ underflows in f32), and values where tanh
// rounds to ±1 (1 + tanh z < u for x = -6: y = 0 against a reference of -8.4e-11, inside the bound).
TEST(GeluHost, EdgeValues) {
  const std::vector<float> xs = {6.0f,  -6.0f,  5.99f, -5.99f, 1e-20f, -1e-20f, 6e-16f,  -6e-16f,
                                 0.75f, -0.75f, 3.0f,  -3.0f,  1.0f,   -1.0f,   2.5e-3f, -4.0f};
  for (DType t : kDTypes)
    for (Variant v : kVariants) {
      const Inputs in = inputs_of(xs, t);
      const CheckOutcome c = check_host(v, in);
      EXPECT_TRUE(c.passed()) << name(v) << " " << to_string(t) << ": " << test::detail_of(c).dump();
    }
  const Inputs in = inputs_of({-6.0f}, DType::f32);
  EXPECT_EQ(out_value(run_host(Variant::fused, in), DType::f32, 0), 0.0);
}

// fused and fused_vec have identical numerics (one expression); on the host they give the same bits.
TEST(GeluHost, FusedAndFusedVecAreBitIdentical) {
  for (DType t : kDTypes) {
    const Inputs in = generate_inputs(4099, t, kSeed);
    EXPECT_EQ(run_host(Variant::fused, in), run_host(Variant::fused_vec, in)) << to_string(t);
  }
}

// The unfused variant rounds every intermediate to the storage dtype, step by step, as written out here.
TEST(GeluHost, UnfusedRoundsEachIntermediate) {
  auto r = [](float v) { return bf16_to_float(float_to_bf16(v)); };
  for (float x0 : {1.0f, -0.8125f, 2.75f, -3.5f, 0.0390625f}) {
    const float x = r(x0);
    const float t1 = r(x * x * x);
    const float t2 = r(gelu::kAlphaF * t1);
    const float t3 = r(x + t2);
    const float t4 = r(gelu::kSqrt2OverPiF * t3);
    const float t5 = r(std::tanh(t4));
    const float t6 = r(1.0f + t5);
    const float y = r((0.5f * x) * t6);
    const Inputs in = inputs_of({x}, DType::bf16);
    EXPECT_EQ(out_value(run_host(Variant::unfused, in), DType::bf16, 0), y) << x;
    // The fused variant rounds once, at the store.
    EXPECT_EQ(out_value(run_host(Variant::fused, in), DType::bf16, 0), r(gelu::fused_f32(x))) << x;
  }
  // f32 unfused: the same seven ops in f32.
  const float x = 1.0f;
  const float t5 = std::tanh(gelu::kSqrt2OverPiF * (x + gelu::kAlphaF * (x * x * x)));
  const float y = (0.5f * x) * (1.0f + t5);
  EXPECT_EQ(out_value(run_host(Variant::unfused, inputs_of({x}, DType::f32)), DType::f32, 0), y);
  // And the rounding counts differ in practice: on 10^4 bf16 inputs unfused and fused disagree somewhere.
  const Inputs many = generate_inputs(10000, DType::bf16, kSeed);
  EXPECT_NE(run_host(Variant::unfused, many), run_host(Variant::fused, many));
}

// The relative rounding errors per step (docs/experiments/gelu.md).
TEST(GeluTolerance, RoundingsPerVariant) {
  using V = std::vector<double>;
  EXPECT_EQ(gelu::roundings(Variant::unfused, DType::f32), (V{2 * kU, 2 * kU, kU, 2 * kU, 4 * kU, kU, kU}));
  EXPECT_EQ(gelu::roundings(Variant::unfused, DType::bf16),
            (V{2 * kU + kUb, 2 * kU + kUb, kU + kUb, 2 * kU + kUb, 4 * kU + kUb, kU + kUb, kU + kUb}));
  EXPECT_EQ(gelu::roundings(Variant::fused, DType::f32), (V{0, 0, 0, 4 * kU, 4 * kU, 0, kU}));
  EXPECT_EQ(gelu::roundings(Variant::fused_vec, DType::bf16), (V{0, 0, 0, 4 * kU, 4 * kU, 0, kU + kUb}));
}

// bound = 2·(0.5|x|·S·(k·a·|x|³(e1+e2) + |z|(e3+e4)) + 0.5|x||t|e5 + |ref|(e6+e7)), by hand at x = 1 and -3.
TEST(GeluTolerance, HandComputedBound) {
  const double k = gelu::kSqrt2OverPi, a = gelu::kAlpha;
  for (double x : {1.0, -3.0}) {
    const double z = k * (x + a * x * x * x), t = std::tanh(z), s = 1 - t * t, y = gelu::reference_value(x);
    const double ax = std::fabs(x);
    const double fused_f32 = 2 * (0.5 * ax * s * std::fabs(z) * 4 * kU + 0.5 * ax * std::fabs(t) * 4 * kU +
                                  std::fabs(y) * kU);
    EXPECT_NEAR(gelu::bound(gelu::roundings(Variant::fused, DType::f32), x, y), fused_f32, 1e-9 * fused_f32) << x;
    const double fused_bf16 = 2 * (0.5 * ax * s * std::fabs(z) * 4 * kU + 0.5 * ax * std::fabs(t) * 4 * kU +
                                   std::fabs(y) * (kU + kUb));
    EXPECT_NEAR(gelu::bound(gelu::roundings(Variant::fused_vec, DType::bf16), x, y), fused_bf16, 1e-9 * fused_bf16)
        << x;
    const double e12 = 2 * (2 * kU + kUb), e34 = (kU + kUb) + (2 * kU + kUb), e5 = 4 * kU + kUb, e67 = 2 * (kU + kUb);
    const double unfused_bf16 = 2 * (0.5 * ax * s * (k * a * ax * ax * ax * e12 + std::fabs(z) * e34) +
                                     0.5 * ax * std::fabs(t) * e5 + std::fabs(y) * e67);
    EXPECT_NEAR(gelu::bound(gelu::roundings(Variant::unfused, DType::bf16), x, y), unfused_bf16, 1e-9 * unfused_bf16)
        << x;
  }
  EXPECT_EQ(gelu::bound(gelu::roundings(Variant::fused, DType::f32), 0.0, 0.0), 0.0);
  // At x = 1 the f32 fused bound is 3.7e-7, about six ulp (2^-24) of y = 0.84: tight.
  EXPECT_LT(gelu::bound(gelu::roundings(Variant::fused, DType::f32), 1.0, gelu::reference_value(1.0)), 7 * kU);
}

// The bound tells one rounding from seven: the unfused bf16 output fails the fused bf16 bound, a fused output
// whose tanh was rounded to bf16 fails it too, and one f32 element off by three bounds fails the f32 check.
TEST(GeluTolerance, DistinguishesRoundingCounts) {
  const Inputs in = generate_inputs(100000, DType::bf16, kSeed);
  const auto ref = reference_of(in);
  const auto unfused = run_host(Variant::unfused, in);
  EXPECT_TRUE(compare(Variant::unfused, in, ref, unfused.data(), 1.0).passed());
  const CheckOutcome strict = compare(Variant::fused, in, ref, unfused.data(), 1.0);
  EXPECT_FALSE(strict.passed());
  EXPECT_GT(test::detail_of(strict)["mismatches"].get<std::int64_t>(), 100);

  std::vector<std::uint16_t> rounded_tanh(static_cast<std::size_t>(in.n));
  for (std::int64_t i = 0; i < in.n; ++i) {
    const float x = static_cast<float>(in.value(i));
    const float z = x * std::fma(gelu::kAlphaSqrt2OverPiF, x * x, gelu::kSqrt2OverPiF);
    const float t = bf16_to_float(float_to_bf16(std::tanh(z)));
    rounded_tanh[i] = float_to_bf16(0.5f * x * (1.0f + t));
  }
  EXPECT_FALSE(compare(Variant::fused, in, ref, rounded_tanh.data(), 1.0).passed());

  const Inputs f = generate_inputs(1000, DType::f32, kSeed);
  const auto fref = reference_of(f);
  auto out = run_host(Variant::fused, f);
  float* y = reinterpret_cast<float*>(out.data());
  EXPECT_TRUE(compare(Variant::fused, f, fref, out.data(), 1.0).passed());
  y[500] = static_cast<float>(fref[500] +
                              3 * gelu::bound(gelu::roundings(Variant::fused, DType::f32), f.value(500), fref[500]));
  const CheckOutcome off = compare(Variant::fused, f, fref, out.data(), 1.0);
  EXPECT_FALSE(off.passed());
  EXPECT_EQ(test::detail_of(off)["worst_index"], 500);
  EXPECT_EQ(test::detail_of(off)["mismatches"], 1);
}

// NaN (the poison), inf, and an all-zero output never pass (case C07); the CheckOutcome fields as documented.
TEST(GeluCompare, NaNInfAndZeroNeverPass) {
  const Inputs in = generate_inputs(1000, DType::f32, kSeed);
  const auto ref = reference_of(in);
  auto out = run_host(Variant::fused, in);
  const CheckOutcome good = compare(Variant::fused, in, ref, out.data(), 1.0);
  ASSERT_TRUE(good.passed());
  // The worst element as measured: its value and reference, the error and scale x its bound.
  const std::int64_t w = test::detail_of(good)["worst_index"].get<std::int64_t>();
  EXPECT_EQ(good.value(), out_value(out, DType::f32, w));
  EXPECT_EQ(good.reference(), ref[w]);
  EXPECT_EQ(good.abs_error(), std::fabs(good.value() - good.reference()));
  EXPECT_DOUBLE_EQ(good.tolerance(), real_from_json(test::detail_of(good)["worst_bound"]));
  EXPECT_EQ(test::detail_of(good)["kind"], "elementwise");
  for (const char* key : {"worst_index", "worst_x", "worst_value", "worst_reference", "worst_bound", "worst_ratio",
                          "max_abs_error", "max_rel_error", "mismatches", "not_finite", "compared"})
    EXPECT_TRUE(test::detail_of(good).contains(key)) << key;
  EXPECT_LE(real_from_json(test::detail_of(good)["max_abs_error"]), 1e-6);

  float* y = reinterpret_cast<float*>(out.data());
  const float keep = y[17];
  y[17] = std::numeric_limits<float>::quiet_NaN();
  CheckOutcome c = compare(Variant::fused, in, ref, out.data(), 1e300);
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(ratio(c), std::numeric_limits<double>::infinity());
  EXPECT_EQ(test::detail_of(c)["not_finite"], 1);
  EXPECT_EQ(test::detail_of(c)["worst_index"], 17);
  y[17] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(compare(Variant::fused, in, ref, out.data(), 1e300).passed());
  y[17] = keep;

  std::vector<std::uint64_t> poison(out.size(), ~std::uint64_t{0});
  c = compare(Variant::fused, in, ref, poison.data(), 1.0);
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(test::detail_of(c)["not_finite"], 1000);
  std::vector<std::uint64_t> zeros(out.size(), 0);
  EXPECT_FALSE(compare(Variant::fused, in, ref, zeros.data(), 1.0).passed());
  // bf16: all-ones bits are NaN too.
  const Inputs b = generate_inputs(10, DType::bf16, kSeed);
  EXPECT_FALSE(compare(Variant::fused, b, reference_of(b), poison.data(), 1.0).passed());
}

// lab.tolerance_scale multiplies the bound: the worst ratio is then compared with the scale.
TEST(GeluCompare, ToleranceScale) {
  const Inputs in = generate_inputs(1000, DType::bf16, kSeed);
  const auto ref = reference_of(in);
  const auto out = run_host(Variant::unfused, in);
  const CheckOutcome one = compare(Variant::fused, in, ref, out.data(), 1.0);
  ASSERT_FALSE(one.passed());
  const CheckOutcome loose = compare(Variant::fused, in, ref, out.data(), 2 * ratio(one));
  EXPECT_TRUE(loose.passed());
  EXPECT_DOUBLE_EQ(loose.tolerance(), 2 * ratio(one) * real_from_json(test::detail_of(loose)["worst_bound"]));
  EXPECT_EQ(ratio(loose), ratio(one));
  EXPECT_EQ(real_from_json(test::detail_of(loose)["tolerance_scale"]), 2 * ratio(one));
}

// unfused: 9 n s read, 7 n s written, 7 launches, 9 flop per element; fused: n s each way, 1 launch, 8 flop.
TEST(GeluCost, Numbers) {
  test::expect_cost(gelu::cost(Variant::unfused, DType::f32, 1000), {.bytes_read = 36000,
                                                                     .bytes_written = 28000,
                                                                     .bytes = 64000,
                                                                     .compulsory_bytes = 8000,
                                                                     .flop = 9000,
                                                                     .launches = 7,
                                                                     .host_syncs = 0,
                                                                     .peak_work_bytes = 12000});
  EXPECT_EQ(experiment().estimate(point("unfused", 1000, "f32")).working_set_bytes, 16000);
  for (Variant v : {Variant::fused, Variant::fused_vec}) {
    test::expect_cost(gelu::cost(v, DType::bf16, 1000),
                      {.bytes_read = 2000,
                       .bytes_written = 2000,
                       .compulsory_bytes = 4000,
                       .flop = 8000,
                       .launches = 1,
                       .host_syncs = 0,
                       .peak_work_bytes = 2000},
                      name(v));
    EXPECT_EQ(experiment().estimate(point(name(v), 1000, "bf16")).working_set_bytes, 4000);
  }
  // At the founding text's 64M = 2^26 f32, fused_vec moves 2·n·s = 512 MiB: 0.128 ms at 4.2 TB/s.
  EXPECT_EQ(gelu::cost(Variant::fused_vec, DType::f32, std::int64_t{1} << 26).bytes, 536870912.0);
  // The experiment's estimate is the same model.
  const PointEstimate e = experiment().estimate(point("unfused", 1000, "bf16"));
  EXPECT_EQ(e.working_set_bytes, 8000);
  EXPECT_EQ(e.bytes, 32000);
  EXPECT_EQ(e.flop, 9000);
}

// The generator: reproducible for a seed, |x| in (0, 6], both signs, roughly uniform, never zero; the input seed
// depends on n, dtype and the lab seed, not on the variant or mode.
TEST(GeluGenerate, ReproducibleRangeAndSeeds) {
  for (DType t : kDTypes) {
    const Inputs a = generate_inputs(100000, t, kSeed), b = generate_inputs(100000, t, kSeed);
    const Inputs c = generate_inputs(100000, t, kSeed + 1);
    EXPECT_EQ(a.storage, b.storage);
    EXPECT_NE(a.storage, c.storage);
    std::int64_t negative = 0, zero = 0, outside = 0, small = 0;
    double sum = 0;
    std::set<double> distinct;
    for (std::int64_t i = 0; i < a.n; ++i) {
      const double x = a.value(i);
      negative += x < 0;
      zero += x == 0;
      outside += !(std::fabs(x) <= 6.0);
      small += std::fabs(x) < 1.0;
      sum += x;
      if (distinct.size() < 200) distinct.insert(x);
    }
    EXPECT_EQ(zero, 0) << to_string(t);
    EXPECT_EQ(outside, 0) << to_string(t);
    EXPECT_NEAR(negative / 1e5, 0.5, 0.01) << to_string(t);
    EXPECT_NEAR(small / 1e5, 1.0 / 6, 0.01) << to_string(t);  // uniform |x|: P(|x| < 1) = 1/6
    EXPECT_NEAR(sum / 1e5, 0.0, 0.05) << to_string(t);
    EXPECT_GE(distinct.size(), 100u) << "not a constant";
  }
  auto seed = [](const Point& p, std::uint64_t lab) { return sdk()->input_seed(Args(p), lab); };
  const std::uint64_t base = seed(point("fused_vec", 1000, "f32"), kSeed);
  EXPECT_EQ(seed(point("unfused", 1000, "f32", "graph"), kSeed), base);
  EXPECT_NE(seed(point("unfused", 1000, "bf16", "graph"), kSeed), base);
  EXPECT_NE(seed(point("fused_vec", 1001, "f32"), kSeed), base);
  EXPECT_NE(seed(point("fused_vec", 1000, "f32"), kSeed + 1), base);
  // The seeds gelu drew before the SDK (ca31009), so results from then compare point for point.
  EXPECT_EQ(base, splitmix64(kSeed ^ fnv1a64("gelu/1000/f32")));
  EXPECT_EQ(seed(point("fused", 1 << 26, "bf16"), 7), splitmix64(7 ^ fnv1a64("gelu/67108864/bf16")));
  EXPECT_THROW(generate_inputs(10, DType::f16, kSeed), std::invalid_argument);
}

// The input cache shares one input set and one reference across the variants of a point.
TEST(GeluGenerate, CacheSharesInputsAcrossVariants) {
  SdkExperiment& cache = *sdk();
  const Point p = point("fused_vec", 5000, "f32");
  const auto in = cache.inputs(Args(p), kSeed);
  const auto ref = cache.reference(Args(p), kSeed);
  const Point q = point("unfused", 5000, "f32", "graph");
  EXPECT_EQ(cache.inputs(Args(q), kSeed), in);
  EXPECT_EQ(cache.reference(Args(q), kSeed), ref);
  EXPECT_EQ(ref->array("y").size(), 5000u);
  EXPECT_NE(cache.inputs(Args(point("unfused", 5000, "bf16")), kSeed), in);
}

// Every point of configs/gelu.yaml validates: 15 sizes x 2 dtypes x 2 modes x 3 variants = 180 points, each with
// typed params and an estimate; three hypotheses.
TEST(GeluConfig, EveryPointValidates) {
  const auto [config, points] = test::shipped("gelu");
  EXPECT_EQ(config.lab.processes, 3);
  EXPECT_EQ(config.lab.interleave, 6);
  EXPECT_EQ(points.size(), 180u);
  std::set<std::int64_t> sizes;
  for (const Point& pt : points) {
    sizes.insert(pt.integer("n"));
    const PointEstimate e = experiment().estimate(pt);
    EXPECT_GT(e.working_set_bytes, 0);
    EXPECT_GT(e.bytes, 0);
  }
  EXPECT_EQ(sizes.size(), 15u);
  EXPECT_TRUE(sizes.count(100000));
  EXPECT_TRUE(sizes.count(std::int64_t{1} << 26));
  EXPECT_EQ(*sizes.begin(), 100000);
  EXPECT_EQ(*sizes.rbegin(), std::int64_t{1} << 30);
  ASSERT_TRUE(config.hypothesis.is_array());
  EXPECT_EQ(config.hypothesis.size(), 3u);
  // The six points of one (n, dtype) are consecutive, as interleave: 6 assumes.
  test::expect_groups_of(points, 6, {"n", "dtype"});
}

// Through the lab pass on the host backend: every variant "ok" with a passing check and its cost; graph mode
// not_supported; a working set over lab.host_max_bytes skipped.
TEST(GeluRunPoint, HostStatuses) {
  for (const char* dtype : {"f32", "bf16"})
    for (Variant v : kVariants) {
      const Json rec = run(point(name(v), 4099, dtype));
      ASSERT_EQ(rec["status"], "ok") << rec.dump();
      EXPECT_EQ(rec["correctness"]["passed"], true);
      EXPECT_LE(real_from_json(rec["correctness"]["detail"]["worst_ratio"]), 1.0);
      EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], true);
      EXPECT_EQ(real_from_json(rec["cost"]["launches"]), v == Variant::unfused ? 7.0 : 1.0);
      const Json graph = run(point(name(v), 4099, dtype, "graph"));
      EXPECT_EQ(graph["status"], "not_supported");
    }
  const Json empty = run(point("fused_vec", 0, "f32"));
  EXPECT_EQ(empty["status"], "ok") << empty.dump();
  EXPECT_EQ(real_from_json(empty["correctness"]["detail"]["worst_ratio"]), 0.0);
  EXPECT_EQ(empty["correctness"]["detail"]["compared"], 0);
  // 2^22 f32 fused: x and y are 33.5 MB, over the default 32 MB.
  test::expect_over_host_max_bytes(run(point("fused", std::int64_t{1} << 22, "f32")));
}

}  // namespace
}  // namespace labrun
