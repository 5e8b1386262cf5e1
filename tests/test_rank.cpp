// Tests of the rank experiment on the host: the reference against hand-computed ranks, every host variant
// against the reference (all-false and all-true masks, every density of configs/rank.yaml, n = 0, n = 1, n not a
// multiple of 16, several generator blocks), the exact chunked comparison and its poison, the pre-SDK seeds and
// masks, the cost model's numbers, the estimate, configs/rank.yaml, and run_point on the host backend.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include <labrun/counter_rng.hpp>

#include "config.hpp"
#include "host_backend.hpp"
#include "lab.hpp"
#include "point_test.hpp"
#include "rank/rank.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sdk_registry.hpp"
#include "sweep.hpp"
#include "cost_expect.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using rank::Variant;

constexpr std::uint64_t kSeed = 20261129;
const Variant kVariants[] = {Variant::indexed_assign, Variant::scan_select, Variant::fused};
// The densities of configs/rank.yaml.
const double kDensities[] = {0, 0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 1};

const RegisteredExperiment& experiment() { return *test::builtin().find("rank"); }
std::shared_ptr<SdkExperiment> sdk() { return test::builtin_sdk("rank"); }

std::vector<std::uint8_t> generate(std::int64_t n, double density, std::uint64_t seed) {
  std::vector<std::uint8_t> m(static_cast<std::size_t>(n));
  rank::generate(m.data(), n, density, seed);
  return m;
}

std::int64_t n_of(const std::vector<std::uint8_t>& m) { return static_cast<std::int64_t>(m.size()); }

std::vector<std::int64_t> run_host(Variant v, const std::vector<std::uint8_t>& m) {
  std::vector<std::int64_t> out(m.size(), rank::kPoison), s(m.size(), 0);
  rank::HostScratch scratch;
  rank::host_run(v, m.data(), n_of(m), out.data(), s.data(), scratch);
  return out;
}

Point point(const std::string& variant, std::int64_t n, double density, const std::string& mode = "eager") {
  return test::hot_point("rank", variant, {{"n", n}, {"density", density}}, mode);
}

// The experiment's own check of `out` against the mask, as the lab runs it (the reference computed from the mask).
CheckOutcome check(const std::vector<std::uint8_t>& mask, std::vector<std::int64_t>& out, double density = 0.5) {
  const Point p = point("fused", n_of(mask), density);
  const Args args(p);
  Arrays in, outs;
  in.put("mask", View{const_cast<std::uint8_t*>(mask.data()), n_of(mask), Elem::raw<std::uint8_t>()});
  outs.put("out", View{out.data(), n_of(mask), Elem::raw<std::int64_t>()});
  Reference ref;
  sdk()->def().reference_fn()(args, in, ref);
  return sdk()->compare(
      args, [&]() -> const Arrays& { return in; }, outs, ref, 1.0);
}

using test::quick_lab;

Json run(const Point& p, const LabSettings& lab = quick_lab()) { return test::run_on_host(p, experiment(), lab); }

// mask 1 0 1 1 0 0 1 -> ranks 0 -1 1 2 -1 -1 3.
TEST(Rank, HandComputedReference) {
  auto ref = [](std::vector<std::uint8_t> m) { return rank::reference(m.data(), n_of(m)); };
  EXPECT_EQ(ref({1, 0, 1, 1, 0, 0, 1}), (std::vector<std::int64_t>{0, -1, 1, 2, -1, -1, 3}));
  EXPECT_EQ(ref({}), std::vector<std::int64_t>{});
  EXPECT_EQ(ref({0}), std::vector<std::int64_t>{-1});
  EXPECT_EQ(ref({1}), std::vector<std::int64_t>{0});
  EXPECT_EQ(ref({0, 0, 0}), (std::vector<std::int64_t>{-1, -1, -1}));
  EXPECT_EQ(ref({1, 1, 1}), (std::vector<std::int64_t>{0, 1, 2}));
}

