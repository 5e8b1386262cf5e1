// The softmax experiment: row-wise softmax of a row-major [rows x cols] matrix, three ways.
//
//   y[r, c] = exp(x[r, c] - max_r) / sum_c' exp(x[r, c'] - max_r),   max_r = max_c x[r, c]
//
// x and y are stored in the point's dtype (f32 or bf16); every variant computes in f32 and always subtracts
// the row max first. The variants differ in how many passes over the row they make and what they keep on chip:
//   unfused   four kernels as an eager framework runs them: m = rowmax(x); e = exp(x - m); s = rowsum(e);
//             y = e / s, every intermediate stored in the storage dtype (Scratch e of rows x cols, m and s of rows);
//   two_pass  one fused kernel, a group of threads per row: the row max, then the sum of exp(x - max), then
//             y = exp(x - max) / sum; the row is kept in registers when cols <= kOnChipCols, else re-read;
//   online    one fused kernel: the running max and the rescaled running sum in one pass (Milakov & Gimelshein,
//             "Online normalizer calculation for softmax", arXiv:1805.02867, 2018), merged across threads with
//             the same rule, then the output pass; on chip as two_pass.
// Shared by the host and CUDA implementations. Formulas (tolerance, cost model): docs/experiments/softmax.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include <labrun/dtype.hpp>
#include <labrun/point.hpp>
#include "softmax_shape.hpp"

