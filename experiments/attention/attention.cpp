// The attention experiment on the SDK (LABRUN_EXPERIMENT(attention)): axes, arrays, the input generator, the
// float64 reference of all rows or a sample of them, the check (the referenced rows within their bound, every
// element finite), the cost model and the host variants (the kernels' host twins). Formulas:
// docs/experiments/attention.md.
#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <set>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/dtype.hpp>
#include <labrun/parallel.hpp>

namespace labrun::attention {

namespace {

constexpr VariantTable<Variant, 4> kVariants{{{
    {Variant::naive_out_of_place, "naive_out_of_place",
     "cuBLAS Q K^T (f32 scores), scale, out-of-place mask fill (a second S x S buffer), softmax, cuBLAS P V"},
    {Variant::naive_in_place, "naive_in_place",
     "cuBLAS Q K^T (f32 scores), fused in-place scale + mask, softmax (P bf16 over its row), cuBLAS P V"},
    {Variant::tiled, "tiled",
     "one fused kernel (FlashAttention-2): mma.sync bf16, online softmax, the S x S matrix never written"},
    {Variant::cudnn, "cudnn",
     "cuDNN's fused attention forward (graph API, loaded at run time; CUDA only): PyTorch SDPA's cuDNN backend"},
}}};

constexpr float kLog2e = 1.44269504088896340736f;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// host_run's work rows, one set per chunk: made once in a host variant's setup (case C12), never in an iteration.
struct HostWork {
  std::vector<std::vector<float>> x, y, acc;
  HostWork(Variant variant, const Qkv& in) : x(kDefaultChunks), y(kDefaultChunks), acc(kDefaultChunks) {
    for (int c = 0; c < kDefaultChunks; ++c) {
      x[c].resize(static_cast<std::size_t>(std::max<std::int64_t>(in.seq, kBlockN)));
      y[c].resize(variant == Variant::naive_out_of_place ? x[c].size() : 0);
      acc[c].resize(static_cast<std::size_t>(in.head_dim));
    }
  }
};

float bf(std::uint16_t h) { return bf16_to_float(h); }

// f32 dot of query row qi and key row kj (products of bf16 are exact in f32; sequential sum).
float dot_f32(const std::uint16_t* qi, const std::uint16_t* kj, int d) {
  float acc = 0.0f;
  for (int t = 0; t < d; ++t) acc += bf(qi[t]) * bf(kj[t]);
  return acc;
}

void naive_row(const Qkv& in, bool causal, bool out_of_place, std::int64_t r, std::vector<float>& x,
               std::vector<float>& y, std::vector<float>& pv, std::uint16_t* o, float scale) {
  const std::int64_t s = in.seq, bh = r / s, i = r % s;
  const int d = in.head_dim;
  const std::uint16_t* q = in.q + r * d;
  const std::uint16_t* k = in.k + bh * s * d;
  const std::uint16_t* v = in.v + bh * s * d;
  // GEMM 1 (f32 out), then the scale (f32), then the mask: in place, or into the second buffer y.
  for (std::int64_t j = 0; j < s; ++j) x[j] = dot_f32(q, k + j * d, d) * scale;
  std::vector<float>& m = out_of_place ? y : x;
  for (std::int64_t j = 0; j < s; ++j) m[j] = causal && j > i ? kNegInf : x[j];
  float mx = kNegInf;
  for (std::int64_t j = 0; j < s; ++j) mx = std::max(mx, m[j]);
  float sum = 0.0f;
  for (std::int64_t j = 0; j < s; ++j) sum += (m[j] = std::exp(m[j] - mx));
  const float inv = 1.0f / sum;
  for (std::int64_t j = 0; j < s; ++j) m[j] = bf(float_to_bf16(m[j] * inv));  // P stored in bf16
  std::fill(pv.begin(), pv.end(), 0.0f);
  for (std::int64_t j = 0; j < s; ++j)
    for (int t = 0; t < d; ++t) pv[t] += m[j] * bf(v[j * d + t]);
  for (int t = 0; t < d; ++t) o[r * d + t] = float_to_bf16(pv[t]);
}

void tiled_row(const Qkv& in, bool causal, std::int64_t r, std::vector<float>& sc, std::vector<float>& acc,
               std::uint16_t* o, float c) {
  const std::int64_t s = in.seq, bh = r / s, i = r % s;
  const int d = in.head_dim;
  const std::uint16_t* q = in.q + r * d;
  const std::uint16_t* k = in.k + bh * s * d;
  const std::uint16_t* v = in.v + bh * s * d;
  const std::int64_t tiles = causal ? i / kBlockN + 1 : (s + kBlockN - 1) / kBlockN;
  float m = kNegInf, l = 0.0f;
  std::fill(acc.begin(), acc.end(), 0.0f);
  for (std::int64_t tile = 0; tile < tiles; ++tile) {
    const std::int64_t j0 = tile * kBlockN;
    float mx = kNegInf;
    for (int jj = 0; jj < kBlockN; ++jj) {
      const std::int64_t j = j0 + jj;
      sc[jj] = j >= s || (causal && j > i) ? kNegInf : dot_f32(q, k + j * d, d);
      mx = std::max(mx, sc[jj]);
    }
    const float m_new = std::max(m, mx * c);
    const float m_use = m_new == kNegInf ? 0.0f : m_new;
    const float alpha = std::exp2(m - m_use);
    m = m_new;
    float rs = 0.0f;
    for (int jj = 0; jj < kBlockN; ++jj) rs += (sc[jj] = std::exp2(std::fma(sc[jj], c, -m_use)));
    l = l * alpha + rs;
    for (int t = 0; t < d; ++t) acc[t] *= alpha;
    for (int jj = 0; jj < kBlockN && j0 + jj < s; ++jj) {
      const float p = bf(float_to_bf16(sc[jj]));  // P enters the second mma as bf16
      const std::uint16_t* vj = v + (j0 + jj) * d;
      for (int t = 0; t < d; ++t) acc[t] += p * bf(vj[t]);
    }
  }
  const float inv = 1.0f / l;
  for (int t = 0; t < d; ++t) o[r * d + t] = float_to_bf16(acc[t] * inv);
}

}  // namespace

const char* to_string(Variant v) { return kVariants.name(v); }

Variant variant_of(const Args& args) { return kVariants.of(args); }

float Params::scale() const { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))); }

