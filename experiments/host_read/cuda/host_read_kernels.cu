#include "host_read/cuda/host_read_kernels.cuh"

#include <algorithm>

#include "cuda_check.hpp"
#include "host_read/host_read_step.hpp"

namespace labrun::host_read::kernels {

namespace {

// The block's sum of `v` (one value per thread) in a fixed order: shared-memory tree, then thread 0 has it.
__device__ __forceinline__ float block_sum(float v) {
  __shared__ float s[kBlock];
  s[threadIdx.x] = v;
  __syncthreads();
#pragma unroll
  for (int w = kBlock / 2; w > 0; w /= 2) {
    if (threadIdx.x < w) s[threadIdx.x] += s[threadIdx.x + w];
    __syncthreads();
  }
  return s[0];
}

// Not __restrict__: src and x are the same array from step 1 on.
__global__ void __launch_bounds__(kBlock) update_kernel(const float* src, float* x, std::int64_t n, float c,
                                                        float* __restrict__ partials) {
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

__global__ void __launch_bounds__(kBlock) finalize_kernel(const float* __restrict__ partials, int count,
                                                          float* __restrict__ loss) {
  float acc = 0;
  for (int i = threadIdx.x; i < count; i += kBlock) acc += partials[i];
  const float total = block_sum(acc);
  if (threadIdx.x == 0) *loss = total;
}

}  // namespace

int step_grid(std::int64_t n, int sm_count) {
  static const int resident = [] {
    int b = 0;
    LABRUN_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, update_kernel, kBlock, 0));
    return std::max(b, 1);
  }();
  const std::int64_t wanted = (n + kBlock - 1) / kBlock;
  const std::int64_t cap = std::min<std::int64_t>(kMaxBlocks, static_cast<std::int64_t>(resident) * std::max(sm_count, 1));
  return static_cast<int>(std::max<std::int64_t>(1, std::min(wanted, cap)));
}

void update(const float* src, float* x, std::int64_t n, float c, float* partials, int grid, cudaStream_t stream) {
  update_kernel<<<grid, kBlock, 0, stream>>>(src, x, n, c, partials);
  LABRUN_CUDA_LAUNCHED();
}

void finalize(const float* partials, int count, float* loss, cudaStream_t stream) {
  finalize_kernel<<<1, kBlock, 0, stream>>>(partials, count, loss);
  LABRUN_CUDA_LAUNCHED();
}

}  // namespace labrun::host_read::kernels
