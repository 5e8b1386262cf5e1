// GPU tests of the attention experiment (CTest label `gpu`). Each test skips, reported as SKIPPED, when no CUDA
// device can be opened (and the naive ones when cuBLAS cannot be loaded). Inputs are drawn with a fresh seed per
// run (printed; set LABRUN_TEST_SEED to reproduce).
//
// What they establish: every variant matches the float64 host reference element by element on small odd shapes
// (S = 1, 7, 63, 65, 130, 200, 257: tails of the 64- and 128-row and -key tiles, the scalar paths of the naive
// kernels), D = 64 and 128, causal and not, in eager and graph mode; on large shapes, where the host reference is
// sampled, tiled agrees with naive_in_place on every element; the lab pass records the cost model, a kernel breakdown
// with the out-of-place copy and a traced one (launches[]) naming cuBLAS's GEMM kernels, and a measured peak of work
// memory equal to the model's; graph replays allocate nothing (case C12); and the judged point (B = 4, H = 32, S =
// 4096, D = 128, causal) prints the tiled kernel's TFLOP/s; tiled names the kernel that ran (the Hopper one at D = 128
// on a 9.0 device).
#include <gtest/gtest.h>

#include "gpu/gpu_fixture.hpp"

#include <cmath>
#include <cstdio>
#include <algorithm>
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "attention/attention.hpp"
#include "attention/cuda/attention_kernels.cuh"
#include "attention_test.hpp"
#include "cublas.hpp"
#include <labrun/cudnn.hpp>
#include "cuda_backend.hpp"
#include <labrun/dtype.hpp>
#include "lab.hpp"
#include "record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::test_seed;

const char* kVariants[] = {"naive_out_of_place", "naive_in_place", "tiled", "cudnn"};

// Q, K and V of `in` in device memory, the copies finished (a pageable copy may still be in flight on the legacy
// stream, which the kernels' stream does not wait for).
struct DeviceQkv {
  DeviceBuffer q, k, v;
  explicit DeviceQkv(const attention::Inputs& in) : q(in.tensor_bytes()), k(in.tensor_bytes()), v(in.tensor_bytes()) {
    LABRUN_CUDA(cudaMemcpy(q.get(), in.q.data(), in.tensor_bytes(), cudaMemcpyHostToDevice));
    LABRUN_CUDA(cudaMemcpy(k.get(), in.k.data(), in.tensor_bytes(), cudaMemcpyHostToDevice));
    LABRUN_CUDA(cudaMemcpy(v.get(), in.v.data(), in.tensor_bytes(), cudaMemcpyHostToDevice));
    LABRUN_CUDA(cudaDeviceSynchronize());
  }
};

std::vector<std::uint16_t> to_host(const DeviceBuffer& o) {
  std::vector<std::uint16_t> h(o.bytes() / 2);
  LABRUN_CUDA(cudaMemcpy(h.data(), o.get(), o.bytes(), cudaMemcpyDeviceToHost));
  return h;
}

// tiled's output on `dev` for the point `p` (the kernel's attributes set, its O poisoned first), enqueued on `st`;
// `other`, the second variant's O, poisoned too.
DeviceBuffer tiled_output(const DeviceQkv& dev, const attention::Params& p, const DeviceBuffer& other,
                          cudaStream_t st) {
  DeviceBuffer o(other.bytes());
  attention::kernels::prepare(p.head_dim);
  attention::kernels::poison(o.get(), o.bytes(), st);
  attention::kernels::poison(other.get(), other.bytes(), st);
  attention::kernels::flash_forward(dev.q.get(), dev.k.get(), dev.v.get(), o.get(), p.bh(), p.seq, p.head_dim, p.causal,
                                    p.scale() * 1.44269504088896340736f, st);
  return o;
}

// Two outputs (bf16 bits) of the same inputs, element by element: each is within one bound of the exact result, so
// |a - b| <= 2 x the tolerance with A <= max|v| = 1 and L <= scale D max|q| max|k| (= 4 scale D).
struct Agreement {
  std::int64_t bad = 0, differ = 0, worst_index = -1;
  double worst = 0, mean_abs = 0;  ///< worst |a - b| over 2 bounds; mean |a - b|
};
Agreement agreement(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b,
                    const attention::Params& p) {
  const attention::Tolerance tol = attention::tolerance(p, 1.0);
  const double l_max = p.scale() * p.head_dim * 4.0;
  Agreement r;
  double sum = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double x = bf16_to_float(a[i]), y = bf16_to_float(b[i]), diff = std::fabs(x - y);
    const double ratio = std::isfinite(x) && std::isfinite(y) ? diff / (2 * tol.bound(std::fabs(y), 1.0, l_max))
                                                              : INFINITY;
    if (!(ratio <= 1)) ++r.bad;
    if (!(ratio <= r.worst)) r.worst = ratio, r.worst_index = static_cast<std::int64_t>(i);
    r.differ += a[i] != b[i];
    sum += diff;
  }
  r.mean_abs = a.empty() ? 0 : sum / static_cast<double>(a.size());
  return r;
}