std::optional<std::string> shape_unsupported(const Args& a) {
  const std::int64_t b = a.i64("batch"), h = a.i64("heads"), s = a.i64("seq");
  const std::int64_t d = a.i64("head_dim");
  if (d != 64 && d != 128) return "head_dim = " + std::to_string(d) + ": the kernels are built for 64 and 128";
  if (b < 1 || h < 1 || s < 1) return "batch, heads and seq must be >= 1";
  if (s > kMaxSeq) return "seq = " + std::to_string(s) + " > " + std::to_string(kMaxSeq) + " (the softmax row limit)";
  if (b * h > 65535) return "batch x heads = " + std::to_string(b * h) + " > 65535 (one grid dimension)";
  return std::nullopt;
}

Params params_of(const Args& a) {
  if (auto why = shape_unsupported(a)) throw std::invalid_argument("attention: " + *why);
  Params p;
  p.variant = variant_of(a);
  p.batch = a.i64("batch");
  p.heads = a.i64("heads");
  p.seq = a.i64("seq");
  p.head_dim = static_cast<int>(a.i64("head_dim"));
  const std::int64_t causal = a.i64("causal");
  if (causal != 0 && causal != 1) throw std::invalid_argument("attention: causal must be 0 or 1");
  p.causal = causal == 1;
  p.mode = a.mode();
  return p;
}

