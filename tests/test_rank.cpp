// Tests of the rank experiment on the host: the reference against hand-computed ranks, every host variant
// against the reference (all-false and all-true masks, every density of configs/rank.yaml, n = 0, n = 1, n not a
// multiple of 16, several prefix blocks), the exact comparison and its detail, the cost model's numbers, the
// estimate, configs/rank.yaml, and run_point on the host backend.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "config.hpp"
#include "host_backend.hpp"
#include "lab.hpp"
#include "rank/rank.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sweep.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using rank::Inputs;
using rank::Variant;

constexpr std::uint64_t kSeed = 20261129;
const Variant kVariants[] = {Variant::indexed_assign, Variant::scan_select, Variant::fused};
// The densities of configs/rank.yaml.
const double kDensities[] = {0, 0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 1};

const Experiment& experiment() { return *test::builtin().find("rank"); }

std::vector<std::int64_t> run_host(Variant v, const Inputs& in) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(in.n), rank::kPoison);
  rank::HostScratch scratch;
  rank::host_run(v, in, out.data(), scratch);
  return out;
}

rank::Params params(Variant v, std::int64_t n, double density = 0.5) {
  rank::Params p;
  p.variant = v;
  p.n = n;
  p.density = density;
  return p;
}

Point point(const std::string& variant, std::int64_t n, double density, const std::string& mode = "eager") {
  return Point{"rank", variant, {{"n", n}, {"density", density}, {"mode", mode}, {"l2", std::string("hot")}}};
}

LabSettings quick_lab() {
  LabSettings lab;
  lab.warmup_iterations = 1;
  lab.warmup_time_s = 0;
  lab.min_samples = 1;
  lab.max_samples = 2;
  lab.max_time_s = 0;
  lab.min_sample_time_s = 0;
  return lab;
}

Json run(const Point& p, const LabSettings& lab = quick_lab()) {
  HostBackend backend;
  return run_point(p, experiment(), backend, lab);
}

// mask 1 0 1 1 0 0 1 -> ranks 0 -1 1 2 -1 -1 3.
TEST(Rank, HandComputedReference) {
  const Inputs in = rank::from_mask({1, 0, 1, 1, 0, 0, 1});
  EXPECT_EQ(in.selected, 4);
  EXPECT_EQ(rank::reference(in), (std::vector<std::int64_t>{0, -1, 1, 2, -1, -1, 3}));
  EXPECT_EQ(rank::reference(rank::from_mask({})), std::vector<std::int64_t>{});
  EXPECT_EQ(rank::reference(rank::from_mask({0})), std::vector<std::int64_t>{-1});
  EXPECT_EQ(rank::reference(rank::from_mask({1})), std::vector<std::int64_t>{0});
  EXPECT_EQ(rank::reference(rank::from_mask({0, 0, 0})), (std::vector<std::int64_t>{-1, -1, -1}));
  EXPECT_EQ(rank::reference(rank::from_mask({1, 1, 1})), (std::vector<std::int64_t>{0, 1, 2}));
  EXPECT_THROW(rank::from_mask({0, 2}), std::invalid_argument);
}

// Every host variant gives exactly the hand-computed ranks, and the check passes with value 0.
TEST(Rank, HandComputedHostVariants) {
  const Inputs in = rank::from_mask({1, 0, 1, 1, 0, 0, 1});
  for (Variant v : kVariants) {
    const auto out = run_host(v, in);
    EXPECT_EQ(out, (std::vector<std::int64_t>{0, -1, 1, 2, -1, -1, 3})) << rank::to_string(v);
    const Check c = rank::compare(in, out.data());
    EXPECT_TRUE(c.passed) << rank::to_string(v);
    EXPECT_EQ(c.value, 0.0);
  }
}

