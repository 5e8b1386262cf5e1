// The gemv experiment: y = A·x, A row-major m × n, x n elements, both f16 (or bf16), y m elements of f32;
// every product and sum in f32. Five variants: one block per row of 256, 512 or 1024 threads
// (`row_block_256/512/1024`), one warp per row with several rows per block (`warp_row`), and the vendor library
// (`cublas`: a cuBLAS GEMM with n = 1 through <labrun/cublas.hpp>). The founding text's roofline point: 2·m·n flop
// over m·n·s + n·s + 4·m bytes, an arithmetic intensity of ~1 flop/byte, so a good kernel is bound by the memory.
// A point's arrays: inputs "A" (m·n) and "x" (n) of the dtype, output "y" (m f32). Shared by gemv.cpp
// (LABRUN_EXPERIMENT), the CUDA side (cuda/gemv_kernels.cu) and the tests. Formulas (tolerance, cost model):
// docs/experiments/gemv.md.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <labrun/experiment.hpp>

#include "gemv_shape.hpp"

namespace labrun::gemv {

enum class Variant { row_block_256, row_block_512, row_block_1024, warp_row, cublas };
const char* to_string(Variant v);
/// The point's variant. @throws std::invalid_argument for an unknown name.
Variant variant_of(const Args& args);

/// Threads that own one row in the variant's kernel (its group G): 256, 512 or 1024 for row_block_*, 32 for
/// warp_row; 0 for cublas (the library picks its own).
int threads_per_row(Variant v);

/// Workspace the cublas variant gives its cuBLAS handle (bytes): cuBLAS's own default on Hopper, and what
/// labrun::cublas::Handle takes when none is named. Counted in the peak work memory (not the working set: the
/// host backend does not allocate it, so its size cap treats every variant alike).
inline constexpr double kCublasWorkspaceBytes = 32.0 * 1024 * 1024;

/// Draws A (m·n elements) and x (n) from a counter-based generator (SplitMix64 of a seed and the flat index;
/// Steele, Lea & Flood 2014; x from the second seed splitmix64(seed ^ 0x78)): |v| = (1 + 15·(1 − U))/16 with U
/// uniform in [0, 1), so |v| in [1/16, 1] after rounding to the dtype, never zero and never subnormal, with a
/// random sign. Reproducible for a seed, identical on every thread count. @throws std::invalid_argument for a dtype
/// other than f16 / bf16.
void generate(const View& a, const View& x, std::uint64_t seed);

/// Float64 reference on the stored inputs A (m × n) and x: y[i] = Σ_j A[i, j]·x[j] and abs_sum[i] = Σ_j |A[i, j]·x[j]|
/// (the condition of row i's sum, which the tolerance scales with), both accumulated sequentially in double
/// (products exact); the Reference arrays "y" and "abs_sum", m values each.
void reference(const View& a, const View& x, std::int64_t m, std::int64_t n, Reference& ref);

/// Depth of the variant's summation at row length n: the most f32 roundings any one product passes through on
/// its way into y[i] (docs/experiments/gemv.md, "Tolerance"). For the kernels of this package, with W = 8 on the
/// vector path (n % 8 == 0) and W = 1 otherwise, nv = n / W and G = threads_per_row(v):
///   ceil(nv / G)  (one thread's sequential fma chain per accumulator)  + log2(W) (its W accumulators combined)
///   + 5 (the warp butterfly) + 5 more for row_block_* (the butterfly over the warps' sums).
/// cublas: n (any order of n terms, the worst case: the library's order is unknown).
std::int64_t depth(Variant v, std::int64_t n);

/// The per-row bound |y[i] − ref[i]| <= bound(s[i]):
///   bound = scale · (γ(d, u_e) + 2·γ(n, u_64)) · s[i],   γ(k, u) = k·u / (1 − k·u)  (Higham, ASNA 2nd ed., 3.1)
/// d = depth(v, n); u_e = u_32 = 2^-24 for the package's kernels (round-to-nearest fma and add), 4·u_32 for cublas
/// (tensor cores may truncate and align several products at once: Fasi, Higham, Mikaitis & Pranesh, PeerJ CS
/// 2021); u_64 = 2^-53 covers the reference's and s's own error. Products of two f16 (or bf16) values are exact
/// in f32, and y is stored as the f32 accumulator (no output rounding), so the sums are the only error.
struct Tolerance {
  std::int64_t depth = 0;
  double u_effective = 0;  ///< u_e
  double gamma = 0;        ///< γ(d, u_e) + 2·γ(n, u_64)
  double scale = 1;        ///< lab.tolerance_scale
  double bound(double abs_sum) const { return scale * gamma * abs_sum; }
};
/// The check compares each y[i] with tolerance(v, n, 1).bound(abs_sum[i]) (Compare::elementwise: the lab applies
/// lab.tolerance_scale); NaN or inf never passes (case C07).
/// @throws std::invalid_argument when d·u_e >= 1 (no bound: n beyond ~4·10^6 for cublas).
Tolerance tolerance(Variant v, std::int64_t n, double scale);

/// Per-iteration cost model (docs/experiments/gemv.md, "Cost model"), s = dtype bytes (2):
///   bytes_read = m·n·s + n·s (A once, x once: the blocks' re-reads of x hit L2, not DRAM), bytes_written = 4·m,
///   compulsory = the same, flop = 2·m·n, launches 1, host_syncs 0, for every variant (cuBLAS's traffic cannot
///   be seen: it is held to the same compulsory bytes); peak_work_bytes = 4·m (y), plus kCublasWorkspaceBytes for
///   cublas. The working set (the lab's estimate, from the arrays) is A, x and y for every variant.
Cost cost(Variant variant, std::int64_t m, std::int64_t n, DType dtype);

/// One iteration of `variant` on the host from A (m × n) and x of `dtype` into y (m f32 values), with the kernels'
/// arithmetic: row_block_* and warp_row through row_dot() with the variant's G (bit for bit what the GPU kernel
/// computes); cublas as a plain f32 dot product per row (sequential fma over j), since cuBLAS's own order is not
/// known. Rows in parallel.
void host_run(Variant variant, std::int64_t m, std::int64_t n, DType dtype, const std::uint16_t* a,
              const std::uint16_t* x, float* y);

/// The host twin of the package's kernels for one row: G threads (a multiple of 32, at most 1024), thread t
/// accumulates the vectors j = t, t + G, t + 2G, … (W elements each; W = 8 when n % 8 == 0, else 1) with fma
/// into W accumulators (one per position in the vector), combines them ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)); the
/// warps' lanes are summed by the butterfly of offsets 16, 8, 4, 2, 1, and for G > 32 the warps' sums likewise
/// (zero-padded to 32). `a_row` and `x`: n elements of `dtype`.
float row_dot(const std::uint16_t* a_row, const std::uint16_t* x, std::int64_t n, DType dtype, int threads_per_row);

}  // namespace labrun::gemv
