#include "masking.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>

#include "build_info.hpp"
#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>
#include <labrun/point.hpp>
#include "reference_cache.hpp"
#include "registry.hpp"
#include <labrun/status.hpp>

namespace labrun::masking {

namespace {

// The one table of masking's variants: name, one-line description, and whether it has a host implementation.
struct VariantRow {
  Variant variant;
  const char* name;
  const char* description;
  bool host;
};
constexpr VariantRow kVariants[] = {
    {Variant::multiply, "multiply", "sum(down(d*d) * mask): static shape, op by op; 0*inf poisons it", true},
    {Variant::index, "index", "sum(down(d[mask]^2)): compaction with a host-visible count (host sync)", true},
    {Variant::where, "where", "sum(where(mask, down(d*d), 0)): static shape, op by op", true},
    {Variant::sanitize, "sanitize", "sum(down(where(mask, d, 0)^2)): select first, then compute", true},
    {Variant::index_device_count, "index_device_count",
     "compaction whose count stays on the device: no host sync, capturable", false},
    {Variant::fused, "fused", "one pass over data and mask, down() on selected elements only (speed of light)", true},
};

}  // namespace

const char* to_string(Variant v) {
  for (const auto& row : kVariants)
    if (row.variant == v) return row.name;
  return "?";
}

Variant parse_variant(const std::string& name) {
  for (const auto& row : kVariants)
    if (name == row.name) return row.variant;
  throw std::invalid_argument("unknown masking variant '" + name + "'");
}

Params params_of(const Point& point) {
  Params p;
  p.variant = parse_variant(point.variant);
  p.n = point.integer("n");
  p.density = point.real("density");
  const auto dt = parse_dtype(point.word("dtype"));
  if (!dt) throw std::invalid_argument("unknown dtype '" + point.word("dtype") + "'");
  p.dtype = *dt;
  p.mode = point.word("mode");
  p.downstream = static_cast<int>(point.integer("downstream"));
  p.nonfinite = point.word("nonfinite") == "masked_out";
  return p;
}

double Inputs::value(std::int64_t i) const {
  switch (dtype) {
    case DType::f32: return static_cast<const float*>(data())[i];
    case DType::f64: return static_cast<const double*>(data())[i];
    case DType::f16: return half_to_float(static_cast<const std::uint16_t*>(data())[i]);
    case DType::bf16: return bf16_to_float(static_cast<const std::uint16_t*>(data())[i]);
  }
  return 0;
}

namespace {

constexpr int kChunks = 64;

// Storage traits: S is the stored element, C the compute type.
template <DType T> struct Traits;
template <> struct Traits<DType::f32> {
  using S = float;
  using C = float;
  static C load(S s) { return s; }
  static S store(C c) { return c; }
};
template <> struct Traits<DType::f64> {
  using S = double;
  using C = double;
  static C load(S s) { return s; }
  static S store(C c) { return c; }
};
template <> struct Traits<DType::f16> {
  using S = std::uint16_t;
  using C = float;
  static C load(S s) { return half_to_float(s); }
  static S store(C c) { return float_to_half(c); }
};
template <> struct Traits<DType::bf16> {
  using S = std::uint16_t;
  using C = float;
  static C load(S s) { return bf16_to_float(s); }
  static S store(C c) { return float_to_bf16(c); }
};

template <DType T>
typename Traits<T>::C down_once(typename Traits<T>::C x) {
  using C = typename Traits<T>::C;
  return std::sin(x) * static_cast<C>(kDownstreamScale);
}

// Eager-framework semantics: every op reads and writes a full buffer in the storage dtype.
template <DType T>
double host_run_typed(Variant variant, const Inputs& in, int k, HostScratch& scratch) {
  using Tr = Traits<T>;
  using S = typename Tr::S;
  using C = typename Tr::C;
  const std::int64_t n = in.n;
  const S* d = static_cast<const S*>(in.data());
  const std::uint8_t* m = in.mask.data();
  const std::size_t words = (static_cast<std::size_t>(n) * sizeof(S) + 7) / 8;
  if (scratch.a.size() < words) scratch.a.resize(words);
  S* t = reinterpret_cast<S*>(scratch.a.data());
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
      if (scratch.b.size() < words) scratch.b.resize(words);
      S* c = reinterpret_cast<S*>(scratch.b.data());
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

double host_run(Variant variant, const Inputs& inputs, int downstream, HostScratch& scratch) {
  switch (inputs.dtype) {
    case DType::f32: return host_run_typed<DType::f32>(variant, inputs, downstream, scratch);
    case DType::f64: return host_run_typed<DType::f64>(variant, inputs, downstream, scratch);
    case DType::f16: return host_run_typed<DType::f16>(variant, inputs, downstream, scratch);
    case DType::bf16: return host_run_typed<DType::bf16>(variant, inputs, downstream, scratch);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

Inputs generate(std::int64_t n, double density, DType dtype, bool nonfinite, std::uint64_t seed) {
  if (n < 0) throw std::invalid_argument("masking: n must be >= 0");
  Inputs in;
  in.dtype = dtype;
  in.n = n;
  in.storage.assign((static_cast<std::size_t>(n) * dtype_bytes(dtype) + 7) / 8, 0);
  in.mask.assign(static_cast<std::size_t>(n), 0);
  std::vector<std::int64_t> selected(kChunks, 0);
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  parallel_chunks(n, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    std::int64_t count = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint64_t h1 = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)));
      const std::uint64_t h2 = splitmix64(h1);
      const bool on = unit_interval(h1) < density;
      double v = (0.25 + 1.75 * unit_interval(h2)) * ((h1 & 1) ? -1.0 : 1.0);
      if (!on && nonfinite) {
        if ((h2 & 3) == 0) v = inf;
        if ((h2 & 3) == 1) v = nan;
      }
      in.mask[i] = on ? 1 : 0;
      count += on;
      switch (dtype) {
        case DType::f32: static_cast<float*>(in.data())[i] = static_cast<float>(v); break;
        case DType::f64: static_cast<double*>(in.data())[i] = v; break;
        case DType::f16: static_cast<std::uint16_t*>(in.data())[i] = float_to_half(static_cast<float>(v)); break;
        case DType::bf16: static_cast<std::uint16_t*>(in.data())[i] = float_to_bf16(static_cast<float>(v)); break;
      }
    }
    selected[chunk] = count;
  });
  for (auto c : selected) in.selected += c;
  return in;
}

