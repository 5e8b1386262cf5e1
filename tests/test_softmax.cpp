// Tests of the softmax experiment on the host: the float64 reference against hand-computed values, every host
// variant against the reference (tails, one column, one row, rows longer than the on-chip limit, rows offset by
// +-80 where exp without the max subtraction overflows or underflows f32), the tolerance (hand-computed, and
// that wrong outputs, NaN and the unsubtracted formula fail), the cost model's numbers, the input generator and
// its seeds (those drawn before the SDK), the config's points, and run_point on the host backend. softmax is an
// SDK experiment: its check (an element-by-element comparison and the worst row sum, through Compare) runs here
// as the lab runs it, and the results are read from the lab's CheckOutcome.
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
#include "host_backend.hpp"
#include "host_check_test.hpp"
#include "lab.hpp"
#include "point_test.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sdk_registry.hpp"
#include "softmax/softmax.hpp"
#include "sweep.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using softmax::Variant;

constexpr std::uint64_t kSeed = 20261129;
const Variant kVariants[] = {Variant::unfused, Variant::two_pass, Variant::online};
const DType kDTypes[] = {DType::f32, DType::bf16};

using test::builtin;

const RegisteredExperiment& experiment() { return *builtin().find("softmax"); }

std::shared_ptr<SdkExperiment> sdk() { return test::builtin_sdk("softmax"); }

// A point of the axes as registered: `elements` (rows * cols) and `cols`; rows is derived from them.
Point point_of_elements(const std::string& variant, std::int64_t elements, std::int64_t cols, const std::string& dtype,
                        const std::string& mode = "eager") {
  return test::hot_point("softmax", variant, {{"cols", cols}, {"elements", elements}, {"dtype", dtype}}, mode);
}

// A point of a rows x cols matrix (elements = rows * cols).
Point point(const std::string& variant, std::int64_t rows, std::int64_t cols, const std::string& dtype,
            const std::string& mode = "eager") {
  return point_of_elements(variant, rows * cols, cols, dtype, mode);
}

/// Host copy of a point's input matrix x: rows x cols elements, row-major, in the storage dtype (bf16 as raw bits).
struct Inputs {
  DType dtype = DType::f32;
  std::int64_t rows = 0, cols = 0;
  std::vector<std::uint64_t> storage;  ///< 8-byte aligned backing of data(), one spare word
  void* data() { return storage.data(); }
  const void* data() const { return storage.data(); }
  std::int64_t elements() const { return rows * cols; }
  View view() const { return View{const_cast<std::uint64_t*>(storage.data()), elements(), Elem::of(dtype)}; }
  double value(std::int64_t i) const { return view().value(i); }
};
Inputs blank(std::int64_t rows, std::int64_t cols, DType dtype) {
  Inputs in{dtype, rows, cols, {}};
  in.storage.assign((static_cast<std::size_t>(rows * cols) * dtype_bytes(dtype) + 7) / 8 + 1, 0);
  return in;
}

/// softmax::generate into a fresh matrix.
Inputs generate(std::int64_t rows, std::int64_t cols, DType dtype, std::uint64_t seed) {
  Inputs in = blank(rows, cols, dtype);
  softmax::generate(in.view(), cols, seed);
  return in;
}

/// f32 inputs from explicit values (rows x cols, row-major).
Inputs f32_inputs(std::int64_t rows, std::int64_t cols, const std::vector<float>& values) {
  Inputs in = blank(rows, cols, DType::f32);
  if (!values.empty()) std::memcpy(in.data(), values.data(), values.size() * 4);
  return in;
}

Point point_of(Variant v, const Inputs& in) {
  return point(softmax::to_string(v), in.rows, in.cols, to_string(in.dtype));
}

/// The experiment's reference (ExperimentDef::reference) of `in`: "y", "max" and "spread".
Reference reference(const Inputs& in) {
  Arrays arrays;
  arrays.put("x", in.view());
  Reference r;
  sdk()->def().reference_fn()(Args(point_of(Variant::online, in)), arrays, r);
  return r;
}

