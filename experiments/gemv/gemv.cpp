#include "gemv.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>
#include <labrun/point.hpp>
#include "record.hpp"
#include "registry.hpp"

namespace labrun::gemv {

namespace {

// The one table of gemv's variants: name, threads per row, one-line description. Every variant has a host
// implementation and runs in both modes.
struct VariantRow {
  Variant variant;
  const char* name;
  int threads_per_row;
  const char* description;
};
constexpr VariantRow kVariants[] = {
    {Variant::row_block_256, "row_block_256", 256,
     "one block of 256 threads per row, 128-bit loads of A and x, warp shuffles then shared memory"},
    {Variant::row_block_512, "row_block_512", 512,
     "one block of 512 threads per row, 128-bit loads of A and x, warp shuffles then shared memory"},
    {Variant::row_block_1024, "row_block_1024", 1024,
     "one block of 1024 threads per row, 128-bit loads of A and x, warp shuffles then shared memory"},
    {Variant::warp_row, "warp_row", kWarp,
     "one warp per row, 8 rows per block of 256 threads, 128-bit loads, warp shuffles only"},
    {Variant::cublas, "cublas", 0,
     "cuBLAS GEMM with n = 1 (op T on the row-major A, lda = n), f16 in, f32 out and compute (host: f32 dot)"},
};

constexpr int kChunks = 64;  // fixed split of the host loops: results independent of the thread count

void require_dtype(DType t) {
  if (t != DType::f16 && t != DType::bf16)
    throw std::invalid_argument(std::string("gemv: dtype must be f16 or bf16, got ") + labrun::to_string(t));
}

double gamma(double k, double u) { return k * u / (1 - k * u); }

// The warp butterfly of offsets 16, 8, 4, 2, 1 over p[0..32): lane l ends with the value lane 0 ends with, since
// each step adds the same two values in every lane of a pair (+ is commutative). Returns lane 0's.
float butterfly32(float* p) {
  for (int off = kWarp / 2; off > 0; off /= 2)
    for (int l = 0; l < off; ++l) p[l] = p[l] + p[l + off];
  return p[0];
}

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

const char* to_string(Variant v) {
  for (const auto& row : kVariants)
    if (row.variant == v) return row.name;
  return "?";
}

Variant parse_variant(const std::string& name) {
  for (const auto& row : kVariants)
    if (name == row.name) return row.variant;
  throw std::invalid_argument("unknown gemv variant '" + name + "'");
}

int threads_per_row(Variant v) {
  for (const auto& row : kVariants)
    if (row.variant == v) return row.threads_per_row;
  return 0;
}

Params params_of(const Point& point) {
  Params p;
  p.variant = parse_variant(point.variant);
  p.m = point.integer("m");
  p.n = point.integer("n");
  if (p.m < 0 || p.n < 0) throw std::invalid_argument("gemv: m and n must be >= 0");
  const auto dt = parse_dtype(point.word("dtype"));
  if (!dt) throw std::invalid_argument("unknown dtype '" + point.word("dtype") + "'");
  require_dtype(*dt);
  p.dtype = *dt;
  p.mode = point.word("mode");
  return p;
}

Inputs generate(std::int64_t m, std::int64_t n, DType dtype, std::uint64_t seed) {
  if (m < 0 || n < 0) throw std::invalid_argument("gemv: m and n must be >= 0");
  require_dtype(dtype);
  Inputs in;
  in.dtype = dtype;
  in.m = m;
  in.n = n;
  in.a.assign(static_cast<std::size_t>(m * n), 0);
  in.x.assign(static_cast<std::size_t>(n), 0);
  auto draw = [dtype](std::uint64_t s, std::int64_t i) -> std::uint16_t {
    const std::uint64_t h = splitmix64(s ^ splitmix64(static_cast<std::uint64_t>(i)));
    // |v| = (1 + 15·(1 − U))/16 in (1/16, 1]; rounding to the dtype keeps it in [1/16, 1]: never zero or subnormal.
    const double v = (1.0 + 15.0 * (1.0 - unit_interval(h))) / 16.0 * ((h & 1) ? -1.0 : 1.0);
    return dtype == DType::bf16 ? float_to_bf16(static_cast<float>(v)) : float_to_half(static_cast<float>(v));
  };
  const std::uint64_t seed_x = splitmix64(seed ^ 0x78ull);
  parallel_chunks(m * n, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) in.a[static_cast<std::size_t>(i)] = draw(seed, i);
  });
  for (std::int64_t j = 0; j < n; ++j) in.x[static_cast<std::size_t>(j)] = draw(seed_x, j);
  return in;
}