void generate(std::uint16_t* q, std::uint16_t* k, std::uint16_t* v, std::int64_t n, std::uint64_t seed) {
  std::uint16_t* tensors[3] = {q, k, v};
  const double half_width[3] = {2.0, 2.0, 1.0};
  for (int t = 0; t < 3; ++t) {
    std::uint16_t* out = tensors[t];
    const std::uint64_t s = splitmix64(seed ^ (0x51ed270b27ull * static_cast<std::uint64_t>(t + 1)));
    const double w = half_width[t];
    parallel_chunks(n, [&](int, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const std::uint64_t h = counter_bits(s, i);
        out[i] = float_to_bf16(static_cast<float>(w * (2.0 * unit_interval(h) - 1.0)));
      }
    });
  }
}

Inputs generate(std::int64_t batch, std::int64_t heads, std::int64_t seq, int head_dim, std::uint64_t seed) {
  if (batch < 1 || heads < 1 || seq < 1 || head_dim < 1)
    throw std::invalid_argument("attention: batch, heads, seq and head_dim must be >= 1");
  Inputs in;
  in.batch = batch;
  in.heads = heads;
  in.seq = seq;
  in.head_dim = head_dim;
  const std::size_t n = static_cast<std::size_t>(in.elements());
  in.q.assign(n, 0);
  in.k.assign(n, 0);
  in.v.assign(n, 0);
  generate(in.q.data(), in.k.data(), in.v.data(), in.elements(), seed);
  return in;
}

std::vector<std::int64_t> reference_rows(const Qkv& in) {
  const std::int64_t s = in.seq, bh = in.bh(), rows = bh * s;
  std::vector<std::int64_t> out;
  if (static_cast<double>(rows) * static_cast<double>(s) * in.head_dim <= kFullReferenceWork) {
    out.resize(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) out[static_cast<std::size_t>(r)] = r;
    return out;
  }
  // Edge rows (the first and last of the sequence and of the first and last tiles) in the first and last head,
  // then rows drawn by a hash over every head.
  const std::int64_t edges[] = {0,
                                1,
                                kBlockM - 1,
                                kBlockM,
                                s - 1,
                                s - 2,
                                s - kBlockM,
                                s - kBlockM - 1,
                                (s / 2 / kBlockM) * kBlockM,
                                (s / 2 / kBlockM) * kBlockM - 1};
  std::set<std::int64_t> pick;
  for (std::int64_t head : {std::int64_t{0}, bh - 1})
    for (std::int64_t e : edges)
      if (e >= 0 && e < s) pick.insert(head * s + e);
  for (std::uint64_t t = 0; static_cast<int>(pick.size()) < std::min<std::int64_t>(kSampleRows, rows); ++t)
    pick.insert(static_cast<std::int64_t>(splitmix64(0xa77e ^ splitmix64(t)) % static_cast<std::uint64_t>(rows)));
  out.assign(pick.begin(), pick.end());
  return out;
}

RowReference reference(const Qkv& in, bool causal, const std::vector<std::int64_t>& rows) {
  RowReference ref;
  ref.causal = causal;
  ref.full = static_cast<std::int64_t>(rows.size()) == in.bh() * in.seq;
  ref.rows = rows;
  const int d = in.head_dim;
  const std::int64_t s = in.seq, n = static_cast<std::int64_t>(rows.size());
  ref.o.assign(static_cast<std::size_t>(n * d), 0.0);
  ref.abs_pv.assign(static_cast<std::size_t>(n * d), 0.0);
  ref.logit_l1.assign(static_cast<std::size_t>(n), 0.0);
  const double scale = Params{Variant::tiled, 1, 1, 1, d, causal, "eager"}.scale();
  parallel_rows(n, s, [&](int, std::int64_t first, std::int64_t last) {
    std::vector<double> sc(static_cast<std::size_t>(s));
    for (std::int64_t idx = first; idx < last; ++idx) {
      const std::int64_t r = rows[static_cast<std::size_t>(idx)], bh = r / s, i = r % s;
      const std::uint16_t* q = in.q + r * d;
      const std::uint16_t* k = in.k + bh * s * d;
      const std::uint16_t* v = in.v + bh * s * d;
      const std::int64_t keys = causal ? i + 1 : s;
      double mx = -std::numeric_limits<double>::infinity(), l1 = 0;
      for (std::int64_t j = 0; j < keys; ++j) {
        double acc = 0, a1 = 0;
        for (int t = 0; t < d; ++t) {
          const double p = static_cast<double>(bf(q[t])) * bf(k[j * d + t]);
          acc += p;
          a1 += std::fabs(p);
        }
        sc[j] = scale * acc;
        mx = std::max(mx, sc[j]);
        l1 = std::max(l1, scale * a1);
      }
      double sum = 0;
      for (std::int64_t j = 0; j < keys; ++j) sum += (sc[j] = std::exp(sc[j] - mx));
      double* o = ref.o.data() + idx * d;
      double* a = ref.abs_pv.data() + idx * d;
      for (std::int64_t j = 0; j < keys; ++j) {
        const double p = sc[j] / sum;
        for (int t = 0; t < d; ++t) {
          const double vv = bf(v[j * d + t]);
          o[t] += p * vv;
          a[t] += p * std::fabs(vv);
        }
      }
      ref.logit_l1[static_cast<std::size_t>(idx)] = l1;
    }
  });
  return ref;
}

