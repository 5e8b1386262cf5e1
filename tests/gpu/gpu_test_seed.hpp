// The seed of the GPU suites' fresh random inputs, shared by their C++ and CUDA sources (compiles under nvcc's
// C++17 and the host's C++20).
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>

namespace labrun::test {

/// LABRUN_TEST_SEED when set (a decimal integer), else one draw of std::random_device per test binary; printed the
/// first time ("LABRUN_TEST_SEED=N") so that a failing run can be repeated with the same inputs.
inline std::uint64_t test_seed() {
  static const std::uint64_t seed = [] {
    const char* env = std::getenv("LABRUN_TEST_SEED");
    const std::uint64_t s = env ? std::strtoull(env, nullptr, 10) : std::random_device{}();
    std::printf("LABRUN_TEST_SEED=%llu\n", static_cast<unsigned long long>(s));
    return s;
  }();
  return seed;
}

}  // namespace labrun::test
