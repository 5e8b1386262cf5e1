// GPU tests of kernels/ (the public device building blocks; CTest label `gpu`, suite KernelsGpu). Each test skips,
// reported as SKIPPED, when no CUDA device is present. Inputs are drawn with a fresh seed per run (printed; set
// LABRUN_TEST_SEED to reproduce). What they establish:
//  - warp_reduce at widths 32, 8 and 4 and group_reduce over blocks of 64, 256 and 1024 threads leave in every
//    thread the bits their host twins (kernels/reduce_order.hpp) compute, for sums and maxima;
//  - Vec<S> loads and stores of f32, f16 and bf16 (the 16-byte form and the scalar form) round as the host's
//    float_to_half / float_to_bf16, and block0_tail covers exactly the elements past the last whole vector;
//  - load_row + softmax_two_pass equal the float64 softmax within 8 f32 ulps per element (rows with a tail), and
//    an all -inf row gives NaN as torch.softmax does;
//  - resident_blocks_per_sm is at least 1 and resident_blocks<> returns the same number.
#include <gtest/gtest.h>

#include "gpu/gpu_test_seed.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include <labrun/dtype.hpp>
#include <labrun/kernels/occupancy.cuh>
#include <labrun/kernels/reduce.cuh>
#include <labrun/kernels/row_softmax.cuh>
#include <labrun/kernels/vec.cuh>

namespace {

namespace k = ::labrun::kernels;

using ::labrun::test::test_seed;

bool have_device() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

#define CHECK_CUDA(expr) ASSERT_EQ((expr), cudaSuccess) << #expr

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Values of mixed magnitude and sign, so that a different summation order would change the bits.
std::vector<float> draw(std::size_t n, std::uint64_t salt) {
  std::mt19937_64 rng(test_seed() ^ salt);
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-12, 12);
  std::vector<float> v(n);
  for (auto& x : v) x = std::ldexp(mant(rng), expo(rng));
  return v;
}

template <class T>
struct DeviceArray {
  T* p = nullptr;
  explicit DeviceArray(std::size_t n) { cudaMalloc(&p, n * sizeof(T) + 16); }
  ~DeviceArray() { cudaFree(p); }
};

template <class Op>
__global__ void warp_reduce_kernel(const float* in, float* out, int width, Op op) {
  out[threadIdx.x] = k::warp_reduce(in[threadIdx.x], op, width);
}

template <class Op>
__global__ void group_reduce_kernel(const float* in, float* out, float identity, Op op) {
  __shared__ float smem[32];
  out[threadIdx.x] = k::group_reduce(in[threadIdx.x], static_cast<int>(blockDim.x), identity, smem, op);
}

template <class Op>
void expect_warp_reduce_matches_twin(Op op, std::uint64_t salt) {
  const std::vector<float> in = draw(32, salt);
  DeviceArray<float> din(32), dout(32);
  CHECK_CUDA(cudaMemcpy(din.p, in.data(), 32 * 4, cudaMemcpyHostToDevice));
  for (int width : {32, 8, 4}) {
    warp_reduce_kernel<<<1, 32>>>(din.p, dout.p, width, op);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> out(32);
    CHECK_CUDA(cudaMemcpy(out.data(), dout.p, 32 * 4, cudaMemcpyDeviceToHost));
    for (int g = 0; g < 32 / width; ++g) {
      std::vector<float> lanes(in.begin() + g * width, in.begin() + (g + 1) * width);
      const float twin = k::butterfly_reduce(lanes.data(), width, op);
      for (int l = 0; l < width; ++l)
        EXPECT_EQ(bits(out[g * width + l]), bits(twin)) << "width " << width << " group " << g << " lane " << l;
    }
  }
}

