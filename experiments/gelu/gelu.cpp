#include "gelu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "counter_rng.hpp"
#include "parallel.hpp"
#include "point.hpp"
#include "record.hpp"
#include "registry.hpp"

namespace labrun::gelu {

namespace {

// The one table of gelu's variants: name, one-line description. Every variant has a host implementation and
// runs in both modes.
struct VariantRow {
  Variant variant;
  const char* name;
  const char* description;
};
constexpr VariantRow kVariants[] = {
    {Variant::unfused, "unfused",
     "seven elementwise kernels, as an eager framework runs the formula op by op (each a full read and write)"},
    {Variant::fused, "fused", "one kernel, scalar loads and stores, grid-stride, f32 math in registers"},
    {Variant::fused_vec, "fused_vec",
     "one kernel, 128-bit loads and stores (4 f32 or 8 bf16), four in flight per thread, f32 math"},
};

constexpr int kChunks = 64;

void require_dtype(DType t) {
  if (t != DType::f32 && t != DType::bf16)
    throw std::invalid_argument(std::string("gelu: dtype must be f32 or bf16, got ") + to_string(t));
}

// Storage traits: S is the stored element; compute is f32.
template <DType T> struct Traits;
template <> struct Traits<DType::f32> {
  using S = float;
  static float load(S s) { return s; }
  static S store(float c) { return c; }
};
template <> struct Traits<DType::bf16> {
  using S = std::uint16_t;
  static float load(S s) { return bf16_to_float(s); }
  static S store(float c) { return float_to_bf16(c); }
};

template <DType T>
void host_run_typed(Variant variant, const Inputs& in, void* output, HostScratch& scratch) {
  using Tr = Traits<T>;
  using S = typename Tr::S;
  const std::int64_t n = in.n;
  const S* x = static_cast<const S*>(in.data());
  S* y = static_cast<S*>(output);
  if (variant != Variant::unfused) {
    // fused and fused_vec: identical numerics (they differ only in how the GPU loads and stores).
    for (std::int64_t i = 0; i < n; ++i) y[i] = Tr::store(fused_f32(Tr::load(x[i])));
    return;
  }
  // Eager semantics: every op reads and writes a full tensor in the storage dtype; two scratch tensors alternate,
  // exactly as the seven GPU kernels use them (A = x³, B = αA, A = x + B, B = √(2/π)A, A = tanh B, B = 1 + A,
  // y = 0.5x·B).
  const std::size_t words = (static_cast<std::size_t>(n) * sizeof(S) + 7) / 8;
  if (scratch.a.size() < words) scratch.a.resize(words);
  if (scratch.b.size() < words) scratch.b.resize(words);
  S* a = reinterpret_cast<S*>(scratch.a.data());
  S* b = reinterpret_cast<S*>(scratch.b.data());
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

const char* to_string(Variant v) {
  for (const auto& row : kVariants)
    if (row.variant == v) return row.name;
  return "?";
}

Variant parse_variant(const std::string& name) {
  for (const auto& row : kVariants)
    if (name == row.name) return row.variant;
  throw std::invalid_argument("unknown gelu variant '" + name + "'");
}

Params params_of(const Point& point) {
  Params p;
  p.variant = parse_variant(point.variant);
  p.n = point.integer("n");
  const auto dt = parse_dtype(point.word("dtype"));
  if (!dt) throw std::invalid_argument("unknown dtype '" + point.word("dtype") + "'");
  require_dtype(*dt);
  p.dtype = *dt;
  p.mode = point.word("mode");
  return p;
}

double Inputs::value(std::int64_t i) const {
  if (dtype == DType::bf16) return bf16_to_float(static_cast<const std::uint16_t*>(data())[i]);
  return static_cast<const float*>(data())[i];
}

Inputs generate(std::int64_t n, DType dtype, std::uint64_t seed) {
  if (n < 0) throw std::invalid_argument("gelu: n must be >= 0");
  require_dtype(dtype);
  Inputs in;
  in.dtype = dtype;
  in.n = n;
  in.storage.assign((static_cast<std::size_t>(n) * dtype_bytes(dtype) + 7) / 8, 0);
  parallel_chunks(n, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint64_t h = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)));
      // |x| = 6·(1 − U), U uniform in [0, 1) on a 2^-53 grid: in (0, 6], never zero; the sign from the low bit.
      const double v = 6.0 * (1.0 - unit_interval(h)) * ((h & 1) ? -1.0 : 1.0);
      if (dtype == DType::f32) static_cast<float*>(in.data())[i] = static_cast<float>(v);
      else static_cast<std::uint16_t*>(in.data())[i] = float_to_bf16(static_cast<float>(v));
    }
  });
  return in;
}