Tolerance tolerance(const Params& p, double scale) {
  Tolerance t;
  t.seq = static_cast<double>(p.seq);
  t.head_dim = p.head_dim;
  t.scale = scale;
  return t;
}

Cost cost(const Params& p, std::size_t workspace_bytes) {
  const double e2 = 2.0 * static_cast<double>(p.elements());  // bytes of one of Q, K, V, O
  const double ps = p.score_elements() * kScoreBytes;         // one f32 score buffer
  const double p2 = p.score_elements() * 2;                   // P in bf16
  const double flop = (4.0 * p.head_dim + 5.0) * p.score_elements() * (p.causal ? 0.5 : 1.0);
  double read = 0, written = 0, launches = 0, peak = 0;
  switch (p.variant) {
    case Variant::naive_out_of_place:
      // gemm: Q, K -> S; scale: S -> S; fill: S -> S'; softmax: S' -> P (bf16 over S'); gemm: P, V -> O.
      read = 2 * e2 + ps + ps + ps + p2 + e2;
      written = ps + ps + ps + p2 + e2;
      launches = 5;
      peak = 2 * ps + e2 + static_cast<double>(workspace_bytes);
      break;
    case Variant::naive_in_place:
      read = 2 * e2 + ps + ps + p2 + e2;
      written = ps + ps + p2 + e2;
      launches = 4;
      peak = ps + e2 + static_cast<double>(workspace_bytes);
      break;
    case Variant::tiled:
    case Variant::cudnn:
      read = 3 * e2;
      written = e2;
      launches = 1;
      peak = e2;
      break;
  }
  Cost c = Cost::of({.read = read, .written = written, .compulsory = 4 * e2, .flop = flop, .launches = launches});
  c.peak_work_bytes = peak;
  return c;
}

double working_set_bytes(const Params& p) {
  return 3.0 * 2.0 * static_cast<double>(p.elements()) + cost(p).peak_work_bytes;
}

