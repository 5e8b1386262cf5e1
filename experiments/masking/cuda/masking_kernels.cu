// The masking experiment's kernels, their launchers, and its CUDA variants (LABRUN_CUDA_VARIANTS): the data, mask,
// result, temporaries and CUB's workspaces are the SDK's or allocated at setup (case C12); only `index` allocates
// inside an iteration, from the stream-ordered pool, around the count it reads back (a host synchronization).
#include "masking/cuda/masking_kernels.cuh"

#include <cub/block/block_reduce.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/std/functional>
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include <labrun/counter_rng.hpp>
#include <labrun/cuda.cuh>
#include <labrun/kernels/vec.cuh>

#include "masking/masking.hpp"

namespace labrun::masking::kernels {

namespace {

using ::labrun::kernels::block0_tail;
using ::labrun::kernels::kVecWidth;

// Storage type S, compute type C and accumulation type A per dtype.
template <class S>
struct Traits;
template <>
struct Traits<float> {
  using C = float;
  using A = float;
  __device__ static C load(float s) { return s; }
  __device__ static float store(C c) { return c; }
};
template <>
struct Traits<double> {
  using C = double;
  using A = double;
  __device__ static C load(double s) { return s; }
  __device__ static double store(C c) { return c; }
};
template <>
struct Traits<__half> {
  using C = float;
  using A = float;
  __device__ static C load(__half s) { return __half2float(s); }
  __device__ static __half store(C c) { return __float2half_rn(c); }
};
template <>
struct Traits<__nv_bfloat16> {
  using C = float;
  using A = float;
  __device__ static C load(__nv_bfloat16 s) { return __bfloat162float(s); }
  __device__ static __nv_bfloat16 store(C c) { return __float2bfloat16_rn(c); }
};

// masking::generate() of masking.cpp, element by element (the same expressions and roundings, in double, then one
// cast; checked bit for bit against the host in tests/gpu/test_masking_gpu.cpp).
template <class S>
__global__ void generate_kernel(std::int64_t n, double density, bool nonfinite, std::uint64_t seed, S* data,
                                std::uint8_t* mask) {
  const double inf = __longlong_as_double(0x7ff0000000000000ll), nan = __longlong_as_double(0x7ff8000000000000ll);
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h1 = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)));
    const std::uint64_t h2 = splitmix64(h1);
    const bool on = unit_interval(h1) < density;
    // __dmul_rn/__dadd_rn: two roundings as on the host; nvcc would contract a + b * c into one FMA.
    double v = __dadd_rn(0.25, __dmul_rn(1.75, unit_interval(h2))) * ((h1 & 1) ? -1.0 : 1.0);
    if (!on && nonfinite) {
      if ((h2 & 3) == 0) v = inf;
      if ((h2 & 3) == 1) v = nan;
    }
    mask[i] = on ? 1 : 0;
    data[i] = static_cast<S>(v);
  }
}

__device__ inline float down_op(float x) { return sinf(x) * 1.0001f; }
__device__ inline double down_op(double x) { return sin(x) * 1.0001; }

__device__ inline std::int64_t limit_of(std::int64_t n, const std::int64_t* count) {
  return count ? min(n, *count) : n;
}

// The W mask bytes of one 16-byte vector of data (W = kVecWidth<S>: 4, 2 or 8 elements), read as one word.
template <int W>
using MaskWord = std::conditional_t<W == 8, unsigned long long, std::conditional_t<W == 4, unsigned, unsigned short>>;

// The elementwise ops, each out = op(in, mask byte) in the storage dtype, as an eager framework runs them.
template <class S>
struct SquareOp {
  __device__ S operator()(S x, std::uint8_t) const {
    const auto c = Traits<S>::load(x);
    return Traits<S>::store(c * c);
  }
};
template <class S>
struct DownstreamOp {
  __device__ S operator()(S x, std::uint8_t) const { return Traits<S>::store(down_op(Traits<S>::load(x))); }
};
template <class S>
struct MaskMultiplyOp {
  __device__ S operator()(S x, std::uint8_t m) const {
    using C = typename Traits<S>::C;
    return Traits<S>::store(Traits<S>::load(x) * static_cast<C>(m));
  }
};
template <class S>
struct WhereZeroOp {
  __device__ S operator()(S x, std::uint8_t m) const {
    using C = typename Traits<S>::C;
    return m ? x : Traits<S>::store(C(0));
  }
};

