// Tests of the attention experiment on the host: the float64 reference against cases with a known answer, every
// host variant (naive out of place, naive in place, tiled online softmax) against the reference on small shapes,
// causal and not, with S a multiple of the tile and not (S = 1, 7, 63, 64, 65, 130, 256), the tolerance (that it
// is not trivially loose, and that wrong outputs and NaN fail: case C07), the sampled reference rows of large
// points, the cost model's numbers (the founding text's score-matrix traffic, the peak work memory), the input
// generator and its seeds (those drawn before the SDK), the config's points and their estimates, and run_point on
// the host backend. attention is an SDK experiment: its check (the referenced rows element by element and every
// element finite, through Compare::elementwise_at) runs here as the lab runs it, read from the lab's CheckOutcome.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <labrun/counter_rng.hpp>
#include <labrun/dtype.hpp>

#include "attention/attention.hpp"
#include "config.hpp"
#include "host_backend.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sdk_registry.hpp"
#include "sweep.hpp"
#include "attention_test.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using attention::Inputs;
using attention::Variant;

constexpr std::uint64_t kSeed = 20261129;
const Variant kVariants[] = {Variant::naive_out_of_place, Variant::naive_in_place, Variant::tiled};

using test::builtin;
const Registry& registry() { return builtin(); }
const RegisteredExperiment& experiment() { return *builtin().find("attention"); }

std::shared_ptr<SdkExperiment> sdk() { return test::builtin_sdk("attention"); }

using test_attention::point;

attention::Params params(Variant v, std::int64_t b, std::int64_t h, std::int64_t s, int d, bool causal) {
  return attention::Params{v, b, h, s, d, causal, "eager"};
}

std::vector<std::uint16_t> run_host(Variant v, const Inputs& in, bool causal) {
  std::vector<std::uint16_t> o(in.q.size(), 0xffff);
  attention::host_run(v, in, causal, o.data());
  return o;
}

Point point_of(Variant v, const Inputs& in, bool causal) {
  return point(attention::to_string(v), in.batch, in.heads, in.seq, in.head_dim, causal ? 1 : 0);
}
Arrays input_arrays(const Inputs& in) {
  Arrays a;
  for (const auto& [name, t] : {std::pair{"q", &in.q}, std::pair{"k", &in.k}, std::pair{"v", &in.v}})
    a.put(name, View{const_cast<std::uint16_t*>(t->data()), in.elements(), Elem::of(DType::bf16)});
  return a;
}

/// The experiment's reference (ExperimentDef::reference) of `in`: "rows", "o", "abs_pv", "logit_l1", "full".
Reference lab_reference(const Inputs& in, bool causal) {
  Reference r;
  sdk()->def().reference_fn()(Args(point_of(Variant::tiled, in, causal)), input_arrays(in), r);
  return r;
}
/// A RowReference (e.g. a hand-trimmed one) as the lab holds it.
Reference lab_reference(const attention::RowReference& rr) {
  Reference r;
  std::vector<double>& rows = r.array("rows", static_cast<std::int64_t>(rr.rows.size()));
  for (std::size_t i = 0; i < rr.rows.size(); ++i) rows[i] = static_cast<double>(rr.rows[i]);
  r.array("o", 0) = rr.o;
  r.array("abs_pv", 0) = rr.abs_pv;
  r.array("logit_l1", 0) = rr.logit_l1;
  r.set("full", rr.full ? 1 : 0);
  return r;
}

/// The experiment's check (ExperimentDef::check, through the lab's CheckOutcome) of output o of variant v.
CheckOutcome compare(Variant v, const Inputs& in, bool causal, const std::vector<std::uint16_t>& o,
                     const Reference& ref, double scale = 1.0) {
  const Arrays ins = input_arrays(in);
  Arrays outs;
  outs.put("o", View{const_cast<std::uint16_t*>(o.data()), in.elements(), Elem::of(DType::bf16)});
  return sdk()->compare(
      Args(point_of(v, in, causal)), [&]() -> const Arrays& { return ins; }, outs, ref, scale);
}
/// The worst |o - o_ref| / bound (inf when an element is not finite).
double ratio(const CheckOutcome& c) { return c.reported() ? c.reported()->worst : 0.0; }
double note(const CheckOutcome& c, const char* name) { return real_from_json(test::detail_of(c)[name]); }

