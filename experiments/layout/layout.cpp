#include "layout.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>
#include <labrun/point.hpp>
#include "record.hpp"
#include "registry.hpp"

namespace labrun::layout {

namespace {

// The one table of layout's variants: name, one-line description. Every variant has a host implementation and
// runs in both modes.
struct VariantRow {
  Variant variant;
  const char* name;
  const char* description;
};
constexpr VariantRow kVariants[] = {
    {Variant::contiguous_noop, "contiguous_noop",
     ".contiguous() of contiguous data: no kernel, the same buffer back (host work only, 0 bytes)"},
    {Variant::transpose_naive, "transpose_naive",
     "x.T.contiguous(): one thread per element, coalesced reads, writes strided by rows"},
    {Variant::transpose_tiled, "transpose_tiled",
     "x.T.contiguous() through 32x32 shared-memory tiles (+1 padding), coalesced reads and writes"},
    {Variant::broadcast_view, "broadcast_view",
     "y = x + bias with bias read through a zero-stride view: reads rows*cols + cols, writes rows*cols"},
    {Variant::repeat_materialized, "repeat_materialized",
     "y = x + bias.repeat(rows, 1): writes the repeat (rows*cols) first, then the same consumer reads it"},
};

constexpr int kChunks = 64;  // fixed split of the host loops: results independent of the thread count
constexpr int kHostTile = 32;

void require_dtype(DType t) {
  if (t != DType::f32 && t != DType::bf16)
    throw std::invalid_argument(std::string("layout: dtype must be f32 or bf16, got ") + labrun::to_string(t));
}

std::size_t words(std::int64_t elements, DType t) {
  return (static_cast<std::size_t>(elements) * dtype_bytes(t) + 7) / 8;
}

// Storage traits: S is the stored element as raw bits; sums are computed in f32.
template <DType T> struct Traits;
template <> struct Traits<DType::f32> {
  using S = std::uint32_t;
  static float load(S s) { return bits_float(s); }
  static S store(float c) { return float_bits(c); }
};
template <> struct Traits<DType::bf16> {
  using S = std::uint16_t;
  static float load(S s) { return bf16_to_float(s); }
  static S store(float c) { return float_to_bf16(c); }
};

// out (cols x rows) = x^T, walking x row by row: reads sequential, writes strided by rows.
template <class S>
void transpose_rows(const S* x, S* out, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) out[j * rows + i] = x[i * cols + j];
}

// The same copy by kHostTile x kHostTile tiles (both sides stay in cache within a tile).
template <class S>
void transpose_tiles(const S* x, S* out, std::int64_t rows, std::int64_t cols) {
  for (std::int64_t i0 = 0; i0 < rows; i0 += kHostTile)
    for (std::int64_t j0 = 0; j0 < cols; j0 += kHostTile) {
      const std::int64_t i1 = std::min(rows, i0 + kHostTile), j1 = std::min(cols, j0 + kHostTile);
      for (std::int64_t j = j0; j < j1; ++j)
        for (std::int64_t i = i0; i < i1; ++i) out[j * rows + i] = x[i * cols + j];
    }
}

// out (rows x cols, contiguous) = the elements of a strided view, bit for bit: .contiguous() as a copy.
template <class S>
void materialize(const View& v, S* out) {
  const S* src = static_cast<const S*>(v.data);
  for (std::int64_t i = 0; i < v.rows; ++i)
    for (std::int64_t j = 0; j < v.cols; ++j) out[i * v.cols + j] = src[i * v.row_stride + j * v.col_stride];
}

// y[i][j] = x[i][j] + b(i, j) in f32, rounded once to the storage dtype; b is read through its view's strides
// (row_stride 0: the broadcast view; cols: the materialised repeat), as the consumer kernel reads it.
template <DType T>
void add_rows(const typename Traits<T>::S* x, const View& b, typename Traits<T>::S* y, std::int64_t rows,
              std::int64_t cols) {
  using Tr = Traits<T>;
  const auto* bp = static_cast<const typename Tr::S*>(b.data);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      y[i * cols + j] = Tr::store(Tr::load(x[i * cols + j]) + Tr::load(bp[i * b.row_stride + j * b.col_stride]));
}

template <DType T>
View host_run_typed(Variant variant, const Inputs& in, void* out, HostScratch& scratch) {
  using S = typename Traits<T>::S;
  const std::int64_t rows = in.rows, cols = in.cols;
  const View xv = View::contiguous_of(in.x(), in.dtype, rows, cols);
  const S* x = static_cast<const S*>(in.x());
  S* y = static_cast<S*>(out);
  switch (variant) {
    case Variant::contiguous_noop: {
      const auto same = contiguous_without_copy(xv);
      if (!same) throw std::logic_error("layout: a row-major view must be contiguous");
      return *same;
    }
    case Variant::transpose_naive:
      transpose_rows(x, y, rows, cols);
      return View::contiguous_of(out, in.dtype, cols, rows);
    case Variant::transpose_tiled:
      transpose_tiles(x, y, rows, cols);
      return View::contiguous_of(out, in.dtype, cols, rows);
    case Variant::broadcast_view:
      add_rows<T>(x, View::broadcast_rows(in.bias(), in.dtype, rows, cols), y, rows, cols);
      return View::contiguous_of(out, in.dtype, rows, cols);
    case Variant::repeat_materialized: {
      const std::size_t w = words(in.elements(), in.dtype);
      if (scratch.repeated.size() < w) scratch.repeated.resize(w);
      S* rep = reinterpret_cast<S*>(scratch.repeated.data());
      materialize(View::broadcast_rows(in.bias(), in.dtype, rows, cols), rep);
      add_rows<T>(x, View::contiguous_of(rep, in.dtype, rows, cols), y, rows, cols);
      return View::contiguous_of(out, in.dtype, rows, cols);
    }
  }
  throw std::logic_error("layout: unknown variant");
}

std::uint32_t raw_bits(const void* data, DType t, std::int64_t i) {
  if (t == DType::bf16) return static_cast<const std::uint16_t*>(data)[i];
  return static_cast<const std::uint32_t*>(data)[i];
}

double decode(const void* data, DType t, std::int64_t i) {
  if (t == DType::bf16) return bf16_to_float(static_cast<const std::uint16_t*>(data)[i]);
  return static_cast<const float*>(data)[i];
}

// The bit-exact comparison of a copy. `expected_index(o)` is the flat index in x of output element o; the output
// is walked in kChunks chunks of output rows of length `out_cols`.
template <class F>
Check compare_copy(const Inputs& in, const void* out, std::int64_t out_rows, std::int64_t out_cols, F expected_index,
                   const char* metric) {
  struct Part {
    std::int64_t mismatches = 0, first = -1;
  };
  std::vector<Part> parts(kChunks);
  const DType t = in.dtype;
  parallel_chunks(out_rows, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part p;
    for (std::int64_t r = begin; r < end; ++r)
      for (std::int64_t c = 0; c < out_cols; ++c) {
        const std::int64_t o = r * out_cols + c;
        if (raw_bits(out, t, o) != raw_bits(in.x(), t, expected_index(r, c))) {
          if (p.first < 0) p.first = o;
          ++p.mismatches;
        }
      }
    parts[chunk] = p;
  });
  Part all;
  for (const auto& p : parts) {
    all.mismatches += p.mismatches;
    if (all.first < 0) all.first = p.first;  // chunk order: the first mismatch in output order
  }
  Check c;
  c.value = static_cast<double>(all.mismatches);
  c.reference = 0;
  c.abs_error = c.value;
  c.tolerance = 0;
  c.passed = all.mismatches == 0;
  c.detail["metric"] = metric;
  c.detail["elements"] = in.elements();
  c.detail["mismatches"] = all.mismatches;
  if (all.first >= 0) {
    const std::int64_t r = all.first / out_cols, col = all.first % out_cols;
    c.detail["first_mismatch"] = {{"row", r},
                                  {"col", col},
                                  {"got", json_real(decode(out, t, all.first))},
                                  {"got_bits", raw_bits(out, t, all.first)},
                                  {"expected", json_real(decode(in.x(), t, expected_index(r, col)))},
                                  {"expected_bits", raw_bits(in.x(), t, expected_index(r, col))}};
  }
  return c;
}

