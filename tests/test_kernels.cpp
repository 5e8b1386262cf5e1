// Host tests of kernels/reduce_order.hpp, the host twin of kernels/reduce.cuh's summation order (the GPU suite
// KernelsGpu checks the device against it bit for bit): butterfly_reduce is what every lane of an xor butterfly
// ends with, and block_reduce_order is each warp's butterfly then one over the warps' results padded to 32.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include <labrun/kernels/reduce_order.hpp>

namespace {

namespace k = ::labrun::kernels;

std::uint32_t bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

std::vector<float> draw(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ std::random_device{}());
  std::uniform_real_distribution<float> mant(-1.0f, 1.0f);
  std::uniform_int_distribution<int> expo(-12, 12);
  std::vector<float> v(n);
  for (auto& x : v) x = std::ldexp(mant(rng), expo(rng));
  return v;
}

// Every lane of a simulated warp: at each step lane l takes op(own, lane l ^ off), as __shfl_xor_sync does.
std::vector<float> simulate_butterfly(std::vector<float> lanes, int width) {
  for (int off = width / 2; off > 0; off /= 2) {
    std::vector<float> next(lanes.size());
    for (std::size_t l = 0; l < lanes.size(); ++l) next[l] = lanes[l] + lanes[l ^ static_cast<std::size_t>(off)];
    lanes = next;
  }
  return lanes;
}

TEST(KernelsReduceOrder, ButterflyReduceIsWhatEveryLaneOfTheXorButterflyEndsWith) {
  for (int width : {2, 4, 8, 16, 32}) {
    const std::vector<float> in = draw(width, width);
    const std::vector<float> lanes = simulate_butterfly(in, width);
    std::vector<float> twin_in = in;
    const float twin = k::butterfly_reduce(twin_in.data(), width, k::Sum{});
    for (int l = 0; l < width; ++l) EXPECT_EQ(bits(lanes[l]), bits(twin)) << "width " << width << " lane " << l;
  }
}

TEST(KernelsReduceOrder, BlockOrderIsEachWarpsButterflyThenOneOverTheWarpsPaddedTo32) {
  for (int threads : {32, 64, 256, 1024}) {
    const std::vector<float> in = draw(threads, 100 + threads);
    std::vector<float> partial(32, 0.0f);
    for (int w = 0; w < threads / 32; ++w)
      partial[w] = simulate_butterfly(std::vector<float>(in.begin() + 32 * w, in.begin() + 32 * (w + 1)), 32)[0];
    const float want = simulate_butterfly(partial, 32)[0];
    std::vector<float> twin_in = in;
    EXPECT_EQ(bits(k::block_reduce_order(twin_in.data(), threads, 0.0f, k::Sum{})), bits(want)) << threads;
  }
  // The order matters: for these values a left-to-right sum differs from the butterfly's in some draw.
  int differ = 0;
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> in = draw(256, 1000 + trial);
    float serial = 0;
    for (float x : in) serial += x;
    differ += bits(serial) != bits(k::block_reduce_order(in.data(), 256, 0.0f, k::Sum{}));
  }
  EXPECT_GT(differ, 0);
}

TEST(KernelsReduceOrder, MaxIgnoresNaNAndPadsWithTheIdentity) {
  float lanes[4] = {1.0f, NAN, -3.0f, 2.0f};
  EXPECT_EQ(k::butterfly_reduce(lanes, 4, k::Max{}), 2.0f);
  std::vector<float> in(64, -INFINITY);
  in[40] = 5.0f;
  EXPECT_EQ(k::block_reduce_order(in.data(), 64, -INFINITY, k::Max{}), 5.0f);
}

}  // namespace
