// Tests of the layout experiment on the host (suites LayoutExp*; tests/test_repository_rules.cpp is the house-rules
// test, about something else): views and torch's contiguity rule, the input generator, every host variant against the
// float64 reference (hand-computed transposes, tails, odd and one-row or one-column shapes, empty shapes: case
// C04), the transposes bit-exact and the broadcast pair bit-identical, the comparison catching one flipped bit
// and never passing NaN (case C07), the tolerance's numbers, the cost model's bytes, every point of
// configs/layout.yaml, and point dispositions through run_point on the host backend. layout is an SDK experiment:
// the checks here are its ExperimentDef::check as the lab runs it (tests/layout_test.hpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <labrun/counter_rng.hpp>

#include "config.hpp"
#include "host_backend.hpp"
#include "lab.hpp"
#include "host_check_test.hpp"
#include "layout_test.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sweep.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using namespace test_layout;

const RegisteredExperiment& experiment() { return *test::builtin().find("layout"); }

/// Element i of a buffer of the dtype, decoded to double.
double value_at(const void* data, DType t, std::int64_t i) {
  if (t == DType::bf16) return bf16_to_float(static_cast<const std::uint16_t*>(data)[i]);
  return static_cast<const float*>(data)[i];
}

using test::quick_lab;

Json run(const Point& p, const LabSettings& lab = quick_lab()) { return test::run_on_host(p, experiment(), lab); }

// ---- views -----------------------------------------------------------------------------------------------------

// torch's rule: row-major strides are contiguous; a transpose or a broadcast with more than one row and column is
// not; size-1 dimensions do not count (a one-row matrix's transpose is contiguous), an empty view is contiguous.
TEST(LayoutExpView, ContiguityFollowsTorchsRule) {
  int buf[64] = {};
  const Strided x = Strided::contiguous_of(buf, DType::f32, 3, 5);
  EXPECT_EQ(x.row_stride, 5);
  EXPECT_EQ(x.col_stride, 1);
  EXPECT_TRUE(x.is_contiguous());
  const Strided t = x.transposed();
  EXPECT_EQ(t.rows, 5);
  EXPECT_EQ(t.cols, 3);
  EXPECT_EQ(t.row_stride, 1);
  EXPECT_EQ(t.col_stride, 5);
  EXPECT_EQ(t.data, x.data) << "a transpose is a view: no data moves";
  EXPECT_FALSE(t.is_contiguous());
  EXPECT_TRUE(t.transposed().is_contiguous());
  EXPECT_TRUE(Strided::contiguous_of(buf, DType::f32, 1, 7).transposed().is_contiguous());
  EXPECT_TRUE(Strided::contiguous_of(buf, DType::f32, 7, 1).transposed().is_contiguous());
  const Strided b = Strided::broadcast_rows(buf, DType::bf16, 4, 6);
  EXPECT_EQ(b.row_stride, 0);
  EXPECT_FALSE(b.is_contiguous());
  EXPECT_TRUE(Strided::broadcast_rows(buf, DType::bf16, 1, 6).is_contiguous());
  EXPECT_TRUE(Strided::contiguous_of(nullptr, DType::f32, 0, 9).transposed().is_contiguous());
  // .contiguous() without a copy: the same view (same buffer) or nothing.
  const auto same = layout::contiguous_without_copy(x);
  ASSERT_TRUE(same.has_value());
  EXPECT_EQ(same->data, static_cast<const void*>(buf));
  EXPECT_FALSE(layout::contiguous_without_copy(t).has_value());
  EXPECT_FALSE(layout::contiguous_without_copy(b).has_value());
}

// ---- inputs ------------------------------------------------------------------------------------------------------

