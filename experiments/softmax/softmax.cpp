// The softmax experiment on the SDK (LABRUN_EXPERIMENT(softmax)): axes, arrays, the input generator, the float64
// reference, the element-by-element and row-sum check, the cost model and the host variants. Formulas:
// docs/experiments/softmax.md.
#include "softmax.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>
#include <labrun/vector_math.hpp>

namespace labrun::softmax {

namespace {

constexpr VariantTable<Variant, 3> kVariants{{{
    {Variant::unfused, "unfused",
     "rowmax, exp(x - m), rowsum, divide: four kernels, e/m/s stored in the dtype (eager framework)"},
    {Variant::two_pass, "two_pass",
     "one kernel, threads per row: max, then sum of exp(x - max), then write; row on chip when cols <= 8192"},
    {Variant::online, "online",
     "one kernel: running max and rescaled running sum in one pass, then write (Milakov & Gimelshein 2018)"},
}}};

void require_supported(DType t) {
  if (t != DType::f32 && t != DType::bf16)
    throw std::invalid_argument(std::string("softmax: dtype ") + labrun::to_string(t) +
                                " is not supported (f32, bf16)");
}

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

std::size_t chunks_of(std::int64_t cols) { return static_cast<std::size_t>((cols + kHostChunk - 1) / kHostChunk); }

// f32 sum of f(c) over one row: sequential within chunks of kHostChunk, then the chunk partials by a pairwise tree.
template <class F>
float row_sum(std::int64_t cols, std::vector<float>& partials, F&& f) {
  const std::size_t chunks = chunks_of(cols);
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
MD merge(MD a, MD b) {
  const float m = std::max(a.m, b.m);
  const float da = a.m == m ? a.d : a.d * std::exp(a.m - m);
  const float db = b.m == m ? b.d : b.d * std::exp(b.m - m);
  return {m, da + db};
}

template <DType T>
void host_run_typed(Variant variant, const View& xv, std::int64_t cols, void* out, HostScratch& scratch) {
  using Tr = Stored<T>;
  using S = typename Tr::S;
  const std::int64_t rows = cols > 0 ? xv.count / cols : 0;
  const S* x = xv.as<const S>();
  S* y = static_cast<S*>(out);
  const float ninf = -std::numeric_limits<float>::infinity();
  scratch.size_for(cols);  // a no-op after the setup sized it
  switch (variant) {
    case Variant::unfused: {
      // Four ops, each a full pass over its buffers, every result stored in the storage dtype.
      S* e = static_cast<S*>(scratch.e);
      S* m = static_cast<S*>(scratch.m);
      S* s = static_cast<S*>(scratch.s);
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
      float* ev = scratch.row.data();
      const std::size_t chunks = chunks_of(cols);
      MD* local = scratch.local.data();
      MD* work = scratch.work.data();
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
        const MD total = tree(work, chunks, merge);
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

const char* to_string(Variant v) { return kVariants.name(v); }

Variant parse_variant(const std::string& name) { return kVariants.of(name); }

Params params_of(const Args& a) {
  Params p;
  p.variant = parse_variant(a.variant());
  const std::int64_t elements = a.i64("elements");
  p.cols = a.i64("cols");
  if (auto why = shape_unsupported(a)) throw std::invalid_argument("softmax: " + *why);
  p.rows = p.cols > 0 ? elements / p.cols : 0;
  const auto dt = parse_dtype(a.word("dtype"));
  if (!dt) throw std::invalid_argument("unknown dtype '" + a.word("dtype") + "'");
  require_supported(*dt);
  p.dtype = *dt;
  if (p.rows < 0 || p.cols < 0) throw std::invalid_argument("softmax: rows and cols must be >= 0");
  return p;
}

std::optional<std::string> shape_unsupported(const Args& a) {
  const std::int64_t elements = a.i64("elements"), cols = a.i64("cols");
  if (elements < 0 || cols < 0) return "elements and cols must be >= 0";
  if (cols == 0 ? elements != 0 : elements % cols != 0)
    return "elements = " + std::to_string(elements) + " is not a multiple of cols = " + std::to_string(cols) +
           ": rows = elements / cols would not be a whole number (the shape is never rounded)";
  return std::nullopt;
}

std::string seed_text(const Params& p) {
  return "softmax/" + std::to_string(p.rows) + "x" + std::to_string(p.cols) + "/" + labrun::to_string(p.dtype);
}

double row_offset(std::int64_t row) {
  switch (row % 4) {
    case 0: return 80.0;
    case 2: return -120.0;
    default: return 0.0;
  }
}

void generate(const View& x, std::int64_t cols, std::uint64_t seed) {
  if (cols < 0 || (cols == 0 && x.count > 0)) throw std::invalid_argument("softmax: rows and cols must be >= 0");
  const DType dtype = x.elem.dtype.value_or(DType::f64);
  require_supported(dtype);
  parallel_chunks(x.count, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint64_t h = counter_bits(seed, i);
      const double v = row_offset(i / cols) + (16.0 * unit_interval(h) - 8.0);
      if (dtype == DType::f32) x.as<float>()[i] = static_cast<float>(v);
      else x.as<std::uint16_t>()[i] = float_to_bf16(static_cast<float>(v));
    }
  });
}

void reference(const View& x, std::int64_t cols, double* y, double* max, double* spread) {
  const std::int64_t rows = cols > 0 ? x.count / cols : 0;
  parallel_rows(rows, cols, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      double mx = -std::numeric_limits<double>::infinity(), mn = std::numeric_limits<double>::infinity();
      double* yr = y + r * cols;
      for (std::int64_t c = 0; c < cols; ++c) {
        const double v = yr[c] = x.value(r * cols + c);  // decoded once, into the row's output
        mx = std::max(mx, v);
        mn = std::min(mn, v);
      }
      for (std::int64_t c = 0; c < cols; ++c) yr[c] -= mx;
      exp_n(yr, yr, cols);  // vectorized (include/labrun/vector_math.hpp)
      double sum = 0;
      for (std::int64_t c = 0; c < cols; ++c) sum += yr[c];
      for (std::int64_t c = 0; c < cols; ++c) yr[c] /= sum;
      max[r] = cols > 0 ? mx : 0.0;
      spread[r] = cols > 0 ? mx - mn : 0.0;
    }
  });
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

void check(Compare& c) {
  const Params p = params_of(c.args());
  const Tolerance tol = tolerance(p.variant, p.dtype, p.cols, 1.0);  // unscaled: the lab applies the scale
  const std::int64_t rows = p.rows, cols = p.cols;
  const View& x = c.inputs()["x"];
  const View& y = c.outputs()["y"];
  const Reference& ref = c.reference();
  const std::vector<double>& ry = ref.array("y");
  const std::vector<double>& rmax = ref.array("max");
  const std::vector<double>& rspread = ref.array("spread");
  auto bound = [&](std::int64_t i, double want) {
    const std::int64_t r = i / cols;
    return tol.bound(want, rmax[r] - x.value(i), rspread[r]);
  };
  const CheckResult& res = c.elementwise("y", bound);
  // The re-check on fresh inputs compares a sample and asks nothing more: the row sums are the correctness
  // iteration's.
  if (c.sampled()) return;
  // Row sums (in double) against 1, and the relative L2 error: per chunk of whole rows, combined in order.
  const double inf = std::numeric_limits<double>::infinity();
  struct Part {
    double err2 = 0, ref2 = 0, row_worst = 0, row_sum = 0, row_bound = 0;
    std::int64_t worst_row = -1;
  };
  std::vector<Part> parts(kDefaultChunks);
  const double sum_rounding = static_cast<double>(cols) * 0x1.0p-52 / c.scale();
  parallel_rows(rows, cols, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part q;
    for (std::int64_t r = begin; r < end; ++r) {
      double sum = 0, sum_bound = 0;
      for (std::int64_t col = 0; col < cols; ++col) {
        const std::int64_t i = r * cols + col;
        const double got = y.value(i), want = ry[static_cast<std::size_t>(i)];
        const double err = std::fabs(got - want);
        sum += got;
        sum_bound += bound(i, want);
        q.err2 += std::isfinite(got) ? err * err : inf;
        q.ref2 += want * want;
      }
      if (cols == 0) continue;
      const double row_bound = sum_bound + sum_rounding;
      const double ratio = std::isfinite(sum) ? std::fabs(sum - 1.0) / row_bound : inf;
      if (q.worst_row < 0 || !(ratio <= q.row_worst)) {
        q.row_worst = ratio;
        q.worst_row = r;
        q.row_sum = sum;
        q.row_bound = row_bound;
      }
    }
    parts[chunk] = q;
  });
  Part all;
  for (const auto& q : parts) {
    all.err2 += q.err2;
    all.ref2 += q.ref2;
    if (q.worst_row >= 0 && (all.worst_row < 0 || !(q.row_worst <= all.row_worst))) {
      all.row_worst = q.row_worst;
      all.worst_row = q.worst_row;
      all.row_sum = q.row_sum;
      all.row_bound = q.row_bound;
    }
  }
  c.note("rel_l2_error", all.ref2 > 0 ? std::sqrt(all.err2 / all.ref2) : std::sqrt(all.err2));
  if (res.worst_index >= 0 && cols > 0) {
    c.note("worst_row", static_cast<double>(res.worst_index / cols));
    c.note("worst_col", static_cast<double>(res.worst_index % cols));
  }
  c.note("u", tol.u);
  c.note("u_s", tol.u_s);
  c.note("k_s", tol.k_s);
  c.note("log_term", tol.log_term);
  c.note("floor", tol.floor);
  if (all.worst_row >= 0) {
    c.scalar("row_sum", all.row_sum, 1.0, all.row_bound);
    c.note("row", static_cast<double>(all.worst_row));
    c.note("rows", static_cast<double>(rows));
  }
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
  return Cost::of({.read = read, .written = written, .compulsory = 2 * n * s, .flop = 5 * n, .launches = launches});
}

void HostScratch::size_for(std::int64_t cols) {
  const std::size_t n = static_cast<std::size_t>(std::max<std::int64_t>(cols, 0)), chunks = chunks_of(cols);
  if (row.size() < n) row.resize(n);
  if (a.size() < chunks) a.resize(chunks);
  if (local.size() < chunks) local.resize(chunks);
  if (work.size() < chunks) work.resize(chunks);
}

void host_run(Variant variant, const View& x, std::int64_t cols, void* y, HostScratch& scratch) {
  if (x.elem.dtype == DType::bf16) host_run_typed<DType::bf16>(variant, x, cols, y, scratch);
  else host_run_typed<DType::f32>(variant, x, cols, y, scratch);
}

LABRUN_EXPERIMENT(softmax) {
  e.describe("row softmax of a [elements / cols x cols] matrix: unfused (4 kernels) vs fused two-pass vs online")
      .docs("docs/experiments/softmax.md")
      .int_axis("cols", "row length: elements per row (the size axis)", 1.0, 1048576.0, 4096)
      .int_axis("elements",
                "rows x cols: the matrix's element count (rows = elements / cols; must be a multiple of cols)", 1.0,
                2147483648.0, std::int64_t{1} << 24)
      .word_axis("dtype", "storage dtype of x, y and the unfused intermediates (compute in f32)", {"f32", "bf16"},
                 "f32")
      // One figure per slice of the other varying axes (src/report/report_plots.cpp); plot_report.py draws no slice
      // with a single x value, so time vs cols appears for elements = 2^24 only and time vs elements for cols = 4096
      // only.
      .plot({"cols", "variant", {}, "time vs cols"})
      .plot({"elements", "variant", {}, "time vs elements"});
  // x and y; unfused's intermediates e (rows x cols), m and s (rows), in the storage dtype. An unsupported shape
  // (elements not a multiple of cols) is never run: its arrays are only estimated, with rows rounded down.
  e.arrays([](const Args& a, Layout& l) {
    const std::int64_t cols = a.i64("cols"), n = a.i64("elements"), rows = cols > 0 ? n / cols : 0;
    const DType t = a.dtype();
    l.input("x", t, n).output("y", t, n);
    if (a.variant() == "unfused") l.scratch("e", t, n).scratch("m", t, rows).scratch("s", t, rows);
  });
  e.inputs_depend_on({"cols", "elements", "dtype"});
  // The seeds drawn before the SDK ("softmax/ROWSxCOLS/DTYPE"), so earlier results compare point for point.
  e.seed_text([](const Args& a) { return seed_text(params_of(a)); });
  e.generate([](const Args& a, std::uint64_t seed, Arrays& in) { generate(in["x"], a.i64("cols"), seed); });
  e.reference([](const Args& a, const Arrays& in, Reference& r) {
    const Params p = params_of(a);
    double* y = r.array("y", p.elements()).data();
    double* mx = r.array("max", p.rows).data();
    double* spread = r.array("spread", p.rows).data();
    reference(in["x"], p.cols, y, mx, spread);
  });
  e.check(check);
  e.cost([](const Args& a, const Reference&) { return cost(params_of(a)); });
  // The host variants: the scratch sized here, once per point, not in an iteration.
  auto host = [](Launch& setup) -> Step {
    const Params p = params_of(setup.args());
    auto scratch = std::make_shared<HostScratch>();
    scratch->size_for(p.cols);
    if (p.variant == Variant::unfused) {
      scratch->e = setup.scratch("e").data;
      scratch->m = setup.scratch("m").data;
      scratch->s = setup.scratch("s").data;
    }
    return [p, scratch](Launch& l) { host_run(p.variant, l.in("x"), p.cols, l.out("y").data, *scratch); };
  };
  auto unsupported = [](const Args& a) { return shape_unsupported(a); };
  for (const auto& row : kVariants) e.variant(row.name, row.description).host(host).unsupported(unsupported);
}

}  // namespace labrun::softmax
