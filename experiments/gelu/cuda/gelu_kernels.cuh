// Kernels of the gelu experiment and their host launchers. The interface uses plain pointers and DType so that
// callers compile with the host compiler; every launch is asynchronous on `stream` and checked.
//
// Element layout: `n` elements of the storage dtype (f32 or bf16), contiguous, 16-byte aligned (cudaMalloc gives
// 256). Math is f32 throughout; bf16 values are widened on load and rounded to nearest even on store. Indices are
// 64-bit: any n up to the axis maximum (2^31) and beyond works. Every launcher launches exactly one kernel, also
// for n = 0 (a kernel that does nothing), so an iteration's launch count and a graph's node count do not depend
// on n.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include <labrun/dtype.hpp>

namespace labrun::gelu::kernels {

/// Threads per block of every gelu kernel.
inline constexpr int kBlock = 256;

/// The seven ops of the unfused variant, each one kernel that reads whole tensors and writes one, rounding its f32
/// result to the storage dtype (as an eager framework's elementwise kernels do).
enum class Op {
  pow3,           ///< out = a·a·a            (a = x)
  scale_alpha,    ///< out = 0.044715f·a
  add,            ///< out = a + b            (a = x, b = 0.044715·x³)
  scale_sqrt2pi,  ///< out = 0.7978846f·a
  tanh,           ///< out = tanhf(a)
  add_one,        ///< out = 1 + a
  mul_half,       ///< out = (0.5·a)·b        (a = x, b = 1 + tanh(…))
};
/// Number of tensors an op reads (1 or 2).
int op_inputs(Op op);

/// One unfused op over n elements: out[i] = op(a[i], b[i]) (b ignored for one-input ops). The same vectorised map
/// as fused_vec (16-byte loads and stores, one vector per thread over a full grid, scalar tail), so the
/// unfused variant pays for its round trips, not for a slow kernel. `out` must not alias `a` or `b` (the loads
/// go through the read-only path).
void unfused_op(Op op, DType t, const void* a, const void* b, void* out, std::int64_t n, cudaStream_t stream);

/// The fused variant: y[i] = gelu(x[i]) with one scalar load and one scalar store per element (2 bytes for bf16),
/// one element per thread per grid-stride step; f32 math in registers, y rounded once.
void fused(DType t, const void* x, void* y, std::int64_t n, int sm_count, cudaStream_t stream);

/// The fused_vec variant: as fused() with 128-bit loads and stores (float4; 8 bf16 per 16 bytes), one vector
/// per thread over a full grid (vec_grid), the last n mod (4 or 8) elements by block 0 with scalar accesses. Same
/// per-element expression as fused(), so the two give identical bits.
void fused_vec(DType t, const void* x, void* y, std::int64_t n, cudaStream_t stream);

/// Looks up the occupancy of the scalar kernel of dtype t (once per process), which its launcher uses for its grid:
/// call before a graph capture, so no runtime query runs inside one. @throws std::invalid_argument for other dtypes.
void prepare(DType t);

/// Grid (blocks of kBlock threads) the vectorised map uses for n elements: one 16-byte vector per thread, every
/// vector covered (no cap, no grid-stride loop); at least 1.
int vec_grid(DType t, std::int64_t n);
/// Grid of the scalar fused kernel: one element per thread, capped at the blocks resident at once; at least 1.
int scalar_grid(DType t, std::int64_t n, int sm_count);

}  // namespace labrun::gelu::kernels
