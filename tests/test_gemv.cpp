// Tests of the gemv experiment on the host: the float64 reference against known values (A = ones, x = 0, 1, 2, …),
// the documented summation order of the kernels' host twin (row_dot) against a hand-written evaluation, every host
// variant against the reference on random inputs (tails: n not a multiple of 8, of the tile, of the unrolled
// step; one row, one column), empty shapes (m = 0, n = 0) and the axes refusing 0, the tolerance by hand, wrong
// outputs (NaN, one product missing) failing, the cost model's bytes, the generator, the config's 80 points,
// and run_point on the host backend.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "config.hpp"
#include <labrun/counter_rng.hpp>

#include "gemv_test.hpp"
#include "host_backend.hpp"
#include "host_check_test.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sweep.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using namespace test_gemv;

using test::builtin;

const RegisteredExperiment& experiment() { return *builtin().find("gemv"); }

std::uint16_t encode(DType t, float v) { return t == DType::bf16 ? float_to_bf16(v) : float_to_half(v); }

// A = ones (m × n), x = 0, 1, …, n − 1 (exact in f16 and bf16 up to 256, in f16 up to 2048).
Inputs ones_arange(std::int64_t m, std::int64_t n, DType t) {
  Inputs in;
  in.dtype = t;
  in.m = m;
  in.n = n;
  in.a.assign(static_cast<std::size_t>(m * n), encode(t, 1.0f));
  for (std::int64_t j = 0; j < n; ++j) in.x.push_back(encode(t, static_cast<float>(j)));
  return in;
}

using test::quick_lab;

Json run(const Point& p, const LabSettings& lab = quick_lab()) { return test::run_on_host(p, experiment(), lab); }

// A = ones, x = arange: y[i] = n(n − 1)/2 and Σ|a x| the same; a row of alternating signs sums pairs to −1.
TEST(Gemv, ReferenceKnownValues) {
  const Inputs in = ones_arange(3, 100, DType::f16);
  const Ref ref = reference(in);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(ref.y[i], 4950.0);
    EXPECT_EQ(ref.abs_sum[i], 4950.0);
  }
  Inputs alt = ones_arange(1, 100, DType::f16);
  for (int j = 1; j < 100; j += 2) alt.a[j] = encode(DType::f16, -1.0f);  // 0 − 1 + 2 − 3 + … − 99 = −50
  const Ref r2 = reference(alt);
  EXPECT_EQ(r2.y[0], -50.0);
  EXPECT_EQ(r2.abs_sum[0], 4950.0);
}

// Integer sums below 2^24 are exact in f32 whatever the order: every host variant gives n(n − 1)/2 exactly, on the
// vector path (n % 8 == 0) and the scalar path, with rows shorter and longer than one step of the tile.
TEST(Gemv, HostVariantsExactOnIntegers) {
  for (DType t : kDTypes)
    for (std::int64_t n : {1, 7, 8, 100, 256, 257}) {
      const Inputs in = ones_arange(4, n, t);
      for (Variant v : kVariants) {
        const auto y = run_host(v, in);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(y[i], n * (n - 1) / 2.0) << gemv::to_string(v) << " n " << n;
      }
    }
  const Inputs big = ones_arange(2, 2048, DType::f16);  // x up to 2047, exact in f16; the sum 2096128 < 2^24
  for (Variant v : kVariants) EXPECT_EQ(run_host(v, big)[1], 2096128.0f) << gemv::to_string(v);
}

