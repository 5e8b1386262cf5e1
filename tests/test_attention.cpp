// Tests of the attention experiment on the host: the float64 reference against cases with a known answer, every
// host variant (naive out of place, naive in place, tiled online softmax) against the reference on small shapes,
// causal and not, with S a multiple of the tile and not (S = 1, 7, 63, 64, 65, 130, 256), the tolerance (that it
// is not trivially loose, and that wrong outputs and NaN fail: case C07), the sampled reference rows of large
// points, the cost model's numbers (the founding text's score-matrix traffic, the peak work memory), the input
// generator, the config's points, and run_point on the host backend.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "attention/attention.hpp"
#include "config.hpp"
#include <labrun/dtype.hpp>
#include "host_backend.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sweep.hpp"

namespace labrun {
namespace {

using attention::Inputs;
using attention::Variant;

constexpr std::uint64_t kSeed = 20261129;
const Variant kVariants[] = {Variant::naive_out_of_place, Variant::naive_in_place, Variant::tiled};

// A registry with only this experiment (independent of experiments.def).
const Registry& registry() {
  static const Registry r = [] {
    Registry reg;
    attention::register_experiment(reg);
    return reg;
  }();
  return r;
}
const Experiment& experiment() { return *registry().find("attention"); }

Point point(const std::string& variant, std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d,
            std::int64_t causal, const std::string& mode = "eager") {
  return Point{"attention",
               variant,
               {{"seq", s},
                {"batch", b},
                {"heads", h},
                {"head_dim", d},
                {"causal", causal},
                {"mode", mode},
                {"l2", std::string("hot")}}};
}

attention::Params params(Variant v, std::int64_t b, std::int64_t h, std::int64_t s, int d, bool causal) {
  return attention::Params{v, b, h, s, d, causal, "eager"};
}

std::vector<std::uint16_t> run_host(Variant v, const Inputs& in, bool causal) {
  std::vector<std::uint16_t> o(in.q.size(), 0xffff);
  attention::host_run(v, in, causal, o.data());
  return o;
}

Check check_host(Variant v, const Inputs& in, bool causal) {
  const auto ref = attention::reference(in, causal, attention::reference_rows(in));
  const auto o = run_host(v, in, causal);
  return attention::compare(in, o.data(), ref,
                            attention::tolerance(params(v, in.batch, in.heads, in.seq, in.head_dim, causal), 1.0));
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
          const Check c = check_host(v, in, causal);
          EXPECT_TRUE(c.passed) << attention::to_string(v) << " S=" << s << " D=" << d << " causal=" << causal << " "
                                << c.detail.dump();
          EXPECT_TRUE(c.detail["full_reference"].get<bool>());
          if (s >= 64) EXPECT_GT(c.value, 1e-3) << "the bound should not be vacuous";
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
  const auto ref_c = attention::reference(in, true, attention::reference_rows(in));
  const auto ref_n = attention::reference(in, false, attention::reference_rows(in));
  const auto tol = attention::tolerance(params(Variant::tiled, 1, 2, 130, 64, true), 1.0);
  for (Variant v : kVariants) {
    EXPECT_FALSE(attention::compare(in, run_host(v, in, false).data(), ref_c, tol).passed);
    EXPECT_FALSE(attention::compare(in, run_host(v, in, true).data(), ref_n, tol).passed);
  }
}

// The tolerance against hand-computed values, and wrong outputs failing: one element moved by 2 bounds, one
// NaN (C07) and one infinity, in a row the comparison checks and in one it does not (non-finite always fails).
TEST(Attention, ToleranceAndCompareRejectWrongOutputs) {
  const auto tol = attention::tolerance(params(Variant::tiled, 1, 2, 256, 128, false), 1.0);
  // 1.25 (2^-8 |ref| + (2^-8 + 2 (128 + 8) 2^-24 L + (256 + 64) 2^-24) A) + 2^-120
  const double want = 1.25 * (0x1.0p-8 * 0.5 + (0x1.0p-8 + 272 * 0x1.0p-24 * 3.0 + 320 * 0x1.0p-24) * 0.25) + 0x1.0p-120;
  EXPECT_DOUBLE_EQ(tol.bound(-0.5, 0.25, 3.0), want);
  EXPECT_DOUBLE_EQ(attention::tolerance(params(Variant::tiled, 1, 2, 256, 128, false), 2.0).bound(-0.5, 0.25, 3.0),
                   2 * want - 0x1.0p-120);

  const Inputs in = attention::generate(1, 2, 96, 64, kSeed);
  const auto ref = attention::reference(in, true, attention::reference_rows(in));
  auto o = run_host(Variant::tiled, in, true);
  ASSERT_TRUE(attention::compare(in, o.data(), ref, tol).passed);
  const std::size_t i = 100 * 64 + 5;  // head 1, row 4
  const double b = tol.bound(ref.o[i], ref.abs_pv[i], ref.logit_l1[100]);
  auto wrong = o;
  wrong[i] = float_to_bf16(static_cast<float>(ref.o[i] + 2.5 * b));
  const Check c = attention::compare(in, wrong.data(), ref, tol);
  EXPECT_FALSE(c.passed);
  EXPECT_GE(c.value, 2.0);
  EXPECT_EQ(c.detail["worst"]["bh"], 1);
  EXPECT_EQ(c.detail["worst"]["row"], 4);
  EXPECT_EQ(c.detail["worst"]["col"], 5);
  for (std::uint16_t bad : {std::uint16_t{0x7fc0}, std::uint16_t{0x7f80}}) {
    auto nan = o;
    nan[i] = bad;
    const Check cn = attention::compare(in, nan.data(), ref, tol);
    EXPECT_FALSE(cn.passed);
    EXPECT_TRUE(std::isinf(cn.value));
    EXPECT_EQ(cn.detail["non_finite"], 1);
  }
  // A non-finite element in a row the sampled reference skips still fails.
  attention::Reference partial = ref;
  partial.rows = {0};
  partial.o.resize(64);
  partial.abs_pv.resize(64);
  partial.logit_l1.resize(1);
  EXPECT_TRUE(attention::compare(in, o.data(), partial, tol).passed);
  auto nan = o;
  nan[i] = 0x7fc0;
  EXPECT_FALSE(attention::compare(in, nan.data(), partial, tol).passed);
}

// Large points reference a deterministic sample: kSampleRows unique rows, ascending, with the first and last
// rows of the first and last heads and of their first tile; small points every row.
TEST(Attention, ReferenceRowsSampleLargePoints) {
  Inputs big;
  big.batch = 4;
  big.heads = 32;
  big.seq = 4096;
  big.head_dim = 128;
  const auto rows = attention::reference_rows(big);
  EXPECT_EQ(rows.size(), static_cast<std::size_t>(attention::kSampleRows));
  EXPECT_TRUE(std::is_sorted(rows.begin(), rows.end()));
  EXPECT_EQ(std::set<std::int64_t>(rows.begin(), rows.end()).size(), rows.size());
  const std::int64_t total = 128 * 4096;
  for (std::int64_t r : {std::int64_t{0}, std::int64_t{63}, std::int64_t{64}, std::int64_t{4095}, total - 1,
                         total - 4096, total - 64})
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
  attention::InputCache cache;
  const auto p = params(Variant::tiled, 1, 2, 33, 64, true);
  auto i1 = cache.inputs(p, kSeed);
  EXPECT_EQ(cache.inputs(params(Variant::naive_in_place, 1, 2, 33, 64, false), kSeed), i1) << "variant/causal share";
  auto r1 = cache.reference_for(p, kSeed);
  EXPECT_TRUE(r1->causal);
  EXPECT_FALSE(cache.reference_for(params(Variant::tiled, 1, 2, 33, 64, false), kSeed)->causal);
  EXPECT_NE(cache.inputs(params(Variant::tiled, 1, 2, 34, 64, true), kSeed), i1);
}

TEST(Attention, ShapeSupport) {
  EXPECT_FALSE(attention::shape_unsupported(point("tiled", 1, 2, 7, 64, 1)));
  EXPECT_TRUE(attention::shape_unsupported(point("tiled", 1, 2, 7, 96, 1)));
  EXPECT_TRUE(attention::shape_unsupported(point("tiled", 1, 2, 16385, 64, 1)));
  EXPECT_TRUE(attention::shape_unsupported(point("tiled", 256, 256, 64, 64, 1)));
  EXPECT_THROW(attention::params_of(point("tiled", 1, 2, 7, 96, 1)), std::invalid_argument);
}

// configs/attention.yaml validates; its points are the tiny host set (B = 1, H = 2, S 128, 256) and the H200 set
// (B = 4, H = 32, S 512..8192), D 64 and 128, causal 0 and 1, three variants; on the host only the tiny set fits.
TEST(Attention, ConfigPointsAreTheDescribedSweep) {
  const SweepConfig config = load_config(std::string(LABRUN_SOURCE_DIR) + "/configs/attention.yaml", registry());
  const auto points = expand(config, experiment());
  std::size_t tiny = 0, big = 0;
  for (const Point& p : points) {
    const auto ap = attention::params_of(p);
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
      // Skipped on the host by its time estimate (src/lab.cpp over_budget), not run for minutes.
      const Cost c = attention::cost(ap);
      EXPECT_GT(c.bytes / kHostEstimateBandwidth_Bps + c.flop / kHostEstimateFlopPerS, 5.0) << p.label();
      ++big;
    }
  }
  EXPECT_EQ(tiny, 2u * 2 * 2 * 3);
  EXPECT_EQ(big, 5u * 2 * 2 * 3);
  ASSERT_TRUE(config.hypothesis.is_array());
  EXPECT_EQ(config.hypothesis.size(), 2u);
}

LabSettings quick_lab() {
  LabSettings lab;
  lab.warmup_iterations = 1;
  lab.warmup_time_s = 0;
  lab.min_samples = 1;
  lab.max_samples = 2;
  lab.max_time_s = 0;
  lab.min_sample_time_s = 0;
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
      EXPECT_LE(real_from_json(rec["correctness"]["value"]), 1.0);
      EXPECT_EQ(real_from_json(rec["cost"]["compulsory_bytes"]), 4 * 2.0 * 2 * 100 * 64);
    }
  LabSettings lab = quick_lab();
  lab.host_max_bytes = 1e6;
  const Json big = run_point(point("tiled", 1, 2, 4096, 64, 1), experiment(), backend, lab);
  EXPECT_EQ(big["status"], "skipped") << big.dump();
}

}  // namespace
}  // namespace labrun
