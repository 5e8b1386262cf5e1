// Standalone timing of the tiled variant's kernels: FlashAttention-2's on mma.sync in its two shapes
// (experiments/attention/cuda/flash_forward.cuh; MT = 1: 64 query rows a block, 16 a warp; MT = 2: 128 rows, 32 a
// warp) and, at D 128, the Hopper kernel on TMA and wgmma (flash_forward_sm90.cuh), cold (512 MiB memset before
// each sample) and hot (5 launches between events), medians of 20, B 4 H 32 causal bf16 at S 1024, 4096, 16384
// (D 128) and 4096 (D 64), plus an odd shape. Also counts the output elements where MT 1 and MT 2 differ (the
// per-row arithmetic is the same, so 0 is expected) and the largest |difference| of the Hopper kernel's output
// from MT 2's (128-key tiles instead of 64: the softmax rescales at other boundaries, so rounding differs). Build
// (no labrun library needed), from the repository root after a CMake configure:
//   nvcc -O3 -std=c++17 -gencode arch=compute_90a,code=sm_90a -I build/kernels_include -I experiments \
//        results/h100/attention/backends/flash_shapes.cu -o flash_shapes
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <random>
#include <algorithm>
#include <cmath>
#include "attention/cuda/flash_forward.cuh"
#include "attention/cuda/flash_forward_sm90.cuh"
using namespace labrun::attention::kernels;
namespace sm90 = labrun::attention::kernels::sm90;
#define CU(x)                                                         \
  do {                                                                \
    cudaError_t e_ = (x);                                             \
    if (e_ != cudaSuccess) {                                          \
      std::printf("line %d: %s\n", __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                   \
    }                                                                 \
  } while (0)
static uint16_t f2bf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7fff + ((u >> 16) & 1);
  return (uint16_t)(u >> 16);
}
// Median seconds of one launch over 20 samples after 3 warmups: cold (the flush buffer written before each sample,
// one launch between the events) or hot (5 back-to-back launches between the events).
template <class Launch>
double timed(Launch launch, bool cold, void* flush, size_t fb) {
  cudaEvent_t a, b;
  CU(cudaEventCreate(&a));
  CU(cudaEventCreate(&b));
  for (int i = 0; i < 3; ++i) launch();
  CU(cudaDeviceSynchronize());
  std::vector<float> t;
  for (int i = 0; i < 20; ++i) {
    if (cold) CU(cudaMemsetAsync(flush, i, fb, 0));
    CU(cudaEventRecord(a, 0));
    int reps = cold ? 1 : 5;
    for (int r = 0; r < reps; ++r) launch();
    CU(cudaEventRecord(b, 0));
    CU(cudaEventSynchronize(b));
    float ms;
    CU(cudaEventElapsedTime(&ms, a, b));
    t.push_back(ms / reps);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2] * 1e-3;
}
template <int D, int MT>
double run(void* q, void* k, void* v, void* o, long long bh, long long s, bool cold, void* flush, size_t fb) {
  const float c = (float)(1.0 / std::sqrt((double)D)) * 1.44269504088896340736f;
  CU((flash_forward_prepare<D, true, MT>()));
  return timed([&] { flash_forward_launch<D, true, MT>(q, k, v, o, bh, s, c, 0); }, cold, flush, fb);
}
double run_sm90(void* q, void* k, void* v, void* o, long long bh, long long s, bool cold, void* flush, size_t fb) {
  const float c = (float)(1.0 / std::sqrt(128.0)) * 1.44269504088896340736f;
  CU(sm90::flash_forward_sm90_prepare<true>());
  sm90::Sm90Maps m;
  if (sm90::encode_sm90_maps(m, q, k, v, bh, s) != CUDA_SUCCESS) {
    std::printf("cuTensorMapEncodeTiled failed\n");
    std::exit(1);
  }
  return timed([&] { sm90::flash_forward_sm90_launch<true>(m, o, bh, s, c, 0); }, cold, flush, fb);
}
static float bf2f(uint16_t x) {
  uint32_t u = (uint32_t)x << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
template <int D>
void shape(long long B, long long H, long long S, void* flush, size_t fb) {
  const size_t E = (size_t)(B * H * S * D);
  std::vector<uint16_t> h(E);
  void *q, *k, *v, *o1, *o2;
  CU(cudaMalloc(&q, E * 2));
  CU(cudaMalloc(&k, E * 2));
  CU(cudaMalloc(&v, E * 2));
  CU(cudaMalloc(&o1, E * 2));
  CU(cudaMalloc(&o2, E * 2));
  std::mt19937 rng(S);
  std::uniform_real_distribution<float> u2(-2, 2), u1(-1, 1);
  for (auto& x : h) x = f2bf(u2(rng));
  CU(cudaMemcpy(q, h.data(), E * 2, cudaMemcpyHostToDevice));
  for (auto& x : h) x = f2bf(u2(rng));
  CU(cudaMemcpy(k, h.data(), E * 2, cudaMemcpyHostToDevice));
  for (auto& x : h) x = f2bf(u1(rng));
  CU(cudaMemcpy(v, h.data(), E * 2, cudaMemcpyHostToDevice));
  const double flop = 4.0 * B * H * (double)S * S * D / 2;
  double c1 = run<D, 1>(q, k, v, o1, B * H, S, true, flush, fb),
         h1 = run<D, 1>(q, k, v, o1, B * H, S, false, flush, fb);
  double c2 = run<D, 2>(q, k, v, o2, B * H, S, true, flush, fb),
         h2 = run<D, 2>(q, k, v, o2, B * H, S, false, flush, fb);
  std::vector<uint16_t> a(E), b(E);
  CU(cudaMemcpy(a.data(), o1, E * 2, cudaMemcpyDeviceToHost));
  CU(cudaMemcpy(b.data(), o2, E * 2, cudaMemcpyDeviceToHost));
  size_t diff = 0;
  for (size_t i = 0; i < E; ++i) diff += a[i] != b[i];
  std::printf(
      "B%lld H%lld S%lld D%d causal: MT1 cold %.1f us hot %.1f us (%.1f TFLOP/s cold) | MT2 cold %.1f us hot %.1f us "
      "(%.1f TFLOP/s cold) | outputs differing %zu of %zu\n",
      B, H, S, D, c1 * 1e6, h1 * 1e6, flop / c1 / 1e12, c2 * 1e6, h2 * 1e6, flop / c2 / 1e12, diff, E);
  if (D == 128) {
    const double c3 = run_sm90(q, k, v, o1, B * H, S, true, flush, fb),
                 h3 = run_sm90(q, k, v, o1, B * H, S, false, flush, fb);
    CU(cudaMemcpy(a.data(), o1, E * 2, cudaMemcpyDeviceToHost));
    double worst = 0;
    for (size_t i = 0; i < E; ++i) worst = std::max(worst, (double)std::fabs(bf2f(a[i]) - bf2f(b[i])));
    std::printf(
        "B%lld H%lld S%lld D%d causal: sm90 cold %.1f us hot %.1f us (%.1f TFLOP/s cold, %.3fx MT2's time) | "
        "max |sm90 - MT2| %.3g\n",
        B, H, S, D, c3 * 1e6, h3 * 1e6, flop / c3 / 1e12, c3 / c2, worst);
  }
  cudaFree(q);
  cudaFree(k);
  cudaFree(v);
  cudaFree(o1);
  cudaFree(o2);
}
int main() {
  size_t fb = 512u << 20;
  void* flush;
  CU(cudaMalloc(&flush, fb));
  for (long long s : {1024LL, 4096LL, 16384LL}) shape<128>(4, 32, s, flush, fb);
  shape<64>(4, 32, 4096, flush, fb);
  shape<128>(1, 3, 1000, flush, fb);
  return 0;
}