/// Output buffer of a host run, in the storage dtype.
std::vector<std::uint64_t> run_host(Variant v, const Inputs& in) {
  std::vector<std::uint64_t> y(in.storage.size() + 1, 0), e(in.storage.size() + 1), m(in.rows + 1), s(in.rows + 1);
  softmax::HostScratch scratch;
  scratch.e = e.data();
  scratch.m = m.data();
  scratch.s = s.data();
  softmax::host_run(v, in.view(), in.cols, y.data(), scratch);
  return y;
}

double out_value(const Inputs& in, const std::vector<std::uint64_t>& y, std::int64_t i) {
  if (in.dtype == DType::bf16) return bf16_to_float(reinterpret_cast<const std::uint16_t*>(y.data())[i]);
  return reinterpret_cast<const float*>(y.data())[i];
}

/// The experiment's check (ExperimentDef::check, through the lab's CheckOutcome) of output y of variant v at `scale`.
CheckOutcome compare(Variant v, const Inputs& in, const void* y, const Reference& ref, double scale = 1.0) {
  Arrays ins, outs;
  ins.put("x", in.view());
  outs.put("y", View{const_cast<void*>(y), in.elements(), Elem::of(in.dtype)});
  return sdk()->compare(
      Args(point_of(v, in)), [&]() -> const Arrays& { return ins; }, outs, ref, scale);
}

/// The element-by-element comparison of a check (the first of its comparisons), and the row-sum comparison.
Json elementwise(const CheckOutcome& c) {
  const Json d = test::detail_of(c);
  return d.contains("checks") ? d["checks"][0] : d;
}
Json row_sum(const CheckOutcome& c) { return test::detail_of(c)["checks"][1]; }
/// The worst |y - y_ref| / bound of the elementwise comparison (inf for a non-finite output).
double ratio(const CheckOutcome& c) { return real_from_json(elementwise(c)["worst_ratio"]); }

CheckOutcome check_host(Variant v, const Inputs& in, double scale = 1.0) {
  const Reference ref = reference(in);
  const auto y = run_host(v, in);
  return compare(v, in, y.data(), ref, scale);
}

using test::quick_lab;

Json run(const Point& p, const LabSettings& lab = quick_lab()) { return test::run_on_host(p, experiment(), lab); }

// Row {1, 2, 3}: max 3, spread 2, y = (e^-2, e^-1, 1) / (1 + e^-1 + e^-2); row {5, 5, 5}: 1/3 each.
TEST(Softmax, HandComputedReference) {
  const Inputs in = f32_inputs(2, 3, {1, 2, 3, 5, 5, 5});
  const Reference ref = reference(in);
  const std::vector<double>& y = ref.array("y");
  const double s = 1 + std::exp(-1.0) + std::exp(-2.0);
  EXPECT_DOUBLE_EQ(y[0], std::exp(-2.0) / s);
  EXPECT_DOUBLE_EQ(y[1], std::exp(-1.0) / s);
  EXPECT_DOUBLE_EQ(y[2], 1.0 / s);
  for (int c = 3; c < 6; ++c) EXPECT_DOUBLE_EQ(y[c], 1.0 / 3.0);
  EXPECT_EQ(ref.array("max")[0], 3.0);
  EXPECT_EQ(ref.array("spread")[0], 2.0);
  EXPECT_EQ(ref.array("max")[1], 5.0);
  EXPECT_EQ(ref.array("spread")[1], 0.0);
}

// Equal values: exp(0) = 1, the sum is the count, and 1/4 is exact: every variant writes exactly 0.25 in f32 and
// bf16; one column gives exactly 1.
TEST(Softmax, HostVariantsExactCases) {
  for (DType t : kDTypes) {
    Inputs in = generate(3, 4, t, kSeed);
    for (std::int64_t i = 0; i < in.elements(); ++i) {
      if (t == DType::f32) static_cast<float*>(in.data())[i] = 87.5f;
      else static_cast<std::uint16_t*>(in.data())[i] = float_to_bf16(87.5f);
    }
    const Inputs one = generate(5, 1, t, kSeed);
    for (Variant v : kVariants) {
      const auto y = run_host(v, in);
      for (std::int64_t i = 0; i < in.elements(); ++i) EXPECT_EQ(out_value(in, y, i), 0.25) << softmax::to_string(v);
      const auto y1 = run_host(v, one);
      for (std::int64_t i = 0; i < one.elements(); ++i) EXPECT_EQ(out_value(one, y1, i), 1.0) << softmax::to_string(v);
    }
  }
}

