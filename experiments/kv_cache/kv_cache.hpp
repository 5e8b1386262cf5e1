// The kv_cache experiment: decoding from n0 to n1 tokens, the keys and values of every new token appended to a
// KV cache two ways: `concat` (each step copies the whole current cache and the new token into a fresh buffer, as
// torch.cat(cache, new) does) and `preallocated` (one slot of a cache allocated at n1 written per step).
// Shared by the host and CUDA implementations. Formulas: docs/experiments/kv_cache.md.
//
// Layout. A cache of n tokens is one tensor [L][2][B][H][n][D] (layer, K or V, batch, kv head, token, head dim):
// R = 2·L·B·H rows of n·D contiguous elements. The concat buffers hold it contiguous at the current n (row stride
// n·D, as a fresh torch.cat result is); the preallocated cache holds it with row stride n1·D. The final cache of
// both is [R][n1][D] contiguous. The prefill P (the n0 tokens there before decoding) is [R][n0][D]; the token
// table T (the new K/V of step s, as the projections would have produced them) is [n1 − n0][R][D].
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include <labrun/dtype.hpp>
#include "kv_cache/kv_cache_values.hpp"
#include <labrun/point.hpp>

namespace labrun::kv_cache {

enum class Variant { concat, preallocated };
const char* to_string(Variant v);
/// @throws std::invalid_argument for an unknown name.
Variant parse_variant(const std::string& name);

/// A kv_cache point's axes, typed.
struct Params {
  Variant variant = Variant::preallocated;
  std::int64_t batch = 1;      ///< B: sequences decoded together
  std::int64_t layers = 36;    ///< L
  std::int64_t kv_heads = 2;   ///< H: key/value heads (grouped-query attention keeps few)
  std::int64_t head_dim = 128; ///< D: elements per head
  std::int64_t n0 = 128;       ///< tokens in the cache before decoding (the prefill)
  std::int64_t n1 = 384;       ///< tokens in the cache after decoding, >= n0
  DType dtype = DType::bf16;   ///< storage dtype: bf16, f16 or f32
  std::string mode = "eager";  ///< "eager" or "graph"

