#include "softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>
#include <labrun/point.hpp>
#include "record.hpp"
#include "registry.hpp"
#include <labrun/status.hpp>

namespace labrun::softmax {

namespace {

// The one table of softmax's variants: name and one-line description (all have a host implementation).
struct VariantRow {
  Variant variant;
  const char* name;
  const char* description;
};
constexpr VariantRow kVariants[] = {
    {Variant::unfused, "unfused",
     "rowmax, exp(x - m), rowsum, divide: four kernels, e/m/s stored in the dtype (eager framework)"},
    {Variant::two_pass, "two_pass",
     "one kernel, threads per row: max, then sum of exp(x - max), then write; row on chip when cols <= 8192"},
    {Variant::online, "online",
     "one kernel: running max and rescaled running sum in one pass, then write (Milakov & Gimelshein 2018)"},
};

constexpr int kChunks = 64;  // fixed split of the host loops: results independent of the thread count

// fn(chunk, first_row, end_row) over whole rows, split by elements so that a few long rows still spread over
// the threads: chunk k takes the rows whose first element lies in its slice of [0, rows * cols). The split
// depends only on the shape, so per-chunk results combined in order are identical on every machine.
template <class Fn>
void for_rows(std::int64_t rows, std::int64_t cols, Fn&& fn) {
  if (cols <= 0) {
    for (int k = 0; k < kChunks; ++k) fn(k, k == 0 ? 0 : rows, rows);
    return;
  }
  parallel_chunks(rows * cols, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    fn(chunk, std::min(rows, (begin + cols - 1) / cols), std::min(rows, (end + cols - 1) / cols));
  });
}

void require_supported(DType t) {
  if (t != DType::f32 && t != DType::bf16)
    throw std::invalid_argument(std::string("softmax: dtype ") + labrun::to_string(t) + " is not supported (f32, bf16)");
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

// Pairwise tree over a[0..n) in place: a[i] = a[2i] (+) a[2i+1], the odd one carried, until one is left.
template <class T, class Op>
T tree(T* a, std::size_t n, Op op) {
  while (n > 1) {
    const std::size_t half = n / 2;
    for (std::size_t i = 0; i < half; ++i) a[i] = op(a[2 * i], a[2 * i + 1]);
    if (n % 2) a[half] = a[n - 1];
    n = half + n % 2;
  }
  return a[0];
}

// f32 sum of f(c) over one row: sequential within chunks of kHostChunk, then the chunk partials by a pairwise tree.
template <class F>
float row_sum(std::int64_t cols, std::vector<float>& partials, F&& f) {
  const std::size_t chunks = static_cast<std::size_t>((cols + kHostChunk - 1) / kHostChunk);
  if (chunks == 0) return 0.0f;
  if (partials.size() < chunks) partials.resize(chunks);
  for (std::size_t k = 0; k < chunks; ++k) {
    float acc = 0.0f;
    const std::int64_t end = std::min<std::int64_t>(cols, static_cast<std::int64_t>(k + 1) * kHostChunk);
    for (std::int64_t c = static_cast<std::int64_t>(k) * kHostChunk; c < end; ++c) acc += f(c);
    partials[k] = acc;
  }
  return tree(partials.data(), chunks, [](float a, float b) { return a + b; });
}

// The online rule for merging two (running max, rescaled sum) pairs; symmetric, and exact when a side is empty.
struct MD {
  float m, d;
};
MD merge(MD a, MD b) {
  const float m = std::max(a.m, b.m);
  const float da = a.m == m ? a.d : a.d * std::exp(a.m - m);
  const float db = b.m == m ? b.d : b.d * std::exp(b.m - m);
  return {m, da + db};
}

template <DType T>
void host_run_typed(Variant variant, const Inputs& in, void* out, HostScratch& scratch) {
  using Tr = Traits<T>;
  using S = typename Tr::S;
  const std::int64_t rows = in.rows, cols = in.cols;
  const S* x = static_cast<const S*>(in.data());
  S* y = static_cast<S*>(out);
  const float ninf = -std::numeric_limits<float>::infinity();
  auto words = [](std::size_t count) { return (count * sizeof(S) + 7) / 8; };
  switch (variant) {
    case Variant::unfused: {
      // Four ops, each a full pass over its buffers, every result stored in the storage dtype.
      const std::size_t n = static_cast<std::size_t>(rows * cols);
      if (scratch.e.size() < words(n)) scratch.e.resize(words(n));
      if (scratch.m.size() < words(rows)) scratch.m.resize(words(rows));
      if (scratch.s.size() < words(rows)) scratch.s.resize(words(rows));
      S* e = reinterpret_cast<S*>(scratch.e.data());
      S* m = reinterpret_cast<S*>(scratch.m.data());
      S* s = reinterpret_cast<S*>(scratch.s.data());
      for (std::int64_t r = 0; r < rows; ++r) {  // m = rowmax(x)
        float acc = ninf;
        for (std::int64_t c = 0; c < cols; ++c) acc = std::max(acc, Tr::load(x[r * cols + c]));
        m[r] = Tr::store(acc);
      }
      for (std::int64_t r = 0; r < rows; ++r)  // e = exp(x - m)
        for (std::int64_t c = 0; c < cols; ++c)
          e[r * cols + c] = Tr::store(std::exp(Tr::load(x[r * cols + c]) - Tr::load(m[r])));
      for (std::int64_t r = 0; r < rows; ++r)  // s = rowsum(e)
        s[r] = Tr::store(row_sum(cols, scratch.a, [&](std::int64_t c) { return Tr::load(e[r * cols + c]); }));
      for (std::int64_t r = 0; r < rows; ++r)  // y = e / s
        for (std::int64_t c = 0; c < cols; ++c) y[r * cols + c] = Tr::store(Tr::load(e[r * cols + c]) / Tr::load(s[r]));
      break;
    }
    case Variant::two_pass: {
      if (scratch.row.size() < static_cast<std::size_t>(cols)) scratch.row.resize(static_cast<std::size_t>(cols));
      float* ev = scratch.row.data();
      for (std::int64_t r = 0; r < rows; ++r) {
        const S* xr = x + r * cols;
        float mx = ninf;
        for (std::int64_t c = 0; c < cols; ++c) mx = std::max(mx, Tr::load(xr[c]));
        for (std::int64_t c = 0; c < cols; ++c) ev[c] = std::exp(Tr::load(xr[c]) - mx);
        const float sum = row_sum(cols, scratch.a, [&](std::int64_t c) { return ev[c]; });
        const float inv = 1.0f / sum;
        for (std::int64_t c = 0; c < cols; ++c) y[r * cols + c] = Tr::store(ev[c] * inv);
      }
      break;
    }
    case Variant::online: {
      // Each chunk of kHostChunk elements (a GPU thread's registers) takes its own max m_k and sum d_k of
      // exp(x - m_k); the (m_k, d_k) pairs merge by the online rule in a pairwise tree; y = exp(x - m_k) *
      // (exp(m_k - M) / D).
      if (scratch.row.size() < static_cast<std::size_t>(cols)) scratch.row.resize(static_cast<std::size_t>(cols));
      float* ev = scratch.row.data();
      const std::size_t chunks = static_cast<std::size_t>((cols + kHostChunk - 1) / kHostChunk);
      std::vector<MD> local(chunks), work(chunks);
      for (std::int64_t r = 0; r < rows; ++r) {
        const S* xr = x + r * cols;
        for (std::size_t k = 0; k < chunks; ++k) {
          const std::int64_t begin = static_cast<std::int64_t>(k) * kHostChunk;
          const std::int64_t end = std::min<std::int64_t>(cols, begin + kHostChunk);
          float mk = ninf, dk = 0.0f;
          for (std::int64_t c = begin; c < end; ++c) mk = std::max(mk, Tr::load(xr[c]));
          for (std::int64_t c = begin; c < end; ++c) dk += (ev[c] = std::exp(Tr::load(xr[c]) - mk));
          local[k] = work[k] = {mk, dk};
        }
        if (chunks == 0) continue;
        const MD total = tree(work.data(), chunks, merge);
        const float inv = 1.0f / total.d;
        for (std::size_t k = 0; k < chunks; ++k) {
          const float scale = std::exp(local[k].m - total.m) * inv;
          const std::int64_t begin = static_cast<std::int64_t>(k) * kHostChunk;
          const std::int64_t end = std::min<std::int64_t>(cols, begin + kHostChunk);
          for (std::int64_t c = begin; c < end; ++c) y[r * cols + c] = Tr::store(ev[c] * scale);
        }
      }
      break;
    }
  }
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
  throw std::invalid_argument("unknown softmax variant '" + name + "'");
}

Params params_of(const Point& point) {
  Params p;
  p.variant = parse_variant(point.variant);
  const std::int64_t elements = point.integer("elements");
  p.cols = point.integer("cols");
  if (auto why = shape_unsupported(point)) throw std::invalid_argument("softmax: " + *why);
  p.rows = p.cols > 0 ? elements / p.cols : 0;
  const auto dt = parse_dtype(point.word("dtype"));
  if (!dt) throw std::invalid_argument("unknown dtype '" + point.word("dtype") + "'");
  require_supported(*dt);
  p.dtype = *dt;
  p.mode = point.word("mode");
  if (p.rows < 0 || p.cols < 0) throw std::invalid_argument("softmax: rows and cols must be >= 0");
  return p;
}

std::optional<std::string> shape_unsupported(const Point& point) {
  const std::int64_t elements = point.integer("elements"), cols = point.integer("cols");
  if (elements < 0 || cols < 0) return "elements and cols must be >= 0";
  if (cols == 0 ? elements != 0 : elements % cols != 0)
    return "elements = " + std::to_string(elements) + " is not a multiple of cols = " + std::to_string(cols) +
           ": rows = elements / cols would not be a whole number (the shape is never rounded)";
  return std::nullopt;
}

double Inputs::value(std::int64_t i) const {
  if (dtype == DType::bf16) return bf16_to_float(static_cast<const std::uint16_t*>(data())[i]);
  return static_cast<const float*>(data())[i];
}

double row_offset(std::int64_t row) {
  switch (row % 4) {
    case 0: return 80.0;
    case 2: return -120.0;
    default: return 0.0;
  }
}

Inputs generate(std::int64_t rows, std::int64_t cols, DType dtype, std::uint64_t seed) {
  if (rows < 0 || cols < 0) throw std::invalid_argument("softmax: rows and cols must be >= 0");
  require_supported(dtype);
  Inputs in;
  in.dtype = dtype;
  in.rows = rows;
  in.cols = cols;
  const std::int64_t n = rows * cols;
  in.storage.assign((static_cast<std::size_t>(n) * dtype_bytes(dtype) + 7) / 8, 0);
  parallel_chunks(n, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint64_t h = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)));
      const double v = row_offset(i / cols) + (16.0 * unit_interval(h) - 8.0);
      if (dtype == DType::f32)
        static_cast<float*>(in.data())[i] = static_cast<float>(v);
      else
        static_cast<std::uint16_t*>(in.data())[i] = float_to_bf16(static_cast<float>(v));
    }
  });
  return in;
}

