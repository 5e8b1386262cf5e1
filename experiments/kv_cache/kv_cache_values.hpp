// The kv_cache experiment's values, as one pure function of (seed, element index) shared by the host and the
// device (nvcc compiles it with --expt-relaxed-constexpr): element i of the final cache is value_bits(f, seed, i)
// wherever it came from (the prefill or a generated token), so the reference is the generator itself and the
// device fills its inputs bit for bit as the host does. Integer arithmetic only: no rounding to disagree on.
#pragma once

#include <cstdint>

#include <labrun/counter_rng.hpp>

namespace labrun::kv_cache {

/// Storage formats of the cache, as the kernels see them.
enum class Format : int { f32 = 0, f16 = 1, bf16 = 2 };

/// Bits of element `i` of the final cache (laid out [R][n1][D], see kv_cache.hpp) in format `f`, in the low 16
/// (f16, bf16) or 32 (f32) bits: from h = SplitMix64(seed ^ SplitMix64(i)) (Steele, Lea & Flood 2014), the sign
/// from bit 0, the binade 2^-2, 2^-1 or 2^0 from (h >> 1) mod 3, the fraction from the top bits; a value in
/// ±[0.25, 2): never zero, never subnormal, never NaN or infinite.
constexpr std::uint32_t value_bits(Format f, std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t h = splitmix64(seed ^ splitmix64(i));
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 1);
  const std::uint32_t binade = static_cast<std::uint32_t>((h >> 1) % 3);  // 0, 1, 2
  const std::uint32_t frac = static_cast<std::uint32_t>(h >> 40);         // 24 random bits
  switch (f) {
    case Format::f32: return (sign << 31) | ((125 + binade) << 23) | (frac & 0x7fffffu);
    case Format::f16: return (sign << 15) | ((13 + binade) << 10) | (frac & 0x3ffu);
    case Format::bf16: return (sign << 15) | ((125 + binade) << 7) | (frac & 0x7fu);
  }
  return 0;
}

}  // namespace labrun::kv_cache
