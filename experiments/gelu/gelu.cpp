#include "gelu.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>

namespace labrun::gelu {

namespace {

template <DType T>
void host_run_typed(Variant variant, const View& xv, const View& yv, const View& av, const View& bv) {
  using Tr = Stored<T>;
  using S = typename Tr::S;
  const std::int64_t n = xv.count;
  const S* x = xv.as<const S>();
  S* y = yv.as<S>();
  if (variant != Variant::unfused) {
    // fused and fused_vec: identical numerics (they differ only in how the GPU loads and stores).
    for (std::int64_t i = 0; i < n; ++i) y[i] = Tr::store(fused_f32(Tr::load(x[i])));
    return;
  }
  // Eager semantics: every op reads and writes a full tensor in the storage dtype; two scratch tensors alternate,
  // exactly as the seven GPU kernels use them (A = x³, B = αA, A = x + B, B = √(2/π)A, A = tanh B, B = 1 + A,
  // y = 0.5x·B).
  S* a = av.as<S>();
  S* b = bv.as<S>();
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = Tr::load(x[i]);
    a[i] = Tr::store(v * v * v);
  }
  for (std::int64_t i = 0; i < n; ++i) b[i] = Tr::store(kAlphaF * Tr::load(a[i]));
  for (std::int64_t i = 0; i < n; ++i) a[i] = Tr::store(Tr::load(x[i]) + Tr::load(b[i]));
  for (std::int64_t i = 0; i < n; ++i) b[i] = Tr::store(kSqrt2OverPiF * Tr::load(a[i]));
  for (std::int64_t i = 0; i < n; ++i) a[i] = Tr::store(std::tanh(Tr::load(b[i])));
  for (std::int64_t i = 0; i < n; ++i) b[i] = Tr::store(1.0f + Tr::load(a[i]));
  for (std::int64_t i = 0; i < n; ++i) y[i] = Tr::store((0.5f * Tr::load(x[i])) * Tr::load(b[i]));
}

}  // namespace

void generate(const View& x, std::uint64_t seed) {
  const DType dtype = x.elem.dtype.value_or(DType::f64);
  if (dtype != DType::f32 && dtype != DType::bf16) throw std::invalid_argument("gelu: dtype must be f32 or bf16");
  parallel_chunks(x.count, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint64_t h = counter_bits(seed, i);
      // |x| = 6·(1 − U), U uniform in [0, 1) on a 2^-53 grid: in (0, 6], never zero; the sign from the low bit.
      const double v = 6.0 * (1.0 - unit_interval(h)) * ((h & 1) ? -1.0 : 1.0);
      if (dtype == DType::f32) x.as<float>()[i] = static_cast<float>(v);
      else x.as<std::uint16_t>()[i] = float_to_bf16(static_cast<float>(v));
    }
  });
}

double reference_value(double x) { return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kAlpha * x * x * x))); }

float fused_f32(float x) {
  // The expression of the fused GPU kernels (gelu_kernels.cu, gelu_f32), operation for operation.
  const float q = x * x;
  const float p = std::fma(kAlphaSqrt2OverPiF, q, kSqrt2OverPiF);
  const float z = x * p;
  const float t = std::tanh(z);
  const float h = 0.5f * x;
  return std::fma(h, t, h);
}

std::vector<double> roundings(Variant variant, DType dtype) {
  const double u = unit_roundoff(DType::f32);
  const double s = dtype == DType::f32 ? 0.0 : unit_roundoff(dtype);
  if (variant == Variant::unfused) return {2 * u + s, 2 * u + s, u + s, 2 * u + s, 4 * u + s, u + s, u + s};
  return {0, 0, 0, 4 * u, 4 * u, 0, u + s};
}

double bound(const std::vector<double>& e, double x, double ref) {
  if (x == 0) return 0;
  const double ax = std::fabs(x);
  const double z = kSqrt2OverPi * (x + kAlpha * x * x * x);
  const double one_plus_t = 2 * ref / x;  // 1 + tanh z, in [0, 2]
  const double t = one_plus_t - 1;
  const double sech2 = std::max(0.0, one_plus_t * (2 - one_plus_t));  // 1 − t² = (1 + t)(1 − t)
  const double inner = kSqrt2OverPi * kAlpha * ax * ax * ax * (e[0] + e[1]) + std::fabs(z) * (e[2] + e[3]);
  return 2 * (0.5 * ax * sech2 * inner + 0.5 * ax * std::fabs(t) * e[4] + std::fabs(ref) * (e[5] + e[6]));
}

