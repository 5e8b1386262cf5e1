// The gemv experiment on the SDK (LABRUN_EXPERIMENT(gemv)): axes, arrays, the input generator, the float64
// reference, the check (every row within its summation bound), the cost model and the host variants (the kernels'
// host twins). Formulas: docs/experiments/gemv.md.
#include "gemv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/kernels/reduce_order.hpp>
#include <labrun/parallel.hpp>

namespace labrun::gemv {

namespace {

// The one table of gemv's variants: name, one-line description (threads per row: threads_per_row). Every variant
// has a host implementation and runs in both modes.
constexpr VariantTable<Variant, 5> kVariants{{{
    {Variant::row_block_256, "row_block_256",
     "one block of 256 threads per row, 128-bit loads of A and x, warp shuffles then shared memory"},
    {Variant::row_block_512, "row_block_512",
     "one block of 512 threads per row, 128-bit loads of A and x, warp shuffles then shared memory"},
    {Variant::row_block_1024, "row_block_1024",
     "one block of 1024 threads per row, 128-bit loads of A and x, warp shuffles then shared memory"},
    {Variant::warp_row, "warp_row",
     "one warp per row, 8 rows per block of 256 threads, 128-bit loads, warp shuffles only"},
    {Variant::cublas, "cublas",
     "cuBLAS GEMM with n = 1 (op T on the row-major A, lda = n), f16 in, f32 out and compute (host: f32 dot)"},
}}};

void require_dtype(DType t) {
  if (t != DType::f16 && t != DType::bf16)
    throw std::invalid_argument(std::string("gemv: dtype must be f16 or bf16, got ") + labrun::to_string(t));
}

double gamma(double k, double u) { return k * u / (1 - k * u); }

// One thread's partial of row_dot: vectors j = t, t + G, … of W elements, W accumulators, combined as the kernel
// does. Inputs decoded exactly; products exact in f32, so std::fma rounds as the GPU's fmaf does.
template <int W>
float thread_partial(const float* a, const float* x, std::int64_t nv, std::int64_t t, std::int64_t G) {
  float acc[W] = {};
  for (std::int64_t j = t; j < nv; j += G)
    for (int i = 0; i < W; ++i) acc[i] = std::fma(a[j * W + i], x[j * W + i], acc[i]);
  if constexpr (W == 8) return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
  else return acc[0];
}

}  // namespace

const char* to_string(Variant v) { return kVariants.name(v); }

Variant variant_of(const Args& args) { return kVariants.of(args); }

int threads_per_row(Variant v) {
  switch (v) {
    case Variant::row_block_256: return 256;
    case Variant::row_block_512: return 512;
    case Variant::row_block_1024: return 1024;
    case Variant::warp_row: return kWarp;
    default: return 0;
  }
}

void generate(const View& a, const View& x, std::uint64_t seed) {
  const DType dtype = a.elem.dtype.value_or(DType::f32);
  require_dtype(dtype);
  if (x.elem.dtype != a.elem.dtype) throw std::invalid_argument("gemv: A and x must have one dtype");
  auto draw = [dtype](std::uint64_t s, std::int64_t i) -> std::uint16_t {
    const std::uint64_t h = counter_bits(s, i);
    // |v| = (1 + 15·(1 − U))/16 in (1/16, 1]; rounding to the dtype keeps it in [1/16, 1]: never zero or subnormal.
    const double v = (1.0 + 15.0 * (1.0 - unit_interval(h))) / 16.0 * ((h & 1) ? -1.0 : 1.0);
    return dtype == DType::bf16 ? float_to_bf16(static_cast<float>(v)) : float_to_half(static_cast<float>(v));
  };
  const std::uint64_t seed_x = splitmix64(seed ^ 0x78ull);
  auto* ap = a.as<std::uint16_t>();
  auto* xp = x.as<std::uint16_t>();
  parallel_chunks(a.count, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) ap[i] = draw(seed, i);
  });
  for (std::int64_t j = 0; j < x.count; ++j) xp[j] = draw(seed_x, j);
}

void reference(const View& a, const View& xv, std::int64_t m, std::int64_t n, Reference& ref) {
  std::vector<double>& y = ref.array("y", m);
  std::vector<double>& abs_sum = ref.array("abs_sum", m);
  std::vector<double> x(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) x[static_cast<std::size_t>(j)] = xv.value(j);
  parallel_chunks(m, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      double s = 0, abs = 0;
      for (std::int64_t j = 0; j < n; ++j) {
        const double p = a.value(i * n + j) * x[static_cast<std::size_t>(j)];  // exact
        s += p;
        abs += std::fabs(p);
      }
      y[static_cast<std::size_t>(i)] = s;
      abs_sum[static_cast<std::size_t>(i)] = abs;
    }
  });
}