Reference reference(const Inputs& in, int k) {
  // Unit roundoffs of the storage dtype and of the compute type (f32, or f64 for f64 data).
  const double u_s = unit_roundoff(in.dtype);
  const double u_c = unit_roundoff(accumulate_dtype(in.dtype));
  struct Part {
    double sum = 0, abs = 0, err = 0;
    std::int64_t sel = 0;
  };
  std::vector<Part> parts(kChunks);
  parallel_chunks(in.n, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part p;
    for (std::int64_t i = begin; i < end; ++i) {
      if (!in.mask[i]) continue;
      const double d = in.value(i);
      double x = d * d;
      // First-order bound on the absolute error an eager variant carries for this element: the square
      // rounds in the compute type and again on store; each downstream step propagates the incoming error
      // by |d/dx sin(x)*1.0001| = 1.0001|cos x| and adds sin (<= 2 ulp = 4 u_c), the multiply (u_c) and the
      // store (u_s), relative to the step's result.
      double e = (u_c + u_s) * std::fabs(x);
      for (int r = 0; r < k; ++r) {
        const double next = std::sin(x) * kDownstreamScale;
        e = kDownstreamScale * std::fabs(std::cos(x)) * e + (5 * u_c + u_s) * std::fabs(next);
        x = next;
      }
      p.sum += x;
      p.abs += std::fabs(x);
      p.err += e;
      ++p.sel;
    }
    parts[chunk] = p;
  });
  Reference ref;
  for (const auto& p : parts) {
    ref.sum += p.sum;
    ref.sum_abs += p.abs;
    ref.elementwise_error += p.err;
    ref.selected += p.sel;
  }
  return ref;
}