void host_run(Variant variant, const View& x, const View& y, const View& a, const View& b) {
  if (x.elem.dtype == DType::bf16) host_run_typed<DType::bf16>(variant, x, y, a, b);
  else host_run_typed<DType::f32>(variant, x, y, a, b);
}

Cost cost(Variant variant, DType dtype, std::int64_t count) {
  const double n = static_cast<double>(count), s = static_cast<double>(dtype_bytes(dtype));
  if (variant == Variant::unfused) {
    // pow3 (x → A), scale (A → B), add (x, B → A), scale (A → B), tanh (B → A), add one (A → B),
    // multiply (x, B → y): 9 tensor reads, 7 tensor writes; y and the two scratch tensors held.
    Cost c = Cost::of({.read = 9 * n * s,
                       .written = 7 * n * s,
                       .compulsory = 2 * n * s,
                       .flop = kUnfusedFlopPerElement * n,
                       .launches = kUnfusedKernels});
    c.peak_work_bytes = 3 * n * s;
    return c;
  }
  Cost c = Cost::of(
      {.read = n * s, .written = n * s, .compulsory = 2 * n * s, .flop = kFusedFlopPerElement * n, .launches = 1});
  c.peak_work_bytes = n * s;  // y
  return c;
}

namespace {

Variant variant_of(const Args& a) {
  const std::string& v = a.variant();
  return v == "unfused" ? Variant::unfused : v == "fused" ? Variant::fused : Variant::fused_vec;
}

}  // namespace

LABRUN_EXPERIMENT(gelu) {
  e.describe("GELU (tanh approximation): seven elementwise kernels vs one fused kernel vs 128-bit vectorised")
      .docs("docs/experiments/gelu.md")
      .int_axis("n", "elements", 0, 2147483648.0, std::int64_t{1} << 20)
      .word_axis("dtype", "storage dtype of x, y and the unfused intermediates (math in f32)", {"f32", "bf16"}, "f32")
      .plot({"n", "variant", {"dtype"}, "time vs n"});
  e.arrays([](const Args& a, Layout& l) {
    const std::int64_t n = a.i64("n");
    l.input("x", a.dtype(), n).output("y", a.dtype(), n);
    if (a.variant() == "unfused") l.scratch("a", a.dtype(), n).scratch("b", a.dtype(), n);
  });
  e.inputs_depend_on({"n", "dtype"});
  e.seed_text([](const Args& a) {  // the seeds drawn before the SDK, so earlier results compare point for point
    return "gelu/" + std::to_string(a.i64("n")) + "/" + to_string(a.dtype());
  });
  e.generate([](const Args&, std::uint64_t seed, Arrays& in) { generate(in["x"], seed); });
  e.reference([](const Args&, const Arrays& in, Reference& r) {
    const View& x = in["x"];
    std::vector<double>& y = r.array("y", x.count);
    parallel_chunks(x.count, [&](int, std::int64_t b, std::int64_t end) {
      for (std::int64_t i = b; i < end; ++i) y[i] = reference_value(x.value(i));
    });
  });
  e.check([](Compare& c) {
    const std::vector<double> r = roundings(variant_of(c.args()), c.args().dtype());
    const View& x = c.inputs()["x"];
    const CheckResult& res = c.elementwise("y", [&](std::int64_t i, double ref) { return bound(r, x.value(i), ref); });
    if (res.worst_index >= 0) c.note("worst_x", x.value(res.worst_index));
  });
  e.cost([](const Args& a, const Reference&) { return cost(variant_of(a), a.dtype(), a.i64("n")); });
  auto host = [](Launch& l) {
    const bool unfused = l.args().variant() == "unfused";
    host_run(variant_of(l.args()), l.in("x"), l.out("y"), unfused ? l.scratch("a") : View{},
             unfused ? l.scratch("b") : View{});
  };
  e.variant("unfused",
            "seven elementwise kernels, as an eager framework runs the formula op by op (each a full read and write)")
      .host(host);
  e.variant("fused", "one kernel, scalar loads and stores, grid-stride, f32 math in registers").host(host);
  e.variant("fused_vec", "one kernel, 128-bit loads and stores (4 f32 or 8 bf16), four in flight per thread, f32 math")
      .host(host);
}

}  // namespace labrun::gelu
