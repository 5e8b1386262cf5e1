// The attention experiment's kernels, their launchers, and its CUDA variants (LABRUN_CUDA_VARIANTS): Q, K, V, O and
// the naive score buffers are the SDK's arrays (allocated before any capture, case C12), the cuBLAS handle and its
// workspace the setup's; each iteration enqueues its kernels on the lab's stream and marks them.
#include "attention/cuda/attention_kernels.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include <labrun/cublas.hpp>
#include <labrun/cuda.cuh>
#include <labrun/kernels/row_softmax.cuh>
#include <labrun/experiment.hpp>
#include <labrun/status.hpp>

#include "attention/attention.hpp"

namespace labrun::attention::kernels {

namespace {

using namespace ::labrun::kernels;  // Vec, Convert, warp_reduce, Max, Sum, load_row, softmax_two_pass

constexpr float kNegInf = -INFINITY;

// ---- naive: scale and mask ---------------------------------------------------------------------------------
// One thread per W-vector of a head's S x S matrix (S^2 <= 2^28 fits 32 bits), grid-stride; blockIdx.y is the
// head. W = 4 needs S % 4 == 0 (a vector never crosses a row, and is 16-byte aligned).
template <int W>
__global__ void scale_mask_kernel(const float* src, float* dst, unsigned seq, unsigned vecs, float scale, int causal) {
  const std::size_t base = static_cast<std::size_t>(blockIdx.y) * seq * seq;
  src += base;
  dst += base;
  for (unsigned vi = blockIdx.x * blockDim.x + threadIdx.x; vi < vecs; vi += gridDim.x * blockDim.x) {
    const unsigned e = vi * W, row = e / seq, col = e - row * seq;
    float x[W];
    Vec<float, W>::load(src + e, x);
#pragma unroll
    for (int t = 0; t < W; ++t) x[t] = causal && col + t > row ? kNegInf : x[t] * scale;
    Vec<float, W>::store(dst + e, x);
  }
}

// ---- naive: row softmax in place ---------------------------------------------------------------------------
// One block of T threads per row, the softmax experiment's on-chip two-pass path (kernels/row_softmax.cuh): thread
// t holds the W-vectors t, t + T, ..., t + (N - 1) T of the row in registers. Every thread has read its part before
// the first __syncthreads of the max reduction, so the bf16 P written over the row's first 2 S bytes afterwards
// never overwrites an unread score.
template <int W, int N>
__global__ void softmax_kernel(float* scores, int seq) {
  __shared__ float red[2][32];
  float* x = scores + static_cast<std::size_t>(blockIdx.x) * seq;
  float v[N * W];
  load_row<float, W, N>(x, seq / W, static_cast<int>(threadIdx.x), static_cast<int>(blockDim.x), true, v);
  const float inv = softmax_two_pass(v, static_cast<int>(blockDim.x), red);
  __nv_bfloat16* p = reinterpret_cast<__nv_bfloat16*>(x);
#pragma unroll
  for (int n = 0; n < N; ++n) {
    const int c = (threadIdx.x + n * blockDim.x) * W;
    if (c >= seq) continue;
    const float* e = v + n * W;
    if constexpr (W == 4)
      *reinterpret_cast<uint2*>(p + c) = make_uint2(Convert<__nv_bfloat16>::pack2(e[0] * inv, e[1] * inv),
                                                    Convert<__nv_bfloat16>::pack2(e[2] * inv, e[3] * inv));
    else p[c] = __float2bfloat16_rn(e[0] * inv);
  }
}

// ---- tiled: FlashAttention-2 forward -------------------------------------------------------------------------
constexpr int kBM = 64;  // query rows per block (4 warps x 16 rows)
constexpr int kBN = 64;  // keys per K/V tile
constexpr int kThreads = 128;

__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
// 16-byte global -> shared copy; src_bytes 0 fills the 16 bytes with zeros (rows past S).
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}
// D (16x8 f32) += A (16x16 bf16, row) * B (16x8 bf16, col).
__device__ __forceinline__ void mma_bf16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);  // .x (low half) = lo: the lower column
  unsigned u;
  std::memcpy(&u, &h, sizeof u);
  return u;
}

// Shared tiles are [rows][D] bf16 with the 16-byte chunks of a row XOR-swizzled by (row & 7): the 8 row
// addresses of one ldmatrix 8x8 matrix (8 consecutive rows, one chunk column) fall in 8 different bank groups.
template <int D>
__device__ __forceinline__ int swz(int row, int col) {
  return row * D + ((((col >> 3) ^ (row & 7))) << 3) + (col & 7);
}