// Every host variant is within its bound of the reference, element by element and row by row, at shapes with
// tails (cols not a multiple of 4 or 8, nor of the host chunk), one row, and rows longer than the on-chip limit.
TEST(Softmax, HostVariantsMatchReference) {
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 1},    {3, 7},    {5, 13},   {4, 64},
                                                          {9, 1000}, {4, 4096}, {2, 9001}, {1, 20000}};
  const auto inputs = [](std::int64_t rows, std::int64_t cols, DType t) { return generate(rows, cols, t, kSeed); };
  const auto check = [](Variant v, const Inputs& in) { return check_host(v, in); };
  const auto within_bound = [](const CheckOutcome& c, Variant, std::int64_t rows, std::int64_t cols) {
    EXPECT_LE(ratio(c), 1.0);
    EXPECT_EQ(elementwise(c)["mismatches"], 0);
    EXPECT_EQ(elementwise(c)["compared"], rows * cols);
    EXPECT_LE(real_from_json(row_sum(c)["worst_ratio"]), 1.0);
  };
  test::expect_host_checks(kDTypes, shapes, kVariants, inputs, check, within_bound);
}

// The fused host variants round only y; unfused also stores e and s, so in bf16 it is measurably less accurate
// (relative L2 error) than two_pass and online, and in f32 all three are within a few u of the reference.
TEST(Softmax, UnfusedBf16RoundsIntermediates) {
  const Inputs in = generate(16, 1024, DType::bf16, kSeed);
  const double unfused = real_from_json(elementwise(check_host(Variant::unfused, in))["rel_l2_error"]);
  const double fused = real_from_json(elementwise(check_host(Variant::two_pass, in))["rel_l2_error"]);
  EXPECT_GT(unfused, 1.2 * fused);
  const Inputs f = generate(16, 1024, DType::f32, kSeed);
  for (Variant v : kVariants)
    EXPECT_LT(real_from_json(elementwise(check_host(v, f))["rel_l2_error"]), 64 * std::ldexp(1.0, -24))
        << softmax::to_string(v);
}

// Rows r % 4 == 0 are offset by +80 and r % 4 == 2 by -120: there, f32 exp without the max subtraction
// overflows (the sum: inf) or underflows to 0; the max-subtracted variants are still correct there, and
// the unsubtracted formula fails the check.
TEST(Softmax, MaxSubtractionMatters) {
  const Inputs in = generate(4, 4096, DType::f32, kSeed);
  const float* x = static_cast<const float*>(in.data());
  float naive_sum0 = 0, max2 = -1e30f;
  for (int c = 0; c < 4096; ++c) {
    EXPECT_GE(x[c], 72.0f);
    EXPECT_LE(x[c], 88.0f);
    naive_sum0 += std::exp(x[c]);
    max2 = std::max(max2, x[2 * 4096 + c]);
  }
  EXPECT_TRUE(std::isinf(naive_sum0)) << "exp(x) summed over a +80 row overflows f32";
  EXPECT_EQ(std::exp(max2), 0.0f) << "exp(x) of a -120 row underflows to 0";
  for (Variant v : kVariants) EXPECT_TRUE(check_host(v, in).passed()) << softmax::to_string(v);
  // y = exp(x) / sum exp(x) without the max: NaN (inf / inf, 0 / 0) on the offset rows.
  std::vector<std::uint64_t> y(in.storage.size());
  float* yf = reinterpret_cast<float*>(y.data());
  for (int r = 0; r < 4; ++r) {
    float s = 0;
    for (int c = 0; c < 4096; ++c) s += std::exp(x[r * 4096 + c]);
    for (int c = 0; c < 4096; ++c) yf[r * 4096 + c] = std::exp(x[r * 4096 + c]) / s;
  }
  const Reference ref = reference(in);
  const CheckOutcome naive = compare(Variant::two_pass, in, y.data(), ref);
  EXPECT_FALSE(naive.passed());
  EXPECT_EQ(ratio(naive), std::numeric_limits<double>::infinity());
  EXPECT_GE(elementwise(naive)["mismatches"].get<std::int64_t>(), 2 * 4096);
  EXPECT_GE(elementwise(naive)["not_finite"].get<std::int64_t>(), 4096);  // 0 / 0 on the -120 row
  EXPECT_EQ(real_from_json(row_sum(naive)["worst_ratio"]), std::numeric_limits<double>::infinity());
}

