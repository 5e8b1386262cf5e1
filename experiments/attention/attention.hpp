// The attention experiment: the forward pass of scaled dot-product attention, causal and not, three ways.
//
//   O[b, h, i, :] = sum_j P[i, j] V[b, h, j, :],  P[i, :] = softmax_j(scale * Q[b, h, i, :] . K[b, h, j, :] + mask)
//   scale = 1 / sqrt(D), mask = -inf where causal and j > i, else 0.
//
// Q, K, V and O are bf16, [B, H, S, D] row-major (D contiguous); every product accumulates in f32. Variants:
//   naive_out_of_place  cuBLAS S = Q K^T (f32 scores), scale in place, an out-of-place mask fill into a second
//                       S x S buffer (the eager `masked_fill` copy), row softmax writing P (bf16) over its row,
//                       cuBLAS O = P V: five kernels, two B H S^2 f32 buffers;
//   naive_in_place      the same with scale and mask fused into one in-place kernel: four kernels, one buffer;
//   tiled               one fused FlashAttention-2 kernel (Dao, "FlashAttention-2", arXiv:2307.08691, 2023):
//                       128 query rows per block (32 a warp), K/V tiles of 64 keys in shared memory, mma.sync bf16 ->
//                       f32, online softmax in registers; the S x S matrix is never written. At D = 128 on a
//                       compute-capability-9.0 device, the Hopper kernel instead (TMA, wgmma, 2 warpgroups of 64
//                       rows, 128-key tiles; cuda/flash_forward_sm90.cuh).
//   cudnn               cuDNN's fused attention forward through its graph API (labrun/cudnn.hpp, loaded at run
//                       time; CUDA only): the backend PyTorch's SDPA picks first on Hopper.
// An SDK experiment (LABRUN_EXPERIMENT(attention) in attention.cpp, LABRUN_CUDA_VARIANTS(attention) in
// cuda/attention_kernels.cu). Shared by the host and CUDA sides (C++17). Formulas (tolerance, cost model):
// docs/experiments/attention.md.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include <labrun/cost.hpp>
#include <labrun/experiment.hpp>