Check compare_add(const Inputs& in, const void* out, double scale) {
  struct Part {
    double worst = 0, max_abs = 0, max_rel = 0;
    std::int64_t worst_index = -1, mismatches = 0, nonfinite = 0, not_rounded = 0;
  };
  std::vector<Part> parts(kChunks);
  const DType t = in.dtype;
  const std::int64_t cols = in.cols;
  const double inf = std::numeric_limits<double>::infinity();
  parallel_chunks(in.elements(), kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part p;
    for (std::int64_t i = begin; i < end; ++i) {
      const double y = decode(out, t, i);
      const double ref = add_reference(in.x_value(i), in.bias_value(i % cols));
      double ratio;
      if (!std::isfinite(y)) {
        ++p.nonfinite;
        ratio = inf;  // case C07: NaN (the poison) and inf never pass
      } else {
        const double err = std::fabs(y - ref);
        const double b = add_bound(t, ref);
        ratio = err == 0 ? 0.0 : (b > 0 ? err / b : inf);
        p.max_abs = std::max(p.max_abs, err);
        if (ref != 0) p.max_rel = std::max(p.max_rel, err / std::fabs(ref));
        // The reference rounded to the dtype once (ref is exact in double; so is its f32 rounding for bf16).
        const double rounded =
            t == DType::bf16 ? bf16_to_float(float_to_bf16(static_cast<float>(ref))) : static_cast<float>(ref);
        if (y != rounded) ++p.not_rounded;
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
    all.not_rounded += p.not_rounded;
  }
  Check c;
  c.value = all.worst;
  c.reference = 0;
  c.abs_error = all.worst;
  c.tolerance = scale;
  c.passed = all.nonfinite == 0 && all.worst <= scale;
  c.detail["metric"] = "max over elements of |y - (x + bias)| / ((u + u_s + u u_s)|x + bias|) (docs/experiments/layout.md)";
  c.detail["elements"] = in.elements();
  c.detail["mismatches"] = all.mismatches;
  c.detail["nonfinite"] = all.nonfinite;
  c.detail["not_correctly_rounded"] = all.not_rounded;
  c.detail["max_abs_error"] = json_real(all.max_abs);
  c.detail["max_rel_error"] = json_real(all.max_rel);
  if (all.worst_index >= 0) {
    const std::int64_t i = all.worst_index;
    const double ref = add_reference(in.x_value(i), in.bias_value(i % cols));
    c.detail["worst"] = {{"row", i / cols},
                         {"col", i % cols},
                         {"got", json_real(decode(out, t, i))},
                         {"expected", json_real(ref)},
                         {"bound", json_real(add_bound(t, ref))}};
  }
  return c;
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
  throw std::invalid_argument("unknown layout variant '" + name + "'");
}

bool is_transpose(Variant v) { return v == Variant::transpose_naive || v == Variant::transpose_tiled; }
bool is_broadcast(Variant v) { return v == Variant::broadcast_view || v == Variant::repeat_materialized; }

Params params_of(const Point& point) {
  Params p;
  p.variant = parse_variant(point.variant);
  p.rows = point.integer("rows");
  p.cols = point.integer("cols");
  if (p.rows < 0 || p.cols < 0) throw std::invalid_argument("layout: rows and cols must be >= 0");
  const auto dt = parse_dtype(point.word("dtype"));
  if (!dt) throw std::invalid_argument("unknown dtype '" + point.word("dtype") + "'");
  require_dtype(*dt);
  p.dtype = *dt;
  p.mode = point.word("mode");
  return p;
}

// ---- views ----------------------------------------------------------------------------------------------------

View View::contiguous_of(const void* data, DType dtype, std::int64_t rows, std::int64_t cols) {
  return View{data, dtype, rows, cols, cols, 1};
}

View View::broadcast_rows(const void* vector, DType dtype, std::int64_t rows, std::int64_t cols) {
  return View{vector, dtype, rows, cols, 0, 1};
}

View View::transposed() const { return View{data, dtype, cols, rows, col_stride, row_stride}; }

bool View::is_contiguous() const {
  if (rows == 0 || cols == 0) return true;
  return (cols == 1 || col_stride == 1) && (rows == 1 || row_stride == cols);
}

std::optional<View> contiguous_without_copy(const View& view) {
  if (view.is_contiguous()) return view;
  return std::nullopt;
}

// ---- inputs ---------------------------------------------------------------------------------------------------

double Inputs::x_value(std::int64_t i) const { return decode(x(), dtype, i); }
double Inputs::bias_value(std::int64_t j) const { return decode(bias(), dtype, j); }

float draw_value(std::uint64_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 1) << 31;
  const std::uint32_t exponent = 123 + static_cast<std::uint32_t>((h >> 61) & 7);  // 2^-4 .. 2^3
  const std::uint32_t fraction = static_cast<std::uint32_t>((h >> 29) & 0x7fffffu);
  return bits_float(sign | (exponent << 23) | fraction);
}

Inputs generate(std::int64_t rows, std::int64_t cols, DType dtype, std::uint64_t seed) {
  if (rows < 0 || cols < 0) throw std::invalid_argument("layout: rows and cols must be >= 0");
  require_dtype(dtype);
  Inputs in;
  in.dtype = dtype;
  in.rows = rows;
  in.cols = cols;
  in.x_storage.assign(words(in.elements(), dtype) + 1, 0);  // one spare word: a valid pointer at n = 0
  in.bias_storage.assign(words(cols, dtype) + 1, 0);
  auto fill = [&](std::vector<std::uint64_t>& storage, std::int64_t n, std::uint64_t s) {
    parallel_chunks(n, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const float v = draw_value(splitmix64(s ^ splitmix64(static_cast<std::uint64_t>(i))));
        if (dtype == DType::f32) reinterpret_cast<float*>(storage.data())[i] = v;
        else reinterpret_cast<std::uint16_t*>(storage.data())[i] = float_to_bf16(v);
      }
    });
  };
  fill(in.x_storage, in.elements(), seed);
  fill(in.bias_storage, cols, splitmix64(seed ^ fnv1a64("layout/bias")));
  return in;
}