Reference reference(const Inputs& in) {
  Reference ref;
  ref.y.assign(static_cast<std::size_t>(in.m), 0.0);
  ref.abs_sum.assign(static_cast<std::size_t>(in.m), 0.0);
  std::vector<double> x(in.x.size());
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = in.decode(in.x[j]);
  parallel_chunks(in.m, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint16_t* row = in.a.data() + i * in.n;
      double s = 0, abs = 0;
      for (std::int64_t j = 0; j < in.n; ++j) {
        const double p = static_cast<double>(in.decode(row[j])) * x[static_cast<std::size_t>(j)];  // exact
        s += p;
        abs += std::fabs(p);
      }
      ref.y[static_cast<std::size_t>(i)] = s;
      ref.abs_sum[static_cast<std::size_t>(i)] = abs;
    }
  });
  return ref;
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
    throw std::invalid_argument("gemv: no error bound for depth " + std::to_string(t.depth) + " (n = " +
                                std::to_string(n) + ")");
  t.gamma = gamma(static_cast<double>(t.depth), t.u_effective) + 2 * gamma(static_cast<double>(n), u64);
  t.scale = scale;
  return t;
}

Check compare(const Inputs& in, const float* y, const Reference& ref, const Tolerance& tol) {
  const double inf = std::numeric_limits<double>::infinity();
  struct Part {
    double worst = 0, max_abs = 0, err2 = 0, ref2 = 0;
    std::int64_t worst_row = -1, mismatches = 0, nonfinite = 0;
  };
  std::vector<Part> parts(kChunks);
  parallel_chunks(in.m, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part p;
    for (std::int64_t i = begin; i < end; ++i) {
      const double got = y[i], want = ref.y[static_cast<std::size_t>(i)];
      double ratio;
      if (!std::isfinite(got)) {
        ++p.nonfinite;
        ratio = inf;  // case C07: NaN (the poison) and inf never pass
        p.err2 = inf;
      } else {
        const double err = std::fabs(got - want);
        const double b = tol.bound(ref.abs_sum[static_cast<std::size_t>(i)]);
        ratio = err == 0 ? 0.0 : (b > 0 ? err / b : inf);
        p.max_abs = std::max(p.max_abs, err);
        p.err2 += err * err;
      }
      p.ref2 += want * want;
      if (!(ratio <= 1)) ++p.mismatches;
      if (p.worst_row < 0 || !(ratio <= p.worst)) {
        p.worst = ratio;
        p.worst_row = i;
      }
    }
    parts[chunk] = p;
  });
  Part all;
  for (const auto& p : parts) {  // chunk order: the first worst row in index order wins ties
    if (p.worst_row >= 0 && (all.worst_row < 0 || !(p.worst <= all.worst))) {
      all.worst = p.worst;
      all.worst_row = p.worst_row;
    }
    all.max_abs = std::max(all.max_abs, p.max_abs);
    all.err2 += p.err2;
    all.ref2 += p.ref2;
    all.mismatches += p.mismatches;
    all.nonfinite += p.nonfinite;
  }
  Check c;
  c.value = all.worst;
  c.reference = 0;
  c.abs_error = all.worst;
  c.tolerance = 1;
  c.passed = all.nonfinite == 0 && all.worst <= 1;
  c.detail["metric"] = "worst |y - ref| / bound over the rows (passes <= 1; docs/experiments/gemv.md)";
  c.detail["rows"] = in.m;
  c.detail["mismatches"] = all.mismatches;
  c.detail["nonfinite"] = all.nonfinite;
  c.detail["max_abs_error"] = json_real(all.max_abs);
  c.detail["rel_l2_error"] = json_real(all.ref2 > 0 ? std::sqrt(all.err2 / all.ref2) : std::sqrt(all.err2));
  if (all.worst_row >= 0) {
    const auto r = static_cast<std::size_t>(all.worst_row);
    c.detail["worst"] = {{"row", all.worst_row},
                         {"got", json_real(y[r])},
                         {"expected", json_real(ref.y[r])},
                         {"abs_sum", json_real(ref.abs_sum[r])},
                         {"bound", json_real(tol.bound(ref.abs_sum[r]))}};
  }
  c.detail["tolerance"] = {{"depth", tol.depth},
                           {"u_effective", json_real(tol.u_effective)},
                           {"gamma", json_real(tol.gamma)},
                           {"scale", json_real(tol.scale)}};
  return c;
}

