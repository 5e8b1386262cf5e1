// Kernels of the host_read experiment and their host launchers (plain pointers, so callers compile with the host
// compiler). Every launch is asynchronous on `stream` and checked. A step is two kernels: the update with the
// block sums of its result, then one block summing those into the step's loss. The grid is fixed per point
// (step_grid), so the summation order, and so every loss, is the same in every iteration, eager or replayed.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace labrun::host_read::kernels {

/// Threads per block of both kernels.
inline constexpr int kBlock = 256;

/// Blocks of a step's update for n elements: one element per thread up to the blocks resident at once
/// (occupancy × sm_count), capped at host_read::kMaxBlocks; at least 1. Looks the occupancy up once per process:
/// call it outside any graph capture (the workload's constructor).
int step_grid(std::int64_t n, int sm_count);

/// x[i] = fmaf(0.75, src[i], c) for i < n (src may equal x: the update in place), and partials[b] = the f32 sum of
/// block b's results (each thread sums its grid-stride elements in order, then a fixed tree over the block), for
/// b < grid. One kernel, also for n = 0 (partials then 0).
void update(const float* src, float* x, std::int64_t n, float c, float* partials, int grid, cudaStream_t stream);

/// *loss = the f32 sum of partials[0..count) (a fixed order: strided per thread, then a tree). One block.
void finalize(const float* partials, int count, float* loss, cudaStream_t stream);

}  // namespace labrun::host_read::kernels