// draw_value builds an f32 from the bits: sign from bit 0, exponent 2^-4 + (bits 61..63), fraction bits 29..51.
TEST(LayoutExpGenerate, DrawValueBits) {
  EXPECT_EQ(layout::draw_value(0), 0x1.0p-4f);
  EXPECT_EQ(layout::draw_value(1), -0x1.0p-4f);
  EXPECT_EQ(layout::draw_value(std::uint64_t{7} << 61), 8.0f);
  EXPECT_EQ(layout::draw_value((std::uint64_t{4} << 61) | (std::uint64_t{1} << 51)), 1.5f);
  EXPECT_EQ(layout::draw_value((std::uint64_t{3} << 61) | (std::uint64_t{1} << 51)), 0.75f);
  EXPECT_EQ(layout::draw_value(~std::uint64_t{0}), -std::nextafter(16.0f, 0.0f));
}

// Reproducible per seed, never zero, |v| in [2^-4, 2^4] (bf16 may round up to 16), bias from its own stream, bf16
// the nearest-even rounding of the f32 draw.
TEST(LayoutExpGenerate, ReproducibleRangeAndSeeds) {
  for (DType t : kDTypes) {
    const Inputs a = generate(37, 53, t, kSeed), b = generate(37, 53, t, kSeed);
    EXPECT_EQ(a.x_storage, b.x_storage);
    EXPECT_EQ(a.bias_storage, b.bias_storage);
    const Inputs c = generate(37, 53, t, kSeed + 1);
    EXPECT_NE(a.x_storage, c.x_storage);
    std::set<double> distinct;
    for (std::int64_t i = 0; i < a.elements(); ++i) {
      const double v = std::fabs(a.x_value(i));
      ASSERT_GE(v, 0x1.0p-4);
      ASSERT_LE(v, 16.0);
      distinct.insert(a.x_value(i));
    }
    EXPECT_GT(distinct.size(), 1000u) << "values distinct enough for a misplaced element to show";
    std::int64_t same_as_row0 = 0;
    for (std::int64_t j = 0; j < a.cols; ++j) {
      ASSERT_GE(std::fabs(a.bias_value(j)), 0x1.0p-4);
      same_as_row0 += a.bias_value(j) == a.x_value(j);
    }
    EXPECT_LT(same_as_row0, 3) << "bias is not x's first row";
  }
  const Inputs f = generate(5, 7, DType::f32, kSeed), h = generate(5, 7, DType::bf16, kSeed);
  for (std::int64_t i = 0; i < f.elements(); ++i)
    EXPECT_EQ(h.x_value(i), bf16_to_float(float_to_bf16(static_cast<float>(f.x_value(i)))));
}

// The SDK shares one input set across the variants of a shape (inputs_depend_on rows, cols, dtype).
TEST(LayoutExpGenerate, CacheSharesInputsAcrossVariants) {
  auto in = sdk()->inputs(Args(point("transpose_naive", 40, 30, "f32")), kSeed);
  EXPECT_EQ(sdk()->inputs(Args(point("repeat_materialized", 40, 30, "f32", "graph")), kSeed), in);
  EXPECT_NE(sdk()->inputs(Args(point("repeat_materialized", 40, 31, "f32")), kSeed), in);
  const Point p = point("repeat_materialized", 40, 31, "f32");
  EXPECT_NE(sdk()->input_seed(Args(p), kSeed), sdk()->input_seed(Args(p), kSeed + 1));
}

// The SDK draws the seeds layout drew before it: the pre-SDK key "layout/ROWSxCOLS/DTYPE", so results from then
// compare point for point; and the inputs it generates from them are the generator's, bit for bit.
TEST(LayoutExpGenerate, InputSeedsAreThoseBeforeTheSdk) {
  test::expect_pre_sdk_seeds(*sdk(),
                             {{point("transpose_tiled", 1024, 4096, "f32"), kSeed, "layout/1024x4096/f32"},
                              {point("contiguous_noop", 8191, 4097, "bf16", "graph"), 3, "layout/8191x4097/bf16"}});
  const Inputs want = generate(37, 53, DType::bf16, test::pre_sdk_seed(kSeed, "layout/37x53/bf16"));
  test::expect_input_bytes(*sdk(), point("broadcast_view", 37, 53, "bf16"), kSeed,
                           {{"x", want.x(), want.x_bytes()}, {"bias", want.bias(), want.bias_bytes()}});
}