namespace {

void run_rows(Variant variant, const Qkv& in, bool causal, std::uint16_t* o, HostWork& work) {
  const std::int64_t rows = in.bh() * in.seq, s = in.seq;
  const int d = in.head_dim;
  const Params p{variant, in.batch, in.heads, in.seq, d, causal, "eager"};
  const float scale = p.scale();
  const float c = scale * kLog2e;
  parallel_rows(rows, s * d, [&](int chunk, std::int64_t first, std::int64_t last) {
    std::vector<float>&x = work.x[chunk], &y = work.y[chunk], &acc = work.acc[chunk];
    for (std::int64_t r = first; r < last; ++r) {
      if (variant == Variant::tiled) tiled_row(in, causal, r, x, acc, o, c);
      else naive_row(in, causal, variant == Variant::naive_out_of_place, r, x, y, acc, o, scale);
    }
  });
}

Qkv qkv_of(const Args& a, const View& q, const View& k, const View& v) {
  return Qkv{a.i64("batch"),
             a.i64("heads"),
             a.i64("seq"),
             static_cast<int>(a.i64("head_dim")),
             q.as<const std::uint16_t>(),
             k.as<const std::uint16_t>(),
             v.as<const std::uint16_t>()};
}

// The experiment's description, docs, axes and figure.
void describe(ExperimentDef& e) {
  e.describe(
       "attention forward (bf16 Q, K, V, O; f32 accumulation), causal and not: naive cuBLAS + softmax with an "
       "out-of-place or in-place mask vs one fused FlashAttention kernel vs cuDNN's fused attention")
      .docs("docs/experiments/attention.md")
      .int_axis("seq", "sequence length S (the size axis)", 1, static_cast<double>(kMaxSeq), 4096)
      .int_axis("batch", "batch B", 1, 65535, 4)
      .int_axis("heads", "heads H", 1, 65535, 32)
      .int_axis("head_dim", "head dimension D (64 or 128)", 64, 128, 128)
      .int_axis("causal", "1: mask j > i (causal), 0: no mask", 0, 1, 1)
      .size_axis("seq")
      .plot({"seq", "variant", {"head_dim", "causal"}, "time vs seq"});
}

// Q, K, V in, O out; the naive variants' f32 score buffers (two out of place) as scratch and their cuBLAS
// workspace (the handle's, made in the setup) as transient: the working set is Q, K, V + peak_work_bytes.
void lay_out(const Args& a, Layout& l) {
  if (shape_unsupported(a)) return;
  const Params p = params_of(a);
  l.input("q", DType::bf16, p.elements()).input("k", DType::bf16, p.elements()).input("v", DType::bf16, p.elements());
  l.output("o", DType::bf16, p.elements());
  if (p.variant == Variant::tiled || p.variant == Variant::cudnn) return;
  const std::int64_t scores = p.bh() * p.seq * p.seq;
  l.scratch("scores", DType::f32, scores);
  if (p.variant == Variant::naive_out_of_place) l.scratch("filled", DType::f32, scores);
  l.add("cublas_workspace", Role::transient, Elem::raw<std::uint8_t>(), static_cast<std::int64_t>(kWorkspaceBytes));
}

// Every row for small points, kSampleRows rows for large ones (reference_rows): o, abs_pv and logit_l1 of the
// rows referenced, the rows themselves (exact in double) and whether they are all of them.
void store_reference(const Args& a, const Arrays& in, Reference& r) {
  const Qkv qkv = qkv_of(a, in["q"], in["k"], in["v"]);
  RowReference ref = reference(qkv, a.i64("causal") == 1, reference_rows(qkv));
  std::vector<double>& rows = r.array("rows", static_cast<std::int64_t>(ref.rows.size()));
  for (std::size_t i = 0; i < ref.rows.size(); ++i) rows[i] = static_cast<double>(ref.rows[i]);
  r.array("o", 0) = std::move(ref.o);
  r.array("abs_pv", 0) = std::move(ref.abs_pv);
  r.array("logit_l1", 0) = std::move(ref.logit_l1);
  r.set("full", ref.full ? 1 : 0);
}

// The elements of O in the referenced rows (each row's d elements, in the reference's order).
std::vector<std::int64_t> referenced_elements(const std::vector<double>& rows, int d) {
  std::vector<std::int64_t> at(rows.size() * static_cast<std::size_t>(d));
  for (std::size_t idx = 0; idx < rows.size(); ++idx)
    for (int t = 0; t < d; ++t) at[idx * d + t] = static_cast<std::int64_t>(rows[idx]) * d + t;
  return at;
}

// The relative L2 error of O's elements `at` against `want` (the absolute one where the reference is 0; infinite
// where an element is not finite).
double rel_l2_error(const View& o, const std::vector<std::int64_t>& at, const std::vector<double>& want) {
  double err2 = 0, ref2 = 0;
  for (std::size_t k = 0; k < at.size(); ++k) {
    const double got = o.value(at[k]), err = got - want[k];
    err2 += std::isfinite(got) ? err * err : std::numeric_limits<double>::infinity();
    ref2 += want[k] * want[k];
  }
  return ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
}

// The referenced rows element by element within the bound (unscaled: the lab applies lab.tolerance_scale), and
// every element of O finite, referenced or not (Compare::elementwise_at; NaN never passes, C07).
void check(Compare& c) {
  const Params p = params_of(c.args());
  const Tolerance tol = tolerance(p, 1.0);
  const Reference& ref = c.reference();
  const std::vector<double>&rows = ref.array("rows"), &want = ref.array("o");
  const std::vector<double>&abs_pv = ref.array("abs_pv"), &l1 = ref.array("logit_l1");
  const int d = p.head_dim;
  const std::vector<std::int64_t> at = referenced_elements(rows, d);
  const CheckResult& r = c.elementwise_at("o", at, [&](std::int64_t k, double w) {
    return tol.bound(w, abs_pv[static_cast<std::size_t>(k)], l1[static_cast<std::size_t>(k / d)]);
  });
  const double rel_l2 = rel_l2_error(c.outputs()["o"], at, want);
  const std::int64_t worst = r.worst_index;
  c.note("rows_checked", static_cast<double>(rows.size()));
  c.note("rows_total", static_cast<double>(p.bh() * p.seq));
  c.note("full_reference", ref.value("full"));
  c.note("rel_l2_error", rel_l2);
  if (worst >= 0) {
    c.note("worst_bh", static_cast<double>(worst / (p.seq * d)));
    c.note("worst_row", static_cast<double>(worst / d % p.seq));
    c.note("worst_col", static_cast<double>(worst % d));
  }
  c.note("u", tol.u);
  c.note("u32", tol.u32);
  c.note("floor", tol.floor);
}

// A host variant's setup: its work rows made here, once per point (case C12); each iteration runs the rows.
Step host_setup(Launch& setup) {
  const Params p = params_of(setup.args());
  const Qkv in = qkv_of(setup.args(), setup.in("q"), setup.in("k"), setup.in("v"));
  std::uint16_t* o = setup.out("o").as<std::uint16_t>();
  auto work = std::make_shared<HostWork>(p.variant, in);
  return [=](Launch&) { run_rows(p.variant, in, p.causal, o, *work); };
}

}  // namespace