CheckOutcome check_host(Variant v, const Inputs& in, bool causal) {
  return compare(v, in, causal, run_host(v, in, causal), lab_reference(in, causal));
}

// S = 1: the only key has weight 1, so o = v_0 exactly, in the reference and (bf16 in, bf16 out, p = 1 exact)
// in every host variant. Causal row 0 likewise sees only key 0.
TEST(Attention, ReferenceKnownCases) {
  const Inputs one = attention::generate(1, 2, 1, 64, kSeed);
  for (bool causal : {false, true}) {
    const auto ref = attention::reference(one, causal, attention::reference_rows(one));
    ASSERT_EQ(ref.rows.size(), 2u);
    EXPECT_TRUE(ref.full);
    for (int t = 0; t < 64; ++t) {
      EXPECT_EQ(ref.o[t], bf16_to_float(one.v[t]));
      EXPECT_EQ(ref.abs_pv[t], std::fabs(bf16_to_float(one.v[t])));
    }
    for (Variant v : kVariants) {
      const auto o = run_host(v, one, causal);
      for (std::size_t i = 0; i < o.size(); ++i) EXPECT_EQ(o[i], one.v[i]) << attention::to_string(v) << " " << i;
    }
  }
  const Inputs in = attention::generate(1, 1, 9, 64, kSeed + 1);
  const auto ref = attention::reference(in, true, attention::reference_rows(in));
  for (int t = 0; t < 64; ++t) EXPECT_EQ(ref.o[t], bf16_to_float(in.v[t])) << "causal row 0 = v_0";
  // Equal keys: uniform weights, o = the mean of v over the visible keys (row 3 of a causal head: keys 0..3).
  Inputs eq = in;
  for (std::int64_t j = 0; j < 9; ++j)
    for (int t = 0; t < 64; ++t) eq.k[j * 64 + t] = eq.k[t];
  const auto ref_eq = attention::reference(eq, true, attention::reference_rows(eq));
  for (int t = 0; t < 64; ++t) {
    double mean = 0;
    for (int j = 0; j <= 3; ++j) mean += bf16_to_float(eq.v[j * 64 + t]);
    EXPECT_NEAR(ref_eq.o[3 * 64 + t], mean / 4, 1e-15);
  }
}

// Every host variant matches the float64 reference element by element at small shapes (B = 1, H = 2), causal
// and not, D = 64 and 128, S off and on the 64-key tile; the worst error is a real fraction of the bound (the
// comparison is not vacuous) and the naive and tiled results are not bit-identical (different algorithms).
TEST(Attention, HostVariantsMatchReference) {
  for (int d : {64, 128})
    for (std::int64_t s : {1, 7, 63, 64, 65, 130, 256}) {
      const Inputs in = attention::generate(1, 2, s, d, kSeed + static_cast<std::uint64_t>(s));
      for (bool causal : {false, true}) {
        for (Variant v : kVariants) {
          const CheckOutcome c = check_host(v, in, causal);
          EXPECT_TRUE(c.passed()) << attention::to_string(v) << " S=" << s << " D=" << d << " causal=" << causal << " "
                                  << test::detail_of(c).dump();
          EXPECT_EQ(note(c, "full_reference"), 1);
          EXPECT_EQ(note(c, "rows_checked"), 2 * s);
          EXPECT_EQ(test::detail_of(c)["compared"], 2 * s * d);
          if (s >= 64) EXPECT_GT(ratio(c), 1e-3) << "the bound should not be vacuous";
        }
        if (s >= 64) {
          EXPECT_NE(run_host(Variant::tiled, in, causal), run_host(Variant::naive_in_place, in, causal));
        }
        // The two naive variants do the same arithmetic; only where the masked copy lives differs.
        EXPECT_EQ(run_host(Variant::naive_out_of_place, in, causal), run_host(Variant::naive_in_place, in, causal));
      }
    }
}

