// The audit test aid's CUDA variants (audit.hpp): the calls the audit must name, around y = 2x + 1.
#include <labrun/cuda.cuh>
#include <labrun/experiment.hpp>

#include <memory>

#include "audit/audit.hpp"

using labrun::audit_aid::Fault;

namespace {

__global__ void compute(const float* x, float* y, std::int64_t n) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

// y = 2x + 1, and the block's sum of x reduced in shared memory with no __syncthreads between the steps (case C22): a
// thread reads a slot another warp writes, unordered. The sum goes to a volatile shared slot no one reads, so y is
// right whatever the race does; only racecheck can tell.
__global__ void racy_compute(const float* x, float* y, std::int64_t n) {
  __shared__ float partial[256];
  volatile float* p = partial;
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const unsigned t = threadIdx.x;
  p[t] = i < n ? x[i] : 0.0f;
  for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2)  // the missing __syncthreads() belongs here
    if (t < stride) p[t] = p[t] + p[t + stride];
  if (i < n) y[i] = 2.0f * x[i] + 1.0f;
}

void launch(const float* x, float* y, std::int64_t n, cudaStream_t s) {
  compute<<<labrun::cuda::grid_for(n, 256), 256, 0, s>>>(x, y, n);
  LABRUN_CUDA_LAUNCHED();
}

// A stream and two events of the variant's own, released with the point.
struct Own {
  cudaStream_t stream = nullptr;
  cudaEvent_t forked = nullptr, done = nullptr;
  Own() {
    LABRUN_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    LABRUN_CUDA_CHECK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
    LABRUN_CUDA_CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming));
  }
  ~Own() {
    cudaEventDestroy(forked);
    cudaEventDestroy(done);
    cudaStreamDestroy(stream);
  }
};

labrun::Setup cuda_variant(Fault fault) {
  return [fault](labrun::Launch& l) -> labrun::Step {
    auto own = std::make_shared<Own>();
    auto host = std::make_shared<float>(0.0f);
    auto calls = std::make_shared<int>(0);
    return [fault, own, host, calls](labrun::Launch& l) {
      const std::int64_t n = l.args().i64("n");
      const float* x = l.in("x").as<const float>();
      float* y = l.out("y").as<float>();
      const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
      switch (fault) {
        case Fault::none: launch(x, y, n, l.stream()); break;
        case Fault::late_escape: launch(x, y, n, ++*calls >= 10 ? own->stream : l.stream()); break;
        case Fault::racy_shared:
          racy_compute<<<labrun::cuda::grid_for(n, 256), 256, 0, l.stream()>>>(x, y, n);
          LABRUN_CUDA_LAUNCHED();
          break;
        case Fault::own_stream: launch(x, y, n, own->stream); break;
        case Fault::legacy_stream: launch(x, y, n, nullptr); break;
        case Fault::fork_join:
          LABRUN_CUDA_CHECK(cudaEventRecord(own->forked, l.stream()));
          LABRUN_CUDA_CHECK(cudaStreamWaitEvent(own->stream, own->forked, 0));
          launch(x, y, n, own->stream);
          LABRUN_CUDA_CHECK(cudaEventRecord(own->done, own->stream));
          LABRUN_CUDA_CHECK(cudaStreamWaitEvent(l.stream(), own->done, 0));
          break;
        case Fault::stream_sync:
          launch(x, y, n, l.stream());
          LABRUN_CUDA_CHECK(cudaStreamSynchronize(l.stream()));
          break;
        case Fault::device_sync:
          launch(x, y, n, l.stream());
          LABRUN_CUDA_CHECK(cudaDeviceSynchronize());
          break;
        case Fault::sync_copy:
          launch(x, y, n, l.stream());
          LABRUN_CUDA_CHECK(cudaStreamSynchronize(l.stream()));  // so y[0] is written: the copy is the fault too
          LABRUN_CUDA_CHECK(cudaMemcpy(host.get(), y, sizeof(float), cudaMemcpyDeviceToHost));
          break;
        case Fault::malloc_free: {
          float* tmp = nullptr;
          LABRUN_CUDA_CHECK(cudaMalloc(&tmp, bytes));
          launch(x, tmp, n, l.stream());
          LABRUN_CUDA_CHECK(cudaMemcpyAsync(y, tmp, bytes, cudaMemcpyDeviceToDevice, l.stream()));
          LABRUN_CUDA_CHECK(cudaFree(tmp));
          break;
        }
        case Fault::malloc_host: {
          void* pinned = nullptr;
          LABRUN_CUDA_CHECK(cudaMallocHost(&pinned, 64));
          launch(x, y, n, l.stream());
          LABRUN_CUDA_CHECK(cudaFreeHost(pinned));
          break;
        }
      }
    };
  };
}

}  // namespace

LABRUN_CUDA_VARIANTS(audit) {
  for (const auto& row : labrun::audit_aid::kVariants) e.cuda(row.name, cuda_variant(row.fault));
}
