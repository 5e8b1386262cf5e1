// The layout experiment: what memory layout costs, as the founding texts state it ("Other costs the texts
// measure"): `.contiguous()` is a no-op on contiguous data and a full read + write on a transposed view; a
// broadcast (zero-stride) view costs nothing to build, while a materialised repeat allocates and writes.
//
// A point is a row-major rows x cols matrix x in the storage dtype (f32 or bf16) and a cols-vector bias (inputs
// "x", "bias"). The variants:
//   contiguous_noop      x.contiguous() of contiguous x: no kernel, the same buffer back (host work only): its
//                        output "y" is returned (Role::returned), x itself;
//   transpose_naive      x.T.contiguous(): y[j][i] = x[i][j] (cols x rows), one thread per element, coalesced
//                        reads, strided writes;
//   transpose_tiled      the same copy through shared-memory tiles (+1 padding), coalesced reads and writes;
//   broadcast_view       y = x + bias[None, :], bias read through a zero-stride rows x cols view;
//   repeat_materialized  y = x + bias.repeat(rows, 1): the repeat written out first (output "repeated", a full
//                        rows x cols tensor, checked too), then the same consumer kernel reading it.
// The two broadcast variants run the same consumer and give the same bits; their cost models differ exactly by
// the materialisation (one rows x cols write and one read). Shared by layout.cpp, the CUDA side (this header
// compiles under nvcc's C++17) and the tests. Formulas (tolerance, cost model): docs/experiments/layout.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <labrun/experiment.hpp>

namespace labrun::layout {

enum class Variant { contiguous_noop, transpose_naive, transpose_tiled, broadcast_view, repeat_materialized };
const char* to_string(Variant v);
/// The point's variant. @throws std::invalid_argument for an unknown name.
Variant variant_of(const Args& args);
/// transpose_naive or transpose_tiled: the output is the cols x rows transpose.
inline bool is_transpose(Variant v) { return v == Variant::transpose_naive || v == Variant::transpose_tiled; }
/// broadcast_view or repeat_materialized: the output is x + bias, rows x cols.
inline bool is_broadcast(Variant v) { return v == Variant::broadcast_view || v == Variant::repeat_materialized; }
/// The path the CUDA transpose_tiled takes at a shape: 2-element words (`pairs`) iff rows and cols are both even.
inline bool uses_pairs(std::int64_t rows, std::int64_t cols) { return rows % 2 == 0 && cols % 2 == 0; }

/// A 2-D strided view of a buffer: element (i, j) lives at data + (i·row_stride + j·col_stride) elements, as in
/// torch.Tensor.stride(). Building one moves no data.
struct Strided {
  const void* data = nullptr;
  DType dtype = DType::f32;
  std::int64_t rows = 0, cols = 0;
  std::int64_t row_stride = 0, col_stride = 1;  ///< in elements; 0 is a broadcast dimension
  /// The row-major rows x cols view of `data` (row_stride = cols, col_stride = 1).
  static Strided contiguous_of(const void* data, DType dtype, std::int64_t rows, std::int64_t cols) {
    return Strided{data, dtype, rows, cols, cols, 1};
  }
  /// A cols-vector seen as rows x cols with row_stride 0 (torch's bias.expand(rows, cols)): every row is the
  /// same memory.
  static Strided broadcast_rows(const void* vector, DType dtype, std::int64_t rows, std::int64_t cols) {
    return Strided{vector, dtype, rows, cols, 0, 1};
  }
  /// The transpose as a view (torch's x.T): rows and cols swapped, strides swapped, the same data.
  Strided transposed() const { return Strided{data, dtype, cols, rows, col_stride, row_stride}; }
  /// torch's rule: the strides are those of the row-major layout of this shape, size-1 dimensions ignored (a view
  /// with no element is contiguous).
  bool is_contiguous() const {
    return rows == 0 || cols == 0 || ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride == cols));
  }
};

/// What `.contiguous()` does without a kernel: the same view (same buffer) when it is already contiguous, else
/// nullopt (a copy is needed: a transposed or broadcast view with more than one row and column).
inline std::optional<Strided> contiguous_without_copy(const Strided& view) {
  if (view.is_contiguous()) return view;
  return std::nullopt;
}

/// One value of the input generator from 64 random bits: an f32 with a random sign, an exponent uniform in
/// [-4, 3] and a uniform 23-bit fraction, so |v| in [2^-4, 2^4) and never zero. Over that range the double sum
/// of two such values is exact (significands of 24 bits, exponents at most 8 apart: <= 33 bits), and so is the
/// f32 sum of two bf16-rounded ones (<= 17 bits).
float draw_value(std::uint64_t bits);

/// Draws x (rows·cols elements) and bias (cols) from a counter-based generator (SplitMix64 of the seed and the
/// flat index; Steele, Lea & Flood 2014; bias from a second stream, seed splitmix64(seed ^ fnv1a64("layout/bias"))),
/// rounded to their dtype (bf16: to nearest even). Reproducible for a seed, identical on every thread count.
/// @throws std::invalid_argument for a dtype other than f32 / bf16.
void generate(const View& x, const View& bias, std::uint64_t seed);

/// The float64 reference of the consumer output: x + bias in double (exact for the generator's values).
inline double add_reference(double x, double bias) { return x + bias; }

/// Rigorous bound on |y − ref| for one consumer element (docs/experiments/layout.md, "Tolerance"): the sum is
/// rounded once to f32 (u = 2^-24) and, for bf16, once more at the store (u_s = 2^-8, round to nearest even):
/// bound = (u + u_s + u·u_s)·|ref| (u_s = 0 for f32). Units: those of x. 0 for ref = 0 (an exact cancellation,
/// which IEEE addition returns exactly).
double add_bound(DType dtype, double ref);

/// Per-iteration cost model as the variant's kernels issue the traffic (docs/experiments/layout.md, "Cost
/// model"). N = rows·cols, s = dtype bytes, b = cols·s when N > 0 (else 0), k = 1 when N > 0 (else 0):
///   contiguous_noop:     read 0, written 0, compulsory 0, flop 0, launches 0, peak work 0;
///   transpose_*:         read N·s, written N·s, compulsory 2N·s, flop 0, launches k, peak work N·s (the output);
///   broadcast_view:      read N·s + b, written N·s, compulsory 2N·s + b, flop N, launches k, peak work N·s;
///   repeat_materialized: read 2N·s + b, written 2N·s, compulsory 2N·s + b, flop N, launches 2k, peak work 2N·s
///                        (the materialised repeat and the output).
/// No host syncs. repeat_materialized − broadcast_view = exactly one N·s write and one N·s read.
Cost cost(Variant variant, std::int64_t rows, std::int64_t cols, DType dtype);

/// One iteration of `variant` on the host, with the arithmetic of the kernels (copies move bits; sums add in f32
/// and round once to the dtype): x (rows x cols) and bias (cols) of the dtype into y (cols x rows for the
/// transposes, rows x cols for the broadcast variants; unused by contiguous_noop), through `repeated` (rows x cols,
/// repeat_materialized only). Returns the view of the result: for contiguous_noop x's own view (the same buffer),
/// else the contiguous view of y. transpose_naive walks x row by row (strided writes), transpose_tiled by 32 x 32
/// tiles.
Strided host_run(Variant variant, std::int64_t rows, std::int64_t cols, DType dtype, const void* x, const void* bias,
                 void* y, void* repeated);

}  // namespace labrun::layout
