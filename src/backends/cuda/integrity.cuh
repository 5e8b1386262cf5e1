// The device side of the integrity checks (docs/integrity.md): the content hash of device memory, the same number
// src/lab/guards.hpp's content_hash gives for the same bytes on the host, so a changed input is found at the
// speed of one read of it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace labrun {

/// content_hash (src/lab/guards.hpp) of `bytes` bytes of device memory at `data`: one cub::DeviceReduce::Sum over
/// the mixed 8-byte words, enqueued on `stream`, waited for. `data` must be 8-byte aligned (cudaMalloc's 256-byte
/// alignment is). @throws CudaError for a failed call.
std::uint64_t device_content_hash(const void* data, std::size_t bytes, cudaStream_t stream);

}  // namespace labrun
