// The occupancy helper: blocks of a kernel resident on one SM at once, asked once per (kernel, block size, shared
// memory) and process. Header-only; compiles under nvcc's C++17.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <tuple>

#include <labrun/cuda.cuh>

namespace labrun::kernels {

/// Blocks of `block_threads` threads of `kernel` resident on one SM at once with `smem_bytes` of dynamic shared
/// memory (cudaOccupancyMaxActiveBlocksPerMultiprocessor), at least 1. The first call per (kernel, block_threads,
/// smem_bytes) asks the runtime (and loads the kernel); later calls read a cache, so a variant's setup calls it
/// before any graph capture and its iterations may call it again. Thread-safe.
/// @throws std::runtime_error as labrun::cuda::check on a CUDA error.
inline int resident_blocks_per_sm(const void* kernel, int block_threads, std::size_t smem_bytes = 0) {
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, std::size_t>, int> cache;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto key = std::make_tuple(kernel, block_threads, smem_bytes);
  auto it = cache.find(key);
  if (it == cache.end()) {
    int blocks = 0;
    labrun::cuda::check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, block_threads, smem_bytes),
                        "cudaOccupancyMaxActiveBlocksPerMultiprocessor", __FILE__, __LINE__);
    it = cache.emplace(key, blocks > 0 ? blocks : 1).first;
  }
  return it->second;
}

/// resident_blocks_per_sm for a __global__ function `kernel` (any signature).
template <class... Args>
int resident_blocks_per_sm(void (*kernel)(Args...), int block_threads, std::size_t smem_bytes = 0) {
  return resident_blocks_per_sm(reinterpret_cast<const void*>(kernel), block_threads, smem_bytes);
}

/// resident_blocks_per_sm(Kernel, BlockThreads) asked once per process and kept in a function-local static: later
/// calls cost a guard check, cheap enough for an iteration's launch path. The first call loads the kernel, so make
/// it in a variant's setup, before any graph capture.
template <auto Kernel, int BlockThreads>
int resident_blocks() {
  static const int blocks = resident_blocks_per_sm(Kernel, BlockThreads);
  return blocks;
}

}  // namespace labrun::kernels