// Every host variant gives exactly the hand-computed ranks, and the check passes with value 0.
TEST(Rank, HandComputedHostVariants) {
  const std::vector<std::uint8_t> m = {1, 0, 1, 1, 0, 0, 1};
  for (Variant v : kVariants) {
    auto out = run_host(v, m);
    EXPECT_EQ(out, (std::vector<std::int64_t>{0, -1, 1, 2, -1, -1, 3})) << rank::to_string(v);
    const CheckOutcome c = check(m, out);
    EXPECT_TRUE(c.passed()) << rank::to_string(v) << test::detail_of(c).dump();
    EXPECT_EQ(c.value(), 0.0);
    EXPECT_EQ(test::detail_of(c)["selected"], 4.0);
  }
}

// Every host variant equals the reference bit for bit: every density of the config (0 = all false, 1 = all true)
// at sizes 0, 1, 15, 16, 17 (not multiples of 16 included), 4097, and 3 * 2^16 + 5 (several generator blocks).
TEST(Rank, HostVariantsEqualReference) {
  for (std::int64_t n : {0, 1, 15, 16, 17, 4097, 3 * 65536 + 5})
    for (double density : kDensities) {
      const auto m = generate(n, density, kSeed);
      const auto ref = rank::reference(m.data(), n);
      for (Variant v : kVariants) {
        SCOPED_TRACE(std::string(rank::to_string(v)) + " n=" + std::to_string(n) +
                     " density=" + std::to_string(density));
        auto out = run_host(v, m);
        EXPECT_EQ(out, ref);
        const CheckOutcome c = check(m, out, density);
        EXPECT_TRUE(c.passed());
        EXPECT_EQ(c.value(), 0.0);
        EXPECT_EQ(c.tolerance(), 0.0);
      }
    }
}

// All-false gives -1 everywhere, all-true gives 0 .. n-1, whatever the seed.
TEST(Rank, AllFalseAndAllTrue) {
  const auto none = generate(100003, 0.0, kSeed), all = generate(100003, 1.0, kSeed);
  for (Variant v : kVariants) {
    const auto a = run_host(v, none), b = run_host(v, all);
    for (std::int64_t i = 0; i < 100003; ++i) {
      ASSERT_EQ(a[static_cast<std::size_t>(i)], -1) << rank::to_string(v) << " at " << i;
      ASSERT_EQ(b[static_cast<std::size_t>(i)], i) << rank::to_string(v) << " at " << i;
    }
  }
}

// The comparison is exact: one element off by one is a mismatch, reported with its index, expected and got
// values; the poison fails at every element (integers: no tolerance).
TEST(Rank, CompareIsExactAndReportsTheFirstMismatch) {
  const std::int64_t n = 2 * 65536 + 100;
  const auto m = generate(n, 0.5, kSeed);
  auto out = rank::reference(m.data(), n);
  out[70000] += 1;
  out[90000] = rank::kPoison;
  const CheckOutcome c = check(m, out);
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(c.tolerance(), 0.0);
  EXPECT_EQ(test::detail_of(c)["kind"], "exact");
  EXPECT_EQ(test::detail_of(c)["mismatches"], 2);
  EXPECT_EQ(test::detail_of(c)["compared"], n);
  EXPECT_EQ(test::detail_of(c)["worst_index"], 70000);
  EXPECT_EQ(c.value(), c.reference() + 1);  // got = expected + 1, as integers
  EXPECT_EQ(c.reference(), static_cast<double>(rank::reference(m.data(), n)[70000]));

  std::vector<std::int64_t> poisoned(static_cast<std::size_t>(n), rank::kPoison);
  const CheckOutcome p = check(m, poisoned);
  EXPECT_FALSE(p.passed());
  EXPECT_EQ(test::detail_of(p)["mismatches"], n);
  EXPECT_EQ(test::detail_of(p)["worst_index"], 0);
}