// out[i] = op(in[i], mask[i]) for i < limit (mask may be null: reads as 0). 16-byte loads and stores, two
// vectors in flight per thread, grid-stride; the tail that does not fill a vector is done by block 0.
template <class S, class Op>
__global__ void __launch_bounds__(kBlock)
    map_kernel(const S* in, const std::uint8_t* mask, S* out, std::int64_t n, const std::int64_t* count, Op op) {
  constexpr int W = kVecWidth<S>;
  const std::int64_t limit = limit_of(n, count);
  const std::int64_t vectors = limit / W;
  const uint4* iv = reinterpret_cast<const uint4*>(in);
  uint4* ov = reinterpret_cast<uint4*>(out);
  const auto* mv = reinterpret_cast<const MaskWord<W>*>(mask);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  auto apply = [&](uint4 d, MaskWord<W> m) {
    S* s = reinterpret_cast<S*>(&d);
#pragma unroll
    for (int j = 0; j < W; ++j) s[j] = op(s[j], static_cast<std::uint8_t>(m >> (8 * j)));
    return d;
  };
  std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  for (; v + stride < vectors; v += 2 * stride) {
    const uint4 d0 = iv[v], d1 = iv[v + stride];
    const MaskWord<W> m0 = mask ? mv[v] : 0, m1 = mask ? mv[v + stride] : 0;
    ov[v] = apply(d0, m0);
    ov[v + stride] = apply(d1, m1);
  }
  if (v < vectors) ov[v] = apply(iv[v], mask ? mv[v] : 0);
  block0_tail<W>(limit, [&](std::int64_t i) { out[i] = op(in[i], mask ? mask[i] : 0); });
}

template <class S>
struct Widen {
  __device__ typename Traits<S>::A operator()(const S& s) const {
    return static_cast<typename Traits<S>::A>(Traits<S>::load(s));
  }
};

constexpr int kReduceBlock = 256;

template <class S>
__global__ void partial_sum_kernel(const S* in, std::int64_t n, const std::int64_t* count,
                                   typename Traits<S>::A* partials) {
  using A = typename Traits<S>::A;
  using BlockReduce = cub::BlockReduce<A, kReduceBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  const std::int64_t limit = limit_of(n, count);
  A acc = 0;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kReduceBlock + threadIdx.x; i < limit;
       i += static_cast<std::int64_t>(gridDim.x) * kReduceBlock)
    acc += static_cast<A>(Traits<S>::load(in[i]));
  const A total = BlockReduce(temp).Sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

template <class A>
__global__ void final_sum_kernel(const A* partials, int count, A* out) {
  using BlockReduce = cub::BlockReduce<A, kReduceBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  A acc = 0;
  for (int i = threadIdx.x; i < count; i += kReduceBlock) acc += partials[i];
  const A total = BlockReduce(temp).Sum(acc);
  if (threadIdx.x == 0) *out = total;
}

template <class S>
__device__ inline typename Traits<S>::A select_down(S s, std::uint8_t m, int k) {
  using C = typename Traits<S>::C;
  if (!m) return 0;
  C x = Traits<S>::load(s);
  x = x * x;
  for (int r = 0; r < k; ++r) x = down_op(x);
  return static_cast<typename Traits<S>::A>(x);
}

template <class S>
__global__ void __launch_bounds__(kReduceBlock)
    fused_kernel(const S* data, const std::uint8_t* mask, std::int64_t n, int k, typename Traits<S>::A* partials) {
  using A = typename Traits<S>::A;
  constexpr int W = kVecWidth<S>;
  using BlockReduce = cub::BlockReduce<A, kReduceBlock>;
  __shared__ typename BlockReduce::TempStorage temp;
  A acc = 0;
  const std::int64_t vectors = n / W;
  const uint4* dv = reinterpret_cast<const uint4*>(data);
  const auto* mv = reinterpret_cast<const MaskWord<W>*>(mask);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kReduceBlock;
  std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * kReduceBlock + threadIdx.x;
  // Two vectors per step: two independent 16-byte loads in flight per thread.
  for (; v + stride < vectors; v += 2 * stride) {
    const uint4 d0 = __ldcs(dv + v), d1 = __ldcs(dv + v + stride);
    const MaskWord<W> m0 = __ldcs(mv + v), m1 = __ldcs(mv + v + stride);
    const S* s0 = reinterpret_cast<const S*>(&d0);
    const S* s1 = reinterpret_cast<const S*>(&d1);
#pragma unroll
    for (int j = 0; j < W; ++j) {
      acc += select_down(s0[j], static_cast<std::uint8_t>(m0 >> (8 * j)), k);
      acc += select_down(s1[j], static_cast<std::uint8_t>(m1 >> (8 * j)), k);
    }
  }
  for (; v < vectors; v += stride) {
    const uint4 d0 = __ldcs(dv + v);
    const MaskWord<W> m0 = __ldcs(mv + v);
    const S* s0 = reinterpret_cast<const S*>(&d0);
#pragma unroll
    for (int j = 0; j < W; ++j) acc += select_down(s0[j], static_cast<std::uint8_t>(m0 >> (8 * j)), k);
  }
  block0_tail<W>(n, [&](std::int64_t i) { acc += select_down(data[i], mask[i], k); });
  const A total = BlockReduce(temp).Sum(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

// Calls f with a typed null pointer of the dtype's storage type.
template <class F>
auto dispatch(DType t, F&& f) {
  switch (t) {
    case DType::f32: return f(static_cast<float*>(nullptr));
    case DType::f64: return f(static_cast<double*>(nullptr));
    case DType::f16: return f(static_cast<__half*>(nullptr));
    case DType::bf16: return f(static_cast<__nv_bfloat16*>(nullptr));
  }
  throw std::invalid_argument("unknown dtype");
}

// Enough blocks for two 16-byte vectors (of `width` elements) per thread, at most 8 per SM (then grid-stride).
int elementwise_grid(std::int64_t n, int sm_count, int width) {
  const std::int64_t per_block = 2LL * kBlock * width;
  const std::int64_t blocks = (n + per_block - 1) / per_block;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(blocks, 8LL * sm_count)));
}