// The documented order of the kernels (gemv.hpp, row_dot), evaluated by hand: on the vector path each thread's
// 8 accumulators combine as ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)); threads' partials meet in the butterfly (at
// n = 16 threads 0 and 1 own one vector each: lane 0 ends with s0 + s1), for G = 32 and for a block of 256.
// Values chosen so that the order changes the f32 result.
TEST(Gemv, RowDotFollowsTheDocumentedOrder) {
  const std::vector<float> a = {1024, 0.0625f, -1024,   0.0625f, 0.0625f, 1,       0.0625f, -1,
                                2048, 0.0625f, 0.0625f, -2048,   1,       0.0625f, 0.0625f, 0.0625f};
  const std::vector<float> x = {1024, 0.0625f, 1024, 0.0625f, 1,       0.0625f, 1, 0.0625f,
                                2048, 1,       1,    2048,    0.0625f, 1,       1, 1};
  for (DType t : kDTypes) {
    std::vector<std::uint16_t> ab, xb;
    std::vector<float> ad, xd;  // the values after rounding to the dtype
    for (int j = 0; j < 16; ++j) {
      ab.push_back(encode(t, a[j]));
      xb.push_back(encode(t, x[j]));
      ad.push_back(t == DType::bf16 ? bf16_to_float(ab.back()) : half_to_float(ab.back()));
      xd.push_back(t == DType::bf16 ? bf16_to_float(xb.back()) : half_to_float(xb.back()));
    }
    auto vec = [&](int v) {
      float p[8];
      for (int i = 0; i < 8; ++i) p[i] = ad[v * 8 + i] * xd[v * 8 + i];  // exact in f32
      return ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
    };
    const float expected = vec(0) + vec(1);
    for (int G : {32, 256, 512, 1024}) EXPECT_EQ(gemv::row_dot(ab.data(), xb.data(), 16, t, G), expected) << G;
    // The sequential order gives another result here: the test can tell the orders apart.
    float seq = 0;
    for (int j = 0; j < 16; ++j) seq = std::fma(ad[j], xd[j], seq);
    EXPECT_NE(seq, expected) << to_string(t);
    const Inputs in{t, 1, 16, ab, xb};
    EXPECT_EQ(run_host(Variant::cublas, in)[0], seq) << "the host cublas is the plain sequential f32 dot product";
    EXPECT_EQ(run_host(Variant::warp_row, in)[0], expected);
  }
  EXPECT_THROW(gemv::row_dot(nullptr, nullptr, 0, DType::f16, 48), std::invalid_argument);
}

// Every host variant within its bound of the reference, row by row, at shapes with tails: n = 1, 7 (scalar path,
// fewer elements than threads), 8, 100, 1000 (8 | 1000: vector path, 125 vectors), 4104 (513 vectors: one past a
// multiple of the warp's and the 512-block's step), 8191 (scalar, long), 14336 (the config's long rows),
// 20000; one row and several.
TEST(Gemv, HostVariantsMatchReference) {
  const std::pair<std::int64_t, std::int64_t> shapes[] = {{1, 1},    {3, 7},    {5, 8},     {7, 100},  {4, 1000},
                                                          {9, 4104}, {2, 8191}, {3, 14336}, {1, 20000}};
  const auto inputs = [](std::int64_t m, std::int64_t n, DType t) { return generate(m, n, t, kSeed); };
  const auto check = [](Variant v, const Inputs& in) { return check_host(v, in); };
  const auto within_bound = [](const CheckOutcome& c, Variant, std::int64_t, std::int64_t) {
    EXPECT_EQ(test::detail_of(c)["mismatches"], 0);
    EXPECT_LE(ratio(c), 1.0);
    // The bound is a worst case: real errors are far inside it (and the products exact, so often 0).
    EXPECT_LT(ratio(c), 0.5);
  };
  test::expect_host_checks(kDTypes, shapes, kVariants, inputs, check, within_bound);
}

// The kernels' order and the sequential one differ in the last bits on random rows (the host twin is not the
// plain dot product), and both sit within their bounds.
TEST(Gemv, TreeAndSequentialOrdersDiffer) {
  const Inputs in = generate(64, 4096, DType::f16, kSeed);
  const auto tree = run_host(Variant::warp_row, in);
  const auto seq = run_host(Variant::cublas, in);
  int differ = 0;
  for (int i = 0; i < 64; ++i) differ += tree[i] != seq[i];
  EXPECT_GT(differ, 0);
}

// m = 0: nothing to write or compare (passes with 0 rows). n = 0: every row is the empty sum, y = 0 exactly with a
// bound of 0; any other value fails. The axes start at 1 (a 0-sized product is no measurement, and cuBLAS needs
// lda >= 1), so a config cannot ask for 0.
TEST(Gemv, EmptyShapes) {
  for (Variant v : kVariants) {
    const Inputs none = generate(0, 100, DType::f16, kSeed);
    EXPECT_TRUE(check_host(v, none).passed());
    EXPECT_EQ(test::detail_of(check_host(v, none))["compared"], 0);
    const Inputs empty_rows = generate(5, 0, DType::f16, kSeed);
    const auto y = run_host(v, empty_rows);
    for (int i = 0; i < 5; ++i) EXPECT_EQ(y[i], 0.0f) << gemv::to_string(v);
    EXPECT_TRUE(check_host(v, empty_rows).passed());
    std::vector<float> wrong(5, 0.0f);
    wrong[3] = 1e-30f;
    EXPECT_FALSE(compare(v, empty_rows, wrong.data()).passed());
  }
  EXPECT_EQ(experiment().find_axis("m")->min, 1.0);
  EXPECT_EQ(experiment().find_axis("n")->min, 1.0);
  EXPECT_THROW(parse_config("experiment: gemv\naxes:\n  n: [0, 8]\n", "gemv0.yaml", builtin()), ConfigError);
  EXPECT_THROW(generate(-1, 4, DType::f16, kSeed), std::invalid_argument);
  Layout negative;  // a negative size is refused where the lab lays the point out
  EXPECT_THROW(sdk()->def().arrays_fn()(Args(point("warp_row", -1, 4, "f16")), negative), std::invalid_argument);
  EXPECT_THROW(generate(4, 4, DType::f32, kSeed), std::invalid_argument);
}

