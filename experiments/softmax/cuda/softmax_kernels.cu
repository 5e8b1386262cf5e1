// The softmax experiment's kernels, their launchers, and its CUDA variants (LABRUN_CUDA_VARIANTS): x, y and
// unfused's e, m and s are the SDK's arrays, allocated before any capture (case C12); each variant's setup settles
// the launch geometry (and loads the kernels) before any capture too, so an iteration only launches.
#include "softmax/cuda/softmax_kernels.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include <labrun/cuda.cuh>
#include <labrun/kernels/occupancy.cuh>
#include <labrun/kernels/row_softmax.cuh>

#include "softmax/softmax.hpp"

namespace labrun::softmax::kernels {

namespace {

using namespace ::labrun::kernels;  // Vec, Convert, group_reduce, Max, Sum, load_row, store_row, softmax_two_pass

constexpr float kNegInf = -INFINITY;

// The online merge of (max, rescaled sum) pairs: m = max(m1, m2), d = d1 e^(m1 - m) + d2 e^(m2 - m). Symmetric
// (so butterflies agree in every lane) and exact for an empty side (m = -inf, d = 0: no exp(-inf + inf)).
struct MD {
  float m, d;
};
__device__ inline MD merge(MD a, MD b) {
  const float m = fmaxf(a.m, b.m);
  const float da = a.m == m ? a.d : a.d * expf(a.m - m);
  const float db = b.m == m ? b.d : b.d * expf(b.m - m);
  return {m, da + db};
}
__device__ inline MD warp_merge(MD v, int width) {
  for (int off = width / 2; off > 0; off /= 2) {
    const MD o{__shfl_xor_sync(0xffffffffu, v.m, off), __shfl_xor_sync(0xffffffffu, v.d, off)};
    v = merge(v, o);
  }
  return v;
}
__device__ MD group_merge(MD v, int G, float* sm, float* sd) {
  if (G <= 32) return warp_merge(v, G);
  v = warp_merge(v, 32);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) sm[warp] = v.m, sd[warp] = v.d;
  __syncthreads();
  v = lane < G / 32 ? MD{sm[lane], sd[lane]} : MD{kNegInf, 0.0f};
  v = warp_merge(v, 32);
  __syncthreads();
  return v;
}

// ---- the fused kernels ----------------------------------------------------------------------------------------

// On chip (cols <= kOnChipCols): a group of G threads per row, thread `lane` holding vectors lane + k G
// (k < VPT) of the row as f32 in registers; the row is read once and written once.
template <class S, int W, int VPT, Fused ALGO>
__global__ void __launch_bounds__(1024)
    onchip_kernel(const S* __restrict__ x, S* __restrict__ y, std::int64_t rows, std::int64_t cols, int G) {
  constexpr int E = W * VPT;
  __shared__ float red[2][32];
  const int lane = static_cast<int>(threadIdx.x) & (G - 1);
  const int group = static_cast<int>(threadIdx.x) / G;
  const int rpb = static_cast<int>(blockDim.x) / G;
  const std::int64_t nv = cols / W;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * rpb; base < rows;
       base += static_cast<std::int64_t>(gridDim.x) * rpb) {
    const std::int64_t row = base + group;
    const bool active = row < rows;  // uniform within a group; every lane still joins the reductions
    const std::size_t offset = active ? static_cast<std::size_t>(row) * static_cast<std::size_t>(cols) : 0;
    float v[E];
    load_row<S, W, VPT>(x + offset, nv, lane, G, active, v);
    float scale;
    if constexpr (ALGO == Fused::two_pass) {
      scale = softmax_two_pass(v, G, red);
    } else {
      // This thread's elements in one pass: its own running max and the sum of exp(x - its max); then the
      // threads' (m, d) pairs merged. On chip the merge is done as a max reduction followed by a sum of the
      // rescaled d's (d e^(m - M) is the online rule's rescale, applied once per thread): the same value as
      // merging pair by pair, with one exp per thread instead of two per butterfly step, which at 8 elements
      // per thread cost more than the elements themselves.
      float mx = kNegInf;
#pragma unroll
      for (int i = 0; i < E; ++i) mx = fmaxf(mx, v[i]);
      const float ref = mx == kNegInf ? 0.0f : mx;
      float d = 0.0f;
#pragma unroll
      for (int i = 0; i < E; ++i) d += (v[i] = expf(v[i] - ref));
      const float m_all = group_reduce(mx, G, kNegInf, red[0], Max{});
      const float rescale = mx == kNegInf ? 0.0f : expf(mx - m_all);  // a thread with no elements adds 0
      const float d_all = group_reduce(d * rescale, G, 0.0f, red[1], Sum{});
      scale = rescale * (1.0f / d_all);
    }
    if (active) store_row<S, W, VPT>(y + offset, nv, lane, G, v, [scale](float e) { return e * scale; });
  }
}

