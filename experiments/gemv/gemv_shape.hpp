// Launch-shape constants of the gemv experiment shared by the host twins of the kernels (gemv.cpp) and the CUDA
// kernels (cuda/gemv_kernels.cu, compiled by nvcc, so this header includes only <cstdint>).
#pragma once

#include <cstdint>

namespace labrun::gemv {

/// Elements of one 16-byte vector access of a 2-byte dtype (f16, bf16): the vector path's width W. Used when
/// n % 8 == 0, so that every row starts 16-byte aligned; otherwise the scalar path (W = 1).
inline constexpr int kVectorWidth = 8;
/// 16-byte vectors of A (and of x) each thread has in flight per step of its stride over the row.
inline constexpr int kUnroll = 4;
/// Threads of a warp: the group of warp_row and the first level of every reduction.
inline constexpr int kWarp = 32;
/// warp_row: rows (warps) per block of kWarpRowWarps * 32 threads.
inline constexpr int kWarpRowWarps = 8;

}  // namespace labrun::gemv
