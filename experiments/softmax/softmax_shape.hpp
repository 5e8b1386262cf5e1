// Shape constants of the softmax experiment shared by the host cost model (softmax.hpp) and the CUDA kernels
// (cuda/softmax_kernels.cu, compiled by nvcc as C++17, so this header includes nothing).
#pragma once

#include <cstdint>

namespace labrun::softmax {

/// Rows up to this many columns are read from DRAM once and kept in registers by two_pass and online (as f32: at
/// most 8 elements per thread, up to 1024 threads per row, i.e. up to 32 KB of registers per row); longer rows
/// are re-read (two_pass three times, online twice).
inline constexpr std::int64_t kOnChipCols = 8192;

}  // namespace labrun::softmax
