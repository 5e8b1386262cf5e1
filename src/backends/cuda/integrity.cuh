// The device side of the integrity checks (docs/integrity.md): the content hash of device memory, the same number
// src/lab/guards.hpp's content_hash gives for the same bytes on the host, so a changed input is found at the
// speed of one read of it; and a process-wide page-locked staging buffer for the guards' copies back.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace labrun {

/// content_hash (src/lab/guards.hpp) of each block (device pointer, bytes): one cub::DeviceReduce::Sum per block over
/// its mixed 8-byte words, all enqueued on `stream`, the results copied back together and waited for once. Every
/// pointer must be 8-byte aligned (cudaMalloc's 256-byte alignment is). @throws CudaError for a failed call.
std::vector<std::uint64_t> device_content_hashes(const std::vector<std::pair<const void*, std::size_t>>& blocks,
                                                 cudaStream_t stream);

/// A guard region of device memory (src/lab/guards.hpp): where it starts, and its bytes.
struct GuardRegion {
  unsigned char* data = nullptr;
  std::size_t bytes = 0;
};

/// Fills every region with kGuardByte: labrun's own kernel, enqueued on `stream` (never a cudaMemset: on the H200 a
/// cudaMemset of the guards made the same process's timed kernels 5-13% slower for the rest of its life, where a
/// fill by kernel moved nothing; results/h200/integrity/costs/). Does not wait. @throws CudaError for a failed launch.
void fill_guard_regions(const std::vector<GuardRegion>& regions, cudaStream_t stream);

/// For each region, the first and the last byte offset that no longer holds kGuardByte (nullopt when it is intact):
/// one kernel per 64 regions on `stream` after the work queued there, the offsets copied back together, one wait.
/// @throws CudaError for a failed call.
std::vector<std::pair<std::optional<std::size_t>, std::optional<std::size_t>>> scan_guard_regions(
    const std::vector<GuardRegion>& regions, cudaStream_t stream);

/// Page-locked host memory of at least `bytes`, kept for the process (grown when asked for more; never freed, so no
/// CUDA call runs at static teardown). What it held before is lost when it grows.
unsigned char* pinned_staging(std::size_t bytes);

}  // namespace labrun