double reference_value(double x) {
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + kAlpha * x * x * x)));
}

std::vector<double> reference(const Inputs& in) {
  std::vector<double> ref(static_cast<std::size_t>(in.n));
  parallel_chunks(in.n, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) ref[i] = reference_value(in.value(i));
  });
  return ref;
}

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
  if (variant == Variant::unfused)
    return {2 * u + s, 2 * u + s, u + s, 2 * u + s, 4 * u + s, u + s, u + s};
  return {0, 0, 0, 4 * u, 4 * u, 0, u + s};
}

namespace {

// bound() with the rounding errors already looked up.
double bound_with(const std::vector<double>& e, double x, double ref) {
  if (x == 0) return 0;
  const double ax = std::fabs(x);
  const double z = kSqrt2OverPi * (x + kAlpha * x * x * x);
  const double one_plus_t = 2 * ref / x;  // 1 + tanh z, in [0, 2]
  const double t = one_plus_t - 1;
  const double sech2 = std::max(0.0, one_plus_t * (2 - one_plus_t));  // 1 − t² = (1 + t)(1 − t)
  const double inner = kSqrt2OverPi * kAlpha * ax * ax * ax * (e[0] + e[1]) + std::fabs(z) * (e[2] + e[3]);
  return 2 * (0.5 * ax * sech2 * inner + 0.5 * ax * std::fabs(t) * e[4] + std::fabs(ref) * (e[5] + e[6]));
}

}  // namespace

double bound(Variant variant, DType dtype, double x, double ref) { return bound_with(roundings(variant, dtype), x, ref); }

Check compare(Variant variant, const Inputs& in, const std::vector<double>& ref, const void* output, double scale) {
  const std::vector<double> e = roundings(variant, in.dtype);
  struct Part {
    double worst = 0, max_abs = 0, max_rel = 0;
    std::int64_t worst_index = -1, mismatches = 0, nonfinite = 0;
  };
  std::vector<Part> parts(kChunks);
  auto out_value = [&](std::int64_t i) -> double {
    if (in.dtype == DType::bf16) return bf16_to_float(static_cast<const std::uint16_t*>(output)[i]);
    return static_cast<const float*>(output)[i];
  };
  const double inf = std::numeric_limits<double>::infinity();
  parallel_chunks(in.n, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part p;
    for (std::int64_t i = begin; i < end; ++i) {
      const double y = out_value(i), r = ref[i];
      double ratio;
      if (!std::isfinite(y)) {
        ++p.nonfinite;
        ratio = inf;  // case C07: NaN (the poison) and inf never pass
      } else {
        const double err = std::fabs(y - r);
        const double b = bound_with(e, in.value(i), r);
        ratio = err == 0 ? 0.0 : (b > 0 ? err / b : inf);
        p.max_abs = std::max(p.max_abs, err);
        if (r != 0) p.max_rel = std::max(p.max_rel, err / std::fabs(r));
      }
      if (!(ratio <= scale)) ++p.mismatches;
      if (p.worst_index < 0 || ratio > p.worst) {
        p.worst = ratio;
        p.worst_index = i;
      }
    }
    parts[chunk] = p;
  });
  Part all;
  for (const auto& p : parts) {  // chunk order: the first worst element in index order wins ties
    if (p.worst_index >= 0 && (all.worst_index < 0 || p.worst > all.worst)) {
      all.worst = p.worst;
      all.worst_index = p.worst_index;
    }
    all.max_abs = std::max(all.max_abs, p.max_abs);
    all.max_rel = std::max(all.max_rel, p.max_rel);
    all.mismatches += p.mismatches;
    all.nonfinite += p.nonfinite;
  }
  Check c;
  c.value = all.worst;
  c.reference = 0;
  c.abs_error = all.worst;
  c.tolerance = scale;
  c.passed = all.nonfinite == 0 && all.worst <= scale;
  c.detail["metric"] = "max over elements of |y - ref| / bound (docs/experiments/gelu.md)";
  c.detail["elements"] = in.n;
  c.detail["mismatches"] = all.mismatches;
  c.detail["nonfinite"] = all.nonfinite;
  c.detail["max_abs_error"] = json_real(all.max_abs);
  c.detail["max_rel_error"] = json_real(all.max_rel);
  if (all.worst_index >= 0) {
    const std::int64_t i = all.worst_index;
    c.detail["worst_index"] = i;
    c.detail["worst_x"] = json_real(in.value(i));
    c.detail["worst_y"] = json_real(out_value(i));
    c.detail["worst_reference"] = json_real(ref[i]);
    c.detail["worst_bound"] = json_real(bound_with(e, in.value(i), ref[i]));
  }
  c.detail["roundings"] = json_reals(e);
  return c;
}

