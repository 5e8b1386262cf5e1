// GPU tests of the softmax experiment (CTest label `gpu`). Each test skips, reported as SKIPPED, when no CUDA
// device can be opened. Inputs are drawn with a fresh seed per run (printed; set LABRUN_TEST_SEED to reproduce).
//
// What they establish: every variant (unfused, two_pass, online) in both dtypes matches the float64 host
// reference element by element (and row by row) at shapes covering every kernel path -- one thread per row,
// sub-warp and warp groups, block groups, the on-chip limit (8192 columns) and just past it (streamed), the
// 16-byte vector path and the scalar path (cols not a multiple of 4 / 8), grid-stride over more rows than fit
// on the device at once -- in eager and graph mode, with graph replays bit-identical to eager runs; graph
// replays allocate nothing (case C12); the kernels issue nothing for an empty matrix; the 4096 x 4096 f32 point
// runs through the whole lab pass with a cost model and a kernel breakdown.
#include <gtest/gtest.h>

#include "gpu/gpu_fixture.hpp"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "cuda_backend.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "softmax/cuda/softmax_kernels.cuh"
#include "softmax/softmax.hpp"

namespace labrun {
namespace {

using test::test_seed;

class SoftmaxGpu : public test::QuickGpuLabTest {
 protected:
  // A rows x cols point: the axes are `elements` (rows * cols) and `cols`, rows is derived from them.
  static Point point(const std::string& variant, std::int64_t rows, std::int64_t cols, const std::string& dtype,
                     const std::string& mode) {
    return Point{
        "softmax",
        variant,
        {{"cols", cols}, {"elements", rows * cols}, {"dtype", dtype}, {"mode", mode}, {"l2", std::string("hot")}}};
  }
  Json run(const std::string& variant, std::int64_t rows, std::int64_t cols, const std::string& dtype,
           const std::string& mode) {
    return run_lab(point(variant, rows, cols, dtype, mode));
  }
};

const char* kVariants[] = {"unfused", "two_pass", "online"};
const char* kDtypes[] = {"f32", "bf16"};

// Shapes (rows, cols) chosen to reach every path of the kernels (see softmax_kernels.cu):
//   cols 1, 3, 7          scalar path, one thread per row (G = 1), 256 rows per block
//   cols 12, 40           vector path (f32) / scalar (bf16), sub-warp groups, a partial last vector slot
//   cols 100, 250         scalar path with sub-warp groups (not a multiple of 4 or 8)
//   cols 256, 1000        warp groups; 1000 is a multiple of 8 (bf16 vector) and of 4
//   cols 1024, 4096       block groups (G 128..512), the fast path of the speed target
//   cols 4100, 8191       block groups, 8191 scalar; 8192 the on-chip limit exactly
//   cols 8200, 20000      streamed (re-read) rows, vector (8200) and 20000 (multiple of 8)
//   cols 65537            streamed, scalar, several chunks of kUnroll vectors per thread
//   rows 1, 5, 33, 300, 3001  grid-stride over rows, the last block partly idle
const std::tuple<std::int64_t, std::int64_t> kShapes[] = {{1, 1},     {300, 1},   {33, 3},   {5, 7},    {257, 12},
                                                          {3001, 40}, {33, 100},  {5, 250},  {33, 256}, {5, 1000},
                                                          {33, 1024}, {5, 4096},  {7, 4100}, {3, 8191}, {4, 8192},
                                                          {3, 8200},  {2, 20000}, {1, 65537}};

// Every variant x dtype x shape against the host reference, eager and graph; graph replays equal eager runs bit for
// bit (same kernels, deterministic reductions), reported through the worst error ratio and the relative L2 error.
TEST_F(SoftmaxGpu, AllVariantsMatchReferenceAndGraphEqualsEager) {
  for (const char* v : kVariants)
    for (const char* dt : kDtypes)
      for (auto [rows, cols] : kShapes) {
        SCOPED_TRACE(std::string(v) + " " + dt + " " + std::to_string(rows) + "x" + std::to_string(cols));
        const Json eager = run(v, rows, cols, dt, "eager");
        ASSERT_EQ(eager["status"], "ok") << eager.dump();
        EXPECT_TRUE(eager["correctness"]["passed"].get<bool>());
        EXPECT_EQ(eager["correctness"]["detail"]["poisoned"], true);
        const Json& ew = eager["correctness"]["detail"]["checks"][0];  // y element by element
        const Json& rs = eager["correctness"]["detail"]["checks"][1];  // the worst row sum
        EXPECT_EQ(ew["mismatches"], 0);
        EXPECT_EQ(ew["not_finite"], 0);
        EXPECT_EQ(ew["compared"], rows * cols);
        EXPECT_LE(real_from_json(ew["worst_ratio"]), 1.0);
        EXPECT_LE(real_from_json(rs["worst_ratio"]), 1.0);
        const Json graph = run(v, rows, cols, dt, "graph");
        ASSERT_EQ(graph["status"], "ok") << graph.dump();
        const Json& gw = graph["correctness"]["detail"]["checks"][0];
        EXPECT_EQ(real_from_json(graph["correctness"]["value"]), real_from_json(eager["correctness"]["value"]));
        EXPECT_EQ(real_from_json(gw["worst_ratio"]), real_from_json(ew["worst_ratio"]));
        EXPECT_EQ(real_from_json(gw["rel_l2_error"]), real_from_json(ew["rel_l2_error"]));
        EXPECT_EQ(real_from_json(graph["correctness"]["detail"]["checks"][1]["worst_value"]),
                  real_from_json(rs["worst_value"]));
      }
}

// The geometry the fused kernels pick: on chip up to 8192 columns with G x 8 >= cols (8 f32 per thread), 16-byte
// access when cols allows it, G = 1024 streamed beyond; the grid never exceeds the row groups.
TEST_F(SoftmaxGpu, FusedGeometry) {
  const int sm = cuda().context().sm_count();
  using softmax::kernels::Fused;
  auto g = softmax::kernels::fused_geometry(Fused::two_pass, DType::f32, 4096, 4096, sm);
  EXPECT_TRUE(g.on_chip);
  EXPECT_EQ(g.width, 4);
  EXPECT_EQ(g.threads_per_row, 512);
  EXPECT_EQ(g.block, 512);
  EXPECT_GE(g.grid, sm) << "at least one block per SM at 4096 rows";
  EXPECT_LE(g.grid, 4096);
  g = softmax::kernels::fused_geometry(Fused::online, DType::bf16, 4096, 4096, sm);
  EXPECT_EQ(g.width, 8);
  EXPECT_EQ(g.threads_per_row, 512);
  g = softmax::kernels::fused_geometry(Fused::online, DType::f32, 262144, 64, sm);
  EXPECT_EQ(g.threads_per_row, 8);
  EXPECT_EQ(g.rows_per_block, 32);
  g = softmax::kernels::fused_geometry(Fused::online, DType::f32, 10, 7, sm);
  EXPECT_EQ(g.width, 1);
  EXPECT_EQ(g.threads_per_row, 1);
  EXPECT_EQ(g.grid, 1);
  g = softmax::kernels::fused_geometry(Fused::two_pass, DType::f32, 64, 262144, sm);
  EXPECT_FALSE(g.on_chip);
  EXPECT_EQ(g.threads_per_row, 1024);
  EXPECT_EQ(g.grid, 64) << "one block per row: 64 rows use only 64 blocks";
  EXPECT_TRUE(softmax::kernels::fused_geometry(Fused::two_pass, DType::bf16, 1, 8192, sm).on_chip);
  EXPECT_FALSE(softmax::kernels::fused_geometry(Fused::two_pass, DType::bf16, 1, 8193, sm).on_chip);
  EXPECT_EQ(softmax::kernels::fused_geometry(Fused::two_pass, DType::f32, 0, 100, sm).grid, 0);
}

// Empty matrices: every launcher returns without launching (no error, nothing written).
TEST_F(SoftmaxGpu, EmptyMatrixLaunchesNothing) {
  LaunchContext& ctx = cuda().context();
  DeviceBuffer buf(64);
  ASSERT_EQ(cudaMemset(buf.get(), 0x11, 64), cudaSuccess);
  const int sm = ctx.sm_count();
  for (DType t : {DType::f32, DType::bf16})
    for (auto [rows, cols] : {std::pair<std::int64_t, std::int64_t>{0, 16}, {16, 0}, {0, 0}}) {
      using softmax::kernels::Fused;
      softmax::kernels::fused(Fused::two_pass, t, buf.get(), buf.get(), rows, cols, sm, ctx.stream());
      softmax::kernels::fused(Fused::online, t, buf.get(), buf.get(), rows, cols, sm, ctx.stream());
      softmax::kernels::rowmax(t, buf.get(), buf.get(), rows, cols, sm, ctx.stream());
      softmax::kernels::exp_sub(t, buf.get(), buf.get(), buf.get(), rows, cols, sm, ctx.stream());
      softmax::kernels::rowsum(t, buf.get(), buf.get(), rows, cols, sm, ctx.stream());
      softmax::kernels::divide(t, buf.get(), buf.get(), buf.get(), rows, cols, sm, ctx.stream());
    }
  ASSERT_EQ(cudaStreamSynchronize(ctx.stream()), cudaSuccess);
  std::vector<unsigned char> host(64);
  ASSERT_EQ(cudaMemcpy(host.data(), buf.get(), 64, cudaMemcpyDeviceToHost), cudaSuccess);
  for (unsigned char b : host) EXPECT_EQ(b, 0x11);
}

// Case C12: every buffer is allocated before the first iteration (the SDK's arrays, the variant's setup), so graph
// replays allocate nothing: the device's free memory and the graph memory in use are the same before and after
// 20 replays.
TEST_F(SoftmaxGpu, C12_GraphReplaysDoNotAllocate) {
  for (const char* v : kVariants)
    for (std::int64_t cols : {4096, 20000}) {
      SCOPED_TRACE(std::string(v) + " cols " + std::to_string(cols));
      const Point p = point(v, 64, cols, "f32", "graph");
      expect_replays_allocate_nothing(p);
    }
}

// The judged point through the whole lab pass: 4096 x 4096 f32, every variant ok, the cost model recorded
// (fused: compulsory bytes only), the kernel breakdown naming unfused's four ops; the times are printed with
// the bandwidth of the compulsory bytes (the speed target is >= 80% of the copy bandwidth for the fused ones).
TEST_F(SoftmaxGpu, JudgedPointRunsThroughTheLabPass) {
  judge_with(10, 20, 0.2, 0.001);
  for (const char* v : kVariants) {
    SCOPED_TRACE(v);
    const Json rec = run(v, 4096, 4096, "f32", "graph");
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    const double t = real_from_json(rec["timing"]["time_s"]);
    const double compulsory = real_from_json(rec["cost"]["compulsory_bytes"]);
    EXPECT_EQ(compulsory, 2.0 * 4096 * 4096 * 4);
    if (std::string(v) != "unfused") EXPECT_EQ(real_from_json(rec["cost"]["bytes"]), compulsory);
    std::printf("softmax %s 4096x4096 f32 graph: %.2f us, %.2f TB/s of compulsory bytes\n", v, t * 1e6,
                compulsory / t / 1e12);
    EXPECT_GT(t, 0.0);
  }
  const Json eager = run("unfused", 4096, 4096, "f32", "eager");
  ASSERT_EQ(eager["status"], "ok");
  ASSERT_TRUE(eager.contains("kernels")) << "an eager point on a device records its kernel breakdown";
  const std::string breakdown = eager["kernels"].dump();
  for (const char* op : {"rowmax", "exp_sub", "rowsum", "divide"})
    EXPECT_NE(breakdown.find(op), std::string::npos) << op << " missing from the kernel breakdown";
}

}  // namespace
}  // namespace labrun