// Copies rows [row0, row0 + 64) of a [S][D] head into a swizzled tile; rows >= S are zero-filled (their source
// address is clamped to row S - 1, never read).
template <int D>
__device__ __forceinline__ void load_tile(__nv_bfloat16* tile, const __nv_bfloat16* g, int row0, int seq) {
  constexpr int kChunks = D / 8;
#pragma unroll
  for (int c = threadIdx.x; c < 64 * kChunks; c += kThreads) {
    const int r = c / kChunks, ch = c % kChunks, gr = row0 + r;
    const __nv_bfloat16* src = g + static_cast<std::size_t>(min(gr, seq - 1)) * D + ch * 8;
    cp_async16(tile + swz<D>(r, ch * 8), src, gr < seq ? 16 : 0);
  }
}

// Block (x, y): query rows [64 m, 64 m + 64) of head y, m = gridDim.x - 1 - x (the longest causal blocks first).
// Warp w owns rows 16 w .. 16 w + 15; lane (g = lane / 4, t = lane % 4) holds, for each 8-column n-tile, the
// accumulator elements (row g, cols 2t, 2t + 1) in [0], [1] and (row g + 8, same cols) in [2], [3].
// Pipeline per K/V tile j (FlashAttention-2): wait K_j, issue V_j; S = Q K_j^T; wait V_j, issue K_{j+1};
// mask, online softmax; O += P V_j. One K and one V buffer: 3 x 64 x D x 2 bytes (48 KB at D = 128).
template <int D, bool Causal>
__global__ void __launch_bounds__(kThreads, D == 128 ? 2 : 3)
    flash_kernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                 const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o, int seq, float scale_log2) {
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* sq = reinterpret_cast<__nv_bfloat16*>(smem);
  __nv_bfloat16* sk = sq + kBM * D;
  __nv_bfloat16* sv = sk + kBN * D;
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int g = lane >> 2, t = lane & 3;
  const int mb = gridDim.x - 1 - blockIdx.x;
  const int m0 = mb * kBM;
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * seq * D;
  q += head;
  k += head;
  v += head;
  o += head;
  const int tiles_all = (seq + kBN - 1) / kBN;
  const int tiles = Causal ? min(tiles_all, (m0 + kBM - 1) / kBN + 1) : tiles_all;
  const int row_lo = m0 + warp * 16;  // this warp's first row

  load_tile<D>(sq, q, m0, seq);
  load_tile<D>(sk, k, 0, seq);
  cp_async_commit();

  unsigned qf[D / 16][4];
  float acc[D / 8][4];
#pragma unroll
  for (int n = 0; n < D / 8; ++n) acc[n][0] = acc[n][1] = acc[n][2] = acc[n][3] = 0.0f;
  float m_run[2] = {kNegInf, kNegInf}, l_run[2] = {0.0f, 0.0f};

  for (int j = 0; j < tiles; ++j) {
    cp_async_wait_all();
    __syncthreads();  // K_j (and Q) landed; every warp is done with V_{j-1}
    if (j == 0) {
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk)
        ldmatrix_x4(qf[kk], sq + swz<D>(warp * 16 + (lane & 15), kk * 16 + (lane >> 4) * 8));
    }
    load_tile<D>(sv, v, j * kBN, seq);
    cp_async_commit();

    float s[kBN / 8][4];
#pragma unroll
    for (int n = 0; n < kBN / 8; ++n) s[n][0] = s[n][1] = s[n][2] = s[n][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < D / 16; ++kk) {
#pragma unroll
      for (int np = 0; np < kBN / 16; ++np) {
        unsigned b[4];
        ldmatrix_x4(b, sk + swz<D>(np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 16 + ((lane >> 3) & 1) * 8));
        mma_bf16(s[2 * np], qf[kk], b[0], b[1]);
        mma_bf16(s[2 * np + 1], qf[kk], b[2], b[3]);
      }
    }

    cp_async_wait_all();
    __syncthreads();  // V_j landed; every warp is done with K_j
    if (j + 1 < tiles) {
      load_tile<D>(sk, k, (j + 1) * kBN, seq);
      cp_async_commit();
    }

    const int key0 = j * kBN;
    if (key0 + kBN > seq || (Causal && key0 + kBN - 1 > row_lo)) {
#pragma unroll
      for (int n = 0; n < kBN / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int key = key0 + n * 8 + 2 * t + (e & 1), row = row_lo + g + (e >> 1) * 8;
          if (key >= seq || (Causal && key > row)) s[n][e] = kNegInf;
        }
    }

#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = kNegInf;
#pragma unroll
      for (int n = 0; n < kBN / 8; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * h], s[n][2 * h + 1]));
      mx = warp_reduce(mx, Max{}, 4);  // over the quad of lanes that holds the row
      const float m_new = fmaxf(m_run[h], mx * scale_log2);
      const float m_use = m_new == kNegInf ? 0.0f : m_new;  // a row with no key yet: keep exp2 finite
      const float alpha = exp2f(m_run[h] - m_use);
      m_run[h] = m_new;
      float rs = 0.0f;
