// The tiled variant's Hopper kernel at D = 128: the FlashAttention forward on TMA and wgmma (Shah et al.,
// "FlashAttention-3", arXiv:2407.08608, 2024), without its inter-warpgroup ping-pong and intra-warpgroup overlap.
// A block of 288 threads: two consumer warpgroups of 64 query rows each (128 a block) and one producer warp, one
// lane of which loads the Q tile once and streams K/V tiles of 128 keys through a 2-stage ring with TMA (128-byte
// swizzle, rows past S zero-filled), each stage with a full and an empty mbarrier for K and for V. A consumer:
// S = Q K_jᵀ by 8 wgmma m64n128k16 from shared memory (both K-major); the mask on diagonal and tail tiles only; the
// online softmax (x = s · scale log2 e, exp2) on the accumulator fragment; P packed to bf16 in registers is the A
// operand of O += P V_j by 8 wgmma m64n128k16 with V as the MN-major B. Needs sm_90a (labrun/kernels/wgmma.cuh):
// the body compiles only under __CUDA_ARCH_FEAT_SM90_ALL and traps in any other image. Header-only (included by
// attention_kernels.cu and the standalone bench results/h100/attention/backends/flash_shapes.cu); nvcc C++17.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include <labrun/kernels/mma.cuh>
#include <labrun/kernels/wgmma.cuh>

#include "attention/cuda/flash_forward.cuh"  // fast_exp2