// ---- host variants -------------------------------------------------------------------------------------------------

// A 2 x 3 matrix by hand: the transposes give [[1, 4], [2, 5], [3, 6]]; x + bias with bias (10, 20, 30) gives
// [[11, 22, 33], [14, 25, 36]]; the no-op returns x's own buffer.
TEST(LayoutExpHost, HandComputed) {
  for (DType t : kDTypes) {
    const Inputs in = inputs_of(2, 3, {1, 2, 3, 4, 5, 6}, {10, 20, 30}, t);
    for (Variant v : {Variant::transpose_naive, Variant::transpose_tiled}) {
      const auto [out, repeated, view] = run_host(v, in);
      EXPECT_EQ(view.rows, 3);
      EXPECT_EQ(view.cols, 2);
      const double want[] = {1, 4, 2, 5, 3, 6};
      for (int i = 0; i < 6; ++i) EXPECT_EQ(value_at(out.data(), t, i), want[i]) << layout::to_string(v) << " " << i;
    }
    for (Variant v : {Variant::broadcast_view, Variant::repeat_materialized}) {
      const auto [out, repeated, view] = run_host(v, in);
      const double want[] = {11, 22, 33, 14, 25, 36};
      for (int i = 0; i < 6; ++i) EXPECT_EQ(value_at(out.data(), t, i), want[i]) << layout::to_string(v) << " " << i;
    }
    const auto [out, repeated, view] = run_host(Variant::contiguous_noop, in);
    EXPECT_EQ(view.data, in.x());
    EXPECT_TRUE(view.is_contiguous());
    EXPECT_EQ(out[0], ~std::uint64_t{0}) << "the no-op writes nothing";
  }
}

// Shapes with tails in every 32 x 32 tile, one-row and one-column matrices, primes, and sizes past one tile.
const std::pair<std::int64_t, std::int64_t> kShapes[] = {{1, 1},   {1, 37},  {37, 1},    {2, 2},   {31, 33},
                                                         {33, 65}, {64, 64}, {100, 3},   {3, 100}, {257, 129},
                                                         {96, 97}, {97, 96}, {511, 1025}};

// Every host variant x dtype x shape against the float64 reference, every element: the copies bit-exact (value =
// mismatches = 0), the sums within the bound and correctly rounded (the f32 sum of the generator's values is the
// exact sum rounded once).
TEST(LayoutExpHost, EveryVariantMatchesTheReference) {
  const auto inputs = [](std::int64_t rows, std::int64_t cols, DType t) {
    return generate(rows, cols, t, kSeed + static_cast<std::uint64_t>(rows * 1000 + cols));
  };
  const auto check = [](Variant v, const Inputs& in) { return check_host(v, in); };
  const auto as_documented = [](const CheckOutcome& c, Variant v, std::int64_t rows, std::int64_t cols) {
    EXPECT_EQ(test::detail_of(c)["mismatches"], 0);
    EXPECT_EQ(test::detail_of(c)["compared"], rows * cols);
    if (layout::is_broadcast(v)) {
      EXPECT_EQ(test::detail_of(c)["kind"], "elementwise");
      EXPECT_EQ(test::detail_of(c)["not_finite"], 0);
      EXPECT_EQ(test::detail_of(c)["not_correctly_rounded"], 0);
      EXPECT_LE(c.reported() ? c.reported()->worst : 0.0, 1.0);
      EXPECT_EQ(real_from_json(test::detail_of(c)["tolerance_scale"]), 1.0);
    } else {
      EXPECT_EQ(test::detail_of(c)["kind"], "exact") << "bit-exact: no tolerance";
      EXPECT_EQ(c.reported() ? c.reported()->worst : 0.0, 0.0);
    }
    if (v == Variant::repeat_materialized) {
      const Json r = comparison(test::detail_of(c), "exact");
      EXPECT_EQ(r["array"], "repeated");
      EXPECT_EQ(r["mismatches"], 0);
      EXPECT_EQ(r["compared"], rows * cols);
    }
    if (v == Variant::contiguous_noop) {
      EXPECT_TRUE(same_buffer(test::detail_of(c))) << test::detail_of(c).dump();
    }
  };
  test::expect_host_checks(kDTypes, kShapes, kVariants, inputs, check, as_documented);
}

