// The masking experiment on the SDK (LABRUN_EXPERIMENT(masking)): axes, arrays, the input generator, the float64
// reference, the scalar check, the cost model and the host variants. Formulas: docs/experiments/masking.md.
#include "masking.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <labrun/counter_rng.hpp>
#include <labrun/dtype.hpp>
#include <labrun/parallel.hpp>
#include <labrun/vector_math.hpp>

namespace labrun::masking {

namespace {

constexpr const char* kVariantNames[] = {"multiply", "index", "where", "sanitize", "index_device_count", "fused"};

// Storage traits: S is the stored element, C the compute type. f32, f16 and bf16 are the SDK's Stored<T> (compute
// in f32); f64 is stored and computed as double.
template <DType T>
struct Traits : Stored<T> {
  using C = float;
};
template <>
struct Traits<DType::f64> {
  using S = double;
  using C = double;
  static C load(S s) { return s; }
  static S store(C c) { return c; }
};

template <DType T>
typename Traits<T>::C down_once(typename Traits<T>::C x) {
  using C = typename Traits<T>::C;
  return std::sin(x) * static_cast<C>(kDownstreamScale);
}

// Eager-framework semantics: every op reads and writes a full buffer in the storage dtype.
template <DType T>
double host_run_typed(Variant variant, const View& dv, const View& mv, int k, void* a, void* b) {
  using Tr = Traits<T>;
  using S = typename Tr::S;
  using C = typename Tr::C;
  const std::int64_t n = dv.count;
  const S* d = dv.as<const S>();
  const std::uint8_t* m = mv.as<const std::uint8_t>();
  S* t = static_cast<S*>(a);
  auto square = [&](const S* src, std::int64_t count) {
    for (std::int64_t i = 0; i < count; ++i) t[i] = Tr::store(Tr::load(src[i]) * Tr::load(src[i]));
  };
  auto downstream = [&](std::int64_t count) {
    for (int r = 0; r < k; ++r)
      for (std::int64_t i = 0; i < count; ++i) t[i] = Tr::store(down_once<T>(Tr::load(t[i])));
  };
  auto sum = [&](std::int64_t count) {
    double acc = 0;
    for (std::int64_t i = 0; i < count; ++i) acc += static_cast<double>(Tr::load(t[i]));
    return acc;
  };
  double acc = 0;
  switch (variant) {
    case Variant::multiply:
      square(d, n);
      downstream(n);
      for (std::int64_t i = 0; i < n; ++i) t[i] = Tr::store(Tr::load(t[i]) * static_cast<C>(m[i]));
      acc = sum(n);
      break;
    case Variant::where:
      square(d, n);
      downstream(n);
      for (std::int64_t i = 0; i < n; ++i) t[i] = m[i] ? t[i] : Tr::store(C(0));
      acc = sum(n);
      break;
    case Variant::sanitize:
      for (std::int64_t i = 0; i < n; ++i) t[i] = m[i] ? d[i] : Tr::store(C(0));
      square(t, n);
      downstream(n);
      acc = sum(n);
      break;
    case Variant::index:
    case Variant::index_device_count: {
      S* c = static_cast<S*>(b);
      std::int64_t count = 0;
      for (std::int64_t i = 0; i < n; ++i)
        if (m[i]) c[count++] = d[i];
      square(c, count);
      downstream(count);
      acc = sum(count);
      break;
    }
    case Variant::fused:
      for (std::int64_t i = 0; i < n; ++i) {
        if (!m[i]) continue;
        C x = Tr::load(d[i]) * Tr::load(d[i]);
        for (int r = 0; r < k; ++r) x = down_once<T>(x);
        acc += static_cast<double>(x);
      }
      break;
  }
  return T == DType::f64 ? acc : static_cast<double>(static_cast<float>(acc));
}

}  // namespace

const char* to_string(Variant v) { return kVariantNames[static_cast<int>(v)]; }

Params params_of(const Args& a) {
  Params p;
  p.variant = Variant::fused;
  for (int i = 0; i < 6; ++i)
    if (a.variant() == kVariantNames[i]) p.variant = static_cast<Variant>(i);
  if (a.variant() != to_string(p.variant)) throw std::invalid_argument("unknown masking variant '" + a.variant() + "'");
  p.n = a.i64("n");
  p.density = a.real("density");
  p.dtype = a.dtype();
  p.downstream = static_cast<int>(a.i64("downstream"));
  p.nonfinite = a.word("nonfinite") == "masked_out";
  return p;
}

double host_run(Variant variant, const View& data, const View& mask, int downstream, void* a, void* b) {
  switch (*data.elem.dtype) {
    case DType::f32: return host_run_typed<DType::f32>(variant, data, mask, downstream, a, b);
    case DType::f64: return host_run_typed<DType::f64>(variant, data, mask, downstream, a, b);
    case DType::f16: return host_run_typed<DType::f16>(variant, data, mask, downstream, a, b);
    case DType::bf16: return host_run_typed<DType::bf16>(variant, data, mask, downstream, a, b);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::int64_t generate(const View& data, const View& mask, double density, bool nonfinite, std::uint64_t seed) {
  std::vector<std::int64_t> selected(kDefaultChunks, 0);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  parallel_chunks(data.count, [&](int chunk, std::int64_t begin, std::int64_t end) {
    std::int64_t count = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint64_t h1 = counter_bits(seed, i);
      const std::uint64_t h2 = splitmix64(h1);
      const bool on = unit_interval(h1) < density;
      double v = (0.25 + 1.75 * unit_interval(h2)) * ((h1 & 1) ? -1.0 : 1.0);
      if (!on && nonfinite) {
        if ((h2 & 3) == 0) v = inf;
        if ((h2 & 3) == 1) v = nan;
      }
      mask.as<std::uint8_t>()[i] = on ? 1 : 0;
      count += on;
      switch (*data.elem.dtype) {
        case DType::f32: data.as<float>()[i] = static_cast<float>(v); break;
        case DType::f64: data.as<double>()[i] = v; break;
        case DType::f16: data.as<std::uint16_t>()[i] = float_to_half(static_cast<float>(v)); break;
        case DType::bf16: data.as<std::uint16_t>()[i] = float_to_bf16(static_cast<float>(v)); break;
      }
    }
    selected[chunk] = count;
  });
  std::int64_t total = 0;
  for (auto c : selected) total += c;
  return total;
}

Sums reference(const View& data, const View& mask, int k) {
  const DType t = *data.elem.dtype;
  const std::uint8_t* m = mask.as<const std::uint8_t>();
  // Unit roundoffs of the storage dtype and of the compute type (f32, or f64 for f64 data).
  const double u_s = unit_roundoff(t);
  const double u_c = unit_roundoff(accumulate_dtype(t));
  struct Part {
    double sum = 0, abs = 0, err = 0;
    std::int64_t sel = 0;
  };
  std::vector<Part> parts(kDefaultChunks);
  parallel_chunks(data.count, [&](int chunk, std::int64_t begin, std::int64_t end) {
    // The selected elements a block at a time, so each downstream step's sin runs over the block at once
    // (sin_n, vectorized); sums still run in element order.
    constexpr int kBlock = 512;
    double x[kBlock], e[kBlock], s[kBlock];
    Part p;
    for (std::int64_t i = begin; i < end;) {
      int b = 0;
      for (; i < end && b < kBlock; ++i) {
        if (!m[i]) continue;
        const double d = data.value(i);
        x[b] = d * d;
        // First-order bound on the absolute error an eager variant carries for this element: the square
        // rounds in the compute type and again on store; each downstream step propagates the incoming error
        // by |d/dx sin(x)*1.0001| = 1.0001|cos x| and adds sin (<= 2 ulp = 4 u_c), the multiply (u_c) and the
        // store (u_s), relative to the step's result.
        e[b] = (u_c + u_s) * std::fabs(x[b]);
        ++b;
      }
      for (int r = 0; r < k; ++r) {
        sin_n(x, s, b);
        // |cos x| as sqrt(1 - sin^2 x): no second transcendental; its error, at most about 1.5e-8 absolute where
        // cos x nears 0, scales a term already first-order.
        for (int j = 0; j < b; ++j) {
          const double next = s[j] * kDownstreamScale;
          e[j] = kDownstreamScale * std::sqrt(std::max(0.0, 1.0 - s[j] * s[j])) * e[j] +
                 (5 * u_c + u_s) * std::fabs(next);
          x[j] = next;
        }
      }
      for (int j = 0; j < b; ++j) {
        p.sum += x[j];
        p.abs += std::fabs(x[j]);
        p.err += e[j];
      }
      p.sel += b;
    }
    parts[chunk] = p;
  });
  Sums ref;
  for (const auto& p : parts) {
    ref.sum += p.sum;
    ref.sum_abs += p.abs;
    ref.elementwise_error += p.err;
    ref.selected += p.sel;
  }
  return ref;
}

double tolerance(const Params& p, const Sums& ref, double scale) {
  const double n = static_cast<double>(std::max<std::int64_t>(p.n, 1));
  const double reduction = (std::ceil(std::log2(std::max(n, 2.0))) + std::ceil(std::sqrt(n))) *
                           unit_roundoff(accumulate_dtype(p.dtype)) * ref.sum_abs;
  return scale * (2 * ref.elementwise_error + reduction) + 1e-300;
}

Cost cost(const Params& p, double m) {
  const double n = static_cast<double>(p.n);
  const double s = static_cast<double>(dtype_bytes(p.dtype));
  const double k = p.downstream;
  const double sel = m;
  double read = 0, written = 0, launches = 0, syncs = 0;
  // Bytes as each variant's kernels issue them (one read/write per element per op); reductions read their
  // input once and write a few bytes (ignored). Launch counts include CUB's (2 per reduce, 2 per select + count
  // scan inside DeviceSelect counted as one).
  switch (p.variant) {
    case Variant::multiply:
    case Variant::where:
      read = n * s * (1 + k + 1) + n + n * s;  // square, k downstream, mask op (+mask bytes), reduce
      written = n * s * (1 + k + 1);
      launches = 1 + k + 1 + 2;
      break;
    case Variant::sanitize:
      read = n * s + n + n * s * (1 + k) + n * s;  // where(+mask), square, k downstream, reduce
      written = n * s * (1 + 1 + k);
      launches = 1 + 1 + k + 2;
      break;
    case Variant::index:
    case Variant::index_device_count:
      read = n * s + n + sel * s * (1 + k) + sel * s;  // select(+mask), square, k downstream, reduce
      written = sel * s + sel * s * (1 + k);
      launches = 2 + 1 + k + 2;
      syncs = p.variant == Variant::index ? 1 : 0;
      break;
    case Variant::fused:
      read = n * s + n;
      written = 0;
      launches = 2;
      break;
  }
  // sin counted as one op; the square and the downstream multiply as one flop each; the sum one add.
  return Cost::of({.read = read,
                   .written = written,
                   .compulsory = n * s + n,
                   .flop = sel * (1 + 2 * k + 1),
                   .launches = launches,
                   .host_syncs = syncs});
}

LABRUN_EXPERIMENT(masking) {
  e.describe("sum of squares of masked elements: multiply vs boolean indexing vs where vs sanitize")
      .docs("docs/experiments/masking.md")
      .int_axis("n", "elements", 0, 4e9, 1000000)
      .real_axis("density", "fraction of elements the mask selects", 0, 1, 0.5)
      .word_axis("dtype", "storage dtype of the data (sums accumulate in f32, f64 for f64)",
                 {"f32", "f16", "bf16", "f64"}, "f32")
      .int_axis("downstream", "times x <- sin(x)*1.0001 is applied after squaring", 0, 1024, 0)
      .word_axis("nonfinite", "plant +inf/NaN in masked-out slots (case C06)", {"none", "masked_out"}, "none")
      .plot({"n", "variant", {"density"}, "time vs n"})
      .plot({"density", "variant", {"n"}, "time vs density"});
  // Data and mask; the result; the op-by-op variants' temporary and the compactions' selection buffer (which
  // `index` takes from the stream-ordered pool inside each iteration, as an eager framework does).
  e.arrays([](const Args& a, Layout& l) {
    const Params p = params_of(a);
    l.input("data", p.dtype, p.n).add("mask", Role::input, Elem::raw<std::uint8_t>(), p.n);
    l.output("result", accumulate_dtype(p.dtype), 1);
    const Role role = p.variant == Variant::index ? Role::transient : Role::scratch;
    if (p.variant != Variant::fused) l.add("tmp", role, Elem::of(p.dtype), p.n);
    if (p.variant == Variant::index || p.variant == Variant::index_device_count)
      l.add("sel", role, Elem::of(p.dtype), p.n);
  });
  e.inputs_depend_on({"n", "density", "dtype", "nonfinite"}).reference_depends_on({"downstream"});
  e.seed_text([](const Args& a) {  // the seeds drawn before the SDK, so earlier results compare point for point
    const Params p = params_of(a);
    return std::to_string(p.n) + "/" + std::to_string(p.density) + "/" + to_string(p.dtype) + "/" +
           (p.nonfinite ? "nonfinite" : "finite");
  });
  e.generate([](const Args& a, std::uint64_t seed, Arrays& in) {
    const Params p = params_of(a);
    generate(in["data"], in["mask"], p.density, p.nonfinite, seed);
  });
  e.reference([](const Args& a, const Arrays& in, Reference& r) {
    const Sums s = reference(in["data"], in["mask"], params_of(a).downstream);
    r.set("sum", s.sum);
    r.set("sum_abs", s.sum_abs);
    r.set("elementwise_error", s.elementwise_error);
    r.set("selected", static_cast<double>(s.selected));
  });
  // One value against the reference sum: NaN or inf against a finite sum never passes (case C07).
  e.check([](Compare& c) {
    const Reference& r = c.reference();
    const Sums s{r.value("sum"), r.value("sum_abs"), r.value("elementwise_error"),
                 static_cast<std::int64_t>(r.value("selected"))};
    c.scalar("result", "sum", tolerance(params_of(c.args()), s, 1.0));
    c.note("selected", r.value("selected"));
    c.note("reference_sum_abs", s.sum_abs);
    c.note("reference_elementwise_error", s.elementwise_error);
  });
  e.cost([](const Args& a, const Reference& r) {
    const Params p = params_of(a);
    return cost(p, r.value_or("selected", std::floor(p.density * static_cast<double>(p.n))));
  });
  // The host variants: the result rounded to the accumulation dtype, written to the one-element output.
  auto host = [](Launch& setup) -> Step {
    const Params p = params_of(setup.args());
    const std::size_t bytes = static_cast<std::size_t>(p.n) * dtype_bytes(p.dtype);
    void* a = p.variant == Variant::index   ? setup.allocate(bytes)
              : p.variant == Variant::fused ? nullptr
                                            : setup.scratch("tmp").data;
    void* b = p.variant == Variant::index ? setup.allocate(bytes) : nullptr;
    return [p, a, b](Launch& l) {
      const double v = host_run(p.variant, l.in("data"), l.in("mask"), p.downstream, a, b);
      const View& out = l.out("result");
      if (p.dtype == DType::f64) *out.as<double>() = v;
      else *out.as<float>() = static_cast<float>(v);
    };
  };
  e.variant("multiply", "sum(down(d*d) * mask): static shape, op by op; 0*inf poisons it").host(host);
  e.variant("index", "sum(down(d[mask]^2)): compaction with a host-visible count (host sync)").host(host);
  e.variant("where", "sum(where(mask, down(d*d), 0)): static shape, op by op").host(host);
  e.variant("sanitize", "sum(down(where(mask, d, 0)^2)): select first, then compute").host(host);
  e.variant("index_device_count", "compaction whose count stays on the device: no host sync, capturable");
  e.variant("fused", "one pass over data and mask, down() on selected elements only (speed of light)").host(host);
  e.report_section(report_section);
}

}  // namespace labrun::masking