// Streamed (cols > kOnChipCols): one row per block of G threads, U vectors in flight per thread per step;
// two_pass reads the row three times (max, sum, write), online twice ((m, d), write). Re-reads come from L2
// while the rows in flight (resident blocks x cols x s) fit in it, else from DRAM.
constexpr int kUnroll = 4;

template <class S, int W, Fused ALGO>
__global__ void __launch_bounds__(1024)
    stream_kernel(const S* __restrict__ x, S* __restrict__ y, std::int64_t rows, std::int64_t cols) {
  constexpr int E = W * kUnroll;
  __shared__ float red[2][32];
  const int G = static_cast<int>(blockDim.x);
  const std::int64_t nv = cols / W;
  const std::int64_t step = static_cast<std::int64_t>(kUnroll) * G;
  for (std::int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const S* xr = x + static_cast<std::size_t>(row) * static_cast<std::size_t>(cols);
    S* yr = y + static_cast<std::size_t>(row) * static_cast<std::size_t>(cols);
    float M, inv;
    if constexpr (ALGO == Fused::two_pass) {
      float mx = kNegInf;
      for (std::int64_t j0 = threadIdx.x; j0 < nv; j0 += step) {
        float v[E];
        load_row<S, W, kUnroll>(xr, nv, j0, G, true, v);
#pragma unroll
        for (int i = 0; i < E; ++i) mx = fmaxf(mx, v[i]);
      }
      M = group_reduce(mx, G, kNegInf, red[0], Max{});
      float sum = 0.0f;
      for (std::int64_t j0 = threadIdx.x; j0 < nv; j0 += step) {
        float v[E];
        load_row<S, W, kUnroll>(xr, nv, j0, G, true, v);
#pragma unroll
        for (int i = 0; i < E; ++i) sum += expf(v[i] - M);
      }
      inv = 1.0f / group_reduce(sum, G, 0.0f, red[1], Sum{});
    } else {
      // Running (m, d) per thread, rescaled once per chunk whose max exceeds m.
      float m = kNegInf, d = 0.0f;
      for (std::int64_t j0 = threadIdx.x; j0 < nv; j0 += step) {
        float v[E];
        load_row<S, W, kUnroll>(xr, nv, j0, G, true, v);
        float cm = kNegInf;
#pragma unroll
        for (int i = 0; i < E; ++i) cm = fmaxf(cm, v[i]);
        if (cm > m) {
          d *= expf(m - cm);  // m = -inf at the first chunk: d = 0 * 0
          m = cm;
        }
#pragma unroll
        for (int i = 0; i < E; ++i) d += expf(v[i] - m);
      }
      const MD total = group_merge(MD{m, d}, G, red[0], red[1]);
      M = total.m;
      inv = 1.0f / total.d;
    }
    for (std::int64_t j0 = threadIdx.x; j0 < nv; j0 += step) {
      float v[E];
      load_row<S, W, kUnroll>(xr, nv, j0, G, true, v);
      store_row<S, W, kUnroll>(yr, nv, j0, G, v, [M, inv](float e) { return expf(e - M) * inv; });
    }
  }
}

// ---- unfused: the eager framework's four kernels ------------------------------------------------------------

// out[r] = reduce_c in[r, c], f32 accumulation, stored in S. Groups of G threads per row, streaming over it.
template <class S, int W, class Op>
__global__ void __launch_bounds__(1024)
    row_reduce_kernel(const S* __restrict__ in, S* __restrict__ out, std::int64_t rows, std::int64_t cols, int G,
                      float identity, Op op) {
  __shared__ float red[32];
  const int lane = static_cast<int>(threadIdx.x) & (G - 1);
  const int group = static_cast<int>(threadIdx.x) / G;
  const int rpb = static_cast<int>(blockDim.x) / G;
  const std::int64_t nv = cols / W;
  const std::int64_t step = static_cast<std::int64_t>(kUnroll) * G;
  for (std::int64_t base = static_cast<std::int64_t>(blockIdx.x) * rpb; base < rows;
       base += static_cast<std::int64_t>(gridDim.x) * rpb) {
    const std::int64_t row = base + group;
    const bool active = row < rows;
    const S* r = in + (active ? static_cast<std::size_t>(row) * static_cast<std::size_t>(cols) : 0);
    float acc = identity;
    for (std::int64_t j0 = lane; active && j0 < nv; j0 += step) {
      float v[W * kUnroll];
      load_row<S, W, kUnroll>(r, nv, j0, G, true, v, identity);
#pragma unroll
      for (int i = 0; i < W * kUnroll; ++i) acc = op(acc, v[i]);
    }
    acc = group_reduce(acc, G, identity, red, op);
    if (active && lane == 0) out[row] = Convert<S>::store(acc);
  }
}

