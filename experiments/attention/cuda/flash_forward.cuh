// The tiled variant's kernel: a FlashAttention-2 forward (Dao, "FlashAttention-2", arXiv:2307.08691, 2023) on
// mma.sync bf16 -> f32 (labrun/kernels/mma.cuh). A block of 4 warps owns 16 MT query rows a warp (64 MT rows),
// streams K/V tiles of kBN = 64 keys through shared memory and keeps the output and the online softmax's max and
// sum in registers; the S x S matrix is never written. MT = 2 (128 rows a block, 32 a warp) is FlashAttention-2's
// own H100 shape for D = 128: every K and V fragment a warp loads with ldmatrix feeds 2 MT MMAs, so shared-memory
// traffic per MMA is lower than with MT = 1. Header-only (included by attention_kernels.cu, and by a standalone
// benchmark that times MT against each other); nvcc C++17, sm_80 and later.
#pragma once

#include <cuda_bf16.h>

#include <cstddef>

#include <labrun/kernels/mma.cuh>
#include <labrun/kernels/reduce.cuh>

namespace labrun::attention::kernels {

/// Keys per K/V tile (the host emulation's kBlockN: the online softmax's rescaling happens at these boundaries).
inline constexpr int kFlashBN = 64;
inline constexpr int kFlashThreads = 128;

/// 2^x by the SFU's ex2.approx with denormal results flushed to zero (PTX ISA, "ex2"; max relative error 2^-22),
/// one MUFU instruction where exp2f's ex2.approx.f32 adds the denormal fix-up: FlashAttention-2 builds with
/// --use_fast_math, which makes the same choice. A p below 2^-126 (a key 126 e-folds under the row's max) becomes
/// 0, far inside the tolerance (docs/experiments/attention.md).
__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

/// Query rows per block for MT m-tiles a warp.
template <int MT>
__host__ __device__ constexpr int flash_rows() {
  return 4 * 16 * MT;
}
/// Dynamic shared memory of a block: the Q tile, one K and one V tile, bf16.
template <int D, int MT>
__host__ __device__ constexpr int flash_smem_bytes() {
  return (flash_rows<MT>() + 2 * kFlashBN) * D * 2;
}

/// Block (x, y): query rows [R m, R m + R) of head y, R = flash_rows<MT>(), m = gridDim.x - 1 - x (the longest
/// causal blocks first). Warp w owns rows R m + 16 MT w .. + 16 MT - 1, m-tile mt its rows 16 mt .. 16 mt + 15.
/// Pipeline per K/V tile j: wait K_j, issue V_j; S = Q K_jᵀ (Q fragments re-read from shared memory, so the
/// registers hold the output, not Q); wait V_j, issue K_{j+1}; mask, online softmax (x = s · scale log2 e, exp2);
/// O += bf16(P) V_j. A warp whose rows all precede the tile's first key (causal) skips the tile's math.
/// q, k, v, o: [heads][seq][D] bf16 (the head is blockIdx.y). scale_log2 = scale · log2(e).
template <int D, bool Causal, int MT>
__global__ void __launch_bounds__(kFlashThreads, D == 128 || MT == 2 ? 2 : 3)
    flash_forward_kernel(const __nv_bfloat16* __restrict__ q, const __nv_bfloat16* __restrict__ k,
                         const __nv_bfloat16* __restrict__ v, __nv_bfloat16* __restrict__ o, int seq,
                         float scale_log2) {
  using namespace ::labrun::kernels;
  constexpr int kBM = flash_rows<MT>(), kBN = kFlashBN, kWarpRows = 16 * MT;
  constexpr float kNegInf = -INFINITY;
  extern __shared__ __align__(128) unsigned char smem[];
  __nv_bfloat16* sq = reinterpret_cast<__nv_bfloat16*>(smem);
  __nv_bfloat16* sk = sq + kBM * D;
  __nv_bfloat16* sv = sk + kBN * D;
  const int warp = static_cast<int>(threadIdx.x) >> 5, lane = static_cast<int>(threadIdx.x) & 31;
  const int g = lane >> 2, t = lane & 3;
  const int m0 = (gridDim.x - 1 - blockIdx.x) * kBM;
  const std::size_t head = static_cast<std::size_t>(blockIdx.y) * seq * D;
  q += head;
  k += head;
  v += head;
  o += head;
  const int tiles_all = (seq + kBN - 1) / kBN;
  const int tiles = Causal ? min(tiles_all, (m0 + kBM - 1) / kBN + 1) : tiles_all;
  const int row_lo = m0 + warp * kWarpRows;  // this warp's first row

  load_tile_async<D, kBM, kFlashThreads>(sq, q, m0, seq);
  load_tile_async<D, kBN, kFlashThreads>(sk, k, 0, seq);
  cp_async_commit();

  float acc[MT][D / 8][4];
  float m_run[MT][2], l_run[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int n = 0; n < D / 8; ++n) acc[mt][n][0] = acc[mt][n][1] = acc[mt][n][2] = acc[mt][n][3] = 0.0f;
    m_run[mt][0] = m_run[mt][1] = kNegInf;
    l_run[mt][0] = l_run[mt][1] = 0.0f;
  }

