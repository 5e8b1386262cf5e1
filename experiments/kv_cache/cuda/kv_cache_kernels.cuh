// Kernels of the kv_cache experiment and their host launchers. Plain pointers and sizes, so callers compile with
// the host compiler; every launch is asynchronous on `stream` and checked. Layouts: kv_cache.hpp.
//
// The cache's elements are moved as raw bits: 16-byte units (uint4) when one token of one row, D·s bytes, is a
// multiple of 16 (D = 128 bf16 is 256 bytes), else one element at a time (2 or 4 bytes). cudaMalloc's 256-byte
// alignment and whole-token offsets keep every unit aligned. Indices are 64-bit. A launcher with nothing to move
// (rows or elements 0) launches nothing: kv_cache's steps always move at least one token.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "kv_cache/kv_cache_values.hpp"

namespace labrun::kv_cache::kernels {

/// Threads per block of every kv_cache kernel.
inline constexpr int kBlock = 256;

/// Fills the prefill P [rows][n0][D] and the token table T [n1 − n0][rows][D] with value_bits(f, seed, i), i the
/// element's index in the final cache [rows][n1][D]: bit for bit kv_cache::generate's. Either pointer may be null
/// when its tensor is empty.
void generate(Format f, std::int64_t rows, std::int64_t n0, std::int64_t n1, std::int64_t D, std::uint64_t seed,
              void* prefill, void* tokens, cudaStream_t stream);

/// One concat step (torch.cat along the token axis): out [rows][n + 1][D] from old [rows][n][D] and the token
/// tok [rows][D]: out row r = old row r, then tok row r. One kernel; reads (n + 1)·rows·D elements, writes as many.
/// `out` must not overlap `old` or `tok`.
void concat_step(std::size_t elem_bytes, const void* old, const void* tok, void* out, std::int64_t rows,
                 std::int64_t n, std::int64_t D, cudaStream_t stream);

/// One preallocated step: cache[r][t][:] = tok[r][:] for every row r, the cache at row stride `capacity` tokens.
/// One kernel; reads and writes rows·D elements.
void write_slot(std::size_t elem_bytes, const void* tok, void* cache, std::int64_t rows, std::int64_t capacity,
                std::int64_t t, std::int64_t D, cudaStream_t stream);

/// dst[r][0..tokens) = src[r][0..tokens) for every row, src at row stride src_tokens, dst at dst_tokens (tokens of
/// D elements): the prefill copied into the preallocated cache (setup, not an iteration).
void copy_rows(std::size_t elem_bytes, const void* src, std::int64_t src_tokens, void* dst, std::int64_t dst_tokens,
               std::int64_t rows, std::int64_t tokens, std::int64_t D, cudaStream_t stream);

}  // namespace labrun::kv_cache::kernels