std::int64_t depth(Variant v, std::int64_t n) {
  if (v == Variant::cublas) return std::max<std::int64_t>(n, 1);
  const bool vec = n % kVectorWidth == 0;
  const std::int64_t W = vec ? kVectorWidth : 1;
  const std::int64_t G = threads_per_row(v);
  const std::int64_t nv = n / W;
  const std::int64_t per_thread = (nv + G - 1) / G;
  const std::int64_t combine = vec ? 3 : 0;  // log2(8)
  return per_thread + combine + 5 + (G > kWarp ? 5 : 0);
}

Tolerance tolerance(Variant v, std::int64_t n, double scale) {
  const double u = unit_roundoff(DType::f32);
  const double u64 = unit_roundoff(DType::f64);
  Tolerance t;
  t.depth = depth(v, n);
  t.u_effective = v == Variant::cublas ? 4 * u : u;
  if (static_cast<double>(t.depth) * t.u_effective >= 1)
    throw std::invalid_argument("gemv: no error bound for depth " + std::to_string(t.depth) +
                                " (n = " + std::to_string(n) + ")");
  t.gamma = gamma(static_cast<double>(t.depth), t.u_effective) + 2 * gamma(static_cast<double>(n), u64);
  t.scale = scale;
  return t;
}

Cost cost(Variant variant, std::int64_t rows, std::int64_t cols, DType dtype) {
  const double m = static_cast<double>(rows), n = static_cast<double>(cols);
  const double s = static_cast<double>(dtype_bytes(dtype));
  const double read = m * n * s + n * s, written = 4 * m;
  Cost c = Cost::of({.read = read, .written = written, .compulsory = read + written, .flop = 2 * m * n, .launches = 1});
  c.peak_work_bytes = 4 * m + (variant == Variant::cublas ? kCublasWorkspaceBytes : 0.0);
  return c;
}

namespace {

// Decoded element values: a table for f16 (65536 entries, built once), a shift for bf16.
struct Decoder {
  DType dtype;
  const float* table;
  explicit Decoder(DType t) : dtype(t), table(t == DType::f16 ? half_table() : nullptr) {}
  float operator()(std::uint16_t b) const { return table ? table[b] : bf16_to_float(b); }
  static const float* half_table() {
    static const std::vector<float> t = [] {
      std::vector<float> v(65536);
      for (std::uint32_t b = 0; b < 65536; ++b) v[b] = half_to_float(static_cast<std::uint16_t>(b));
      return v;
    }();
    return t.data();
  }
};

// row_dot on decoded values.
float row_dot_values(const float* a, const float* x, std::int64_t n, int G) {
  float partial[1024];
  const bool vec = n % kVectorWidth == 0;
  for (int t = 0; t < G; ++t)
    partial[t] = vec ? thread_partial<kVectorWidth>(a, x, n / kVectorWidth, t, G) : thread_partial<1>(a, x, n, t, G);
  // The kernels' order (kernels/reduce.cuh): warp_row one warp butterfly, row_block the block's two.
  if (G == kWarp) return ::labrun::kernels::butterfly_reduce(partial, kWarp, ::labrun::kernels::Sum{});
  return ::labrun::kernels::block_reduce_order(partial, G, 0.0f, ::labrun::kernels::Sum{});
}

void require_group(int G) {
  if (G < kWarp || G % kWarp != 0 || G > 1024)
    throw std::invalid_argument("gemv: row_dot needs a multiple of 32 threads, at most 1024");
}

}  // namespace

float row_dot(const std::uint16_t* a_row, const std::uint16_t* x, std::int64_t n, DType dtype, int G) {
  require_group(G);
  const Decoder decode(dtype);
  std::vector<float> a(static_cast<std::size_t>(n)), xs(static_cast<std::size_t>(n));
  for (std::int64_t j = 0; j < n; ++j) {
    a[static_cast<std::size_t>(j)] = decode(a_row[j]);
    xs[static_cast<std::size_t>(j)] = decode(x[j]);
  }
  return row_dot_values(a.data(), xs.data(), n, G);
}

