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
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "backend.hpp"
#include <labrun/point.hpp>

namespace labrun::rank {

/// The value written at masked-out positions.
inline constexpr std::int64_t kMaskedOut = -1;
/// The poison written over the output before the checked iteration (0x5a in every byte): neither a rank
/// (it exceeds any n up to 4e9) nor -1, so an element the iteration never wrote is a mismatch.
inline constexpr std::int64_t kPoison = 0x5a5a5a5a5a5a5a5aLL;
/// Elements per block of Inputs::block_prefix (2^16): the granularity of the parallel comparison.
inline constexpr std::int64_t kPrefixBlock = std::int64_t{1} << 16;

enum class Variant { indexed_assign, scan_select, fused };
const char* to_string(Variant v);
/// @throws std::invalid_argument for an unknown name.
Variant parse_variant(const std::string& name);

/// A rank point's axes, typed.
struct Params {
  Variant variant = Variant::fused;
  std::int64_t n = 0;          ///< elements of the mask and of the output
  double density = 0.5;        ///< probability that a mask byte is 1, in [0, 1]
  std::string mode = "eager";  ///< "eager" or "graph" (lab axis)
};
/// @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has a bad value.
Params params_of(const Point& point);

/// Host copy of a point's input: the mask (n bytes, each 0 or 1) and what the reference needs to compare
/// any slice of the output without materialising it.
struct Inputs {
  std::int64_t n = 0;
  std::vector<std::uint8_t> mask;
  std::int64_t selected = 0;  ///< number of mask bytes equal to 1 (c in the cost model)
  /// block_prefix[b] = number of ones in mask[0, b * kPrefixBlock), for b = 0 .. ceil(n / kPrefixBlock)
  /// (the last entry equals `selected`).
  std::vector<std::int64_t> block_prefix;
};

/// Draws the mask from a counter-based generator (SplitMix64 of seed and index; Steele, Lea & Flood 2014, as
/// masking does): mask[i] = 1 iff the 53-bit uniform of splitmix64(seed ^ splitmix64(i)) is < density.
/// Reproducible for a seed, identical on every thread count. density 0 gives all zeros, 1 all ones.
/// @throws std::invalid_argument if n < 0.
Inputs generate(std::int64_t n, double density, std::uint64_t seed);
/// Inputs from an explicit mask (bytes must be 0 or 1; tests). @throws std::invalid_argument otherwise.
Inputs from_mask(std::vector<std::uint8_t> mask);

/// The exact reference, materialised (n int64 values): out[i] = rank of i among the ones, or -1. For tests and
/// small n; the checks use compare(), which never builds it.
std::vector<std::int64_t> reference(const Inputs& inputs);

/// Compares out[begin, begin + count) of a variant's output with the reference, exactly (int64 equality;
/// the tolerance is 0: ranks are integers, every variant computes them with integer adds). `begin` must be a
/// multiple of kPrefixBlock (or count reach n). Accumulates into `mismatches` and keeps the first mismatch
/// (smallest index). Parallel over blocks of kPrefixBlock; deterministic.
struct Mismatches {
  std::int64_t count = 0;         ///< elements that differ
  std::int64_t first = -1;        ///< smallest mismatching index, -1 if none
  std::int64_t expected = 0;      ///< reference at `first`
  std::int64_t got = 0;           ///< output at `first`
  void merge(const Mismatches& other);
};
/// @throws std::invalid_argument if the slice is out of range or `begin` is not block-aligned.
Mismatches compare_slice(const Inputs& inputs, const std::int64_t* out, std::int64_t begin, std::int64_t count);
/// The Check of a whole output from its mismatches: value = number of mismatching elements, reference 0,
/// abs_error = value, tolerance 0, passed iff no element differs; detail: mismatches, first_mismatch index,
/// expected, got, selected, n.
Check check_of(const Inputs& inputs, const Mismatches& m);
/// compare_slice over all n elements, then check_of.
Check compare(const Inputs& inputs, const std::int64_t* out);

/// Per-iteration cost model of a variant as implemented (docs/experiments/rank.md), with c = `selected`:
///   indexed_assign  read n + n + 16c, written 8n + 24c, launches 7, host_syncs 1
///   scan_select     read 10n, written 16n, launches 3, host_syncs 0
///   fused           read n, written 8n, launches 2, host_syncs 0
/// compulsory_bytes = 9n (mask read once, out written once) for all; flop 0 (integer work only).
Cost cost(const Params& params, std::int64_t selected);
/// Bytes of the buffers a point holds (mask, out, and the variant's temporaries) with c = `selected`.
double working_set_bytes(const Params& params, std::int64_t selected);

/// Scratch of the host implementations (the eager intermediates), sized on first use.
struct HostScratch {
  std::vector<std::int64_t> a, b;
};

/// One iteration of `variant` on the host into out[0..n), following the variant's op order:
/// indexed_assign fills -1, counts, writes arange(count), gathers the indices of the ones and scatters;
/// scan_select stores the inclusive scan (int64) then selects; fused writes in one pass.
void host_run(Variant variant, const Inputs& inputs, std::int64_t* out, HostScratch& scratch);

/// The seed of a point's inputs: the lab seed mixed with the input-defining axes (n, density; not the
/// variant or the mode, so every variant of a point sees the same mask).
std::uint64_t input_seed(const Params& params, std::uint64_t lab_seed);

/// The inputs of consecutive points with the same (n, density, seed): variants are innermost in a sweep,
/// so each mask is generated once.
class InputCache {
 public:
  std::shared_ptr<const Inputs> inputs(const Params& params, std::uint64_t lab_seed);

 private:
  std::string key_;
  std::shared_ptr<const Inputs> inputs_;
};

/// Registers the experiment, its axes and variants with their host implementations.
void register_experiment(class Registry& registry);

/// Adds the CUDA implementation of every variant (experiments/rank/cuda/rank_cuda.cpp).
void register_cuda(class Registry& registry);

}  // namespace labrun::rank
