// The integrity test aid's CUDA variants (integrity.hpp): the same faults as the host's, on the lab's stream, so
// they behave alike in eager and graph mode (a fault that keeps state keeps it on the device).
#include <labrun/cuda.cuh>
#include <labrun/experiment.hpp>

#include "integrity/integrity.hpp"

using labrun::integrity_aid::Fault;

namespace {

// y[i] = 2 x[i] + 1 for i < end; thread 0 of block 0 also stores `value` at extra[offset] when extra is set, and
// changes x[0] when `calls` is set and its count reaches `from_call` (counted on the device, once per launch).
__global__ void compute(float* x, float* y, std::int64_t end, float* extra, std::int64_t offset,
                        unsigned long long* calls, unsigned long long from_call) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < end) y[i] = 2.0f * x[i] + 1.0f;
  if (i != 0) return;
  if (extra) extra[offset] = 1.0f;
  // Every block has read its x by the time a later launch runs: the write lands after this launch's reads of x[0]
  // only in block 0, which read it above.
  if (calls && ++*calls >= from_call) x[0] += 1.0f;
}

void launch(labrun::Launch& l, float* x, float* y, std::int64_t end, float* extra = nullptr, std::int64_t offset = 0,
            unsigned long long* calls = nullptr, unsigned long long from_call = 0) {
  const std::int64_t n = l.args().i64("n");
  compute<<<labrun::cuda::grid_for(n, 256), 256, 0, l.stream()>>>(x, y, end, extra, offset, calls, from_call);
  LABRUN_CUDA_LAUNCHED();
}

labrun::Setup cuda_variant(Fault fault) {
  return [fault](labrun::Launch& l) -> labrun::Step {
    const std::int64_t n = l.args().i64("n");
    const std::size_t bytes = static_cast<std::size_t>(n) * sizeof(float);
    float* cache = nullptr;
    if (fault == Fault::replays_cache || fault == Fault::setup_work || fault == Fault::allocated_guard)
      cache = static_cast<float*>(l.allocate(bytes));
    unsigned long long* calls = nullptr;
    if (fault == Fault::writes_input || fault == Fault::writes_input_late) {
      calls = static_cast<unsigned long long*>(l.allocate(sizeof(unsigned long long)));
      LABRUN_CUDA_CHECK(cudaMemsetAsync(calls, 0, sizeof(unsigned long long), l.stream()));
    }
    if (fault == Fault::setup_work) launch(l, static_cast<float*>(l.in("x").data), cache, n);  // read in setup
    auto first = std::make_shared<bool>(true);
    return [=](labrun::Launch& l) {
      auto* x = static_cast<float*>(l.in("x").data);
      float* y = l.out("y").as<float>();
      switch (fault) {
        case Fault::none: launch(l, x, y, n); break;
        case Fault::past_end: launch(l, x, y, n, y, n); break;
        case Fault::before_start: launch(l, x, y, n, y, -1); break;
        case Fault::scratch_guard: launch(l, x, y, n, l.scratch("work").as<float>(), n); break;
        case Fault::allocated_guard: launch(l, x, y, n, cache, n); break;
        case Fault::writes_input: launch(l, x, y, n, nullptr, 0, calls, 1); break;
        case Fault::writes_input_late: launch(l, x, y, n, nullptr, 0, calls, labrun::integrity_aid::kLateCall); break;
        case Fault::replays_cache:
          // The host decides once: the first call computes into the cache; every call copies the cache.
          if (*first) launch(l, x, cache, n);
          *first = false;
          LABRUN_CUDA_CHECK(cudaMemcpyAsync(y, cache, bytes, cudaMemcpyDeviceToDevice, l.stream()));
          break;
        case Fault::setup_work:
          LABRUN_CUDA_CHECK(cudaMemcpyAsync(y, cache, bytes, cudaMemcpyDeviceToDevice, l.stream()));
          break;
        case Fault::tail_unwritten: launch(l, x, y, n - 1); break;
      }
    };
  };
}

}  // namespace

LABRUN_CUDA_VARIANTS(integrity) {
  for (const auto& row : labrun::integrity_aid::kVariants) e.cuda(row.name, cuda_variant(row.fault));
}
