#include "calibration.cuh"

#include "cuda_check.hpp"

namespace labrun::kernels {

namespace {

__global__ void read_stream_kernel(const uint4* src, std::size_t vectors, unsigned int* sink) {
  unsigned int acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + stride < vectors; i += 2 * stride) {
    const uint4 a = __ldcs(src + i), b = __ldcs(src + i + stride);
    acc ^= a.x ^ a.y ^ a.z ^ a.w ^ b.x ^ b.y ^ b.z ^ b.w;
  }
  for (; i < vectors; i += stride) {
    const uint4 a = __ldcs(src + i);
    acc ^= a.x ^ a.y ^ a.z ^ a.w;
  }
  // One racy-but-harmless write per block keeps the loads live.
  if (acc == 0x9e3779b9u) sink[blockIdx.x] = acc;
}

__global__ void empty_kernel() {}

__device__ inline unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
}

}  // namespace

int read_stream_sink_words(int sm_count) { return 8 * sm_count; }

void read_stream(const void* src, std::size_t bytes, unsigned int* sink, int sm_count, cudaStream_t stream) {
  read_stream_kernel<<<read_stream_sink_words(sm_count), 256, 0, stream>>>(static_cast<const uint4*>(src), bytes / 16,
                                                                          sink);
  LABRUN_CUDA_LAUNCHED();
}

void empty(cudaStream_t stream) {
  empty_kernel<<<1, 1, 0, stream>>>();
  LABRUN_CUDA_LAUNCHED();
}

void spin(double seconds, cudaStream_t stream) {
  spin_kernel<<<1, 1, 0, stream>>>(static_cast<unsigned long long>(seconds * 1e9));
  LABRUN_CUDA_LAUNCHED();
}

}  // namespace labrun::kernels
