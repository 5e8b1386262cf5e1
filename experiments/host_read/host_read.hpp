// The host_read experiment: a loop of k small device steps (one elementwise update of a vector of n f32 and its
// reduction to a scalar loss), with the losses brought to the host two ways: `item_per_step` (each step's loss
// read by the host right after the step, as loss.item() or printing the loss does: a host sync per step) and
// `accumulate_on_device` (the k losses kept in a device array, read once after the loop). Shared by the host side,
// the CUDA side (this header compiles under nvcc's C++17) and the tests. Formulas: docs/experiments/host_read.md.
//
// For a point (k, n) with inputs x0[0..n), all in [0.25, 2):
//   step j = 0..k−1:  x ← fma(0.75, x, c_j) elementwise (step 0 reads x0),  loss_j = Σ_i x_i
//   c_j = 0.25 + 0.125·(j mod 8)  (exact in f32; the losses differ from step to step, so a missing or repeated
//   step fails the check)
// A point's arrays: input "x0" (n f32), output "loss" (k f32: the losses as the device holds them, which the host
// reads), scratch "x" (n f32, the working vector) and "partials" (kMaxBlocks f32, the per-block sums of a step).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <labrun/experiment.hpp>

namespace labrun::host_read {

/// The update's decay factor a in x ← a·x + c_j (exact in f32).
inline constexpr float kDecay = 0.75f;
/// The step's offset c_j = 0.25 + 0.125·(j mod 8), exact in f32 and double.
constexpr float offset(std::int64_t j) { return 0.25f + 0.125f * static_cast<float>(j % 8); }

/// Most blocks a step's reduction uses: the device partial sums are a fixed buffer of this many floats.
inline constexpr int kMaxBlocks = 4096;

enum class Variant { item_per_step, accumulate_on_device };
const char* to_string(Variant v);

/// A host_read point's axes, typed.
struct Params {
  Variant variant = Variant::accumulate_on_device;
  std::int64_t steps = 100;    ///< k: steps per iteration (each an update and a reduction)
  std::int64_t n = 1000000;    ///< elements of the vector
  std::string mode = "eager";  ///< "eager" or "graph"
};
/// @throws std::out_of_range / std::invalid_argument when the point lacks an axis or has a bad value.
Params params_of(const Args& args);

/// x0 (`x0.count` f32) from a counter-based generator (SplitMix64 of seed and index; Steele, Lea & Flood 2014),
/// uniform in [0.25, 2) and rounded to f32: positive, never zero, reproducible for a seed on any thread count.
/// @throws std::invalid_argument for a negative count.
void generate(const View& x0, std::uint64_t seed);

/// The float64 reference of the k losses, with what the tolerance needs. The update is affine, so
/// x_{j+1} = a^{j+1}·x0 + d_{j+1} (d_0 = 0, d_{j+1} = a·d_j + c_j) and loss_j = a^{j+1}·Σ x0 + n·d_{j+1}: O(n + k).
/// Stored as the point's Reference arrays "loss" and "elementwise_error".
struct Losses {
  std::vector<double> loss;  ///< loss_j, j = 0..k−1 (every x is positive: also Σ|x|)
  /// First-order bound on Σ_i |x̂_{j+1,i} − x_{j+1,i}|, the f32 updates' rounding carried into step j's sum:
  /// E_j = a·E_{j−1} + u·loss_j (each fma rounds once, relative error <= u = 2^-24; a is exact), E_{−1} = 0.
  std::vector<double> elementwise_error;
};
/// @throws std::invalid_argument for k < 0.
Losses reference(const View& x0, std::int64_t steps);

/// Absolute bound on |loss_j − ref_j| (docs/experiments/host_read.md, "Tolerance"), unscaled (the lab applies
/// lab.tolerance_scale), from E_j, ref_j = loss_j and n:
///   bound_j = 2·E_j + (⌈log2 max(n, 2)⌉ + ⌈√n⌉ + 1)·u·|loss_j| + 1e-300
/// 2·E_j covers the updates to second order; the reduction term is masking's (pairwise ⌈log2 n⌉ plus per-thread
/// runs ⌈√n⌉ by the probabilistic bound λ√n·u of Higham & Mary, SIAM J. Sci. Comput. 41(5), 2019, λ = 1) plus one
/// rounding of the loss to f32. n = 0: every loss is 0, exactly.
double bound(double elementwise_error, double loss, std::int64_t n);

/// The check: output "loss" (the k losses) against the reference's "loss", element by element with bound(), so a
/// failure names the worst step, its loss, reference and bound, and the mismatches; NaN (the poison) or infinity
/// never passes (case C07). k = 0 compares nothing and passes. Notes steps, n, final_loss and final_reference.
void check(Compare& c);

/// Per-iteration cost model (docs/experiments/host_read.md), for k >= 1:
///   both: per step read 4n (x, or x0 at step 0), written 4n + 4 (x and the loss); the per-block partial sums
///         (<= kMaxBlocks floats per step) ignored; flop 3·n·k (fma 2, add 1);
///   item_per_step: + k device-to-host copies of 4 bytes (read 4k); launches 3k (2 kernels and a copy per step);
///                  host_syncs k;
///   accumulate_on_device: + one copy of the k losses (read 4k); launches 2k + 1; host_syncs 1 in eager mode, 0 in
///                  graph mode (the copy is a node of the graph; the host waits when the replays end);
///   compulsory 4n + 4n + 4k (x0 read, x written, the losses); k = 0: all zero (nothing runs, case C04);
///   peak_work_bytes max(4n, 16) + max(4k, 16) + 4·kMaxBlocks (x, the loss array, the partial sums).
Cost cost(const Params& p);

/// One iteration on the host: the k steps with the kernels' arithmetic (std::fma in f32), each loss summed in
/// double and rounded to f32, written to losses[j]. Both variants are the same computation on the host (a host
/// read there is a plain load); `x` is the working vector (n floats).
void host_run(const float* x0, std::int64_t n, std::int64_t steps, float* x, float* losses);

}  // namespace labrun::host_read