// The causal mask matters: a non-causal result fails against the causal reference (and the reverse).
TEST(Attention, CausalMaskIsApplied) {
  const Inputs in = attention::generate(1, 2, 130, 64, kSeed);
  const Reference ref_c = lab_reference(in, true), ref_n = lab_reference(in, false);
  for (Variant v : kVariants) {
    EXPECT_FALSE(compare(v, in, true, run_host(v, in, false), ref_c).passed());
    EXPECT_FALSE(compare(v, in, false, run_host(v, in, true), ref_n).passed());
  }
}

// The tolerance against hand-computed values, and wrong outputs failing: one element moved by 2 bounds, one
// NaN (C07) and one infinity, in a row the comparison checks and in one it does not (non-finite always fails).
TEST(Attention, ToleranceAndCompareRejectWrongOutputs) {
  const auto tol = attention::tolerance(params(Variant::tiled, 1, 2, 256, 128, false), 1.0);
  // 1.25 (2^-8 |ref| + (2^-8 + 2 (128 + 8) 2^-24 L + (256 + 64) 2^-24) A) + 2^-120
  const double want = 1.25 * (0x1.0p-8 * 0.5 + (0x1.0p-8 + 272 * 0x1.0p-24 * 3.0 + 320 * 0x1.0p-24) * 0.25) +
                      0x1.0p-120;
  EXPECT_DOUBLE_EQ(tol.bound(-0.5, 0.25, 3.0), want);
  EXPECT_DOUBLE_EQ(attention::tolerance(params(Variant::tiled, 1, 2, 256, 128, false), 2.0).bound(-0.5, 0.25, 3.0),
                   2 * want - 0x1.0p-120);

  const Inputs in = attention::generate(1, 2, 96, 64, kSeed);
  const auto ref = attention::reference(in, true, attention::reference_rows(in));
  const Reference lab_ref = lab_reference(ref);
  auto o = run_host(Variant::tiled, in, true);
  ASSERT_TRUE(compare(Variant::tiled, in, true, o, lab_ref).passed());
  const std::size_t i = 100 * 64 + 5;  // head 1, row 4
  const double b = tol.bound(ref.o[i], ref.abs_pv[i], ref.logit_l1[100]);
  auto wrong = o;
  wrong[i] = float_to_bf16(static_cast<float>(ref.o[i] + 2.5 * b));
  const CheckOutcome c = compare(Variant::tiled, in, true, wrong, lab_ref);
  EXPECT_FALSE(c.passed());
  EXPECT_GE(ratio(c), 2.0);
  EXPECT_EQ(test::detail_of(c)["worst_index"], static_cast<std::int64_t>(i));
  EXPECT_EQ(note(c, "worst_bh"), 1);
  EXPECT_EQ(note(c, "worst_row"), 4);
  EXPECT_EQ(note(c, "worst_col"), 5);
  // The bound the check used there: the point's own (S = 96, D = 64), unscaled.
  const auto tol96 = attention::tolerance(params(Variant::tiled, 1, 2, 96, 64, true), 1.0);
  EXPECT_DOUBLE_EQ(real_from_json(test::detail_of(c)["worst_bound"]),
                   tol96.bound(ref.o[i], ref.abs_pv[i], ref.logit_l1[100]));
  // lab.tolerance_scale 3 takes the 2.5-bound error.
  EXPECT_TRUE(compare(Variant::tiled, in, true, wrong, lab_ref, 3.0).passed());
  for (std::uint16_t bad : {std::uint16_t{0x7fc0}, std::uint16_t{0x7f80}}) {
    auto nan = o;
    nan[i] = bad;
    const CheckOutcome cn = compare(Variant::tiled, in, true, nan, lab_ref);
    EXPECT_FALSE(cn.passed());
    EXPECT_TRUE(std::isinf(ratio(cn)));
    EXPECT_EQ(test::detail_of(cn)["not_finite"], 1);
  }
  // A non-finite element in a row the sampled reference skips still fails.
  attention::RowReference partial = ref;
  partial.rows = {0};
  partial.full = false;
  partial.o.resize(64);
  partial.abs_pv.resize(64);
  partial.logit_l1.resize(1);
  const CheckOutcome cp = compare(Variant::tiled, in, true, o, lab_reference(partial));
  EXPECT_TRUE(cp.passed());
  EXPECT_EQ(test::detail_of(cp)["compared"], 64);
  EXPECT_EQ(note(cp, "full_reference"), 0);
  auto nan = o;
  nan[i] = 0x7fc0;
  const CheckOutcome cn = compare(Variant::tiled, in, true, nan, lab_reference(partial));
  EXPECT_FALSE(cn.passed());
  EXPECT_EQ(test::detail_of(cn)["worst_index"], static_cast<std::int64_t>(i));
  EXPECT_EQ(test::detail_of(cn)["not_finite"], 1);
}