// ---- reference and comparison ---------------------------------------------------------------------------------

double add_bound(DType dtype, double ref) {
  const double u = unit_roundoff(DType::f32);
  const double us = dtype == DType::f32 ? 0.0 : unit_roundoff(dtype);
  return (u + us + u * us) * std::fabs(ref);
}

Check compare(Variant variant, const Inputs& in, const void* out, double scale) {
  const std::int64_t rows = in.rows, cols = in.cols;
  switch (variant) {
    case Variant::contiguous_noop:
      return compare_copy(
          in, out, rows, cols, [cols](std::int64_t r, std::int64_t c) { return r * cols + c; },
          "elements whose bits differ from x's (the same buffer: identical)");
    case Variant::transpose_naive:
    case Variant::transpose_tiled:
      // out is cols x rows: out[j][i] = x[i][j].
      return compare_copy(
          in, out, cols, rows, [cols](std::int64_t j, std::int64_t i) { return i * cols + j; },
          "elements whose bits differ from the transpose of x (a copy is exact)");
    case Variant::broadcast_view:
    case Variant::repeat_materialized:
      return compare_add(in, out, scale);
  }
  throw std::logic_error("layout: unknown variant");
}

// ---- cost model -----------------------------------------------------------------------------------------------

Cost cost(const Params& p) {
  const double n = static_cast<double>(p.elements());
  const double s = static_cast<double>(dtype_bytes(p.dtype));
  const bool any = p.elements() > 0;
  const double bias = any ? static_cast<double>(p.cols) * s : 0;  // the kernels read bias only to write y
  const double k = any ? 1 : 0;                                   // no launch without an element (case C04)
  Cost c;
  switch (p.variant) {
    case Variant::contiguous_noop:
      c = Cost::of(0, 0, 0, 0, 0, 0);
      c.peak_work_bytes = 0;
      break;
    case Variant::transpose_naive:
    case Variant::transpose_tiled:
      c = Cost::of(n * s, n * s, 2 * n * s, 0, k, 0);
      c.peak_work_bytes = n * s;
      break;
    case Variant::broadcast_view:
      // One kernel: x read once, bias once (its rows hit in cache), y written once.
      c = Cost::of(n * s + bias, n * s, 2 * n * s + bias, n, k, 0);
      c.peak_work_bytes = n * s;
      break;
    case Variant::repeat_materialized:
      // repeat: bias read, R (rows x cols) written; add: x and R read, y written.
      c = Cost::of(2 * n * s + bias, 2 * n * s, 2 * n * s + bias, n, 2 * k, 0);
      c.peak_work_bytes = 2 * n * s;
      break;
  }
  return c;
}

