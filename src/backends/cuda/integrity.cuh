// The device side of the integrity checks (docs/integrity.md): the content hash of device memory, the same number
// src/lab/guards.hpp's content_hash gives for the same bytes on the host, so a changed input is found at the
// speed of one read of it; and a process-wide page-locked staging buffer for the guards' copies back.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace labrun {

/// content_hash (src/lab/guards.hpp) of each block (device pointer, bytes): one cub::DeviceReduce::Sum per block over
/// its mixed 8-byte words, all enqueued on `stream`, the results copied back together and waited for once. Every
/// pointer must be 8-byte aligned (cudaMalloc's 256-byte alignment is). @throws CudaError for a failed call.
std::vector<std::uint64_t> device_content_hashes(const std::vector<std::pair<const void*, std::size_t>>& blocks,
                                                 cudaStream_t stream);

/// Page-locked host memory of at least `bytes`, kept for the process (grown when asked for more; never freed, so no
/// CUDA call runs at static teardown). What it held before is lost when it grows.
unsigned char* pinned_staging(std::size_t bytes);

}  // namespace labrun