namespace labrun::softmax {

enum class Variant { unfused, two_pass, online };
const char* to_string(Variant v);
/// @throws std::invalid_argument for an unknown name.
Variant parse_variant(const std::string& name);

/// A softmax point's axes, typed. The point's axes are `elements` (rows * cols) and `cols`; rows is derived.
struct Params {
  Variant variant = Variant::online;
  std::int64_t rows = 1;      ///< rows of the matrix, >= 0: elements / cols (derived, not an axis)
  std::int64_t cols = 1;      ///< row length (the size axis), >= 0
  DType dtype = DType::f32;   ///< storage dtype of x, y and the unfused intermediates (f32 or bf16)
  std::string mode = "eager"; ///< "eager" or "graph"
  /// rows * cols elements.
  std::int64_t elements() const { return rows * cols; }
};
/// rows = elements / cols. @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has
/// a bad value (a dtype other than f32 or bf16 included, and an `elements` that is not a multiple of `cols`:
/// never rounded; the lab reports such a point not_supported through shape_unsupported() first).
Params params_of(const Point& point);

/// nullopt if the point's `elements` is a multiple of its `cols` (rows = elements / cols is an integer), else the
/// reason (every variant's VariantDecl::unsupported).
std::optional<std::string> shape_unsupported(const Point& point);

/// Host copy of a point's input matrix x: rows x cols elements, row-major, in the storage dtype (bf16 as raw bits).
struct Inputs {
  DType dtype = DType::f32;
  std::int64_t rows = 0, cols = 0;
  std::vector<std::uint64_t> storage;  ///< 8-byte aligned backing of data()
  void* data() { return storage.data(); }
  const void* data() const { return storage.data(); }
  std::int64_t elements() const { return rows * cols; }
  std::size_t data_bytes() const { return static_cast<std::size_t>(elements()) * dtype_bytes(dtype); }
  /// Element i (row-major flat index) decoded exactly to double.
  double value(std::int64_t i) const;
};

/// The per-row offset added to the uniform values of row r: +80 for r % 4 == 0 (x in [72, 88): without the max
/// subtraction the f32 sum of exp(x) overflows, e^72 * 4096 > FLT_MAX), -120 for r % 4 == 2 (x in [-128, -112):
/// exp(x) underflows to 0 in f32, e^-112 < 2^-149), 0 otherwise.
double row_offset(std::int64_t row);

/// Draws x from a counter-based generator (SplitMix64 of seed and flat index; Steele, Lea & Flood 2014):
/// x[r, c] = row_offset(r) + uniform[-8, 8), rounded to the dtype. Reproducible for a seed, identical on every
/// thread count. @throws std::invalid_argument for negative sizes or a dtype other than f32 / bf16.
Inputs generate(std::int64_t rows, std::int64_t cols, DType dtype, std::uint64_t seed);

/// Float64 reference of y on the stored inputs, with the per-row quantities the tolerance needs.
struct Reference {
  std::int64_t rows = 0, cols = 0;
  std::vector<double> y;       ///< rows x cols: exp(x - max) / sum exp(x - max), in double
  std::vector<double> max;     ///< per row: max_c x[r, c]
  std::vector<double> spread;  ///< per row: max - min (R_r of the tolerance)
};
/// Reference over `inputs`: max exact, exp and the sum in double (the sum sequential over the row).
Reference reference(const Inputs& inputs);

/// Per-element relative error bound of a variant's y (docs/experiments/softmax.md, "Tolerance"):
///   rel(r, c) = (|t| + R_r + 11 ceil(log2 cols) + ceil(sqrt cols) + 20) u + k_s u_s,  t = x[r, c] - max_r
/// u = 2^-24 (f32 compute), u_s the unit roundoff of the storage dtype (f32 2^-24, bf16 2^-8), k_s = 4 for
/// unfused (e, s and y stored, the rounded e's summed) and 1 for two_pass / online (y stored).
struct Tolerance {
  double u = 0;          ///< unit roundoff of the f32 compute type
  double u_s = 0;        ///< unit roundoff of the storage dtype
  double k_s = 1;        ///< storage roundings on an element's path
  double log_term = 0;   ///< 11 ceil(log2 cols) + ceil(sqrt cols) + 20 (cols >= 1)
  double floor = 0;      ///< absolute floor: 4 x the smallest subnormal of the storage dtype (2^-147 f32, 2^-131 bf16)
  double scale = 1;      ///< lab.tolerance_scale
  /// Relative bound of one element with |t| = max_r - x and row spread R.
  double relative(double t_abs, double spread) const { return (t_abs + spread + log_term) * u + k_s * u_s; }
  /// Absolute bound of one element: scale * (1.25 * y_ref * relative + floor); the factor 1.25 covers the
  /// second-order terms (relative bounds are at most 4 * 2^-8 + 1e-4 here).
  double bound(double y_ref, double t_abs, double spread) const {
    return scale * (1.25 * y_ref * relative(t_abs, spread) + floor);
  }
};
/// @throws std::invalid_argument for a dtype other than f32 / bf16.
Tolerance tolerance(Variant variant, DType dtype, std::int64_t cols, double scale);

/// Compares y (rows x cols in the storage dtype, bf16 as raw bits) element by element with the reference.
/// Check::value = abs_error = worst |y - y_ref| / bound over all elements (NaN or inf: +inf), reference 0,
/// tolerance 1; passed iff every element is within its bound and every row's sum (in double) is within
/// sum_c bound + cols 2^-52 of 1. detail: mismatches, worst (row, col, got, expected, bound), the worst row-sum
/// ratio and row, the relative L2 error, the tolerance's constants.
Check compare(const Inputs& inputs, const void* y, const Reference& ref, const Tolerance& tol);

/// Per-iteration cost model of a variant as its kernels issue it (docs/experiments/softmax.md, "Cost model").
/// N = rows * cols, s = dtype bytes:
///   unfused:  read 4 N s + 2 rows s, written 2 N s + 2 rows s, 4 launches
///   two_pass: on chip read N s, else 3 N s; written N s; 1 launch
///   online:   on chip read N s, else 2 N s; written N s; 1 launch
/// compulsory 2 N s; flop 5 N (max, subtract, exp counted as one op, add, divide); no host syncs.
Cost cost(const Params& params);

/// Working-set bytes of a point's buffers (x, y, and unfused's e, m, s).
double working_set_bytes(const Params& params);

/// Scratch of the host implementations (f32 per-chunk values of one row), sized at first use.
struct HostScratch {
  std::vector<std::uint64_t> e, m, s;  ///< unfused: e (rows x cols), m and s (rows), in the storage dtype
  std::vector<float> row;              ///< fused variants: one row's exp values in f32
  std::vector<float> a, b;             ///< per-chunk partials (tree reductions)
};

/// Elements each host "thread" owns in the fused host variants (one chunk, consecutive); the partials of the
/// chunks are combined by a pairwise tree, as the GPU's threads are by shuffles.
inline constexpr int kHostChunk = 8;

/// One iteration of `variant` on the host into y (rows x cols, storage dtype), following the variant's op
/// order and rounding: unfused stores m, e, s and y in the storage dtype (as an eager framework does); two_pass
/// and online keep f32 in registers and round only y. Sums accumulate in f32 (per chunk, then a pairwise tree).
void host_run(Variant variant, const Inputs& inputs, void* y, HostScratch& scratch);

/// Inputs and references shared by the variants of consecutive points with the same (rows, cols, dtype,
/// seed): the sweep puts variants innermost, so each input set is generated once.
class InputCache {
 public:
  /// The inputs for `params` and lab `seed`; regenerated (and the reference dropped) when the key changes.
  std::shared_ptr<const Inputs> inputs(const Params& params, std::uint64_t seed);
  /// The reference of the cached inputs (computed once per input set).
  std::shared_ptr<const Reference> reference_for(const Params& params, std::uint64_t seed);

 private:
  std::string key_;
  std::shared_ptr<const Inputs> inputs_;
  std::shared_ptr<const Reference> ref_;
};

/// The seed of a point's inputs: the lab seed mixed with the input-defining axes (rows, cols, dtype; not the
/// variant, so that all variants see the same data).
std::uint64_t input_seed(const Params& params, std::uint64_t lab_seed);

/// Registers the experiment, its axes and variants with their host implementations.
void register_experiment(class Registry& registry);

/// Adds the CUDA implementation of every variant (experiments/softmax/cuda/softmax_cuda.cpp).
void register_cuda(class Registry& registry);

}  // namespace labrun::softmax