double tolerance(const Params& p, const Reference& ref, double scale) {
  const double n = static_cast<double>(std::max<std::int64_t>(p.n, 1));
  const double reduction = (std::ceil(std::log2(std::max(n, 2.0))) + std::ceil(std::sqrt(n))) *
                           unit_roundoff(accumulate_dtype(p.dtype)) * ref.sum_abs;
  return scale * (2 * ref.elementwise_error + reduction) + 1e-300;
}

Check compare(double value, const Reference& ref, double tol) {
  Check c;
  c.value = value;
  c.reference = ref.sum;
  c.tolerance = tol;
  if (!std::isfinite(value) || !std::isfinite(ref.sum)) {
    // Case C07: NaN is never close; inf matches only the same inf.
    c.abs_error = (value == ref.sum) ? 0.0 : std::numeric_limits<double>::infinity();
    c.passed = value == ref.sum;
  } else {
    c.abs_error = std::fabs(value - ref.sum);
    c.passed = c.abs_error <= tol;
  }
  c.detail["selected"] = ref.selected;
  c.detail["reference_sum_abs"] = json_real(ref.sum_abs);
  c.detail["reference_elementwise_error"] = json_real(ref.elementwise_error);
  c.detail["rel_error"] = json_real(ref.sum != 0 ? c.abs_error / std::fabs(ref.sum) : c.abs_error);
  return c;
}

Cost cost(const Params& p, std::int64_t m) {
  const double n = static_cast<double>(p.n);
  const double s = static_cast<double>(dtype_bytes(p.dtype));
  const double k = p.downstream;
  const double sel = static_cast<double>(m);
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
  return Cost::of(read, written, n * s + n, sel * (1 + 2 * k + 1), launches, syncs);
}

// The axes that define a point's inputs, as text: what the seed hashes and the caches compare.
std::string input_key(const Params& p) {
  return std::to_string(p.n) + "/" + std::to_string(p.density) + "/" + to_string(p.dtype) + "/" +
         (p.nonfinite ? "nonfinite" : "finite");
}

std::uint64_t input_seed(const Params& p, std::uint64_t lab_seed) {
  return splitmix64(lab_seed ^ fnv1a64(input_key(p)));
}

std::shared_ptr<const Inputs> InputCache::inputs(const Params& p, std::uint64_t seed) {
  const std::uint64_t s = input_seed(p, seed);
  const std::string key = input_key(p) + "/" + std::to_string(s);
  if (key != key_ || !inputs_) {
    inputs_.reset();  // release the old set first: at n = 1e8 each set is hundreds of MB
    inputs_ = std::make_shared<const Inputs>(generate(p.n, p.density, p.dtype, p.nonfinite, s));
    key_ = key;
  }
  return inputs_;
}

const Reference& InputCache::reference_for(const Params& p, std::uint64_t seed) {
  const std::uint64_t s = input_seed(p, seed);
  const std::string key = input_key(p) + "/" + std::to_string(s);
  if (key != ref_key_) {
    refs_.clear();
    ref_key_ = key;
  }
  for (const auto& [k, r] : refs_)
    if (k == p.downstream) return r;
  // Another process of the sweep may have computed it (reference_cache.hpp): then no host inputs are generated.
  const ReferenceCache disk = ReferenceCache::from_env();
  const std::string disk_key = "masking/" + key + "/k=" + std::to_string(p.downstream) + "/" + build_info().git_sha;
  if (const auto j = disk.load(disk_key)) {
    try {
      Reference r;
      r.sum = j->at("sum").get<double>();
      r.sum_abs = j->at("sum_abs").get<double>();
      r.elementwise_error = j->at("elementwise_error").get<double>();
      r.selected = j->at("selected").get<std::int64_t>();
      refs_.emplace_back(p.downstream, r);
      return refs_.back().second;
    } catch (const std::exception&) {  // a malformed entry is a miss
    }
  }
  auto in = inputs(p, seed);
  const Reference r = reference(*in, p.downstream);
  disk.store(disk_key, Json{{"sum", json_real(r.sum)},
                            {"sum_abs", json_real(r.sum_abs)},
                            {"elementwise_error", json_real(r.elementwise_error)},
                            {"selected", r.selected}});
  refs_.emplace_back(p.downstream, r);
  return refs_.back().second;
}