Reference reference(const Inputs& in) {
  Reference ref;
  ref.rows = in.rows;
  ref.cols = in.cols;
  ref.y.assign(static_cast<std::size_t>(in.elements()), 0.0);
  ref.max.assign(static_cast<std::size_t>(in.rows), 0.0);
  ref.spread.assign(static_cast<std::size_t>(in.rows), 0.0);
  const std::int64_t cols = in.cols;
  for_rows(in.rows, cols, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      double mx = -std::numeric_limits<double>::infinity(), mn = std::numeric_limits<double>::infinity();
      for (std::int64_t c = 0; c < cols; ++c) {
        const double v = in.value(r * cols + c);
        mx = std::max(mx, v);
        mn = std::min(mn, v);
      }
      double sum = 0;
      double* yr = ref.y.data() + r * cols;
      for (std::int64_t c = 0; c < cols; ++c) sum += (yr[c] = std::exp(in.value(r * cols + c) - mx));
      for (std::int64_t c = 0; c < cols; ++c) yr[c] /= sum;
      ref.max[r] = cols > 0 ? mx : 0.0;
      ref.spread[r] = cols > 0 ? mx - mn : 0.0;
    }
  });
  return ref;
}

Tolerance tolerance(Variant variant, DType dtype, std::int64_t cols, double scale) {
  require_supported(dtype);
  Tolerance t;
  t.u = unit_roundoff(DType::f32);
  t.u_s = unit_roundoff(dtype);
  t.k_s = variant == Variant::unfused ? 4 : 1;
  const double c = static_cast<double>(std::max<std::int64_t>(cols, 1));
  t.log_term = 11 * std::ceil(std::log2(c)) + std::ceil(std::sqrt(c)) + 20;
  t.floor = 4 * (dtype == DType::bf16 ? 0x1.0p-133 : 0x1.0p-149);
  t.scale = scale;
  return t;
}

