// Tests of the kv_cache experiment on the host: the value generator (range, never zero or NaN, reproducible), the
// inputs' placement (prefill and token table carry their final-cache bits), both host variants' final cache equal
// to the reference bit for bit over dtypes, odd and 16-byte token rows, n0 = 0 and n0 = n1 (case C04), the exact
// check (a poisoned or flipped element fails, NaN never passes: C07), the cost model's formulas against the
// founding text's (old read + new write = 2 · bytes_per_token · (n1² − n0²)/2 exactly, for many (n0, n1)), every
// point of configs/kv_cache.yaml, the input seeds drawn before the SDK, and point dispositions through run_point on
// the host backend. kv_cache is an SDK experiment: its check is Compare::exact of the output "cache", so the
// comparisons here are CheckResults of the registered check, on outputs poisoned as the lab poisons them.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <labrun/counter_rng.hpp>

#include "config.hpp"
#include "host_backend.hpp"
#include "kv_cache/kv_cache.hpp"
#include "kv_cache_test.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sdk_registry.hpp"
#include "sweep.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using kv_cache::Format;
using kv_cache::Params;
using kv_cache::Variant;

constexpr std::uint64_t kSeed = 20261207;
const Variant kVariants[] = {Variant::concat, Variant::preallocated};
const DType kDTypes[] = {DType::bf16, DType::f16, DType::f32};

const RegisteredExperiment& experiment() { return *test::builtin().find("kv_cache"); }

std::shared_ptr<SdkExperiment> sdk() { return test::builtin_sdk("kv_cache"); }

/// Raw storage of `count` elements of `t` (one spare word: a valid pointer at 0), filled with `fill` words.
struct Buffer {
  std::int64_t count = 0;
  DType dtype = DType::bf16;
  std::vector<std::uint64_t> words;
  Buffer(std::int64_t n, DType t, std::uint64_t fill = 0)
      : count(n), dtype(t), words((static_cast<std::size_t>(n) * dtype_bytes(t) + 7) / 8 + 1, fill) {}
  View view() const { return View{const_cast<std::uint64_t*>(words.data()), count, Elem::of(dtype)}; }
  void* data() { return words.data(); }
  std::size_t bytes() const { return static_cast<std::size_t>(count) * dtype_bytes(dtype); }
};

/// A point's inputs, from kv_cache::generate.
struct Inputs {
  Buffer prefill, tokens;
};
Inputs generate(const Params& p, std::uint64_t seed) {
  Inputs in{Buffer(p.rows() * p.n0 * p.head_dim, p.dtype), Buffer(p.steps() * p.token_elements(), p.dtype)};
  kv_cache::generate(p, in.prefill.view(), in.tokens.view(), seed);
  return in;
}

/// A variant's outputs: the cache and concat's second buffer, poisoned as the lab poisons them (0xff bytes).
struct Outputs {
  Buffer cache, other;
  explicit Outputs(const Params& p)
      : cache(p.rows() * p.n1 * p.head_dim, p.dtype, ~std::uint64_t{0}),
        other(p.rows() * p.n1 * p.head_dim, p.dtype, ~std::uint64_t{0}) {}
};

/// One host iteration into `out`.
void run_host(const Params& p, const Inputs& in, Outputs& out) {
  kv_cache::host_run(p, in.prefill.words.data(), in.tokens.words.data(), out.cache.data(), out.other.data());
}

Point point_of(const Params& p) {
  return test::kv_cache_point(kv_cache::to_string(p.variant), p.n0, p.n1, to_string(p.dtype), p.mode, p.layers,
                              p.kv_heads, p.head_dim, p.batch);
}