// rel = (|t| + R + 11 ceil(log2 cols) + ceil(sqrt cols) + 20) u + k_s u_s; bound = scale (1.25 y rel + floor).
TEST(Softmax, ToleranceHandComputed) {
  const double u = std::ldexp(1.0, -24);
  const softmax::Tolerance t = softmax::tolerance(Variant::two_pass, DType::f32, 4096, 1.0);
  EXPECT_EQ(t.log_term, 11 * 12 + 64 + 20);
  EXPECT_EQ(t.k_s, 1);
  EXPECT_EQ(t.u_s, u);
  EXPECT_EQ(t.floor, std::ldexp(1.0, -147));
  EXPECT_DOUBLE_EQ(t.relative(3, 16), (3 + 16 + 216) * u + u);
  EXPECT_DOUBLE_EQ(t.bound(0.5, 3, 16), 1.25 * 0.5 * (236 * u) + std::ldexp(1.0, -147));
  const softmax::Tolerance b = softmax::tolerance(Variant::unfused, DType::bf16, 1, 2.0);
  EXPECT_EQ(b.log_term, 0 + 1 + 20);
  EXPECT_EQ(b.k_s, 4);
  EXPECT_EQ(b.u_s, std::ldexp(1.0, -8));
  EXPECT_EQ(b.floor, std::ldexp(1.0, -131));
  EXPECT_DOUBLE_EQ(b.bound(1.0, 0, 0), 2.0 * (1.25 * (21 * u + 4 * std::ldexp(1.0, -8)) + std::ldexp(1.0, -131)));
  // Non-power-of-two cols round log2 and sqrt up.
  EXPECT_EQ(softmax::tolerance(Variant::online, DType::f32, 1000, 1).log_term, 11 * 10 + 32 + 20);
  EXPECT_THROW(softmax::tolerance(Variant::online, DType::f16, 8, 1), std::invalid_argument);
}

// NaN never passes; one wrong element, an all-zero output, a row's values permuted, or a result off by 1% in
// f32 fail; the correct output passes with a value <= 1.
TEST(Softmax, CompareRejectsWrongOutputs) {
  const Inputs in = generate(8, 96, DType::f32, kSeed);
  const Reference ref = reference(in);
  const Variant v = Variant::online;
  const auto good = run_host(v, in);
  EXPECT_TRUE(compare(v, in, good.data(), ref).passed());
  auto bad = good;
  float* f = reinterpret_cast<float*>(bad.data());
  f[5 * 96 + 17] = std::numeric_limits<float>::quiet_NaN();
  CheckOutcome c = compare(v, in, bad.data(), ref);
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(ratio(c), std::numeric_limits<double>::infinity());
  EXPECT_EQ(elementwise(c)["mismatches"], 1);
  EXPECT_EQ(elementwise(c)["not_finite"], 1);
  EXPECT_EQ(elementwise(c)["worst_index"], 5 * 96 + 17);
  EXPECT_EQ(real_from_json(elementwise(c)["worst_row"]), 5);
  EXPECT_EQ(real_from_json(elementwise(c)["worst_col"]), 17);
  // The failure names the element, not "result inf vs reference 0".
  EXPECT_NE(describe_failure(c).find("y[497]"), std::string::npos) << describe_failure(c);
  bad = good;
  f[3] *= 1.01f;
  EXPECT_FALSE(compare(v, in, bad.data(), ref).passed());
  bad = good;
  std::swap(f[0], f[1]);
  EXPECT_FALSE(compare(v, in, bad.data(), ref).passed());
  std::vector<std::uint64_t> zeros(good.size(), 0);
  EXPECT_FALSE(compare(v, in, zeros.data(), ref).passed());
  std::vector<std::uint64_t> nan(good.size(), ~std::uint64_t{0});
  const CheckOutcome n = compare(v, in, nan.data(), ref);
  EXPECT_FALSE(n.passed());
  EXPECT_EQ(elementwise(n)["mismatches"], 8 * 96);
  // bf16: the bound is the output rounding (2^-8), and a 3% error fails.
  const Inputs h = generate(4, 64, DType::bf16, kSeed);
  const Reference href = reference(h);
  auto hy = run_host(Variant::two_pass, h);
  EXPECT_TRUE(compare(Variant::two_pass, h, hy.data(), href).passed());
  auto* hb = reinterpret_cast<std::uint16_t*>(hy.data());
  hb[10] = float_to_bf16(bf16_to_float(hb[10]) * 1.03f);
  EXPECT_FALSE(compare(Variant::two_pass, h, hy.data(), href).passed());
}