  for (int j = 0; j < tiles; ++j) {
    cp_async_wait();
    __syncthreads();  // K_j (and Q) landed; every warp is done with V_{j-1}
    load_tile_async<D, kBN, kFlashThreads>(sv, v, j * kBN, seq);
    cp_async_commit();

    const int key0 = j * kBN;
    const bool active = !Causal || key0 <= row_lo + kWarpRows - 1;  // warp-uniform
    float s[MT][kBN / 8][4];
    if (active) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < kBN / 8; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.0f;
#pragma unroll
      for (int kk = 0; kk < D / 16; ++kk) {
        unsigned qf[MT][4];
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
          ldmatrix_x4(qf[mt], sq + swizzled<D>(warp * kWarpRows + mt * 16 + (lane & 15), kk * 16 + (lane >> 4) * 8));
#pragma unroll
        for (int np = 0; np < kBN / 16; ++np) {
          unsigned b[4];
          ldmatrix_x4(b, sk + swizzled<D>(np * 16 + (lane & 7) + ((lane >> 4) << 3), kk * 16 + ((lane >> 3) & 1) * 8));
#pragma unroll
          for (int mt = 0; mt < MT; ++mt) {
            mma_bf16_16816(s[mt][2 * np], qf[mt], b[0], b[1]);
            mma_bf16_16816(s[mt][2 * np + 1], qf[mt], b[2], b[3]);
          }
        }
      }
    }

    cp_async_wait();
    __syncthreads();  // V_j landed; every warp is done with K_j
    if (j + 1 < tiles) {
      load_tile_async<D, kBN, kFlashThreads>(sk, k, (j + 1) * kBN, seq);
      cp_async_commit();
    }
    if (!active) continue;

    if (key0 + kBN > seq || (Causal && key0 + kBN - 1 > row_lo)) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < kBN / 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int key = key0 + n * 8 + 2 * t + (e & 1), row = row_lo + mt * 16 + g + (e >> 1) * 8;
            if (key >= seq || (Causal && key > row)) s[mt][n][e] = kNegInf;
          }
    }

#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        float mx = kNegInf;
#pragma unroll
        for (int n = 0; n < kBN / 8; ++n) mx = fmaxf(mx, fmaxf(s[mt][n][2 * h], s[mt][n][2 * h + 1]));
        mx = warp_reduce(mx, Max{}, 4);  // over the quad of lanes that holds the row
        const float m_new = fmaxf(m_run[mt][h], mx * scale_log2);
        const float m_use = m_new == kNegInf ? 0.0f : m_new;  // a row with no key yet: keep exp2 finite
        const float alpha = fast_exp2(m_run[mt][h] - m_use);
        m_run[mt][h] = m_new;
        float rs = 0.0f;
#pragma unroll
        for (int n = 0; n < kBN / 8; ++n) {
          s[mt][n][2 * h] = fast_exp2(fmaf(s[mt][n][2 * h], scale_log2, -m_use));
          s[mt][n][2 * h + 1] = fast_exp2(fmaf(s[mt][n][2 * h + 1], scale_log2, -m_use));
          rs += s[mt][n][2 * h] + s[mt][n][2 * h + 1];
        }
        l_run[mt][h] = l_run[mt][h] * alpha + rs;  // this thread's partial row sum (the quad is summed at the end)
