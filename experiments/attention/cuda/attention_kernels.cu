// The attention experiment's kernels, their launchers, and its CUDA variants (LABRUN_CUDA_VARIANTS): Q, K, V, O and
// the naive score buffers are the SDK's arrays (allocated before any capture, case C12), the cuBLAS handle and its
// workspace the setup's; each iteration enqueues its kernels on the lab's stream and marks them.
#include "attention/cuda/attention_kernels.cuh"

#include <cuda_bf16.h>

#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include <labrun/cublas.hpp>
#include <labrun/cudnn.hpp>
#include <labrun/cuda.cuh>
#include <labrun/kernels/row_softmax.cuh>
#include <labrun/experiment.hpp>
#include <labrun/status.hpp>

#include "attention/attention.hpp"
#include "attention/cuda/flash_forward.cuh"

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

// ---- tiled: FlashAttention-2 forward (flash_forward.cuh) -----------------------------------------------------
// Two m-tiles a warp (128 query rows a block): FlashAttention-2's H100 shape (its flash_fwd_launch_template.h, hdim
// 128); timed beside MT = 1 and torch by the standalone bench and results/h100/attention/backends/run.sh.
constexpr int kFlashMT = 2;
static_assert(flash_rows<kFlashMT>() == kBlockM && kFlashBN == kBlockN,
              "the host emulation and the reference's edge rows (attention.hpp) use the kernel's tile sizes");

template <int D>
void set_flash_attributes() {
  LABRUN_CUDA_CHECK((flash_forward_prepare<D, false, kFlashMT>()));
  LABRUN_CUDA_CHECK((flash_forward_prepare<D, true, kFlashMT>()));
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
  if (sm90::runs(head_dim)) {
    sm90::forward(*sm90::encode(q, k, v, bh, seq), o, bh, seq, causal, scale_log2, stream);
  } else if (head_dim == 64) {
    causal ? flash_forward_launch<64, true, kFlashMT>(q, k, v, o, bh, seq, scale_log2, stream)
           : flash_forward_launch<64, false, kFlashMT>(q, k, v, o, bh, seq, scale_log2, stream);
  } else if (head_dim == 128) {
    causal ? flash_forward_launch<128, true, kFlashMT>(q, k, v, o, bh, seq, scale_log2, stream)
           : flash_forward_launch<128, false, kFlashMT>(q, k, v, o, bh, seq, scale_log2, stream);
  } else {
    throw std::invalid_argument("attention flash_forward: head_dim " + std::to_string(head_dim) + " (64 or 128)");
  }
  LABRUN_CUDA_CHECK(cudaGetLastError());
}

void prepare(int head_dim) {
  if (head_dim == 64) set_flash_attributes<64>();
  if (head_dim == 128) set_flash_attributes<128>();
  sm90::runs(head_dim);  // the Hopper kernel's shared memory limit, set where it runs
}

const char* flash_forward_name(int head_dim) { return sm90::runs(head_dim) ? "flash_forward_sm90" : "flash_forward"; }

void poison(void* p, std::size_t bytes, cudaStream_t stream) {
  if (bytes) LABRUN_CUDA_CHECK(cudaMemsetAsync(p, 0xff, bytes, stream));
}

}  // namespace labrun::attention::kernels

namespace labrun::attention {

namespace {

constexpr float kLog2e = 1.44269504088896340736f;

// cuDNN's fused attention: the whole plan (graph, heuristics, plan, workspace, variant pack) built here, once per
// point; the iteration is one cudnnBackendExecute, so graph mode captures it. not_supported with the reason when
// cuDNN cannot be loaded or no engine runs the shape.
Step cudnn_launcher(Launch& setup, const Params& p) {
  if (!cudnn::available()) throw PointOutcome(Status::not_supported, "cuDNN: " + cudnn::unavailable_reason());
  const cudnn::SdpaShape shape{p.batch, p.heads, p.seq, p.head_dim, p.causal, p.scale()};
  std::shared_ptr<cudnn::Sdpa> attention;
  try {
    attention = std::make_shared<cudnn::Sdpa>(setup.stream(), shape, setup.in("q").data, setup.in("k").data,
                                              setup.in("v").data, setup.out("o").data);
  } catch (const cudnn::Unsupported& e) {
    throw PointOutcome(Status::not_supported, e.what());
  }
  const double e2 = 2.0 * static_cast<double>(p.elements());
  return [=](Launch& l) {
    attention->run();
    l.mark("cudnn_sdpa", 4 * e2);
  };
}

// A variant's setup, returning its iteration: the fused kernel (its attributes set here, before any capture), or
// the naive pipeline on the SDK's score buffers with a cuBLAS handle (and its workspace) made here, never in the
// iteration (case C12). not_supported with the reason when cuBLAS cannot be loaded.
Step launcher(Launch& setup) {
  const Params p = params_of(setup.args());
  if (p.variant == Variant::cudnn) return cudnn_launcher(setup, p);
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
    const char* kernel = kernels::flash_forward_name(d);
    if (kernels::sm90::runs(d)) {  // the device check and the tensor maps here, once: the iteration only launches
      std::shared_ptr<const kernels::sm90::Sm90Maps> maps = kernels::sm90::encode(q, k, v, bh, s);
      return [=](Launch& l) {
        kernels::sm90::forward(*maps, o, bh, s, causal, scale * kLog2e, l.stream());
        l.mark(kernel, 4 * e2);
      };
    }
    return [=](Launch& l) {
      kernels::flash_forward(q, k, v, o, bh, s, d, causal, scale * kLog2e, l.stream());
      l.mark(kernel, 4 * e2);
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
  for (const char* v : {"naive_out_of_place", "naive_in_place", "tiled", "cudnn"}) e.cuda(v, launcher);
}

}  // namespace labrun::attention
