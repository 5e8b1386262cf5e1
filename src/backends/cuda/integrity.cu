#include "integrity.cuh"

#include <algorithm>

#include <cub/device/device_reduce.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <labrun/counter_rng.hpp>

#include "cuda_check.hpp"
#include "guards.hpp"

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

namespace {

// Up to this many regions per launch, passed by value as the kernel's parameter (1 KiB, within the 4 KiB limit).
constexpr int kRegionsPerLaunch = 64;
struct RegionBatch {
  GuardRegion region[kRegionsPerLaunch];
};

// Block y fills region y; blocks x stride over its bytes.
__global__ void fill_guards_kernel(RegionBatch batch) {
  const GuardRegion r = batch.region[blockIdx.y];
  for (std::size_t k = blockIdx.x * blockDim.x + threadIdx.x; k < r.bytes; k += gridDim.x * blockDim.x)
    r.data[k] = kGuardByte;
}

// Block y scans region y: found[2y] becomes the smallest written offset (kept at ~0 when none), found[2y + 1] the
// largest written offset + 1 (kept at 0 when none).
__global__ void scan_guards_kernel(RegionBatch batch, unsigned long long* found) {
  const GuardRegion r = batch.region[blockIdx.y];
  for (std::size_t k = blockIdx.x * blockDim.x + threadIdx.x; k < r.bytes; k += gridDim.x * blockDim.x)
    if (r.data[k] != kGuardByte) {
      atomicMin(found + 2 * blockIdx.y, static_cast<unsigned long long>(k));
      atomicMax(found + 2 * blockIdx.y + 1, static_cast<unsigned long long>(k) + 1);
    }
}

__global__ void init_found_kernel(unsigned long long* found, int regions) {
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < regions; k += gridDim.x * blockDim.x) {
    found[2 * k] = ~0ull;
    found[2 * k + 1] = 0;
  }
}

// Calls launch(batch, first, count) for each run of up to kRegionsPerLaunch regions.
template <class F>
void for_batches(const std::vector<GuardRegion>& regions, F&& launch) {
  for (std::size_t first = 0; first < regions.size(); first += kRegionsPerLaunch) {
    const std::size_t count = std::min<std::size_t>(kRegionsPerLaunch, regions.size() - first);
    RegionBatch batch{};
    std::size_t largest = 0;
    for (std::size_t k = 0; k < count; ++k) {
      batch.region[k] = regions[first + k];
      largest = std::max(largest, regions[first + k].bytes);
    }
    const dim3 grid(static_cast<unsigned>(std::clamp<std::size_t>((largest + 4095) / 4096, 1, 256)),
                    static_cast<unsigned>(count));
    launch(batch, grid, first);
  }
}

}  // namespace

void fill_guard_regions(const std::vector<GuardRegion>& regions, cudaStream_t stream) {
  for_batches(regions, [&](const RegionBatch& batch, dim3 grid, std::size_t) {
    fill_guards_kernel<<<grid, 256, 0, stream>>>(batch);
    LABRUN_CUDA(cudaGetLastError());
  });
}

std::vector<std::pair<std::optional<std::size_t>, std::optional<std::size_t>>> scan_guard_regions(
    const std::vector<GuardRegion>& regions, cudaStream_t stream) {
  std::vector<std::pair<std::optional<std::size_t>, std::optional<std::size_t>>> out(regions.size());
  if (regions.empty()) return out;
  const std::size_t bytes = 2 * regions.size() * sizeof(unsigned long long);
  auto* found = static_cast<unsigned long long*>(results().at_least(bytes));
  const int n = static_cast<int>(regions.size());
  init_found_kernel<<<(n + 255) / 256, 256, 0, stream>>>(found, n);
  LABRUN_CUDA(cudaGetLastError());
  for_batches(regions, [&](const RegionBatch& batch, dim3 grid, std::size_t first) {
    scan_guards_kernel<<<grid, 256, 0, stream>>>(batch, found + 2 * first);
    LABRUN_CUDA(cudaGetLastError());
  });
  auto* host = reinterpret_cast<unsigned long long*>(pinned_staging(bytes));
  LABRUN_CUDA(cudaMemcpyAsync(host, found, bytes, cudaMemcpyDeviceToHost, stream));
  LABRUN_CUDA(cudaStreamSynchronize(stream));
  for (std::size_t k = 0; k < regions.size(); ++k) {
    if (host[2 * k] != ~0ull) out[k].first = static_cast<std::size_t>(host[2 * k]);
    if (host[2 * k + 1] != 0) out[k].second = static_cast<std::size_t>(host[2 * k + 1] - 1);
  }
  return out;
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