// The output is poisoned with 0x5a bytes, not the default 0xff: all-ones is -1, the right value wherever the mask
// is 0, so an all-false point whose variant wrote nothing would pass under it. Under 0x5a it fails everywhere.
// The output is chunked (read back through exact_chunks only).
TEST(Rank, OutputPoisonIsNotMinusOne) {
  const Point p = point("fused", 1000, 0.0);
  const Layout l = sdk()->layout(Args(p));
  ASSERT_EQ(l.entries()[1].name, "out");
  EXPECT_EQ(l.entries()[1].poison, rank::kPoisonByte);
  EXPECT_TRUE(l.entries()[1].chunked);
  HostArrays outs(l, Role::output, true);
  outs.poison();
  const auto* o = outs.arrays()["out"].as<std::int64_t>();
  std::vector<std::int64_t> unwritten(o, o + 1000);
  EXPECT_EQ(unwritten[0], rank::kPoison);
  const auto none = generate(1000, 0.0, kSeed);
  EXPECT_FALSE(check(none, unwritten, 0.0).passed());
  std::vector<std::int64_t> minus_one(1000, -1);  // what a 0xff poison would leave: right at density 0
  EXPECT_TRUE(check(none, minus_one, 0.0).passed());
}

// reference_slice over consecutive slices equals the whole reference (the check computes it chunk by chunk).
TEST(Rank, ReferenceSlicesMatchTheWhole) {
  const std::int64_t n = 5 * 65536 + 7;
  const auto m = generate(n, 0.3, kSeed);
  const auto whole = rank::reference(m.data(), n);
  std::vector<std::int64_t> parts(static_cast<std::size_t>(n));
  std::int64_t before = 0;
  for (std::int64_t begin = 0; begin < n; begin += 77777)
    before += rank::reference_slice(m.data(), begin, std::min<std::int64_t>(77777, n - begin), before,
                                    parts.data() + begin);
  EXPECT_EQ(parts, whole);
  std::int64_t ones = 0;
  for (auto b : m) ones += b;
  EXPECT_EQ(before, ones);
}

// The inputs are those drawn before the SDK port: the seed text is the old input key ("rank/<n>/<density %.17g>"),
// the seed at (1e6, 0.5) and lab seed 20261129 is the one the old code drew, and the masks are bit-identical to the
// old generator's (FNV-1a of the mask bytes and the selected count, recorded from the pre-SDK rank::generate).
TEST(Rank, InputSeedsAreThoseBeforeTheSdk) {
  EXPECT_EQ(sdk()->input_seed(Args(point("fused", 1000000, 0.5)), kSeed), 8556712459546766724ull);
  EXPECT_EQ(sdk()->input_seed(Args(point("indexed_assign", 1000000, 0.5, "graph")), kSeed),
            splitmix64(kSeed ^ fnv1a64("rank/1000000/0.5")));
  EXPECT_EQ(rank::seed_text(100000, 0.001), "rank/100000/0.001");
  EXPECT_NE(sdk()->input_seed(Args(point("fused", 1000, 0.5)), kSeed),
            sdk()->input_seed(Args(point("fused", 1001, 0.5)), kSeed));
  EXPECT_NE(sdk()->input_seed(Args(point("fused", 1000, 0.5)), kSeed),
            sdk()->input_seed(Args(point("fused", 1000, 0.25)), kSeed));
  struct Pinned {
    std::int64_t n;
    double density;
    std::uint64_t seed;
    std::int64_t selected;
    std::uint64_t fnv;
  };
  for (const Pinned& q :
       {Pinned{100003, 0.3, 20261129, 30116, 0x94868bb2e63735f1ull},
        Pinned{3 * 65536 + 5, 0.001, 7, 200, 0x3304eae250cf9675ull}, Pinned{1000, 1.0, 1, 1000, 0xd8e406b8f018c8adull},
        Pinned{4097, 0.5, 99, 2071, 0x029a1e4137eed9b4ull}}) {
    std::vector<std::uint8_t> m(static_cast<std::size_t>(q.n));
    EXPECT_EQ(rank::generate(m.data(), q.n, q.density, q.seed), q.selected) << q.n;
    std::uint64_t h = 14695981039346656037ull;
    for (auto b : m) {
      h ^= b;
      h *= 1099511628211ull;
    }
    EXPECT_EQ(h, q.fnv) << q.n;
  }
  // The lab's inputs are the generator's at the point's seed.
  const Point p = point("scan_select", 4097, 0.5);
  const auto in = sdk()->inputs(Args(p), kSeed);
  EXPECT_EQ(std::vector<std::uint8_t>(in->arrays()["mask"].as<std::uint8_t>(),
                                      in->arrays()["mask"].as<std::uint8_t>() + 4097),
            generate(4097, 0.5, sdk()->input_seed(Args(p), kSeed)));
}

