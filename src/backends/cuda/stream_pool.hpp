// Stream-ordered allocations from the device's default memory pool, for workloads that allocate inside an
// iteration as an eager framework does (a size the host learns from the device), and the pool policy of a
// caching allocator while such workloads live.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>

#include "cuda_check.hpp"
#include "cuda_runtime.hpp"
#include "cupti_trace.hpp"

namespace labrun {

/// A stream-ordered pool allocation (cudaMallocAsync) of `bytes`, freed on the stream when the scope ends (also
/// when a launch throws); counted as work memory in DeviceMemory from allocation to free (host order).
/// @throws CudaError if the allocation fails.
class PoolBuffer {
 public:
  PoolBuffer(std::size_t bytes, cudaStream_t stream) : stream_(stream) {
    const DeclaredCalls declared;  // the SDK's declared way to allocate in an iteration (audit, cupti_trace.hpp)
    LABRUN_CUDA(cudaMallocAsync(&ptr_, bytes, stream));
    bytes_ = static_cast<long long>(bytes);
    DeviceMemory::account(MemoryRole::work, bytes_);
  }
  ~PoolBuffer() {
    const DeclaredCalls declared;
    DeviceMemory::account(MemoryRole::work, -bytes_);
    // During a capture that a host sync invalidated (case C11), the allocation was a node of the graph being
    // dropped: there is nothing to free, and cudaFreeAsync would only report the invalidated capture.
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream_, &capture) != cudaSuccess || capture != cudaStreamCaptureStatusNone) {
      (void)cudaGetLastError();
      return;
    }
    LABRUN_CUDA_NOTHROW(cudaFreeAsync(ptr_, stream_));
  }
  PoolBuffer(const PoolBuffer&) = delete;
  PoolBuffer& operator=(const PoolBuffer&) = delete;
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  long long bytes_ = 0;
  cudaStream_t stream_;
};

/// As an eager framework's caching allocator does, the device's default pool keeps memory freed with
/// cudaFreeAsync while any CachingPool lives (with the default release threshold, 0, the pool returns it to the
/// OS at every synchronization, and a workload that allocates per iteration would pay an unmap + map each time).
/// Counted, since interleaved points live together: the last one out hands the memory back (trim) and restores
/// the default threshold, so later points' cudaMalloc can use it. Default-constructed: holds nothing.
class CachingPool {
 public:
  CachingPool() = default;
  /// Holds the policy for `device`. @throws CudaError if the default pool cannot be read.
  explicit CachingPool(int device) {
    LABRUN_CUDA(cudaDeviceGetDefaultMemPool(&pool_, device));
    if (users()++ == 0) set_threshold(UINT64_MAX);
  }
  CachingPool(CachingPool&& o) noexcept : pool_(std::exchange(o.pool_, nullptr)) {}
  CachingPool& operator=(CachingPool&& o) noexcept {
    std::swap(pool_, o.pool_);
    return *this;
  }
  ~CachingPool() {
    if (!pool_ || --users() > 0) return;
    (void)cudaDeviceSynchronize();
    set_threshold(0);
    LABRUN_CUDA_NOTHROW(cudaMemPoolTrimTo(pool_, 0));
  }

 private:
  static int& users() {
    static int count = 0;
    return count;
  }
  void set_threshold(std::uint64_t bytes) noexcept {
    LABRUN_CUDA_NOTHROW(cudaMemPoolSetAttribute(pool_, cudaMemPoolAttrReleaseThreshold, &bytes));
  }
  cudaMemPool_t pool_ = nullptr;
};

}  // namespace labrun