template <template <class> class Op>
void launch_map(DType t, const void* in, const std::uint8_t* mask, void* out, std::int64_t n, const std::int64_t* count,
                int sm, cudaStream_t s) {
  if (n == 0) return;
  dispatch(t, [&](auto* p) {
    using S = std::remove_pointer_t<decltype(p)>;
    map_kernel<S><<<elementwise_grid(n, sm, kVecWidth<S>), kBlock, 0, s>>>(static_cast<const S*>(in), mask,
                                                                           static_cast<S*>(out), n, count, Op<S>());
    return 0;
  });
  LABRUN_CUDA_LAUNCHED();
}

}  // namespace

void square(DType t, const void* in, void* out, std::int64_t n, const std::int64_t* count, int sm, cudaStream_t s) {
  launch_map<SquareOp>(t, in, nullptr, out, n, count, sm, s);
}

void downstream(DType t, void* buf, std::int64_t n, const std::int64_t* count, int sm, cudaStream_t s) {
  launch_map<DownstreamOp>(t, buf, nullptr, buf, n, count, sm, s);
}

void mask_multiply(DType t, void* buf, const std::uint8_t* mask, std::int64_t n, int sm, cudaStream_t s) {
  launch_map<MaskMultiplyOp>(t, buf, mask, buf, n, nullptr, sm, s);
}

void where_zero(DType t, const void* in, const std::uint8_t* mask, void* out, std::int64_t n, int sm, cudaStream_t s) {
  launch_map<WhereZeroOp>(t, in, mask, out, n, nullptr, sm, s);
}

std::size_t sum_temp_bytes(DType t, std::int64_t n) {
  return dispatch(t, [&](auto* p) {
    using S = std::remove_pointer_t<decltype(p)>;
    using A = typename Traits<S>::A;
    std::size_t bytes = 0;
    LABRUN_CUDA_CHECK(cub::DeviceReduce::TransformReduce(nullptr, bytes, static_cast<const S*>(nullptr),
                                                         static_cast<A*>(nullptr), n, ::cuda::std::plus<A>(),
                                                         Widen<S>(), A(0)));
    return std::max<std::size_t>(bytes, 1);
  });
}

void sum(DType t, const void* in, std::int64_t n, void* out, void* temp, std::size_t temp_bytes, cudaStream_t s) {
  dispatch(t, [&](auto* p) {
    using S = std::remove_pointer_t<decltype(p)>;
    using A = typename Traits<S>::A;
    std::size_t bytes = temp_bytes;
    LABRUN_CUDA_CHECK(cub::DeviceReduce::TransformReduce(temp, bytes, static_cast<const S*>(in), static_cast<A*>(out),
                                                         n, ::cuda::std::plus<A>(), Widen<S>(), A(0), s));
    return 0;
  });
}

int reduce_grid(int sm_count) { return 8 * sm_count; }

std::size_t partials_bytes(DType t, int sm_count) {
  return static_cast<std::size_t>(reduce_grid(sm_count)) * (t == DType::f64 ? 8 : 4);
}