// The naive and tiled transposes give the same bits; so do the broadcast view and the materialised repeat (the same
// consumer over the same values); and the f32 sums are not trivially exact (some round).
TEST(LayoutExpHost, PairsOfVariantsAreBitIdentical) {
  for (DType t : kDTypes) {
    const Inputs in = generate(97, 131, t, kSeed);
    const std::size_t bytes = in.x_bytes();
    const auto naive = run_host(Variant::transpose_naive, in).out;
    const auto tiled = run_host(Variant::transpose_tiled, in).out;
    EXPECT_EQ(std::memcmp(naive.data(), tiled.data(), bytes), 0) << to_string(t);
    const auto view = run_host(Variant::broadcast_view, in).out;
    const auto rep = run_host(Variant::repeat_materialized, in).out;
    EXPECT_EQ(std::memcmp(view.data(), rep.data(), bytes), 0) << to_string(t);
    const CheckOutcome c = compare(Variant::broadcast_view, in, view.data(), 1.0);
    EXPECT_GT(real_from_json(test::detail_of(c)["max_abs_error"]), 0.0) << "some sums round: the bound is exercised";
  }
}

// Case C04: rows or cols 0 (or both): every variant's result is exact (no element), compare passes with 0
// elements, and the cost model has no launch and no byte.
TEST(LayoutExpHost, C04_EmptyShapes) {
  for (DType t : kDTypes)
    for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{0, 0}, {0, 17}, {17, 0}})
      for (Variant v : kVariants) {
        SCOPED_TRACE(std::string(layout::to_string(v)) + " " + std::to_string(rows) + "x" + std::to_string(cols));
        const Inputs in = generate(rows, cols, t, kSeed);
        const auto [out, repeated, view] = run_host(v, in);
        EXPECT_EQ(view.rows * view.cols, 0);
        const void* got = v == Variant::contiguous_noop ? view.data : out.data();
        const CheckOutcome c = compare(v, in, got, 1.0, repeated.data());
        EXPECT_TRUE(c.passed());
        EXPECT_EQ(c.reported() ? c.reported()->worst : 0.0, 0.0);
        EXPECT_EQ(test::detail_of(c)["mismatches"], 0);
        EXPECT_EQ(test::detail_of(c)["compared"], 0);
        const Cost cost = layout::cost(v, rows, cols, t);
        EXPECT_EQ(cost.launches, 0.0);
        EXPECT_EQ(cost.bytes, 0.0);
        EXPECT_EQ(cost.peak_work_bytes, 0.0);
      }
}

// ---- the comparison ----------------------------------------------------------------------------------------------