// Every host variant equals the reference bit for bit: every density of the config (0 = all false, 1 = all true)
// at sizes 0, 1, 15, 16, 17 (not multiples of 16 included), 4097, and 3 * 2^16 + 5 (several prefix blocks).
TEST(Rank, HostVariantsEqualReference) {
  for (std::int64_t n : {0, 1, 15, 16, 17, 4097, 3 * 65536 + 5})
    for (double density : kDensities) {
      const Inputs in = rank::generate(n, density, kSeed);
      const auto ref = rank::reference(in);
      for (Variant v : kVariants) {
        SCOPED_TRACE(std::string(rank::to_string(v)) + " n=" + std::to_string(n) + " density=" + std::to_string(density));
        const auto out = run_host(v, in);
        EXPECT_EQ(out, ref);
        const Check c = rank::compare(in, out.data());
        EXPECT_TRUE(c.passed);
        EXPECT_EQ(c.value, 0.0);
        EXPECT_EQ(c.tolerance, 0.0);
      }
    }
}

// All-false gives -1 everywhere, all-true gives 0 .. n-1, whatever the seed.
TEST(Rank, AllFalseAndAllTrue) {
  const Inputs none = rank::generate(100003, 0.0, kSeed), all = rank::generate(100003, 1.0, kSeed);
  EXPECT_EQ(none.selected, 0);
  EXPECT_EQ(all.selected, 100003);
  for (Variant v : kVariants) {
    const auto a = run_host(v, none), b = run_host(v, all);
    for (std::int64_t i = 0; i < 100003; ++i) {
      ASSERT_EQ(a[static_cast<std::size_t>(i)], -1) << rank::to_string(v) << " at " << i;
      ASSERT_EQ(b[static_cast<std::size_t>(i)], i) << rank::to_string(v) << " at " << i;
    }
  }
}

// The comparison is exact: one element off by one is a mismatch, reported with its index, expected and got
// values; the poison fails at every element; NaN-like garbage cannot pass (integers: no tolerance).
TEST(Rank, CompareIsExactAndReportsTheFirstMismatch) {
  const std::int64_t n = 2 * 65536 + 100;
  const Inputs in = rank::generate(n, 0.5, kSeed);
  auto out = rank::reference(in);
  out[70000] += 1;
  out[90000] = rank::kPoison;
  const Check c = rank::compare(in, out.data());
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.value, 2.0);
  EXPECT_EQ(c.abs_error, 2.0);
  EXPECT_EQ(c.reference, 0.0);
  EXPECT_EQ(c.tolerance, 0.0);
  EXPECT_EQ(c.detail["mismatches"], 2);
  EXPECT_EQ(c.detail["first_mismatch"], 70000);
  EXPECT_EQ(c.detail["expected"].get<std::int64_t>() + 1, c.detail["got"].get<std::int64_t>());
  EXPECT_EQ(c.detail["selected"], in.selected);

  const std::vector<std::int64_t> poisoned(static_cast<std::size_t>(n), rank::kPoison);
  const Check p = rank::compare(in, poisoned.data());
  EXPECT_FALSE(p.passed);
  EXPECT_EQ(p.value, static_cast<double>(n));
  EXPECT_EQ(p.detail["first_mismatch"], 0);
}

// Slices compare like the whole (the GPU check compares chunk by chunk), and misuse throws.
TEST(Rank, CompareSliceMatchesWholeAndChecksItsArguments) {
  const std::int64_t n = 5 * 65536 + 7;
  const Inputs in = rank::generate(n, 0.3, kSeed);
  auto out = rank::reference(in);
  out[3 * 65536 + 2] = 0;
  out[n - 1] = -2;
  rank::Mismatches m;
  for (std::int64_t begin = 0; begin < n; begin += 2 * 65536)
    m.merge(rank::compare_slice(in, out.data() + begin, begin, std::min<std::int64_t>(2 * 65536, n - begin)));
  const Check whole = rank::compare(in, out.data());
  EXPECT_EQ(static_cast<double>(m.count), whole.value);
  EXPECT_EQ(m.count, 2);
  EXPECT_EQ(m.first, 3 * 65536 + 2);
  EXPECT_EQ(m.got, 0);
  EXPECT_THROW(rank::compare_slice(in, out.data(), 1, 10), std::invalid_argument);
  EXPECT_THROW(rank::compare_slice(in, out.data(), 0, n + 1), std::invalid_argument);
}