Cost cost(const Params& p) {
  const double n = static_cast<double>(p.n);
  const double s = static_cast<double>(dtype_bytes(p.dtype));
  if (p.variant == Variant::unfused) {
    // pow3 (x → A), scale (A → B), add (x, B → A), scale (A → B), tanh (B → A), add one (A → B),
    // multiply (x, B → y): 9 tensor reads, 7 tensor writes.
    Cost c = Cost::of(9 * n * s, 7 * n * s, 2 * n * s, kUnfusedFlopPerElement * n, kUnfusedKernels, 0);
    c.peak_work_bytes = working_set_bytes(p) - n * s;  // y and the two scratch tensors; x is the input
    return c;
  }
  Cost c = Cost::of(n * s, n * s, 2 * n * s, kFusedFlopPerElement * n, 1, 0);
  c.peak_work_bytes = working_set_bytes(p) - n * s;  // y
  return c;
}

double working_set_bytes(const Params& p) {
  const double n = static_cast<double>(p.n), s = static_cast<double>(dtype_bytes(p.dtype));
  return n * s * (p.variant == Variant::unfused ? 4 : 2);
}

void host_run(Variant variant, const Inputs& inputs, void* output, HostScratch& scratch) {
  if (inputs.dtype == DType::bf16) host_run_typed<DType::bf16>(variant, inputs, output, scratch);
  else host_run_typed<DType::f32>(variant, inputs, output, scratch);
}

namespace {

// The axes that define a point's inputs, as text: what the seed hashes and the cache compares.
std::string input_key(const Params& p) { return std::to_string(p.n) + "/" + to_string(p.dtype); }

}  // namespace

std::uint64_t input_seed(const Params& p, std::uint64_t lab_seed) {
  return splitmix64(lab_seed ^ fnv1a64("gelu/" + input_key(p)));
}

std::shared_ptr<const Inputs> InputCache::inputs(const Params& p, std::uint64_t seed) {
  const std::uint64_t s = input_seed(p, seed);
  const std::string key = input_key(p) + "/" + std::to_string(s);
  if (key != key_ || !inputs_) {
    inputs_.reset();  // release the old set first: at n = 2^30 f32 it is 4 GB, its reference 8 GB
    ref_.reset();
    inputs_ = std::make_shared<const Inputs>(generate(p.n, p.dtype, s));
    key_ = key;
  }
  return inputs_;
}

std::shared_ptr<const std::vector<double>> InputCache::reference_for(const Params& p, std::uint64_t seed) {
  auto in = inputs(p, seed);
  if (!ref_) ref_ = std::make_shared<const std::vector<double>>(reference(*in));
  return ref_;
}

namespace {

class HostWorkload : public Workload {
 public:
  HostWorkload(Params p, std::shared_ptr<const Inputs> in, std::shared_ptr<const std::vector<double>> ref,
               double scale)
      : p_(p), in_(std::move(in)), ref_(std::move(ref)), scale_(scale),
        out_((in_->data_bytes() + 7) / 8 + 1, 0) {}
  void run() override { host_run(p_.variant, *in_, out_.data(), scratch_); }
  Check check(const std::function<void()>& iterate) override {
    std::fill(out_.begin(), out_.end(), ~std::uint64_t{0});  // poison: all-ones bits are NaN in f32 and bf16
    iterate();
    Check c = compare(p_.variant, *in_, *ref_, out_.data(), scale_);
    c.detail["poisoned"] = true;
    return c;
  }
  Cost cost() const override { return gelu::cost(p_); }

 private:
  Params p_;
  std::shared_ptr<const Inputs> in_;
  std::shared_ptr<const std::vector<double>> ref_;
  double scale_;
  HostScratch scratch_;
  std::vector<std::uint64_t> out_;
};

}  // namespace

void register_experiment(Registry& registry) {
  Experiment e;
  e.name = "gelu";
  e.description = "GELU (tanh approximation): seven elementwise kernels vs one fused kernel vs 128-bit vectorised";
  e.axes = {
      {"n", AxisKind::Integer, "elements", 0.0, 2147483648.0, {}, std::int64_t{1} << 20},
      {"dtype", AxisKind::Word, "storage dtype of x, y and the unfused intermediates (math in f32)", {}, {},
       {"f32", "bf16"}, std::string("f32")},
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
  e.size_axis = "n";
  e.estimate = [](const Point& point) {
    const Params p = params_of(point);
    const Cost c = cost(p);
    return PointEstimate{working_set_bytes(p), c.bytes, c.flop};
  };
  e.plots = {PlotSpec{"n", "variant", {"dtype"}, "time vs n"}};
  e.docs = "docs/experiments/gelu.md";
  registry.add(std::move(e));
}

}  // namespace labrun::gelu