// One flipped bit (a mantissa bit, or only the sign of a value) in one element of a transpose is caught, with its
// row and column; a transposed-back (untransposed) output of a non-square matrix fails almost everywhere.
TEST(LayoutExpCompare, CopiesAreBitExact) {
  for (DType t : kDTypes) {
    const Inputs in = generate(33, 65, t, kSeed);
    auto [out, repeated, view] = run_host(Variant::transpose_tiled, in);
    const std::int64_t j = 40, i = 7, o = j * 33 + i;  // out[40][7] = x[7][40]
    for (std::uint32_t flip : {1u, t == DType::f32 ? 0x80000000u : 0x8000u}) {
      auto bad = out;
      if (t == DType::f32) reinterpret_cast<std::uint32_t*>(bad.data())[o] ^= flip;
      else reinterpret_cast<std::uint16_t*>(bad.data())[o] ^= static_cast<std::uint16_t>(flip);
      const CheckOutcome c = compare(Variant::transpose_tiled, in, bad.data(), 1e30);
      EXPECT_FALSE(c.passed()) << "a tolerance scale does not loosen a copy";
      EXPECT_EQ(test::detail_of(c)["mismatches"], 1);
      EXPECT_EQ(test::detail_of(c)["worst_index"], o) << "the first mismatch: out[" << j << "][" << i << "]";
      EXPECT_EQ(test::detail_of(c)["worst_index"].get<std::int64_t>() / 33, j);
      EXPECT_EQ(test::detail_of(c)["worst_index"].get<std::int64_t>() % 33, i);
    }
    const CheckOutcome wrong = compare(Variant::transpose_naive, in, in.x(), 1.0);
    EXPECT_FALSE(wrong.passed());
    EXPECT_GT(test::detail_of(wrong)["mismatches"].get<std::int64_t>(), 0.9 * 33 * 65);
    // The no-op's check against x itself passes; against the transpose it fails.
    EXPECT_TRUE(compare(Variant::contiguous_noop, in, in.x(), 1.0).passed());
    EXPECT_FALSE(compare(Variant::contiguous_noop, in, out.data(), 1.0).passed());
    // A buffer holding x's bits that is not x's own (a copy) fails too: the no-op must not copy.
    const std::vector<std::uint64_t> copy = in.x_storage;
    const CheckOutcome copied = compare(Variant::contiguous_noop, in, copy.data(), 1.0);
    EXPECT_FALSE(copied.passed());
    EXPECT_FALSE(same_buffer(test::detail_of(copied)));
    EXPECT_EQ(comparison(test::detail_of(copied), "exact")["mismatches"], 0) << "the bits are x's";
  }
}

// The bound: (u + u_s + u u_s)|ref| with u = 2^-24 and u_s = 0 (f32) or 2^-8 (bf16); 0 at ref = 0.
TEST(LayoutExpCompare, ToleranceNumbers) {
  EXPECT_EQ(layout::add_bound(DType::f32, 1.0), 0x1.0p-24);
  EXPECT_EQ(layout::add_bound(DType::f32, -3.0), 3 * 0x1.0p-24);
  EXPECT_EQ(layout::add_bound(DType::bf16, 2.0), 2 * (0x1.0p-24 + 0x1.0p-8 + 0x1.0p-32));
  EXPECT_EQ(layout::add_bound(DType::bf16, 0.0), 0.0);
  EXPECT_EQ(layout::add_reference(1.5, -0.25), 1.25);
}