// Large points reference a deterministic sample: kSampleRows unique rows, ascending, with the first and last
// rows of the first and last heads and of their first tile; small points every row.
TEST(Attention, ReferenceRowsSampleLargePoints) {
  const Inputs big{.batch = 4, .heads = 32, .seq = 4096, .head_dim = 128};
  const auto rows = attention::reference_rows(big);
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(attention::kSampleRows));
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  EXPECT_EQ(std::set<std::int64_t>(rows.begin(), rows.end()).size(), rows.size());
  const std::int64_t total = 128 * 4096;
  for (std::int64_t r : {std::int64_t{0}, std::int64_t{attention::kBlockM - 1}, std::int64_t{attention::kBlockM},
                         std::int64_t{4095}, total - 1, total - 4096, total - attention::kBlockM})
    EXPECT_TRUE(std::binary_search(rows.begin(), rows.end(), r)) << r;
  EXPECT_GE(rows.front(), 0);
  EXPECT_LT(rows.back(), total);
  std::set<std::int64_t> heads;
  for (std::int64_t r : rows) heads.insert(r / 4096);
  EXPECT_GT(heads.size(), 64u) << "the hashed rows spread over the heads";
  Inputs small = big;
  small.batch = 1;
  small.heads = 2;
  small.seq = 256;
  EXPECT_EQ(attention::reference_rows(small).size(), 512u);
}

// The sampled reference of a point too large for the full one checks the same rows a full one would.
TEST(Attention, SampledReferenceAgreesWithFull) {
  const Inputs in = attention::generate(1, 2, 200, 64, kSeed);
  const auto full = attention::reference(in, true, attention::reference_rows(in));
  const std::vector<std::int64_t> some = {0, 63, 64, 199, 200, 399};
  const auto part = attention::reference(in, true, some);
  EXPECT_FALSE(part.full);
  for (std::size_t k = 0; k < some.size(); ++k)
    for (int t = 0; t < 64; ++t) {
      EXPECT_EQ(part.o[k * 64 + t], full.o[some[k] * 64 + t]);
      EXPECT_EQ(part.abs_pv[k * 64 + t], full.abs_pv[some[k] * 64 + t]);
    }
}