/// The registered check (ExperimentDef::check) of `out` for the point of `p` with inputs `in`: its one comparison.
CheckResult compare(const Params& p, const Inputs& in, const Outputs& out) {
  const Point pt = point_of(p);
  const Args args(pt);
  Arrays ins, outs;
  ins.put("prefill", in.prefill.view());
  ins.put("tokens", in.tokens.view());
  outs.put("cache", out.cache.view());
  if (p.variant == Variant::concat) outs.put("other", out.other.view());
  const Reference r;
  Compare c(
      args, [&]() -> const Arrays& { return ins; }, outs, r, 1.0);
  sdk()->def().check_fn()(c);
  EXPECT_EQ(c.results().size(), 1u);
  return c.results().front();
}

Params shape(Variant v, std::int64_t B, std::int64_t L, std::int64_t H, std::int64_t D, std::int64_t n0,
             std::int64_t n1, DType t) {
  Params p;
  p.variant = v;
  p.batch = B;
  p.layers = L;
  p.kv_heads = H;
  p.head_dim = D;
  p.n0 = n0;
  p.n1 = n1;
  p.dtype = t;
  return p;
}

double decode(Format f, std::uint32_t bits) {
  if (f == Format::f32) return bits_float(bits);
  if (f == Format::f16) return half_to_float(static_cast<std::uint16_t>(bits));
  return bf16_to_float(static_cast<std::uint16_t>(bits));
}

Point point(const std::string& variant, std::int64_t n0, std::int64_t n1, const std::string& dtype = "bf16",
            const std::string& mode = "eager", std::int64_t layers = 2, std::int64_t D = 16) {
  return test::kv_cache_point(variant, n0, n1, dtype, mode, layers, 2, D, 1);
}

using test::quick_lab;

Json run(const Point& p, const LabSettings& lab = quick_lab()) { return test::run_on_host(p, experiment(), lab); }

// Every format: values in ±[0.25, 2), never zero, NaN or infinite; both signs and all three binades appear; the
// same (seed, i) gives the same bits, another seed other bits.
TEST(KvCacheValues, RangeSignsAndReproducibility) {
  for (Format f : {Format::f32, Format::f16, Format::bf16}) {
    std::set<int> binades;
    int negative = 0, differ = 0;
    for (std::uint64_t i = 0; i < 4000; ++i) {
      const std::uint32_t bits = kv_cache::value_bits(f, kSeed, i);
      const double v = decode(f, bits);
      ASSERT_TRUE(std::isfinite(v));
      ASSERT_GE(std::fabs(v), 0.25);
      ASSERT_LT(std::fabs(v), 2.0);
      binades.insert(static_cast<int>(std::floor(std::log2(std::fabs(v)))));
      negative += v < 0;
      EXPECT_EQ(bits, kv_cache::value_bits(f, kSeed, i));
      differ += bits != kv_cache::value_bits(f, kSeed + 1, i);
      if (f != Format::f32) {
        EXPECT_EQ(bits >> 16, 0u);
      }
    }
    EXPECT_EQ(binades, (std::set<int>{-2, -1, 0}));
    EXPECT_GT(negative, 1800);
    EXPECT_LT(negative, 2200);
    EXPECT_GT(differ, 3900);
  }
}

// The prefill's element (r, t, d) and token s's element (r, d) hold the bits of their final-cache index.
TEST(KvCacheGenerate, InputsCarryTheirFinalBits) {
  const Params p = shape(Variant::concat, 2, 1, 3, 5, 3, 7, DType::bf16);
  const Inputs in = generate(p, kSeed);
  EXPECT_EQ(in.prefill.bytes(), static_cast<std::size_t>(12 * 3 * 5 * 2));
  EXPECT_EQ(in.tokens.bytes(), static_cast<std::size_t>(4 * 12 * 5 * 2));
  const auto* pre = reinterpret_cast<const std::uint16_t*>(in.prefill.words.data());
  const auto* tok = reinterpret_cast<const std::uint16_t*>(in.tokens.words.data());
  for (std::int64_t r = 0; r < p.rows(); ++r)
    for (std::int64_t d = 0; d < 5; ++d) {
      for (std::int64_t t = 0; t < 3; ++t)
        EXPECT_EQ(pre[(r * 3 + t) * 5 + d], kv_cache::value_bits(Format::bf16, kSeed, (r * 7 + t) * 5 + d));
      for (std::int64_t s = 0; s < 4; ++s)
        EXPECT_EQ(tok[(s * p.rows() + r) * 5 + d], kv_cache::value_bits(Format::bf16, kSeed, (r * 7 + 3 + s) * 5 + d));
    }
  const View none = in.prefill.view();
  EXPECT_THROW(kv_cache::generate(shape(Variant::concat, 1, 1, 1, 4, 5, 4, DType::bf16), none, none, kSeed),
               std::invalid_argument);
  EXPECT_THROW(kv_cache::generate(shape(Variant::concat, 1, 1, 1, 4, 0, 4, DType::f64), none, none, kSeed),
               std::invalid_argument);
}

