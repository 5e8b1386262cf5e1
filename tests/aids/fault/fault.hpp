// The fault test aid (issue 12): an experiment whose variants fail on purpose, to show that one point's crash,
// hang or sticky CUDA error costs that point only. It is built into the test binary labrun_testaid (tests/aids/),
// never into labrun: a normal build's `labrun list` does not show it.
//
// Variants (axis n: elements of the summed array, f32):
//   sum              correct: the sum of n random floats (host: a loop; CUDA: a kernel with atomicAdd), checked
//                    against a double-precision reference; the ordinary points around the faulty ones
//   abort            host code calls std::abort() in the first iteration: the worker dies of SIGABRT -> `crashed`
//   hang             never returns (host: sleeps; CUDA: a kernel spinning on a flag nobody sets) -> `timeout`
//   illegal_address  CUDA only: a kernel stores to address 16 -> cudaErrorIllegalAddress -> `device_fault`
//   trap             CUDA only: a kernel executes __trap() -> cudaErrorLaunchFailure -> `device_fault`
#pragma once

#include "registry.hpp"

namespace labrun::fault {

/// Registers the experiment `fault` (an ExperimentDef of its axis and variants, registered directly: its workloads
/// are its own, not the SDK's) with its host implementations (sum, abort, hang).
void register_experiment(Registry& registry);

/// Adds the CUDA implementations of every variant. Defined in fault_cuda.cpp (CUDA builds only).
void register_cuda(Registry& registry);

/// The double-precision sum of `x` and the absolute tolerance an f32 sum of it is held to: n x 2^-23 x sum |x|
/// (the worst-case error bound of a recursive f32 summation; Higham, "Accuracy and Stability of Numerical
/// Algorithms", 2nd ed., eq. 4.4), at least 1e-6.
std::pair<double, double> reference_sum(const std::vector<float>& x);

/// The check of a variant's f32 sum `value` of `x` against reference_sum(x); NaN or inf never passes (C07).
CheckOutcome check_sum(double value, const std::vector<float>& x);

/// The point's inputs: n floats uniform in [0, 1) from the point's seed (std::mt19937_64). Fresh per workload.
std::vector<float> inputs(std::int64_t n, std::uint64_t seed);

}  // namespace labrun::fault
