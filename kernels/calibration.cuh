// Kernels that measure the device itself: a read-only stream (memory ceiling for read-heavy mixes), an empty
// kernel (launch overhead) and a spin kernel of known duration (timing self-tests, case C08).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace labrun::kernels {

/// Reads `bytes` (a multiple of 16) from `src` with 16-byte loads and writes one word per block into `sink`
/// (at least 8 * sm_count words), so the loads cannot be optimised away.
void read_stream(const void* src, std::size_t bytes, unsigned int* sink, int sm_count, cudaStream_t stream);
/// Number of words read_stream() writes into `sink`.
int read_stream_sink_words(int sm_count);
/// An empty kernel: <<<1, 1>>>.
void empty(cudaStream_t stream);
/// One thread that spins for `seconds` by the global nanosecond timer (%globaltimer).
void spin(double seconds, cudaStream_t stream);

}  // namespace labrun::kernels