template <class Op>
void expect_group_reduce_matches_twin(Op op, float identity, std::uint64_t salt) {
  for (int threads : {64, 256, 1024}) {
    const std::vector<float> in = draw(threads, salt + threads);
    DeviceArray<float> din(threads), dout(threads);
    CHECK_CUDA(cudaMemcpy(din.p, in.data(), threads * 4, cudaMemcpyHostToDevice));
    group_reduce_kernel<<<1, threads>>>(din.p, dout.p, identity, op);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> out(threads);
    CHECK_CUDA(cudaMemcpy(out.data(), dout.p, threads * 4, cudaMemcpyDeviceToHost));
    std::vector<float> twin_in = in;
    const float twin = k::block_reduce_order(twin_in.data(), threads, identity, op);
    for (int t = 0; t < threads; ++t) EXPECT_EQ(bits(out[t]), bits(twin)) << threads << " threads, thread " << t;
  }
}

TEST(KernelsGpu, WarpReduceLeavesTheHostTwinsBitsInEveryLane) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  expect_warp_reduce_matches_twin(k::Sum{}, 1);
  expect_warp_reduce_matches_twin(k::Max{}, 2);
}

TEST(KernelsGpu, GroupReduceOverABlockLeavesTheHostTwinsBitsInEveryThread) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  expect_group_reduce_matches_twin(k::Sum{}, 0.0f, 3);
  expect_group_reduce_matches_twin(k::Max{}, -INFINITY, 4);
}

// y = round_S(x + 1) through Vec<S, W> over n elements in vectors of W, the tail by block0_tail.
template <class S, int W>
__global__ void vec_add_one_kernel(const S* x, S* y, std::int64_t n) {
  const std::int64_t v = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (v < n / W) {
    float f[W];
    k::Vec<S, W>::load(x + v * W, f);
#pragma unroll
    for (int i = 0; i < W; ++i) f[i] += 1.0f;
    if (v % 2) k::Vec<S, W>::store(y + v * W, f);
    else k::Vec<S, W>::store_streaming(y + v * W, f);
  }
  k::block0_tail<W>(n, [&](std::int64_t i) { y[i] = k::Convert<S>::store(k::Convert<S>::load(x[i]) + 1.0f); });
}

template <class S, int W>
void expect_vec_round_trip(labrun::DType t, std::uint16_t (*to_bits)(float), std::uint64_t salt) {
  const std::int64_t n = 8 * 37 + 5;  // a tail past the last whole vector
  const std::vector<float> src = draw(n, salt);
  std::vector<S> x(n);
  std::vector<float> xf(n);
  for (std::int64_t i = 0; i < n; ++i) {
    if constexpr (sizeof(S) == 4) {
      xf[i] = src[i];
      std::memcpy(&x[i], &xf[i], 4);
    } else {
      const std::uint16_t b = to_bits(src[i]);
      std::memcpy(&x[i], &b, 2);
      xf[i] = t == labrun::DType::bf16 ? labrun::bf16_to_float(b) : labrun::half_to_float(b);
    }
  }
  DeviceArray<S> dx(n), dy(n);
  CHECK_CUDA(cudaMemcpy(dx.p, x.data(), n * sizeof(S), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(dy.p, 0xff, n * sizeof(S)));  // poison: an element nobody wrote stays NaN
  vec_add_one_kernel<S, W><<<(n / W + 63) / 64 + 1, 64>>>(dx.p, dy.p, n);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<S> y(n);
  CHECK_CUDA(cudaMemcpy(y.data(), dy.p, n * sizeof(S), cudaMemcpyDeviceToHost));
  for (std::int64_t i = 0; i < n; ++i) {
    const float want = xf[i] + 1.0f;
    if constexpr (sizeof(S) == 4) {
      float got;
      std::memcpy(&got, &y[i], 4);
      EXPECT_EQ(bits(got), bits(want)) << "element " << i;
    } else {
      std::uint16_t got;
      std::memcpy(&got, &y[i], 2);
      EXPECT_EQ(got, to_bits(want)) << labrun::to_string(t) << " W " << W << " element " << i;
    }
  }
}

TEST(KernelsGpu, VecLoadsAndStoresRoundAsTheHostAndTheTailIsCovered) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  expect_vec_round_trip<float, 4>(labrun::DType::f32, nullptr, 5);
  expect_vec_round_trip<float, 1>(labrun::DType::f32, nullptr, 6);
  expect_vec_round_trip<__nv_bfloat16, 8>(labrun::DType::bf16, &labrun::float_to_bf16, 7);
  expect_vec_round_trip<__nv_bfloat16, 1>(labrun::DType::bf16, &labrun::float_to_bf16, 8);
  expect_vec_round_trip<__half, 8>(labrun::DType::f16, &labrun::float_to_half, 9);
  expect_vec_round_trip<__half, 1>(labrun::DType::f16, &labrun::float_to_half, 10);
}

