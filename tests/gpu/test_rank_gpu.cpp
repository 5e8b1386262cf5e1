// GPU tests of the rank experiment (CTest label `gpu`). Each test skips, reported as SKIPPED, when no CUDA
// device can be opened. Inputs are drawn with a fresh seed per run (printed; set LABRUN_TEST_SEED to reproduce).
// Every check compares all n int64 outputs with the host reference exactly (the SDK's chunked exact comparison:
// tolerance 0, value 0 when no element differs), after the output was poisoned with 0x5a5a5a5a5a5a5a5a.
#include <gtest/gtest.h>

#include "gpu/gpu_fixture.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <tuple>

#include "cuda_backend.hpp"
#include "lab.hpp"
#include "rank/cuda/rank_kernels.cuh"
#include "rank/rank.hpp"
#include "record.hpp"

namespace labrun {
namespace {

using test::test_seed;

const char* kVariants[] = {"indexed_assign", "scan_select", "fused"};
// The densities of configs/rank.yaml: 0 is the all-false mask, 1 the all-true one.
const double kDensities[] = {0, 0.001, 0.01, 0.1, 0.5, 0.9, 0.99, 1};

class RankGpu : public test::GpuLabTest {
 protected:
  Point point(const std::string& variant, std::int64_t n, double density, const std::string& mode) const {
    return Point{"rank", variant, {{"n", n}, {"density", density}, {"mode", mode}, {"l2", std::string("hot")}}};
  }
  Json run(const std::string& variant, std::int64_t n, double density, const std::string& mode) {
    return run_lab(point(variant, n, density, mode));
  }
  // Asserts an ok point whose every element matched the reference.
  static void expect_exact(const Json& rec) {
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    EXPECT_EQ(rec["correctness"]["passed"], true);
    EXPECT_EQ(real_from_json(rec["correctness"]["value"]), 0.0) << rec["correctness"].dump();
    EXPECT_EQ(rec["correctness"]["detail"]["mismatches"], 0) << rec["correctness"].dump();
    EXPECT_EQ(real_from_json(rec["correctness"]["tolerance"]), 0.0);
    EXPECT_EQ(rec["correctness"]["detail"]["poisoned"], true);
  }
};

// Every variant x every config density x sizes with tails (0, 1, 15, 17, one tile of select_rank's 4096 and
// either side of it, several tiles plus a tail, one CUB tile boundary region, 1e6 + 3) x eager and graph, all n
// elements exact. indexed_assign in a graph ends capture_unsupported (its count is read by the host: the finding).
TEST_F(RankGpu, AllVariantsExactEagerAndGraph) {
  for (const char* v : kVariants)
    for (std::int64_t n : {0, 1, 15, 17, 4095, 4096, 4097, 3 * 4096 + 1, 65537, 1000003})
      for (double density : kDensities) {
        SCOPED_TRACE(std::string(v) + " n=" + std::to_string(n) + " density=" + std::to_string(density));
        expect_exact(run(v, n, density, "eager"));
        const Json graph = run(v, n, density, "graph");
        if (std::string(v) == "indexed_assign") {
          EXPECT_EQ(graph["status"], "capture_unsupported") << graph.dump();
          continue;
        }
        expect_exact(graph);
      }
}

// Large sizes (the config's decades up to 1e8), every variant and mode, at all-false, sparse, half and all-true.
TEST_F(RankGpu, LargeSizesExact) {
  for (std::int64_t n : {10000000 + 11, 100000000})
    for (double density : {0.0, 0.01, 0.5, 1.0})
      for (const char* v : kVariants)
        for (const char* mode : {"eager", "graph"}) {
          if (std::string(v) == "indexed_assign" && std::string(mode) == "graph") continue;
          SCOPED_TRACE(std::string(v) + " " + mode + " n=" + std::to_string(n) + " density=" + std::to_string(density));
          expect_exact(run(v, n, density, mode));
        }
}

// ABOVE 2^31 ELEMENTS: n = 2^31 + 7 (a 2 GB mask, a 16 GB output, a 16 GB scan or 2 x 8 GB arange/indices at
// density 0.5): 64-bit indexing in every kernel and in CUB's offsets, exact at every element. Skipped when the
// device has less than 40 GB free. Takes a while (the host generates 2^31 mask bytes and compares 2^31 ranks).
TEST_F(RankGpu, Above2To31ElementsExact) {
  std::size_t free = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  if (free < (40ull << 30)) GTEST_SKIP() << "needs 40 GB free device memory, has " << free / 1e9 << " GB";
  const std::int64_t n = (std::int64_t{1} << 31) + 7;
  std::printf("rank above 2^31: n = %lld\n", static_cast<long long>(n));
  lab_.min_samples = lab_.max_samples = 1;
  for (const char* v : kVariants) {
    SCOPED_TRACE(std::string(v) + " n=2^31+7");
    const Json rec = run(v, n, 0.5, "eager");
    expect_exact(rec);
    std::printf("  %-15s ok, %.3f ms per iteration\n", v, real_from_json(rec["timing"]["time_s"]) * 1e3);
  }
  SCOPED_TRACE("fused graph n=2^31+7");
  expect_exact(run("fused", n, 1.0, "graph"));
}

// Case C09: eager indexed_assign synchronizes with the host once per iteration; scan_select and fused never do,
// and in a graph they capture (C13) with nodes and time > 0. The failed capture of indexed_assign names the CUDA
// error (C11) and the next point captures normally.
TEST_F(RankGpu, HostSyncsAndCapture) {
  lab_.min_samples = lab_.max_samples = 10;
  const Json ia = run("indexed_assign", 1000000, 0.5, "eager");
  ASSERT_EQ(ia["status"], "ok") << ia.dump();
  EXPECT_GE(real_from_json(ia["timing"]["host_syncs_per_iteration"]), 1.0);
  EXPECT_EQ(real_from_json(ia["cost"]["host_syncs"]), 1.0);
  const Json bad = run("indexed_assign", 100000, 0.5, "graph");
  EXPECT_EQ(bad["status"], "capture_unsupported");
  EXPECT_NE(bad["reason"].get<std::string>().find("cudaErrorStreamCapture"), std::string::npos) << bad["reason"];
  for (const char* v : {"scan_select", "fused"})
    for (const char* mode : {"eager", "graph"}) {
      SCOPED_TRACE(std::string(v) + " " + mode);
      const Json r = run(v, 1000000, 0.5, mode);
      ASSERT_EQ(r["status"], "ok") << r.dump();
      EXPECT_EQ(real_from_json(r["timing"]["host_syncs_per_iteration"]), 0.0);
      EXPECT_GT(real_from_json(r["timing"]["device"]["median_time_s"]), 0.0);
      if (std::string(mode) == "graph") {
        EXPECT_GT(r["phases"]["warmup"]["mode_setup"]["graph_nodes"].get<int>(), 0);
      }
    }
}

// Case C12: every buffer is allocated before capture, so graph replays allocate nothing: free device memory, the
// default pool's used memory and graph memory are the same before and after 20 replays.
TEST_F(RankGpu, C12_GraphReplaysDoNotAllocate) {
  for (const char* v : {"scan_select", "fused"}) {
    SCOPED_TRACE(v);
    expect_replays_allocate_nothing(point(v, 1000000, 0.5, "graph"));
  }
}

// The launchers on their own at awkward sizes, against values computed here: fill and arange with odd counts,
// scatter of a reversed permutation, select_rank over tails shorter than a tile with several grids.
TEST_F(RankGpu, KernelsHandleTails) {
  cudaStream_t s = cuda().context().stream();
  const int sm = cuda().context().sm_count();
  for (std::int64_t n : {1, 2, 3, 31, 4096, 4097, 3 * 4096, 100001}) {
    SCOPED_TRACE("n=" + std::to_string(n));
    const std::size_t bytes = static_cast<std::size_t>(n) * 8;
    DeviceBuffer a(bytes), b(bytes), c(bytes), m(static_cast<std::size_t>(n) + 16);
    std::vector<std::int64_t> host(static_cast<std::size_t>(n));
    // Uploads on the stream the kernels run on (the legacy stream does not order the non-blocking one).
    auto upload = [&](const DeviceBuffer& d, const void* src, std::size_t size) {
      ASSERT_EQ(cudaMemcpyAsync(d.get(), src, size, cudaMemcpyHostToDevice, s), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    };
    auto read = [&](const DeviceBuffer& d) {
      EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      EXPECT_EQ(cudaMemcpyAsync(host.data(), d.get(), bytes, cudaMemcpyDeviceToHost, s), cudaSuccess);
      EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    };
    rank::kernels::fill(a.as<std::int64_t>(), -7, n, sm, s);
    read(a);
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(host[static_cast<std::size_t>(i)], -7) << i;
    rank::kernels::arange(b.as<std::int64_t>(), n, sm, s);
    read(b);
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(host[static_cast<std::size_t>(i)], i) << i;
    // idx = n-1 .. 0, values = arange: out[n-1-j] = j.
    std::vector<std::int64_t> rev(static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j) rev[static_cast<std::size_t>(j)] = n - 1 - j;
    upload(c, rev.data(), bytes);
    rank::kernels::scatter(a.as<std::int64_t>(), c.as<std::int64_t>(), b.as<std::int64_t>(), n, sm, s);
    read(a);
    for (std::int64_t i = 0; i < n; ++i) ASSERT_EQ(host[static_cast<std::size_t>(i)], n - 1 - i) << i;
    // select_rank with s = arange + 1 (an all-true inclusive scan) and an alternating mask.
    std::vector<std::uint8_t> mask(static_cast<std::size_t>(n));
    for (std::int64_t i = 0; i < n; ++i) mask[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(i % 3 != 1);
    upload(m, mask.data(), static_cast<std::size_t>(n));
    for (std::int64_t j = 0; j < n; ++j) rev[static_cast<std::size_t>(j)] = j + 1;
    upload(c, rev.data(), bytes);
    for (int grid : {1, 3, rank::kernels::select_rank_grid(n, sm)}) {
      ASSERT_EQ(cudaMemsetAsync(a.get(), 0x5a, bytes, s), cudaSuccess);
      rank::kernels::select_rank(m.as<std::uint8_t>(), c.as<std::int64_t>(), a.as<std::int64_t>(), n, grid, s);
      read(a);
      for (std::int64_t i = 0; i < n; ++i)
        ASSERT_EQ(host[static_cast<std::size_t>(i)], i % 3 != 1 ? i : -1) << i << " grid " << grid;
    }
  }
}

// The speed the H200 run is judged on, at n = 1e8, density 0.5, graph mode: fused against the calibrated copy
// bandwidth counting its compulsory 9n bytes, scan_select counting its 26n. Printed for the record; asserted
// only loosely here (fused beats scan_select, both above 40% of copy): the sweep's report judges the targets
// (70% of copy: scan_select <= ~0.62 ms, fused <= ~0.31 ms on an H200).
TEST_F(RankGpu, SpeedAgainstCopyBandwidth) {
  lab_.min_samples = 20;
  lab_.max_samples = 50;
  lab_.min_sample_time_s = 0.001;
  const double copy = backend_->calibrate()["copy"]["bandwidth_Bps"].get<double>();
  const double n = 1e8;
  const Json f = run("fused", 100000000, 0.5, "graph");
  const Json s = run("scan_select", 100000000, 0.5, "graph");
  const Json ia = run("indexed_assign", 100000000, 0.5, "eager");
  ASSERT_EQ(f["status"], "ok");
  ASSERT_EQ(s["status"], "ok");
  ASSERT_EQ(ia["status"], "ok");
  const double tf = real_from_json(f["timing"]["time_s"]), ts = real_from_json(s["timing"]["time_s"]),
               ti = real_from_json(ia["timing"]["time_s"]);
  std::printf("n = 1e8, density 0.5, copy %.2f TB/s\n", copy / 1e12);
  std::printf("  fused          %.3f ms  %.2f TB/s of 9n  = %.0f%% of copy (target >= 70%%)\n", tf * 1e3,
              9 * n / tf / 1e12, 100 * 9 * n / tf / copy);
  std::printf("  scan_select    %.3f ms  %.2f TB/s of 26n = %.0f%% of copy (target >= 70%%)\n", ts * 1e3,
              26 * n / ts / 1e12, 100 * 26 * n / ts / copy);
  std::printf("  indexed_assign %.3f ms (eager, one host sync)\n", ti * 1e3);
  EXPECT_LT(tf, ts);
  EXPECT_GT(9 * n / tf, 0.4 * copy);
  EXPECT_GT(26 * n / ts, 0.4 * copy);
}

}  // namespace
}  // namespace labrun
