// Rung 2 of the examples: a dot product two ways on the host, swept over n, with a hypothesis in the config.
#include <labrun/experiment.hpp>
#include <labrun/parallel.hpp>

using namespace labrun;

LABRUN_EXPERIMENT(dot) {
  e.describe("f32 dot product: one accumulator (a chain of dependent adds) vs four independent ones")
      .int_axis("n", "elements", 1, 1 << 28, 1 << 20)
      .size_axis("n")
      .plot({"n", "variant", {}, "time vs n"});
  e.arrays([](const Args& a, Layout& l) {
    l.input("x", DType::f32, a.i64("n")).input("y", DType::f32, a.i64("n")).output("dot", DType::f32, 1);
  });
  e.generate([](const Args&, std::uint64_t seed, Arrays& in) {  // x and y in [-1, 1], two streams of one seed
    fill_uniform(in["x"].as<float>(), in["x"].count, seed, -1.0, 1.0);
    fill_uniform(in["y"].as<float>(), in["y"].count, splitmix64(seed), -1.0, 1.0);
  });
  e.reference([](const Args&, const Arrays& in, Reference& r) {  // products of floats are exact in float64
    double dot = 0, abs = 0;
    for (std::int64_t i = 0; i < in["x"].count; ++i) {
      const double p = double(in["x"].as<float>()[i]) * in["y"].as<float>()[i];
      dot += p, abs += p < 0 ? -p : p;
    }
    r.set("dot", dot), r.set("abs", abs);
  });
  // Any order of n float products and sums errs by at most gamma_n = n u / (1 - n u) times sum |x_i y_i|, u = 2^-24
  // (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., (3.5)).
  e.check([](Compare& c) {
    const double nu = double(c.args().i64("n")) * 0x1.0p-24;
    c.scalar("dot", "dot", nu / (1 - nu) * c.reference().value("abs"));
  });
  e.cost([](const Args& a, const Reference&) {
    const double n = double(a.i64("n"));
    return Cost::of({.read = 8 * n, .written = 4, .compulsory = 8 * n + 4, .flop = 2 * n, .launches = 1});
  });
  e.variant("one_acc", "one accumulator: each add waits for the one before").host([](Launch& l) {
    const float *x = l.in("x").as<const float>(), *y = l.in("y").as<const float>();
    const std::int64_t n = l.in("x").count;
    float s = 0;
    for (std::int64_t i = 0; i < n; ++i) s += x[i] * y[i];
    *l.out("dot").as<float>() = s;
  });
  e.variant("four_acc", "four accumulators: four chains of adds in flight").host([](Launch& l) {
    const float *x = l.in("x").as<const float>(), *y = l.in("y").as<const float>();
    const std::int64_t n = l.in("x").count;
    float s[4] = {0, 0, 0, 0};
    std::int64_t i = 0;
    for (; i + 4 <= n; i += 4)
      for (int k = 0; k < 4; ++k) s[k] += x[i + k] * y[i + k];
    for (; i < n; ++i) s[0] += x[i] * y[i];
    *l.out("dot").as<float>() = (s[0] + s[1]) + (s[2] + s[3]);
  });
}