// The SDK draws the seeds kv_cache drew before it: the pre-SDK key kv_cache/B/L/H/D/n0/n1/dtype (not the variant or
// the mode), so results from then compare point for point; the registered generator fills exactly those bits.
TEST(KvCacheGenerate, InputSeedsAreThoseBeforeTheSdk) {
  EXPECT_EQ(sdk()->input_seed(Args(point("concat", 5, 21)), kSeed),
            splitmix64(kSeed ^ fnv1a64("kv_cache/1/2/2/16/5/21/bf16")));
  EXPECT_EQ(sdk()->input_seed(Args(point("preallocated", 1024, 2048, "f16", "graph", 36, 128)), 3),
            splitmix64(3 ^ fnv1a64("kv_cache/1/36/2/128/1024/2048/f16")));
  const Point p = point("preallocated", 3, 10, "f32", "graph");
  const std::uint64_t seed = sdk()->input_seed(Args(p), kSeed);
  EXPECT_EQ(seed, sdk()->input_seed(Args(point("concat", 3, 10, "f32")), kSeed));
  const auto in = sdk()->inputs(Args(p), kSeed);
  const Inputs expected = generate(kv_cache::params_of(Args(p)), seed);
  ASSERT_EQ(in->arrays()["prefill"].bytes(), expected.prefill.bytes());
  ASSERT_EQ(in->arrays()["tokens"].bytes(), expected.tokens.bytes());
  EXPECT_EQ(std::memcmp(in->arrays()["prefill"].data, expected.prefill.words.data(), expected.prefill.bytes()), 0);
  EXPECT_EQ(std::memcmp(in->arrays()["tokens"].data, expected.tokens.words.data(), expected.tokens.bytes()), 0);
}

// Both variants, every dtype, token rows of odd bytes and of 16-byte multiples, n0 = 0, n0 = n1 (case C04: nothing
// runs, nothing is written), odd and even step counts (concat's ping-pong ends in the output either way): the final
// cache equals the reference bit for bit (every slot value_bits, but slots no iteration writes: still poisoned), and
// a second iteration gives it again.
TEST(KvCacheHost, EveryVariantMatchesTheReference) {
  for (Variant v : kVariants)
    for (DType t : kDTypes)
      for (std::int64_t D : {1, 5, 8, 64})
        for (auto [n0, n1] : std::vector<std::pair<std::int64_t, std::int64_t>>{
                 {0, 0}, {0, 1}, {0, 6}, {3, 3}, {3, 4}, {3, 10}, {17, 30}}) {
          SCOPED_TRACE(std::string(kv_cache::to_string(v)) + " " + to_string(t) + " D=" + std::to_string(D) +
                       " n0=" + std::to_string(n0) + " n1=" + std::to_string(n1));
          const Params p = shape(v, 2, 3, 2, D, n0, n1, t);
          const Inputs in = generate(p, kSeed);
          Outputs out(p);
          run_host(p, in, out);
          CheckResult c = compare(p, in, out);
          EXPECT_TRUE(c.passed) << c.mismatches << " mismatches from " << c.worst_index;
          EXPECT_EQ(c.mismatches, 0);
          EXPECT_EQ(c.compared, p.rows() * n1 * D);
          EXPECT_EQ(test::note(c, "generated_tokens"), static_cast<double>(n1 - n0));
          run_host(p, in, out);
          c = compare(p, in, out);
          EXPECT_TRUE(c.passed) << c.mismatches << " mismatches from " << c.worst_index;
          // Every generated slot holds value_bits, from the seed (not only from the inputs the check reads).
          const Format f = kv_cache::format_of(t);
          for (std::int64_t r = 0; r < p.rows(); ++r)
            for (std::int64_t tk = (v == Variant::concat && n1 > n0) ? 0 : n0; tk < n1; ++tk)
              for (std::int64_t d = 0; d < D; ++d) {
                const std::uint64_t i = kv_cache::final_index(p, r, tk, d);
                const std::uint32_t got = t == DType::f32
                                              ? reinterpret_cast<const std::uint32_t*>(out.cache.words.data())[i]
                                              : reinterpret_cast<const std::uint16_t*>(out.cache.words.data())[i];
                ASSERT_EQ(got, kv_cache::value_bits(f, kSeed, i)) << "row " << r << " token " << tk << " d " << d;
              }
        }
}