// The row-sum comparison: the worst row's sum (in double) against 1 with tolerance sum_c bound_c + cols 2^-52 /
// scale, so lab.tolerance_scale scales the element bounds (the lab applies it) but not the double summation's own
// rounding, as before the SDK; a row 0.1% high fails it, and it names the row.
TEST(Softmax, RowSumCheck) {
  const Inputs in = generate(4, 64, DType::f32, kSeed);
  const Reference ref = reference(in);
  const auto good = run_host(Variant::online, in);
  const CheckOutcome ok = compare(Variant::online, in, good.data(), ref);
  ASSERT_TRUE(ok.passed());
  const Json rs = row_sum(ok);
  EXPECT_EQ(rs["kind"], "scalar");
  EXPECT_EQ(rs["array"], "row_sum");
  EXPECT_EQ(real_from_json(rs["worst_reference"]), 1.0);
  EXPECT_EQ(real_from_json(rs["rows"]), 4);
  // Its tolerance at row r, by hand: the sum of the element bounds plus 64 2^-52.
  const std::int64_t r = static_cast<std::int64_t>(real_from_json(rs["row"]));
  const softmax::Tolerance tol = softmax::tolerance(Variant::online, DType::f32, 64, 1.0);
  double sum_bound = 0, sum = 0;
  for (int col = 0; col < 64; ++col) {
    const std::int64_t i = r * 64 + col;
    sum_bound += tol.bound(ref.array("y")[i], ref.array("max")[r] - in.value(i), ref.array("spread")[r]);
    sum += reinterpret_cast<const float*>(good.data())[i];
  }
  EXPECT_DOUBLE_EQ(real_from_json(rs["worst_bound"]), sum_bound + 64 * std::ldexp(1.0, -52));
  EXPECT_EQ(real_from_json(rs["worst_value"]), sum);
  const CheckOutcome scaled = compare(Variant::online, in, good.data(), ref, 4.0);
  EXPECT_DOUBLE_EQ(real_from_json(row_sum(scaled)["worst_bound"]), sum_bound + 64 * std::ldexp(1.0, -52) / 4.0);
  auto off = good;
  float* f = reinterpret_cast<float*>(off.data());
  for (int col = 0; col < 64; ++col) f[64 + col] = static_cast<float>(f[64 + col] * (1.0 + 1e-3));
  const CheckOutcome bad = compare(Variant::online, in, off.data(), ref);
  EXPECT_FALSE(bad.passed());
  EXPECT_GT(real_from_json(row_sum(bad)["worst_ratio"]), 1.0);
  EXPECT_EQ(real_from_json(row_sum(bad)["row"]), 1);
}

