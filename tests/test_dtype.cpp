// Tests of the element types and the exact host conversions float <-> binary16 and float -> bfloat16
// (round to nearest even, subnormals, overflow, NaN), against hand-computed bit patterns.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include <labrun/dtype.hpp>

namespace labrun {
namespace {

float pow2(int e) { return std::ldexp(1.0f, e); }

bool half_is_nan(std::uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu) != 0; }

// float -> half at the hand-computed corners: exact values, largest finite, overflow tie, subnormal ties.
TEST(DType, FloatToHalfBitPatterns) {
  EXPECT_EQ(float_to_half(1.0f), 0x3C00);
  EXPECT_EQ(float_to_half(-2.0f), 0xC000);
  EXPECT_EQ(float_to_half(2.0f), 0x4000);
  EXPECT_EQ(float_to_half(0.0f), 0x0000);
  EXPECT_EQ(float_to_half(-0.0f), 0x8000);
  EXPECT_EQ(float_to_half(65504.0f), 0x7BFF);
  EXPECT_EQ(float_to_half(65519.0f), 0x7BFF);  // below the midpoint 65520: rounds down
  EXPECT_EQ(float_to_half(65520.0f), 0x7C00);  // midpoint, tie to even (the even neighbour is 2^16 = inf)
  EXPECT_EQ(float_to_half(-65520.0f), 0xFC00);
  EXPECT_EQ(float_to_half(1e10f), 0x7C00);
  EXPECT_EQ(float_to_half(pow2(-14)), 0x0400);  // smallest normal
  EXPECT_EQ(float_to_half(pow2(-24)), 0x0001);  // smallest subnormal
  EXPECT_EQ(float_to_half(pow2(-25)), 0x0000);  // half of it: tie to even (0)
  EXPECT_EQ(float_to_half(-pow2(-25)), 0x8000);
  EXPECT_EQ(float_to_half(3 * pow2(-25)), 0x0002);         // 1.5 units: tie to even (2)
  EXPECT_EQ(float_to_half(5 * pow2(-25)), 0x0002);         // 2.5 units: tie to even (2)
  EXPECT_EQ(float_to_half(1.0f + pow2(-11)), 0x3C00);      // tie between 1 and 1+2^-10: even (1)
  EXPECT_EQ(float_to_half(1.0f + 3 * pow2(-11)), 0x3C02);  // tie between 1+2^-10 and 1+2^-9: even
  EXPECT_EQ(float_to_half(1.0f - pow2(-11)), 0x3BFF);      // largest half below 1, exact
  EXPECT_EQ(float_to_half(1.0f - pow2(-12)), 0x3C00);      // tie between 0x3BFF and 1.0: even (1.0), exponent carry
  EXPECT_EQ(float_to_half(std::numeric_limits<float>::infinity()), 0x7C00);
  EXPECT_EQ(float_to_half(-std::numeric_limits<float>::infinity()), 0xFC00);
  EXPECT_TRUE(half_is_nan(float_to_half(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(half_is_nan(float_to_half(-std::numeric_limits<float>::quiet_NaN())));
}

// half -> float is exact for the same corners.
TEST(DType, HalfToFloatValues) {
  EXPECT_EQ(half_to_float(0x3C00), 1.0f);
  EXPECT_EQ(half_to_float(0xC000), -2.0f);
  EXPECT_EQ(half_to_float(0x7BFF), 65504.0f);
  EXPECT_EQ(half_to_float(0x0001), pow2(-24));
  EXPECT_EQ(half_to_float(0x03FF), 1023 * pow2(-24));
  EXPECT_EQ(half_to_float(0x0400), pow2(-14));
  EXPECT_EQ(half_to_float(0x7C00), std::numeric_limits<float>::infinity());
  EXPECT_EQ(half_to_float(0xFC00), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(half_to_float(0x7E00)));
  EXPECT_TRUE(std::signbit(half_to_float(0x8000)));
  EXPECT_EQ(half_to_float(0x8000), 0.0f);
}

// Every one of the 65536 half bit patterns survives half -> float -> half (NaNs stay NaN).
TEST(DType, HalfRoundTripAllBitPatterns) {
  int mismatches = 0;
  for (std::uint32_t bits = 0; bits <= 0xFFFFu; ++bits) {
    const auto h = static_cast<std::uint16_t>(bits);
    const float f = half_to_float(h);
    const std::uint16_t back = float_to_half(f);
    if (half_is_nan(h)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << bits;
      EXPECT_TRUE(half_is_nan(back)) << std::hex << bits;
    } else if (back != h && ++mismatches <= 5) {
      ADD_FAILURE() << std::hex << "0x" << bits << " -> " << f << " -> 0x" << back;
    }
  }
  EXPECT_EQ(mismatches, 0);
}

// float -> bfloat16: truncation of exact values, ties to even, NaN stays NaN, overflow to inf.
TEST(DType, FloatToBf16BitPatterns) {
  EXPECT_EQ(float_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(float_to_bf16(-2.0f), 0xC000);
  EXPECT_EQ(float_to_bf16(1.0f + pow2(-8)), 0x3F80);      // tie between 1 and 1+2^-7: even (1)
  EXPECT_EQ(float_to_bf16(1.0f + 3 * pow2(-8)), 0x3F82);  // tie between 1+2^-7 and 1+2^-6: even
  EXPECT_EQ(float_to_bf16(1.0f + 3 * pow2(-9)), 0x3F81);  // 0.75 ulp above 1: rounds up to 1+2^-7
  EXPECT_EQ(float_to_bf16(1.0f + pow2(-9)), 0x3F80);      // 0.25 ulp above 1: rounds down
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::infinity()), 0x7F80);
  EXPECT_EQ(float_to_bf16(std::numeric_limits<float>::max()), 0x7F80);
  const std::uint16_t nan = float_to_bf16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_TRUE(std::isnan(bf16_to_float(nan)));
  const std::uint16_t signalling = float_to_bf16(bits_float(0x7F800001u));  // payload only in the low bits
  EXPECT_TRUE(std::isnan(bf16_to_float(signalling)));
  EXPECT_EQ(bf16_to_float(0x3F82), 1.015625f);
}

// Unit roundoff 2^-p (p = significand bits) and storage sizes of each dtype, and the accumulation dtype.
TEST(DType, UnitRoundoffSizesAndNames) {
  EXPECT_EQ(unit_roundoff(DType::f32), std::ldexp(1.0, -24));
  EXPECT_EQ(unit_roundoff(DType::f16), std::ldexp(1.0, -11));
  EXPECT_EQ(unit_roundoff(DType::bf16), std::ldexp(1.0, -8));
  EXPECT_EQ(unit_roundoff(DType::f64), std::ldexp(1.0, -53));
  EXPECT_EQ(dtype_bytes(DType::f32), 4u);
  EXPECT_EQ(dtype_bytes(DType::f16), 2u);
  EXPECT_EQ(dtype_bytes(DType::bf16), 2u);
  EXPECT_EQ(dtype_bytes(DType::f64), 8u);
  EXPECT_EQ(accumulate_dtype(DType::f16), DType::f32);
  EXPECT_EQ(accumulate_dtype(DType::bf16), DType::f32);
  EXPECT_EQ(accumulate_dtype(DType::f32), DType::f32);
  EXPECT_EQ(accumulate_dtype(DType::f64), DType::f64);
  for (DType t : {DType::f32, DType::f16, DType::bf16, DType::f64}) EXPECT_EQ(parse_dtype(to_string(t)), t);
  EXPECT_FALSE(parse_dtype("fp16").has_value());
  EXPECT_FALSE(parse_dtype("F32").has_value());
}

}  // namespace
}  // namespace labrun
