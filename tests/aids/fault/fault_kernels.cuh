// Launchers of the fault test aid's kernels, on `stream`, asynchronous.
#pragma once

#include <cuda_runtime_api.h>

namespace labrun::fault::kernels {

/// *out = sum of x[0..n) (f32, atomicAdd of per-thread partial sums; order-dependent rounding).
void sum(const float* x, long long n, float* out, cudaStream_t stream);
/// A store to address 16: the context gets the sticky cudaErrorIllegalAddress.
void illegal_address(cudaStream_t stream);
/// __trap(): the context gets the sticky cudaErrorLaunchFailure.
void trap(cudaStream_t stream);
/// Spins until *flag != 0 (device memory nobody writes): never returns.
void hang(const int* flag, cudaStream_t stream);

}  // namespace labrun::fault::kernels
