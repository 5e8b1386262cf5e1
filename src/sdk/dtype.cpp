#include <labrun/dtype.hpp>

#include <cmath>

namespace labrun {

const char* to_string(DType t) {
  switch (t) {
    case DType::f32: return "f32";
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f64: return "f64";
  }
  return "?";
}

std::optional<DType> parse_dtype(const std::string& w) {
  if (w == "f32") return DType::f32;
  if (w == "f16") return DType::f16;
  if (w == "bf16") return DType::bf16;
  if (w == "f64") return DType::f64;
  return std::nullopt;
}

std::size_t dtype_bytes(DType t) {
  switch (t) {
    case DType::f32: return 4;
    case DType::f16:
    case DType::bf16: return 2;
    case DType::f64: return 8;
  }
  return 0;
}

double unit_roundoff(DType t) {
  switch (t) {
    case DType::f32: return std::ldexp(1.0, -24);
    case DType::f16: return std::ldexp(1.0, -11);
    case DType::bf16: return std::ldexp(1.0, -8);
    case DType::f64: return std::ldexp(1.0, -53);
  }
  return 1;
}

DType accumulate_dtype(DType t) { return t == DType::f64 ? DType::f64 : DType::f32; }

std::uint16_t float_to_half(float f) {
  const std::uint32_t u = float_bits(f);
  const std::uint16_t sign = static_cast<std::uint16_t>((u >> 16) & 0x8000u);
  const std::uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);   // NaN
  if (a >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: inf
  if (a < 0x38800000u) {
    // Result is subnormal (or zero) in binary16: value / 2^-24 rounded to nearest even integer.
    const float scaled = bits_float(a) * 16777216.0f;  // exact: a power-of-two scaling
    return static_cast<std::uint16_t>(sign | static_cast<std::uint16_t>(std::nearbyint(scaled)));
  }
  // Normal: rebias the exponent (127 -> 15) and round the 23-bit fraction to 10 bits, nearest even.
  const std::uint32_t rebased = a - (112u << 23);
  const std::uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

float half_to_float(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  const std::uint32_t frac = h & 0x3ffu;
  if (exp == 0) {
    const float mag = std::ldexp(static_cast<float>(frac), -24);
    return sign ? -mag : mag;
  }
  if (exp == 31) return bits_float(sign | 0x7f800000u | (frac << 13));
  return bits_float(sign | ((exp + 112u) << 23) | (frac << 13));
}

}  // namespace labrun