namespace {

class HostWorkload : public Workload {
 public:
  HostWorkload(Params p, std::shared_ptr<const Inputs> in, Reference ref, double scale)
      : p_(p), in_(std::move(in)), ref_(ref), scale_(scale) {}
  void run() override { last_ = host_run(p_.variant, *in_, p_.downstream, scratch_); }
  Check check(const std::function<void()>& iterate) override {
    last_ = std::numeric_limits<double>::quiet_NaN();  // poison
    iterate();
    return compare(last_, ref_, tolerance(p_, ref_, scale_));
  }
  Cost cost() const override { return masking::cost(p_, in_->selected); }

 private:
  Params p_;
  std::shared_ptr<const Inputs> in_;
  Reference ref_;
  double scale_;
  HostScratch scratch_;
  double last_ = 0;
};

}  // namespace

void register_experiment(Registry& registry) {
  Experiment e;
  e.name = "masking";
  e.description = "sum of squares of masked elements: multiply vs boolean indexing vs where vs sanitize";
  e.axes = {
      {"n", AxisKind::Integer, "elements", 0.0, 4e9, {}, std::int64_t{1000000}},
      {"density", AxisKind::Real, "fraction of elements the mask selects", 0.0, 1.0, {}, 0.5},
      {"dtype", AxisKind::Word, "storage dtype of the data (sums accumulate in f32, f64 for f64)", {}, {},
       {"f32", "f16", "bf16", "f64"}, std::string("f32")},
      {"downstream", AxisKind::Integer, "times x <- sin(x)*1.0001 is applied after squaring", 0.0, 1024.0, {},
       std::int64_t{0}},
      {"nonfinite", AxisKind::Word, "plant +inf/NaN in masked-out slots (case C06)", {}, {},
       {"none", "masked_out"}, std::string("none")},
  };
  auto cache = std::make_shared<InputCache>();
  auto host = [cache](const Point& point, Backend&, const LabSettings& lab) -> std::unique_ptr<Workload> {
    const Params p = params_of(point);
    auto in = cache->inputs(p, lab.seed);
    const Reference& ref = cache->reference_for(p, lab.seed);
    return std::make_unique<HostWorkload>(p, in, ref, lab.tolerance_scale.value_or(1.0));
  };
  for (const auto& row : kVariants) {
    VariantDecl decl{row.name, row.description, {}, {}};
    if (row.host) decl.implementations[BackendKind::host] = host;
    e.variants.push_back(std::move(decl));
  }
  e.size_axis = "n";
  e.estimate = [](const Point& point) {
    const Params p = params_of(point);
    const double n = static_cast<double>(p.n), s = static_cast<double>(dtype_bytes(p.dtype));
    // Data and mask, plus the op-by-op variants' temporary and the compactions' selection buffer.
    const bool compacts = p.variant == Variant::index || p.variant == Variant::index_device_count;
    const double working = n * s + n + (p.variant == Variant::fused ? 0 : n * s) + (compacts ? n * s : 0);
    const Cost c = cost(p, static_cast<std::int64_t>(p.density * n));
    return PointEstimate{working, c.bytes, c.flop};
  };
  e.plots = {PlotSpec{"n", "variant", {"density"}, "time vs n"}, PlotSpec{"density", "variant", {"n"}, "time vs density"}};
  e.report_section = report_section;
  e.docs = "docs/experiments/masking.md";
  registry.add(std::move(e));
}

}  // namespace labrun::masking