void host_run(Variant variant, const Qkv& in, bool causal, std::uint16_t* o) {
  HostWork work(variant, in);
  run_rows(variant, in, causal, o, work);
}

LABRUN_EXPERIMENT(attention) {
  describe(e);
  e.arrays(lay_out);
  e.inputs_depend_on({"batch", "heads", "seq", "head_dim"});
  e.reference_depends_on({"causal"});
  e.seed_text([](const Args& a) {  // the seeds drawn before the SDK, so earlier results compare point for point
    return "attention/" + std::to_string(a.i64("batch")) + "x" + std::to_string(a.i64("heads")) + "x" +
           std::to_string(a.i64("seq")) + "x" + std::to_string(a.i64("head_dim"));
  });
  e.generate([](const Args&, std::uint64_t seed, Arrays& in) {
    generate(in["q"].as<std::uint16_t>(), in["k"].as<std::uint16_t>(), in["v"].as<std::uint16_t>(), in["q"].count,
             seed);
  });
  e.reference(store_reference);
  e.check(check);
  e.cost([](const Args& a, const Reference&) { return shape_unsupported(a) ? Cost{} : cost(params_of(a)); });
  for (const auto& row : kVariants) {
    VariantDef& v = e.variant(row.name, row.description).unsupported(shape_unsupported);
    if (row.variant != Variant::cudnn) v.host(host_setup);  // cuDNN has no host twin: not_supported on the host
  }
  e.report_section(report_section);
}

}  // namespace labrun::attention