Cost cost(const Params& p) {
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n);
  const double s = static_cast<double>(dtype_bytes(p.dtype));
  const double read = m * n * s + n * s, written = 4 * m;
  Cost c = Cost::of(read, written, read + written, 2 * m * n, 1, 0);
  c.peak_work_bytes = peak_work_bytes(p);
  return c;
}

double peak_work_bytes(const Params& p) {
  return 4 * static_cast<double>(p.m) + (p.variant == Variant::cublas ? kCublasWorkspaceBytes : 0.0);
}

double working_set_bytes(const Params& p) {
  const double m = static_cast<double>(p.m), n = static_cast<double>(p.n);
  const double s = static_cast<double>(dtype_bytes(p.dtype));
  return m * n * s + n * s + 4 * m;  // A, x, y: cuBLAS's workspace is not the problem's (see the header)
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
  const int warps = G / kWarp;
  float sums[kWarp] = {};  // the warps' sums, zero-padded to 32 as the kernel's second butterfly reads them
  for (int w = 0; w < warps; ++w) sums[w] = butterfly32(partial + w * kWarp);
  if (warps == 1) return sums[0];
  return butterfly32(sums);
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

void host_run(Variant variant, const Inputs& in, float* y) {
  const int G = threads_per_row(variant);
  if (variant != Variant::cublas) require_group(G);
  const Decoder decode(in.dtype);
  std::vector<float> x(in.x.size());
  for (std::size_t j = 0; j < x.size(); ++j) x[j] = decode(in.x[j]);
  parallel_chunks(in.m, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
    std::vector<float> a(static_cast<std::size_t>(in.n));
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint16_t* row = in.a.data() + i * in.n;
      for (std::int64_t j = 0; j < in.n; ++j) a[static_cast<std::size_t>(j)] = decode(row[j]);
      if (variant != Variant::cublas) {
        y[i] = row_dot_values(a.data(), x.data(), in.n, G);
        continue;
      }
      float acc = 0;  // the plain f32 dot product: sequential fma over the row
      for (std::int64_t j = 0; j < in.n; ++j)
        acc = std::fma(a[static_cast<std::size_t>(j)], x[static_cast<std::size_t>(j)], acc);
      y[i] = acc;
    }
  });
}

namespace {

// The axes that define a point's inputs, as text: what the seed hashes and the cache compares.
std::string input_key(const Params& p) {
  return std::to_string(p.m) + "x" + std::to_string(p.n) + "/" + labrun::to_string(p.dtype);
}

}  // namespace

std::uint64_t input_seed(const Params& p, std::uint64_t lab_seed) {
  return splitmix64(lab_seed ^ fnv1a64("gemv/" + input_key(p)));
}