// block_prefix[b] counts the ones before block b; its last entry is `selected`.
TEST(Rank, BlockPrefixCountsOnes) {
  const std::int64_t n = 4 * 65536 + 3;
  const Inputs in = rank::generate(n, 0.7, kSeed);
  ASSERT_EQ(in.block_prefix.size(), 6u);
  std::int64_t ones = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (i % rank::kPrefixBlock == 0) EXPECT_EQ(in.block_prefix[static_cast<std::size_t>(i / rank::kPrefixBlock)], ones);
    ones += in.mask[static_cast<std::size_t>(i)];
  }
  EXPECT_EQ(in.block_prefix.back(), ones);
  EXPECT_EQ(in.selected, ones);
  EXPECT_EQ(rank::generate(0, 0.5, kSeed).block_prefix, std::vector<std::int64_t>{0});
}

// The generator is a pure function of (n, density, seed), its bytes are 0 or 1, and the selected fraction at
// n = 1e6 is within 0.003 of the density (6.5 binomial sigma at 0.3).
TEST(Rank, GenerateIsReproducibleAndHasTheDensity) {
  const Inputs a = rank::generate(1000000, 0.3, kSeed), b = rank::generate(1000000, 0.3, kSeed),
               c = rank::generate(1000000, 0.3, kSeed + 1);
  EXPECT_EQ(a.mask, b.mask);
  EXPECT_NE(a.mask, c.mask);
  for (auto m : a.mask) ASSERT_LE(m, 1);
  EXPECT_NEAR(static_cast<double>(a.selected) / 1e6, 0.3, 0.003);
  EXPECT_THROW(rank::generate(-1, 0.5, kSeed), std::invalid_argument);
  // The seed depends on (n, density), not on the variant or the mode.
  rank::Params p = params(Variant::fused, 1000), q = params(Variant::indexed_assign, 1000);
  q.mode = "graph";
  EXPECT_EQ(rank::input_seed(p, kSeed), rank::input_seed(q, kSeed));
  EXPECT_NE(rank::input_seed(p, kSeed), rank::input_seed(params(Variant::fused, 1001), kSeed));
  EXPECT_NE(rank::input_seed(p, kSeed), rank::input_seed(params(Variant::fused, 1000, 0.25), kSeed));
}

// The cost model's numbers at n = 1000, c = 300 (docs/experiments/rank.md).
TEST(Rank, CostModel) {
  const Cost ia = rank::cost(params(Variant::indexed_assign, 1000), 300);
  EXPECT_EQ(ia.bytes_read, 1000 + 1000 + 16 * 300);
  EXPECT_EQ(ia.bytes_written, 8 * 1000 + 24 * 300);
  EXPECT_EQ(ia.bytes, 2000 + 4800 + 8000 + 7200);
  EXPECT_EQ(ia.compulsory_bytes, 9000);
  EXPECT_EQ(ia.flop, 0);
  EXPECT_EQ(ia.launches, 7);
  EXPECT_EQ(ia.host_syncs, 1);
  const Cost ss = rank::cost(params(Variant::scan_select, 1000), 300);
  EXPECT_EQ(ss.bytes_read, 10000);
  EXPECT_EQ(ss.bytes_written, 16000);
  EXPECT_EQ(ss.bytes, 26000);
  EXPECT_EQ(ss.compulsory_bytes, 9000);
  EXPECT_EQ(ss.flop, 0);
  EXPECT_EQ(ss.launches, 3);
  EXPECT_EQ(ss.host_syncs, 0);
  const Cost f = rank::cost(params(Variant::fused, 1000), 300);
  EXPECT_EQ(f.bytes_read, 1000);
  EXPECT_EQ(f.bytes_written, 8000);
  EXPECT_EQ(f.bytes, f.compulsory_bytes);
  EXPECT_EQ(f.flop, 0);
  EXPECT_EQ(f.launches, 2);
  EXPECT_EQ(f.host_syncs, 0);
  // n = 0: nothing moves.
  EXPECT_EQ(rank::cost(params(Variant::scan_select, 0), 0).bytes, 0);
}

