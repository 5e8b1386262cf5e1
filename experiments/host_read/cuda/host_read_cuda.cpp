// The CUDA workloads of the host_read experiment. Every buffer is allocated in the constructor (case C12). Each
// step is two kernels on the backend's stream; item_per_step then reads the step's loss through
// LaunchContext::read_to_host (a counted host sync, case C09: the host waits for the GPU to drain before it can
// launch the next step), accumulate_on_device leaves the losses in a device array and copies all k once after the
// loop: read_to_host in eager mode (one sync), an asynchronous copy into the same pinned buffer in graph mode (a
// node of the graph; the host reads it after the replays are waited for).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>
#include <utility>

#include "cuda_backend.hpp"
#include "host_read/cuda/host_read_kernels.cuh"
#include "host_read/host_read.hpp"
#include "registry.hpp"

namespace labrun::host_read {

namespace {

// The device copy of a host x0, uploaded again only when the host set changes.
struct DeviceInputs {
  std::shared_ptr<const std::vector<float>> host;
  DeviceBuffer x0;
};

class CudaWorkload : public Workload {
 public:
  CudaWorkload(const Params& p, LaunchContext& ctx, std::shared_ptr<DeviceInputs> dev,
               std::shared_ptr<const Reference> ref, double scale)
      : p_(p), ctx_(ctx), dev_(std::move(dev)), ref_(std::move(ref)), scale_(scale),
        pinned_(static_cast<std::size_t>(std::max<std::int64_t>(p.steps, 4)) * sizeof(float)) {
    x_ = DeviceBuffer(std::max<std::size_t>(static_cast<std::size_t>(p.n) * 4, 16));
    losses_ = DeviceBuffer(std::max<std::size_t>(static_cast<std::size_t>(p.steps) * 4, 16));
    partials_ = DeviceBuffer(static_cast<std::size_t>(kMaxBlocks) * 4);
    grid_ = kernels::step_grid(p.n, ctx.sm_count());  // occupancy look-up now, not inside a graph capture
  }

  void run() override {
    const std::int64_t k = p_.steps, n = p_.n;
    cudaStream_t st = ctx_.stream();
    const float* x0 = dev_->x0.as<const float>();
    float* x = x_.as<float>();
    float* losses = losses_.as<float>();
    float* host = pinned_.as<float>();
    const double step_bytes = 8.0 * static_cast<double>(n) + 4;
    const bool item = p_.variant == Variant::item_per_step;
    double seen = 0;  // what the host does with each loss it reads (a running sum, as a training log would)
    for (std::int64_t j = 0; j < k; ++j) {
      kernels::update(j == 0 ? x0 : x, x, n, offset(j), partials_.as<float>(), grid_, st);
      if (j == 0) ctx_.mark("update_reduce", 8.0 * static_cast<double>(n));
      kernels::finalize(partials_.as<float>(), grid_, losses + j, st);
      if (j == 0) ctx_.mark("finalize", 4);
      if (item) {
        ctx_.read_to_host(host + j, losses + j, sizeof(float));
        seen += host[j];
        if (j == 0) {
          ctx_.mark("loss_to_host", 4);
          // The host's wake-up from the sync and its next launch: not kernel time.
          ctx_.mark("host_round_trip", 0);
        }
      }
    }
    // The other k − 1 steps under one mark (per-step marks would give the breakdown thousands of entries); for
    // item_per_step its time includes their host round trips.
    if (k > 1) ctx_.mark("remaining_steps", static_cast<double>(k - 1) * (step_bytes + (item ? 4 : 0)));
    if (!item && k > 0) {
      const std::size_t bytes = static_cast<std::size_t>(k) * sizeof(float);
      if (p_.mode == "graph") LABRUN_CUDA(cudaMemcpyAsync(host, losses, bytes, cudaMemcpyDeviceToHost, st));
      else ctx_.read_to_host(host, losses, bytes);
      ctx_.mark("losses_to_host", static_cast<double>(bytes));
    }
    last_seen_ = seen;
  }

  Check check(const std::function<void()>& iterate) override {
    cudaStream_t st = ctx_.stream();
    // Poison: all-ones bytes are NaN in f32, in the device array and in the pinned copy the host reads.
    LABRUN_CUDA(cudaMemsetAsync(losses_.get(), 0xff, losses_.bytes(), st));
    LABRUN_CUDA(cudaStreamSynchronize(st));
    std::fill(pinned_.as<float>(), pinned_.as<float>() + std::max<std::int64_t>(p_.steps, 4),
              std::numeric_limits<float>::quiet_NaN());
    iterate();
    LABRUN_CUDA(cudaStreamSynchronize(st));
    // The losses as the host holds them after the loop: what item() returned, or the one copy.
    Check c = compare(*ref_, pinned_.as<const float>(), scale_);
    c.detail["poisoned"] = true;
    return c;
  }

  Cost cost() const override { return host_read::cost(p_); }

 private:
  Params p_;
  LaunchContext& ctx_;
  std::shared_ptr<DeviceInputs> dev_;
  std::shared_ptr<const Reference> ref_;
  double scale_;
  PinnedBuffer pinned_;
  DeviceBuffer x_, losses_, partials_;
  int grid_ = 1;
  double last_seen_ = 0;
};

}  // namespace

void register_cuda(Registry& registry) {
  auto cache = std::make_shared<InputCache>();
  auto device = std::make_shared<std::shared_ptr<DeviceInputs>>();
  auto create = [cache, device](const Point& point, Backend& backend, const LabSettings& lab) -> std::unique_ptr<Workload> {
    LaunchContext& ctx = launch_context(backend);
    const Params p = params_of(point);
    auto x0 = cache->inputs(p, lab.seed);
    auto ref = cache->reference_for(p, lab.seed);
    auto& dev = *device;
    if (!dev || dev->host != x0) {
      dev.reset();  // free the old device copy before allocating the new one
      auto fresh = std::make_shared<DeviceInputs>();
      fresh->host = x0;
      fresh->x0 = DeviceBuffer(std::max<std::size_t>(x0->size() * sizeof(float), 16), MemoryRole::input);
      if (!x0->empty())
        LABRUN_CUDA(cudaMemcpy(fresh->x0.get(), x0->data(), x0->size() * sizeof(float), cudaMemcpyHostToDevice));
      dev = fresh;
    }
    return std::make_unique<CudaWorkload>(p, ctx, dev, ref, lab.tolerance_scale.value_or(1.0));
  };
  registry.implement_all("host_read", BackendKind::cuda, create);
}

}  // namespace labrun::host_read
