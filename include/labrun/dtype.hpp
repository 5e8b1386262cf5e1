// Element types of experiment data and exact host-side conversions for the 16-bit ones.
#pragma once

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>

namespace labrun {

/// Storage type of experiment data. f16 is IEEE 754 binary16, bf16 is bfloat16 (8-bit exponent, 7-bit
/// fraction). Computation on f16/bf16/f32 data is in f32 and on f64 data in f64.
enum class DType { f32, f16, bf16, f64 };

/// "f32", "f16", "bf16", "f64".
const char* to_string(DType t);
/// Inverse of to_string(DType). nullopt for any other word.
std::optional<DType> parse_dtype(const std::string& word);
/// Bytes per element: 4, 2, 2, 8.
std::size_t dtype_bytes(DType t);
/// Unit roundoff u = 2^-p of the storage format (p = significand bits incl. the implicit one):
/// f32 2^-24, f16 2^-11, bf16 2^-8, f64 2^-53 (Higham, Accuracy and Stability of Numerical Algorithms, 2.1).
double unit_roundoff(DType t);
/// Type the variants accumulate sums in: f32 for f16/bf16/f32 (case C05), f64 for f64.
DType accumulate_dtype(DType t);

inline std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bits_float(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

/// float -> bfloat16 bits, round to nearest even; NaN stays NaN (quiet).
inline std::uint16_t float_to_bf16(float f) {
  const std::uint32_t u = float_bits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((u >> 16) | 0x40u);
  const std::uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}
inline float bf16_to_float(std::uint16_t h) { return bits_float(static_cast<std::uint32_t>(h) << 16); }

/// float -> IEEE binary16 bits, round to nearest even, with subnormals, overflow to inf, NaN kept.
std::uint16_t float_to_half(float f);
/// IEEE binary16 bits -> float (exact).
float half_to_float(std::uint16_t h);

/// A dtype's host storage with f32 compute: S is the stored element (float for f32, the raw 16 bits for bf16 and
/// f16); load widens exactly, store rounds to nearest even (float_to_bf16, float_to_half).
template <DType T>
struct Stored;
template <>
struct Stored<DType::f32> {
  using S = float;
  static float load(S s) { return s; }
  static S store(float c) { return c; }
};
template <>
struct Stored<DType::bf16> {
  using S = std::uint16_t;
  static float load(S s) { return bf16_to_float(s); }
  static S store(float c) { return float_to_bf16(c); }
};
template <>
struct Stored<DType::f16> {
  using S = std::uint16_t;
  static float load(S s) { return half_to_float(s); }
  static S store(float c) { return float_to_half(c); }
};

}  // namespace labrun
