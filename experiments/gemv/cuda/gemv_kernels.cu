// The gemv experiment's kernels, their launchers, and its CUDA variants (LABRUN_CUDA_VARIANTS): every buffer is
// the SDK's (allocated before any capture, case C12), the cuBLAS handle the setup's; each iteration is marked.
#include "gemv/cuda/gemv_kernels.cuh"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <type_traits>

#include <labrun/cublas.hpp>
#include <labrun/cuda.cuh>
#include <labrun/experiment.hpp>
#include <labrun/kernels/reduce.cuh>
#include <labrun/kernels/vec.cuh>
#include <labrun/status.hpp>

#include "gemv/gemv.hpp"
#include "gemv/gemv_shape.hpp"

namespace labrun::gemv::kernels {

namespace {

using namespace ::labrun::kernels;  // Elem, warp_reduce, group_reduce, Sum

// A's 16-byte vectors are read once: through the non-coherent path without allocating in L1 (x's vectors, read by
// every row of the SM, keep L1 to themselves), with a 256-byte L2 prefetch hint for the streaming DRAM reads.
__device__ __forceinline__ uint4 load_stream(const uint4* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

// acc[i] = fma(a_i, x_i, acc[i]) for the 8 elements of one vector (element i of the vector into accumulator i).
template <class S>
__device__ __forceinline__ void fma8(float (&acc)[8], const uint4& a, const uint4& x) {
  const unsigned aw[4] = {a.x, a.y, a.z, a.w};
  const unsigned xw[4] = {x.x, x.y, x.z, x.w};
#pragma unroll
  for (int k = 0; k < 4; ++k) {
    const float2 af = Convert<S>::unpack2(aw[k]);
    const float2 xf = Convert<S>::unpack2(xw[k]);
    acc[2 * k] = fmaf(af.x, xf.x, acc[2 * k]);
    acc[2 * k + 1] = fmaf(af.y, xf.y, acc[2 * k + 1]);
  }
}

// One thread's partial of a row on the vector path: vectors j = t, t + G, … (nv = n / 8 of them), kUnroll in
// flight per step, in increasing j; the 8 accumulators combined pairwise (gemv::row_dot's thread_partial<8>).
template <class S>
__device__ __forceinline__ float partial_vec(const uint4* __restrict__ a, const uint4* __restrict__ x, std::int64_t nv,
                                             int t, int G) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (std::int64_t j0 = t; j0 < nv; j0 += static_cast<std::int64_t>(kUnroll) * G) {
    uint4 av[kUnroll], xv[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::int64_t j = j0 + static_cast<std::int64_t>(k) * G;
      if (j < nv) {
        av[k] = load_stream(a + j);
        xv[k] = __ldg(x + j);
      } else {
        av[k] = xv[k] = make_uint4(0, 0, 0, 0);
      }
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
      if (j0 + static_cast<std::int64_t>(k) * G < nv) fma8<S>(acc, av[k], xv[k]);
  }
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// The scalar path (n % 8 != 0: rows are not 16-byte aligned): elements j = t, t + G, …, one accumulator.
template <class S>
__device__ __forceinline__ float partial_scalar(const S* __restrict__ a, const S* __restrict__ x, std::int64_t n, int t,
                                                int G) {
  float acc = 0;
  for (std::int64_t j0 = t; j0 < n; j0 += static_cast<std::int64_t>(kUnroll) * G) {
    float av[kUnroll], xv[kUnroll];
#pragma unroll
    for (int k = 0; k < kUnroll; ++k) {
      const std::int64_t j = j0 + static_cast<std::int64_t>(k) * G;
      av[k] = j < n ? Convert<S>::load(__ldg(a + j)) : 0.0f;
      xv[k] = j < n ? Convert<S>::load(__ldg(x + j)) : 0.0f;
    }
#pragma unroll
    for (int k = 0; k < kUnroll; ++k)
      if (j0 + static_cast<std::int64_t>(k) * G < n) acc = fmaf(av[k], xv[k], acc);
  }
  return acc;
}

template <class S, bool VEC>
__device__ __forceinline__ float partial(const S* a_row, const S* x, std::int64_t n, int t, int G) {
  if constexpr (VEC)
    return partial_vec<S>(reinterpret_cast<const uint4*>(a_row), reinterpret_cast<const uint4*>(x), n / kVectorWidth, t,
                          G);
  else return partial_scalar<S>(a_row, x, n, t, G);
}

template <class S, int T, bool VEC>
__global__ void __launch_bounds__(T)
    row_block_kernel(const S* __restrict__ A, const S* __restrict__ x, float* __restrict__ y, std::int64_t n) {
  static_assert(T % kWarp == 0 && T <= 1024, "a whole number of warps, at most 32");
  __shared__ float warp_sums[T / kWarp];
  const std::int64_t row = blockIdx.x;
  const S* a = A + static_cast<std::size_t>(row) * static_cast<std::size_t>(n);
  // The block's two butterflies (kernels/reduce.cuh), the order of gemv::row_dot.
  const float v = group_reduce(partial<S, VEC>(a, x, n, static_cast<int>(threadIdx.x), T), T, 0.0f, warp_sums, Sum{});
  if (threadIdx.x == 0) y[row] = v;
}

template <class S, bool VEC>
__global__ void __launch_bounds__(kWarpRowWarps* kWarp)
    warp_row_kernel(const S* __restrict__ A, const S* __restrict__ x, float* __restrict__ y, std::int64_t m,
                    std::int64_t n) {
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpRowWarps +
                           static_cast<std::int64_t>(threadIdx.x / kWarp);
  if (row >= m) return;  // the whole warp leaves together: the butterflies below keep full masks
  const int lane = static_cast<int>(threadIdx.x) % kWarp;
  const S* a = A + static_cast<std::size_t>(row) * static_cast<std::size_t>(n);
  const float v = warp_reduce(partial<S, VEC>(a, x, n, lane, kWarp), Sum{});
  if (lane == 0) y[row] = v;
}

// Calls f(S*, integral_constant<bool, VEC>) for the dtype and the access width n allows.
template <class F>
void dispatch(DType t, std::int64_t n, F&& f) {
  const bool vec = n % kVectorWidth == 0;
  if (t == DType::f16) {
    if (vec) f(static_cast<__half*>(nullptr), std::true_type{});
    else f(static_cast<__half*>(nullptr), std::false_type{});
  } else if (t == DType::bf16) {
    if (vec) f(static_cast<__nv_bfloat16*>(nullptr), std::true_type{});
    else f(static_cast<__nv_bfloat16*>(nullptr), std::false_type{});
  } else {
    throw std::invalid_argument(std::string("gemv kernels: dtype must be f16 or bf16, got ") + labrun::to_string(t));
  }
}

void require_aligned(const void* a, const void* x) {
  if (reinterpret_cast<std::uintptr_t>(a) % 16 != 0 || reinterpret_cast<std::uintptr_t>(x) % 16 != 0)
    throw std::invalid_argument("gemv kernels: A and x must be 16-byte aligned");
}

template <class S, bool VEC, class F>
void for_each_kernel(F&& f) {
  f(reinterpret_cast<const void*>(&row_block_kernel<S, 256, VEC>));
  f(reinterpret_cast<const void*>(&row_block_kernel<S, 512, VEC>));
  f(reinterpret_cast<const void*>(&row_block_kernel<S, 1024, VEC>));
  f(reinterpret_cast<const void*>(&warp_row_kernel<S, VEC>));
}

}  // namespace

Geometry geometry(int threads, std::int64_t m, std::int64_t n) {
  if (threads != 256 && threads != 512 && threads != 1024 && threads != kWarp)
    throw std::invalid_argument(
        "gemv kernels: threads per row must be 256, 512, 1024 (row_block) or 32 (warp_row), got " +
        std::to_string(threads));
  if (m < 0 || n < 0) throw std::invalid_argument("gemv kernels: m and n must be >= 0");
  Geometry g;
  g.width = n % kVectorWidth == 0 ? kVectorWidth : 1;
  g.threads_per_row = threads;
  if (threads == kWarp) {
    g.rows_per_block = kWarpRowWarps;
    g.block = kWarpRowWarps * kWarp;
    g.grid = (m + kWarpRowWarps - 1) / kWarpRowWarps;
  } else {
    g.rows_per_block = 1;
    g.block = threads;
    g.grid = m;
  }
  if (g.grid > 2147483647) throw std::invalid_argument("gemv kernels: m too large for one grid");
  return g;
}

void row_block(int threads, DType t, const void* a, const void* x, float* y, std::int64_t m, std::int64_t n,
               cudaStream_t stream) {
  const Geometry g = geometry(threads, m, n);
  if (threads == kWarp) throw std::invalid_argument("gemv kernels: row_block needs 256, 512 or 1024 threads");
  require_aligned(a, x);
  if (m == 0) return;
  dispatch(t, n, [&](auto* p, auto vec) {
    using S = std::remove_pointer_t<decltype(p)>;
    constexpr bool V = decltype(vec)::value;
    const S* as = static_cast<const S*>(a);
    const S* xs = static_cast<const S*>(x);
    const auto grid = static_cast<unsigned>(g.grid);
    if (threads == 256) row_block_kernel<S, 256, V><<<grid, 256, 0, stream>>>(as, xs, y, n);
    else if (threads == 512) row_block_kernel<S, 512, V><<<grid, 512, 0, stream>>>(as, xs, y, n);
    else row_block_kernel<S, 1024, V><<<grid, 1024, 0, stream>>>(as, xs, y, n);
  });
  LABRUN_CUDA_LAUNCHED();
}

void warp_row(DType t, const void* a, const void* x, float* y, std::int64_t m, std::int64_t n, cudaStream_t stream) {
  const Geometry g = geometry(kWarp, m, n);
  require_aligned(a, x);
  if (m == 0) return;
  dispatch(t, n, [&](auto* p, auto vec) {
    using S = std::remove_pointer_t<decltype(p)>;
    constexpr bool V = decltype(vec)::value;
    warp_row_kernel<S, V><<<static_cast<unsigned>(g.grid), g.block, 0, stream>>>(static_cast<const S*>(a),
                                                                                 static_cast<const S*>(x), y, m, n);
  });
  LABRUN_CUDA_LAUNCHED();
}

void prepare(DType t) {
  auto load = [](const void* kernel) {
    cudaFuncAttributes attr;
    LABRUN_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
  };
  // Both paths, whatever n: a handful of small kernels, loaded once per process.
  dispatch(t, 8, [&](auto* p, auto) {
    using S = std::remove_pointer_t<decltype(p)>;
    for_each_kernel<S, true>(load);
    for_each_kernel<S, false>(load);
  });
}

void poison(float* y, std::int64_t m, cudaStream_t stream) {
  if (m <= 0) return;
  LABRUN_CUDA_CHECK(cudaMemsetAsync(y, 0xff, static_cast<std::size_t>(m) * sizeof(float), stream));
}

}  // namespace labrun::gemv::kernels

namespace labrun::gemv {

namespace {

// A variant's setup, returning its iteration: one kernel, or one cuBLAS GEMM with n = 1 on a handle made here
// (with its workspace: work memory), never in the iteration (case C12).
Step launcher(Launch& setup) {
  // The arrays, resolved here so the timed iteration only launches.
  const void* a = setup.in("A").data;
  const void* x = setup.in("x").data;
  float* y = setup.out("y").as<float>();
  const Args& args = setup.args();
  const Variant v = variant_of(args);
  const DType t = args.dtype();
  const std::int64_t m = args.i64("m"), n = args.i64("n");
  const double bytes = cost(v, m, n, t).bytes;
  if (v == Variant::cublas) {
    if (!cublas::available())
      throw PointOutcome(Status::not_supported, "cuBLAS cannot be used here: " + cublas::unavailable_reason());
    auto handle = std::make_shared<cublas::Handle>(setup.stream(), static_cast<std::size_t>(kCublasWorkspaceBytes));
    // Row-major A (m × n) is column-major Aᵀ (n × m, lda = n): y = op(Aᵀ)·x with op = T, a GEMM with m' = m,
    // n' = 1, k = n; f16 (or bf16) A and x, f32 y, f32 compute.
    const auto type = t == DType::bf16 ? cublas::Type::bf16 : cublas::Type::f16;
    const int mi = static_cast<int>(m), ni = static_cast<int>(n);
    return [=](Launch& l) {
      handle->gemm(cublas::Op::t, cublas::Op::n, mi, 1, ni, 1.0f, a, type, std::max(ni, 1), x, type, std::max(ni, 1),
                   0.0f, y, cublas::Type::f32, std::max(mi, 1));
      l.mark("cublas_gemm", bytes);
    };
  }
  kernels::prepare(t);  // kernels loaded now, not inside a graph capture
  if (v == Variant::warp_row)
    return [=](Launch& l) {
      kernels::warp_row(t, a, x, y, m, n, l.stream());
      l.mark("warp_row", bytes);
    };
  const int threads = threads_per_row(v);
  const char* name = to_string(v);
  return [=](Launch& l) {
    kernels::row_block(threads, t, a, x, y, m, n, l.stream());
    l.mark(name, bytes);
  };
}

}  // namespace

LABRUN_CUDA_VARIANTS(gemv) {
  for (const char* v : {"row_block_256", "row_block_512", "row_block_1024", "warp_row", "cublas"}) e.cuda(v, launcher);
}

}  // namespace labrun::gemv
