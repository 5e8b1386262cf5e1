// The fault test aid's kernels (tests/aids/fault/fault.hpp).
#include "fault/fault_kernels.cuh"

namespace labrun::fault::kernels {

namespace {

__global__ void sum_kernel(const float* x, long long n, float* out) {
  float s = 0;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    s += x[i];
  atomicAdd(out, s);
}

__global__ void illegal_address_kernel() { *reinterpret_cast<volatile int*>(16) = 1; }

__global__ void trap_kernel() { __trap(); }

__global__ void hang_kernel(const volatile int* flag) {
  while (*flag == 0) {
  }
}

}  // namespace

void sum(const float* x, long long n, float* out, cudaStream_t stream) {
  cudaMemsetAsync(out, 0, sizeof(float), stream);
  sum_kernel<<<256, 256, 0, stream>>>(x, n, out);
}
void illegal_address(cudaStream_t stream) { illegal_address_kernel<<<1, 1, 0, stream>>>(); }
void trap(cudaStream_t stream) { trap_kernel<<<1, 1, 0, stream>>>(); }
void hang(const int* flag, cudaStream_t stream) { hang_kernel<<<1, 1, 0, stream>>>(flag); }

}  // namespace labrun::fault::kernels
