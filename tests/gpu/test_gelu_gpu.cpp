// GPU tests of the gelu experiment (CTest label `gpu`, suite GeluGpu). Each test skips, reported as SKIPPED,
// when no CUDA device can be opened. Inputs are drawn with a fresh seed per run (printed; set LABRUN_TEST_SEED to
// reproduce). What they establish:
//  - every variant x dtype x mode at sizes with and without vector tails matches the float64 host reference
//    within the per-element bound (docs/experiments/gelu.md), graph replays equal eager runs;
//  - fused and fused_vec give identical bits (same expression, different access width);
//  - no kernel writes past n (sentinels after the end), for every n mod 8 and for n = 0;
//  - 64-bit indexing: n = 2^31 + 3 bf16 elements, every element checked, for all three variants;
//  - graph replays allocate nothing (case C12); the kernel breakdown names the seven unfused ops;
//  - the speed of fused_vec at the founding text's 64M elements against the calibrated copy bandwidth (printed;
//    asserted only loosely, the sweep's numbers are the measurement).
#include <gtest/gtest.h>

#include "gpu/gpu_fixture.hpp"

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cuda_backend.hpp"
#include "gelu/cuda/gelu_kernels.cuh"
#include "gelu_test.hpp"
#include "lab.hpp"
#include "record.hpp"