// depth = ceil(nv / G) + log2 W + 5 (+ 5 for a block); γ(k, u) = k u / (1 − k u); bound = scale (γ(d, u_e) +
// 2 γ(n, 2^-53)) s.
TEST(Gemv, ToleranceHandComputed) {
  EXPECT_EQ(gemv::depth(Variant::row_block_256, 4096), 2 + 3 + 5 + 5);
  EXPECT_EQ(gemv::depth(Variant::row_block_512, 4096), 1 + 3 + 10);
  EXPECT_EQ(gemv::depth(Variant::row_block_1024, 4096), 1 + 3 + 10);
  EXPECT_EQ(gemv::depth(Variant::warp_row, 4096), 16 + 3 + 5);
  EXPECT_EQ(gemv::depth(Variant::warp_row, 14336), 56 + 3 + 5);
  EXPECT_EQ(gemv::depth(Variant::row_block_256, 14336), 7 + 3 + 10);
  EXPECT_EQ(gemv::depth(Variant::warp_row, 100), 4 + 0 + 5) << "scalar path: W = 1";
  EXPECT_EQ(gemv::depth(Variant::row_block_1024, 8191), 8 + 0 + 10);
  EXPECT_EQ(gemv::depth(Variant::cublas, 4096), 4096);
  const double u = std::ldexp(1.0, -24), u64 = std::ldexp(1.0, -53);
  const gemv::Tolerance t = gemv::tolerance(Variant::warp_row, 4096, 2.0);
  EXPECT_EQ(t.u_effective, u);
  EXPECT_DOUBLE_EQ(t.gamma, 24 * u / (1 - 24 * u) + 2 * (4096 * u64 / (1 - 4096 * u64)));
  EXPECT_DOUBLE_EQ(t.bound(1000), 2.0 * t.gamma * 1000);
  const gemv::Tolerance c = gemv::tolerance(Variant::cublas, 4096, 1.0);
  EXPECT_EQ(c.u_effective, 4 * u);
  EXPECT_DOUBLE_EQ(c.gamma, 4096 * 4 * u / (1 - 4096 * 4 * u) + 2 * (4096 * u64 / (1 - 4096 * u64)));
  EXPECT_THROW(gemv::tolerance(Variant::cublas, std::int64_t{1} << 22, 1.0), std::invalid_argument);
}

// Case C07 and real mistakes: NaN and inf fail with +inf; dropping one product from one row (|a x| >= 2^-8) fails
// the package's kernels' bounds; a row-swapped y fails; y of the transposed product fails, cublas's loose bound
// included.
TEST(Gemv, WrongOutputsFail) {
  const Inputs in = generate(64, 4096, DType::f16, kSeed);
  const Ref ref = reference(in);
  const auto good = run_host(Variant::row_block_256, in);
  const Variant v = Variant::row_block_256;
  ASSERT_TRUE(compare(v, in, good.data()).passed());
  auto nan = good;
  nan[17] = std::numeric_limits<float>::quiet_NaN();
  CheckOutcome c = compare(v, in, nan.data());
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(ratio(c), std::numeric_limits<double>::infinity());
  EXPECT_EQ(test::detail_of(c)["not_finite"], 1);
  EXPECT_EQ(test::detail_of(c)["worst_index"], 17);
  auto inf = good;
  inf[0] = std::numeric_limits<float>::infinity();
  EXPECT_FALSE(compare(v, in, inf.data()).passed());
  auto dropped = good;  // row 5 without its first product
  dropped[5] -= in.decode(in.a[5 * 4096]) * in.decode(in.x[0]);
  c = compare(v, in, dropped.data());
  EXPECT_FALSE(c.passed()) << test::detail_of(c).dump();
  EXPECT_EQ(test::detail_of(c)["mismatches"], 1);
  auto swapped = good;
  std::swap(swapped[2], swapped[3]);
  EXPECT_FALSE(compare(v, in, swapped.data()).passed());
  // Aᵀ·x on the leading 64 x 64 block is another vector: fails even the cublas bound.
  std::vector<float> transposed(64, 0.0f);
  const Inputs sq = generate(64, 64, DType::f16, kSeed);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < 64; ++j) transposed[i] += sq.decode(sq.a[j * 64 + i]) * sq.decode(sq.x[j]);
  EXPECT_FALSE(compare(Variant::cublas, sq, transposed.data()).passed());
}

