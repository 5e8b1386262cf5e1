// Tests of the masking experiment on the host: hand-computed sums, empty input (C04), fp16 accumulation
// overflow (C05), non-finite values in masked-out slots (C06), NaN never close (C07), the input generator,
// and point dispositions through run_point on the host backend. masking is an SDK experiment: its check is one
// value against the reference through Compare::scalar, so the comparisons here are CheckResults.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <labrun/counter_rng.hpp>

#include "host_backend.hpp"
#include "test_util.hpp"
#include "lab.hpp"
#include "masking/masking.hpp"
#include "registry.hpp"
#include "sdk_registry.hpp"

namespace labrun {
namespace {

using masking::Variant;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr std::uint64_t kSeed = 20261129;

const Variant kHostVariants[] = {Variant::multiply, Variant::index, Variant::where, Variant::sanitize, Variant::fused};
const DType kDTypes[] = {DType::f32, DType::f16, DType::bf16, DType::f64};

using test::builtin;

const RegisteredExperiment& experiment() { return *builtin().find("masking"); }

/// Host inputs of a point: `storage` holds n elements of the dtype (f16/bf16 as raw bits), `mask` n bytes.
struct Inputs {
  DType dtype = DType::f32;
  std::int64_t n = 0;
  std::vector<std::uint64_t> storage;
  std::vector<std::uint8_t> mask;
  std::int64_t selected = 0;
  void* data() { return storage.data(); }
  View view() const { return View{const_cast<std::uint64_t*>(storage.data()), n, Elem::of(dtype)}; }
  View mask_view() const { return View{const_cast<std::uint8_t*>(mask.data()), n, Elem::raw<std::uint8_t>()}; }
  double value(std::int64_t i) const { return view().value(i); }
  std::size_t data_bytes() const { return static_cast<std::size_t>(n) * dtype_bytes(dtype); }
};

Inputs blank(std::int64_t n, DType dtype) {
  Inputs in;
  in.dtype = dtype;
  in.n = n;
  in.storage.assign((static_cast<std::size_t>(n) * dtype_bytes(dtype) + 7) / 8, 0);
  in.mask.assign(static_cast<std::size_t>(n), 0);
  return in;
}

/// masking::generate into fresh host arrays.
Inputs generate(std::int64_t n, double density, DType dtype, bool nonfinite, std::uint64_t seed) {
  Inputs in = blank(n, dtype);
  in.selected = masking::generate(in.view(), in.mask_view(), density, nonfinite, seed);
  return in;
}

masking::Sums reference(const Inputs& in, int downstream) {
  return masking::reference(in.view(), in.mask_view(), downstream);
}

/// f32 inputs from explicit data and mask.
Inputs f32_inputs(const std::vector<float>& data, const std::vector<std::uint8_t>& mask) {
  Inputs in = blank(static_cast<std::int64_t>(data.size()), DType::f32);
  if (!data.empty()) std::memcpy(in.data(), data.data(), data.size() * sizeof(float));
  in.mask = mask;
  for (auto m : mask) in.selected += m;
  return in;
}

/// One value against the reference sum with tolerance `tol`, as the experiment's check compares them
/// (Compare::scalar, lab.tolerance_scale 1).
CheckResult compare(double value, const masking::Sums& ref, double tol) {
  static const Point p{"masking", "fused", {}};
  static const Args args(p);
  const Arrays none;
  const Reference r;
  Compare c(
      args, [&]() -> const Arrays& { return none; }, none, r, 1.0);
  return c.scalar("result", value, ref.sum, tol);
}

masking::Params params(Variant v, std::int64_t n, DType dtype, int downstream) {
  masking::Params p;
  p.variant = v;
  p.n = n;
  p.dtype = dtype;
  p.downstream = downstream;
  return p;
}

double run_host(Variant v, const Inputs& in, int downstream) {
  std::vector<std::uint64_t> a(in.storage.size() + 1), b(in.storage.size() + 1);
  return masking::host_run(v, in.view(), in.mask_view(), downstream, a.data(), b.data());
}

/// A masking point at density 0.5, k = 0, with every axis, as the sweep builds it.
Point point(const std::string& variant, std::int64_t n, const std::string& dtype, const std::string& mode = "eager",
            const std::string& nonfinite = "none") {
  return Point{"masking",
               variant,
               {{"n", n},
                {"density", 0.5},
                {"dtype", dtype},
                {"mode", mode},
                {"downstream", std::int64_t{0}},
                {"nonfinite", nonfinite},
                {"l2", std::string("hot")}}};
}

/// Lab settings that keep a host point to a handful of iterations.
using test::quick_lab;

Json run(const Point& p, const LabSettings& lab = quick_lab()) { return test::run_on_host(p, experiment(), lab); }

// Data {1,-2,0.5,3}, mask {1,0,1,1}: 1 + 0.25 + 9 = 10.25, sum_abs 10.25; f32 squares carry
// (u_c + u_s)|x| = 2^-23 |x| each, so elementwise_error = 10.25 * 2^-23.
TEST(Masking, HandComputedReference) {
  const Inputs in = f32_inputs({1, -2, 0.5f, 3}, {1, 0, 1, 1});
  EXPECT_EQ(in.value(1), -2.0);
  const masking::Sums ref = reference(in, 0);
  EXPECT_EQ(ref.sum, 10.25);
  EXPECT_EQ(ref.sum_abs, 10.25);
  EXPECT_DOUBLE_EQ(ref.elementwise_error, 10.25 * std::ldexp(1.0, -23));
  EXPECT_EQ(ref.selected, 3);

  const double s = masking::kDownstreamScale;
  const double down = std::sin(1.0) * s + std::sin(0.25) * s + std::sin(9.0) * s;
  const masking::Sums ref1 = reference(in, 1);
  EXPECT_DOUBLE_EQ(ref1.sum, down);
  EXPECT_DOUBLE_EQ(ref1.sum_abs,
                   std::fabs(std::sin(1.0) * s) + std::fabs(std::sin(0.25) * s) + std::fabs(std::sin(9.0) * s));
  // One step: e1 = 1.0001 |cos x0| e0 + (5 u_c + u_s)|x1| with u_c = u_s = 2^-24, per element.
  const double u = std::ldexp(1.0, -24);
  double e1 = 0;
  for (double x0 : {1.0, 0.25, 9.0})
    e1 += s * std::fabs(std::cos(x0)) * 2 * u * x0 + 6 * u * std::fabs(std::sin(x0) * s);
  EXPECT_DOUBLE_EQ(ref1.elementwise_error, e1);
}

// Every host variant returns exactly 10.25 for k = 0 and is within tolerance of the reference for k = 1.
TEST(Masking, HandComputedHostVariants) {
  const Inputs in = f32_inputs({1, -2, 0.5f, 3}, {1, 0, 1, 1});
  const masking::Sums ref1 = reference(in, 1);
  for (Variant v : kHostVariants) {
    EXPECT_EQ(run_host(v, in, 0), 10.25) << masking::to_string(v);
    const double k1 = run_host(v, in, 1);
    const CheckResult c = compare(k1, ref1, masking::tolerance(params(v, 4, DType::f32, 1), ref1, 1.0));
    EXPECT_TRUE(c.passed) << masking::to_string(v) << ": " << k1 << " vs " << ref1.sum;
  }
}

// tol = 2 elementwise_error + (ceil(log2 n) + ceil(sqrt n)) u_acc sum_abs: for f32, n = 4, k = 0 that is
// 2 * 10.25 * 2^-23 + (2 + 2) * 2^-24 * 10.25 = 82 * 2^-24.
TEST(Masking, ToleranceHandComputed) {
  const Inputs in = f32_inputs({1, -2, 0.5f, 3}, {1, 0, 1, 1});
  const masking::Sums ref = reference(in, 0);
  const masking::Params p = params(Variant::where, 4, DType::f32, 0);
  EXPECT_DOUBLE_EQ(masking::tolerance(p, ref, 1.0), 82 * std::ldexp(1.0, -24));
  EXPECT_DOUBLE_EQ(masking::tolerance(p, ref, 2.0), 164 * std::ldexp(1.0, -24));
}

// The bound is tight enough that a wrong answer fails where the old (2 + 6k) u_s bound let 0 pass: bf16 with
// k = 8 downstream steps (a review found tolerance / |reference| = 1.19 there).
TEST(Masking, ToleranceRejectsZeroForBf16WithDownstreamWork) {
  const Inputs in = generate(100000, 0.5, DType::bf16, false, kSeed);
  for (int k : {0, 1, 8, 64}) {
    const masking::Sums ref = reference(in, k);
    const double tol = masking::tolerance(params(Variant::where, 100000, DType::bf16, k), ref, 1.0);
    if (k <= 8) EXPECT_LT(tol, 0.2 * std::fabs(ref.sum)) << "k = " << k;
    EXPECT_FALSE(compare(0.0, ref, tol).passed) << "k = " << k;
  }
}

// C04: n = 0 gives reference 0 and every host variant returns 0.
TEST(Masking, C04_EmptyInputSumsToZero) {
  for (DType t : kDTypes) {
    const Inputs in = generate(0, 0.5, t, false, kSeed);
    EXPECT_EQ(in.n, 0);
    EXPECT_EQ(in.selected, 0);
    const masking::Sums ref = reference(in, 0);
    EXPECT_EQ(ref.sum, 0.0);
    EXPECT_EQ(ref.selected, 0);
    for (Variant v : kHostVariants) {
      EXPECT_EQ(run_host(v, in, 0), 0.0) << masking::to_string(v);
      EXPECT_EQ(run_host(v, in, 2), 0.0) << masking::to_string(v);
    }
  }
}

// C04: through the lab pass, n = 0 is "ok" with correctness value 0 and 0 selected, for every host variant.
TEST(Masking, C04_EmptyInputPointIsOk) {
  for (Variant v : kHostVariants) {
    const Json rec = run(point(masking::to_string(v), 0, "f32"));
    EXPECT_EQ(rec["status"], "ok") << masking::to_string(v) << ": " << rec["reason"];
    ASSERT_TRUE(rec.contains("correctness"));
    EXPECT_EQ(real_from_json(rec["correctness"]["value"]), 0.0);
    EXPECT_EQ(real_from_json(rec["correctness"]["reference"]), 0.0);
    EXPECT_EQ(rec["correctness"]["passed"], true);
    EXPECT_EQ(rec["correctness"]["detail"]["selected"], 0);
  }
}

// C05: 20000 f16 values 2.0 (0x4000), all selected: every host variant accumulates in f32 and returns exactly
// 80000 (> 65504, fp16's largest finite), the reference is 80000, and an fp16 accumulator's +inf fails.
TEST(Masking, C05_Fp16AccumulationDoesNotOverflow) {
  Inputs in = blank(20000, DType::f16);
  auto* halves = static_cast<std::uint16_t*>(in.data());
  for (int i = 0; i < 20000; ++i) halves[i] = 0x4000;
  in.mask.assign(20000, 1);
  in.selected = 20000;
  EXPECT_EQ(in.value(19999), 2.0);

  const masking::Sums ref = reference(in, 0);
  EXPECT_EQ(ref.sum, 80000.0);
  EXPECT_EQ(ref.selected, 20000);
  const double tol = masking::tolerance(params(Variant::fused, 20000, DType::f16, 0), ref, 1.0);
  for (Variant v : kHostVariants) {
    const double got = run_host(v, in, 0);
    EXPECT_EQ(got, 80000.0) << masking::to_string(v);
    EXPECT_TRUE(compare(got, ref, tol).passed) << masking::to_string(v);
  }
  const CheckResult overflow = compare(kInf, ref, tol);
  EXPECT_FALSE(overflow.passed);
  EXPECT_EQ(overflow.worst, kInf);  // |value - reference| over the tolerance: infinite
  EXPECT_EQ(overflow.not_finite, 1);
}

// C06: with nonfinite, masked-out slots hold some +inf and some NaN and masked-in slots are all finite.
TEST(Masking, C06_NonFiniteOnlyInMaskedOutSlots) {
  for (DType t : kDTypes) {
    const Inputs in = generate(1024, 0.5, t, true, kSeed);
    int inf = 0, nan = 0, out = 0;
    for (std::int64_t i = 0; i < in.n; ++i) {
      const double v = in.value(i);
      if (in.mask[i]) {
        EXPECT_TRUE(std::isfinite(v)) << to_string(t) << " element " << i;
      } else {
        ++out;
        inf += std::isinf(v) && v > 0;
        nan += std::isnan(v);
      }
    }
    EXPECT_GT(inf, 0) << to_string(t);
    EXPECT_GT(nan, 0) << to_string(t);
    EXPECT_LT(inf + nan, out) << to_string(t);
  }
}

// C06: multiply computes 0 * inf = NaN and fails the comparison; index, where, sanitize and fused equal the
// finite reference within tolerance.
TEST(Masking, C06_MultiplyIsPoisonedOthersPass) {
  for (DType t : kDTypes) {
    const Inputs in = generate(1024, 0.5, t, true, kSeed);
    const masking::Sums ref = reference(in, 0);
    ASSERT_TRUE(std::isfinite(ref.sum)) << to_string(t);
    ASSERT_GT(ref.sum, 0) << to_string(t);
    for (Variant v : kHostVariants) {
      const double got = run_host(v, in, 0);
      const CheckResult c = compare(got, ref, masking::tolerance(params(v, 1024, t, 0), ref, 1.0));
      if (v == Variant::multiply) {
        EXPECT_TRUE(std::isnan(got)) << to_string(t);
        EXPECT_FALSE(c.passed) << to_string(t);
      } else {
        EXPECT_TRUE(c.passed) << to_string(t) << " " << masking::to_string(v) << ": " << got << " vs " << ref.sum;
      }
    }
  }
}

// C06 through the lab pass: multiply is recorded "incorrect" (value NaN, not timed), the others "ok".
TEST(Masking, C06_RunPointStatuses) {
  for (const char* dtype : {"f32", "f16", "bf16", "f64"}) {
    for (Variant v : kHostVariants) {
      const Json rec = run(point(masking::to_string(v), 1024, dtype, "eager", "masked_out"));
      if (v == Variant::multiply) {
        EXPECT_EQ(rec["status"], "incorrect") << dtype;
        EXPECT_EQ(rec["correctness"]["value"], "NaN") << dtype;
        EXPECT_EQ(rec["correctness"]["passed"], false) << dtype;
        EXPECT_FALSE(rec.contains("timing")) << dtype;
      } else {
        EXPECT_EQ(rec["status"], "ok") << dtype << " " << masking::to_string(v) << ": " << rec["reason"];
        EXPECT_EQ(rec["correctness"]["passed"], true) << dtype << " " << masking::to_string(v);
      }
    }
  }
}

// C07: NaN and ±inf against a finite reference fail whatever the tolerance; finite values pass within it.
TEST(Masking, C07_NaNIsNeverClose) {
  masking::Sums ref;
  ref.sum = 10.0;
  const CheckResult nan = compare(kNaN, ref, 1e300);
  EXPECT_FALSE(nan.passed);
  EXPECT_EQ(nan.worst, kInf);
  EXPECT_EQ(nan.not_finite, 1);
  EXPECT_FALSE(compare(kInf, ref, 1e300).passed);
  EXPECT_FALSE(compare(-kInf, ref, 1e300).passed);
  EXPECT_FALSE(compare(kInf, ref, kInf).passed);
  const CheckResult close = compare(10.5, ref, 0.5);
  EXPECT_TRUE(close.passed);
  EXPECT_EQ(close.max_abs_error, 0.5);
  EXPECT_EQ(close.worst_value, 10.5);
  EXPECT_EQ(close.worst_reference, 10.0);
  EXPECT_EQ(close.worst_bound * close.scale, 0.5);
  EXPECT_FALSE(compare(10.75, ref, 0.5).passed);
  EXPECT_TRUE(compare(9.75, ref, 0.5).passed);
}

// The generator is a pure function of (n, density, dtype, nonfinite, seed): same seed, same bytes.
TEST(Masking, GenerateIsReproducibleAndSeeded) {
  for (DType t : kDTypes) {
    const Inputs a = generate(100000, 0.5, t, true, kSeed);
    const Inputs b = generate(100000, 0.5, t, true, kSeed);
    const Inputs c = generate(100000, 0.5, t, true, kSeed + 1);
    EXPECT_EQ(a.storage, b.storage) << to_string(t);
    EXPECT_EQ(a.mask, b.mask) << to_string(t);
    EXPECT_EQ(a.selected, b.selected) << to_string(t);
    EXPECT_NE(a.storage, c.storage) << to_string(t);
    EXPECT_NE(a.mask, c.mask) << to_string(t);
    EXPECT_EQ(a.data_bytes(), 100000 * dtype_bytes(t));
  }
}

// The SDK draws the seeds masking drew before it (ca31009): the pre-SDK key n/density/dtype/finiteness, so
// results from then compare point for point.
TEST(Masking, InputSeedsAreThoseBeforeTheSdk) {
  const auto sdk = test::builtin_sdk("masking");
  ASSERT_TRUE(sdk);
  EXPECT_EQ(sdk->input_seed(Args(point("fused", 100000, "f32")), kSeed),
            splitmix64(kSeed ^ fnv1a64("100000/0.500000/f32/finite")));
  EXPECT_EQ(sdk->input_seed(Args(point("index", 1000, "bf16", "graph", "masked_out")), 3),
            splitmix64(3 ^ fnv1a64("1000/0.500000/bf16/nonfinite")));
}

// Data values are never zero and |d| lies in [0.25, 2] after rounding to the dtype; `selected` counts the mask.
TEST(Masking, GenerateNeverProducesZero) {
  for (DType t : kDTypes) {
    const Inputs in = generate(100000, 0.5, t, false, kSeed);
    std::int64_t zeros = 0, outside = 0, ones = 0;
    for (std::int64_t i = 0; i < in.n; ++i) {
      const double v = std::fabs(in.value(i));
      zeros += v == 0;
      outside += !(v >= 0.25 && v <= 2.0);
      ones += in.mask[i];
      ASSERT_LE(in.mask[i], 1);
    }
    EXPECT_EQ(zeros, 0) << to_string(t);
    EXPECT_EQ(outside, 0) << to_string(t);
    EXPECT_EQ(ones, in.selected) << to_string(t);
  }
}

// At n = 1e6 and density 0.3 the selected fraction is within 1% (relative) of 0.3: the binomial standard
// deviation is sqrt(0.3 * 0.7 / 1e6) = 0.00046, so 0.003 is 6.5 sigma.
TEST(Masking, GenerateDensityFraction) {
  const Inputs in = generate(1000000, 0.3, DType::f32, false, kSeed);
  const double fraction = static_cast<double>(in.selected) / 1e6;
  EXPECT_NEAR(fraction, 0.3, 0.003);
  EXPECT_EQ(generate(1000, 0.0, DType::f32, false, kSeed).selected, 0);
  EXPECT_EQ(generate(1000, 1.0, DType::f32, false, kSeed).selected, 1000);
}

// Graph mode needs a CUDA device: on the host backend the point is "not_supported" with a reason.
TEST(Masking, GraphModeNotSupportedOnHost) {
  const Json rec = run(point("fused", 1000, "f32", "graph"));
  EXPECT_EQ(rec["status"], "not_supported");
  ASSERT_TRUE(rec["reason"].is_string());
  EXPECT_NE(rec["reason"].get<std::string>().find("graph"), std::string::npos) << rec["reason"];
}

// index_device_count has no host implementation: "not_supported" naming the host backend.
TEST(Masking, IndexDeviceCountNotSupportedOnHost) {
  const Json rec = run(point("index_device_count", 1000, "f32"));
  EXPECT_EQ(rec["status"], "not_supported");
  ASSERT_TRUE(rec["reason"].is_string());
  EXPECT_NE(rec["reason"].get<std::string>().find("host"), std::string::npos) << rec["reason"];
}

// A working set (the experiment's estimate) above lab.host_max_bytes is "skipped" with a reason naming the
// setting: where at n = 100 f32 holds data, mask and a temporary, 9 bytes per element, and the 4-byte result.
TEST(Masking, HostMaxBytesSkipsLargePoints) {
  test::host_max_bytes_lab(904, experiment(), point("where", 100, "f32"), point("where", 101, "f32"));
}

// An estimated iteration time above lab.host_max_time_s is "skipped" too.
TEST(Masking, HostMaxTimeSkipsSlowPoints) {
  LabSettings lab = quick_lab();
  lab.host_max_time_s = 1e-9;
  const Json rec = run(point("where", 1000, "f32"), lab);
  EXPECT_EQ(rec["status"], "skipped");
  EXPECT_NE(rec["reason"].get<std::string>().find("host_max_time_s"), std::string::npos) << rec["reason"];
}

}  // namespace
}  // namespace labrun
