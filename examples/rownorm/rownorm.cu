// The CUDA variants of rownorm: one thread per row, and one block per row with labrun's block reduction.
#include <labrun/cuda.cuh>
#include <labrun/experiment.hpp>
#include <labrun/kernels/reduce.cuh>

#include "rownorm.hpp"

namespace {

__global__ void thread_per_row(const float* x, float* y, std::int64_t rows, std::int64_t cols) {
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float s = 0;
  for (std::int64_t j = 0; j < cols; ++j) s += x[r * cols + j] * x[r * cols + j];
  const float inv = 1.0f / sqrtf(s);
  for (std::int64_t j = 0; j < cols; ++j) y[r * cols + j] = x[r * cols + j] * inv;
}

__global__ void __launch_bounds__(rownorm::kBlock) block_per_row(const float* x, float* y, std::int64_t cols) {
  __shared__ float warp_sums[rownorm::kBlock / 32];
  const float* row = x + static_cast<std::int64_t>(blockIdx.x) * cols;
  float s = 0;
  for (std::int64_t j = threadIdx.x; j < cols; j += rownorm::kBlock) s += row[j] * row[j];
  // The row's sum in every thread (a block of kBlock threads, kBlock / 32 warps' partials in shared memory).
  s = labrun::kernels::group_reduce(s, rownorm::kBlock, 0.0f, warp_sums, labrun::kernels::Sum{});
  const float inv = 1.0f / sqrtf(s);
  for (std::int64_t j = threadIdx.x; j < cols; j += rownorm::kBlock)
    y[static_cast<std::int64_t>(blockIdx.x) * cols + j] = row[j] * inv;
}

}  // namespace

LABRUN_CUDA_VARIANTS(rownorm) {
  e.cuda("thread_per_row", [](labrun::Launch& l) {
    const std::int64_t rows = l.args().i64("rows"), cols = l.args().i64("cols");
    thread_per_row<<<labrun::cuda::grid_for(rows, 128), 128, 0, l.stream()>>>(l.in("x").as<const float>(),
                                                                              l.out("y").as<float>(), rows, cols);
    LABRUN_CUDA_LAUNCHED();
    l.mark("thread_per_row", 8.0 * rows * cols);
  });
  e.cuda("block", [](labrun::Launch& l) {
    const std::int64_t rows = l.args().i64("rows"), cols = l.args().i64("cols");
    block_per_row<<<static_cast<unsigned>(rows), rownorm::kBlock, 0, l.stream()>>>(l.in("x").as<const float>(),
                                                                                   l.out("y").as<float>(), cols);
    LABRUN_CUDA_LAUNCHED();
    l.mark("block_per_row", 8.0 * rows * cols);
  });
}
