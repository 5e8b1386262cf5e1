// The smallest labrun experiment: y = 2x + 1 over n floats on the host, checked against a float64 reference.
#include <cmath>

#include <labrun/experiment.hpp>
#include <labrun/parallel.hpp>

using namespace labrun;

LABRUN_EXPERIMENT(scale) {
  e.describe("y = 2x + 1, the smallest experiment with a check").int_axis("n", "elements", 1, 1 << 28, 1 << 20);
  e.arrays([](const Args& a, Layout& l) { l.input("x", DType::f32, a.i64("n")).output("y", DType::f32, a.i64("n")); });
  e.generate([](const Args&, std::uint64_t seed, Arrays& in) {  // x in [0, 1], element i from (seed, i) alone
    fill_uniform(in["x"].as<float>(), in["x"].count, seed, 0.0, 1.0);
  });
  e.reference([](const Args&, const Arrays& in, Reference& r) {
    std::vector<double>& y = r.array("y", in["x"].count);
    for (std::int64_t i = 0; i < in["x"].count; ++i) y[i] = 2.0 * in["x"].as<float>()[i] + 1;
  });
  // 2x is exact in f32; the + 1 rounds once: half an ulp of a value below 3, at most 2^-23 (u = 2^-24 relative).
  e.check([](Compare& c) { c.elementwise("y", [](std::int64_t, double ref) { return std::fabs(ref) * 0x1.0p-24; }); });
  e.cost([](const Args& a, const Reference&) {
    const double n = static_cast<double>(a.i64("n"));
    // x read and y written, both compulsory; a multiply and an add per element.
    return Cost::of({.read = 4 * n, .written = 4 * n, .compulsory = 8 * n, .flop = 2 * n, .launches = 1});
  });
  e.variant("loop", "a plain loop").host([](Launch& l) {
    const float* x = l.in("x").as<const float>();
    float* y = l.out("y").as<float>();
    for (std::int64_t i = 0; i < l.in("x").count; ++i) y[i] = 2 * x[i] + 1;
  });
}