#pragma unroll
      for (int n = 0; n < kBN / 8; ++n) {
        s[n][2 * h] = exp2f(fmaf(s[n][2 * h], scale_log2, -m_use));
        s[n][2 * h + 1] = exp2f(fmaf(s[n][2 * h + 1], scale_log2, -m_use));
        rs += s[n][2 * h] + s[n][2 * h + 1];
      }
      l_run[h] = l_run[h] * alpha + rs;  // this thread's partial row sum (the quad is summed at the end)
#pragma unroll
      for (int n = 0; n < D / 8; ++n) {
        acc[n][2 * h] *= alpha;
        acc[n][2 * h + 1] *= alpha;
      }
    }

#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) {
      // The accumulator layout of n-tiles 2 kk and 2 kk + 1 is the A-operand layout of keys 16 kk .. 16 kk + 15.
      const unsigned a[4] = {pack_bf16(s[2 * kk][0], s[2 * kk][1]), pack_bf16(s[2 * kk][2], s[2 * kk][3]),
                             pack_bf16(s[2 * kk + 1][0], s[2 * kk + 1][1]),
                             pack_bf16(s[2 * kk + 1][2], s[2 * kk + 1][3])};
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        unsigned b[4];
        ldmatrix_x4_trans(b, sv + swz<D>(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, dp * 16 + (lane >> 4) * 8));
        mma_bf16(acc[2 * dp], a, b[0], b[1]);
        mma_bf16(acc[2 * dp + 1], a, b[2], b[3]);
      }
    }
  }

  // O = acc / l, staged through this warp's own rows of the Q tile (only this warp read them, at j = 0), then
  // written with 16-byte stores, rows < S only.
  float inv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    inv[h] = 1.0f / warp_reduce(l_run[h], Sum{}, 4);
  }
#pragma unroll
  for (int n = 0; n < D / 8; ++n) {
    const int r = warp * 16 + g, c = n * 8 + 2 * t;
    *reinterpret_cast<__nv_bfloat162*>(sq + swz<D>(r, c)) = __floats2bfloat162_rn(acc[n][0] * inv[0],
                                                                                  acc[n][1] * inv[0]);
    *reinterpret_cast<__nv_bfloat162*>(sq + swz<D>(r + 8, c)) = __floats2bfloat162_rn(acc[n][2] * inv[1],
                                                                                      acc[n][3] * inv[1]);
  }
  __syncwarp();
  constexpr int kChunks = D / 8;
#pragma unroll
  for (int c = lane; c < 16 * kChunks; c += 32) {
    const int r = c / kChunks, ch = c % kChunks, gr = row_lo + r;
    if (gr < seq)
      *reinterpret_cast<uint4*>(o + static_cast<std::size_t>(gr) * D +
                                ch * 8) = *reinterpret_cast<const uint4*>(sq + swz<D>(warp * 16 + r, ch * 8));
  }
}

template <int D>
constexpr int flash_smem_bytes() {
  return (kBM + 2 * kBN) * D * 2;
}

template <int D, bool Causal>
void launch_flash(const void* q, const void* k, const void* v, void* o, std::int64_t bh, std::int64_t seq,
                  float scale_log2, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((seq + kBM - 1) / kBM), static_cast<unsigned>(bh));
  flash_kernel<D, Causal><<<grid, kThreads, flash_smem_bytes<D>(), stream>>>(
      static_cast<const __nv_bfloat16*>(q), static_cast<const __nv_bfloat16*>(k), static_cast<const __nv_bfloat16*>(v),
      static_cast<__nv_bfloat16*>(o), static_cast<int>(seq), scale_log2);
  LABRUN_CUDA_CHECK(cudaGetLastError());
}