// Concat's buffer after each step is torch.cat's result: the (n + 1)-token cache, contiguous at row stride
// (n + 1)·D. Checked after one step from n0 = 2 (R = 4 rows, D = 3).
TEST(KvCacheHost, ConcatStepIsCat) {
  const Params p = shape(Variant::concat, 1, 1, 2, 3, 2, 3, DType::f32);
  const Inputs in = generate(p, kSeed);
  Outputs out(p);
  run_host(p, in, out);  // one step: it writes the output cache
  const auto* a = reinterpret_cast<const std::uint32_t*>(out.cache.words.data());
  const auto* pre = reinterpret_cast<const std::uint32_t*>(in.prefill.words.data());
  const auto* tok = reinterpret_cast<const std::uint32_t*>(in.tokens.words.data());
  for (std::int64_t r = 0; r < 4; ++r)
    for (std::int64_t d = 0; d < 3; ++d) {
      EXPECT_EQ(a[(r * 3 + 0) * 3 + d], pre[(r * 2 + 0) * 3 + d]);
      EXPECT_EQ(a[(r * 3 + 1) * 3 + d], pre[(r * 2 + 1) * 3 + d]);
      EXPECT_EQ(a[(r * 3 + 2) * 3 + d], tok[r * 3 + d]);
    }
}

// Case C07: a poisoned (NaN) element, a flipped bit and a zero all fail and are located; -0.0 is not 0.0 here.
// Both variants; for preallocated also a prefill slot an iteration wrote (it must keep the poison).
TEST(KvCacheCompare, AnyDifferentBitFails) {
  for (Variant v : kVariants) {
    SCOPED_TRACE(kv_cache::to_string(v));
    const Params p = shape(v, 1, 2, 2, 8, 4, 9, DType::bf16);
    const Inputs in = generate(p, kSeed);
    Outputs out(p);
    run_host(p, in, out);
    auto* cache = reinterpret_cast<std::uint16_t*>(out.cache.data());
    ASSERT_TRUE(compare(p, in, out).passed);
    const std::int64_t i = (2 * 9 + 6) * 8 + 3;  // row 2, token 6, d 3
    const std::uint16_t keep = cache[i];
    for (std::uint16_t bad : {std::uint16_t(0xffff), std::uint16_t(keep ^ 1u), std::uint16_t(0)}) {
      cache[i] = bad;
      const CheckResult c = compare(p, in, out);
      EXPECT_FALSE(c.passed);
      EXPECT_EQ(c.mismatches, 1);
      EXPECT_EQ(c.worst_index, i);
      EXPECT_EQ(test::note(c, "first_mismatch_row"), 2.0);
      EXPECT_EQ(test::note(c, "first_mismatch_token"), 6.0);
      EXPECT_EQ(c.not_finite, bad == 0xffff ? 1 : 0);
      EXPECT_EQ(c.worst_reference, bf16_to_float(keep));
    }
    cache[i] = keep;
    EXPECT_TRUE(compare(p, in, out).passed);
    const std::int64_t j = (1 * 9 + 2) * 8 + 5;  // row 1, token 2 (< n0), d 5
    const std::uint16_t keep_j = cache[j];
    cache[j] = static_cast<std::uint16_t>(kv_cache::value_bits(Format::bf16, kSeed, static_cast<std::uint64_t>(j)) ^
                                          1u);
    const CheckResult c = compare(p, in, out);
    EXPECT_FALSE(c.passed);
    EXPECT_EQ(c.worst_index, j);
    cache[j] = keep_j;
  }
}