// The cost model at the founding text's point B = 4, H = 32, S = 4096, D = 128: one score matrix in bf16 is
// 4 x 32 x 4096^2 x 2 = 4.29 GB (the text's "about 4.2 GB per layer"); the naive variants hold it in f32
// (8.59 GB per buffer); the tiled kernel moves only Q, K, V and O (4 x 134 MB).
TEST(Attention, CostModel) {
  const double e2 = 2.0 * 4 * 32 * 4096 * 128, p = 4.0 * 32 * 4096 * 4096;
  EXPECT_NEAR(p * 2, 4.29e9, 0.01e9);
  const auto tiled = attention::cost(params(Variant::tiled, 4, 32, 4096, 128, true));
  EXPECT_DOUBLE_EQ(tiled.bytes, 4 * e2);
  EXPECT_NEAR(tiled.bytes, 537e6, 1e6);
  EXPECT_DOUBLE_EQ(tiled.compulsory_bytes, 4 * e2);
  EXPECT_DOUBLE_EQ(tiled.flop, (4 * 128 + 5) * p / 2);
  EXPECT_DOUBLE_EQ(tiled.launches, 1);
  EXPECT_DOUBLE_EQ(tiled.host_syncs, 0);
  EXPECT_DOUBLE_EQ(tiled.peak_work_bytes, e2);
  const auto in = attention::cost(params(Variant::naive_in_place, 4, 32, 4096, 128, true));
  EXPECT_DOUBLE_EQ(in.bytes_read, 3 * e2 + 2 * 4 * p + 2 * p);
  EXPECT_DOUBLE_EQ(in.bytes_written, e2 + 2 * 4 * p + 2 * p);
  EXPECT_DOUBLE_EQ(in.launches, 4);
  EXPECT_DOUBLE_EQ(in.peak_work_bytes, 4 * p + e2 + attention::kWorkspaceBytes);
  EXPECT_DOUBLE_EQ(in.flop, tiled.flop) << "useful flop, the same for every variant";
  const auto out = attention::cost(params(Variant::naive_out_of_place, 4, 32, 4096, 128, true));
  EXPECT_DOUBLE_EQ(out.bytes - in.bytes, 2 * 4 * p) << "the separate scale pass (the fill replaces scale+mask)";
  EXPECT_DOUBLE_EQ(out.launches, 5);
  EXPECT_DOUBLE_EQ(out.peak_work_bytes - in.peak_work_bytes, 4 * p) << "the second S x S buffer";
  EXPECT_DOUBLE_EQ(attention::cost(params(Variant::naive_in_place, 4, 32, 4096, 128, true), 1 << 20).peak_work_bytes,
                   4 * p + e2 + (1 << 20));
  EXPECT_DOUBLE_EQ(attention::cost(params(Variant::tiled, 4, 32, 4096, 128, false)).flop, (4 * 128 + 5) * p);
  // The largest point of the config fits a 141 GB H200 with room: 2 x 34.4 GB + inputs.
  EXPECT_LT(attention::working_set_bytes(params(Variant::naive_out_of_place, 4, 32, 8192, 128, false)), 75e9);
}

TEST(Attention, GenerateIsReproducibleAndInRange) {
  const Inputs a = attention::generate(1, 2, 33, 64, kSeed), b = attention::generate(1, 2, 33, 64, kSeed);
  const Inputs c = attention::generate(1, 2, 33, 64, kSeed + 1);
  EXPECT_EQ(a.q, b.q);
  EXPECT_EQ(a.k, b.k);
  EXPECT_EQ(a.v, b.v);
  EXPECT_NE(a.q, c.q);
  EXPECT_NE(a.q, a.k) << "tensors draw from different streams";
  double qmax = 0, vmax = 0, zeros = 0;
  for (std::size_t i = 0; i < a.q.size(); ++i) {
    qmax = std::max({qmax, std::fabs(double(bf16_to_float(a.q[i]))), std::fabs(double(bf16_to_float(a.k[i])))});
    vmax = std::max(vmax, std::fabs(double(bf16_to_float(a.v[i]))));
    zeros += bf16_to_float(a.v[i]) == 0.0f;
  }
  EXPECT_LE(qmax, 2.0);
  EXPECT_GT(qmax, 1.9);
  EXPECT_LE(vmax, 1.0);
  EXPECT_GT(vmax, 0.95);
  EXPECT_LT(zeros, 5);
  EXPECT_THROW(attention::generate(0, 2, 33, 64, kSeed), std::invalid_argument);
}