// The generator is a pure function of (n, density, seed), its bytes are 0 or 1, and the selected fraction at
// n = 1e6 is within 0.003 of the density (6.5 binomial sigma at 0.3).
TEST(Rank, GenerateIsReproducibleAndHasTheDensity) {
  const auto a = generate(1000000, 0.3, kSeed), b = generate(1000000, 0.3, kSeed),
             c = generate(1000000, 0.3, kSeed + 1);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  std::int64_t ones = 0;
  for (auto m : a) {
    ASSERT_LE(m, 1);
    ones += m;
  }
  EXPECT_NEAR(static_cast<double>(ones) / 1e6, 0.3, 0.003);
  EXPECT_THROW(rank::generate(nullptr, -1, 0.5, kSeed), std::invalid_argument);
}

// The cost model's numbers at n = 1000, c = 300 (docs/experiments/rank.md), and the SDK's cost takes c from the
// reference's "selected" when known.
TEST(Rank, CostModel) {
  const Cost ia = rank::cost(Variant::indexed_assign, 1000, 300);
  test::expect_cost(ia, {.bytes_read = 1000 + 1000 + 16 * 300,
                         .bytes_written = 8 * 1000 + 24 * 300,
                         .bytes = 2000 + 4800 + 8000 + 7200,
                         .compulsory_bytes = 9000,
                         .flop = 0,
                         .launches = 7,
                         .host_syncs = 1,
                         .peak_work_bytes = 8000 + 16 * 300});
  test::expect_cost(rank::cost(Variant::scan_select, 1000, 300), {.bytes_read = 10000,
                                                                  .bytes_written = 16000,
                                                                  .bytes = 26000,
                                                                  .compulsory_bytes = 9000,
                                                                  .flop = 0,
                                                                  .launches = 3,
                                                                  .host_syncs = 0});
  const Cost f = rank::cost(Variant::fused, 1000, 300);
  test::expect_cost(f, {.bytes_read = 1000, .bytes_written = 8000, .flop = 0, .launches = 2, .host_syncs = 0});
  EXPECT_EQ(f.bytes, f.compulsory_bytes);
  // n = 0: nothing moves.
  EXPECT_EQ(rank::cost(Variant::scan_select, 0, 0).bytes, 0);
  Reference r;
  r.set("selected", 300);
  EXPECT_EQ(sdk()->cost(Args(point("indexed_assign", 1000, 0.5)), r).bytes, ia.bytes);
  EXPECT_EQ(sdk()->cost(Args(point("indexed_assign", 1000, 0.5)), Reference{}).bytes,
            rank::cost(Variant::indexed_assign, 1000, 500).bytes);
}

// The estimate: working set mask + out (+ the scan, + arange and indices at density x n) and the model's bytes.
TEST(Rank, EstimateIsTheWorkingSet) {
  const PointEstimate ia = experiment().estimate(point("indexed_assign", 1000, 0.5));
  EXPECT_EQ(ia.working_set_bytes, 9000 + 16 * 500);
  EXPECT_EQ(ia.bytes, rank::cost(Variant::indexed_assign, 1000, 500).bytes);
  EXPECT_EQ(ia.flop, 0);
  EXPECT_EQ(experiment().estimate(point("scan_select", 1000, 0.5)).working_set_bytes, 17000);
  EXPECT_EQ(experiment().estimate(point("fused", 1000, 0.5)).working_set_bytes, 9000);
  // density x n truncated, as before the port.
  EXPECT_EQ(experiment().estimate(point("indexed_assign", 1001, 0.001)).working_set_bytes, 9009 + 16 * 1);
}