class AttentionGpu : public test::QuickGpuLabTest {
 protected:
  static Point point(const std::string& variant, std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d,
                     std::int64_t causal, const std::string& mode = "eager") {
    return test_attention::point(variant, b, h, s, d, causal, mode);
  }
  Json run(const Point& p) { return run_lab(p); }
  static bool naive(const std::string& v) { return v == "naive_out_of_place" || v == "naive_in_place"; }
  // Whether the variant's library loads here (cuBLAS for the naive ones, cuDNN for cudnn); printed when not.
  static bool loadable(const std::string& v) {
    const bool ok = naive(v) ? cublas::available() : v != "cudnn" || cudnn::available();
    if (!ok)
      std::printf("skipping %s: %s\n", v.c_str(),
                  (naive(v) ? cublas::unavailable_reason() : cudnn::unavailable_reason()).c_str());
    return ok;
  }
};

// Every variant at small odd shapes against the full float64 reference, eager and graph (graph replays the same
// kernels: the same worst error).
TEST_F(AttentionGpu, AllVariantsMatchReferenceOnSmallOddShapes) {
  const std::tuple<int, int, int> shapes[] = {{1, 2, 1},  {1, 2, 7},   {1, 3, 63},  {2, 1, 64},
                                              {2, 1, 65}, {1, 2, 130}, {1, 2, 200}, {1, 1, 257}};
  for (const char* v : kVariants) {
    if (!loadable(v)) continue;
    for (const auto& [b, h, s] : shapes)
      for (int d : {64, 128})
        for (int causal : {0, 1}) {
          SCOPED_TRACE(std::string(v) + " B=" + std::to_string(b) + " H=" + std::to_string(h) +
                       " S=" + std::to_string(s) + " D=" + std::to_string(d) + " causal=" + std::to_string(causal));
          const Json eager = run(point(v, b, h, s, d, causal));
          ASSERT_EQ(eager["status"], "ok") << eager.dump();
          EXPECT_EQ(real_from_json(eager["correctness"]["detail"]["full_reference"]), 1);
          EXPECT_EQ(eager["correctness"]["detail"]["not_finite"], 0);
          if (s == 130 || s == 257) {
            const Json graph = run(point(v, b, h, s, d, causal, "graph"));
            ASSERT_EQ(graph["status"], "ok") << graph.dump();
            EXPECT_EQ(real_from_json(graph["correctness"]["detail"]["worst_ratio"]),
                      real_from_json(eager["correctness"]["detail"]["worst_ratio"]));
          }
        }
  }
}

// Larger shapes through the lab pass (the reference sampled: 384 rows, every element finite), S a multiple of
// the tile and not; the record carries the cost model and a measured peak of work memory equal to the model's
// (every work buffer counted: O and the score buffers, the SDK's arrays, and the cuBLAS handle's workspace).
TEST_F(AttentionGpu, LargerShapesPassAndPeakMemoryMatchesTheModel) {
  for (const char* v : kVariants) {
    if (!loadable(v)) continue;
    for (std::int64_t s : {1000, 2048})
      for (int d : {64, 128})
        for (int causal : {0, 1}) {
          SCOPED_TRACE(std::string(v) + " S=" + std::to_string(s) + " D=" + std::to_string(d) +
                       " causal=" + std::to_string(causal));
          const Json rec = run(point(v, 2, 8, s, d, causal));
          ASSERT_EQ(rec["status"], "ok") << rec.dump();
          EXPECT_EQ(real_from_json(rec["correctness"]["detail"]["full_reference"]), 0);
          EXPECT_EQ(real_from_json(rec["correctness"]["detail"]["rows_checked"]), attention::kSampleRows);
          EXPECT_EQ(rec["correctness"]["detail"]["compared"], std::int64_t{attention::kSampleRows} * d);
          EXPECT_EQ(rec["correctness"]["detail"]["not_finite"], 0);
          ASSERT_TRUE(rec.contains("memory")) << rec.dump();
          const double measured = real_from_json(rec["memory"]["peak_work_bytes"]);
          const double model = real_from_json(rec["cost"]["peak_work_bytes"]);
          if (std::string(v) == "cudnn") EXPECT_GE(measured, model);  // + the plan's workspace, measured only
          else EXPECT_EQ(measured, model);
        }
  }
}