template <int D>
void set_flash_attributes() {
  LABRUN_CUDA_CHECK(
      cudaFuncSetAttribute(flash_kernel<D, false>, cudaFuncAttributeMaxDynamicSharedMemorySize, flash_smem_bytes<D>()));
  LABRUN_CUDA_CHECK(
      cudaFuncSetAttribute(flash_kernel<D, true>, cudaFuncAttributeMaxDynamicSharedMemorySize, flash_smem_bytes<D>()));
}

int pow2_at_least(std::int64_t x) {
  int p = 1;
  while (p < x) p <<= 1;
  return p;
}

template <int W, int N>
void launch_softmax(float* scores, std::int64_t rows, int threads, int seq, cudaStream_t stream) {
  softmax_kernel<W, N><<<static_cast<unsigned>(rows), threads, 0, stream>>>(scores, seq);
}

}  // namespace

void scale_mask(const float* src, float* dst, std::int64_t bh, std::int64_t seq, float scale, bool causal,
                cudaStream_t stream) {
  if (bh <= 0 || seq <= 0) return;
  const bool vec = seq % 4 == 0;
  const std::uint64_t vecs = static_cast<std::uint64_t>(seq) * seq / (vec ? 4 : 1);
  const unsigned x = static_cast<unsigned>(std::min<std::uint64_t>((vecs + 1023) / 1024, 65535));
  const dim3 grid(x, static_cast<unsigned>(bh));
  if (vec)
    scale_mask_kernel<4><<<grid, 256, 0, stream>>>(src, dst, static_cast<unsigned>(seq), static_cast<unsigned>(vecs),
                                                   scale, causal ? 1 : 0);
  else
    scale_mask_kernel<1><<<grid, 256, 0, stream>>>(src, dst, static_cast<unsigned>(seq), static_cast<unsigned>(vecs),
                                                   scale, causal ? 1 : 0);
  LABRUN_CUDA_CHECK(cudaGetLastError());
}

void softmax_rows(float* scores, std::int64_t bh, std::int64_t seq, cudaStream_t stream) {
  if (bh <= 0 || seq <= 0) return;
  if (seq > 16384) throw std::invalid_argument("attention softmax: seq > 16384");
  const std::int64_t rows = bh * seq;
  const int w = seq % 4 == 0 ? 4 : 1;
  const std::int64_t vecs = (seq + w - 1) / w;
  const int threads = std::clamp(pow2_at_least((vecs + 3) / 4), 64, 256);
  const int n = pow2_at_least((vecs + threads - 1) / threads);
  const int s = static_cast<int>(seq);
  if (w == 4) {
    switch (n) {
      case 1: launch_softmax<4, 1>(scores, rows, threads, s, stream); break;
      case 2: launch_softmax<4, 2>(scores, rows, threads, s, stream); break;
      case 4: launch_softmax<4, 4>(scores, rows, threads, s, stream); break;
      case 8: launch_softmax<4, 8>(scores, rows, threads, s, stream); break;
      default: launch_softmax<4, 16>(scores, rows, threads, s, stream); break;
    }
  } else {
    switch (n) {
      case 1: launch_softmax<1, 1>(scores, rows, threads, s, stream); break;
      case 2: launch_softmax<1, 2>(scores, rows, threads, s, stream); break;
      case 4: launch_softmax<1, 4>(scores, rows, threads, s, stream); break;
      case 8: launch_softmax<1, 8>(scores, rows, threads, s, stream); break;
      case 16: launch_softmax<1, 16>(scores, rows, threads, s, stream); break;
      case 32: launch_softmax<1, 32>(scores, rows, threads, s, stream); break;
      default: launch_softmax<1, 64>(scores, rows, threads, s, stream); break;
    }
  }
  LABRUN_CUDA_CHECK(cudaGetLastError());
}

void flash_forward(const void* q, const void* k, const void* v, void* o, std::int64_t bh, std::int64_t seq,
                   int head_dim, bool causal, float scale_log2, cudaStream_t stream) {
  if (bh <= 0 || seq <= 0) return;
  if (head_dim == 64) {
    causal ? launch_flash<64, true>(q, k, v, o, bh, seq, scale_log2, stream)
           : launch_flash<64, false>(q, k, v, o, bh, seq, scale_log2, stream);
  } else if (head_dim == 128) {
    causal ? launch_flash<128, true>(q, k, v, o, bh, seq, scale_log2, stream)
           : launch_flash<128, false>(q, k, v, o, bh, seq, scale_log2, stream);
  } else {
    throw std::invalid_argument("attention flash_forward: head_dim " + std::to_string(head_dim) + " (64 or 128)");
  }
}

