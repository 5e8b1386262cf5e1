// A counter-based generator for experiment inputs: element i of a seeded input is a pure function of (seed, i),
// so inputs are reproducible for a seed and identical on every thread count and chunking.
#pragma once

#include <cstdint>

namespace labrun {

/// SplitMix64's output function (Steele, Lea & Flood, "Fast Splittable Pseudorandom Number Generators",
/// OOPSLA 2014): a bijective 64-bit mix. Experiments draw element i as splitmix64(seed ^ splitmix64(i)).
constexpr std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

/// The top 53 bits of `bits` as a double uniform in [0, 1).
constexpr double unit_interval(std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

/// The 64 random bits of element `index` of the input drawn from `seed`: splitmix64(seed ^ splitmix64(index)), a pure
/// function of (seed, index), so any split of the elements over threads draws the same bits.
constexpr std::uint64_t counter_bits(std::uint64_t seed, std::int64_t index) {
  return splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(index)));
}

/// Element `index`'s draw from `seed`, uniform in [lo, hi): lo + (hi - lo) * unit_interval(counter_bits(seed, index)).
constexpr double uniform_at(std::uint64_t seed, std::int64_t index, double lo, double hi) {
  return lo + (hi - lo) * unit_interval(counter_bits(seed, index));
}

}  // namespace labrun
