// The host_read experiment's kernels and its CUDA variants (LABRUN_CUDA_VARIANTS). A step is two kernels: the
// update with the block sums of its result, then one block summing those into the step's loss. The grid is fixed
// per point (step_grid, looked up in the setup), so the summation order, and so every loss, is the same in every
// iteration, eager or replayed. Every buffer is the SDK's or the setup's (allocated before any capture, case C12).
// item_per_step reads each step's loss through Launch::read_to_host (a counted host sync, case C09: the host waits
// for the GPU to drain before it can launch the next step); accumulate_on_device leaves the losses in the output
// array and copies all k once after the loop: read_to_host in eager mode (one sync), an asynchronous copy into the
// same pinned buffer in graph mode (a node of the graph; the host reads it after the replays are waited for).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <memory>

#include <labrun/cuda.cuh>
#include <labrun/kernels/occupancy.cuh>
#include <labrun/kernels/reduce.cuh>
#include <labrun/experiment.hpp>

#include "host_read/host_read.hpp"

namespace labrun::host_read {

namespace {

// Threads per block of both kernels.
constexpr int kBlock = 256;

// The block's sum of `v` (one value per thread) in kernels/reduce.cuh's fixed order; every thread has it.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float warp_sums[kBlock / 32];
  return ::labrun::kernels::group_reduce(v, kBlock, 0.0f, warp_sums, ::labrun::kernels::Sum{});
}

// x[i] = fmaf(0.75, src[i], c) for i < n, and partials[b] = the f32 sum of block b's results (each thread sums its
// grid-stride elements in order, then kernels/reduce.cuh's fixed order over the block). Not __restrict__: src and x are
// the same array from step 1 on. One launch also for n = 0 (partials then 0).
__global__ void __launch_bounds__(kBlock)
    update_kernel(const float* src, float* x, std::int64_t n, float c, float* __restrict__ partials) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  float acc = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < n; i += stride) {
    const float v = fmaf(kDecay, src[i], c);  // host twin: std::fma in host_read::host_run
    x[i] = v;
    acc += v;
  }
  const float total = block_sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// *loss = the f32 sum of partials[0..count) (a fixed order: strided per thread, then the block's butterflies). One
// block.
__global__ void __launch_bounds__(kBlock)
    finalize_kernel(const float* __restrict__ partials, int count, float* __restrict__ loss) {
  float acc = 0;
  for (int i = threadIdx.x; i < count; i += kBlock) acc += partials[i];
  const float total = block_sum(acc);
  if (threadIdx.x == 0) *loss = total;
}

// Blocks of a step's update for n elements: one element per thread up to the blocks resident at once (occupancy ×
// sm_count), capped at kMaxBlocks; at least 1. The occupancy is looked up once per process: call it in the setup,
// outside any graph capture.
int step_grid(std::int64_t n, int sm_count) {
  const int resident = ::labrun::kernels::resident_blocks<&update_kernel, kBlock>();
  const std::int64_t wanted = (n + kBlock - 1) / kBlock;
  const std::int64_t cap = std::min<std::int64_t>(kMaxBlocks,
                                                  static_cast<std::int64_t>(resident) * std::max(sm_count, 1));
  return static_cast<int>(std::max<std::int64_t>(1, std::min(wanted, cap)));
}

// A variant's setup, returning its iteration: the pinned slot the host reads into and the grid, before any capture.
Step launcher(Launch& setup) {
  const Params p = params_of(setup.args());
  const std::int64_t k = p.steps, n = p.n;
  const float* x0 = setup.in("x0").as<const float>();
  float* x = setup.scratch("x").as<float>();
  float* partials = setup.scratch("partials").as<float>();
  float* losses = setup.out("loss").as<float>();
  float* host = static_cast<float*>(
      setup.allocate_pinned(static_cast<std::size_t>(std::max<std::int64_t>(k, 4)) * sizeof(float)));
  const int grid = step_grid(n, setup.sm_count());
  const bool item = p.variant == Variant::item_per_step, graph = p.mode == "graph";
  // What the host does with each loss it reads (a running sum, as a training log would), kept past the iteration.
  auto seen_sink = std::make_shared<double>(0);
  return [=](Launch& l) {
    cudaStream_t st = l.stream();
    const double step_bytes = 8.0 * static_cast<double>(n) + 4;
    double seen = 0;
    for (std::int64_t j = 0; j < k; ++j) {
      update_kernel<<<grid, kBlock, 0, st>>>(j == 0 ? x0 : x, x, n, offset(j), partials);
      LABRUN_CUDA_LAUNCHED();
      if (j == 0) l.mark("update_reduce", 8.0 * static_cast<double>(n));
      finalize_kernel<<<1, kBlock, 0, st>>>(partials, grid, losses + j);
      LABRUN_CUDA_LAUNCHED();
      if (j == 0) l.mark("finalize", 4);
      if (item) {
        l.read_to_host(host + j, losses + j, sizeof(float));
        seen += host[j];
        if (j == 0) {
          l.mark("loss_to_host", 4);
          // The host's wake-up from the sync and its next launch: not kernel time.
          l.mark("host_round_trip", 0);
        }
      }
    }
    // The other k − 1 steps under one mark (per-step marks would give the breakdown thousands of entries); for
    // item_per_step its time includes their host round trips.
    if (k > 1) l.mark("remaining_steps", static_cast<double>(k - 1) * (step_bytes + (item ? 4 : 0)));
    if (!item && k > 0) {
      const std::size_t bytes = static_cast<std::size_t>(k) * sizeof(float);
      if (graph) LABRUN_CUDA_CHECK(cudaMemcpyAsync(host, losses, bytes, cudaMemcpyDeviceToHost, st));
      else l.read_to_host(host, losses, bytes);
      l.mark("losses_to_host", static_cast<double>(bytes));
    }
    *seen_sink = seen;
  };
}

}  // namespace

LABRUN_CUDA_VARIANTS(host_read) { e.cuda("item_per_step", launcher).cuda("accumulate_on_device", launcher); }

}  // namespace labrun::host_read