// Runs naive_in_place (cuBLAS + the two elementwise kernels) and tiled on the same device inputs and compares
// every element: |o_tiled - o_naive| <= 2 x the tolerance with A <= max|v| = 1 and L <= scale D max|q| max|k|
// (= 4 scale D), since each is within one bound of the exact result. Also requires the two to differ somewhere
// (they are different algorithms) and prints the mean and worst difference.
TEST_F(AttentionGpu, TiledAgreesWithNaiveOnEveryElementAtLargeShapes) {
  if (!cublas::available()) GTEST_SKIP() << cublas::unavailable_reason();
  LaunchContext& ctx = launch_context(*backend_);
  for (int d : {64, 128})
    for (int causal : {0, 1})
      for (std::int64_t s : {4096, 4095}) {
        SCOPED_TRACE("D=" + std::to_string(d) + " causal=" + std::to_string(causal) + " S=" + std::to_string(s));
        const std::int64_t b = 1, h = 4, bh = b * h;
        const attention::Inputs in = attention::generate(b, h, s, d, test_seed() + static_cast<std::uint64_t>(s));
        const std::size_t bytes = in.tensor_bytes();
        const DeviceQkv dev(in);
        DeviceBuffer o_naive(bytes);
        DeviceBuffer scores(static_cast<std::size_t>(bh * s * s) * 4);
        const attention::Params p{attention::Variant::naive_in_place, b, h, s, d, causal == 1, "eager"};
        cudaStream_t st = ctx.stream();
        const DeviceBuffer o_tiled = tiled_output(dev, p, o_naive, st);
        cublas::Handle blas(st);
        using cublas::Op;
        using cublas::Type;
        const int si = static_cast<int>(s);
        const long long sd = s * d, ss = s * s;
        blas.gemm_strided_batched(Op::t, Op::n, si, si, d, 1.0f, dev.k.get(), Type::bf16, d, sd, dev.q.get(),
                                  Type::bf16, d, sd, 0.0f, scores.get(), Type::f32, si, ss, static_cast<int>(bh));
        attention::kernels::scale_mask(scores.as<float>(), scores.as<float>(), bh, s, p.scale(), causal == 1, st);
        attention::kernels::softmax_rows(scores.as<float>(), bh, s, st);
        blas.gemm_strided_batched(Op::n, Op::n, d, si, si, 1.0f, dev.v.get(), Type::bf16, d, sd, scores.get(),
                                  Type::bf16, 2 * si, 2 * ss, 0.0f, o_naive.get(), Type::bf16, d, sd,
                                  static_cast<int>(bh));
        LABRUN_CUDA(cudaStreamSynchronize(st));
        const std::vector<std::uint16_t> ht = to_host(o_tiled);
        const Agreement r = agreement(ht, to_host(o_naive), p);
        EXPECT_EQ(r.bad, 0) << "worst ratio " << r.worst << " at element " << r.worst_index;
        EXPECT_GT(r.differ, 0);
        std::printf(
            "attention tiled vs naive_in_place D=%d causal=%d S=%lld: mean |diff| %.3g, worst ratio %.3g, "
            "%.1f%% of elements differ\n",
            d, causal, static_cast<long long>(s), r.mean_abs, r.worst,
            100.0 * static_cast<double>(r.differ) / static_cast<double>(ht.size()));
      }
}