#pragma unroll
        for (int n = 0; n < D / 8; ++n) {
          acc[mt][n][2 * h] *= alpha;
          acc[mt][n][2 * h + 1] *= alpha;
        }
      }
    }

#pragma unroll
    for (int kk = 0; kk < kBN / 16; ++kk) {
      // The accumulator layout of n-tiles 2 kk and 2 kk + 1 is the A-operand layout of keys 16 kk .. 16 kk + 15.
      unsigned a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        a[mt][0] = pack_bf16(s[mt][2 * kk][0], s[mt][2 * kk][1]);
        a[mt][1] = pack_bf16(s[mt][2 * kk][2], s[mt][2 * kk][3]);
        a[mt][2] = pack_bf16(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
        a[mt][3] = pack_bf16(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
      }
#pragma unroll
      for (int dp = 0; dp < D / 16; ++dp) {
        unsigned b[4];
        ldmatrix_x4_trans(b, sv + swizzled<D>(kk * 16 + (lane & 7) + ((lane >> 3) & 1) * 8, dp * 16 + (lane >> 4) * 8));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          mma_bf16_16816(acc[mt][2 * dp], a[mt], b[0], b[1]);
          mma_bf16_16816(acc[mt][2 * dp + 1], a[mt], b[2], b[3]);
        }
      }
    }
  }

  // O = acc / l, staged through this warp's own rows of the Q tile (only this warp reads them), then written with
  // 16-byte stores, rows < S only.
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
    const float inv0 = 1.0f / warp_reduce(l_run[mt][0], Sum{}, 4);
    const float inv1 = 1.0f / warp_reduce(l_run[mt][1], Sum{}, 4);
#pragma unroll
    for (int n = 0; n < D / 8; ++n) {
      const int r = warp * kWarpRows + mt * 16 + g, c = n * 8 + 2 * t;
      *reinterpret_cast<__nv_bfloat162*>(sq + swizzled<D>(r, c)) = __floats2bfloat162_rn(acc[mt][n][0] * inv0,
                                                                                         acc[mt][n][1] * inv0);
      *reinterpret_cast<__nv_bfloat162*>(sq + swizzled<D>(r + 8, c)) = __floats2bfloat162_rn(acc[mt][n][2] * inv1,
                                                                                             acc[mt][n][3] * inv1);
    }
  }
  __syncwarp();
  constexpr int kChunks = D / 8;
#pragma unroll
  for (int c = lane; c < kWarpRows * kChunks; c += 32) {
    const int r = c / kChunks, ch = c % kChunks, gr = row_lo + r;
    if (gr < seq)
      *reinterpret_cast<uint4*>(o + static_cast<std::size_t>(gr) * D + ch * 8) = *reinterpret_cast<const uint4*>(
          sq + swizzled<D>(warp * kWarpRows + r, ch * 8));
  }
}

/// Sets the kernel's dynamic shared memory limit (before any capture: cudaFuncSetAttribute is not a stream
/// operation). Returns the CUDA error, cudaSuccess when set.
template <int D, bool Causal, int MT>
cudaError_t flash_forward_prepare() {
  return cudaFuncSetAttribute(flash_forward_kernel<D, Causal, MT>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              flash_smem_bytes<D, MT>());
}

/// Launches the kernel over bh heads of seq rows on `stream` (flash_forward_prepare first).
template <int D, bool Causal, int MT>
void flash_forward_launch(const void* q, const void* k, const void* v, void* o, long long bh, long long seq,
                          float scale_log2, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>((seq + flash_rows<MT>() - 1) / flash_rows<MT>()), static_cast<unsigned>(bh));
  flash_forward_kernel<D, Causal, MT><<<grid, kFlashThreads, flash_smem_bytes<D, MT>(), stream>>>(
      static_cast<const __nv_bfloat16*>(q), static_cast<const __nv_bfloat16*>(k), static_cast<const __nv_bfloat16*>(v),
      static_cast<__nv_bfloat16*>(o), static_cast<int>(seq), scale_log2);
}

}  // namespace labrun::attention::kernels