// The estimate: working set mask + out (+ the scan, + arange and indices at density x n) and the model's bytes.
TEST(Rank, EstimateIsTheWorkingSet) {
  const PointEstimate ia = experiment().estimate(point("indexed_assign", 1000, 0.5));
  EXPECT_EQ(ia.working_set_bytes, 9000 + 16 * 500);
  EXPECT_EQ(ia.bytes, rank::cost(params(Variant::indexed_assign, 1000), 500).bytes);
  EXPECT_EQ(ia.flop, 0);
  EXPECT_EQ(experiment().estimate(point("scan_select", 1000, 0.5)).working_set_bytes, 17000);
  EXPECT_EQ(experiment().estimate(point("fused", 1000, 0.5)).working_set_bytes, 9000);
}

// Every point of configs/rank.yaml validates: the config loads, expands to the documented 198 points (5 decades
// x 8 densities x 2 modes x 3 variants, n = 1e9 at density 0.5 only), and each point's axes parse and estimate;
// the experiment's shipped hypotheses are valid config YAML too.
TEST(Rank, ConfigValidates) {
  const SweepConfig c = load_config(std::string(LABRUN_SOURCE_DIR) + "/configs/rank.yaml", test::builtin());
  EXPECT_EQ(c.experiment, "rank");
  EXPECT_EQ(c.lab.processes, 3);
  EXPECT_EQ(c.lab.interleave, 6);
  const auto points = expand(c, experiment());
  EXPECT_EQ(points.size(), 198u);
  int at_1e9 = 0;
  for (const Point& p : points) {
    const rank::Params q = rank::params_of(p);
    EXPECT_GE(q.n, 100000);
    EXPECT_LE(q.n, 1000000000);
    if (q.n == 1000000000) {
      ++at_1e9;
      EXPECT_EQ(q.density, 0.5);
    }
    const PointEstimate e = experiment().estimate(p);
    EXPECT_GE(e.working_set_bytes, 9.0 * static_cast<double>(q.n));
  }
  EXPECT_EQ(at_1e9, 6);
  ASSERT_TRUE(c.hypothesis.is_array());
  EXPECT_EQ(c.hypothesis.size(), 2u);
  EXPECT_NO_THROW(parse_config("experiment: rank\nhypothesis:" + experiment().hypotheses, "shipped", test::builtin()));
}

// Through the lab pass on the host backend: every variant is ok at small points (all-false, all-true, a tail),
// with correctness value 0 and tolerance 0; graph mode is not_supported there.
TEST(Rank, RunPointOnHostIsOk) {
  for (const char* v : {"indexed_assign", "scan_select", "fused"})
    for (auto [n, density] : {std::pair<std::int64_t, double>{0, 0.5}, {1, 1.0}, {1000, 0.0}, {1000, 1.0}, {4097, 0.5}}) {
      SCOPED_TRACE(std::string(v) + " n=" + std::to_string(n) + " density=" + std::to_string(density));
      const Json rec = run(point(v, n, density));
      EXPECT_EQ(rec["status"], "ok") << rec.dump();
      ASSERT_TRUE(rec.contains("correctness"));
      EXPECT_EQ(rec["correctness"]["passed"], true);
      EXPECT_EQ(real_from_json(rec["correctness"]["value"]), 0.0);
      EXPECT_EQ(real_from_json(rec["correctness"]["tolerance"]), 0.0);
      EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], true);
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