// cuDNN's fused attention and the tiled kernel on the same device inputs, every element: each is within one
// bound of the exact result, so they agree within two (as TiledAgreesWithNaive...); they differ somewhere (two
// algorithms). The record's environment names the cuDNN library and version the runner loaded.
TEST_F(AttentionGpu, CudnnAgreesWithTiledOnEveryElementAndItsLibraryIsRecorded) {
  if (!cudnn::available()) GTEST_SKIP() << cudnn::unavailable_reason();
  const Json env = backend_->environment();
  ASSERT_TRUE(env.contains("cudnn")) << env.dump();
  EXPECT_EQ(env["cudnn"]["version"], cudnn::library().version);
  EXPECT_EQ(env["cudnn"]["path"], cudnn::library().path);
  std::printf("cuDNN %s from %s\n", cudnn::library().version.c_str(), cudnn::library().path.c_str());
  LaunchContext& ctx = launch_context(*backend_);
  for (int d : {64, 128})
    for (int causal : {0, 1})
      for (std::int64_t s : {4096, 4095}) {
        SCOPED_TRACE("D=" + std::to_string(d) + " causal=" + std::to_string(causal) + " S=" + std::to_string(s));
        const std::int64_t b = 1, h = 4, bh = b * h;
        const attention::Inputs in = attention::generate(b, h, s, d, test_seed() + 7 * static_cast<std::uint64_t>(s));
        const std::size_t bytes = in.tensor_bytes();
        const DeviceQkv dev(in);
        DeviceBuffer o_cudnn(bytes);
        const attention::Params p{attention::Variant::cudnn, b, h, s, d, causal == 1, "eager"};
        cudaStream_t st = ctx.stream();
        const DeviceBuffer o_tiled = tiled_output(dev, p, o_cudnn, st);
        cudnn::Sdpa sdpa(st, {b, h, s, d, causal == 1, p.scale()}, dev.q.get(), dev.k.get(), dev.v.get(),
                         o_cudnn.get());
        sdpa.run();
        LABRUN_CUDA(cudaStreamSynchronize(st));
        const std::vector<std::uint16_t> hc = to_host(o_cudnn);
        const Agreement r = agreement(to_host(o_tiled), hc, p);
        EXPECT_EQ(r.bad, 0) << "worst ratio " << r.worst << " at element " << r.worst_index;
        EXPECT_GT(r.differ, 0);
        std::printf(
            "attention cudnn (engine %lld, workspace %zu B) vs tiled D=%d causal=%d S=%lld: worst ratio %.3g, "
            "%.1f%% of elements differ\n",
            static_cast<long long>(sdpa.engine()), sdpa.workspace_bytes(), d, causal, static_cast<long long>(s),
            r.worst, 100.0 * static_cast<double>(r.differ) / static_cast<double>(hc.size()));
      }
}

// Where cuDNN does not load (LABRUN_CUDNN_LIBRARY naming a missing file), a runner still starts and runs every
// other variant; cudnn is not_supported with the reason naming the path, and the environment says why no cuDNN.
TEST_F(AttentionGpu, AbsentCudnnIsNotSupportedWithTheReason) {
  test::TempDir dir("labrun_attention_gpu");
  const std::string config = dir.file("absent.yaml"), out = dir.file("absent.jsonl");
  {
    std::ofstream f(config);
    f << "experiment: attention\nvariants: [tiled, cudnn]\naxes: {seq: [64], batch: [1], heads: [2], "
         "head_dim: [64], causal: [1]}\nlab: {min_samples: 3, max_samples: 3, processes: 1}\n";
  }
  const std::string missing = dir.file("no-such/libcudnn.so.9");
  const std::string command = "LABRUN_CUDNN_LIBRARY='" + missing + "' '" + test::testaid() + "' sweep '" + config +
                              "' --device cuda -q -o '" + out + "' > '" + out + ".log' 2>&1";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  const std::vector<Json> lines = read_jsonl(out);
  ASSERT_EQ(lines.size(), 3u) << "a header and two points: " << command;
  const std::string why = lines[0]["environment"]["device"]["cudnn"].value("unavailable", "");
  EXPECT_NE(why.find(missing), std::string::npos) << lines[0]["environment"]["device"].dump();
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const Json& p = lines[i];
    if (p["variant"] == "tiled") {
      EXPECT_EQ(p["status"], "ok") << p.dump();
    } else {
      EXPECT_EQ(p["status"], "not_supported") << p.dump();
      EXPECT_NE(p["reason"].get<std::string>().find(missing), std::string::npos) << p.dump();
    }
  }
}

