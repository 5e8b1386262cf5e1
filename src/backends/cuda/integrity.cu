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

// CUB's temporary storage and the result, kept for the process (never freed: no CUDA call at static teardown).
struct HashScratch {
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  std::uint64_t* result = nullptr;
};

HashScratch& scratch() {
  static auto* s = new HashScratch;
  return *s;
}

}  // namespace

std::uint64_t device_content_hash(const void* data, std::size_t bytes, cudaStream_t stream) {
  const auto words = static_cast<std::int64_t>((bytes + 7) / 8);
  if (words == 0) return 0;
  auto in = thrust::make_transform_iterator(thrust::counting_iterator<std::int64_t>(0),
                                            MixedWord{static_cast<const unsigned char*>(data), bytes});
  HashScratch& s = scratch();
  if (!s.result) LABRUN_CUDA(cudaMalloc(&s.result, sizeof(std::uint64_t)));
  std::size_t need = 0;
  LABRUN_CUDA(cub::DeviceReduce::Sum(nullptr, need, in, s.result, words, stream));
  if (need > s.temp_bytes) {
    if (s.temp) LABRUN_CUDA(cudaFree(s.temp));
    s.temp = nullptr;
    s.temp_bytes = 0;
    LABRUN_CUDA(cudaMalloc(&s.temp, need));
    s.temp_bytes = need;
  }
  LABRUN_CUDA(cub::DeviceReduce::Sum(s.temp, need, in, s.result, words, stream));
  std::uint64_t h = 0;
  LABRUN_CUDA(cudaMemcpyAsync(&h, s.result, sizeof h, cudaMemcpyDeviceToHost, stream));
  LABRUN_CUDA(cudaStreamSynchronize(stream));
  return h;
}

}  // namespace labrun
