// 16-byte vector loads and stores of f32, f16 and bf16 data as f32 values, their scalar form (W = 1) for rows whose
// length is not a multiple of the vector, and the tail of an elementwise kernel. Header-only; compiles under nvcc's
// C++17 for the includer's CUDA architectures.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstring>

namespace labrun::kernels {

/// A stored element type S as f32 compute: load widens exactly, store rounds to nearest even. For the 2-byte
/// types, unpack2/pack2 convert the two elements of a 32-bit word (element 2k in the low half, little endian).
template <class S>
struct Convert;
template <>
struct Convert<float> {
  __device__ static float load(float s) { return s; }
  __device__ static float store(float c) { return c; }
};
template <>
struct Convert<__nv_bfloat16> {
  __device__ static float load(__nv_bfloat16 s) { return __bfloat162float(s); }
  __device__ static __nv_bfloat16 store(float c) { return __float2bfloat16_rn(c); }
  __device__ static float2 unpack2(unsigned w) {
    return make_float2(__uint_as_float(w << 16), __uint_as_float(w & 0xffff0000u));
  }
  __device__ static unsigned pack2(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x = the low half
    unsigned w;
    memcpy(&w, &h, 4);
    return w;
  }
};
template <>
struct Convert<__half> {
  __device__ static float load(__half s) { return __half2float(s); }
  __device__ static __half store(float c) { return __float2half_rn(c); }
  __device__ static float2 unpack2(unsigned w) {
    __half2 h;
    memcpy(&h, &w, 4);
    return __half22float2(h);  // .x = the low half = the element at the lower address
  }
  __device__ static unsigned pack2(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);
    unsigned w;
    memcpy(&w, &h, 4);
    return w;
  }
};

/// Elements of S in one 16-byte vector: 4 (f32), 8 (f16, bf16), 2 (f64).
template <class S>
inline constexpr int kVecWidth = static_cast<int>(16 / sizeof(S));

/// W consecutive elements of S as f32 values: W == kVecWidth<S>, one 16-byte access (p 16-byte aligned: the
/// caller's element offset a multiple of W in a buffer aligned to 16 bytes); W == 1, one scalar access. S: float,
/// __half, __nv_bfloat16.
template <class S, int W = kVecWidth<S>>
struct Vec {
  static_assert(W == 1 || W == kVecWidth<S>, "W is one 16-byte vector or one element");
  static constexpr int kWidth = W;

  /// The W elements of the 16-byte vector q, in address order.
  __device__ static void unpack(const uint4& q, float* v) {
    const unsigned w[4] = {q.x, q.y, q.z, q.w};
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (sizeof(S) == 4) {
        v[k] = __uint_as_float(w[k]);
      } else {
        const float2 f = Convert<S>::unpack2(w[k]);
        v[2 * k] = f.x, v[2 * k + 1] = f.y;
      }
    }
  }
  /// v[0..W) rounded to S and packed into one 16-byte vector, in address order.
  __device__ static uint4 pack(const float* v) {
    unsigned w[4];
#pragma unroll
    for (int k = 0; k < 4; ++k) {
      if constexpr (sizeof(S) == 4) w[k] = __float_as_uint(v[k]);
      else w[k] = Convert<S>::pack2(v[2 * k], v[2 * k + 1]);
    }
    return make_uint4(w[0], w[1], w[2], w[3]);
  }
  /// v[0..W) = p[0..W) as f32.
  __device__ static void load(const S* p, float* v) {
    if constexpr (W == 1) v[0] = Convert<S>::load(*p);
    else unpack(*reinterpret_cast<const uint4*>(p), v);
  }
  /// p[0..W) = v[0..W) rounded to S.
  __device__ static void store(S* p, const float* v) {
    if constexpr (W == 1) *p = Convert<S>::store(v[0]);
    else *reinterpret_cast<uint4*>(p) = pack(v);
  }
  /// store() as a streaming store (__stcs: evict first), for output nothing reads again soon.
  __device__ static void store_streaming(S* p, const float* v) {
    if constexpr (W > 1) {
      __stcs(reinterpret_cast<uint4*>(p), pack(v));
    } else if constexpr (sizeof(S) == 4) {
      __stcs(reinterpret_cast<float*>(p), Convert<S>::store(v[0]));
    } else {
      const S s = Convert<S>::store(v[0]);
      unsigned short bits;
      memcpy(&bits, &s, 2);
      __stcs(reinterpret_cast<unsigned short*>(p), bits);
    }
  }
};

/// The tail of an elementwise kernel over n elements done in vectors of W: f(i) for i in [n / W * W, n), by the
/// threads of block 0 (blockDim.x of them), so the vector loop never reads past n.
template <int W, class F>
__device__ __forceinline__ void block0_tail(std::int64_t n, F f) {
  if (blockIdx.x != 0) return;
  for (std::int64_t i = n / W * W + threadIdx.x; i < n; i += blockDim.x) f(i);
}

}  // namespace labrun::kernels
