// Kernels of the gemv experiment and their host launchers (the variants' CUDA side, LABRUN_CUDA_VARIANTS, is in
// gemv_kernels.cu). The interface uses plain pointers and DType so that
// callers compile with the host compiler; every launch is asynchronous on `stream` and checked, and none is
// issued when m == 0.
//
// Layout: A is m × n elements of the storage dtype (f16 or bf16), row-major; x is n elements; y is m f32
// values. A and x must be 16-byte aligned (cudaMalloc gives 256). Offsets are 64-bit (m·n may exceed 2^31).
// Arithmetic: each product in f32 (exact for two f16 or two bf16 values), accumulated with fmaf; the order is
// exactly gemv::row_dot's (gemv.hpp), so the kernels and their host twins give the same bits.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include <labrun/dtype.hpp>

namespace labrun::gemv::kernels {

/// Launch geometry of a gemv kernel.
struct Geometry {
  int width = 1;            ///< elements per access: 8 (16 bytes) when n % 8 == 0, else 1 (scalar path)
  int threads_per_row = 0;  ///< G: 256/512/1024 (row_block), 32 (warp_row)
  int rows_per_block = 1;   ///< 1 (row_block), kWarpRowWarps (warp_row)
  int block = 0;            ///< threads per block
  std::int64_t grid = 0;    ///< blocks: m (row_block), ceil(m / kWarpRowWarps) (warp_row); 0 when m == 0
};

/// Geometry of row_block with `threads` (256, 512 or 1024) per row, or of warp_row (`threads` = 32).
/// @throws std::invalid_argument for another thread count, negative sizes, or m beyond the grid limit.
Geometry geometry(int threads, std::int64_t m, std::int64_t n);

/// row_block_T: one block of `threads` threads per row (grid = m). Thread t strides over the row's 16-byte vectors
/// j = t, t + T, … with kUnroll vectors of A (streamed: ld.global.nc.L1::no_allocate, so A does not evict x from
/// L1) and of x (__ldg: cached in L1, shared by every block of the SM) in flight, 8 f32 accumulators; then a
/// warp butterfly (__shfl_xor_sync) and the warps' sums through shared memory, summed by warp 0's butterfly.
/// n % 8 != 0: the same structure with scalar loads. @throws std::invalid_argument (geometry, misaligned A or x),
/// std::runtime_error (a CUDA error).
void row_block(int threads, DType t, const void* a, const void* x, float* y, std::int64_t m, std::int64_t n,
               cudaStream_t stream);

/// warp_row: one warp per row, kWarpRowWarps rows per block of kWarpRowWarps·32 threads; each lane strides over
/// the row as row_block's threads do (G = 32), the sum is one warp butterfly, no shared memory, no block sync.
/// @throws as row_block.
void warp_row(DType t, const void* a, const void* x, float* y, std::int64_t m, std::int64_t n, cudaStream_t stream);

/// Loads every gemv kernel of dtype t into the context (cudaFuncGetAttributes), so that a graph capture that
/// follows does no module loading. @throws std::invalid_argument for a dtype other than f16 / bf16,
/// std::runtime_error (a CUDA error).
void prepare(DType t);

/// Fills y (m f32 values) with all-ones bytes: NaN, the correctness check's poison.
void poison(float* y, std::int64_t m, cudaStream_t stream);

}  // namespace labrun::gemv::kernels