// Case C07: the poison (all-ones bits: NaN), a NaN or an inf in one element never passes, whatever the tolerance
// scale; an error of one unit in the last place of the dtype fails (bf16: 2^-7 relative at 1, over the bound's
// 2^-8), while an f32 error within the bound passes with its ratio.
TEST(LayoutExpCompare, C07_NaNAndTheBound) {
  for (DType t : kDTypes) {
    const Inputs in = inputs_of(2, 2, {1, 2, 3, 4}, {0.5f, 0.25f}, t);  // sums 1.5, 2.25, 3.5, 4.25: exact
    const std::vector<std::uint64_t> poison(4, ~std::uint64_t{0});
    const CheckOutcome p = compare(Variant::broadcast_view, in, poison.data(), 1e300);
    EXPECT_FALSE(p.passed());
    EXPECT_EQ(test::detail_of(p)["not_finite"], 4);
    auto [out, repeated, view] = run_host(Variant::broadcast_view, in);
    const CheckOutcome ok = compare(Variant::broadcast_view, in, out.data(), 1.0);
    EXPECT_TRUE(ok.passed());
    EXPECT_EQ(real_from_json(test::detail_of(ok)["worst_ratio"]), 0.0);
    const std::vector<std::uint64_t> rep = run_host(Variant::repeat_materialized, in).repeated;
    for (float bad : {std::nanf(""), INFINITY}) {
      auto o = out;
      if (t == DType::f32) reinterpret_cast<float*>(o.data())[2] = bad;
      else reinterpret_cast<std::uint16_t*>(o.data())[2] = float_to_bf16(bad);
      const CheckOutcome c = compare(Variant::repeat_materialized, in, o.data(), 1e300, rep.data());
      EXPECT_FALSE(c.passed());
      EXPECT_EQ(test::detail_of(c)["not_finite"], 1);
    }
    auto o = out;  // element 0: 1.5 + one ulp of the dtype
    if (t == DType::f32) reinterpret_cast<float*>(o.data())[0] = std::nextafter(1.5f, 2.0f);
    else reinterpret_cast<std::uint16_t*>(o.data())[0] += 1;
    const CheckOutcome c = compare(Variant::broadcast_view, in, o.data(), 1.0);
    const double ulp = t == DType::f32 ? 0x1.0p-23 : 0x1.0p-7;
    const double ratio = ulp / layout::add_bound(t, 1.5);
    EXPECT_DOUBLE_EQ(c.reported() ? c.reported()->worst : 0.0, ratio);
    EXPECT_FALSE(c.passed()) << "one ulp at 1.5 is over u|1.5| in either dtype";
    EXPECT_EQ(test::detail_of(c)["worst_index"], 0) << "row 0, col 0";
    EXPECT_EQ(test::detail_of(c)["not_correctly_rounded"], 1);
    EXPECT_TRUE(compare(Variant::broadcast_view, in, o.data(), 2 * ratio).passed()) << "tolerance_scale";
    // The repeat's R is checked bit for bit: a poisoned (unwritten) R fails, a stale-free one passes.
    const std::vector<std::uint64_t> unwritten(rep.size(), ~std::uint64_t{0});
    EXPECT_FALSE(compare(Variant::repeat_materialized, in, out.data(), 1.0, unwritten.data()).passed());
    EXPECT_TRUE(compare(Variant::repeat_materialized, in, out.data(), 1.0, rep.data()).passed());
  }
}

// bf16: the f32 sum of two generator values is exact, so y is the exact sum rounded to nearest even once; checked
// element by element against float_to_bf16 of the double reference (ties included: 1 + 2^-8 rounds to 1).
TEST(LayoutExpCompare, Bf16RoundsOnceToNearestEven) {
  const Inputs tie = inputs_of(1, 2, {1.0f, 1.0f}, {0x1.0p-8f, 0x3.0p-8f}, DType::bf16);
  const auto out = run_host(Variant::broadcast_view, tie).out;
  EXPECT_EQ(value_at(out.data(), DType::bf16, 0), 1.0) << "a tie rounds to the even neighbour";
  EXPECT_EQ(value_at(out.data(), DType::bf16, 1), 1.015625) << "1 + 3 2^-8 is a tie too: to even 1 + 2^-6";
  const Inputs in = generate(64, 96, DType::bf16, kSeed);
  const auto y = run_host(Variant::repeat_materialized, in).out;
  for (std::int64_t i = 0; i < in.elements(); ++i) {
    const double ref = in.x_value(i) + in.bias_value(i % in.cols);
    ASSERT_EQ(static_cast<double>(static_cast<float>(ref)), ref) << "the f32 sum is exact";
    ASSERT_EQ(value_at(y.data(), DType::bf16, i), bf16_to_float(float_to_bf16(static_cast<float>(ref)))) << i;
  }
}

// ---- cost model --------------------------------------------------------------------------------------------------

