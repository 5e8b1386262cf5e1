// The layout experiment: what memory layout costs, as the founding texts state it ("Other costs the texts
// measure"): `.contiguous()` is a no-op on contiguous data and a full read + write on a transposed view; a
// broadcast (zero-stride) view costs nothing to build, while a materialised repeat allocates and writes.
//
// A point is a row-major rows x cols matrix x in the storage dtype (f32 or bf16) and a cols-vector bias. The
// variants:
//   contiguous_noop      x.contiguous() of contiguous x: no kernel, the same buffer back (host work only);
//   transpose_naive      x.T.contiguous(): out[j][i] = x[i][j], one thread per element, coalesced reads,
//                        strided writes;
//   transpose_tiled      the same copy through shared-memory tiles (+1 padding), coalesced reads and writes;
//   broadcast_view       y = x + bias[None, :], bias read through a zero-stride rows x cols view;
//   repeat_materialized  y = x + bias.repeat(rows, 1): the repeat written out first (a full rows x cols
//                        tensor), then the same consumer kernel reading it.
// The two broadcast variants run the same consumer and give the same bits; their cost models differ exactly by
// the materialisation (one rows x cols write and one read). Shared by the host and CUDA implementations.
// Formulas (tolerance, cost model): docs/experiments/layout.md.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend.hpp"
#include <labrun/dtype.hpp>
#include <labrun/point.hpp>