Check compare(const Inputs& in, const void* y, const Reference& ref, const Tolerance& tol) {
  const std::int64_t rows = in.rows, cols = in.cols;
  const double inf = std::numeric_limits<double>::infinity();
  struct Part {
    double worst = 0, row_worst = 0, err2 = 0, ref2 = 0;
    std::int64_t worst_index = -1, worst_row = -1, mismatches = 0;
    double got = 0, expected = 0, bound = 0, row_sum = 0;
  };
  std::vector<Part> parts(kChunks);
  auto load = [&](std::int64_t i) -> double {
    if (in.dtype == DType::bf16) return bf16_to_float(static_cast<const std::uint16_t*>(y)[i]);
    return static_cast<const float*>(y)[i];
  };
  for_rows(rows, cols, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part p;
    for (std::int64_t r = begin; r < end; ++r) {
      double sum = 0, sum_bound = 0;
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::int64_t i = r * cols + c;
        const double got = load(i), want = ref.y[i];
        const double b = tol.bound(want, ref.max[r] - in.value(i), ref.spread[r]);
        const double err = std::fabs(got - want);
        const double ratio = std::isfinite(got) ? err / b : inf;
        sum += got;
        sum_bound += b;
        p.err2 += std::isfinite(got) ? err * err : inf;
        p.ref2 += want * want;
        if (!(ratio <= 1)) ++p.mismatches;
        if (p.worst_index < 0 || !(ratio <= p.worst)) {
          p.worst = ratio;
          p.worst_index = i;
          p.got = got;
          p.expected = want;
          p.bound = b;
        }
      }
      if (cols == 0) continue;
      const double row_bound = sum_bound + static_cast<double>(cols) * 0x1.0p-52;
      const double row_ratio = std::isfinite(sum) ? std::fabs(sum - 1.0) / row_bound : inf;
      if (p.worst_row < 0 || !(row_ratio <= p.row_worst)) {
        p.row_worst = row_ratio;
        p.worst_row = r;
        p.row_sum = sum;
      }
    }
    parts[chunk] = p;
  });
  Part all;
  for (const auto& p : parts) {
    all.err2 += p.err2;
    all.ref2 += p.ref2;
    all.mismatches += p.mismatches;
    if (p.worst_index >= 0 && (all.worst_index < 0 || !(p.worst <= all.worst))) {
      all.worst = p.worst;
      all.worst_index = p.worst_index;
      all.got = p.got;
      all.expected = p.expected;
      all.bound = p.bound;
    }
    if (p.worst_row >= 0 && (all.worst_row < 0 || !(p.row_worst <= all.row_worst))) {
      all.row_worst = p.row_worst;
      all.worst_row = p.worst_row;
      all.row_sum = p.row_sum;
    }
  }
  Check c;
  c.value = all.worst;
  c.reference = 0;
  c.abs_error = all.worst;
  c.tolerance = 1;
  c.passed = all.worst <= 1 && all.row_worst <= 1;
  c.detail["metric"] = "worst |y - y_ref| / bound over all elements (passes <= 1)";
  c.detail["elements"] = rows * cols;
  c.detail["mismatches"] = all.mismatches;
  if (all.worst_index >= 0) {
    c.detail["worst"] = {{"row", all.worst_index / cols},       {"col", all.worst_index % cols},
                         {"got", json_real(all.got)},           {"expected", json_real(all.expected)},
                         {"bound", json_real(all.bound)}};
  }
  c.detail["row_sum_ratio"] = json_real(all.row_worst);
  c.detail["row_sum_worst_row"] = all.worst_row;
  c.detail["row_sum_worst"] = json_real(all.row_sum);
  c.detail["rel_l2_error"] = json_real(all.ref2 > 0 ? std::sqrt(all.err2 / all.ref2) : std::sqrt(all.err2));
  c.detail["tolerance"] = {{"u", json_real(tol.u)},
                           {"u_s", json_real(tol.u_s)},
                           {"k_s", json_real(tol.k_s)},
                           {"log_term", json_real(tol.log_term)},
                           {"floor", json_real(tol.floor)},
                           {"scale", json_real(tol.scale)}};
  return c;
}