// bytes_read = m n s + n s, bytes_written = 4 m, compulsory the same, flop 2 m n, 1 launch, no host sync;
// peak_work_bytes = 4 m (+ cuBLAS's 32 MiB workspace); the working set is A, x and y.
TEST(Gemv, CostModel) {
  for (Variant v : kVariants) {
    const Cost c = gemv::cost(v, 4096, 14336, DType::f16);
    const Point p = point(gemv::to_string(v), 4096, 14336, "f16");
    const Cost lab = sdk()->cost(Args(p), Reference{});
    EXPECT_EQ(lab.bytes, c.bytes) << "the lab's cost is the model's";
    EXPECT_EQ(lab.peak_work_bytes, c.peak_work_bytes);
    EXPECT_EQ(c.bytes_read, 4096.0 * 14336 * 2 + 14336 * 2);
    EXPECT_EQ(c.bytes_written, 4096.0 * 4);
    EXPECT_EQ(c.bytes, c.bytes_read + c.bytes_written);
    EXPECT_EQ(c.compulsory_bytes, c.bytes);
    EXPECT_EQ(c.flop, 2.0 * 4096 * 14336);
    EXPECT_EQ(c.launches, 1);
    EXPECT_EQ(c.host_syncs, 0);
    const double workspace = v == Variant::cublas ? 32.0 * 1024 * 1024 : 0.0;
    EXPECT_EQ(c.peak_work_bytes, 4096.0 * 4 + workspace);
    EXPECT_EQ(experiment().estimate(p).working_set_bytes, c.bytes_read + 4096.0 * 4)
        << "A, x, y: not cuBLAS's workspace";
  }
}

// |v| in [1/16, 1] (never zero or subnormal), both signs, reproducible, seed-dependent; x drawn from its own
// stream (not A's first row); the rows of the config's shapes are all within f16 range.
TEST(Gemv, Generator) {
  for (DType t : kDTypes) {
    const Inputs in = generate(37, 513, t, kSeed);
    ASSERT_EQ(in.a.size(), 37u * 513);
    ASSERT_EQ(in.x.size(), 513u);
    int negative = 0;
    for (auto b : in.a) {
      const float v = in.decode(b);
      EXPECT_GE(std::fabs(v), 0.0625f);
      EXPECT_LE(std::fabs(v), 1.0f);
      negative += v < 0;
    }
    EXPECT_GT(negative, 37 * 513 / 3);
    EXPECT_LT(negative, 2 * 37 * 513 / 3);
    for (auto b : in.x) EXPECT_GE(std::fabs(in.decode(b)), 0.0625f);
    const Inputs again = generate(37, 513, t, kSeed);
    EXPECT_EQ(again.a, in.a);
    EXPECT_EQ(again.x, in.x);
    EXPECT_NE(generate(37, 513, t, kSeed + 1).a, in.a);
    EXPECT_NE(std::vector<std::uint16_t>(in.a.begin(), in.a.begin() + 513), in.x);
  }
}

// The input seed mixes m, n and dtype, not the variant: all variants of a point share one cached set and one
// reference.
TEST(Gemv, InputSeedAndCache) {
  const Point a = point("warp_row", 64, 128, "f16"), b = point("cublas", 64, 128, "f16", "graph");
  const Point c = point("warp_row", 64, 256, "f16"), d = point("warp_row", 64, 128, "bf16");
  auto seed = [](const Point& p) { return sdk()->input_seed(Args(p), kSeed); };
  EXPECT_EQ(seed(a), seed(b));
  EXPECT_NE(seed(a), seed(c));
  EXPECT_NE(seed(a), seed(d));
  const auto ia = sdk()->inputs(Args(a), kSeed);
  EXPECT_EQ(sdk()->inputs(Args(b), kSeed), ia);
  EXPECT_EQ(sdk()->reference(Args(b), kSeed), sdk()->reference(Args(a), kSeed));
  EXPECT_NE(sdk()->inputs(Args(c), kSeed), ia);
}