// The lab draws the seeds drawn before the SDK (seed = splitmix64(lab seed ^ fnv1a64("attention/BxHxSxD")), the
// variant, causal and the mode left out) and generates the old inputs bit for bit at them; the reference depends on
// causal too.
TEST(Attention, InputSeedsAreThoseBeforeTheSdk) {
  auto seed = [](const Point& p, std::uint64_t lab) { return sdk()->input_seed(Args(p), lab); };
  const std::uint64_t s = splitmix64(kSeed ^ fnv1a64("attention/1x2x33x64"));
  EXPECT_EQ(seed(point("tiled", 1, 2, 33, 64, 1), kSeed), s);
  EXPECT_EQ(seed(point("naive_in_place", 1, 2, 33, 64, 0, "graph"), kSeed), s) << "variant, causal, mode share";
  EXPECT_EQ(seed(point("tiled", 4, 32, 4096, 128, 1), 3), splitmix64(3 ^ fnv1a64("attention/4x32x4096x128")));
  const auto lab = sdk()->inputs(Args(point("naive_out_of_place", 1, 2, 33, 64, 0)), kSeed);
  const Inputs want = attention::generate(1, 2, 33, 64, s);
  for (const auto& [name, t] : {std::pair{"q", &want.q}, std::pair{"k", &want.k}, std::pair{"v", &want.v}}) {
    const View& got = lab->arrays()[name];
    ASSERT_EQ(got.count, 1 * 2 * 33 * 64) << name;
    EXPECT_EQ(std::vector<std::uint16_t>(got.as<std::uint16_t>(), got.as<std::uint16_t>() + got.count), *t) << name;
  }
  // ... pinned by value: the first element of q is bf16(4 U - 2) of the counter stream of tensor 0.
  const std::uint64_t s_q = splitmix64(s ^ 0x51ed270b27ull);
  EXPECT_EQ(want.q[0],
            float_to_bf16(static_cast<float>(2.0 * (2.0 * unit_interval(splitmix64(s_q ^ splitmix64(0))) - 1.0))));
  const auto causal = sdk()->reference(Args(point("tiled", 1, 2, 33, 64, 1)), kSeed);
  const auto full = sdk()->reference(Args(point("tiled", 1, 2, 33, 64, 0)), kSeed);
  EXPECT_NE(causal->array("o"), full->array("o")) << "the reference depends on causal";
  EXPECT_EQ(causal->array("rows").size(), 66u);
}

TEST(Attention, ShapeSupport) {
  EXPECT_FALSE(attention::shape_unsupported(Args(point("tiled", 1, 2, 7, 64, 1))));
  EXPECT_TRUE(attention::shape_unsupported(Args(point("tiled", 1, 2, 7, 96, 1))));
  EXPECT_TRUE(attention::shape_unsupported(Args(point("tiled", 1, 2, 16385, 64, 1))));
  EXPECT_TRUE(attention::shape_unsupported(Args(point("tiled", 256, 256, 64, 64, 1))));
  EXPECT_THROW(attention::params_of(Args(point("tiled", 1, 2, 7, 96, 1))), std::invalid_argument);
  for (const auto& v : experiment().variants()) {
    ASSERT_TRUE(v.unsupported_fn()) << v.name();
    EXPECT_TRUE(v.unsupported_fn()(Args(point(v.name(), 1, 2, 7, 96, 1)))) << v.name();
    EXPECT_FALSE(v.unsupported_fn()(Args(point(v.name(), 1, 2, 7, 64, 1)))) << v.name();
  }
}

