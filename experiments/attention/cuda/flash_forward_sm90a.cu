// The Hopper kernel's host side (attention_kernels.cuh, namespace sm90): compiled with sm_90a code beside the
// project's architectures (CMakeLists.txt, LABRUN_SM90A), so the driver loads the wgmma image on a 9.0 device.
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

#include <labrun/cuda.cuh>

#include "attention/cuda/attention_kernels.cuh"
#include "attention/cuda/flash_forward_sm90.cuh"

namespace labrun::attention::kernels::sm90 {

bool built() {
#if defined(LABRUN_SM90A)
  return true;
#else
  return false;
#endif
}

namespace {

// Whether one block of both instantiations fits an SM of `device` with the registers ptxas gave them: 9 warps take
// the registers of 12 (the SM's 4 sub-partitions), so above 168 a thread the launch would fail; then the mma.sync
// kernel runs. Sets the dynamic shared memory limit first (the occupancy query counts it). Once per device, in the
// first call: a variant's setup, before any capture.
bool launchable(int device) {
  static std::mutex mutex;
  static std::map<int, bool> known;
  const std::lock_guard<std::mutex> lock(mutex);
  const auto it = known.find(device);
  if (it != known.end()) return it->second;
  int causal = 0, plain = 0;
  const bool ok = flash_forward_sm90_prepare<true>() == cudaSuccess &&
                  flash_forward_sm90_prepare<false>() == cudaSuccess &&
                  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&causal, flash_forward_sm90_kernel<true>, kThreads,
                                                                kSmemBytes) == cudaSuccess &&
                  cudaOccupancyMaxActiveBlocksPerMultiprocessor(&plain, flash_forward_sm90_kernel<false>, kThreads,
                                                                kSmemBytes) == cudaSuccess &&
                  causal > 0 && plain > 0;
  known[device] = ok;
  return ok;
}

}  // namespace

bool runs(int head_dim) {
  int device = 0;
  return built() && head_dim == kD && cudaGetDevice(&device) == cudaSuccess &&
         ::labrun::kernels::is_sm90a_device(device) && launchable(device);
}

std::shared_ptr<const Sm90Maps> encode(const void* q, const void* k, const void* v, std::int64_t bh, std::int64_t seq) {
  auto maps = std::make_shared<Sm90Maps>();
  const CUresult r = encode_sm90_maps(*maps, q, k, v, bh, seq);
  if (r != CUDA_SUCCESS)
    throw std::runtime_error("attention flash_forward: cuTensorMapEncodeTiled failed (CUresult " + std::to_string(r) +
                             ")");
  return maps;
}

void forward(const Sm90Maps& maps, void* o, std::int64_t bh, std::int64_t seq, bool causal, float scale_log2,
             cudaStream_t stream) {
  causal ? flash_forward_sm90_launch<true>(maps, o, bh, seq, scale_log2, stream)
         : flash_forward_sm90_launch<false>(maps, o, bh, seq, scale_log2, stream);
  LABRUN_CUDA_CHECK(cudaGetLastError());
}

}  // namespace labrun::attention::kernels::sm90