namespace labrun::layout {

enum class Variant { contiguous_noop, transpose_naive, transpose_tiled, broadcast_view, repeat_materialized };
const char* to_string(Variant v);
/// @throws std::invalid_argument for an unknown name.
Variant parse_variant(const std::string& name);
/// transpose_naive or transpose_tiled: the output is the cols x rows transpose.
bool is_transpose(Variant v);
/// broadcast_view or repeat_materialized: the output is x + bias, rows x cols.
bool is_broadcast(Variant v);

/// A layout point's axes, typed.
struct Params {
  Variant variant = Variant::transpose_tiled;
  std::int64_t rows = 0;       ///< rows of x, >= 0
  std::int64_t cols = 0;       ///< columns of x (and elements of bias), >= 0
  DType dtype = DType::f32;    ///< storage dtype of x, bias and every output: f32 or bf16
  std::string mode = "eager";  ///< "eager" or "graph"
  std::int64_t elements() const { return rows * cols; }
};
/// @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has a bad value (negative
/// sizes, a dtype other than f32 or bf16).
Params params_of(const Point& point);

/// A 2-D strided view of a buffer: element (i, j) lives at data + (i·row_stride + j·col_stride) elements, as in
/// torch.Tensor.stride(). Building one moves no data.
struct View {
  const void* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0, cols = 0;
  std::int64_t row_stride = 0, col_stride = 1;  ///< in elements; 0 is a broadcast dimension
  /// The row-major rows x cols view of `data` (row_stride = cols, col_stride = 1).
  static View contiguous_of(const void* data, DType dtype, std::int64_t rows, std::int64_t cols);
  /// A cols-vector seen as rows x cols with row_stride 0 (torch's bias.expand(rows, cols)): every row is the
  /// same memory.
  static View broadcast_rows(const void* vector, DType dtype, std::int64_t rows, std::int64_t cols);
  /// The transpose as a view (torch's x.T): rows and cols swapped, strides swapped, the same data.
  View transposed() const;
  /// torch's rule: the strides are those of the row-major layout of this shape, size-1 dimensions ignored (a view
  /// with no element is contiguous).
  bool is_contiguous() const;
};

/// What `.contiguous()` does without a kernel: the same view (same buffer) when it is already contiguous, else
/// nullopt (a copy is needed: a transposed or broadcast view with more than one row and column).
std::optional<View> contiguous_without_copy(const View& view);

/// Host copy of a point's inputs: x (rows x cols, row-major) and bias (cols), in the storage dtype (bf16 as raw
/// bits), each 8-byte aligned.
struct Inputs {
  DType dtype = DType::f32;
  std::int64_t rows = 0, cols = 0;
  std::vector<std::uint64_t> x_storage, bias_storage;
  const void* x() const { return x_storage.data(); }
  const void* bias() const { return bias_storage.data(); }
  std::int64_t elements() const { return rows * cols; }
  std::size_t x_bytes() const { return static_cast<std::size_t>(elements()) * dtype_bytes(dtype); }
  std::size_t bias_bytes() const { return static_cast<std::size_t>(cols) * dtype_bytes(dtype); }
  /// Element i (flat row-major index) of x, decoded exactly to double.
  double x_value(std::int64_t i) const;
  /// Element j of bias, decoded exactly to double.
  double bias_value(std::int64_t j) const;
};

/// One value of the input generator from 64 random bits: an f32 with a random sign, an exponent uniform in
/// [-4, 3] and a uniform 23-bit fraction, so |v| in [2^-4, 2^4) and never zero. Over that range the double sum
/// of two such values is exact (significands of 24 bits, exponents at most 8 apart: <= 33 bits), and so is the
/// f32 sum of two bf16-rounded ones (<= 17 bits).
float draw_value(std::uint64_t bits);

/// Draws x and bias from a counter-based generator (SplitMix64 of the seed and the flat index; Steele, Lea &
/// Flood 2014; bias from a second stream of the same seed), rounded to the dtype (bf16: to nearest even).
/// Reproducible for a seed, identical on every thread count. @throws std::invalid_argument for negative sizes or
/// a dtype other than f32 / bf16.
Inputs generate(std::int64_t rows, std::int64_t cols, DType dtype, std::uint64_t seed);

/// The float64 reference of the consumer output: x + bias in double (exact for the generator's values).
inline double add_reference(double x, double bias) { return x + bias; }

/// Rigorous bound on |y − ref| for one consumer element (docs/experiments/layout.md, "Tolerance"): the sum is
/// rounded once to f32 (u = 2^-24) and, for bf16, once more at the store (u_s = 2^-8, round to nearest even):
/// bound = (u + u_s + u·u_s)·|ref| (u_s = 0 for f32). Units: those of x. 0 for ref = 0 (an exact cancellation,
/// which IEEE addition returns exactly).
double add_bound(DType dtype, double ref);

/// Compares a variant's output with the float64 reference, every element. `out` is:
///   contiguous_noop: the buffer the variant returned (rows x cols): every element's bits must equal x's;
///   transposes: the cols x rows output: out[j·rows + i] must have x[i·cols + j]'s bits (a copy is exact);
///   broadcast variants: the rows x cols y: |y − ref| / add_bound(ref) <= scale for every element.
/// Check::value = abs_error: mismatching elements for the copies (tolerance 0), the worst ratio for the broadcast
/// variants (tolerance = scale, lab.tolerance_scale); reference 0. A NaN or infinite element never passes (case
/// C07: the poison is all-ones bits, a NaN in f32 and bf16). detail: elements, mismatches, the first (copies) or
/// worst (sums) element with its row, col, got and expected, and for sums nonfinite, max_abs_error,
/// max_rel_error and not_correctly_rounded (elements other than the reference rounded to the dtype).
Check compare(Variant variant, const Inputs& inputs, const void* out, double scale);

/// Per-iteration cost model as the variant's kernels issue the traffic (docs/experiments/layout.md, "Cost
/// model"). N = rows·cols, s = dtype bytes, b = cols·s when N > 0 (else 0), k = 1 when N > 0 (else 0):
///   contiguous_noop:     read 0, written 0, compulsory 0, flop 0, launches 0, peak work 0;
///   transpose_*:         read N·s, written N·s, compulsory 2N·s, flop 0, launches k, peak work N·s (the output);
///   broadcast_view:      read N·s + b, written N·s, compulsory 2N·s + b, flop N, launches k, peak work N·s;
///   repeat_materialized: read 2N·s + b, written 2N·s, compulsory 2N·s + b, flop N, launches 2k, peak work 2N·s
///                        (the materialised repeat and the output).
/// No host syncs. repeat_materialized − broadcast_view = exactly one N·s write and one N·s read.
Cost cost(const Params& params);

/// Bytes of the buffers a point holds: the inputs x (N·s) and bias (cols·s) plus the cost model's peak work.
double working_set_bytes(const Params& params);

/// Scratch of the host implementations: repeat_materialized's materialised rows x cols tensor, sized at first use.
struct HostScratch {
  std::vector<std::uint64_t> repeated;
};

/// One iteration of `variant` on the host, with the arithmetic of the kernels (copies move bits; sums add in f32
/// and round once to the dtype). Writes the output into `out` (cols x rows for the transposes, rows x cols for the
/// broadcast variants; unused by contiguous_noop) and returns the view of the result: for contiguous_noop x's own
/// view (the same buffer), else the contiguous view of `out`. transpose_naive walks x row by row (strided writes),
/// transpose_tiled by 32 x 32 tiles.
View host_run(Variant variant, const Inputs& inputs, void* out, HostScratch& scratch);

/// Inputs shared by the variants of consecutive points with the same (rows, cols, dtype, seed): the sweep puts
/// variants innermost, so each input set is generated once. The reference needs no cache: it is computed
/// element by element in compare() (the input itself for copies, one double add for sums).
class InputCache {
 public:
  /// The inputs for `params` and lab `seed`; regenerated (the old set released first) when the key changes.
  std::shared_ptr<const Inputs> inputs(const Params& params, std::uint64_t seed);

 private:
  std::string key_;
  std::shared_ptr<const Inputs> inputs_;
};

/// The seed of a point's inputs: the lab seed mixed with the input-defining axes (rows, cols, dtype; not the
/// variant, so that all variants of a shape see the same data).
std::uint64_t input_seed(const Params& params, std::uint64_t lab_seed);

/// Registers the experiment, its axes and variants with their host implementations.
void register_experiment(class Registry& registry);

/// Adds the CUDA implementation of every variant (experiments/layout/cuda/layout_cuda.cpp).
void register_cuda(class Registry& registry);

}  // namespace labrun::layout
