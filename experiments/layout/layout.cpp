// The layout experiment on the SDK (LABRUN_EXPERIMENT(layout)): axes, arrays, the input generator, the float64
// reference, the check (copies bit-exact, sums within a rounding bound), the cost model and the host variants.
// Formulas: docs/experiments/layout.md.
#include "layout.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

#include <labrun/counter_rng.hpp>
#include <labrun/dtype.hpp>
#include <labrun/parallel.hpp>

namespace labrun::layout {

namespace {

// The one table of layout's variants: name, one-line description. Every variant has a host implementation and
// runs in both modes.
constexpr VariantTable<Variant, 5> kVariants{{{
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
}}};

constexpr int kHostTile = 32;

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
void materialize(const Strided& v, S* out) {
  const S* src = static_cast<const S*>(v.data);
  for (std::int64_t i = 0; i < v.rows; ++i)
    for (std::int64_t j = 0; j < v.cols; ++j) out[i * v.cols + j] = src[i * v.row_stride + j * v.col_stride];
}

// y[i][j] = x[i][j] + b(i, j) in f32, rounded once to the storage dtype; b is read through its view's strides
// (row_stride 0: the broadcast view; cols: the materialised repeat), as the consumer kernel reads it.
template <DType T>
void add_rows(const typename Stored<T>::S* x, const Strided& b, typename Stored<T>::S* y, std::int64_t rows,
              std::int64_t cols) {
  using Tr = Stored<T>;
  const auto* bp = static_cast<const typename Tr::S*>(b.data);
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j)
      y[i * cols + j] = Tr::store(Tr::load(x[i * cols + j]) + Tr::load(bp[i * b.row_stride + j * b.col_stride]));
}

template <DType T>
Strided host_run_typed(Variant variant, std::int64_t rows, std::int64_t cols, const void* xp, const void* bias,
                       void* out, void* repeated) {
  using S = typename Stored<T>::S;  // the SDK's storage of T (labrun/dtype.hpp); sums in f32
  const Strided xv = Strided::contiguous_of(xp, T, rows, cols);
  const S* x = static_cast<const S*>(xp);
  S* y = static_cast<S*>(out);
  switch (variant) {
    case Variant::contiguous_noop: {
      const auto same = contiguous_without_copy(xv);
      if (!same) throw std::logic_error("layout: a row-major view must be contiguous");
      return *same;
    }
    case Variant::transpose_naive: transpose_rows(x, y, rows, cols); return Strided::contiguous_of(out, T, cols, rows);
    case Variant::transpose_tiled: transpose_tiles(x, y, rows, cols); return Strided::contiguous_of(out, T, cols, rows);
    case Variant::broadcast_view:
      add_rows<T>(x, Strided::broadcast_rows(bias, T, rows, cols), y, rows, cols);
      return Strided::contiguous_of(out, T, rows, cols);
    case Variant::repeat_materialized: {
      S* rep = static_cast<S*>(repeated);
      materialize(Strided::broadcast_rows(bias, T, rows, cols), rep);
      add_rows<T>(x, Strided::contiguous_of(rep, T, rows, cols), y, rows, cols);
      return Strided::contiguous_of(out, T, rows, cols);
    }
  }
  throw std::logic_error("layout: unknown variant");
}

// `count` elements of `elem`, as the expectation of an exact comparison.
struct Expected {
  std::vector<std::uint64_t> storage;
  View view;
  Expected(std::int64_t count, const Elem& elem)
      : storage((static_cast<std::size_t>(count) * elem.bytes + 7) / 8 + 1), view{storage.data(), count, elem} {}
};

// x^T (cols x rows) by its definition, element by element (not the variants' code): y[j][i] = x[i][j].
Expected transpose_of(const View& x, std::int64_t rows, std::int64_t cols) {
  Expected want(x.count, x.elem);
  const std::size_t w = x.elem.bytes;
  const auto* src = static_cast<const unsigned char*>(x.data);
  auto* dst = static_cast<unsigned char*>(want.view.data);
  parallel_chunks(cols, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t j = begin; j < end; ++j)
      for (std::int64_t i = 0; i < rows; ++i) std::copy_n(src + (i * cols + j) * w, w, dst + (j * rows + i) * w);
  });
  return want;
}

// bias.repeat(rows, 1): every row of the rows x cols result is bias.
Expected repeat_of(const View& bias, std::int64_t rows) {
  const std::int64_t cols = bias.count;
  Expected want(rows * cols, bias.elem);
  const std::size_t row_bytes = static_cast<std::size_t>(cols) * bias.elem.bytes;
  parallel_chunks(rows, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      std::copy_n(static_cast<const unsigned char*>(bias.data), row_bytes,
                  static_cast<unsigned char*>(want.view.data) + i * row_bytes);
  });
  return want;
}

