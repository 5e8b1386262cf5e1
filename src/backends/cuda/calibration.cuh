// Kernels that measure the device itself: a read-only stream (memory ceiling for read-heavy mixes), an empty
// kernel (launch overhead) and a spin kernel of known duration (timing self-tests, case C08).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace labrun::lab_kernels {

/// Reads `bytes` (a multiple of 16) from `src` with 16-byte loads and writes one word per block into `sink`
/// (at least 8 * sm_count words), so the loads cannot be optimised away.
void read_stream(const void* src, std::size_t bytes, unsigned int* sink, int sm_count, cudaStream_t stream);
/// Number of words read_stream() writes into `sink`.
int read_stream_sink_words(int sm_count);
/// Cold-L2 flush: reads `bytes` (a multiple of 16, at least twice the L2 size) of `buffer` with plain loads,
/// leaving L2 full of clean lines of `buffer` (a memset would leave dirty lines, written back during the timed
/// work that evicts them). Writes into `sink` (read_stream_sink_words words) only to keep the loads live.
void l2_flush(const void* buffer, std::size_t bytes, unsigned int* sink, int sm_count, cudaStream_t stream);
/// An empty kernel: <<<1, 1>>>.
void empty(cudaStream_t stream);
/// One thread that spins for `seconds` by the global nanosecond timer (%globaltimer).
void spin(double seconds, cudaStream_t stream);
/// nvbench's blocking kernel: one thread that holds `stream` until the host stores non-zero to `*release`, or
/// sets `*timed_out` = 1 and returns after `timeout_s`. Both pointers are device views of host-mapped memory.
void block_stream(const int* release, int* timed_out, double timeout_s, cudaStream_t stream);

}  // namespace labrun::lab_kernels

namespace labrun::lab_kernels {

/// FP32 FMA throughput kernel: `threads_per_sm * sm_count` threads each run kFmaChains independent chains of
/// `iterations` dependent FMAs. Writes one float per thread to `sink` (so nothing is optimised away).
/// Returns the flop executed: 2 * threads * kFmaChains * iterations.
double fma_chain(float* sink, int sm_count, int iterations, cudaStream_t stream);
/// Floats fma_chain() writes into `sink`.
std::size_t fma_chain_sink_floats(int sm_count);

/// Fills `count` bf16 values (raw 16-bit storage) with uniform values in [-1, 1) from a hash of the index and
/// `seed` (never all zeros: timing on zeros flatters matrix units, device/METHOD.md).
void fill_random_bf16(void* data, std::size_t count, unsigned long long seed, cudaStream_t stream);

}  // namespace labrun::lab_kernels
