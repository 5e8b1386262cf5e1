// The smallest labrun experiment: y = 2x + 1 over n floats on the host, checked against a float64 reference.
#include <cmath>

#include <labrun/counter_rng.hpp>
#include <labrun/experiment.hpp>

using namespace labrun;

LABRUN_EXPERIMENT(scale) {
  e.describe("y = 2x + 1, the smallest experiment with a check").int_axis("n", "elements", 1, 1 << 28, 1 << 20);
  e.arrays([](const Args& a, Layout& l) { l.input("x", DType::f32, a.i64("n")).output("y", DType::f32, a.i64("n")); });
  e.generate([](const Args&, std::uint64_t seed, Arrays& in) {  // x in [0, 1), element i from (seed, i) alone
    float* x = in["x"].as<float>();
    for (std::int64_t i = 0; i < in["x"].count; ++i)
      x[i] = static_cast<float>(unit_interval(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)))));
  });
  e.reference([](const Args&, const Arrays& in, Reference& r) {
    std::vector<double>& y = r.array("y", in["x"].count);
    for (std::int64_t i = 0; i < in["x"].count; ++i) y[i] = 2.0 * in["x"].as<float>()[i] + 1;
  });
  // 2x is exact in f32; the + 1 rounds once: half an ulp of a value below 3, at most 2^-23 (u = 2^-24 relative).
  e.check([](Compare& c) { c.elementwise("y", [](std::int64_t, double ref) { return std::fabs(ref) * 0x1.0p-24; }); });
  e.cost([](const Args& a, const Reference&) {
    const double n = static_cast<double>(a.i64("n"));
    return Cost::of(4 * n, 4 * n, 8 * n, 2 * n, 1, 0);  // read x, write y, both compulsory; a multiply and an add
  });
  e.variant("loop", "a plain loop").host([](Launch& l) {
    const float* x = l.in("x").as<const float>();
    float* y = l.out("y").as<float>();
    for (std::int64_t i = 0; i < l.in("x").count; ++i) y[i] = 2 * x[i] + 1;
  });
}