// A 3 x 5 matrix (N = 15): the formulas of layout.hpp with numbers; repeat_materialized − broadcast_view is
// exactly one N·s write and one N·s read.
TEST(LayoutExpCost, Numbers) {
  for (DType t : kDTypes) {
    const double s = static_cast<double>(dtype_bytes(t)), n = 15, b = 5 * s;
    auto cost_of = [&](Variant v) {
      const Cost c = layout::cost(v, 3, 5, t);
      // The lab's cost of the point is the model's (the SDK fills nothing the model sets).
      const Cost lab = sdk()->cost(Args(point(layout::to_string(v), 3, 5, to_string(t))), Reference{});
      EXPECT_EQ(lab.bytes, c.bytes);
      EXPECT_EQ(lab.peak_work_bytes, c.peak_work_bytes);
      return c;
    };
    const Cost noop = cost_of(Variant::contiguous_noop);
    EXPECT_EQ(noop.bytes, 0.0);
    EXPECT_EQ(noop.compulsory_bytes, 0.0);
    EXPECT_EQ(noop.launches, 0.0);
    EXPECT_EQ(noop.host_syncs, 0.0);
    EXPECT_EQ(noop.peak_work_bytes, 0.0);
    for (Variant v : {Variant::transpose_naive, Variant::transpose_tiled}) {
      const Cost c = cost_of(v);
      EXPECT_EQ(c.bytes_read, n * s);
      EXPECT_EQ(c.bytes_written, n * s);
      EXPECT_EQ(c.compulsory_bytes, 2 * n * s);
      EXPECT_EQ(c.flop, 0.0);
      EXPECT_EQ(c.launches, 1.0);
      EXPECT_EQ(c.host_syncs, 0.0);
      EXPECT_EQ(c.peak_work_bytes, n * s);
    }
    const Cost view = cost_of(Variant::broadcast_view);
    EXPECT_EQ(view.bytes_read, n * s + b);
    EXPECT_EQ(view.bytes_written, n * s);
    EXPECT_EQ(view.compulsory_bytes, 2 * n * s + b);
    EXPECT_EQ(view.flop, n);
    EXPECT_EQ(view.launches, 1.0);
    EXPECT_EQ(view.peak_work_bytes, n * s);
    const Cost rep = cost_of(Variant::repeat_materialized);
    EXPECT_EQ(rep.bytes_read, 2 * n * s + b);
    EXPECT_EQ(rep.bytes_written, 2 * n * s);
    EXPECT_EQ(rep.compulsory_bytes, view.compulsory_bytes) << "the same computation";
    EXPECT_EQ(rep.flop, n);
    EXPECT_EQ(rep.launches, 2.0);
    EXPECT_EQ(rep.peak_work_bytes, 2 * n * s);
    EXPECT_EQ(rep.bytes_read - view.bytes_read, n * s);
    EXPECT_EQ(rep.bytes_written - view.bytes_written, n * s);
    // Working set (the lab's estimate, from the arrays): x and bias, plus the peak work.
    auto working_set = [&](Variant v) {
      return experiment().estimate(point(layout::to_string(v), 3, 5, to_string(t))).working_set_bytes;
    };
    EXPECT_EQ(working_set(Variant::repeat_materialized), n * s + b + 2 * n * s);
    EXPECT_EQ(working_set(Variant::contiguous_noop), n * s + b);
    EXPECT_EQ(working_set(Variant::transpose_naive), n * s + b + n * s);
    EXPECT_EQ(working_set(Variant::broadcast_view), n * s + b + n * s);
  }
  // 16384^2 f32 (the sweep's largest): a transpose moves 2 GiB, the repeat 4 GiB + 64 KiB.
  EXPECT_EQ(layout::cost(Variant::transpose_tiled, 16384, 16384, DType::f32).bytes, 2.0 * 1024 * 1024 * 1024);
  EXPECT_EQ(layout::cost(Variant::repeat_materialized, 16384, 16384, DType::f32).bytes,
            4.0 * 1024 * 1024 * 1024 + 16384 * 4);
}

// ---- config and lab pass -----------------------------------------------------------------------------------------