namespace labrun::attention {

enum class Variant { naive_out_of_place, naive_in_place, tiled, cudnn };
const char* to_string(Variant v);
/// The point's variant. @throws std::invalid_argument for an unknown name.
Variant variant_of(const Args& args);

/// Tile sizes of the tiled kernel (rows of Q per block, keys per K/V tile), shared with the host emulation
/// (cuda/flash_forward.cuh: 4 warps of 32 rows). The Hopper kernel's K/V tiles are 128 keys: the same arithmetic
/// with other rescaling boundaries, its output within rounding of the emulation's.
inline constexpr int kBlockM = 128;
inline constexpr int kBlockN = 64;
/// The longest row the naive softmax kernel keeps in registers (256 threads x 64 f32).
inline constexpr std::int64_t kMaxSeq = 16384;
/// cuBLAS workspace of the naive variants' handle (work memory: a transient array of the Layout, in
/// peak_work_bytes).
inline constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
/// Bytes of one score element of the naive variants: f32 (docs/experiments/attention.md, "Score dtype").
inline constexpr int kScoreBytes = 4;

/// An attention point's axes, typed.
struct Params {
  Variant variant = Variant::tiled;
  std::int64_t batch = 4;   ///< B >= 1
  std::int64_t heads = 32;  ///< H >= 1
  std::int64_t seq = 4096;  ///< S >= 1, the size axis
  int head_dim = 128;       ///< D: 64 or 128
  bool causal = true;
  std::string mode = "eager";
  std::int64_t bh() const { return batch * heads; }
  /// Elements of one of Q, K, V, O: B H S D.
  std::int64_t elements() const { return batch * heads * seq * head_dim; }
  /// Score elements of one S x S buffer over all heads: B H S^2.
  double score_elements() const {
    return static_cast<double>(bh()) * static_cast<double>(seq) * static_cast<double>(seq);
  }
  /// The softmax scale 1 / sqrt(D), rounded to f32 (as every variant uses it).
  float scale() const;
};
/// @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has a bad value.
Params params_of(const Args& args);

/// nullopt if the point can run (head_dim 64 or 128, 1 <= S <= kMaxSeq, B H <= 65535), else the reason.
std::optional<std::string> shape_unsupported(const Args& args);

/// Q, K, V (bf16 bits), each B H S D elements in [B, H, S, D] order; not owning.
struct Qkv {
  std::int64_t batch = 0, heads = 0, seq = 0;
  int head_dim = 0;
  const std::uint16_t *q = nullptr, *k = nullptr, *v = nullptr;
  std::int64_t bh() const { return batch * heads; }
  std::int64_t elements() const { return batch * heads * seq * head_dim; }
};

/// Host copies of Q, K, V (bf16 bits), owning (tests, and inputs made outside the lab).
struct Inputs {
  std::int64_t batch = 0, heads = 0, seq = 0;
  int head_dim = 0;
  std::vector<std::uint16_t> q, k, v;
  std::int64_t bh() const { return batch * heads; }
  std::int64_t elements() const { return batch * heads * seq * head_dim; }
  std::size_t tensor_bytes() const { return static_cast<std::size_t>(elements()) * 2; }
  operator Qkv() const { return Qkv{batch, heads, seq, head_dim, q.data(), k.data(), v.data()}; }
};

/// Draws Q and K uniform in [-2, 2) and V uniform in [-1, 1), rounded to bf16, from a counter-based generator
/// (SplitMix64 of the seed, the tensor and the flat index; Steele, Lea & Flood 2014) into `n` elements each of
/// q, k and v. With |q|, |k| < 2 the scaled scores spread over several units, so the softmax rows are far from
/// uniform. Reproducible for a seed, identical on every thread count.
void generate(std::uint16_t* q, std::uint16_t* k, std::uint16_t* v, std::int64_t n, std::uint64_t seed);
/// The same into fresh Inputs. @throws std::invalid_argument for sizes < 1.
Inputs generate(std::int64_t batch, std::int64_t heads, std::int64_t seq, int head_dim, std::uint64_t seed);

/// Float64 reference of selected output rows. A row is r = bh * S + i (query i of head bh).
struct RowReference {
  bool causal = false;
  bool full = false;               ///< every row (else a deterministic sample)
  std::vector<std::int64_t> rows;  ///< the rows referenced, ascending
  std::vector<double> o;           ///< rows.size() x D: the exact attention output
  std::vector<double> abs_pv;      ///< rows.size() x D: sum_j p_ij |v_jd| (the tolerance's scale, <= max |v|)
  std::vector<double> logit_l1;    ///< per row: scale * max_j sum_d |q_id| |k_jd| (bounds the f32 score error)
};
/// Rows whose full reference costs at most this much work (B H S^2 D) are all referenced; larger points
/// reference kSampleRows rows.
inline constexpr double kFullReferenceWork = 1 << 28;
inline constexpr int kSampleRows = 384;
/// The rows reference() takes: every row when B H S^2 D <= kFullReferenceWork, else kSampleRows rows: the first
/// and last rows of heads and of tiles (where masks and tails live) and rows spread by a hash, ascending, unique.
std::vector<std::int64_t> reference_rows(const Qkv& in);
/// The reference over `rows` (f64 products, exact max, exp and sums in double).
RowReference reference(const Qkv& in, bool causal, const std::vector<std::int64_t>& rows);

/// Per-element bound of a variant's O (docs/experiments/attention.md, "Tolerance"):
///   |o - ref| <= scale_t * 1.25 * ( u |ref| + (u + 2 (D + 8) 2^-24 L_i + (S + 64) 2^-24) A_id ) + 2^-120
/// u = 2^-8 (bf16 rounding of O and of P), L_i = logit_l1 of the row, A_id = abs_pv. The same for every variant:
/// each rounds P to bf16 once and O once and accumulates in f32. The check uses scale_t = 1 (the lab applies
/// lab.tolerance_scale to the whole bound).
struct Tolerance {
  double u = 0x1.0p-8;
  double u32 = 0x1.0p-24;
  double seq = 1, head_dim = 1;
  double scale = 1;  ///< lab.tolerance_scale
  double floor = 0x1.0p-120;
  double bound(double ref, double abs_pv, double logit_l1) const {
    const double rel_p = u + 2 * (head_dim + 8) * u32 * logit_l1 + (seq + 64) * u32;
    return scale * 1.25 * (u * (ref < 0 ? -ref : ref) + rel_p * abs_pv) + floor;
  }
};
Tolerance tolerance(const Params& params, double scale);

/// Per-iteration cost model (docs/experiments/attention.md, "Cost model"), in bytes. E = B H S D (bf16, 2 bytes),
/// P = B H S^2 score elements of s = kScoreBytes bytes, P stored as bf16 (2 bytes) after the softmax:
///   naive_out_of_place: read 6E + 3 P s + 2P, written 2E + 3 P s + 2P (gemm, scale, fill, softmax, gemm); 5 launches
///   naive_in_place:     read 6E + 2 P s + 2P, written 2E + 2 P s + 2P (gemm, scale+mask, softmax, gemm); 4 launches
///   tiled, cudnn:       read 6E, written 2E (compulsory: its K/V re-reads are served by L2); 1 launch
/// compulsory 8E; flop (4D + 5) P, halved when causal (the useful work, the same for every variant: the naive
/// GEMMs issue all of P); host_syncs 0; peak_work_bytes: naive (2 or 1) P s + 2E + `workspace_bytes`, tiled 2E,
/// cudnn 2E (its plan's workspace, when it has one, is allocated in the setup and measured, not predicted).
Cost cost(const Params& params, std::size_t workspace_bytes = kWorkspaceBytes);

/// Working-set bytes of a point: Q, K, V plus the peak work bytes (what the Layout's arrays add up to).
double working_set_bytes(const Params& params);

/// One iteration of `variant` on the host into o (B H S D bf16 bits), with the rounding steps of the CUDA
/// variant: naive computes f32 scores (sequential dot), scales them in f32, masks, softmaxes in f32
/// (max, exp, sum, times 1 / sum), rounds P to bf16, accumulates P V in f32 and rounds O; naive_out_of_place
/// writes the masked copy to a second buffer first. tiled runs the online softmax over tiles of kBlockN keys:
/// x = s * (scale log2 e), running max m, p = exp2(x - m) (fma), rescale by exp2(m_old - m), l summed from the
/// f32 p, acc from bf16(p) V, O = acc / l rounded to bf16.
void host_run(Variant variant, const Qkv& in, bool causal, std::uint16_t* o);

/// The experiment's report section (experiments/attention/report.cpp): for every run with at least two of the
/// variants, the founding text's backend walk (naive_out_of_place → naive_in_place → tiled → cudnn) side by side:
/// a table of each variant's iteration time per group of points (— where it has no ok point) and each step's time
/// ratio (n/a where either side is missing; past 24 groups only the largest seq of each head_dim, causal, mode
/// and l2, with how many were left out); where the time goes at the judged point (B 4, H 32, S 4096, D 128,
/// causal, else the largest seq with D 128 and causal): each variant's bound class, its fractions of the compute
/// and memory ceilings and its kernel breakdown (PointView::kernels); and the ratios in words. Markdown to `md`.
void report_section(const ReportView& view, std::ostream& md);

}  // namespace labrun::attention
