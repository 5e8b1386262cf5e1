// Twenty empty <<<1, 1>>> kernels, each waited for: what Nsight Compute's gpu__time_duration reads for a kernel that
// does nothing, the launch floor's own duration (scripts/ncu_kernel_time.sh). Build: nvcc -o ncu_empty ncu_empty.cu
#include <cstdio>

__global__ void empty_kernel() {}

int main() {
  for (int i = 0; i < 20; ++i) {
    empty_kernel<<<1, 1>>>();
    if (cudaDeviceSynchronize() != cudaSuccess) {
      std::fprintf(stderr, "ncu_empty: %s\n", cudaGetErrorString(cudaGetLastError()));
      return 1;
    }
  }
  return 0;
}