Cost cost(const Params& p) {
  const double n = static_cast<double>(p.elements());
  const double rows = static_cast<double>(p.rows);
  const double s = static_cast<double>(dtype_bytes(p.dtype));
  const bool on_chip = p.cols <= kOnChipCols;
  double read = 0, written = 0, launches = 0;
  switch (p.variant) {
    case Variant::unfused:
      // rowmax reads x, writes m; exp reads x and m, writes e; rowsum reads e, writes s; divide reads e and s,
      // writes y.
      read = 2 * n * s + 2 * n * s + 2 * rows * s;
      written = 2 * n * s + 2 * rows * s;
      launches = 4;
      break;
    case Variant::two_pass:
      read = (on_chip ? 1 : 3) * n * s;  // streamed: max pass, sum pass, write pass
      written = n * s;
      launches = 1;
      break;
    case Variant::online:
      read = (on_chip ? 1 : 2) * n * s;  // streamed: the (max, sum) pass and the write pass
      written = n * s;
      launches = 1;
      break;
  }
  return Cost::of(read, written, 2 * n * s, 5 * n, launches, 0);
}

double working_set_bytes(const Params& p) {
  const double n = static_cast<double>(p.elements());
  const double s = static_cast<double>(dtype_bytes(p.dtype));
  double bytes = 2 * n * s;  // x and y
  if (p.variant == Variant::unfused) bytes += n * s + 2 * static_cast<double>(p.rows) * s;  // e, m, s
  return bytes;
}