namespace labrun::attention::kernels::sm90 {

inline constexpr int kD = 128;     // head dim
inline constexpr int kBM = 128;    // query rows a block (2 warpgroups x 64)
inline constexpr int kBN = 128;    // keys a K/V tile
inline constexpr int kStages = 2;  // K/V ring depth
inline constexpr int kConsumers = 256;
inline constexpr int kThreads = kConsumers + 32;  // + the producer warp
/// Registers a thread, at most: under 224 ptxas 13.0 uses 165 with no spills (a cap of 168, which
/// __launch_bounds__(288, 1) would set, timed 2.5% slower on another H100: not separated from card variation). The SM
/// allocates registers to a block's warps in groups of 4 (its sub-partitions), so 9 warps count as 12 and a block fits
/// only at 168 or fewer: sm90::runs() checks the occupancy once, and the mma.sync kernel runs if a compiler ever goes
/// past it.
inline constexpr int kMaxRegs = 224;
inline constexpr int kTileBytes = kBN * kD * 2;    // one 128 x 128 bf16 tile: two 64-column swizzled halves
inline constexpr int kHalfBytes = kTileBytes / 2;  // one TMA box: 64 columns x 128 rows
inline constexpr int kSmemQ = 0, kSmemK = kSmemQ + kBM * kD * 2, kSmemV = kSmemK + kStages * kTileBytes;
inline constexpr int kSmemBar = kSmemV + kStages * kTileBytes;
inline constexpr int kBarriers = 1 + 4 * kStages;
/// Dynamic shared memory of a block: Q, K and V rings, barriers, and 1024 B to align the base to a swizzle atom.
inline constexpr int kSmemBytes = kSmemBar + kBarriers * 8 + 1024;
static_assert(kBM == kBN, "the causal tile count assumes square tiles");

/// Grid (bh, m-blocks); block m = gridDim.y - 1 - blockIdx.y (the longest causal blocks first) owns query rows
/// [128 m, 128 m + 128) of head blockIdx.x. tq, tk, tv: tensor maps of Q, K, V as [bh][seq][128] bf16 in boxes of
/// 64 x 128 (encode_bf16_tensor_map_3d); o: [bh][seq][128] bf16. scale_log2 = scale · log2(e).
template <bool Causal>
__global__ void __maxnreg__(kMaxRegs)
    flash_forward_sm90_kernel(const __grid_constant__ CUtensorMap tq, const __grid_constant__ CUtensorMap tk,
                              const __grid_constant__ CUtensorMap tv, __nv_bfloat16* __restrict__ o, int seq,
                              float scale_log2) {
#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  __trap();  // the generic sm_90 image has no wgmma: never launched (flash_forward picks the mma.sync kernel)
#else
  using namespace ::labrun::kernels;
  constexpr float kNegInf = -INFINITY;
  extern __shared__ unsigned char smem_raw[];
  const std::uint32_t raw = smem_addr(smem_raw), base = (raw + 1023u) & ~1023u;
  unsigned char* smem = smem_raw + (base - raw);
  const std::uint32_t sq = base + kSmemQ, sk = base + kSmemK, sv = base + kSmemV, bars = base + kSmemBar;
  const auto bar_q = bars;
  auto k_full = [&](int s) { return bars + 8u * (1 + s); };
  auto v_full = [&](int s) { return bars + 8u * (1 + kStages + s); };
  auto k_empty = [&](int s) { return bars + 8u * (1 + 2 * kStages + s); };
  auto v_empty = [&](int s) { return bars + 8u * (1 + 3 * kStages + s); };

  const int tid = static_cast<int>(threadIdx.x), head = static_cast<int>(blockIdx.x);
  const int m0 = (static_cast<int>(gridDim.y) - 1 - static_cast<int>(blockIdx.y)) * kBM;
  const int tiles_all = (seq + kBN - 1) / kBN;
  const int tiles = Causal ? min(tiles_all, m0 / kBN + 1) : tiles_all;

  if (tid == 0) {
    mbar_init(bar_q, 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(k_full(s), 1);
      mbar_init(v_full(s), 1);
      mbar_init(k_empty(s), kConsumers / 32);  // lane 0 of each consumer warp
      mbar_init(v_empty(s), kConsumers / 32);
    }
    fence_mbarrier_init();
  }
  __syncthreads();  // the last block-wide barrier: the producer warp returns early

  if (tid >= kConsumers) {  // the producer: one lane issues every TMA load
    if (tid == kConsumers) {
      prefetch_tensor_map(&tq);
      prefetch_tensor_map(&tk);
      prefetch_tensor_map(&tv);
      mbar_expect_tx(bar_q, kTileBytes);
      tma_load_3d(sq, &tq, 0, m0, head, bar_q);
      tma_load_3d(sq + kHalfBytes, &tq, 64, m0, head, bar_q);
      for (int j = 0; j < tiles; ++j) {
        const int s = j % kStages;
        const std::uint32_t n = static_cast<std::uint32_t>(j / kStages);
        if (j >= kStages) mbar_wait(k_empty(s), (n - 1) & 1);  // both warpgroups released tile j - kStages's K
        mbar_expect_tx(k_full(s), kTileBytes);
        tma_load_3d(sk + s * kTileBytes, &tk, 0, j * kBN, head, k_full(s));
        tma_load_3d(sk + s * kTileBytes + kHalfBytes, &tk, 64, j * kBN, head, k_full(s));
        if (j >= kStages) mbar_wait(v_empty(s), (n - 1) & 1);
        mbar_expect_tx(v_full(s), kTileBytes);
        tma_load_3d(sv + s * kTileBytes, &tv, 0, j * kBN, head, v_full(s));
        tma_load_3d(sv + s * kTileBytes + kHalfBytes, &tv, 64, j * kBN, head, v_full(s));
      }
    }
    return;
  }

  // A consumer warpgroup: rows m0 + 64 wg .. + 63; this thread's rows row0 and row0 + 8 (fragment half h = 0, 1).
  const int wg = tid >> 7, t = tid & 127, warp = t >> 5, lane = t & 31, g = lane >> 2, tq4 = lane & 3;
  const int row_wg = m0 + 64 * wg, row0 = row_wg + 16 * warp + g;
  float o_acc[64], s_acc[64];
  std::uint32_t p[32];
#pragma unroll
  for (int i = 0; i < 64; ++i) o_acc[i] = 0.0f;
  float m_run[2] = {kNegInf, kNegInf}, l_run[2] = {0.0f, 0.0f};
  const std::uint32_t q_base = sq + wg * 64 * 128;  // this warpgroup's 64 rows of each 64-column half

  mbar_wait(bar_q, 0);
  for (int j = 0; j < tiles; ++j) {
    const int s = j % kStages;
    const std::uint32_t phase = static_cast<std::uint32_t>(j / kStages) & 1;
    // S = Q K_jᵀ: k16 step ks is 64-column half ks / 4, 32 B (ks % 4) into the 128-byte swizzled row.
    mbar_wait(k_full(s), phase);
#pragma unroll
    for (int i = 0; i < 64; ++i) fence_operand(s_acc[i]);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kD / 16; ++ks) {
      const std::uint32_t off = (ks >> 2) * kHalfBytes + (ks & 3) * 32;
      wgmma_m64n128k16_ss(s_acc, sw128_desc(q_base + off, 16, 1024), sw128_desc(sk + s * kTileBytes + off, 16, 1024),
                          ks > 0);
    }
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < 64; ++i) fence_operand(s_acc[i]);
    __syncwarp();
    if (lane == 0) mbar_arrive(k_empty(s));

