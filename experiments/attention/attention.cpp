#include "attention.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/dtype.hpp>
#include <labrun/parallel.hpp>
#include <labrun/point.hpp>
#include "record.hpp"
#include "registry.hpp"
#include <labrun/status.hpp>

namespace labrun::attention {

namespace {

struct VariantRow {
  Variant variant;
  const char* name;
  const char* description;
};
constexpr VariantRow kVariants[] = {
    {Variant::naive_out_of_place, "naive_out_of_place",
     "cuBLAS Q K^T (f32 scores), scale, out-of-place mask fill (a second S x S buffer), softmax, cuBLAS P V"},
    {Variant::naive_in_place, "naive_in_place",
     "cuBLAS Q K^T (f32 scores), fused in-place scale + mask, softmax (P bf16 over its row), cuBLAS P V"},
    {Variant::tiled, "tiled",
     "one fused kernel (FlashAttention-2): mma.sync bf16, online softmax, the S x S matrix never written"},
};

constexpr int kChunks = 64;  // fixed split of the host loops: results independent of the thread count
constexpr float kLog2e = 1.44269504088896340736f;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

// fn(first_row, end_row) over whole rows of length `cols`, split by work (rows x cols) so that few long rows
// still spread over the threads: each chunk takes the rows whose first element lies in its slice.
template <class Fn>
void for_rows(std::int64_t rows, std::int64_t cols, Fn&& fn) {
  parallel_chunks(rows * cols, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
    fn(std::min(rows, (begin + cols - 1) / cols), std::min(rows, (end + cols - 1) / cols));
  });
}

float bf(std::uint16_t h) { return bf16_to_float(h); }

// f32 dot of query row qi and key row kj (products of bf16 are exact in f32; sequential sum).
float dot_f32(const std::uint16_t* qi, const std::uint16_t* kj, int d) {
  float acc = 0.0f;
  for (int t = 0; t < d; ++t) acc += bf(qi[t]) * bf(kj[t]);
  return acc;
}

void naive_row(const Inputs& in, bool causal, bool out_of_place, std::int64_t r, std::vector<float>& x,
               std::vector<float>& y, std::vector<float>& pv, std::uint16_t* o, float scale) {
  const std::int64_t s = in.seq, bh = r / s, i = r % s;
  const int d = in.head_dim;
  const std::uint16_t* q = in.q.data() + r * d;
  const std::uint16_t* k = in.k.data() + bh * s * d;
  const std::uint16_t* v = in.v.data() + bh * s * d;
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

void tiled_row(const Inputs& in, bool causal, std::int64_t r, std::vector<float>& sc, std::vector<float>& acc,
               std::uint16_t* o, float c) {
  const std::int64_t s = in.seq, bh = r / s, i = r % s;
  const int d = in.head_dim;
  const std::uint16_t* q = in.q.data() + r * d;
  const std::uint16_t* k = in.k.data() + bh * s * d;
  const std::uint16_t* v = in.v.data() + bh * s * d;
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

const char* to_string(Variant v) {
  for (const auto& row : kVariants)
    if (row.variant == v) return row.name;
  return "?";
}

Variant parse_variant(const std::string& name) {
  for (const auto& row : kVariants)
    if (name == row.name) return row.variant;
  throw std::invalid_argument("unknown attention variant '" + name + "'");
}

float Params::scale() const { return static_cast<float>(1.0 / std::sqrt(static_cast<double>(head_dim))); }

std::optional<std::string> shape_unsupported(const Point& point) {
  const std::int64_t b = point.integer("batch"), h = point.integer("heads"), s = point.integer("seq");
  const std::int64_t d = point.integer("head_dim");
  if (d != 64 && d != 128) return "head_dim = " + std::to_string(d) + ": the kernels are built for 64 and 128";
  if (b < 1 || h < 1 || s < 1) return "batch, heads and seq must be >= 1";
  if (s > kMaxSeq) return "seq = " + std::to_string(s) + " > " + std::to_string(kMaxSeq) + " (the softmax row limit)";
  if (b * h > 65535) return "batch x heads = " + std::to_string(b * h) + " > 65535 (one grid dimension)";
  return std::nullopt;
}

Params params_of(const Point& point) {
  if (auto why = shape_unsupported(point)) throw std::invalid_argument("attention: " + *why);
  Params p;
  p.variant = parse_variant(point.variant);
  p.batch = point.integer("batch");
  p.heads = point.integer("heads");
  p.seq = point.integer("seq");
  p.head_dim = static_cast<int>(point.integer("head_dim"));
  const std::int64_t causal = point.integer("causal");
  if (causal != 0 && causal != 1) throw std::invalid_argument("attention: causal must be 0 or 1");
  p.causal = causal == 1;
  p.mode = point.word("mode");
  return p;
}

Inputs generate(std::int64_t batch, std::int64_t heads, std::int64_t seq, int head_dim, std::uint64_t seed) {
  if (batch < 1 || heads < 1 || seq < 1 || head_dim < 1)
    throw std::invalid_argument("attention: batch, heads, seq and head_dim must be >= 1");
  Inputs in;
  in.batch = batch;
  in.heads = heads;
  in.seq = seq;
  in.head_dim = head_dim;
  const std::int64_t n = in.elements();
  std::vector<std::uint16_t>* tensors[3] = {&in.q, &in.k, &in.v};
  const double half_width[3] = {2.0, 2.0, 1.0};
  for (int t = 0; t < 3; ++t) {
    std::vector<std::uint16_t>& out = *tensors[t];
    out.assign(static_cast<std::size_t>(n), 0);
    const std::uint64_t s = splitmix64(seed ^ (0x51ed270b27ull * static_cast<std::uint64_t>(t + 1)));
    const double w = half_width[t];
    parallel_chunks(n, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
      for (std::int64_t i = begin; i < end; ++i) {
        const std::uint64_t h = splitmix64(s ^ splitmix64(static_cast<std::uint64_t>(i)));
        out[static_cast<std::size_t>(i)] = float_to_bf16(static_cast<float>(w * (2.0 * unit_interval(h) - 1.0)));
      }
    });
  }
  return in;
}

std::vector<std::int64_t> reference_rows(const Inputs& in) {
  const std::int64_t s = in.seq, bh = in.bh(), rows = bh * s;
  std::vector<std::int64_t> out;
  if (static_cast<double>(rows) * static_cast<double>(s) * in.head_dim <= kFullReferenceWork) {
    out.resize(static_cast<std::size_t>(rows));
    for (std::int64_t r = 0; r < rows; ++r) out[static_cast<std::size_t>(r)] = r;
    return out;
  }
  // Edge rows (the first and last of the sequence and of the first and last tiles) in the first and last head,
  // then rows drawn by a hash over every head.
  const std::int64_t edges[] = {0, 1, kBlockM - 1, kBlockM, s - 1, s - 2, s - kBlockM, s - kBlockM - 1,
                                (s / 2 / kBlockM) * kBlockM, (s / 2 / kBlockM) * kBlockM - 1};
  std::set<std::int64_t> pick;
  for (std::int64_t head : {std::int64_t{0}, bh - 1})
    for (std::int64_t e : edges)
      if (e >= 0 && e < s) pick.insert(head * s + e);
  for (std::uint64_t t = 0; static_cast<int>(pick.size()) < std::min<std::int64_t>(kSampleRows, rows); ++t)
    pick.insert(static_cast<std::int64_t>(splitmix64(0xa77e ^ splitmix64(t)) % static_cast<std::uint64_t>(rows)));
  out.assign(pick.begin(), pick.end());
  return out;
}

Reference reference(const Inputs& in, bool causal, const std::vector<std::int64_t>& rows) {
  Reference ref;
  ref.causal = causal;
  ref.full = static_cast<std::int64_t>(rows.size()) == in.bh() * in.seq;
  ref.rows = rows;
  const int d = in.head_dim;
  const std::int64_t s = in.seq, n = static_cast<std::int64_t>(rows.size());
  ref.o.assign(static_cast<std::size_t>(n * d), 0.0);
  ref.abs_pv.assign(static_cast<std::size_t>(n * d), 0.0);
  ref.logit_l1.assign(static_cast<std::size_t>(n), 0.0);
  const double scale = Params{Variant::tiled, 1, 1, 1, d, causal, "eager"}.scale();
  for_rows(n, s, [&](std::int64_t first, std::int64_t last) {
    std::vector<double> sc(static_cast<std::size_t>(s));
    for (std::int64_t idx = first; idx < last; ++idx) {
      const std::int64_t r = rows[static_cast<std::size_t>(idx)], bh = r / s, i = r % s;
      const std::uint16_t* q = in.q.data() + r * d;
      const std::uint16_t* k = in.k.data() + bh * s * d;
      const std::uint16_t* v = in.v.data() + bh * s * d;
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

Check compare(const Inputs& in, const std::uint16_t* o, const Reference& ref, const Tolerance& tol) {
  const int d = in.head_dim;
  const std::int64_t n = in.elements();
  const double inf = std::numeric_limits<double>::infinity();
  // Every element finite (the sampled rows of a large point do not see the others).
  std::vector<std::int64_t> bad(kChunks, 0), first_bad(kChunks, -1);
  parallel_chunks(n, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i)
      if (!std::isfinite(bf(o[i]))) {
        if (bad[chunk]++ == 0) first_bad[chunk] = i;
      }
  });
  std::int64_t non_finite = 0, first_non_finite = -1;
  for (int c = 0; c < kChunks; ++c) {
    non_finite += bad[c];
    if (first_non_finite < 0) first_non_finite = first_bad[c];
  }
  double worst = 0, err2 = 0, ref2 = 0, got_w = 0, want_w = 0, bound_w = 0;
  std::int64_t worst_row = -1, worst_col = -1, mismatches = 0;
  for (std::size_t idx = 0; idx < ref.rows.size(); ++idx) {
    const std::int64_t r = ref.rows[idx];
    for (int t = 0; t < d; ++t) {
      const double got = bf(o[r * d + t]), want = ref.o[idx * d + t];
      const double b = tol.bound(want, ref.abs_pv[idx * d + t], ref.logit_l1[idx]);
      const double err = std::fabs(got - want);
      const double ratio = std::isfinite(got) ? err / b : inf;
      err2 += std::isfinite(got) ? err * err : inf;
      ref2 += want * want;
      if (!(ratio <= 1)) ++mismatches;
      if (worst_row < 0 || !(ratio <= worst)) {
        worst = ratio;
        worst_row = r;
        worst_col = t;
        got_w = got;
        want_w = want;
        bound_w = b;
      }
    }
  }
  if (non_finite > 0) worst = inf;
  Check c;
  c.value = worst;
  c.reference = 0;
  c.abs_error = worst;
  c.tolerance = 1;
  c.passed = worst <= 1 && non_finite == 0 && !ref.rows.empty();
  c.detail["metric"] = "worst |o - o_ref| / bound over the checked rows (passes <= 1); every element finite";
  c.detail["rows_checked"] = static_cast<std::int64_t>(ref.rows.size());
  c.detail["rows_total"] = in.bh() * in.seq;
  c.detail["full_reference"] = ref.full;
  c.detail["mismatches"] = mismatches;
  c.detail["non_finite"] = non_finite;
  if (first_non_finite >= 0) c.detail["first_non_finite"] = first_non_finite;
  if (worst_row >= 0)
    c.detail["worst"] = {{"bh", worst_row / in.seq}, {"row", worst_row % in.seq}, {"col", worst_col},
                         {"got", json_real(got_w)},  {"expected", json_real(want_w)}, {"bound", json_real(bound_w)}};
  c.detail["rel_l2_error"] = json_real(ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2));
  c.detail["tolerance"] = {{"u", json_real(tol.u)}, {"u32", json_real(tol.u32)}, {"scale", json_real(tol.scale)},
                           {"floor", json_real(tol.floor)}};
  return c;
}

Cost cost(const Params& p, std::size_t workspace_bytes) {
  const double e2 = 2.0 * static_cast<double>(p.elements());  // bytes of one of Q, K, V, O
  const double ps = p.score_elements() * kScoreBytes;          // one f32 score buffer
  const double p2 = p.score_elements() * 2;                    // P in bf16
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
      read = 3 * e2;
      written = e2;
      launches = 1;
      peak = e2;
      break;
  }
  Cost c = Cost::of(read, written, 4 * e2, flop, launches, 0);
  c.peak_work_bytes = peak;
  return c;
}

double working_set_bytes(const Params& p) { return 3.0 * 2.0 * static_cast<double>(p.elements()) + cost(p).peak_work_bytes; }

void host_run(Variant variant, const Inputs& in, bool causal, std::uint16_t* o) {
  const std::int64_t rows = in.bh() * in.seq, s = in.seq;
  const int d = in.head_dim;
  const Params p{variant, in.batch, in.heads, in.seq, d, causal, "eager"};
  const float scale = p.scale();
  const float c = scale * kLog2e;
  for_rows(rows, s * d, [&](std::int64_t first, std::int64_t last) {
    std::vector<float> x(static_cast<std::size_t>(std::max<std::int64_t>(s, kBlockN)));
    std::vector<float> y(variant == Variant::naive_out_of_place ? x.size() : 0);
    std::vector<float> acc(static_cast<std::size_t>(d));
    for (std::int64_t r = first; r < last; ++r) {
      if (variant == Variant::tiled)
        tiled_row(in, causal, r, x, acc, o, c);
      else
        naive_row(in, causal, variant == Variant::naive_out_of_place, r, x, y, acc, o, scale);
    }
  });
}

namespace {

std::string input_key(const Params& p) {
  return std::to_string(p.batch) + "x" + std::to_string(p.heads) + "x" + std::to_string(p.seq) + "x" +
         std::to_string(p.head_dim);
}

}  // namespace

std::uint64_t input_seed(const Params& p, std::uint64_t lab_seed) {
  return splitmix64(lab_seed ^ fnv1a64("attention/" + input_key(p)));
}

std::shared_ptr<const Inputs> InputCache::inputs(const Params& p, std::uint64_t seed) {
  const std::uint64_t s = input_seed(p, seed);
  const std::string key = input_key(p) + "/" + std::to_string(s);
  if (key != key_ || !inputs_) {
    inputs_.reset();  // release the old set first: at S = 8192 Q, K and V are 800 MB
    ref_.reset();
    inputs_ = std::make_shared<const Inputs>(generate(p.batch, p.heads, p.seq, p.head_dim, s));
    key_ = key;
  }
  return inputs_;
}

std::shared_ptr<const Reference> InputCache::reference_for(const Params& p, std::uint64_t seed) {
  auto in = inputs(p, seed);
  if (!ref_ || ref_causal_ != p.causal) {
    ref_ = std::make_shared<const Reference>(reference(*in, p.causal, reference_rows(*in)));
    ref_causal_ = p.causal;
  }
  return ref_;
}

namespace {

class HostWorkload : public Workload {
 public:
  HostWorkload(Params p, std::shared_ptr<const Inputs> in, std::shared_ptr<const Reference> ref, double scale)
      : p_(p), in_(std::move(in)), ref_(std::move(ref)), scale_(scale), o_(in_->q.size()) {}
  void run() override { host_run(p_.variant, *in_, p_.causal, o_.data()); }
  Check check(const std::function<void()>& iterate) override {
    std::fill(o_.begin(), o_.end(), std::uint16_t{0xffff});  // NaN in bf16
    iterate();
    Check c = compare(*in_, o_.data(), *ref_, tolerance(p_, scale_));
    c.detail["poisoned"] = true;
    return c;
  }
  Cost cost() const override { return attention::cost(p_); }

 private:
  Params p_;
  std::shared_ptr<const Inputs> in_;
  std::shared_ptr<const Reference> ref_;
  double scale_;
  std::vector<std::uint16_t> o_;
};

}  // namespace

void register_experiment(Registry& registry) {
  Experiment e;
  e.name = "attention";
  e.description =
      "attention forward (bf16 Q, K, V, O; f32 accumulation), causal and not: naive cuBLAS + softmax with an "
      "out-of-place or in-place mask vs one fused FlashAttention-2 kernel";
  e.axes = {
      {"seq", AxisKind::Integer, "sequence length S (the size axis)", 1.0, static_cast<double>(kMaxSeq), {},
       std::int64_t{4096}},
      {"batch", AxisKind::Integer, "batch B", 1.0, 65535.0, {}, std::int64_t{4}},
      {"heads", AxisKind::Integer, "heads H", 1.0, 65535.0, {}, std::int64_t{32}},
      {"head_dim", AxisKind::Integer, "head dimension D (64 or 128)", 64.0, 128.0, {}, std::int64_t{128}},
      {"causal", AxisKind::Integer, "1: mask j > i (causal), 0: no mask", 0.0, 1.0, {}, std::int64_t{1}},
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
  e.size_axis = "seq";
  e.estimate = [](const Point& point) {
    if (shape_unsupported(point)) return PointEstimate{};
    const Params p = params_of(point);
    const Cost c = cost(p);
    return PointEstimate{working_set_bytes(p), c.bytes, c.flop};
  };
  e.plots = {PlotSpec{"seq", "variant", {"head_dim", "causal"}, "time vs seq"}};
  e.docs = "docs/experiments/attention.md";
  registry.add(std::move(e));
}

}  // namespace labrun::attention
