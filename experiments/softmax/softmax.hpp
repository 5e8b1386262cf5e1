// The softmax experiment: row-wise softmax of a row-major [rows x cols] matrix, three ways.
//
//   y[r, c] = exp(x[r, c] - max_r) / sum_c' exp(x[r, c'] - max_r),   max_r = max_c x[r, c]
//
// x and y are stored in the point's dtype (f32 or bf16); every variant computes in f32 and always subtracts
// the row max first. The variants differ in how many passes over the row they make and what they keep on chip:
//   unfused   four kernels as an eager framework runs them: m = rowmax(x); e = exp(x - m); s = rowsum(e);
//             y = e / s, every intermediate stored in the storage dtype (scratch e of rows x cols, m and s of rows);
//   two_pass  one fused kernel, a group of threads per row: the row max, then the sum of exp(x - max), then
//             y = exp(x - max) / sum; the row is kept in registers when cols <= kOnChipCols, else re-read;
//   online    one fused kernel: the running max and the rescaled running sum in one pass (Milakov & Gimelshein,
//             "Online normalizer calculation for softmax", arXiv:1805.02867, 2018), merged across threads with
//             the same rule, then the output pass; on chip as two_pass.
// A point's arrays (LABRUN_EXPERIMENT(softmax) in softmax.cpp): input "x", output "y" (rows x cols of the dtype),
// unfused's scratch "e" (rows x cols), "m" and "s" (rows). The reference holds "y" (float64), and per row "max"
// and "spread". Shared by the host side, the CUDA side (this header compiles under nvcc's C++17) and the tests.
// Formulas (tolerance, cost model): docs/experiments/softmax.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <labrun/experiment.hpp>

