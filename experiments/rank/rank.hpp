// The rank experiment (the cumsum trick of the masking text): write 0, 1, 2, ... (int64) into the masked-in
// positions of an output, in order, and -1 everywhere else. Three ways:
//   indexed_assign  out.fill_(-1); out[mask] = arange(count): the count must be read by the host to size arange
//                   and the index buffer (a host synchronization; not capturable in a CUDA graph);
//   scan_select     s = inclusive_scan(mask) as int64, then out = where(mask, s - 1, -1): static shapes, no host
//                   round trip, capturable;
//   fused           one single-pass exclusive scan writing out directly (the speed of light: mask read once,
//                   out written once).
// For a point (n, density) with mask m[0..n) (bytes, 0 or 1):
//   out[i] = #{ j < i : m[j] = 1 }  if m[i] = 1,   out[i] = -1  if m[i] = 0.
// Every variant produces this same int64 tensor, bit for bit; they differ in bytes moved and host syncs.
// On the SDK (LABRUN_EXPERIMENT(rank) in rank.cpp, LABRUN_CUDA_VARIANTS(rank) in cuda/rank_cuda.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <labrun/experiment.hpp>

namespace labrun::rank {

/// The value written at masked-out positions.
inline constexpr std::int64_t kMaskedOut = -1;
/// The byte the output is poisoned with before the checked iteration (Layout::poison): 0x5a5a5a5a5a5a5a5a is
/// neither a rank (it exceeds any n up to 4e9) nor -1, so an element the iteration never wrote is a mismatch (the
/// default 0xff poison is -1, the right value at every masked-out position).
inline constexpr std::uint8_t kPoisonByte = 0x5a;
inline constexpr std::int64_t kPoison = 0x5a5a5a5a5a5a5a5aLL;

enum class Variant { indexed_assign, scan_select, fused };
const char* to_string(Variant v);
/// @throws std::invalid_argument for an unknown name.
Variant parse_variant(const std::string& name);

/// Draws mask[0..n) from a counter-based generator (SplitMix64 of seed and index; Steele, Lea & Flood 2014, as
/// masking does): mask[i] = 1 iff the 53-bit uniform of splitmix64(seed ^ splitmix64(i)) is < density.
/// Reproducible for a seed, identical on every thread count. density 0 gives all zeros, 1 all ones. Returns the
/// number of ones. @throws std::invalid_argument if n < 0.
std::int64_t generate(std::uint8_t* mask, std::int64_t n, double density, std::uint64_t seed);
/// The text an input set's seed is drawn from: "rank/<n>/<density as %.17g>", the key of the pre-SDK code, so the
/// masks are those drawn before the port (seed = splitmix64(lab.seed ^ fnv1a64(text))).
std::string seed_text(std::int64_t n, double density);

/// The exact reference, materialised (n int64 values): out[i] = rank of i among the ones, or -1. Tests and small n.
std::vector<std::int64_t> reference(const std::uint8_t* mask, std::int64_t n);
/// The reference of mask[begin, begin + count) into out[0, count), given `before` = ones in mask[0, begin), in
/// parallel; returns the ones in the slice (the next slice's `before`). What the check compares chunk by chunk.
std::int64_t reference_slice(const std::uint8_t* mask, std::int64_t begin, std::int64_t count, std::int64_t before,
                             std::int64_t* out);

/// The selected count the estimate assumes before the mask exists: density x n, truncated.
std::int64_t expected_selected(std::int64_t n, double density);
/// Per-iteration cost model of a variant as implemented (docs/experiments/rank.md), with c = `selected`:
///   indexed_assign  read n + n + 16c, written 8n + 24c, launches 7, host_syncs 1
///   scan_select     read 10n, written 16n, launches 3, host_syncs 0
///   fused           read n, written 8n, launches 2, host_syncs 0
/// compulsory_bytes = 9n (mask read once, out written once) for all; flop 0 (integer work only).
Cost cost(Variant v, std::int64_t n, std::int64_t selected);

/// Scratch of the host implementations (indexed_assign's eager intermediates), sized on first use.
struct HostScratch {
  std::vector<std::int64_t> a, b;
};
/// One iteration of `variant` on the host into out[0..n), following the variant's op order: indexed_assign fills
/// -1, counts, writes arange(count), gathers the indices of the ones and scatters; scan_select stores the inclusive
/// scan (int64) into s[0..n) then selects; fused writes in one pass. `s` is used by scan_select only.
void host_run(Variant variant, const std::uint8_t* mask, std::int64_t n, std::int64_t* out, std::int64_t* s,
              HostScratch& scratch);

}  // namespace labrun::rank