namespace labrun {
namespace {

using gelu::Variant;
using test_gelu::Inputs;
using test_gelu::ratio;

using test::test_seed;

const char* kVariantNames[] = {"unfused", "fused", "fused_vec"};
const char* kDtypeNames[] = {"f32", "bf16"};

class GeluGpu : public test::GpuLabTest {
 protected:
  Point point(const std::string& variant, std::int64_t n, const std::string& dtype, const std::string& mode) const {
    return Point{"gelu", variant, {{"n", n}, {"dtype", dtype}, {"mode", mode}, {"l2", std::string("hot")}}};
  }
  Json run(const std::string& variant, std::int64_t n, const std::string& dtype, const std::string& mode) {
    return run_lab(point(variant, n, dtype, mode));
  }
};

// Runs one variant's kernels directly (as the workload does) from x into y, with scratch a, b for unfused.
void launch_variant(Variant v, DType t, const void* x, void* y, void* a, void* b, std::int64_t n, int sm,
                    cudaStream_t s) {
  using gelu::kernels::Op;
  switch (v) {
    case Variant::unfused:
      gelu::kernels::unfused_op(Op::pow3, t, x, nullptr, a, n, s);
      gelu::kernels::unfused_op(Op::scale_alpha, t, a, nullptr, b, n, s);
      gelu::kernels::unfused_op(Op::add, t, x, b, a, n, s);
      gelu::kernels::unfused_op(Op::scale_sqrt2pi, t, a, nullptr, b, n, s);
      gelu::kernels::unfused_op(Op::tanh, t, b, nullptr, a, n, s);
      gelu::kernels::unfused_op(Op::add_one, t, a, nullptr, b, n, s);
      gelu::kernels::unfused_op(Op::mul_half, t, x, b, y, n, s);
      break;
    case Variant::fused: gelu::kernels::fused(t, x, y, n, sm, s); break;
    case Variant::fused_vec: gelu::kernels::fused_vec(t, x, y, n, s); break;
  }
}

// Every variant x dtype x mode x n against the host float64 reference, every element (n = 0, tails of 1..7
// elements past a vector, sizes not a multiple of the block's work); graph replays give the same worst ratio
// as eager runs (same kernels, same bits).
TEST_F(GeluGpu, EveryVariantMatchesTheReferenceAndGraphEqualsEager) {
  for (const char* v : kVariantNames)
    for (const char* dt : kDtypeNames)
      for (std::int64_t n : {0, 1, 7, 8, 9, 31, 4097, 65543, 1000003, (1 << 20) + 5}) {
        SCOPED_TRACE(std::string(v) + " " + dt + " n=" + std::to_string(n));
        const Json eager = run(v, n, dt, "eager");
        ASSERT_EQ(eager["status"], "ok") << eager.dump();
        EXPECT_TRUE(eager["correctness"]["passed"].get<bool>());
        EXPECT_LE(real_from_json(eager["correctness"]["detail"]["worst_ratio"]), 1.0);
        EXPECT_EQ(eager["correctness"]["detail"]["not_finite"], 0);
        EXPECT_EQ(eager["correctness"]["detail"]["mismatches"], 0);
        EXPECT_EQ(eager["correctness"]["detail"]["poisoned"], true);
        if (n == 0) {
          EXPECT_EQ(real_from_json(eager["correctness"]["detail"]["worst_ratio"]), 0.0);
        }
        const Json graph = run(v, n, dt, "graph");
        ASSERT_EQ(graph["status"], "ok") << graph.dump();
        EXPECT_EQ(real_from_json(graph["correctness"]["detail"]["worst_ratio"]),
                  real_from_json(eager["correctness"]["detail"]["worst_ratio"]));
        EXPECT_EQ(graph["phases"]["warmup"]["mode_setup"]["graph_nodes"].get<int>(),
                  v == std::string("unfused") ? 7 : 1);
      }
}

// fused and fused_vec evaluate the same expression; only the access width differs: identical bits. Also prints
// how many elements differ from the host's fused (glibc's tanhf against CUDA's: both within 2 ulp).
TEST_F(GeluGpu, FusedAndFusedVecAreBitIdentical) {
  const int sm = ctx().sm_count();
  cudaStream_t s = ctx().stream();
  for (DType t : {DType::f32, DType::bf16}) {
    const std::int64_t n = 1000003;
    const Inputs in = test_gelu::generate_inputs(n, t, test_seed());
    const std::size_t bytes = in.data_bytes();
    DeviceBuffer x(bytes), y1(bytes), y2(bytes);
    ASSERT_EQ(cudaMemcpy(x.get(), in.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
    // A pageable copy may still be in flight on the legacy stream, which the kernels' stream does not wait for.
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    gelu::kernels::fused(t, x.get(), y1.get(), n, sm, s);
    gelu::kernels::fused_vec(t, x.get(), y2.get(), n, s);
    ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    std::vector<char> h1(bytes), h2(bytes);
    ASSERT_EQ(cudaMemcpy(h1.data(), y1.get(), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(h2.data(), y2.get(), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(std::memcmp(h1.data(), h2.data(), bytes), 0) << to_string(t);
    const std::vector<std::uint64_t> host = test_gelu::run_host(Variant::fused, in);
    std::int64_t differ = 0;
    const std::size_t s_bytes = dtype_bytes(t);
    for (std::int64_t i = 0; i < n; ++i)
      differ += std::memcmp(h1.data() + i * s_bytes, reinterpret_cast<const char*>(host.data()) + i * s_bytes,
                            s_bytes) != 0;
    std::printf("%s: %lld of %lld fused elements differ in bits from the host's (tanhf implementations)\n",
                to_string(t), static_cast<long long>(differ), static_cast<long long>(n));
  }
}

// No kernel writes outside [0, n): for n = 0..40 and a few larger sizes (every n mod 8, tails of the 16-byte
// vectors, the 4-vector main loop's remainder). x and y are cudaMalloc'd, as in the workload (the vectorised
// kernels need 16-byte aligned pointers). Bytes past n keep their sentinel; elements below n are checked.
TEST_F(GeluGpu, NoWritesPastTheEndForAnyTail) {
  const int sm = ctx().sm_count();
  cudaStream_t s = ctx().stream();
  std::vector<std::int64_t> sizes;
  for (std::int64_t n = 0; n <= 40; ++n) sizes.push_back(n);
  for (std::int64_t n : {255, 256, 257, 1023, 1025, 8191, 8193, 32767, 32769, 262147}) sizes.push_back(n);
  for (DType t : {DType::f32, DType::bf16})
    for (Variant v : {Variant::unfused, Variant::fused, Variant::fused_vec})
      for (std::int64_t n : sizes) {
        SCOPED_TRACE(std::string(test_gelu::name(v)) + " " + to_string(t) + " n=" + std::to_string(n));
        const std::int64_t pad = 64;
        const std::size_t sb = dtype_bytes(t);
        const Inputs in = test_gelu::generate_inputs(n + pad, t, test_seed() + static_cast<std::uint64_t>(n));
        const std::size_t total = static_cast<std::size_t>(n + pad) * sb;
        DeviceBuffer x(total), y(total), a(total), b(total);
        ASSERT_EQ(cudaMemcpy(x.get(), in.data(), total, cudaMemcpyHostToDevice), cudaSuccess);
        ASSERT_EQ(cudaMemset(y.get(), 0x5a, total), cudaSuccess);
        // The uploads and the poison run on the legacy default stream, which the kernels' non-blocking stream does
        // not wait for: finish them first (else the poison can land after the kernel's writes).
        ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
        launch_variant(v, t, x.get(), y.get(), a.get(), b.get(), n, sm, s);
        ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
        std::vector<unsigned char> host(total);
        ASSERT_EQ(cudaMemcpy(host.data(), y.get(), total, cudaMemcpyDeviceToHost), cudaSuccess);
        for (std::size_t i = static_cast<std::size_t>(n) * sb; i < total; ++i)
          ASSERT_EQ(host[i], 0x5a) << "byte " << i << " past the end was written";
        Inputs head = in;
        head.n = n;
        const CheckOutcome c = test_gelu::compare(v, head, test_gelu::reference_of(head), host.data(), 1.0);
        EXPECT_TRUE(c.passed()) << test::detail_of(c).dump();
      }
}

// 64-bit indexing: n = 2^31 + 3 bf16 elements (4 GiB per tensor; byte offsets past 2^32 and element indices past
// 2^31), every element of every variant against the reference. Skipped when the device has under 20 GiB free.
TEST_F(GeluGpu, IndicesBeyond2e31) {
  std::size_t free = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  const std::int64_t n = (std::int64_t{1} << 31) + 3;
  const DType t = DType::bf16;
  const std::size_t bytes = static_cast<std::size_t>(n) * 2;
  if (free < 5 * bytes)
    GTEST_SKIP() << "needs " << 5 * bytes / 1e9 << " GB of device memory, " << free / 1e9 << " free";
  const Inputs in = test_gelu::generate_inputs(n, t, test_seed());
  const std::vector<double> ref = test_gelu::reference_of(in);
  DeviceBuffer x(bytes), y(bytes), a(bytes), b(bytes);
  ASSERT_EQ(cudaMemcpy(x.get(), in.data(), bytes, cudaMemcpyHostToDevice), cudaSuccess);
  std::unique_ptr<std::uint64_t[]> host(new std::uint64_t[bytes / 8 + 1]);
  for (Variant v : {Variant::unfused, Variant::fused, Variant::fused_vec}) {
    SCOPED_TRACE(test_gelu::name(v));
    ASSERT_EQ(cudaMemset(y.get(), 0xff, bytes), cudaSuccess);  // NaN poison
    // The uploads and the poison run on the legacy default stream, which the kernels' non-blocking stream does
    // not wait for: finish them first (else the poison can land after the kernel's writes).
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    launch_variant(v, t, x.get(), y.get(), a.get(), b.get(), n, ctx().sm_count(), ctx().stream());
    ASSERT_EQ(cudaStreamSynchronize(ctx().stream()), cudaSuccess);
    ASSERT_EQ(cudaMemcpy(host.get(), y.get(), bytes, cudaMemcpyDeviceToHost), cudaSuccess);
    const CheckOutcome c = test_gelu::compare(v, in, ref, host.get(), 1.0);
    EXPECT_TRUE(c.passed()) << test::detail_of(c).dump();
    EXPECT_EQ(test::detail_of(c)["not_finite"], 0);
    std::printf("%s bf16 n=2^31+3: worst ratio %.3f\n", test_gelu::name(v), ratio(c));
  }
}

// The grids: fused_vec one 16-byte vector per thread over a full grid; fused one element per thread up to the
// blocks resident at once, then grid-stride.
TEST_F(GeluGpu, GridsFillTheDevice) {
  const int sm = ctx().sm_count();
  gelu::kernels::prepare(DType::f32);
  gelu::kernels::prepare(DType::bf16);
  EXPECT_EQ(gelu::kernels::vec_grid(DType::f32, 0), 1);
  EXPECT_EQ(gelu::kernels::vec_grid(DType::f32, 7), 1);
  EXPECT_EQ(gelu::kernels::vec_grid(DType::f32, 4 * 256 * 3), 3);
  EXPECT_EQ(gelu::kernels::vec_grid(DType::bf16, 8 * 256 * 3 + 1), 3);
  EXPECT_EQ(gelu::kernels::scalar_grid(DType::bf16, 256 * 5, sm), 5);
  for (DType t : {DType::f32, DType::bf16}) {
    const std::int64_t n = std::int64_t{1} << 26;
    const int vg = gelu::kernels::vec_grid(t, n), sg = gelu::kernels::scalar_grid(t, n, sm);
    std::printf("%s n=2^26: fused_vec grid %d blocks (%.1f per SM), fused grid %d blocks (%.1f per SM), %d SMs\n",
                to_string(t), vg, static_cast<double>(vg) / sm, sg, static_cast<double>(sg) / sm, sm);
    EXPECT_EQ(vg, n / (t == DType::bf16 ? 8 : 4) / 256) << "one vector per thread, every vector covered";
    EXPECT_GE(sg, 2 * sm);
  }
}

// The memory peak of a point (memory.peak_work_bytes, DeviceMemory): the work buffers a variant allocates, not
// its input (x, MemoryRole::input) nor labrun's own, exactly as the cost model predicts (unfused: y and two scratch
// tensors; fused: y); the device's own count grows by at least as much (cudaMalloc rounds allocations up).
TEST_F(GeluGpu, MemoryPeakIsTheWorkBuffersTheCostModelPredicts) {
  const std::int64_t n = std::int64_t{1} << 24;
  for (const char* v : kVariantNames)
    for (const char* mode : {"eager", "graph"}) {
      SCOPED_TRACE(std::string(v) + " " + mode);
      const Json r = run(v, n, "f32", mode);
      ASSERT_EQ(r["status"], "ok") << r.dump();
      const Json& m = r["memory"];
      ASSERT_TRUE(m.is_object()) << r.dump();
      const double expected = static_cast<double>(n) * 4 * (std::string(v) == "unfused" ? 3 : 1);
      EXPECT_EQ(m["peak_work_bytes"].get<double>(), expected);
      EXPECT_EQ(real_from_json(m["predicted_peak_work_bytes"]), expected);
      EXPECT_GE(m["input_bytes"].get<double>(), static_cast<double>(n) * 4);
      if (m.contains("device_used_delta_bytes"))
        std::printf("%s %s: peak %.0f B, device used +%.0f B\n", v, mode, expected,
                    real_from_json(m["device_used_delta_bytes"]));
    }
}

// Case C12: every buffer is allocated in the workload's constructor, so graph replays allocate nothing: device
// free memory, the default pool's used memory and graph memory are the same before and after 20 replays.
TEST_F(GeluGpu, C12_GraphReplaysDoNotAllocate) {
  for (const char* v : kVariantNames)
    for (const char* dt : kDtypeNames) {
      SCOPED_TRACE(std::string(v) + " " + dt);
      const Point p = point(v, 1000003, dt, "graph");
      expect_replays_allocate_nothing(p);
    }
}

// The kernel breakdown of an eager unfused point lists the seven ops in launch order with their bytes
// (pow3 2ns, scale 2ns, add 3ns, scale 2ns, tanh 2ns, add one 2ns, multiply 3ns); fused_vec lists one.
TEST_F(GeluGpu, KernelBreakdownNamesTheOps) {
  const std::int64_t n = 1 << 22;
  const Json unfused = run("unfused", n, "f32", "eager");
  ASSERT_EQ(unfused["status"], "ok") << unfused.dump();
  ASSERT_TRUE(unfused["kernels"].is_array()) << unfused.dump();
  const std::vector<std::pair<std::string, double>> expected = {{"pow3", 2},      {"scale_alpha", 2},
                                                                {"add_x", 3},     {"scale_sqrt2pi", 2},
                                                                {"tanh", 2},      {"add_one", 2},
                                                                {"mul_half_x", 3}};
  ASSERT_EQ(unfused["kernels"].size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(unfused["kernels"][i]["op"], expected[i].first);
    EXPECT_EQ(unfused["kernels"][i]["bytes"].get<double>(), expected[i].second * n * 4);
  }
  const Json vec = run("fused_vec", n, "bf16", "eager");
  ASSERT_EQ(vec["status"], "ok");
  ASSERT_EQ(vec["kernels"].size(), 1u);
  EXPECT_EQ(vec["kernels"][0]["op"], "gelu_vec");
}

// The founding text's size, 64M = 2^26 elements: fused_vec's bandwidth (2·n·s over the median time) against the
// calibrated copy bandwidth, with fused and unfused for the shape (the text's A100: unfused 8.1 ms, fused 1.8 ms,
// library 1.1 ms). The target is >= 90% of copy bandwidth (f32 <= 0.13 ms, bf16 <= 0.064 ms on an H200); asserted
// here only at 60% so a busy machine does not fail the suite: the sweep's numbers are the measurement.
TEST_F(GeluGpu, SpeedAt64M) {
  const double copy = real_from_json(backend_->calibrate()["copy"]["bandwidth_Bps"]);
  lab_.min_samples = 10;
  lab_.max_samples = 30;
  lab_.min_sample_time_s = 1e-3;
  lab_.warmup_iterations = 5;
  const std::int64_t n = std::int64_t{1} << 26;
  for (const char* dt : kDtypeNames) {
    double t_vec = 0;
    for (const char* v : kVariantNames)
      for (const char* mode : {"eager", "graph"}) {
        const Json r = run(v, n, dt, mode);
        ASSERT_EQ(r["status"], "ok") << r.dump();
        const double t = real_from_json(r["timing"]["time_s"]);
        const double bytes = real_from_json(r["cost"]["compulsory_bytes"]);
        std::printf("%-9s %-4s %-5s n=2^26: %8.4f ms, %.2f TB/s of compulsory bytes = %.0f%% of copy (%.2f TB/s)\n", v,
                    dt, mode, t * 1e3, bytes / t / 1e12, 100 * bytes / t / copy, copy / 1e12);
        if (std::string(v) == "fused_vec" && std::string(mode) == "eager") t_vec = t;
      }
    const double fraction = 2.0 * static_cast<double>(n) * (std::string(dt) == "f32" ? 4 : 2) / t_vec / copy;
    EXPECT_GT(fraction, 0.6) << dt << ": fused_vec at " << 100 * fraction << "% of the copy bandwidth";
  }
}

}  // namespace
}  // namespace labrun
