#include "integrity.cuh"

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <labrun/counter_rng.hpp>

#include "cuda_check.hpp"

namespace labrun {

namespace {

// Word i of the hashed bytes, mixed as content_hash mixes it: splitmix64(w ^ splitmix64(i)); the last word padded
// with zeros.
struct MixedWord {
  const unsigned char* bytes;
  std::size_t size;
  __device__ std::uint64_t operator()(std::int64_t i) const {
    const std::size_t at = static_cast<std::size_t>(i) * 8;
    std::uint64_t w = 0;
    if (at + 8 <= size) {
      w = *reinterpret_cast<const std::uint64_t*>(bytes + at);
    } else {
      for (std::size_t k = 0; at + k < size; ++k) w |= static_cast<std::uint64_t>(bytes[at + k]) << (8 * k);
    }
    return splitmix64(w ^ splitmix64(static_cast<std::uint64_t>(i)));
  }
};

using Words = thrust::transform_iterator<MixedWord, thrust::counting_iterator<std::int64_t>>;

// Device memory kept for the process (never freed: no CUDA call at static teardown), grown as needed.
struct Grown {
  void* ptr = nullptr;
  std::size_t bytes = 0;
  void* at_least(std::size_t need) {
    if (need <= bytes) return ptr;
    if (ptr) LABRUN_CUDA(cudaFree(ptr));
    ptr = nullptr;
    bytes = 0;
    LABRUN_CUDA(cudaMalloc(&ptr, need));
    bytes = need;
    return ptr;
  }
};

Grown& temp_storage() {
  static auto* g = new Grown;
  return *g;
}
Grown& results() {
  static auto* g = new Grown;
  return *g;
}

}  // namespace

std::vector<std::uint64_t> device_content_hashes(const std::vector<std::pair<const void*, std::size_t>>& blocks,
                                                 cudaStream_t stream) {
  std::vector<std::uint64_t> h(blocks.size(), 0);
  if (blocks.empty()) return h;
  // The largest temporary storage any block needs serves them all (they run one after another on the stream).
  std::size_t need = 0;
  for (const auto& [data, bytes] : blocks) {
    const auto words = static_cast<std::int64_t>((bytes + 7) / 8);
    if (words == 0) continue;
    Words in(thrust::counting_iterator<std::int64_t>(0), MixedWord{static_cast<const unsigned char*>(data), bytes});
    std::size_t n = 0;
    LABRUN_CUDA(cub::DeviceReduce::Sum(nullptr, n, in, static_cast<std::uint64_t*>(nullptr), words, stream));
    need = std::max(need, n);
  }
  void* temp = temp_storage().at_least(std::max<std::size_t>(need, 1));
  auto* out = static_cast<std::uint64_t*>(results().at_least(blocks.size() * sizeof(std::uint64_t)));
  LABRUN_CUDA(cudaMemsetAsync(out, 0, blocks.size() * sizeof(std::uint64_t), stream));
  for (std::size_t k = 0; k < blocks.size(); ++k) {
    const auto [data, bytes] = blocks[k];
    const auto words = static_cast<std::int64_t>((bytes + 7) / 8);
    if (words == 0) continue;
    Words in(thrust::counting_iterator<std::int64_t>(0), MixedWord{static_cast<const unsigned char*>(data), bytes});
    std::size_t n = need;
    LABRUN_CUDA(cub::DeviceReduce::Sum(temp, n, in, out + k, words, stream));
  }
  auto* host = reinterpret_cast<std::uint64_t*>(pinned_staging(blocks.size() * sizeof(std::uint64_t)));
  LABRUN_CUDA(cudaMemcpyAsync(host, out, blocks.size() * sizeof(std::uint64_t), cudaMemcpyDeviceToHost, stream));
  LABRUN_CUDA(cudaStreamSynchronize(stream));
  std::copy(host, host + blocks.size(), h.begin());
  return h;
}

unsigned char* pinned_staging(std::size_t bytes) {
  static void* ptr = nullptr;
  static std::size_t held = 0;
  if (bytes > held) {
    if (ptr) LABRUN_CUDA(cudaFreeHost(ptr));
    ptr = nullptr;
    held = 0;
    LABRUN_CUDA(cudaMallocHost(&ptr, bytes));
    held = bytes;
  }
  return static_cast<unsigned char*>(ptr);
}

}  // namespace labrun