double working_set_bytes(const Params& p) {
  const double s = static_cast<double>(dtype_bytes(p.dtype));
  return static_cast<double>(p.elements()) * s + static_cast<double>(p.cols) * s + cost(p).peak_work_bytes;
}

View host_run(Variant variant, const Inputs& inputs, void* out, HostScratch& scratch) {
  if (inputs.dtype == DType::bf16) return host_run_typed<DType::bf16>(variant, inputs, out, scratch);
  return host_run_typed<DType::f32>(variant, inputs, out, scratch);
}

// ---- input cache ----------------------------------------------------------------------------------------------

namespace {

// The axes that define a point's inputs, as text: what the seed hashes and the cache compares.
std::string input_key(const Params& p) {
  return std::to_string(p.rows) + "x" + std::to_string(p.cols) + "/" + labrun::to_string(p.dtype);
}

}  // namespace

std::uint64_t input_seed(const Params& p, std::uint64_t lab_seed) {
  return splitmix64(lab_seed ^ fnv1a64("layout/" + input_key(p)));
}

std::shared_ptr<const Inputs> InputCache::inputs(const Params& p, std::uint64_t seed) {
  const std::uint64_t s = input_seed(p, seed);
  const std::string key = input_key(p) + "/" + std::to_string(s);
  if (key != key_ || !inputs_) {
    inputs_.reset();  // release the old set first: at 16384^2 f32 it is 1 GiB
    inputs_ = std::make_shared<const Inputs>(generate(p.rows, p.cols, p.dtype, s));
    key_ = key;
  }
  return inputs_;
}