void host_run(Variant variant, std::int64_t m, std::int64_t n, DType dtype, const std::uint16_t* ap,
              const std::uint16_t* xp, float* y) {
  const int G = threads_per_row(variant);
  if (variant != Variant::cublas) require_group(G);
  const Decoder decode(dtype);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = decode(xp[j]);
  parallel_chunks(m, [&](int, std::int64_t begin, std::int64_t end) {
    std::vector<float> a(static_cast<std::size_t>(n));
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint16_t* row = ap + i * n;
      for (std::int64_t j = 0; j < n; ++j) a[static_cast<std::size_t>(j)] = decode(row[j]);
      if (variant != Variant::cublas) {
        y[i] = row_dot_values(a.data(), x.data(), n, G);
        continue;
      }
      float acc = 0;  // the plain f32 dot product: sequential fma over the row
      for (std::int64_t j = 0; j < n; ++j)
        acc = std::fma(a[static_cast<std::size_t>(j)], x[static_cast<std::size_t>(j)], acc);
      y[i] = acc;
    }
  });
}

LABRUN_EXPERIMENT(gemv) {
  e.describe(
       "y = A x (A m x n f16, f32 accumulate and output): a block per row (256/512/1024 threads) vs a warp "
       "per row vs cuBLAS")
      .docs("docs/experiments/gemv.md")
      .int_axis("m", "rows of A = elements of y (the size axis)", 1, 1048576, 4096)
      .int_axis("n", "columns of A = elements of x (the row length)", 1, 1048576, 4096)
      .word_axis("dtype", "storage dtype of A and x (y is f32, every sum in f32)", {"f16", "bf16"}, "f16")
      // m: at a fixed row length n (the slice) every byte and flop grows with m, and so does the number of rows in
      // flight, which is where one-block-per-row and one-warp-per-row differ.
      .plot({"m", "variant", {}, "time vs m"})
      .plot({"n", "variant", {}, "time vs n"});
  e.arrays([](const Args& a, Layout& l) {
    const std::int64_t m = a.i64("m"), n = a.i64("n");
    l.input("A", a.dtype(), m * n).input("x", a.dtype(), n).output("y", DType::f32, m);
  });
  e.inputs_depend_on({"m", "n", "dtype"});
  e.seed_text([](const Args& a) {  // the seeds drawn before the SDK, so earlier results compare point for point
    return "gemv/" + std::to_string(a.i64("m")) + "x" + std::to_string(a.i64("n")) + "/" + to_string(a.dtype());
  });
  e.generate([](const Args&, std::uint64_t seed, Arrays& in) { generate(in["A"], in["x"], seed); });
  e.reference(
      [](const Args& a, const Arrays& in, Reference& r) { reference(in["A"], in["x"], a.i64("m"), a.i64("n"), r); });
  // Every row within its bound γ·Σ|a x| (unscaled: the lab applies lab.tolerance_scale); NaN never passes (C07).
  e.check([](Compare& c) {
    const Variant v = variant_of(c.args());
    const Tolerance tol = tolerance(v, c.args().i64("n"), 1.0);
    const std::vector<double>& abs_sum = c.reference().array("abs_sum");
    const CheckResult& r = c.elementwise("y", [&](std::int64_t i, double) { return tol.bound(abs_sum[i]); });
    // The relative L2 error of y, and the tolerance's constants.
    const View& y = c.outputs()["y"];
    const std::vector<double>& ref = c.reference().array("y");
    double err2 = 0, ref2 = 0;
    for (std::int64_t i = 0; i < y.count; ++i) {
      const double d = y.value(i) - ref[static_cast<std::size_t>(i)];
      err2 += std::isfinite(d) ? d * d : std::numeric_limits<double>::infinity();
      ref2 += ref[static_cast<std::size_t>(i)] * ref[static_cast<std::size_t>(i)];
    }
    c.note("rel_l2_error", ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2));
    c.note("depth", static_cast<double>(tol.depth));
    c.note("u_effective", tol.u_effective);
    c.note("gamma", tol.gamma);
    if (r.worst_index >= 0) c.note("worst_abs_sum", abs_sum[static_cast<std::size_t>(r.worst_index)]);
  });
  e.cost([](const Args& a, const Reference&) { return cost(variant_of(a), a.i64("m"), a.i64("n"), a.dtype()); });
  auto host = [](Launch& setup) -> Step {
    const Args& a = setup.args();
    const Variant v = variant_of(a);
    const std::int64_t m = a.i64("m"), n = a.i64("n");
    const DType t = a.dtype();
    const auto* ap = setup.in("A").as<const std::uint16_t>();
    const auto* xp = setup.in("x").as<const std::uint16_t>();
    float* y = setup.out("y").as<float>();
    return [=](Launch&) { host_run(v, m, n, t, ap, xp, y); };
  };
  for (const auto& row : kVariants) e.variant(row.name, row.description).host(host);
}

}  // namespace labrun::gemv