// The SDK draws the seeds gemv drew before it: the pre-SDK key "gemv/MxN/DTYPE", so results from then compare point
// for point; and the inputs it generates from them are the generator's, bit for bit.
TEST(Gemv, InputSeedsAreThoseBeforeTheSdk) {
  test::expect_pre_sdk_seeds(*sdk(), {{point("row_block_256", 4096, 14336, "f16"), kSeed, "gemv/4096x14336/f16"},
                                      {point("cublas", 37, 513, "bf16", "graph"), 3, "gemv/37x513/bf16"}});
  const Inputs want = generate(37, 513, DType::bf16, test::pre_sdk_seed(kSeed, "gemv/37x513/bf16"));
  test::expect_input_bytes(*sdk(), point("warp_row", 37, 513, "bf16"), kSeed,
                           {{"A", want.a.data(), want.a_bytes()}, {"x", want.x.data(), want.x_bytes()}});
}

// configs/gemv.yaml: the four shapes, every variant, both modes and L2 states (80 points), groups of 10 consecutive
// points sharing a shape and an L2 state (the interleave), three hypotheses; on the host only 4096 x 4096 fits
// lab.host.host_max_bytes.
TEST(Gemv, ConfigPointsAreTheDescribedSweep) {
  const SweepConfig config = load_config(std::string(LABRUN_SOURCE_DIR) + "/configs/gemv.yaml", builtin());
  EXPECT_EQ(config.lab.interleave, 10);
  const auto points = expand(config, experiment());
  ASSERT_EQ(points.size(), 80u);
  std::set<std::pair<std::int64_t, std::int64_t>> shapes;
  std::set<std::string> variants;
  for (const Point& p : points) {
    shapes.insert({p.integer("m"), p.integer("n")});
    variants.insert(p.variant);
    EXPECT_EQ(p.word("dtype"), "f16");
  }
  const std::set<std::pair<std::int64_t, std::int64_t>> want = {
      {4096, 4096}, {8192, 8192}, {4096, 14336}, {14336, 4096}};
  EXPECT_EQ(shapes, want);
  EXPECT_EQ(variants.size(), 5u);
  test::expect_groups_of(points, 10, {"m", "n", "l2"});
  ASSERT_TRUE(config.hypothesis.is_array());
  EXPECT_EQ(config.hypothesis.size(), 3u);
  // The host section's cap: 4096 x 4096 fits, the 117-134 MB shapes do not.
  const double host_max = 40e6;
  for (const Point& p : points) {
    const double ws = experiment().estimate(p).working_set_bytes;
    const bool small = p.integer("m") == 4096 && p.integer("n") == 4096;
    EXPECT_EQ(ws <= host_max, small) << p.label() << " " << ws;
  }
}

// Through the lab pass on the host backend: every variant ok at small shapes, both dtypes, with a tail (n = 100,
// scalar path) and without (n = 128); graph mode is not supported on the host; the host size cap skips.
TEST(Gemv, RunPointOnHost) {
  for (const char* dtype : {"f16", "bf16"})
    for (std::int64_t n : {100, 128})
      for (Variant v : kVariants) {
        const Json rec = run(point(gemv::to_string(v), 48, n, dtype));
        ASSERT_EQ(rec["status"], "ok") << rec.dump();
        EXPECT_EQ(rec["correctness"]["passed"], true);
        EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], true);
        EXPECT_EQ(real_from_json(rec["cost"]["compulsory_bytes"]), 48.0 * n * 2 + n * 2 + 48 * 4);
      }
  EXPECT_EQ(run(point("warp_row", 8, 64, "f16", "graph"))["status"], "not_supported");
  const LabSettings lab = test::host_max_bytes_lab(64 * 64 * 2 + 64 * 2 + 64 * 4,  // A, x and y of 64 x 64, exactly
                                                   experiment(), point("warp_row", 64, 64, "f16"),
                                                   point("warp_row", 65, 64, "f16"));
  EXPECT_EQ(run(point("cublas", 64, 64, "f16"), lab)["status"], "ok") << "the host allocates no cuBLAS workspace";
}

}  // namespace
}  // namespace labrun