// Every point of configs/layout.yaml validates: 17 shapes (the 4 x 4 grid and 8191 x 4097) cold and the 7 with a
// side of 1024 hot, x 2 dtypes x 5 variants = 240 points, three hypotheses, the five variants of a shape, dtype and
// L2 state consecutive (interleave: 5); on the host (lab.host) 40 of the hot points fit host_max_bytes = 40e6.
TEST(LayoutExpConfig, EveryPointValidates) {
  const auto [config, points] = test::shipped("layout");
  EXPECT_EQ(config.lab.processes, 3);
  EXPECT_EQ(config.lab.interleave, 5);
  ASSERT_EQ(points.size(), 240u);
  std::set<std::pair<std::int64_t, std::int64_t>> cold, hot;
  ASSERT_TRUE(config.lab_by_backend.count("host"));
  const LabSettings& host = config.lab_by_backend.at("host");
  EXPECT_EQ(host.processes, 1);
  EXPECT_EQ(host.host_max_bytes, 40e6);
  int on_host = 0;
  for (const Point& pt : points) {
    (pt.word("l2") == "cold" ? cold : hot).insert({pt.integer("rows"), pt.integer("cols")});
    const PointEstimate e = experiment().estimate(pt);
    EXPECT_GT(e.working_set_bytes, 0);
    if (pt.variant != "contiguous_noop") {
      EXPECT_GT(e.bytes, 0);
    }
    on_host += pt.word("l2") == "hot" && e.working_set_bytes <= host.host_max_bytes;
  }
  EXPECT_EQ(cold.size(), 17u);
  EXPECT_TRUE(cold.count({8191, 4097}));
  EXPECT_TRUE(cold.count({16384, 16384}));
  EXPECT_TRUE(cold.count({1024, 16384}));
  EXPECT_FALSE(cold.count({8191, 1024}));
  const std::set<std::pair<std::int64_t, std::int64_t>> sides_1024 = {
      {1024, 1024}, {1024, 4096}, {1024, 8192}, {1024, 16384}, {4096, 1024}, {8192, 1024}, {16384, 1024}};
  EXPECT_EQ(hot, sides_1024);
  EXPECT_EQ(on_host, 40);
  ASSERT_TRUE(config.hypothesis.is_array());
  EXPECT_EQ(config.hypothesis.size(), 3u);
  test::expect_groups_of(points, 5, {"rows", "cols", "dtype", "l2"});
}

// Through the lab pass on the host backend: every variant "ok" with a passing check and its cost (the no-op's
// check says same buffer, not poisoned), an odd shape and an empty one (C04); graph mode not_supported; a working
// set over lab.host_max_bytes skipped.
TEST(LayoutExpRunPoint, HostStatuses) {
  for (const char* dtype : {"f32", "bf16"})
    for (Variant v : kVariants) {
      SCOPED_TRACE(std::string(layout::to_string(v)) + " " + dtype);
      for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{67, 131}, {0, 5}}) {
        const Json rec = run(point(layout::to_string(v), rows, cols, dtype));
        ASSERT_EQ(rec["status"], "ok") << rec.dump();
        EXPECT_EQ(rec["correctness"]["passed"], true);
        EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], v != Variant::contiguous_noop);
        if (v == Variant::contiguous_noop) {
          EXPECT_TRUE(same_buffer(rec["correctness"]["detail"])) << rec["correctness"].dump();
        }
        const double launches = v == Variant::contiguous_noop ? 0 : v == Variant::repeat_materialized ? 2 : 1;
        EXPECT_EQ(real_from_json(rec["cost"]["launches"]), rows > 0 ? launches : 0.0);
      }
      const Json graph = run(point(layout::to_string(v), 67, 131, dtype, "graph"));
      EXPECT_EQ(graph["status"], "not_supported");
    }
  // 4096^2 f32 transposes: x and out are 134 MB, over the default 32 MB.
  test::expect_over_host_max_bytes(run(point("transpose_tiled", 4096, 4096, "f32")));
}

}  // namespace
}  // namespace labrun
