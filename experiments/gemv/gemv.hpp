// The gemv experiment: y = A·x, A row-major m × n, x n elements, both f16 (or bf16), y m elements of f32;
// every product and sum in f32. Five variants: one block per row of 256, 512 or 1024 threads
// (`row_block_256/512/1024`), one warp per row with several rows per block (`warp_row`), and the vendor library
// (`cublas`: a cuBLAS GEMM with n = 1 through labrun::cublas). The founding text's roofline point: 2·m·n flop over
// m·n·s + n·s + 4·m bytes, an arithmetic intensity of ~1 flop/byte, so a good kernel is bound by the memory.
// Shared by the host and CUDA implementations. Formulas (tolerance, cost model): docs/experiments/gemv.md.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include <labrun/dtype.hpp>
#include "gemv_shape.hpp"
#include <labrun/point.hpp>

namespace labrun::gemv {

enum class Variant { row_block_256, row_block_512, row_block_1024, warp_row, cublas };
const char* to_string(Variant v);
/// @throws std::invalid_argument for an unknown name.
Variant parse_variant(const std::string& name);

/// Threads that own one row in the variant's kernel (its group G): 256, 512 or 1024 for row_block_*, 32 for
/// warp_row; 0 for cublas (the library picks its own).
int threads_per_row(Variant v);

/// Workspace the cublas variant gives its cuBLAS handle (bytes): cuBLAS's own default on Hopper, and what
/// labrun::cublas::Handle takes when none is named. Counted in the peak work memory (not the working set).
inline constexpr double kCublasWorkspaceBytes = 32.0 * 1024 * 1024;

/// A gemv point's axes, typed.
struct Params {
  Variant variant = Variant::warp_row;
  std::int64_t m = 0;           ///< rows of A = elements of y (>= 0)
  std::int64_t n = 0;           ///< columns of A = elements of x (>= 0)
  DType dtype = DType::f16;     ///< storage dtype of A and x: f16 or bf16; y is always f32
  std::string mode = "eager";   ///< "eager" or "graph"
};
/// @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has a bad value (a dtype other
/// than f16 or bf16, a negative size).
Params params_of(const Point& point);

/// Host copy of a point's inputs: A (m × n, row-major) and x (n), raw 16-bit patterns of the storage dtype.
struct Inputs {
  DType dtype = DType::f16;
  std::int64_t m = 0, n = 0;
  std::vector<std::uint16_t> a;  ///< m·n elements, a[i·n + j] = A[i, j]
  std::vector<std::uint16_t> x;  ///< n elements
  std::size_t a_bytes() const { return a.size() * 2; }
  std::size_t x_bytes() const { return x.size() * 2; }
  /// Element decoded exactly to float (every f16 and bf16 value is an f32).
  float decode(std::uint16_t bits) const { return dtype == DType::bf16 ? bf16_to_float(bits) : half_to_float(bits); }
};

/// Draws A and x from a counter-based generator (SplitMix64 of a seed and the flat index; Steele, Lea & Flood
/// 2014; x from a second seed derived from the first): |v| = (1 + 15·(1 − U))/16 with U uniform in [0, 1), so
/// |v| in [1/16, 1] after rounding to the dtype, never zero and never subnormal, with a random sign. Reproducible
/// for a seed, identical on every thread count. @throws std::invalid_argument for negative sizes or a dtype other
/// than f16 / bf16.
Inputs generate(std::int64_t m, std::int64_t n, DType dtype, std::uint64_t seed);

/// Float64 reference on the stored inputs: y[i] = Σ_j A[i, j]·x[j] and s[i] = Σ_j |A[i, j]·x[j]| (the condition
/// of row i's sum, which the tolerance scales with), both accumulated sequentially in double (products exact).
struct Reference {
  std::vector<double> y;        ///< m values
  std::vector<double> abs_sum;  ///< m values
};
Reference reference(const Inputs& inputs);

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
/// @throws std::invalid_argument when d·u_e >= 1 (no bound: n beyond ~4·10^6 for cublas).
Tolerance tolerance(Variant v, std::int64_t n, double scale);

/// Compares y (m f32 values) with the reference row by row. Check::value = abs_error = the worst
/// |y − ref| / bound over the rows (NaN or inf: +inf; 0 where both are 0), reference 0, tolerance 1; passes iff
/// every row is within its bound (case C07: NaN never passes). detail: mismatches, the worst row with its y,
/// reference, bound and s, max_abs_error, the relative L2 error, the tolerance's constants.
Check compare(const Inputs& inputs, const float* y, const Reference& ref, const Tolerance& tol);

/// Per-iteration cost model (docs/experiments/gemv.md, "Cost model"), s = dtype bytes (2):
///   bytes_read = m·n·s + n·s (A once, x once: the blocks' re-reads of x hit L2, not DRAM), bytes_written = 4·m,
///   compulsory = the same, flop = 2·m·n, launches 1, host_syncs 0, for every variant (cuBLAS's traffic cannot
///   be seen: it is held to the same compulsory bytes); peak_work_bytes = peak_work_bytes(params).
Cost cost(const Params& params);
/// Device bytes beyond the inputs a variant holds at its peak: y (4·m), plus kCublasWorkspaceBytes for cublas.
double peak_work_bytes(const Params& params);
/// Bytes of a point's buffers: A, x and y, for every variant. cuBLAS's 32 MiB workspace is left out: the host
/// backend does not allocate it (so the host's size cap treats every variant alike), and on a device it is
/// negligible beside the memory check's margin; it is in peak_work_bytes, which the lab measures.
double working_set_bytes(const Params& params);

/// One iteration of `variant` on the host into y (m f32 values), with the kernels' arithmetic: row_block_* and
/// warp_row through row_dot() with the variant's G (bit for bit what the GPU kernel computes); cublas as a plain
/// f32 dot product per row (sequential fma over j), since cuBLAS's own order is not known. Rows in parallel.
void host_run(Variant variant, const Inputs& inputs, float* y);

/// The host twin of the package's kernels for one row: G threads (a multiple of 32, at most 1024), thread t
/// accumulates the vectors j = t, t + G, t + 2G, … (W elements each; W = 8 when n % 8 == 0, else 1) with fma
/// into W accumulators (one per position in the vector), combines them ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)); the
/// warps' lanes are summed by the butterfly of offsets 16, 8, 4, 2, 1, and for G > 32 the warps' sums likewise
/// (zero-padded to 32). `a_row` and `x`: n elements of `dtype`.
float row_dot(const std::uint16_t* a_row, const std::uint16_t* x, std::int64_t n, DType dtype, int threads_per_row);

/// Inputs and references shared by the variants of consecutive points with the same (m, n, dtype, seed): the sweep
/// puts variants innermost, so each input set is generated and referenced once.
class InputCache {
 public:
  /// The inputs for `params` and lab `seed`; regenerated (the old set released first) when the key changes.
  std::shared_ptr<const Inputs> inputs(const Params& params, std::uint64_t seed);
  /// The reference of the cached inputs, computed once per input set.
  std::shared_ptr<const Reference> reference_for(const Params& params, std::uint64_t seed);

 private:
  std::string key_;
  std::shared_ptr<const Inputs> inputs_;
  std::shared_ptr<const Reference> ref_;
};

/// The seed of a point's inputs: the lab seed mixed with the input-defining axes (m, n, dtype), not the variant.
std::uint64_t input_seed(const Params& params, std::uint64_t lab_seed);

/// Registers the experiment, its axes and variants with their host implementations.
void register_experiment(class Registry& registry);

/// Adds the CUDA implementation of every variant (experiments/gemv/cuda/gemv_cuda.cpp).
void register_cuda(class Registry& registry);

}  // namespace labrun::gemv
