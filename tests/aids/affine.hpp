// The experiment the integrity and audit test aids share: y = 2x + 1 over n floats (axis `n`), x drawn from the seed,
// a float64 reference and its elementwise check, and the cost. Each aid adds its description and variants.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

#include <labrun/counter_rng.hpp>
#include <labrun/experiment.hpp>

namespace labrun::aids {

/// Defines y = 2x + 1 on `e`: input x, output y (and a scratch array `work` of n floats when `scratch`).
inline void define_affine(ExperimentDef& e, bool scratch) {
  e.int_axis("n", "elements", 2, 1 << 26, 1000);
  e.arrays([scratch](const Args& a, Layout& l) {
    const std::int64_t n = a.i64("n");
    l.input("x", DType::f32, n).output("y", DType::f32, n);
    if (scratch) l.scratch("work", DType::f32, n);
  });
  e.generate([](const Args&, std::uint64_t seed, Arrays& in) {
    float* x = in["x"].as<float>();
    for (std::int64_t i = 0; i < in["x"].count; ++i)
      x[i] = static_cast<float>(unit_interval(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)))) - 0.5);
  });
  e.reference([](const Args&, const Arrays& in, Reference& r) {
    const float* x = in["x"].as<float>();
    std::vector<double>& y = r.array("y", in["x"].count);
    for (std::int64_t i = 0; i < in["x"].count; ++i) y[static_cast<std::size_t>(i)] = 2.0 * x[i] + 1.0;
  });
  // 2x is exact in f32; the addition rounds once: half an ulp of a value below 2, 2^-24 relative.
  e.check([](Compare& c) {
    c.elementwise("y", [](std::int64_t, double ref) { return std::fabs(ref) * 0x1.0p-23 + 0x1.0p-30; });
  });
  e.cost([](const Args& a, const Reference&) {
    const double n = static_cast<double>(a.i64("n"));
    return Cost::of(4 * n, 4 * n, 8 * n, 2 * n, 1, 0);
  });
}

}  // namespace labrun::aids