std::shared_ptr<const Inputs> InputCache::inputs(const Params& p, std::uint64_t seed) {
  const std::uint64_t s = input_seed(p, seed);
  const std::string key = input_key(p) + "/" + std::to_string(s);
  if (key != key_ || !inputs_) {
    inputs_.reset();  // release the old set first: 14336 x 4096 f16 is 117 MB
    ref_.reset();
    inputs_ = std::make_shared<const Inputs>(generate(p.m, p.n, p.dtype, s));
    key_ = key;
  }
  return inputs_;
}

std::shared_ptr<const Reference> InputCache::reference_for(const Params& p, std::uint64_t seed) {
  auto in = inputs(p, seed);
  if (!ref_) ref_ = std::make_shared<const Reference>(reference(*in));
  return ref_;
}

namespace {

class HostWorkload : public Workload {
 public:
  HostWorkload(Params p, std::shared_ptr<const Inputs> in, std::shared_ptr<const Reference> ref, double scale)
      : p_(p), in_(std::move(in)), ref_(std::move(ref)), scale_(scale), y_(static_cast<std::size_t>(p.m) + 1) {}
  void run() override { host_run(p_.variant, *in_, y_.data()); }
  Check check(const std::function<void()>& iterate) override {
    std::fill(y_.begin(), y_.end(), std::numeric_limits<float>::quiet_NaN());  // poison (case C07)
    iterate();
    Check c = compare(*in_, y_.data(), *ref_, tolerance(p_.variant, p_.n, scale_));
    c.detail["poisoned"] = true;
    if (p_.variant == Variant::cublas)
      c.detail["host_cublas"] = "host stand-in: a sequential f32 fma dot product per row, not cuBLAS";
    return c;
  }
  Cost cost() const override { return gemv::cost(p_); }

 private:
  Params p_;
  std::shared_ptr<const Inputs> in_;
  std::shared_ptr<const Reference> ref_;
  double scale_;
  std::vector<float> y_;
};

}  // namespace

void register_experiment(Registry& registry) {
  Experiment e;
  e.name = "gemv";
  e.description = "y = A x (A m x n f16, f32 accumulate and output): a block per row (256/512/1024 threads) vs a "
                  "warp per row vs cuBLAS";
  e.axes = {
      {"m", AxisKind::Integer, "rows of A = elements of y (the size axis)", 1.0, 1048576.0, {}, std::int64_t{4096}},
      {"n", AxisKind::Integer, "columns of A = elements of x (the row length)", 1.0, 1048576.0, {},
       std::int64_t{4096}},
      {"dtype", AxisKind::Word, "storage dtype of A and x (y is f32, every sum in f32)", {}, {}, {"f16", "bf16"},
       std::string("f16")},
  };
  auto cache = std::make_shared<InputCache>();
  auto host = [cache](const Point& point, Backend&, const LabSettings& lab) -> std::unique_ptr<Workload> {
    const Params p = params_of(point);
    auto in = cache->inputs(p, lab.seed);
    auto ref = cache->reference_for(p, lab.seed);
    return std::make_unique<HostWorkload>(p, in, ref, lab.tolerance_scale.value_or(1.0));
  };
  for (const auto& row : kVariants) {
    VariantDecl decl{row.name, row.description, {}, {}};
    decl.implementations[BackendKind::host] = host;
    e.variants.push_back(std::move(decl));
  }
  // m: at a fixed row length n (the slice) every byte and flop grows with m, and so does the number of rows in
  // flight, which is where one-block-per-row and one-warp-per-row differ.
  e.size_axis = "m";
  e.estimate = [](const Point& point) {
    const Params p = params_of(point);
    const Cost c = cost(p);
    return PointEstimate{working_set_bytes(p), c.bytes, c.flop};
  };
  e.plots = {PlotSpec{"m", "variant", {}, "time vs m"}, PlotSpec{"n", "variant", {}, "time vs n"}};
  e.docs = "docs/experiments/gemv.md";
  registry.add(std::move(e));
}

}  // namespace labrun::gemv
