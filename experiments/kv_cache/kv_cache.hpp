// The kv_cache experiment: decoding from n0 to n1 tokens, the keys and values of every new token appended to a
// KV cache two ways: `concat` (each step copies the whole current cache and the new token into a fresh buffer, as
// torch.cat(cache, new) does) and `preallocated` (one slot of a cache allocated at n1 written per step).
// Shared by the host side, the CUDA side (this header compiles under nvcc's C++17) and the tests.
// Formulas: docs/experiments/kv_cache.md.
//
// Layout. A cache of n tokens is one tensor [L][2][B][H][n][D] (layer, K or V, batch, kv head, token, head dim):
// R = 2·L·B·H rows of n·D contiguous elements. The concat buffers hold it contiguous at the current n (row stride
// n·D, as a fresh torch.cat result is); the preallocated cache holds it with row stride n1·D. The final cache of
// both is [R][n1][D] contiguous. A point's arrays: inputs "prefill" P (the n0 tokens there before decoding,
// [R][n0][D]) and "tokens" T (the new K/V of step s, as the projections would have produced them, [n1 − n0][R][D]);
// output "cache" ([R][n1][D]: the final cache); concat also output "other" (its second ping-pong buffer, an output
// only so that the lab poisons it before the checked iteration; never compared).
#pragma once

#include <cstdint>
#include <string>

#include <labrun/counter_rng.hpp>
#include <labrun/experiment.hpp>

namespace labrun::kv_cache {

/// Storage formats of the cache, as the kernels see them.
enum class Format : int { f32 = 0, f16 = 1, bf16 = 2 };

/// Bits of element `i` of the final cache (laid out [R][n1][D]) in format `f`, in the low 16 (f16, bf16) or 32
/// (f32) bits: from h = SplitMix64(seed ^ SplitMix64(i)) (Steele, Lea & Flood 2014), the sign from bit 0, the
/// binade 2^-2, 2^-1 or 2^0 from (h >> 1) mod 3, the fraction from the top bits; a value in ±[0.25, 2): never zero,
/// never subnormal, never NaN or infinite. One pure integer function of (seed, index) shared by the host and the
/// device (nvcc compiles it with --expt-relaxed-constexpr): element i of the final cache is value_bits(f, seed, i)
/// wherever it came from (the prefill or a generated token), so the device fills its inputs bit for bit as the
/// host does.
constexpr std::uint32_t value_bits(Format f, std::uint64_t seed, std::uint64_t i) {
  const std::uint64_t h = splitmix64(seed ^ splitmix64(i));
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 1);
  const std::uint32_t binade = static_cast<std::uint32_t>((h >> 1) % 3);  // 0, 1, 2
  const std::uint32_t frac = static_cast<std::uint32_t>(h >> 40);         // 24 random bits
  switch (f) {
    case Format::f32: return (sign << 31) | ((125 + binade) << 23) | (frac & 0x7fffffu);
    case Format::f16: return (sign << 15) | ((13 + binade) << 10) | (frac & 0x3ffu);
    case Format::bf16: return (sign << 15) | ((125 + binade) << 7) | (frac & 0x7fu);
  }
  return 0;
}

enum class Variant { concat, preallocated };
const char* to_string(Variant v);

/// A kv_cache point's axes, typed.
struct Params {
  Variant variant = Variant::preallocated;
  std::int64_t batch = 1;       ///< B: sequences decoded together
  std::int64_t layers = 36;     ///< L
  std::int64_t kv_heads = 2;    ///< H: key/value heads (grouped-query attention keeps few)
  std::int64_t head_dim = 128;  ///< D: elements per head
  std::int64_t n0 = 128;        ///< tokens in the cache before decoding (the prefill)
  std::int64_t n1 = 384;        ///< tokens in the cache after decoding, >= n0
  DType dtype = DType::bf16;    ///< storage dtype: bf16, f16 or f32
  std::string mode = "eager";   ///< "eager" or "graph"

  /// R = 2·L·B·H: contiguous rows of the cache (one per layer, K or V, batch entry and head).
  std::int64_t rows() const { return 2 * layers * batch * kv_heads; }
  /// Decode steps of one iteration: n1 − n0.
  std::int64_t steps() const { return n1 - n0; }
  /// Elements one token adds to the cache: R·D.
  std::int64_t token_elements() const { return rows() * head_dim; }
};
/// @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has a bad value (dtype other
/// than bf16, f16, f32; n1 < n0).
Params params_of(const Args& args);

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

/// Per-iteration cost model (bpt = bytes_per_token, S = n1 − n0, C = copied_tokens(n0, n1)),
/// docs/experiments/kv_cache.md:
///   concat:       read bpt·(C + S) (old cache, token table), written bpt·(C + S) (new cache incl. the token slot);
///                 old read + new write = bpt·(n1² − n0²) = 2 · text_copy_bytes; S launches;
///   preallocated: read bpt·S (token table), written bpt·S (one slot per step); S launches;
///   compulsory 2·bpt·S (each new token read once and written once); flop 0; host syncs 0;
///   peak_work_bytes: concat two ping-pong buffers of n1 tokens (2·bpt·n1: what torch.cat's old and new tensors
///   hold at the last step), preallocated one (bpt·n1); each buffer at least 16 bytes (as allocated).
Cost cost(const Params& p);

/// Element index in the final cache [R][n1][D] of element d of token t in row r: (r·n1 + t)·D + d.
inline std::uint64_t final_index(const Params& p, std::int64_t r, std::int64_t t, std::int64_t d) {
  return (static_cast<std::uint64_t>(r) * static_cast<std::uint64_t>(p.n1) + static_cast<std::uint64_t>(t)) *
             static_cast<std::uint64_t>(p.head_dim) +
         static_cast<std::uint64_t>(d);
}

/// Fills P (`prefill`, R·n0·D elements) and T (`tokens`, S·R·D) from value_bits(format, seed, final_index(...)):
/// element (r, t, d) of the prefill (t < n0) and element (r, d) of token s (t = n0 + s) carry the bits their place
/// in the final cache has, so the final cache equals value_bits at every index. Parallel chunks; reproducible for a
/// seed on any thread count. @throws std::invalid_argument for a bad dtype, n1 < n0 or arrays of other sizes.
void generate(const Params& p, const View& prefill, const View& tokens, std::uint64_t seed);

/// The check: output "cache" against the final cache the iteration must leave, bit for bit (Compare::exact, a copy:
/// tolerance 0; NaN never passes: case C07), the expectation assembled from the inputs (prefill and token table,
/// which carry value_bits): every slot for concat (each step rewrites the whole cache), slots n0..n1−1 of every row
/// for preallocated, whose prefill slots no iteration writes: they must still hold the lab's poison (0xff bytes),
/// as must the whole cache when n0 = n1 (nothing runs, case C04). Notes bytes_per_token, generated_tokens and the
/// first mismatch's row and token.
void check(Compare& c);

/// One iteration on the host, the GPU kernels' data movement with memcpy: concat copies, at each step n = n0..n1−1,
/// every row's n old tokens and the new token into the other ping-pong buffer at row stride (n + 1)·D (step 0
/// reads the prefill; the last step writes `cache`, so the buffers alternate as cache, other, cache, ... backwards
/// from it); preallocated copies token s into slot n0 + s of every row of `cache` (`other` unused).
void host_run(const Params& p, const void* prefill, const void* tokens, void* cache, void* other);

}  // namespace labrun::kv_cache