// Elements of y other than the reference rounded once to the dtype (the reference is exact in double; so is its
// f32 rounding for bf16): 0 in every test, while the bound is the documented tolerance.
std::int64_t not_correctly_rounded(const View& y, const std::vector<double>& ref, DType t) {
  std::vector<std::int64_t> parts(kDefaultChunks, 0);
  parallel_chunks(y.count, [&](int chunk, std::int64_t begin, std::int64_t end) {
    std::int64_t n = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      const double v = y.value(i), r = ref[static_cast<std::size_t>(i)];
      if (!std::isfinite(v)) continue;  // counted as not finite by the comparison
      const double rounded = t == DType::bf16 ? bf16_to_float(float_to_bf16(static_cast<float>(r)))
                                              : static_cast<float>(r);
      n += v != rounded;
    }
    parts[chunk] = n;
  });
  std::int64_t total = 0;
  for (auto n : parts) total += n;
  return total;
}

}  // namespace

const char* to_string(Variant v) { return kVariants.name(v); }

Variant variant_of(const Args& args) { return kVariants.of(args); }

float draw_value(std::uint64_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 1) << 31;
  const std::uint32_t exponent = 123 + static_cast<std::uint32_t>((h >> 61) & 7);  // 2^-4 .. 2^3
  const std::uint32_t fraction = static_cast<std::uint32_t>((h >> 29) & 0x7fffffu);
  return bits_float(sign | (exponent << 23) | fraction);
}

void generate(const View& x, const View& bias, std::uint64_t seed) {
  const DType dtype = x.elem.dtype.value_or(DType::f64);
  if ((dtype != DType::f32 && dtype != DType::bf16) || bias.elem.dtype != x.elem.dtype)
    throw std::invalid_argument(std::string("layout: dtype must be f32 or bf16, got ") + labrun::to_string(dtype));
  auto fill = [&](const View& v, std::uint64_t s) {
    parallel_chunks(v.count, [&](int, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const float d = draw_value(counter_bits(s, i));
        if (dtype == DType::f32) v.as<float>()[i] = d;
        else v.as<std::uint16_t>()[i] = float_to_bf16(d);
      }
    });
  };
  fill(x, seed);
  fill(bias, splitmix64(seed ^ fnv1a64("layout/bias")));
}

double add_bound(DType dtype, double ref) {
  const double u = unit_roundoff(DType::f32);
  const double us = dtype == DType::f32 ? 0.0 : unit_roundoff(dtype);
  return (u + us + u * us) * std::fabs(ref);
}

Cost cost(Variant variant, std::int64_t rows, std::int64_t cols, DType dtype) {
  const double n = static_cast<double>(rows * cols);
  const double s = static_cast<double>(dtype_bytes(dtype));
  const bool any = rows * cols > 0;
  const double bias = any ? static_cast<double>(cols) * s : 0;  // the kernels read bias only to write y
  const double k = any ? 1 : 0;                                 // no launch without an element (case C04)
  Cost c;
  switch (variant) {
    case Variant::contiguous_noop:
      c = Cost::of({.read = 0, .written = 0, .compulsory = 0});
      c.peak_work_bytes = 0;
      break;
    case Variant::transpose_naive:
    case Variant::transpose_tiled:
      c = Cost::of({.read = n * s, .written = n * s, .compulsory = 2 * n * s, .launches = k});
      c.peak_work_bytes = n * s;
      break;
    case Variant::broadcast_view:
      // One kernel: x read once, bias once (its rows hit in cache), y written once.
      c = Cost::of({.read = n * s + bias, .written = n * s, .compulsory = 2 * n * s + bias, .flop = n, .launches = k});
      c.peak_work_bytes = n * s;
      break;
    case Variant::repeat_materialized:
      // repeat: bias read, R (rows x cols) written; add: x and R read, y written.
      c = Cost::of({.read = 2 * n * s + bias,
                    .written = 2 * n * s,
                    .compulsory = 2 * n * s + bias,
                    .flop = n,
                    .launches = 2 * k});
      c.peak_work_bytes = 2 * n * s;
      break;
  }
  return c;
}

Strided host_run(Variant variant, std::int64_t rows, std::int64_t cols, DType dtype, const void* x, const void* bias,
                 void* y, void* repeated) {
  if (dtype == DType::bf16) return host_run_typed<DType::bf16>(variant, rows, cols, x, bias, y, repeated);
  return host_run_typed<DType::f32>(variant, rows, cols, x, bias, y, repeated);
}