// On a device of compute capability 9.0, in a build with sm_90a code, tiled runs the Hopper kernel (TMA, wgmma;
// flash_forward_sm90.cuh) at D = 128 and FlashAttention-2's (mma.sync) at D = 64, elsewhere FlashAttention-2's: the
// record's kernel breakdown names the one that ran, so every tiled check above covers both kernels on an H100 or H200.
TEST_F(AttentionGpu, TiledNamesTheKernelThatRan) {
  int device = 0, major = 0, minor = 0;
  ASSERT_EQ(cudaGetDevice(&device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), cudaSuccess);
  ASSERT_EQ(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), cudaSuccess);
  const bool hopper = major == 9 && minor == 0 && attention::kernels::sm90::built();
  EXPECT_STREQ(attention::kernels::flash_forward_name(128), hopper ? "flash_forward_sm90" : "flash_forward");
  EXPECT_STREQ(attention::kernels::flash_forward_name(64), "flash_forward");
  for (const std::int64_t d : {64, 128}) {
    const Json rec = run(point("tiled", 1, 2, 1000, d, 1));
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    ASSERT_TRUE(rec.contains("kernels")) << rec.dump();
    ASSERT_EQ(rec["kernels"].size(), 1u) << rec["kernels"].dump();
    EXPECT_EQ(rec["kernels"][0]["op"], attention::kernels::flash_forward_name(static_cast<int>(d)));
  }
}

// Case C12: every buffer is the SDK's (allocated before the setup) and the cuBLAS handle with its workspace is made
// in the variant's setup, so graph replays allocate nothing.
TEST_F(AttentionGpu, C12_GraphReplaysDoNotAllocate) {
  for (const char* v : kVariants) {
    if (!loadable(v)) continue;
    SCOPED_TRACE(v);
    const Point p = point(v, 1, 4, 1024, 128, 1, "graph");
    expect_replays_allocate_nothing(p);
  }
}

// The judged point through the lab pass: every variant ok; the kernel breakdown of naive_out_of_place names the
// out-of-place copy; tiled's TFLOP/s (causal flops, 4 B H S^2 D / 2) printed with the target (>= 150 on an H200).
TEST_F(AttentionGpu, JudgedPointRunsThroughTheLabPass) {
  judge_with(5, 10, 0.5, 0.001);
  lab_.launches = true;  // the traced breakdown (docs/integrity.md)
  for (const char* v : kVariants) {
    if (!loadable(v)) continue;
    SCOPED_TRACE(v);
    const Json rec = run(point(v, 4, 32, 4096, 128, 1));
    ASSERT_EQ(rec["status"], "ok") << rec.dump();
    const double t = real_from_json(rec["timing"]["time_s"]);
    const double tflops = 4.0 * 4 * 32 * 4096.0 * 4096 * 128 / 2 / t / 1e12;
    std::printf("attention %s B=4 H=32 S=4096 D=128 causal: %.3f ms, %.1f TFLOP/s (causal flops)\n", v, t * 1e3,
                tflops);
    EXPECT_GT(t, 0.0);
    if (std::string(v) == "naive_out_of_place") {
      ASSERT_TRUE(rec.contains("kernels")) << "an eager point on a device records its kernel breakdown";
      const std::string breakdown = rec["kernels"].dump();
      for (const char* op : {"qk_gemm", "scale", "mask_fill_copy", "softmax", "pv_gemm"})
        EXPECT_NE(breakdown.find(op), std::string::npos) << op << " missing from the kernel breakdown";
      // The traced breakdown (launches[], from CUPTI's activity records) names cuBLAS's own kernels, which the
      // variant never marks: the two GEMMs, on the lab's stream, each with a shape and a GPU time (lab.launches).
      ASSERT_TRUE(rec.contains("launches")) << "the audit records the iteration's GPU work";
      int library = 0;  // cuBLAS's kernels: nvjet_sm90_*, sm90_xmma_gemm_*, cutlass::*; not labrun's own
      for (const Json& l : rec["launches"]) {
        std::string name = l["name"];
        std::printf("  launch %-8s %-70.70s grid %-12s block %-10s stream %-4s %.3f us\n",
                    l["kind"].get<std::string>().c_str(), name.c_str(), l["grid"].get<std::string>().c_str(),
                    l["block"].get<std::string>().c_str(), l["stream"].get<std::string>().c_str(),
                    real_from_json(l["time_s"]) * 1e6);
        EXPECT_EQ(l["stream"], "lab") << name;
        EXPECT_GT(real_from_json(l["time_s"]), 0.0) << name;
        if (l["kind"] == "kernel" && name.rfind("labrun::", 0) != 0) ++library;
      }
      EXPECT_EQ(library, 2) << "the two GEMMs (QK^T and PV) are cuBLAS's kernels: " << rec["launches"].dump();
    }
  }
}

}  // namespace
}  // namespace labrun