void host_run(Variant variant, const Inputs& inputs, void* y, HostScratch& scratch) {
  if (inputs.dtype == DType::bf16)
    host_run_typed<DType::bf16>(variant, inputs, y, scratch);
  else
    host_run_typed<DType::f32>(variant, inputs, y, scratch);
}

namespace {

// The axes that define a point's inputs, as text: what the seed hashes and the cache compares.
std::string input_key(const Params& p) {
  return std::to_string(p.rows) + "x" + std::to_string(p.cols) + "/" + labrun::to_string(p.dtype);
}

}  // namespace

std::uint64_t input_seed(const Params& p, std::uint64_t lab_seed) {
  return splitmix64(lab_seed ^ fnv1a64("softmax/" + input_key(p)));
}

std::shared_ptr<const Inputs> InputCache::inputs(const Params& p, std::uint64_t seed) {
  const std::uint64_t s = input_seed(p, seed);
  const std::string key = input_key(p) + "/" + std::to_string(s);
  if (key != key_ || !inputs_) {
    inputs_.reset();  // release the old set first: at 2^24 elements a set and its reference are ~200 MB
    ref_.reset();
    inputs_ = std::make_shared<const Inputs>(generate(p.rows, p.cols, p.dtype, s));
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
      : p_(p), in_(std::move(in)), ref_(std::move(ref)), scale_(scale), y_(in_->storage.size()) {}
  void run() override { host_run(p_.variant, *in_, y_.data(), scratch_); }
  Check check(const std::function<void()>& iterate) override {
    // Poison: all-ones bits are a NaN in f32 and in bf16.
    std::fill(y_.begin(), y_.end(), ~std::uint64_t{0});
    iterate();
    Check c = compare(*in_, y_.data(), *ref_, tolerance(p_.variant, p_.dtype, p_.cols, scale_));
    c.detail["poisoned"] = true;
    return c;
  }
  Cost cost() const override { return softmax::cost(p_); }

 private:
  Params p_;
  std::shared_ptr<const Inputs> in_;
  std::shared_ptr<const Reference> ref_;
  double scale_;
  std::vector<std::uint64_t> y_;
  HostScratch scratch_;
};

}  // namespace

void register_experiment(Registry& registry) {
  Experiment e;
  e.name = "softmax";
  e.description =
      "row softmax of a [elements / cols x cols] matrix: unfused (4 kernels) vs fused two-pass vs online";
  e.axes = {
      {"cols", AxisKind::Integer, "row length: elements per row (the size axis)", 1.0, 1048576.0, {},
       std::int64_t{4096}},
      {"elements", AxisKind::Integer,
       "rows x cols: the matrix's element count (rows = elements / cols; must be a multiple of cols)", 1.0,
       2147483648.0, {}, std::int64_t{1} << 24},
      {"dtype", AxisKind::Word, "storage dtype of x, y and the unfused intermediates (compute in f32)", {}, {},
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
    VariantDecl decl{row.name, row.description, shape_unsupported, {}};
    decl.implementations[BackendKind::host] = host;
    e.variants.push_back(std::move(decl));
  }
  e.size_axis = "cols";
  e.estimate = [](const Point& point) {
    const Params p = params_of(point);
    const Cost c = cost(p);
    return PointEstimate{working_set_bytes(p), c.bytes, c.flop};
  };
  // One figure per slice of the other varying axes (src/report_plots.cpp); plot_report.py draws no slice with a
  // single x value, so time vs cols appears for elements = 2^24 only and time vs elements for cols = 4096 only.
  e.plots = {PlotSpec{"cols", "variant", {}, "time vs cols"}, PlotSpec{"elements", "variant", {}, "time vs elements"}};
  e.docs = "docs/experiments/softmax.md";
  registry.add(std::move(e));
}

}  // namespace labrun::softmax
