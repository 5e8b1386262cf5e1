// The summation order of labrun/kernels/reduce.cuh as host code: the host twin a reference or a host variant
// calls to get, bit for bit, what a kernel's warp_reduce or group_reduce leaves. C++17, host and device.
#pragma once

#include <cmath>

#if defined(__CUDACC__)
#define LABRUN_HOST_DEVICE __host__ __device__
#else
#define LABRUN_HOST_DEVICE
#endif

namespace labrun::kernels {

/// a + b: the sum op of the reductions (host and device).
struct Sum {
  template <class T>
  LABRUN_HOST_DEVICE T operator()(T a, T b) const {
    return a + b;
  }
};

/// fmaxf(a, b) (a NaN operand gives the other): the max op of the reductions on f32 (host and device).
struct Max {
  LABRUN_HOST_DEVICE float operator()(float a, float b) const { return fmaxf(a, b); }
};

/// What every lane holds after warp_reduce over `width` lanes (a power of two, at most 32): butterfly steps of
/// offsets width/2, ..., 2, 1 in which lane l combines with lane l ^ off. Each step combines the same two values
/// in both lanes of a pair, so with a commutative `op` every lane ends with lane 0's bits, computed here as
/// lanes[l] = op(lanes[l], lanes[l + off]) for l < off. `lanes[0..width)` is overwritten; returns lanes[0].
template <class T, class Op>
LABRUN_HOST_DEVICE T butterfly_reduce(T* lanes, int width, Op op) {
  for (int off = width / 2; off > 0; off /= 2)
    for (int l = 0; l < off; ++l) lanes[l] = op(lanes[l], lanes[l + off]);
  return lanes[0];
}

/// What every thread holds after group_reduce over a whole block of `threads` threads (a multiple of 32, at most
/// 1024): each warp's butterfly over its 32 values, then one butterfly over the warps' results padded with
/// `identity` to 32. `values[0..threads)` (one per thread, in thread order) is overwritten.
template <class T, class Op>
LABRUN_HOST_DEVICE T block_reduce_order(T* values, int threads, T identity, Op op) {
  T partial[32];
  for (int w = 0; w < 32; ++w) partial[w] = w < threads / 32 ? butterfly_reduce(values + 32 * w, 32, op) : identity;
  return butterfly_reduce(partial, 32, op);
}

}  // namespace labrun::kernels