void prepare(int head_dim) {
  if (head_dim == 64) set_flash_attributes<64>();
  if (head_dim == 128) set_flash_attributes<128>();
}

void poison(void* p, std::size_t bytes, cudaStream_t stream) {
  if (bytes) LABRUN_CUDA_CHECK(cudaMemsetAsync(p, 0xff, bytes, stream));
}

}  // namespace labrun::attention::kernels

namespace labrun::attention {

namespace {

constexpr float kLog2e = 1.44269504088896340736f;

// A variant's setup, returning its iteration: the fused kernel (its attributes set here, before any capture), or
// the naive pipeline on the SDK's score buffers with a cuBLAS handle (and its workspace) made here, never in the
// iteration (case C12). not_supported with the reason when cuBLAS cannot be loaded.
Step launcher(Launch& setup) {
  const Params p = params_of(setup.args());
  const void* q = setup.in("q").data;
  const void* k = setup.in("k").data;
  const void* v = setup.in("v").data;
  void* o = setup.out("o").data;
  const std::int64_t bh = p.bh(), s = p.seq;
  const int d = p.head_dim;
  const bool causal = p.causal;
  const float scale = p.scale();
  const double e2 = 2.0 * static_cast<double>(p.elements());
  const double ps = p.score_elements() * kScoreBytes, p2 = p.score_elements() * 2;
  if (p.variant == Variant::tiled) {
    kernels::prepare(d);
    return [=](Launch& l) {
      kernels::flash_forward(q, k, v, o, bh, s, d, causal, scale * kLog2e, l.stream());
      l.mark("flash_forward", 4 * e2);
    };
  }
  if (!cublas::available()) throw PointOutcome(Status::not_supported, "cuBLAS: " + cublas::unavailable_reason());
  const bool out_of_place = p.variant == Variant::naive_out_of_place;
  float* scores = setup.scratch("scores").as<float>();
  float* filled = out_of_place ? setup.scratch("filled").as<float>() : nullptr;
  auto blas = std::make_shared<cublas::Handle>(setup.stream(), kWorkspaceBytes);
  return [=](Launch& l) {
    using cublas::Op;
    using cublas::Type;
    cudaStream_t st = l.stream();
    const int si = static_cast<int>(s);
    const long long sd = static_cast<long long>(s) * d, ss = static_cast<long long>(s) * s;
    // Row-major scores[i][j] = q_i . k_j is the column-major S x S matrix K Q^T (K^T op, ld D).
    blas->gemm_strided_batched(Op::t, Op::n, si, si, d, 1.0f, k, Type::bf16, d, sd, q, Type::bf16, d, sd, 0.0f, scores,
                               Type::f32, si, ss, static_cast<int>(bh));
    l.mark("qk_gemm", 2 * e2 + ps);
    float* probs = scores;
    if (out_of_place) {
      kernels::scale_mask(scores, scores, bh, s, scale, false, st);
      l.mark("scale", 2 * ps);
      kernels::scale_mask(scores, filled, bh, s, 1.0f, causal, st);
      l.mark("mask_fill_copy", 2 * ps);
      probs = filled;
    } else {
      kernels::scale_mask(scores, scores, bh, s, scale, causal, st);
      l.mark("scale_mask", 2 * ps);
    }
    kernels::softmax_rows(probs, bh, s, st);
    l.mark("softmax", ps + p2);
    // P is bf16 over the score rows (row stride 2 S elements); O^T = V^T P^T column-major: m = D, n = S, k = S.
    blas->gemm_strided_batched(Op::n, Op::n, d, si, si, 1.0f, v, Type::bf16, d, sd, probs, Type::bf16, 2 * si, 2 * ss,
                               0.0f, o, Type::bf16, d, sd, static_cast<int>(bh));
    l.mark("pv_gemm", p2 + 2 * e2);
  };
}

}  // namespace

LABRUN_CUDA_VARIANTS(attention) {
  for (const char* v : {"naive_out_of_place", "naive_in_place", "tiled"}) e.cuda(v, launcher);
}

}  // namespace labrun::attention
