// Kernels of the layout experiment and their host launchers (the variants' CUDA side, LABRUN_CUDA_VARIANTS, is in
// layout_kernels.cu). The interface uses plain pointers and DType so that
// callers compile with the host compiler; every launch is asynchronous on `stream` and checked, and a launcher
// issues nothing when rows == 0 or cols == 0 (case C04: no zero-sized grid).
//
// Layout: x is rows x cols elements of the storage dtype (f32 or bf16), row-major; a transpose's output is
// cols x rows, row-major; bias is cols elements; every other buffer rows x cols. Buffers come from cudaMalloc
// (256-byte aligned). Copies move bits (f32 as 32-bit words, bf16 as 16-bit words); sums are f32 additions
// rounded once to the storage dtype (round to nearest even). Offsets are 64-bit: rows·cols may exceed 2^31.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include <labrun/dtype.hpp>

namespace labrun::layout::kernels {

/// Threads per block of every layout kernel: the transposes use 32 x 8, the row kernels 256 in a 2-D shape.
inline constexpr int kBlock = 256;
/// Tile side of the scalar tiled transpose (elements) and threads per tile row; each thread copies
/// kTile / kTileRows = 4 elements of a tile column.
inline constexpr int kTile = 32;
inline constexpr int kTileRows = 8;

/// Which kernel transpose_tiled uses.
enum class TilePath {
  automatic,  ///< pairs when rows and cols are both even (layout::uses_pairs), else scalar
  pairs,      ///< 64 x 64-element tiles moved as 2-element words (8 bytes f32, 4 bytes bf16), 2 x 2 register
              ///< transposes, two 32 x 33-word shared tiles; requires rows and cols even
  scalar,     ///< the classic 32 x 32-element tile of 32 x 33 elements, one element per access
};

/// transpose_naive: out[j·rows + i] = x[i·cols + j], one thread per element (blocks of 32 x 8 threads over 32
/// columns x 8 rows of x, grid-stride beyond 65535 block rows): a warp reads 32 consecutive elements of a row
/// (coalesced) and writes 32 elements `rows` apart (one sector each).
void transpose_naive(DType t, const void* x, void* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream);

/// transpose_tiled: the same result through shared memory; a block of 32 x 8 threads reads a tile row by row
/// (coalesced), synchronises, and writes the transposed tile row by row (coalesced); the +1 column of padding puts
/// a tile column's elements in 32 different banks. Blocks stride over the tiles beyond the grid's limits.
/// @throws std::invalid_argument for TilePath::pairs with an odd rows or cols.
void transpose_tiled(DType t, const void* x, void* out, std::int64_t rows, std::int64_t cols, cudaStream_t stream,
                     TilePath path = TilePath::automatic);

/// repeat_materialized's first kernel, `.contiguous()` of the broadcast view: out[i·cols + j] = bias[j] for
/// every row i (bits copied), a full rows x cols write.
void repeat_rows(DType t, const void* bias, void* out, std::int64_t rows, std::int64_t cols, int sm_count,
                 cudaStream_t stream);

/// The consumer of both broadcast variants: y[i·cols + j] = x[i·cols + j] + b[i·b_row_stride + j] in f32,
/// rounded once to the dtype. b_row_stride is 0 (bias through the zero-stride view) or cols (the materialised
/// repeat): the same code, so the two variants give the same bits. `y` must not alias x or b.
/// @throws std::invalid_argument unless b_row_stride is 0 or cols.
void add_rows(DType t, const void* x, const void* b, std::int64_t b_row_stride, void* y, std::int64_t rows,
              std::int64_t cols, int sm_count, cudaStream_t stream);

/// Looks up the occupancy of the row kernels of dtype t (once per process), which their launch shape uses: call before
/// a graph capture, so no runtime query runs inside one. @throws std::invalid_argument for other dtypes.
void prepare(DType t);

}  // namespace labrun::layout::kernels