  /// R = 2·L·B·H: contiguous rows of the cache (one per layer, K or V, batch entry and head).
  std::int64_t rows() const { return 2 * layers * batch * kv_heads; }
  /// Decode steps of one iteration: n1 − n0.
  std::int64_t steps() const { return n1 - n0; }
  /// Elements one token adds to the cache: R·D.
  std::int64_t token_elements() const { return rows() * head_dim; }
};
/// @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has a bad value (dtype other
/// than bf16, f16, f32; n1 < n0).
Params params_of(const Point& point);

/// The kernels' name for a dtype. @throws std::invalid_argument for f64.
Format format_of(DType t);

/// Bytes one token adds to the cache: 2 (K and V) · L · H · D · B · dtype_bytes (the founding text's unit).
double bytes_per_token(const Params& p);

/// Σ_{n=n0}^{n1−1} n = (n1² − n0² − (n1 − n0)) / 2: tokens of the old cache the concat steps read (and copy), exact.
std::int64_t copied_tokens(std::int64_t n0, std::int64_t n1);

/// The founding text's copy volume, bytes_per_token · (n1² − n0²) / 2 ("≈ 4.5 GiB for 36 KiB/token" at n0 = 0,
/// n1 = 512). It is exactly the mean of what concat's copies read (Σ n tokens of old cache) and write (Σ (n + 1)
/// tokens of new cache, the new token's slot included): old read + new write = 2 × this, for every (n0, n1).
double text_copy_bytes(const Params& p);

/// Per-iteration cost model (bpt = bytes_per_token, S = n1 − n0, C = copied_tokens(n0, n1)), docs/experiments/kv_cache.md:
///   concat:       read bpt·(C + S) (old cache, token table), written bpt·(C + S) (new cache incl. the token slot);
///                 old read + new write = bpt·(n1² − n0²) = 2 · text_copy_bytes; S launches;
///   preallocated: read bpt·S (token table), written bpt·S (one slot per step); S launches;
///   compulsory 2·bpt·S (each new token read once and written once); flop 0; host syncs 0.
Cost cost(const Params& p);

/// Device bytes beyond the inputs (prefill, token table) a variant holds at its peak: concat two ping-pong buffers
/// of n1 tokens (2·bpt·n1: what torch.cat's old and new tensors hold at the last step), preallocated one (bpt·n1);
/// each buffer at least 16 bytes (as allocated).
double peak_work_bytes(const Params& p);

/// Bytes of everything a point holds: prefill bpt·n0, token table bpt·S, and peak_work_bytes.
double working_set_bytes(const Params& p);

/// Host copy of a point's inputs, each 8-byte aligned raw storage of the dtype's bits.
struct Inputs {
  Params params;                        ///< the point's shape (variant ignored)
  std::vector<std::uint64_t> prefill;   ///< P [R][n0][D]
  std::vector<std::uint64_t> tokens;    ///< T [S][R][D]
  std::size_t prefill_bytes() const;
  std::size_t token_bytes() const;
};

/// Element index in the final cache [R][n1][D] of element d of token t in row r: (r·n1 + t)·D + d.
inline std::uint64_t final_index(const Params& p, std::int64_t r, std::int64_t t, std::int64_t d) {
  return (static_cast<std::uint64_t>(r) * static_cast<std::uint64_t>(p.n1) + static_cast<std::uint64_t>(t)) *
             static_cast<std::uint64_t>(p.head_dim) + static_cast<std::uint64_t>(d);
}

/// Fills P and T from value_bits(format, seed, final_index(...)): element (r, t, d) of the prefill (t < n0) and
/// element (r, d) of token s (t = n0 + s) carry the bits their place in the final cache has, so the final cache
/// equals value_bits at every index. Parallel chunks; reproducible for a seed on any thread count.
/// @throws std::invalid_argument for a bad dtype or n1 < n0.
Inputs generate(const Params& p, std::uint64_t seed);

/// Compares a variant's final cache (R·n1·D elements of p.dtype, [R][n1][D] contiguous, at `cache`) with the
/// reference value_bits(seed, i) element by element. The cache is a copy, so the tolerance is 0: an element passes
/// iff its bits equal the reference's (equivalently |y − ref| = 0 with both decoded exactly to double; a NaN, the
/// poison, never does: case C07). Check::value = abs_error = mismatched elements, reference 0, tolerance 0.
/// detail: elements, mismatches, nonfinite, first_mismatch (index, row, token, expected and actual bits and
/// values), bytes_per_token, generated_tokens (S: divide time_s by it for the time per generated token).
Check compare(const Params& p, std::uint64_t seed, const void* cache);

/// The host's buffers of one variant: concat two ping-pong buffers of n1 tokens, preallocated one cache of n1.
struct HostState {
  std::vector<std::uint64_t> a, b;  ///< concat: ping-pong; preallocated: a is the cache
};

/// Sets up a variant's buffers as its constructor does: both variants size them at n1 tokens; preallocated copies
/// the prefill into the first n0 slots of every row.
HostState host_setup(const Params& p, const Inputs& in);

/// One iteration on the host, the GPU kernels' data movement with memcpy: concat copies, at each step n = n0..n1−1,
/// every row's n old tokens and the new token into the other buffer at row stride (n + 1)·D (step 0 reads the
/// prefill); preallocated copies token s into slot n0 + s of every row. Returns the final cache ([R][n1][D]).
const void* host_run(const Params& p, const Inputs& in, HostState& state);

/// The buffer holding the final cache after an iteration: preallocated its cache; concat the buffer the last step
/// wrote (a for an odd number of steps, b for an even one), or the prefill itself when S = 0 (nothing ran).
const void* final_cache(const Params& p, const Inputs& in, const HostState& state);

/// What defines a point's inputs (B, L, H, D, n0, n1, dtype), as text.
std::string input_key(const Params& p);
/// The seed of a point's inputs: the lab seed mixed with input_key (not the variant or the mode).
std::uint64_t input_seed(const Params& p, std::uint64_t lab_seed);

/// Registers the experiment, its axes and variants with their host implementations.
void register_experiment(class Registry& registry);

/// Adds the CUDA implementation of every variant (experiments/kv_cache/cuda/kv_cache_cuda.cpp).
void register_cuda(class Registry& registry);

}  // namespace labrun::kv_cache