// The founding text's unit and example: B = 1, L = 36, H = 2, D = 128, bf16 is 36 KiB per token, and n0 = 0,
// n1 = 512 is its 4.5 GiB.
TEST(KvCacheCost, TheTextsExample) {
  const Params p = shape(Variant::concat, 1, 36, 2, 128, 0, 512, DType::bf16);
  EXPECT_EQ(kv_cache::bytes_per_token(p), 36864.0);
  EXPECT_EQ(kv_cache::text_copy_bytes(p), 4.5 * 1024 * 1024 * 1024);
  EXPECT_EQ(kv_cache::bytes_per_token(shape(Variant::concat, 3, 2, 5, 7, 0, 1, DType::f32)), 2.0 * 2 * 5 * 7 * 3 * 4);
}

// copied_tokens is the series n0 + ... + (n1 − 1); concat's old-cache read plus new-cache write is exactly
// 2 × the text's bytes_per_token · (n1² − n0²)/2 for every (n0, n1), with the token-table reads apart; the
// preallocated cache moves bytes_per_token · (n1 − n0) each way; one launch per step, no host sync.
TEST(KvCacheCost, FormulasAgreeWithTheText) {
  const std::pair<std::int64_t, std::int64_t> cases[] = {{0, 1},       {0, 512},     {1, 2},    {128, 384}, {128, 1152},
                                                         {1024, 1280}, {1024, 2048}, {7, 1000}, {999, 1001}};
  for (const auto& [n0, n1] : cases) {
    SCOPED_TRACE("n0=" + std::to_string(n0) + " n1=" + std::to_string(n1));
    std::int64_t series = 0;
    for (std::int64_t n = n0; n < n1; ++n) series += n;
    EXPECT_EQ(kv_cache::copied_tokens(n0, n1), series);
    const Params c = shape(Variant::concat, 1, 36, 2, 128, n0, n1, DType::bf16);
    const Params a = shape(Variant::preallocated, 1, 36, 2, 128, n0, n1, DType::bf16);
    const double bpt = kv_cache::bytes_per_token(c), S = static_cast<double>(n1 - n0);
    const Cost cc = kv_cache::cost(c), ca = kv_cache::cost(a);
    const double token_reads = bpt * S;
    EXPECT_EQ((cc.bytes_read - token_reads) + cc.bytes_written, 2 * kv_cache::text_copy_bytes(c));
    EXPECT_EQ(cc.bytes_read - token_reads, bpt * static_cast<double>(series));   // old caches read
    EXPECT_EQ(cc.bytes_written, bpt * static_cast<double>(series + (n1 - n0)));  // new caches written
    EXPECT_EQ(cc.bytes, 2 * kv_cache::text_copy_bytes(c) + token_reads);
    EXPECT_EQ(ca.bytes_written, bpt * S);
    EXPECT_EQ(ca.bytes_read, bpt * S);
    EXPECT_EQ(cc.compulsory_bytes, 2 * bpt * S);
    EXPECT_EQ(ca.compulsory_bytes, 2 * bpt * S);
    EXPECT_EQ(cc.launches, S);
    EXPECT_EQ(ca.launches, S);
    EXPECT_EQ(cc.host_syncs, 0.0);
    EXPECT_EQ(ca.host_syncs, 0.0);
    EXPECT_EQ(cc.flop, 0.0);
    EXPECT_EQ(cc.peak_work_bytes, 2 * bpt * static_cast<double>(n1));
    EXPECT_EQ(ca.peak_work_bytes, bpt * static_cast<double>(n1));
    // The estimate: the inputs (prefill and token table: n1 tokens) and the work buffers.
    for (const Params& q : {c, a}) {
      const PointEstimate e = experiment().estimate(
          point(kv_cache::to_string(q.variant), n0, n1, "bf16", "eager", 36, 128));
      EXPECT_EQ(e.working_set_bytes, bpt * static_cast<double>(n1) + kv_cache::cost(q).peak_work_bytes);
      EXPECT_EQ(e.bytes, kv_cache::cost(q).bytes);
    }
  }
  // Case C04: n0 = n1 is no step, no byte, no launch.
  for (Variant v : kVariants) {
    const Cost z = kv_cache::cost(shape(v, 1, 36, 2, 128, 300, 300, DType::bf16));
    EXPECT_EQ(z.bytes, 0.0);
    EXPECT_EQ(z.launches, 0.0);
    EXPECT_EQ(z.compulsory_bytes, 0.0);
  }
  EXPECT_EQ(kv_cache::cost(shape(Variant::concat, 1, 1, 1, 1, 0, 0, DType::f32)).peak_work_bytes, 32.0);
}

