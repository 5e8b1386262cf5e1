// The kv_cache experiment's device input generator, for the GPU tests (the CUDA variants use it through
// LABRUN_CUDA_VARIANTS(kv_cache)'s generate_on_device). Plain pointers and sizes, so callers compile with the host
// compiler; the launch is asynchronous on `stream` and checked. Layouts: kv_cache.hpp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "kv_cache/kv_cache.hpp"

namespace labrun::kv_cache::kernels {

/// Fills the prefill P [rows][n0][D] and the token table T [n1 − n0][rows][D] with value_bits(f, seed, i), i the
/// element's index in the final cache [rows][n1][D]: bit for bit kv_cache::generate's. Either pointer may be null
/// when its tensor is empty.
void generate(Format f, std::int64_t rows, std::int64_t n0, std::int64_t n1, std::int64_t D, std::uint64_t seed,
              void* prefill, void* tokens, cudaStream_t stream);

}  // namespace labrun::kv_cache::kernels