// ---- host workload and registration ---------------------------------------------------------------------------

namespace {

class HostWorkload : public Workload {
 public:
  HostWorkload(Params p, std::shared_ptr<const Inputs> in, double scale)
      : p_(p), in_(std::move(in)), scale_(scale),
        out_(p.variant == Variant::contiguous_noop ? 1 : words(in_->elements(), p.dtype) + 1, 0) {}
  void run() override { result_ = host_run(p_.variant, *in_, out_.data(), scratch_); }
  Check check(const std::function<void()>& iterate) override {
    if (p_.variant == Variant::contiguous_noop) {
      // The result is x itself: poisoning it would destroy the input. The check is that the buffer is x's and
      // that its contents are x's bits.
      result_ = View{};
      iterate();
      const bool same = result_.data == in_->x() && result_.is_contiguous() && result_.rows == p_.rows &&
                        result_.cols == p_.cols;
      Check c = compare(p_.variant, *in_, result_.data ? result_.data : in_->x(), scale_);
      c.passed = c.passed && same;
      c.detail["same_buffer"] = same;
      c.detail["poisoned"] = false;
      return c;
    }
    // Poison: all-ones bits are NaN in f32 and bf16 (the repeat's scratch too, so a stale one cannot pass).
    std::fill(out_.begin(), out_.end(), ~std::uint64_t{0});
    std::fill(scratch_.repeated.begin(), scratch_.repeated.end(), ~std::uint64_t{0});
    iterate();
    Check c = compare(p_.variant, *in_, out_.data(), scale_);
    c.detail["poisoned"] = true;
    return c;
  }
  Cost cost() const override { return layout::cost(p_); }

 private:
  Params p_;
  std::shared_ptr<const Inputs> in_;
  double scale_;
  std::vector<std::uint64_t> out_;
  HostScratch scratch_;
  View result_;
};

}  // namespace

void register_experiment(Registry& registry) {
  Experiment e;
  e.name = "layout";
  e.description =
      "the cost of memory layout: .contiguous() of contiguous data (a no-op) vs of a transposed view (naive and "
      "tiled copy kernels); a zero-stride broadcast view vs a materialised repeat";
  e.axes = {
      {"rows", AxisKind::Integer, "rows of x", 0.0, 1048576.0, {}, std::int64_t{4096}},
      {"cols", AxisKind::Integer, "columns of x and elements of bias (the size axis)", 0.0, 1048576.0, {},
       std::int64_t{4096}},
      {"dtype", AxisKind::Word, "storage dtype of x, bias and the outputs (sums in f32)", {}, {}, {"f32", "bf16"},
       std::string("f32")},
  };
  auto cache = std::make_shared<InputCache>();
  auto host = [cache](const Point& point, Backend&, const LabSettings& lab) -> std::unique_ptr<Workload> {
    const Params p = params_of(point);
    return std::make_unique<HostWorkload>(p, cache->inputs(p, lab.seed), lab.tolerance_scale.value_or(1.0));
  };
  for (const auto& row : kVariants) {
    VariantDecl decl{row.name, row.description, {}, {}};
    decl.implementations[BackendKind::host] = host;
    e.variants.push_back(std::move(decl));
  }
  e.size_axis = "cols";
  e.estimate = [](const Point& point) {
    const Params p = params_of(point);
    const Cost c = cost(p);
    return PointEstimate{working_set_bytes(p), c.bytes, c.flop};
  };
  // One figure per slice of the other varying axes: along cols at each rows (the config's grid makes every
  // rows value a line), and along rows at each cols.
  e.plots = {PlotSpec{"cols", "variant", {"dtype"}, "time vs cols"},
             PlotSpec{"rows", "variant", {"dtype"}, "time vs rows"}};
  e.docs = "docs/experiments/layout.md";
  registry.add(std::move(e));
}

}  // namespace labrun::layout