void sum_device_count(DType t, const void* in, std::int64_t n, const std::int64_t* count, void* partials, void* out,
                      int sm, cudaStream_t s) {
  dispatch(t, [&](auto* p) {
    using S = std::remove_pointer_t<decltype(p)>;
    using A = typename Traits<S>::A;
    const int grid = reduce_grid(sm);
    partial_sum_kernel<S><<<grid, kReduceBlock, 0, s>>>(static_cast<const S*>(in), n, count, static_cast<A*>(partials));
    LABRUN_CUDA_LAUNCHED();
    final_sum_kernel<A><<<1, kReduceBlock, 0, s>>>(static_cast<const A*>(partials), grid, static_cast<A*>(out));
    LABRUN_CUDA_LAUNCHED();
    return 0;
  });
}

std::size_t select_temp_bytes(DType t, std::int64_t n) {
  return dispatch(t, [&](auto* p) {
    using S = std::remove_pointer_t<decltype(p)>;
    std::size_t bytes = 0;
    LABRUN_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, bytes, static_cast<const S*>(nullptr),
                                                 static_cast<const std::uint8_t*>(nullptr), static_cast<S*>(nullptr),
                                                 static_cast<std::int64_t*>(nullptr), n));
    return std::max<std::size_t>(bytes, 1);
  });
}

void select_flagged(DType t, const void* in, const std::uint8_t* mask, void* out, std::int64_t* count, std::int64_t n,
                    void* temp, std::size_t temp_bytes, cudaStream_t s) {
  dispatch(t, [&](auto* p) {
    using S = std::remove_pointer_t<decltype(p)>;
    std::size_t bytes = temp_bytes;
    LABRUN_CUDA_CHECK(
        cub::DeviceSelect::Flagged(temp, bytes, static_cast<const S*>(in), mask, static_cast<S*>(out), count, n, s));
    return 0;
  });
}

void fused(DType t, const void* data, const std::uint8_t* mask, std::int64_t n, int k, void* partials, void* out,
           int sm, cudaStream_t s) {
  dispatch(t, [&](auto* p) {
    using S = std::remove_pointer_t<decltype(p)>;
    using A = typename Traits<S>::A;
    int grid = 0;
    if (n > 0) {
      grid = reduce_grid(sm);
      fused_kernel<S><<<grid, kReduceBlock, 0, s>>>(static_cast<const S*>(data), mask, n, k, static_cast<A*>(partials));
      LABRUN_CUDA_LAUNCHED();
    }
    final_sum_kernel<A><<<1, kReduceBlock, 0, s>>>(static_cast<const A*>(partials), grid, static_cast<A*>(out));
    LABRUN_CUDA_LAUNCHED();
    return 0;
  });
}

bool can_generate(DType t) { return t == DType::f32 || t == DType::f64; }

void generate(DType t, std::int64_t n, double density, bool nonfinite, std::uint64_t seed, void* data,
              std::uint8_t* mask, int sm_count, cudaStream_t stream) {
  if (!can_generate(t)) throw std::invalid_argument("kernels::generate: f32 or f64 only");
  if (n == 0) return;
  const auto blocks = static_cast<int>(std::min<std::int64_t>((n + kBlock - 1) / kBlock, 8LL * sm_count));
  if (t == DType::f32)
    generate_kernel<float><<<blocks, kBlock, 0, stream>>>(n, density, nonfinite, seed, static_cast<float*>(data), mask);
  else
    generate_kernel<double>
        <<<blocks, kBlock, 0, stream>>>(n, density, nonfinite, seed, static_cast<double*>(data), mask);
  LABRUN_CUDA_LAUNCHED();
}

}  // namespace labrun::masking::kernels

