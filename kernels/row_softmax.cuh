// Two-pass softmax of a row held in registers by a group of threads: the softmax experiment's on-chip kernel and
// attention's naive path both use it. Header-only; compiles under nvcc's C++17 for the includer's architectures.
#pragma once

#include <cstdint>

#include <labrun/kernels/reduce.cuh>
#include <labrun/kernels/vec.cuh>

namespace labrun::kernels {

/// Loads VPT of a row's nv W-vectors into v as f32, G apart from vector `first`: vectors first, first + G, ...,
/// first + (VPT - 1) G (a group of G threads, thread `lane` passing first = lane, holds the row for VPT = nv / G;
/// a streaming loop passes first = lane + step x VPT x G), element i of the k-th at v[k W + i]. `pad` (default
/// -inf, softmax's identity) where a vector lies past the row's end, and everywhere when !active (a thread whose
/// group has no row still joins the reductions). `row`: the row's first element (16-byte aligned when W > 1).
template <class S, int W, int VPT>
__device__ __forceinline__ void load_row(const S* row, std::int64_t nv, std::int64_t first, int G, bool active,
                                         float (&v)[W * VPT], float pad = -INFINITY) {
#pragma unroll
  for (int k = 0; k < VPT; ++k) {
    const std::int64_t j = first + static_cast<std::int64_t>(k) * G;
    if (active && j < nv) {
      Vec<S, W>::load(row + j * W, v + k * W);
    } else {
#pragma unroll
      for (int i = 0; i < W; ++i) v[k * W + i] = pad;
    }
  }
}

/// Writes back what load_row loaded, the mirror of it: vector k (k < K) at first + k G, only where it lies in the
/// row (j < nv), element i as f(v[k W + i]), with streaming stores (the row is not read again). `row`: the output
/// row's first element (16-byte aligned when W > 1).
template <class S, int W, int K, class F>
__device__ __forceinline__ void store_row(S* row, std::int64_t nv, std::int64_t first, int G, const float* v, F f) {
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const std::int64_t j = first + static_cast<std::int64_t>(k) * G;
    if (j < nv) {
      float o[W];
#pragma unroll
      for (int i = 0; i < W; ++i) o[i] = f(v[k * W + i]);
      Vec<S, W>::store_streaming(row + j * W, o);
    }
  }
}

/// Two-pass softmax of the row a group of G threads holds in v (load_row): m = the row's max (group_reduce),
/// v[i] = exp(v[i] - m), s = the row's sum of them (group_reduce); returns 1 / s, so softmax = v[i] * (1 / s). A
/// row with no elements (every v = -inf: an inactive group's) takes m = 0, so its exps are 0, never NaN, and its
/// 1 / s is +inf: v[i] * (1 / s) is then NaN, as torch.softmax of an all -inf row is. `red`: shared memory of at least
/// 2 x G / 32 floats (two reductions), unused when G <= 32. Every thread of the block calls it (group_reduce).
template <int E>
__device__ __forceinline__ float softmax_two_pass(float (&v)[E], int G, float (*red)[32]) {
  float mx = -INFINITY;
#pragma unroll
  for (int i = 0; i < E; ++i) mx = fmaxf(mx, v[i]);
  mx = group_reduce(mx, G, -INFINITY, red[0], Max{});
  const float ref = mx == -INFINITY ? 0.0f : mx;
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < E; ++i) sum += (v[i] = expf(v[i] - ref));
  return 1.0f / group_reduce(sum, G, 0.0f, red[1], Sum{});
}

}  // namespace labrun::kernels
