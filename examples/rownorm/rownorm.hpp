// Row-wise L2 normalisation, y[r][c] = x[r][c] / sqrt(sum_c x[r][c]^2), of a row-major rows x cols f32 matrix:
// what both compilers share (this header compiles under nvcc's C++17 and the host's C++20).
#pragma once

namespace rownorm {

/// Threads per block of the `block` variant (one block per row).
inline constexpr int kBlock = 256;

}  // namespace rownorm