namespace labrun::masking {

namespace {

// One variant's iteration as an eager framework runs it, each op marked with the bytes it moves; set up once per
// point: CUB's temporary storage, the count, the partials and the pinned count slot before any capture (C12).
Step launcher(Launch& setup) {
  const Params p = params_of(setup.args());
  const DType t = p.dtype;
  const std::int64_t n = p.n;
  const bool compacts = p.variant == Variant::index || p.variant == Variant::index_device_count;
  std::size_t temp_bytes = kernels::sum_temp_bytes(t, n);
  if (compacts) temp_bytes = std::max(temp_bytes, kernels::select_temp_bytes(t, n));
  void* temp = setup.allocate(temp_bytes);
  auto* count = static_cast<std::int64_t*>(setup.allocate(sizeof(std::int64_t)));
  void* partials = setup.allocate(kernels::partials_bytes(t, setup.sm_count()));
  auto* pinned = static_cast<std::int64_t*>(setup.allocate_pinned(sizeof(std::int64_t)));
  const double m = setup.reference().value_or("selected", 0);  // elements the mask selects
  // The arrays, resolved here so the timed iteration only launches.
  const void* d = setup.in("data").data;
  const auto* mask = setup.in("mask").as<const std::uint8_t>();
  void* result = setup.out("result").data;
  void* tmp = p.variant == Variant::fused || p.variant == Variant::index ? nullptr : setup.scratch("tmp").data;
  void* sel_scratch = p.variant == Variant::index_device_count ? setup.scratch("sel").data : nullptr;
  return [=](Launch& l) {
    const double s = static_cast<double>(dtype_bytes(t)), nn = static_cast<double>(n);
    const int sm = l.sm_count();
    cudaStream_t st = l.stream();
    auto downstream = [&](void* buf, std::int64_t c, const std::int64_t* dcount, double elems) {
      for (int r = 0; r < p.downstream; ++r) {
        kernels::downstream(t, buf, c, dcount, sm, st);
        l.mark("downstream", 2 * elems * s);
      }
    };
    switch (p.variant) {
      case Variant::multiply:
      case Variant::where:
        kernels::square(t, d, tmp, n, nullptr, sm, st);
        l.mark("square", 2 * nn * s);
        downstream(tmp, n, nullptr, nn);
        if (p.variant == Variant::multiply) {
          kernels::mask_multiply(t, tmp, mask, n, sm, st);
          l.mark("mask_multiply", 2 * nn * s + nn);
        } else {
          kernels::where_zero(t, tmp, mask, tmp, n, sm, st);
          l.mark("where", 2 * nn * s + nn);
        }
        kernels::sum(t, tmp, n, result, temp, temp_bytes, st);
        return l.mark("sum", nn * s);
      case Variant::sanitize:
        kernels::where_zero(t, d, mask, tmp, n, sm, st);
        l.mark("where", 2 * nn * s + nn);
        kernels::square(t, tmp, tmp, n, nullptr, sm, st);
        l.mark("square", 2 * nn * s);
        downstream(tmp, n, nullptr, nn);
        kernels::sum(t, tmp, n, result, temp, temp_bytes, st);
        return l.mark("sum", nn * s);
      case Variant::index: {
        // As an eager framework runs d[mask]: compaction into a pool buffer, the count read by the host to size
        // the result (the host synchronization), then the ops over the count.
        const auto sel = l.stream_alloc(static_cast<std::size_t>(n) * dtype_bytes(t));
        kernels::select_flagged(t, d, mask, sel.get(), count, n, temp, temp_bytes, st);
        l.mark("select", nn * s + nn + m * s);
        l.read_to_host(pinned, count, sizeof(std::int64_t));
        l.mark("count_to_host", sizeof(std::int64_t));
        const std::int64_t c = *pinned;
        const auto sq = l.stream_alloc(static_cast<std::size_t>(c) * dtype_bytes(t));
        // The host's wake-up from the sync, the allocation and the next launch: not kernel time.
        l.mark("host_round_trip", 0);
        kernels::square(t, sel.get(), sq.get(), c, nullptr, sm, st);
        l.mark("square", 2 * m * s);
        downstream(sq.get(), c, nullptr, m);
        kernels::sum(t, sq.get(), c, result, temp, temp_bytes, st);
        return l.mark("sum", m * s);
      }
      case Variant::index_device_count: {
        void* sel = sel_scratch;
        kernels::select_flagged(t, d, mask, sel, count, n, temp, temp_bytes, st);
        l.mark("select", nn * s + nn + m * s);
        kernels::square(t, sel, tmp, n, count, sm, st);
        l.mark("square", 2 * m * s);
        downstream(tmp, n, count, m);
        kernels::sum_device_count(t, tmp, n, count, partials, result, sm, st);
        return l.mark("sum", m * s);
      }
      case Variant::fused:
        kernels::fused(t, d, mask, n, p.downstream, partials, result, sm, st);
        return l.mark("fused", nn * s + nn);
    }
  };
}

}  // namespace

LABRUN_CUDA_VARIANTS(masking) {
  for (const char* v : {"multiply", "index", "where", "sanitize", "index_device_count", "fused"}) e.cuda(v, launcher);
  // f32 and f64 inputs are generated on the device bit for bit as generate() does; f16 and bf16 on the host.
  e.generate_on_device([](Launch& l, std::uint64_t seed) {
    const Params p = params_of(l.args());
    if (!kernels::can_generate(p.dtype)) return false;
    kernels::generate(p.dtype, p.n, p.density, p.nonfinite, seed, l.in("data").data, l.in("mask").as<std::uint8_t>(),
                      l.sm_count(), l.stream());
    return true;
  });
}

}  // namespace labrun::masking
