// The masking experiment: the sum of squares of the elements a boolean mask selects, computed four ways
// (multiply by the mask, boolean indexing, select, sanitize-then-square) plus two GPU-only forms
// (index with a device-side count, and a fused single pass). Shared by the host side, the CUDA side and the tests.
//
// For a point (n, density, dtype, downstream k), with data d[0..n) and mask m[0..n):
//   result = sum over i with m[i] of down^k(d[i]^2),  down(x) = sin(x) * 1.0001
// Every variant computes this same number; they differ in how much work and which synchronizations it takes.
// A point's arrays: inputs "data" (n of the dtype) and "mask" (n bytes, 0 or 1), output "result" (one element of
// the accumulation dtype: f32, or f64 for f64 data), scratch "tmp" (op-by-op variants) and "sel" (compaction).
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>

#include <labrun/experiment.hpp>

namespace labrun::masking {

/// The scale in the downstream op x <- sin(x) * kDownstreamScale (keeps the op from being an identity).
inline constexpr double kDownstreamScale = 1.0001;

enum class Variant { multiply, index, where, sanitize, index_device_count, fused };
const char* to_string(Variant v);

/// A masking point's axes, typed.
struct Params {
  Variant variant = Variant::fused;
  std::int64_t n = 0;        ///< elements
  double density = 0.5;      ///< probability that an element is selected, in [0, 1]
  DType dtype = DType::f32;  ///< storage dtype of the data
  int downstream = 0;        ///< k: times down() is applied to each processed element
  bool nonfinite = false;    ///< plant +inf and NaN in some masked-out slots (case C06)
};
/// @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has a bad value.
Params params_of(const Args& args);

/// Draws the inputs into `data` (n elements of its dtype, f16/bf16 as raw bits) and `mask` (n bytes) from a
/// counter-based generator (SplitMix64 of seed and index; Steele, Lea & Flood 2014): reproducible for a seed,
/// identical on every thread count. |d| is uniform in [0.25, 2) with a random sign, rounded to the dtype —
/// never zero. mask[i] = 1 with probability `density`. With `nonfinite`, a quarter of the masked-out slots
/// hold +inf and a quarter NaN. Returns the number of selected elements.
std::int64_t generate(const View& data, const View& mask, double density, bool nonfinite, std::uint64_t seed);

/// Double-precision reference of the result, with the magnitudes the tolerance needs (stored as the point's
/// Reference values "sum", "sum_abs", "elementwise_error", "selected").
struct Sums {
  double sum = 0;      ///< sum over selected i of down^k(d_i^2)
  double sum_abs = 0;  ///< sum of |down^k(d_i^2)| (scale of the reduction's rounding error)
  /// Sum over selected i of a first-order bound on the absolute rounding error of element i's value after
  /// the square and k downstream steps in the storage dtype (see tolerance()).
  double elementwise_error = 0;
  std::int64_t selected = 0;
};
/// Reference over data and mask with k = downstream; computed in double in 64 fixed chunks summed in order.
Sums reference(const View& data, const View& mask, int downstream);

/// Absolute tolerance for a variant's result (docs/experiments/masking.md, "Correctness tolerance"):
///   tol = scale * ( 2 * elementwise_error + (ceil(log2 n) + ceil(sqrt n)) * u_acc * sum_abs ) + 1e-300
/// elementwise_error (reference()) bounds, to first order, what an eager variant's rounding does to each
/// element: e_0 = (u_c + u_s)|x_0| for the square; per downstream step e_{r+1} = 1.0001 |cos x_r| e_r +
/// (5 u_c + u_s)|x_{r+1}| (sin <= 2 ulp = 4 u_c, CUDA Programming Guide, math functions; the multiply u_c;
/// the store u_s); the factor 2 covers second-order terms. u_s, u_c: unit roundoff of the storage dtype and
/// of the compute type (f32, f64 for f64 data). The reduction term uses u_acc of the accumulation type:
/// ceil(log2 n) for tree (pairwise) summation and ceil(sqrt n) for per-thread sequential runs, by the
/// probabilistic bound lambda*sqrt(n)*u of Higham & Mary, SIAM J. Sci. Comput. 41(5), 2019, with lambda = 1.
/// The bound follows each element's own magnitudes, so it stays well below |reference| even for bf16 with
/// many downstream steps: a result of 0 (blocks that never ran) fails. The check passes the unscaled bound
/// (scale 1) to Compare::scalar, which applies lab.tolerance_scale.
double tolerance(const Params& params, const Sums& ref, double scale);

/// Per-iteration cost model of a variant as implemented (DRAM bytes read and written, flop, launches, host
/// syncs) and the compulsory bytes of the computation (data + mask read once), for `selected` elements.
/// Formulas: docs/experiments/masking.md.
Cost cost(const Params& params, double selected);

/// One iteration of `variant` on the host, following the variant's op order and rounding every intermediate to
/// the storage dtype as an eager framework does (fused keeps f32/f64 in registers), with scratch `a` (n elements,
/// all but fused) and `b` (n elements, index). Accumulates in double; returns the sum rounded to the
/// accumulation dtype (f32, or f64 for f64 data).
double host_run(Variant variant, const View& data, const View& mask, int downstream, void* a, void* b);

/// The experiment's report section (experiments/masking/report.cpp): for every run with both `index` and `where`,
/// where boolean indexing loses (index / where and index / multiply time ratios at densities 10%-90%, by n), where
/// it wins (with significance from the medians' 95% CIs), why (index's bound classes, launch and host-stall shares,
/// its fixed cost at the smallest n; where's traffic over the compulsory bytes at the largest n), a table of
/// ratios by slice and the crossovers of index against where and multiply. Markdown to `md`.
void report_section(const ReportView& view, std::ostream& md);

}  // namespace labrun::masking