// q = n / d for n < 2^31, d < 2^31 with a multiply-high (Granlund & Montgomery 1994; as PyTorch's IntDivider).
struct FastDiv {
  unsigned d = 1, magic = 1, shift = 0;
  explicit FastDiv(unsigned divisor) : d(divisor) {
    while (shift < 32 && (1ull << shift) < divisor) ++shift;
    magic = static_cast<unsigned>(((1ull << 32) * ((1ull << shift) - divisor)) / divisor + 1);
  }
  __device__ unsigned div(unsigned n) const { return (__umulhi(n, magic) + n) >> shift; }
};

struct ExpSubOp {
  __device__ float operator()(float x, float m) const { return expf(x - m); }
};
struct DivOp {
  __device__ float operator()(float e, float s) const { return e / s; }
};

// out[i] = op(in[i], rowv[i / cols]) in f32, stored in S. Vector v of W elements lies in row v / (cols / W).
// 16-byte accesses, two vectors in flight per thread, grid-stride.
template <class S, int W, class Op>
__global__ void __launch_bounds__(256)
    map_rows_kernel(const S* __restrict__ in, const S* __restrict__ rowv, S* __restrict__ out, std::int64_t vectors,
                    std::int64_t nv, FastDiv fast, bool use_fast, Op op) {
  auto row_of = [&](std::int64_t v) -> std::int64_t {
    return use_fast ? static_cast<std::int64_t>(fast.div(static_cast<unsigned>(v))) : v / nv;
  };
  auto apply = [&](std::int64_t v) {
    float a[W];
    Vec<S, W>::load(in + v * W, a);
    const float b = Convert<S>::load(rowv[row_of(v)]);
#pragma unroll
    for (int i = 0; i < W; ++i) a[i] = op(a[i], b);
    Vec<S, W>::store(out + v * W, a);
  };
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; v + stride < vectors; v += 2 * stride) {
    apply(v);
    apply(v + stride);
  }
  if (v < vectors) apply(v);
}

// ---- geometry and dispatch ----------------------------------------------------------------------------------

int pow2_at_least(std::int64_t n) {
  int g = 1;
  while (g < n && g < 1024) g *= 2;
  return g;
}

// Resident blocks of `kernel` at `block` threads on the whole device (kernels/occupancy.cuh: asked once).
int resident(const void* kernel, int block, int sm_count) {
  return resident_blocks_per_sm(kernel, block) * std::max(1, sm_count);
}

// Calls f(S*, integral_constant<W>) for the dtype and the access width cols allows.
template <class F>
auto dispatch(DType t, std::int64_t cols, F&& f) {
  if (t == DType::f32) {
    if (cols % 4 == 0) return f(static_cast<float*>(nullptr), std::integral_constant<int, 4>{});
    return f(static_cast<float*>(nullptr), std::integral_constant<int, 1>{});
  }
  if (t == DType::bf16) {
    if (cols % 8 == 0) return f(static_cast<__nv_bfloat16*>(nullptr), std::integral_constant<int, 8>{});
    return f(static_cast<__nv_bfloat16*>(nullptr), std::integral_constant<int, 1>{});
  }
  throw std::invalid_argument("softmax kernels: dtype must be f32 or bf16");
}

// The fused kernel a (algo, S, W) launch uses, and its G.
template <class S, int W>
const void* fused_kernel_of(Fused algo, bool on_chip) {
  constexpr int VPT = 8 / W;  // 8 f32 values per thread in registers
  if (on_chip)
    return algo == Fused::two_pass ? reinterpret_cast<const void*>(&onchip_kernel<S, W, VPT, Fused::two_pass>)
                                   : reinterpret_cast<const void*>(&onchip_kernel<S, W, VPT, Fused::online>);
  return algo == Fused::two_pass ? reinterpret_cast<const void*>(&stream_kernel<S, W, Fused::two_pass>)
                                 : reinterpret_cast<const void*>(&stream_kernel<S, W, Fused::online>);
}

