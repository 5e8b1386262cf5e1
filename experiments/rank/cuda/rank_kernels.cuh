// Kernels of the rank experiment and their host launchers. The interface uses plain pointers so that callers
// compile with the host compiler; every launch is asynchronous on `stream` and checked.
//
// Layout: the mask is n bytes, each 0 or 1; outputs and temporaries are int64 arrays. Every pointer must come
// from cudaMalloc / cudaMallocAsync (256-byte aligned: the vector paths use 16-byte loads and stores). n may be
// any value in [0, 2^62): 64-bit indexing throughout, tails handled, n = 0 launches nothing (or only CUB's
// trivial kernels).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace labrun::rank::kernels {

/// Threads per block of the elementwise kernels.
inline constexpr int kBlock = 256;

/// out[i] = value for i < n: 16-byte stores (two int64 per store), grid-stride. (indexed_assign's fill_(-1).)
void fill(std::int64_t* out, std::int64_t value, std::int64_t n, int sm_count, cudaStream_t stream);

/// Temporary bytes of count() (CUB DeviceReduce::Sum of the mask widened to int64) for up to n elements.
std::size_t count_temp_bytes(std::int64_t n);
/// *count = number of ones in mask[0, n), as int64, on the device (CUB DeviceReduce::Sum; 1-2 launches).
void count(const std::uint8_t* mask, std::int64_t n, std::int64_t* count, void* temp, std::size_t temp_bytes,
           cudaStream_t stream);

/// out[j] = j for j < count: 16-byte stores. (arange(count).)
void arange(std::int64_t* out, std::int64_t count, int sm_count, cudaStream_t stream);

/// Temporary bytes of select_indices() for up to n elements.
std::size_t select_temp_bytes(std::int64_t n);
/// idx[0, *selected) = the indices i < n with mask[i] = 1, in increasing order (CUB DeviceSelect::Flagged
/// over a counting iterator: reads the mask, writes 8 bytes per selected index); *selected on the device.
void select_indices(const std::uint8_t* mask, std::int64_t n, std::int64_t* idx, std::int64_t* selected, void* temp,
                    std::size_t temp_bytes, cudaStream_t stream);

/// out[idx[j]] = values[j] for j < count (16-byte loads of idx and values, 8-byte scattered stores).
void scatter(std::int64_t* out, const std::int64_t* idx, const std::int64_t* values, std::int64_t count, int sm_count,
             cudaStream_t stream);

/// Temporary bytes of inclusive_count() for up to n elements.
std::size_t scan_temp_bytes(std::int64_t n);
/// s[i] = mask[0] + ... + mask[i] as int64 (CUB DeviceScan::InclusiveSum over the mask through a widening
/// transform iterator: single pass, decoupled look-back; reads n bytes, writes 8n).
void inclusive_count(const std::uint8_t* mask, std::int64_t n, std::int64_t* s, void* temp, std::size_t temp_bytes,
                     cudaStream_t stream);

/// out[i] = mask[i] ? s[i] - 1 : -1 (where(mask, s - 1, -1)): tiles of 4096 elements, the tile's mask staged
/// through shared memory with one 16-byte load per thread, s read and out written as 16-byte vectors; a grid of
/// the blocks resident at once (select_rank_grid), grid-stride over the tiles. Any grid >= 1 is correct.
void select_rank(const std::uint8_t* mask, const std::int64_t* s, std::int64_t* out, std::int64_t n, int grid,
                 cudaStream_t stream);
/// The grid of select_rank(): the kernel's resident blocks per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor,
/// queried once) x sm_count, at most one block per full tile, at least 1. Call it outside any stream capture
/// (the workload's constructor does).
int select_rank_grid(std::int64_t n, int sm_count);

/// Temporary bytes of fused_rank() for up to n elements.
std::size_t fused_temp_bytes(std::int64_t n);
/// out[i] = mask[i] ? (ones in mask[0, i)) : -1 in one pass: a single-pass scan with decoupled look-back
/// (Merrill & Garland 2016, through CUB's TilePrefixCallbackOp and ScanTileState) over tiles of 4096 mask bytes,
/// one 16-byte load per thread; ranks are written through a shared-memory transpose (cub::BlockStore
/// WARP_TRANSPOSE), so stores are coalesced. Two launches (tile-status init, scan). Reads n bytes, writes 8n.
void fused_rank(const std::uint8_t* mask, std::int64_t n, std::int64_t* out, void* temp, std::size_t temp_bytes,
                cudaStream_t stream);

}  // namespace labrun::rank::kernels
