// Header-only helpers for an experiment's .cu file: checked CUDA calls and launches, and the grid helper
// (the occupancy helper is labrun/kernels/occupancy.cuh). Compiles
// under nvcc's C++17 for the includer's CUDA architectures; nothing here is compiled into labrun's libraries.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <stdexcept>
#include <string>

namespace labrun::cuda {

/// Throws std::runtime_error("FILE:LINE: EXPR: cudaErrorName: description") when `status` is not cudaSuccess.
/// The lab records the message as the point's error (a sticky error makes the point `device_fault`).
inline void check(cudaError_t status, const char* expr, const char* file, int line) {
  if (status == cudaSuccess) return;
  throw std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + expr + ": " +
                           cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

/// Blocks to cover `items` work items at `items_per_block` each, at least 1 and at most `cap` (e.g. the blocks
/// resident at once for a grid-stride loop; 0: no cap).
inline int grid_for(std::int64_t items, std::int64_t items_per_block, std::int64_t cap = 0) {
  std::int64_t g = items_per_block > 0 ? (items + items_per_block - 1) / items_per_block : 1;
  if (cap > 0 && g > cap) g = cap;
  if (g > 0x7fffffff) g = 0x7fffffff;
  return g < 1 ? 1 : static_cast<int>(g);
}

}  // namespace labrun::cuda

/// Checks a CUDA runtime call: LABRUN_CUDA_CHECK(cudaMemsetAsync(p, 0, n, s));
#define LABRUN_CUDA_CHECK(expr) ::labrun::cuda::check((expr), #expr, __FILE__, __LINE__)
/// Checks the launch just made (configuration errors): kernel<<<g, b, 0, s>>>(...); LABRUN_CUDA_LAUNCHED();
#define LABRUN_CUDA_LAUNCHED() ::labrun::cuda::check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