Geometry group_geometry(std::int64_t rows, int G, int width, const void* kernel, int sm_count) {
  Geometry g;
  g.width = width;
  g.threads_per_row = G;
  g.block = G >= 32 ? G : 256;
  g.rows_per_block = g.block / G;
  const std::int64_t groups = (rows + g.rows_per_block - 1) / g.rows_per_block;
  g.grid = static_cast<int>(std::min<std::int64_t>(groups, resident(kernel, g.block, sm_count)));
  return g;
}

}  // namespace

Geometry fused_geometry(Fused algo, DType t, std::int64_t rows, std::int64_t cols, int sm_count) {
  if (rows <= 0 || cols <= 0) return Geometry{};
  return dispatch(t, cols, [&](auto* p, auto w) {
    using S = std::remove_pointer_t<decltype(p)>;
    constexpr int W = decltype(w)::value;
    const bool on_chip = cols <= kOnChipCols;
    const int G = on_chip ? pow2_at_least((cols / W + (8 / W) - 1) / (8 / W)) : 1024;
    Geometry g = group_geometry(rows, G, W, fused_kernel_of<S, W>(algo, on_chip), sm_count);
    g.on_chip = on_chip;
    return g;
  });
}

Geometry reduce_geometry(DType t, std::int64_t rows, std::int64_t cols, int sm_count) {
  if (rows <= 0 || cols <= 0) return Geometry{};
  return dispatch(t, cols, [&](auto* p, auto w) {
    using S = std::remove_pointer_t<decltype(p)>;
    constexpr int W = decltype(w)::value;
    const int G = pow2_at_least((cols / W + (8 / W) - 1) / (8 / W));
    // Both reductions are queried (which also loads them before any capture); the grid fits either.
    const Geometry a = group_geometry(rows, G, W, reinterpret_cast<const void*>(&row_reduce_kernel<S, W, Max>),
                                      sm_count);
    const Geometry b = group_geometry(rows, G, W, reinterpret_cast<const void*>(&row_reduce_kernel<S, W, Sum>),
                                      sm_count);
    return a.grid <= b.grid ? a : b;
  });
}

int map_grid(DType t, std::int64_t rows, std::int64_t cols, int sm_count) {
  if (rows <= 0 || cols <= 0) return 0;
  return dispatch(t, cols, [&](auto* p, auto w) {
    using S = std::remove_pointer_t<decltype(p)>;
    constexpr int W = decltype(w)::value;
    const std::int64_t vectors = rows * (cols / W);
    const std::int64_t blocks = (vectors + 2 * 256 - 1) / (2 * 256);
    const int cap = std::min(resident(reinterpret_cast<const void*>(&map_rows_kernel<S, W, ExpSubOp>), 256, sm_count),
                             resident(reinterpret_cast<const void*>(&map_rows_kernel<S, W, DivOp>), 256, sm_count));
    return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(blocks, cap)));
  });
}

namespace {

template <class Op>
void launch_reduce(DType t, const void* in, void* out, std::int64_t rows, std::int64_t cols, int sm, cudaStream_t s,
                   float identity) {
  if (rows <= 0 || cols <= 0) return;
  dispatch(t, cols, [&](auto* p, auto w) {
    using S = std::remove_pointer_t<decltype(p)>;
    constexpr int W = decltype(w)::value;
    const Geometry g = reduce_geometry(t, rows, cols, sm);
    row_reduce_kernel<S, W, Op><<<g.grid, g.block, 0, s>>>(static_cast<const S*>(in), static_cast<S*>(out), rows, cols,
                                                           g.threads_per_row, identity, Op{});
    return 0;
  });
  LABRUN_CUDA_LAUNCHED();
}

template <class Op>
void launch_map(DType t, const void* in, const void* rowv, void* out, std::int64_t rows, std::int64_t cols, int sm,
                cudaStream_t s) {
  if (rows <= 0 || cols <= 0) return;
  const int grid = map_grid(t, rows, cols, sm);
  dispatch(t, cols, [&](auto* p, auto w) {
    using S = std::remove_pointer_t<decltype(p)>;
    constexpr int W = decltype(w)::value;
    const std::int64_t nv = cols / W, vectors = rows * nv;
    const bool use_fast = vectors < (1LL << 31);
    const FastDiv fast(use_fast ? static_cast<unsigned>(nv) : 1u);
    map_rows_kernel<S, W, Op><<<grid, 256, 0, s>>>(static_cast<const S*>(in), static_cast<const S*>(rowv),
                                                   static_cast<S*>(out), vectors, nv, fast, use_fast, Op{});
    return 0;
  });
  LABRUN_CUDA_LAUNCHED();
}

}  // namespace

void rowmax(DType t, const void* x, void* m, std::int64_t rows, std::int64_t cols, int sm, cudaStream_t s) {
  launch_reduce<Max>(t, x, m, rows, cols, sm, s, -INFINITY);
}