    // Mask (diagonal and tail tiles), then the online softmax in the log2 domain.
    const int key0 = j * kBN;
    if (key0 + kBN > seq || (Causal && key0 + kBN - 1 > row_wg)) {
#pragma unroll
      for (int i = 0; i < 64; ++i) {
        const int key = key0 + 8 * (i >> 2) + 2 * tq4 + (i & 1), row = row0 + 8 * ((i >> 1) & 1);
        if (key >= seq || (Causal && key > row)) s_acc[i] = kNegInf;
      }
    }
    float alpha[2];
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      float mx = kNegInf;
#pragma unroll
      for (int n = 0; n < 16; ++n) mx = fmaxf(mx, fmaxf(s_acc[4 * n + 2 * h], s_acc[4 * n + 2 * h + 1]));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
      mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
      const float m_new = fmaxf(m_run[h], mx * scale_log2);
      const float m_use = m_new == kNegInf ? 0.0f : m_new;  // a row with no key yet keeps exp2 finite
      alpha[h] = fast_exp2(m_run[h] - m_use);
      m_run[h] = m_new;
      float rs = 0.0f;
#pragma unroll
      for (int n = 0; n < 16; ++n) {
        const float e0 = fast_exp2(fmaf(s_acc[4 * n + 2 * h], scale_log2, -m_use));
        const float e1 = fast_exp2(fmaf(s_acc[4 * n + 2 * h + 1], scale_log2, -m_use));
        s_acc[4 * n + 2 * h] = e0;
        s_acc[4 * n + 2 * h + 1] = e1;
        rs += e0 + e1;
      }
      l_run[h] = l_run[h] * alpha[h] + rs;
    }
#pragma unroll
    for (int i = 0; i < 64; ++i) o_acc[i] *= alpha[(i >> 1) & 1];
#pragma unroll
    for (int i = 0; i < 32; ++i) p[i] = pack_bf16(s_acc[2 * i], s_acc[2 * i + 1]);

    // O += P V_j: k16 step ks (keys 16 ks ..) is 2048 B into V's tile; lbo = 16 KiB between its 64-column halves.
    mbar_wait(v_full(s), phase);
#pragma unroll
    for (int i = 0; i < 64; ++i) fence_operand(o_acc[i]);
#pragma unroll
    for (int i = 0; i < 32; ++i) fence_operand(p[i]);
    wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < kBN / 16; ++ks)
      wgmma_m64n128k16_rs_mn(o_acc, p[4 * ks], p[4 * ks + 1], p[4 * ks + 2], p[4 * ks + 3],
                             sw128_desc(sv + s * kTileBytes + ks * 2048, kHalfBytes, 1024));
    wgmma_commit();
    wgmma_wait<0>();
#pragma unroll
    for (int i = 0; i < 64; ++i) fence_operand(o_acc[i]);
