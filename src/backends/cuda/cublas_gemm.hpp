// bf16 GEMM through cuBLAS, loaded with dlopen at run time (no link-time dependency, so labrun still starts on
// machines without cuBLAS): the compute ceiling of the roofline.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "record.hpp"

namespace labrun {

/// Times C = A * B for square bf16 matrices of side `n` (f32 accumulation, CUBLAS_COMPUTE_32F, tensor cores)
/// on random inputs: 3 warmups, then the median of `reps` event-timed products. flop = 2 * n^3.
/// Returns {n, time_s, flop_per_s, library} or {unavailable: reason} when cuBLAS cannot be loaded or fails.
Json cublas_bf16_gemm(int n, int reps, cudaStream_t stream);

}  // namespace labrun