// N = 4096^2, s = 4: unfused reads 4 N s + 2 rows s and writes 2 N s + 2 rows s in 4 launches; two_pass and
// online read N s on chip; at cols 16384 two_pass reads 3 N s and online 2 N s; compulsory 2 N s; flop 5 N.
TEST(Softmax, CostModel) {
  softmax::Params p;
  p.rows = 4096;
  p.cols = 4096;
  p.dtype = DType::f32;
  const double n = 4096.0 * 4096.0;
  p.variant = Variant::unfused;
  Cost c = softmax::cost(p);
  EXPECT_EQ(c.bytes_read, 4 * n * 4 + 2 * 4096 * 4);
  EXPECT_EQ(c.bytes_written, 2 * n * 4 + 2 * 4096 * 4);
  EXPECT_EQ(c.launches, 4);
  EXPECT_EQ(c.host_syncs, 0);
  EXPECT_EQ(c.compulsory_bytes, 2 * n * 4);
  EXPECT_EQ(c.flop, 5 * n);
  for (Variant v : {Variant::two_pass, Variant::online}) {
    p.variant = v;
    c = softmax::cost(p);
    EXPECT_EQ(c.bytes_read, n * 4);
    EXPECT_EQ(c.bytes_written, n * 4);
    EXPECT_EQ(c.bytes, c.compulsory_bytes);
    EXPECT_EQ(c.launches, 1);
  }
  p.cols = 16384;
  p.rows = 1024;
  p.dtype = DType::bf16;
  p.variant = Variant::two_pass;
  EXPECT_EQ(softmax::cost(p).bytes_read, 3 * n * 2);
  p.variant = Variant::online;
  EXPECT_EQ(softmax::cost(p).bytes_read, 2 * n * 2);
  EXPECT_EQ(softmax::cost(p).compulsory_bytes, 2 * n * 2);
  p.cols = softmax::kOnChipCols;
  EXPECT_EQ(softmax::cost(p).bytes_read, 1024.0 * softmax::kOnChipCols * 2);
  // The working set (the lab's estimate, from the arrays): x and y, plus e, m and s for unfused.
  EXPECT_EQ(experiment().estimate(point("unfused", 1024, 8192, "bf16")).working_set_bytes,
            3 * 1024.0 * 8192 * 2 + 2 * 1024.0 * 2);
  EXPECT_EQ(experiment().estimate(point("online", 1024, 8192, "bf16")).working_set_bytes, 2 * 1024.0 * 8192 * 2);
  // Through the lab's cost (the SDK fills peak_work_bytes from the arrays: y, and unfused's e, m and s).
  const Cost lab = sdk()->cost(Args(point("unfused", 4096, 4096, "f32")), Reference{});
  EXPECT_EQ(lab.bytes_read, 4 * n * 4 + 2 * 4096 * 4);
  EXPECT_EQ(lab.peak_work_bytes, 2 * n * 4 + 2 * 4096 * 4);
}

// The generator is a pure function of (rows, cols, dtype, seed); values are offset(r) + [-8, 8), not constant.
TEST(Softmax, GenerateIsReproducibleSeededAndOffset) {
  for (DType t : kDTypes) {
    const Inputs a = generate(16, 300, t, kSeed);
    const Inputs b = generate(16, 300, t, kSeed);
    const Inputs c = generate(16, 300, t, kSeed + 1);
    EXPECT_EQ(a.storage, b.storage);
    EXPECT_NE(a.storage, c.storage);
    std::set<double> distinct;
    for (std::int64_t r = 0; r < 16; ++r)
      for (std::int64_t col = 0; col < 300; ++col) {
        const double v = a.value(r * 300 + col) - softmax::row_offset(r);
        EXPECT_GE(v, -8.0 - 0.5);
        EXPECT_LE(v, 8.0 + 0.5);  // bf16 rounding of values near +-88
        distinct.insert(a.value(r * 300 + col));
      }
    EXPECT_GT(distinct.size(), 100u) << to_string(t);
  }
  EXPECT_EQ(softmax::row_offset(0), 80.0);
  EXPECT_EQ(softmax::row_offset(1), 0.0);
  EXPECT_EQ(softmax::row_offset(2), -120.0);
  EXPECT_EQ(softmax::row_offset(7), 0.0);
  EXPECT_THROW(generate(2, 2, DType::f16, kSeed), std::invalid_argument);
  EXPECT_EQ(generate(0, 5, DType::f32, kSeed).elements(), 0);
}

// The generator's values are those drawn before the SDK, bit for bit: x[i] = row_offset(i / cols) +
// (16 u - 8), u = unit_interval(splitmix64(seed ^ splitmix64(i))), rounded to the dtype once.
TEST(Softmax, GeneratorValuesAreThoseBeforeTheSdk) {
  for (DType t : kDTypes) {
    const Inputs in = generate(6, 37, t, kSeed);
    for (std::int64_t i = 0; i < in.elements(); ++i) {
      const std::uint64_t h = splitmix64(kSeed ^ splitmix64(static_cast<std::uint64_t>(i)));
      const float v = static_cast<float>(softmax::row_offset(i / 37) + (16.0 * unit_interval(h) - 8.0));
      ASSERT_EQ(in.value(i), t == DType::f32 ? static_cast<double>(v) : bf16_to_float(float_to_bf16(v))) << i;
    }
  }
}