// configs/attention.yaml validates; its points are the tiny host set (B = 1, H = 2, S 128, 256) and the H200 set
// (B = 4, H = 32, S 512..8192), D 64 and 128, causal 0 and 1, three variants; on the host only the tiny set fits.
TEST(Attention, ConfigPointsAreTheDescribedSweep) {
  const SweepConfig config = load_config(std::string(LABRUN_SOURCE_DIR) + "/configs/attention.yaml", registry());
  const auto points = expand(config, experiment());
  std::size_t tiny = 0, big = 0;
  for (const Point& p : points) {
    const auto ap = attention::params_of(Args(p));
    // The lab's estimate (the Layout's arrays) and cost are the model's: Q, K, V + peak_work_bytes, the same bytes.
    const PointEstimate est = experiment().estimate(p);
    EXPECT_EQ(est.working_set_bytes, attention::working_set_bytes(ap)) << p.label();
    EXPECT_EQ(est.bytes, attention::cost(ap).bytes) << p.label();
    EXPECT_EQ(est.flop, attention::cost(ap).flop) << p.label();
    const Cost lab_cost = sdk()->cost(Args(p), Reference{});
    EXPECT_EQ(lab_cost.peak_work_bytes, attention::cost(ap).peak_work_bytes) << p.label();
    EXPECT_EQ(lab_cost.bytes_read, attention::cost(ap).bytes_read) << p.label();
    EXPECT_EQ(lab_cost.bytes_written, attention::cost(ap).bytes_written) << p.label();
    EXPECT_EQ(lab_cost.launches, attention::cost(ap).launches) << p.label();
    if (ap.batch == 1) {
      EXPECT_EQ(ap.heads, 2);
      EXPECT_LE(ap.seq, 256);
      EXPECT_LE(attention::working_set_bytes(ap), 4e7) << p.label() << ": under the config's lab.host.host_max_bytes";
      ++tiny;
    } else {
      EXPECT_EQ(ap.batch, 4);
      EXPECT_EQ(ap.heads, 32);
      EXPECT_GE(ap.seq, 512);
      EXPECT_LT(attention::working_set_bytes(ap), 100e9) << p.label();
      // Skipped on the host by its time estimate (src/lab/lab.cpp over_budget), not run for minutes.
      const Cost c = attention::cost(ap);
      EXPECT_GT(c.bytes / kHostEstimateBandwidth_Bps + c.flop / kHostEstimateFlopPerS, 5.0) << p.label();
      ++big;
    }
  }
  EXPECT_EQ(tiny, 2u * 2 * 2 * 4);  // seq x head_dim x causal x the four variants
  EXPECT_EQ(big, 5u * 2 * 2 * 4);
  ASSERT_TRUE(config.hypothesis.is_array());
  EXPECT_EQ(config.hypothesis.size(), 3u);
}

LabSettings quick_lab() {
  LabSettings lab = test::quick_lab();
  lab.host_max_bytes = 4e7;  // as configs/attention.yaml: the naive working sets count the 32 MiB cuBLAS workspace
  return lab;
}

// Through the lab pass on the host backend: every variant is "ok" at a small point, causal and not, with its
// cost recorded; a working set over lab.host_max_bytes is skipped.
TEST(Attention, RunPointOnHost) {
  HostBackend backend;
  for (Variant v : kVariants)
    for (int causal : {0, 1}) {
      const Json rec = run_point(point(attention::to_string(v), 1, 2, 100, 64, causal), experiment(), backend,
                                 quick_lab());
      ASSERT_EQ(rec["status"], "ok") << rec.dump();
      EXPECT_EQ(rec["correctness"]["passed"], true);
      EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], true);
      EXPECT_LE(real_from_json(rec["correctness"]["detail"]["worst_ratio"]), 1.0);
      EXPECT_EQ(real_from_json(rec["correctness"]["detail"]["full_reference"]), 1);
      EXPECT_EQ(real_from_json(rec["cost"]["compulsory_bytes"]), 4 * 2.0 * 2 * 100 * 64);
    }
  LabSettings lab = quick_lab();
  lab.host_max_bytes = 1e6;
  const Json big = run_point(point("tiled", 1, 2, 4096, 64, 1), experiment(), backend, lab);
  EXPECT_EQ(big["status"], "skipped") << big.dump();
}

}  // namespace
}  // namespace labrun
