// Kernels of the masking experiment and their host launchers. The interface uses plain pointers and DType
// so that callers compile with the host compiler; all launches are asynchronous on `stream`.
//
// Element layout: `n` elements of the storage dtype (f32, f16, bf16, f64), contiguous, 256-byte aligned
// (cudaMalloc). Masks are n bytes, each 0 or 1. Sums are written as float (f32/f16/bf16 data: accumulated
// in f32, case C05) or double (f64 data).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include <labrun/dtype.hpp>

namespace labrun::masking::kernels {

/// Launch geometry of the op-by-op elementwise kernels: 256 threads, two 16-byte vectors per thread per step, at most
/// 8 blocks per SM, grid-stride beyond that.
inline constexpr int kBlock = 256;

/// Whether generate() can write inputs of dtype `t` on the device bit for bit as the host's generate() does
/// (f32 and f64: one correctly rounded cast from double on both; f16 and bf16 are generated on the host).
bool can_generate(DType t);
/// The inputs of masking::generate() (masking.hpp) on the device: element i of `data` (n of dtype t, f32 or f64)
/// and `mask` (n bytes, 0 or 1) from splitmix64 of (seed, i), bit for bit as on the host, so a point's device
/// inputs need neither host generation nor a host-to-device copy. @throws std::invalid_argument for another dtype.
void generate(DType t, std::int64_t n, double density, bool nonfinite, std::uint64_t seed, void* data,
              std::uint8_t* mask, int sm_count, cudaStream_t stream);

/// out[i] = in[i] * in[i] (rounded to the dtype) for i < limit, where limit = *count if `count` is a device
/// pointer, else n. No launch when n == 0. May run in place (in == out).
void square(DType t, const void* in, void* out, std::int64_t n, const std::int64_t* count, int sm_count,
            cudaStream_t stream);
/// buf[i] = sin(buf[i]) * 1.0001 (the downstream op), for i < limit as in square().
void downstream(DType t, void* buf, std::int64_t n, const std::int64_t* count, int sm_count, cudaStream_t stream);
/// buf[i] = buf[i] * mask[i] (the mask converted to the dtype: 0 or 1). 0 * inf = NaN, as in any framework.
void mask_multiply(DType t, void* buf, const std::uint8_t* mask, std::int64_t n, int sm_count, cudaStream_t stream);
/// out[i] = mask[i] ? in[i] : 0. May run in place.
void where_zero(DType t, const void* in, const std::uint8_t* mask, void* out, std::int64_t n, int sm_count,
                cudaStream_t stream);

/// Temporary storage CUB's DeviceReduce needs for sum() of up to n elements (allocate before capture, C12).
std::size_t sum_temp_bytes(DType t, std::int64_t n);
/// *out = sum of in[0..n) with CUB DeviceReduce::TransformReduce, widening each element to the accumulation
/// type first. n == 0 writes 0.
void sum(DType t, const void* in, std::int64_t n, void* out, void* temp, std::size_t temp_bytes, cudaStream_t stream);

/// Per-block partials for sum_device_count() and fused(): grid of the reduction, and bytes of the partials.
int reduce_grid(int sm_count);
std::size_t partials_bytes(DType t, int sm_count);
/// *out = sum of in[0..*count) where the count lives on the device (no host sync); in holds capacity n.
/// Two launches: block partials with cub::BlockReduce, then one block sums the partials.
void sum_device_count(DType t, const void* in, std::int64_t n, const std::int64_t* count, void* partials, void* out,
                      int sm_count, cudaStream_t stream);

/// Temporary storage of CUB's DeviceSelect::Flagged for up to n elements.
std::size_t select_temp_bytes(DType t, std::int64_t n);
/// Compaction: out[0..*count) = in[i] for i with mask[i] != 0, in order; *count on the device.
void select_flagged(DType t, const void* in, const std::uint8_t* mask, void* out, std::int64_t* count, std::int64_t n,
                    void* temp, std::size_t temp_bytes, cudaStream_t stream);

/// The speed-of-light variant: one pass over data and mask with 16-byte data loads; selected elements are
/// squared and taken through k downstream ops in registers (f32, or f64 for f64 data) and summed with
/// cub::BlockReduce into per-block partials; a second launch sums the partials into *out.
void fused(DType t, const void* data, const std::uint8_t* mask, std::int64_t n, int k, void* partials, void* out,
           int sm_count, cudaStream_t stream);

}  // namespace labrun::masking::kernels