LABRUN_EXPERIMENT(layout) {
  e.describe(
       "the cost of memory layout: .contiguous() of contiguous data (a no-op) vs of a transposed view (naive and "
       "tiled copy kernels); a zero-stride broadcast view vs a materialised repeat")
      .docs("docs/experiments/layout.md")
      .int_axis("rows", "rows of x", 0, 1048576, 4096)
      .int_axis("cols", "columns of x and elements of bias (the size axis)", 0, 1048576, 4096)
      .word_axis("dtype", "storage dtype of x, bias and the outputs (sums in f32)", {"f32", "bf16"}, "f32")
      .size_axis("cols")
      // One figure per slice of the other varying axes: along cols at each rows (the config's grid makes every
      // rows value a line), and along rows at each cols.
      .plot({"cols", "variant", {"dtype"}, "time vs cols"})
      .plot({"rows", "variant", {"dtype"}, "time vs rows"});
  // x and bias; y (the no-op's is x itself, handed back); the repeat's materialised R, an output so that it is
  // poisoned before the checked iteration (a stale R from warmup cannot pass) and checked.
  e.arrays([](const Args& a, Layout& l) {
    const Variant v = variant_of(a);
    const std::int64_t rows = a.i64("rows"), cols = a.i64("cols");
    const DType t = a.dtype();
    l.input("x", t, rows * cols).input("bias", t, cols);
    if (v == Variant::contiguous_noop) l.returned("y", t, rows * cols);
    else l.output("y", t, rows * cols);
    if (v == Variant::repeat_materialized) l.output("repeated", t, rows * cols);
  });
  e.inputs_depend_on({"rows", "cols", "dtype"});
  e.seed_text([](const Args& a) {  // the seeds drawn before the SDK, so earlier results compare point for point
    return "layout/" + std::to_string(a.i64("rows")) + "x" + std::to_string(a.i64("cols")) + "/" + to_string(a.dtype());
  });
  e.generate([](const Args&, std::uint64_t seed, Arrays& in) { generate(in["x"], in["bias"], seed); });
  // x + bias in double, exact for the generator's values: the reference of the broadcast pair.
  e.reference([](const Args& a, const Arrays& in, Reference& r) {
    const View &x = in["x"], &bias = in["bias"];
    const std::int64_t cols = a.i64("cols");
    std::vector<double>& y = r.array("y", x.count);
    parallel_chunks(x.count, [&](int, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) y[i] = add_reference(x.value(i), bias.value(i % cols));
    });
  });
  // Copies bit-exact (lab.tolerance_scale does not loosen them), the no-op's y x's own buffer; sums within
  // add_bound of the reference; NaN (the poison) never passes (case C07).
  e.check([](Compare& c) {
    const Args& a = c.args();
    const Variant v = variant_of(a);
    const std::int64_t rows = a.i64("rows"), cols = a.i64("cols");
    const DType t = a.dtype();
    const View& x = c.inputs()["x"];
    if (v == Variant::contiguous_noop) {
      c.exact("y", x);
      c.same_buffer("y", "x");
    } else if (is_transpose(v)) {
      c.exact("y", transpose_of(x, rows, cols).view);
      c.note("cuda_pairs_path", v == Variant::transpose_tiled && uses_pairs(rows, cols) ? 1 : 0);
    } else {
      c.elementwise("y", [t](std::int64_t, double ref) { return add_bound(t, ref); });
      c.note("not_correctly_rounded",
             static_cast<double>(not_correctly_rounded(c.outputs()["y"], c.reference().array("y"), t)));
      if (v == Variant::repeat_materialized) c.exact("repeated", repeat_of(c.inputs()["bias"], rows).view);
    }
  });
  e.cost([](const Args& a, const Reference&) { return cost(variant_of(a), a.i64("rows"), a.i64("cols"), a.dtype()); });
  // The host variants: the no-op hands x back; the others write y (and R).
  auto host = [](Launch& setup) -> Step {
    const Args& a = setup.args();
    const Variant v = variant_of(a);
    const std::int64_t rows = a.i64("rows"), cols = a.i64("cols");
    const DType t = a.dtype();
    const void* x = setup.in("x").data;
    const void* bias = setup.in("bias").data;
    void* y = v == Variant::contiguous_noop ? nullptr : setup.out("y").data;
    void* rep = v == Variant::repeat_materialized ? setup.out("repeated").data : nullptr;
    return [=](Launch& l) {
      const Strided result = host_run(v, rows, cols, t, x, bias, y, rep);
      if (v == Variant::contiguous_noop) l.returns("y", result.data);
    };
  };
  for (const auto& row : kVariants) e.variant(row.name, row.description).host(host);
}

}  // namespace labrun::layout