// The input seed depends on the shape and dtype, not on the variant; the lab shares one set across variants.
TEST(Softmax, InputSeedAndCache) {
  auto seed = [](const Point& p, std::uint64_t lab) { return sdk()->input_seed(Args(p), lab); };
  const std::uint64_t s = seed(point("two_pass", 4, 8, "f32"), kSeed);
  EXPECT_EQ(seed(point("unfused", 4, 8, "f32", "graph"), kSeed), s);
  EXPECT_NE(seed(point("unfused", 4, 9, "f32"), kSeed), s);
  EXPECT_NE(seed(point("unfused", 4, 8, "bf16"), kSeed), s);
  EXPECT_NE(seed(point("unfused", 4, 8, "f32"), kSeed + 1), s);
  const auto a = sdk()->inputs(Args(point("unfused", 4, 8, "bf16")), kSeed);
  EXPECT_EQ(sdk()->inputs(Args(point("online", 4, 8, "bf16")), kSeed), a);
  const auto r = sdk()->reference(Args(point("unfused", 4, 8, "bf16")), kSeed);
  EXPECT_EQ(sdk()->reference(Args(point("online", 4, 8, "bf16", "graph")), kSeed), r);
  EXPECT_NE(sdk()->inputs(Args(point("online", 5, 8, "bf16")), kSeed), a);
}

// The SDK draws the seeds softmax drew before it: the pre-SDK key "softmax/ROWSxCOLS/DTYPE", so results from then
// compare point for point.
TEST(Softmax, InputSeedsAreThoseBeforeTheSdk) {
  EXPECT_EQ(sdk()->input_seed(Args(point("two_pass", 4, 8, "f32")), kSeed),
            splitmix64(kSeed ^ fnv1a64("softmax/4x8/f32")));
  EXPECT_EQ(sdk()->input_seed(Args(point_of_elements("online", 1 << 24, 4096, "bf16", "graph")), 3),
            splitmix64(3 ^ fnv1a64("softmax/4096x4096/bf16")));
  // ... and the generator at that seed gives the old inputs: the first element of the 4096 x 4096 f32 set.
  const std::uint64_t s = splitmix64(kSeed ^ fnv1a64("softmax/4x8/f32"));
  const auto in = sdk()->inputs(Args(point("unfused", 4, 8, "f32")), kSeed);
  const float x0 = static_cast<float>(80.0 + (16.0 * unit_interval(splitmix64(s ^ splitmix64(0))) - 8.0));
  EXPECT_EQ(in->arrays()["x"].value(0), x0);
}

// The axes are elements and cols; rows = elements / cols is derived, and an elements that is not a multiple of
// cols is not_supported for every variant (never rounded), and an error for params_of.
TEST(Softmax, RowsAreDerivedFromElements) {
  const RegisteredExperiment& e = experiment();
  std::set<std::string> axes;
  for (const auto& a : e.axes) axes.insert(a.name);
  EXPECT_TRUE(axes.count("elements"));
  EXPECT_TRUE(axes.count("cols"));
  EXPECT_FALSE(axes.count("rows"));
  EXPECT_EQ(e.size_axis, "cols");
  const softmax::Params p = softmax::params_of(Args(point_of_elements("online", 12 * 100, 100, "f32")));
  EXPECT_EQ(p.rows, 12);
  EXPECT_EQ(p.cols, 100);
  EXPECT_EQ(p.elements(), 1200);
  const Point odd = point_of_elements("online", 1201, 100, "f32");
  EXPECT_FALSE(softmax::shape_unsupported(Args(point_of_elements("online", 1200, 100, "f32"))));
  ASSERT_TRUE(softmax::shape_unsupported(Args(odd)));
  EXPECT_NE(softmax::shape_unsupported(Args(odd))->find("not a multiple of cols"), std::string::npos);
  EXPECT_THROW(softmax::params_of(Args(odd)), std::invalid_argument);
  for (Variant v : kVariants) {
    const Json rec = run(point_of_elements(softmax::to_string(v), 1201, 100, "f32"));
    EXPECT_EQ(rec["status"], "not_supported") << rec.dump();
    EXPECT_NE(rec["reason"].get<std::string>().find("1201 is not a multiple of cols = 100"), std::string::npos)
        << rec["reason"];
  }
}