// Every point of configs/rank.yaml validates: the config loads, expands to the documented 198 points (5 decades
// x 8 densities x 2 modes x 3 variants, n = 1e9 at density 0.5 only), and each point's axes parse and estimate;
// the experiment's shipped hypotheses are valid config YAML too.
TEST(Rank, ConfigValidates) {
  const auto [c, points] = test::shipped("rank");
  EXPECT_EQ(c.lab.processes, 3);
  EXPECT_EQ(c.lab.interleave, 6);
  EXPECT_EQ(points.size(), 198u);
  int at_1e9 = 0;
  for (const Point& p : points) {
    const std::int64_t n = p.integer("n");
    EXPECT_GE(n, 100000);
    EXPECT_LE(n, 1000000000);
    if (n == 1000000000) {
      ++at_1e9;
      EXPECT_EQ(p.real("density"), 0.5);
    }
    EXPECT_NO_THROW(rank::parse_variant(p.variant));
    const PointEstimate e = experiment().estimate(p);
    EXPECT_GE(e.working_set_bytes, 9.0 * static_cast<double>(n));
  }
  EXPECT_EQ(at_1e9, 6);
  ASSERT_TRUE(c.hypothesis.is_array());
  EXPECT_EQ(c.hypothesis.size(), 2u);
  EXPECT_NO_THROW(
      parse_config("experiment: rank\nhypothesis:" + experiment().def->hypotheses_yaml(), "shipped", test::builtin()));
}

// Through the lab pass on the host backend: every variant is ok at small points (all-false, all-true, a tail),
// with correctness value 0 and tolerance 0; graph mode is not_supported there.
TEST(Rank, RunPointOnHostIsOk) {
  for (const char* v : {"indexed_assign", "scan_select", "fused"})
    for (auto [n, density] :
         {std::pair<std::int64_t, double>{0, 0.5}, {1, 1.0}, {1000, 0.0}, {1000, 1.0}, {4097, 0.5}}) {
      SCOPED_TRACE(std::string(v) + " n=" + std::to_string(n) + " density=" + std::to_string(density));
      const Json rec = run(point(v, n, density));
      EXPECT_EQ(rec["status"], "ok") << rec.dump();
      ASSERT_TRUE(rec.contains("correctness"));
      EXPECT_EQ(rec["correctness"]["passed"], true);
      EXPECT_EQ(real_from_json(rec["correctness"]["value"]), 0.0);
      EXPECT_EQ(real_from_json(rec["correctness"]["tolerance"]), 0.0);
      EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], true);
      EXPECT_EQ(rec["correctness"]["detail"]["mismatches"], 0);
    }
  const Json graph = run(point("fused", 1000, 0.5, "graph"));
  EXPECT_EQ(graph["status"], "not_supported");
}

// The default lab.host_max_bytes (32 MB) runs n = 1e6 and skips n = 1e7 (scan_select: 17 bytes per element).
TEST(Rank, HostMaxBytesSkipsLargePoints) {
  LabSettings lab = quick_lab();
  const Json big = run(point("scan_select", 10000000, 0.5), lab);
  EXPECT_EQ(big["status"], "skipped");
  EXPECT_NE(big["reason"].get<std::string>().find("host_max_bytes"), std::string::npos) << big["reason"];
  lab.host_max_bytes = 16999;
  EXPECT_EQ(run(point("scan_select", 1000, 0.5), lab)["status"], "skipped");
  lab.host_max_bytes = 17000;
  EXPECT_EQ(run(point("scan_select", 1000, 0.5), lab)["status"], "ok");
}

}  // namespace
}  // namespace labrun
