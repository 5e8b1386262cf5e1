// The rownorm experiment: declared with labrun's SDK (labrun/experiment.hpp); its CUDA launchers are in rownorm.cu.
#include "rownorm.hpp"

#include <cmath>

#include <labrun/counter_rng.hpp>
#include <labrun/experiment.hpp>
#include <labrun/parallel.hpp>

using namespace labrun;

LABRUN_EXPERIMENT(rownorm) {
  e.describe("row-wise L2 normalisation: one thread per row vs one block per row")
      .docs("README.md")
      .int_axis("rows", "matrix rows", 1, 1 << 24, 4096)
      .int_axis("cols", "matrix columns (f32)", 1, 1 << 16, 1024)
      .plot({"cols", "variant", {}, "time vs cols"});
  e.arrays([](const Args& a, Layout& l) {
    const std::int64_t n = a.i64("rows") * a.i64("cols");
    l.input("x", DType::f32, n).output("y", DType::f32, n);
  });
  // x uniform in [-1, 1), never zero (a zero row would have no norm), from a counter-based generator: element i
  // depends on (seed, i) only, so parallel_chunks (all host cores) gives the same bits on every machine.
  e.generate([](const Args&, std::uint64_t seed, Arrays& in) {
    float* x = in["x"].as<float>();
    parallel_chunks(in["x"].count, 64, [&](int, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const double u = unit_interval(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i))));
        x[i] = static_cast<float>(u == 0.5 ? 0.25 : 2 * u - 1);
      }
    });
  });
  e.reference([](const Args& a, const Arrays& in, Reference& r) {  // rows in parallel, each in float64
    const std::int64_t cols = a.i64("cols");
    const float* x = in["x"].as<float>();
    std::vector<double>& y = r.array("y", in["x"].count);
    parallel_chunks(a.i64("rows"), 64, [&](int, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        double s = 0;
        for (std::int64_t j = 0; j < cols; ++j) s += double(x[i * cols + j]) * x[i * cols + j];
        for (std::int64_t j = 0; j < cols; ++j) y[i * cols + j] = x[i * cols + j] / std::sqrt(s);
      }
    });
  });
  // f32 sum of cols squares in any order: relative error <= (cols - 1) u (Higham, Accuracy and Stability, 4.2);
  // through the square root half of it, plus the square, sqrt, division and multiply (u each): (cols + 8) u / 2.
  e.check([](Compare& c) {
    const double rel = (static_cast<double>(c.args().i64("cols")) + 8) * 0x1.0p-24 / 2;
    c.elementwise("y", [rel](std::int64_t, double ref) { return std::fabs(ref) * rel; });
  });
  e.cost([](const Args& a, const Reference&) {
    const double n = static_cast<double>(a.i64("rows") * a.i64("cols"));
    return Cost::of({.read = 4 * n,
                     .written = 4 * n,
                     .compulsory = 8 * n,
                     .flop = 3 * n,
                     .launches = 1});  // x read once (the second pass hits cache), y written once
  });
  // The host variants: the same f32 arithmetic (sum of squares, then each element times 1/sqrt(sum)).
  auto host = [](Launch& l) {
    const std::int64_t rows = l.args().i64("rows"), cols = l.args().i64("cols");
    const float* x = l.in("x").as<const float>();
    float* y = l.out("y").as<float>();
    for (std::int64_t i = 0; i < rows; ++i) {
      float s = 0;
      for (std::int64_t j = 0; j < cols; ++j) s += x[i * cols + j] * x[i * cols + j];
      const float inv = 1.0f / std::sqrt(s);
      for (std::int64_t j = 0; j < cols; ++j) y[i * cols + j] = x[i * cols + j] * inv;
    }
  };
  e.variant("thread_per_row", "one thread walks a whole row (strided, uncoalesced loads)").host(host);
  e.variant("block", "one block per row: coalesced loads, a block reduction, then the scaled store").host(host);
}
