// Kernels of the softmax experiment and their launchers (the variants' setups: softmax_kernels.cu). The interface
// uses plain pointers and DType so that callers compile with the host compiler; every launch is asynchronous on
// `stream`, checked, and issues nothing when rows == 0 or cols == 0.
//
// Layout: x, y (and unfused's e) are rows x cols elements of the storage dtype (f32 or bf16), row-major,
// 256-byte aligned (cudaMalloc); m and s are `rows` elements of the storage dtype. Computation is in f32.
// Offsets are 64-bit: rows * cols may exceed 2^31.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include <labrun/dtype.hpp>

namespace labrun::softmax::kernels {

/// Launch geometry of a row kernel: a group of `threads_per_row` threads owns one row at a time; a block holds
/// `rows_per_block` groups; blocks stride over the rows (grid-stride), at most as many as can be resident.
struct Geometry {
  int width = 1;            ///< elements per access: 16 bytes (4 f32, 8 bf16) when cols is a multiple, else 1
  int threads_per_row = 1;  ///< G: a power of two in [1, 1024]
  int rows_per_block = 1;   ///< block / G (> 1 only when G < 32)
  int block = 1;            ///< threads per block
  int grid = 0;             ///< blocks: min(row groups, SMs x resident blocks per SM); 0 when there is no work
  bool on_chip = false;     ///< the fused kernels keep the row in registers (cols <= softmax::kOnChipCols)
};

enum class Fused { two_pass, online };

/// Geometry of the fused kernels: on chip, G = the smallest power of two with G x 8 elements >= cols (at most
/// 8 f32 values per thread in registers: 2 16-byte vectors of f32, 1 of bf16); streamed, G = 1024.
/// Queries the occupancy of the kernel it will launch once per (kernel, block) and caches it, so calling this
/// before a graph capture keeps the capture free of module loading. @throws CudaError.
Geometry fused_geometry(Fused algo, DType t, std::int64_t rows, std::int64_t cols, int sm_count);
/// Geometry of unfused's row reductions (rowmax, rowsum): the fused on-chip choice of G, at most 1024,
/// streaming over the row.
Geometry reduce_geometry(DType t, std::int64_t rows, std::int64_t cols, int sm_count);
/// Blocks of unfused's broadcast elementwise kernels (256 threads, two 16-byte vectors per thread per step).
int map_grid(DType t, std::int64_t rows, std::int64_t cols, int sm_count);

/// unfused op 1: m[r] = max_c x[r, c] (exact in the storage dtype).
void rowmax(DType t, const void* x, void* m, std::int64_t rows, std::int64_t cols, int sm_count, cudaStream_t stream);
/// unfused op 2: e[r, c] = exp(x[r, c] - m[r]) in f32 (expf), rounded to the storage dtype.
void exp_sub(DType t, const void* x, const void* m, void* e, std::int64_t rows, std::int64_t cols, int sm_count,
             cudaStream_t stream);
/// unfused op 3: s[r] = sum_c e[r, c], accumulated in f32 (per thread, then a shuffle / shared-memory tree),
/// rounded to the storage dtype.
void rowsum(DType t, const void* e, void* s, std::int64_t rows, std::int64_t cols, int sm_count, cudaStream_t stream);
/// unfused op 4: y[r, c] = e[r, c] / s[r] (IEEE f32 division), rounded to the storage dtype.
void divide(DType t, const void* e, const void* s, void* y, std::int64_t rows, std::int64_t cols, int sm_count,
            cudaStream_t stream);

/// The fused variants, one launch: y = softmax(x) row by row with the max subtracted, f32 in registers.
/// two_pass: the row max, then sum exp(x - max), then y = exp(x - max) * (1 / sum); on chip the row is loaded
/// once and exp(x - max) kept in registers, else the row is read three times (max, sum, write).
/// online: each thread's running (max m, sum d of exp(x - m)), rescaled as m grows, merged across the group by
/// m = max(m1, m2), d = d1 exp(m1 - m) + d2 exp(m2 - m); on chip the row is loaded once and
/// y = exp(x - m_thread) * (exp(m_thread - M) / D), else read twice ((m, d) pass, write pass).
/// y is written with streaming stores (evict-first), so that re-read rows stay in L2.
void fused(Fused algo, DType t, const void* x, void* y, std::int64_t rows, std::int64_t cols, int sm_count,
           cudaStream_t stream);

}  // namespace labrun::softmax::kernels