// Every point of configs/kv_cache.yaml: 15 (n0, n1) pairs less the 3 that shrink = 12, × 2 variants × 2 modes =
// 48, each n1 >= n0 with an estimate; 36 KiB per token throughout; four hypotheses.
TEST(KvCacheConfig, EveryPointValidates) {
  const auto [config, points] = test::shipped("kv_cache");
  EXPECT_EQ(points.size(), 48u);
  for (const Point& pt : points) {
    const Params p = kv_cache::params_of(Args(pt));
    EXPECT_GE(p.n1, p.n0);
    EXPECT_EQ(kv_cache::bytes_per_token(p), 36864.0);
    const PointEstimate e = experiment().estimate(pt);
    EXPECT_GT(e.working_set_bytes, 0);
    EXPECT_GT(e.bytes, 0);
  }
  ASSERT_TRUE(config.hypothesis.is_array());
  EXPECT_EQ(config.hypothesis.size(), 4u);
}

// Through the lab pass on the host backend: both variants ok with a passing exact check, graph not_supported on
// the host, n1 < n0 not_supported with its reason, n0 = n1 ok (C04), the config's concat too large for the host.
TEST(KvCacheRunPoint, HostStatuses) {
  for (const char* dtype : {"bf16", "f16", "f32"})
    for (Variant v : kVariants) {
      const Json rec = run(point(kv_cache::to_string(v), 5, 21, dtype));
      ASSERT_EQ(rec["status"], "ok") << rec.dump();
      EXPECT_EQ(rec["correctness"]["passed"], true);
      EXPECT_EQ(real_from_json(rec["correctness"]["value"]), 0.0);
      EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], true);
      EXPECT_EQ(real_from_json(rec["cost"]["launches"]), 16.0);
      EXPECT_EQ(run(point(kv_cache::to_string(v), 5, 21, dtype, "graph"))["status"], "not_supported");
    }
  const Json shrink = run(point("concat", 9, 4));
  EXPECT_EQ(shrink["status"], "not_supported") << shrink.dump();
  EXPECT_NE(shrink["reason"].get<std::string>().find("n1"), std::string::npos);
  const Json same = run(point("concat", 7, 7));
  EXPECT_EQ(same["status"], "ok") << same.dump();
  EXPECT_EQ(same["correctness"]["passed"], true);
  const Json big = run(point("concat", 1024, 2048, "bf16", "eager", 36, 128));
  EXPECT_EQ(big["status"], "skipped") << big.dump();
}

}  // namespace
}  // namespace labrun