#pragma unroll
    for (int i = 0; i < 32; ++i) fence_operand(p[i]);
    __syncwarp();
    if (lane == 0) mbar_arrive(v_empty(s));
  }

  // O / l to bf16, staged in this warpgroup's own 64 rows of the Q tile (same swizzle), then 16-byte stores, rows
  // < S only.
  float inv[2];
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float l = l_run[h];
    l += __shfl_xor_sync(0xffffffffu, l, 1);
    l += __shfl_xor_sync(0xffffffffu, l, 2);
    inv[h] = l > 0.0f ? 1.0f / l : 0.0f;
  }
#pragma unroll
  for (int n = 0; n < 16; ++n) {
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = 64 * wg + 16 * warp + g + 8 * h, c = 8 * n + 2 * tq4;
      const std::uint32_t off = (c >> 6) * kHalfBytes + r * 128 + ((((c & 63) >> 3) ^ (r & 7)) << 4) + (c & 7) * 2;
      *reinterpret_cast<std::uint32_t*>(smem + kSmemQ + off) = pack_bf16(o_acc[4 * n + 2 * h] * inv[h],
                                                                         o_acc[4 * n + 2 * h + 1] * inv[h]);
    }
  }
  asm volatile("bar.sync %0, %1;\n" ::"r"(1 + wg), "r"(128) : "memory");  // this warpgroup's 4 warps only
  const std::size_t head_off = static_cast<std::size_t>(head) * seq * kD;
#pragma unroll
  for (int it = 0; it < (64 * kD / 8) / 128; ++it) {
    const int c = t + 128 * it, rl = c >> 4, ch = c & 15;  // row within the warpgroup, 16-byte chunk of the row
    const int r = 64 * wg + rl, grow = m0 + r;
    if (grow < seq) {
      const std::uint32_t off = (ch >> 3) * kHalfBytes + r * 128 + (((ch & 7) ^ (r & 7)) << 4);
      *reinterpret_cast<uint4*>(o + head_off + static_cast<std::size_t>(grow) * kD +
                                ch * 8) = *reinterpret_cast<const uint4*>(smem + kSmemQ + off);
    }
  }
#endif
}

/// Tensor maps of one launch: Q, K, V as [bh][seq][128] bf16 in boxes of 64 x 128.
struct Sm90Maps {
  CUtensorMap q, k, v;
};

/// Encodes the maps of q, k, v ([bh][seq][128] bf16, 16-byte aligned: TMA's requirement); returns the driver's
/// result (CUDA_SUCCESS when all three are encoded).
inline CUresult encode_sm90_maps(Sm90Maps& m, const void* q, const void* k, const void* v, long long bh,
                                 long long seq) {
  using ::labrun::kernels::encode_bf16_tensor_map_3d;
  const auto s = static_cast<std::uint64_t>(seq), b = static_cast<std::uint64_t>(bh);
  CUresult r = encode_bf16_tensor_map_3d(&m.q, q, kD, s, b, kBM);
  if (r == CUDA_SUCCESS) r = encode_bf16_tensor_map_3d(&m.k, k, kD, s, b, kBN);
  if (r == CUDA_SUCCESS) r = encode_bf16_tensor_map_3d(&m.v, v, kD, s, b, kBN);
  return r;
}

/// Sets the kernel's dynamic shared memory limit (before any capture). Returns the CUDA error.
template <bool Causal>
cudaError_t flash_forward_sm90_prepare() {
  return cudaFuncSetAttribute(flash_forward_sm90_kernel<Causal>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              kSmemBytes);
}

/// Launches the kernel over bh heads of seq rows on `stream` (flash_forward_sm90_prepare first; a device of compute
/// capability 9.0 only). o: [bh][seq][128] bf16, 16-byte aligned (the epilogue stores 16-byte vectors).
template <bool Causal>
void flash_forward_sm90_launch(const Sm90Maps& m, void* o, long long bh, long long seq, float scale_log2,
                               cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(bh), static_cast<unsigned>((seq + kBM - 1) / kBM));
  flash_forward_sm90_kernel<Causal><<<grid, kThreads, kSmemBytes, stream>>>(
      m.q, m.k, m.v, static_cast<__nv_bfloat16*>(o), static_cast<int>(seq), scale_log2);
}

}  // namespace labrun::attention::kernels::sm90