namespace labrun::softmax {

/// Rows up to this many columns are read from DRAM once and kept in registers by two_pass and online (as f32: at
/// most 8 elements per thread, up to 1024 threads per row, i.e. up to 32 KB of registers per row); longer rows
/// are re-read (two_pass three times, online twice).
inline constexpr std::int64_t kOnChipCols = 8192;

enum class Variant { unfused, two_pass, online };
const char* to_string(Variant v);
/// @throws std::invalid_argument for an unknown name.
Variant parse_variant(const std::string& name);

/// A softmax point's axes, typed. The point's axes are `elements` (rows * cols) and `cols`; rows is derived.
struct Params {
  Variant variant = Variant::online;
  std::int64_t rows = 1;     ///< rows of the matrix, >= 0: elements / cols (derived, not an axis)
  std::int64_t cols = 1;     ///< row length (the size axis), >= 0
  DType dtype = DType::f32;  ///< storage dtype of x, y and the unfused intermediates (f32 or bf16)
  /// rows * cols elements.
  std::int64_t elements() const { return rows * cols; }
};
/// rows = elements / cols. @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has
/// a bad value (a dtype other than f32 or bf16 included, and an `elements` that is not a multiple of `cols`:
/// never rounded; the lab reports such a point not_supported through shape_unsupported() first).
Params params_of(const Args& args);

/// nullopt if the point's `elements` is a multiple of its `cols` (rows = elements / cols is an integer), else the
/// reason (every variant's unsupported rule).
std::optional<std::string> shape_unsupported(const Args& args);

/// The text the inputs' seed is drawn from, as before the SDK: "softmax/<rows>x<cols>/<dtype>".
std::string seed_text(const Params& params);

/// The per-row offset added to the uniform values of row r: +80 for r % 4 == 0 (x in [72, 88): without the max
/// subtraction the f32 sum of exp(x) overflows, e^72 * 4096 > FLT_MAX), -120 for r % 4 == 2 (x in [-128, -112):
/// exp(x) underflows to 0 in f32, e^-112 < 2^-149), 0 otherwise.
double row_offset(std::int64_t row);

/// Draws x (rows x cols of `x.elem`, f32 or bf16) from a counter-based generator (SplitMix64 of seed and flat
/// index; Steele, Lea & Flood 2014): x[r, c] = row_offset(r) + uniform[-8, 8), rounded to the dtype. Reproducible
/// for a seed, identical on every thread count. @throws std::invalid_argument for cols < 1 with elements, or a
/// dtype other than f32 / bf16.
void generate(const View& x, std::int64_t cols, std::uint64_t seed);

/// Float64 reference of y over x (rows x cols): y = exp(x - max) / sum exp(x - max) with max exact, exp and the
/// sum in double (the sum sequential over the row); per row the max and the spread max - min (R_r of the
/// tolerance). Each output array must hold rows x cols (y) or rows (max, spread) doubles.
void reference(const View& x, std::int64_t cols, double* y, double* max, double* spread);

/// Per-element relative error bound of a variant's y (docs/experiments/softmax.md, "Tolerance"):
///   rel(r, c) = (|t| + R_r + 11 ceil(log2 cols) + ceil(sqrt cols) + 20) u + k_s u_s,  t = x[r, c] - max_r
/// u = 2^-24 (f32 compute), u_s the unit roundoff of the storage dtype (f32 2^-24, bf16 2^-8), k_s = 4 for
/// unfused (e, s and y stored, the rounded e's summed) and 1 for two_pass / online (y stored).
struct Tolerance {
  double u = 0;         ///< unit roundoff of the f32 compute type
  double u_s = 0;       ///< unit roundoff of the storage dtype
  double k_s = 1;       ///< storage roundings on an element's path
  double log_term = 0;  ///< 11 ceil(log2 cols) + ceil(sqrt cols) + 20 (cols >= 1)
  double floor = 0;     ///< absolute floor: 4 x the smallest subnormal of the storage dtype (2^-147 f32, 2^-131 bf16)
  double scale = 1;     ///< lab.tolerance_scale (1 in the experiment's check: the lab applies the scale)
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

/// The experiment's check (Compare, with lab.tolerance_scale applied by the lab):
///  - "y" element by element: |y - y_ref| <= scale * tolerance(...).bound(y_ref, |t|, R_r) (Compare::elementwise;
///    NaN or inf never passes); notes: rel_l2_error, worst_row, worst_col and the tolerance's constants;
///  - "row_sum": the sum of the worst row (in double, by |sum - 1| over its bound) against 1 with tolerance
///    sum_c bound_c + cols 2^-52 / scale (the double summation's own rounding is not scaled, as before the SDK)
///    (Compare::scalar); notes: row, rows.
void check(Compare& c);

/// Per-iteration cost model of a variant as its kernels issue it (docs/experiments/softmax.md, "Cost model").
/// N = rows * cols, s = dtype bytes:
///   unfused:  read 4 N s + 2 rows s, written 2 N s + 2 rows s, 4 launches
///   two_pass: on chip read N s, else 3 N s; written N s; 1 launch
///   online:   on chip read N s, else 2 N s; written N s; 1 launch
/// compulsory 2 N s; flop 5 N (max, subtract, exp counted as one op, add, divide); no host syncs.
Cost cost(const Params& params);

/// Elements each host "thread" owns in the fused host variants (one chunk, consecutive); the partials of the
/// chunks are combined by a pairwise tree, as the GPU's threads are by shuffles.
inline constexpr int kHostChunk = 8;

/// One chunk's (running max, rescaled sum) of the online rule.
struct MD {
  float m, d;
};

/// Work space of the host implementations, sized once per point (HostScratch::sized) before the iterations:
/// unfused's e (rows x cols), m and s (rows) in the storage dtype (the Layout's scratch arrays), and the fused
/// variants' f32 row of exp values and per-chunk partials.
struct HostScratch {
  void *e = nullptr, *m = nullptr, *s = nullptr;
  std::vector<float> row, a;
  std::vector<MD> local, work;
  /// Sizes the fused variants' vectors for rows of `cols`.
  void size_for(std::int64_t cols);
};

/// One iteration of `variant` on the host from x into y (rows x cols, storage dtype), following the variant's op
/// order and rounding: unfused stores m, e, s and y in the storage dtype (as an eager framework does); two_pass
/// and online keep f32 in registers and round only y. Sums accumulate in f32 (per chunk, then a pairwise tree).
void host_run(Variant variant, const View& x, std::int64_t cols, void* y, HostScratch& scratch);

}  // namespace labrun::softmax