// Every point of configs/softmax.yaml validates, and the exclude rules leave exactly the sweep the config
// describes: elements = 2^24 for cols 64..262144, elements 2^20..2^26 (rows 256..16384) at cols 4096, cold L2
// only at 4096 x 4096.
TEST(Softmax, ConfigPointsAreTheDescribedSweep) {
  const SweepConfig config = load_config(std::string(LABRUN_SOURCE_DIR) + "/configs/softmax.yaml", builtin());
  EXPECT_EQ(config.lab.processes, 3);
  EXPECT_EQ(config.lab.interleave, 6);
  const auto points = expand(config, experiment());
  EXPECT_EQ(points.size(), 240u);
  std::set<std::pair<std::int64_t, std::int64_t>> shapes;
  for (const Point& p : points) {
    const softmax::Params sp = softmax::params_of(Args(p));
    EXPECT_EQ(sp.elements(), p.integer("elements")) << p.label();
    const bool diagonal = p.integer("elements") == (std::int64_t{1} << 24);
    const bool rows_sweep = sp.cols == 4096 && sp.rows >= 256 && sp.rows <= 16384;
    EXPECT_TRUE(diagonal || rows_sweep) << p.label();
    if (p.word("l2") == "cold") EXPECT_TRUE(sp.rows == 4096 && sp.cols == 4096) << p.label();
    shapes.insert({sp.rows, sp.cols});
  }
  EXPECT_EQ(shapes.size(), 19u);
  for (int k = 6; k <= 18; ++k) EXPECT_TRUE(shapes.count({(1 << 24) >> k, 1 << k})) << "cols 2^" << k;
  for (int k = 8; k <= 14; ++k) EXPECT_TRUE(shapes.count({1 << k, 4096})) << "rows 2^" << k;
  // Points are grouped as the interleave assumes: 6 consecutive points share shape, dtype and l2.
  test::expect_groups_of(points, 6, {"cols", "elements", "dtype", "l2"});
  ASSERT_TRUE(config.hypothesis.is_array());
  EXPECT_EQ(config.hypothesis.size(), 2u);
}

// Through the lab pass on the host backend: every variant is "ok" at a small point (correctness passed, cost
// recorded); graph mode is not supported on the host; a working set above lab.host_max_bytes is skipped.
TEST(Softmax, RunPointOnHost) {
  for (const char* dtype : {"f32", "bf16"})
    for (Variant v : kVariants) {
      const Json rec = run(point(softmax::to_string(v), 12, 100, dtype));
      ASSERT_EQ(rec["status"], "ok") << rec.dump();
      EXPECT_EQ(rec["correctness"]["passed"], true);
      EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], true);
      EXPECT_LE(real_from_json(rec["correctness"]["detail"]["checks"][0]["worst_ratio"]), 1.0);
      EXPECT_LE(real_from_json(rec["correctness"]["detail"]["checks"][1]["worst_ratio"]), 1.0);
      EXPECT_EQ(real_from_json(rec["cost"]["compulsory_bytes"]), 2 * 1200.0 * (std::string(dtype) == "f32" ? 4 : 2));
    }
  const Json graph = run(point("online", 4, 64, "f32", "graph"));
  EXPECT_EQ(graph["status"], "not_supported");
  const LabSettings lab = test::host_max_bytes_lab(2 * 64 * 64 * 4,  // x and y of 64 x 64 f32, exactly
                                                   experiment(), point("online", 64, 64, "f32"),
                                                   point("online", 65, 64, "f32"));
  EXPECT_EQ(run(point("unfused", 64, 64, "f32"), lab)["status"], "skipped") << "unfused also holds e, m and s";
}

}  // namespace
}  // namespace labrun
