// Warp and block reductions with a documented summation order (the one labrun/kernels/reduce_order.hpp computes on
// the host): butterflies of __shfl_xor_sync, so every lane ends with the same bits. Header-only; compiles under
// nvcc's C++17 for the includer's CUDA architectures. For a reduction whose order nothing depends on, CUB's
// cub::BlockReduce is as good.
#pragma once

#include <labrun/kernels/reduce_order.hpp>

namespace labrun::kernels {

/// Reduces v over groups of `width` consecutive lanes (a power of two, at most 32; every lane of the warp calls):
/// butterfly steps of offsets width/2, ..., 1. Every lane of a group returns the group's result, whose bits are
/// butterfly_reduce's over the group's values in lane order (op commutative). T: a type __shfl_xor_sync takes.
template <class T, class Op>
__device__ __forceinline__ T warp_reduce(T v, Op op, int width = 32) {
#pragma unroll
  for (int off = width / 2; off > 0; off /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

/// Reduces v over a group of G threads, G a power of two: G <= 32, the groups of G consecutive lanes
/// (warp_reduce); G > 32, the whole block (G == blockDim.x, at most 1024): warp butterflies, the warps' results
/// through `smem` (at least G / 32 elements of shared memory), padded with `identity` to 32, and one more
/// butterfly in every warp. Every thread of the group returns the result (block_reduce_order's bits). Every thread
/// of the block must call it; it syncs the block twice when G > 32, so smem may be reused after it returns.
template <class T, class Op>
__device__ __forceinline__ T group_reduce(T v, int G, T identity, T* smem, Op op) {
  if (G <= 32) return warp_reduce(v, op, G);
  v = warp_reduce(v, op);
  const int warp = static_cast<int>(threadIdx.x) / 32, lane = static_cast<int>(threadIdx.x) % 32;
  if (lane == 0) smem[warp] = v;
  __syncthreads();
  v = lane < G / 32 ? smem[lane] : identity;
  v = warp_reduce(v, op);
  __syncthreads();  // smem may be reused once every warp has read it
  return v;
}

}  // namespace labrun::kernels