// One block of G threads per row: load_row, softmax_two_pass, y = v * scale.
template <int W, int VPT>
__global__ void row_softmax_kernel(const float* x, float* y, std::int64_t cols) {
  __shared__ float red[2][32];
  const int G = static_cast<int>(blockDim.x), lane = static_cast<int>(threadIdx.x);
  const float* row = x + blockIdx.x * cols;
  float v[W * VPT];
  k::load_row<float, W, VPT>(row, cols / W, lane, G, true, v);
  const float scale = k::softmax_two_pass(v, G, red);
  for (int kk = 0; kk < VPT; ++kk)
    for (int i = 0; i < W; ++i) {
      const std::int64_t c = (lane + static_cast<std::int64_t>(kk) * G) * W + i;
      if (c < cols) y[blockIdx.x * cols + c] = v[kk * W + i] * scale;
    }
}

TEST(KernelsGpu, RowSoftmaxEqualsTheFloat64Softmax) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const int rows = 3, G = 64;
  for (std::int64_t cols : {std::int64_t{4}, std::int64_t{100}, std::int64_t{1024}}) {
    std::vector<float> x = draw(rows * cols, 11 + cols);
    for (std::int64_t c = 0; c < cols; ++c) x[2 * cols + c] = -INFINITY;  // a row with no elements
    DeviceArray<float> dx(rows * cols), dy(rows * cols);
    CHECK_CUDA(cudaMemcpy(dx.p, x.data(), x.size() * 4, cudaMemcpyHostToDevice));
    if (cols % 4 == 0) row_softmax_kernel<4, 4><<<rows, G>>>(dx.p, dy.p, cols);
    else row_softmax_kernel<1, 16><<<rows, G>>>(dx.p, dy.p, cols);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<float> y(x.size());
    CHECK_CUDA(cudaMemcpy(y.data(), dy.p, y.size() * 4, cudaMemcpyDeviceToHost));
    for (int r = 0; r < 2; ++r) {
      double m = -INFINITY, s = 0;
      for (std::int64_t c = 0; c < cols; ++c) m = std::max(m, static_cast<double>(x[r * cols + c]));
      for (std::int64_t c = 0; c < cols; ++c) s += std::exp(static_cast<double>(x[r * cols + c]) - m);
      for (std::int64_t c = 0; c < cols; ++c) {
        const double want = std::exp(static_cast<double>(x[r * cols + c]) - m) / s;
        EXPECT_NEAR(y[r * cols + c], want, 8 * std::numeric_limits<float>::epsilon() * want + 1e-30)
            << "cols " << cols << " row " << r << " col " << c;
      }
    }
    // The all -inf row: exps 0 (no exp(-inf + inf)), 1 / sum = +inf, so 0 * inf = NaN, as torch.softmax gives.
    for (std::int64_t c = 0; c < cols; ++c) EXPECT_TRUE(std::isnan(y[2 * cols + c])) << "the all -inf row";
  }
}

__global__ void occupancy_probe_kernel(float* p) { p[threadIdx.x] = 0; }

TEST(KernelsGpu, ResidentBlocksIsAtLeastOneAndAskedOnce) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const int direct = k::resident_blocks_per_sm(&occupancy_probe_kernel, 256);
  EXPECT_GE(direct, 1);
  EXPECT_EQ((k::resident_blocks<&occupancy_probe_kernel, 256>()), direct);
  EXPECT_EQ((k::resident_blocks<&occupancy_probe_kernel, 256>()), direct);
}

}  // namespace