void exp_sub(DType t, const void* x, const void* m, void* e, std::int64_t rows, std::int64_t cols, int sm,
             cudaStream_t s) {
  launch_map<ExpSubOp>(t, x, m, e, rows, cols, sm, s);
}

void rowsum(DType t, const void* e, void* out, std::int64_t rows, std::int64_t cols, int sm, cudaStream_t s) {
  launch_reduce<Sum>(t, e, out, rows, cols, sm, s, 0.0f);
}

void divide(DType t, const void* e, const void* sums, void* y, std::int64_t rows, std::int64_t cols, int sm,
            cudaStream_t s) {
  launch_map<DivOp>(t, e, sums, y, rows, cols, sm, s);
}

void fused(Fused algo, DType t, const void* x, void* y, std::int64_t rows, std::int64_t cols, int sm, cudaStream_t s) {
  if (rows <= 0 || cols <= 0) return;
  const Geometry g = fused_geometry(algo, t, rows, cols, sm);
  dispatch(t, cols, [&](auto* p, auto w) {
    using S = std::remove_pointer_t<decltype(p)>;
    constexpr int W = decltype(w)::value;
    constexpr int VPT = 8 / W;
    const S* xs = static_cast<const S*>(x);
    S* ys = static_cast<S*>(y);
    if (g.on_chip) {
      if (algo == Fused::two_pass)
        onchip_kernel<S, W, VPT, Fused::two_pass><<<g.grid, g.block, 0, s>>>(xs, ys, rows, cols, g.threads_per_row);
      else onchip_kernel<S, W, VPT, Fused::online><<<g.grid, g.block, 0, s>>>(xs, ys, rows, cols, g.threads_per_row);
    } else {
      if (algo == Fused::two_pass) stream_kernel<S, W, Fused::two_pass><<<g.grid, g.block, 0, s>>>(xs, ys, rows, cols);
      else stream_kernel<S, W, Fused::online><<<g.grid, g.block, 0, s>>>(xs, ys, rows, cols);
    }
    return 0;
  });
  LABRUN_CUDA_LAUNCHED();
}

}  // namespace labrun::softmax::kernels

namespace labrun::softmax {

namespace {

// A variant's setup, returning its iteration: unfused's four kernels (rowmax, exp_sub, rowsum, divide through the
// scratch e, m, s) or one fused kernel. The geometry (and the kernels' occupancy, which loads them) is settled
// here, before any capture; the arrays are resolved here, so the timed iteration only launches.
Step launcher(Launch& setup) {
  const void* x = setup.in("x").data;
  void* y = setup.out("y").data;
  const Params p = params_of(setup.args());
  const DType t = p.dtype;
  const std::int64_t rows = p.rows, cols = p.cols;
  const int sm = setup.sm_count();
  const double n = static_cast<double>(p.elements()), s = static_cast<double>(dtype_bytes(t));
  const double r = static_cast<double>(rows);
  if (p.variant == Variant::unfused) {
    (void)kernels::reduce_geometry(t, rows, cols, sm);
    (void)kernels::map_grid(t, rows, cols, sm);
    void *e = setup.scratch("e").data, *m = setup.scratch("m").data, *sums = setup.scratch("s").data;
    return [=](Launch& l) {
      const int sms = l.sm_count();
      cudaStream_t st = l.stream();
      kernels::rowmax(t, x, m, rows, cols, sms, st);
      l.mark("rowmax", n * s + r * s);
      kernels::exp_sub(t, x, m, e, rows, cols, sms, st);
      l.mark("exp_sub", 2 * n * s + r * s);
      kernels::rowsum(t, e, sums, rows, cols, sms, st);
      l.mark("rowsum", n * s + r * s);
      kernels::divide(t, e, sums, y, rows, cols, sms, st);
      l.mark("divide", 2 * n * s + r * s);
    };
  }
  const kernels::Fused algo = p.variant == Variant::online ? kernels::Fused::online : kernels::Fused::two_pass;
  (void)kernels::fused_geometry(algo, t, rows, cols, sm);
  const double bytes = cost(p).bytes;
  const char* name = to_string(p.variant);
  return [=](Launch& l) {
    kernels::fused(algo, t, x, y, rows, cols, l.sm_count(), l.stream());
    l.mark(name, bytes);
  };
}

}  // namespace

LABRUN_CUDA_VARIANTS(softmax) { e.cuda("unfused", launcher).cuda("two_pass", launcher).cuda("online", launcher); }

}  // namespace labrun::softmax
