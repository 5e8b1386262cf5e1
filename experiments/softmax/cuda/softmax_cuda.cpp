// The CUDA workloads of the softmax experiment: device copies of the inputs (shared by the variants of a point),
// every buffer allocated in the constructor (case C12), the kernels launched on the backend's stream.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "cuda_backend.hpp"
#include "registry.hpp"
#include "softmax/cuda/softmax_kernels.cuh"
#include "softmax/softmax.hpp"

namespace labrun::softmax {

namespace {

// Device copy of the host inputs, re-uploaded only when the host set changes (variants are innermost).
struct DeviceInputs {
  std::shared_ptr<const Inputs> host;
  DeviceBuffer x;
};

class CudaWorkload : public Workload {
 public:
  CudaWorkload(const Params& p, LaunchContext& ctx, std::shared_ptr<DeviceInputs> dev,
               std::shared_ptr<const Reference> ref, double scale)
      : p_(p), ctx_(ctx), dev_(std::move(dev)), ref_(std::move(ref)), scale_(scale) {
    const std::size_t bytes = dev_->host->data_bytes();
    const std::size_t row_bytes = static_cast<std::size_t>(p.rows) * dtype_bytes(p.dtype);
    // Everything an iteration touches is allocated here, before any capture (case C12).
    y_ = DeviceBuffer(std::max<std::size_t>(bytes, 16));
    if (p.variant == Variant::unfused) {
      e_ = DeviceBuffer(std::max<std::size_t>(bytes, 16));
      m_ = DeviceBuffer(std::max<std::size_t>(row_bytes, 16));
      s_ = DeviceBuffer(std::max<std::size_t>(row_bytes, 16));
    }
    // The launch geometry (and the kernels' occupancy, which loads them) is settled before any capture too.
    const int sm = ctx.sm_count();
    if (p.variant == Variant::unfused) {
      (void)kernels::reduce_geometry(p.dtype, p.rows, p.cols, sm);
      (void)kernels::map_grid(p.dtype, p.rows, p.cols, sm);
    } else {
      (void)kernels::fused_geometry(algo(), p.dtype, p.rows, p.cols, sm);
    }
  }

  void run() override {
    const DType t = p_.dtype;
    const std::int64_t rows = p_.rows, cols = p_.cols;
    const double n = static_cast<double>(p_.elements()), s = static_cast<double>(dtype_bytes(t));
    const double r = static_cast<double>(rows);
    const int sm = ctx_.sm_count();
    cudaStream_t st = ctx_.stream();
    const void* x = dev_->x.get();
    switch (p_.variant) {
      case Variant::unfused:
        kernels::rowmax(t, x, m_.get(), rows, cols, sm, st);
        ctx_.mark("rowmax", n * s + r * s);
        kernels::exp_sub(t, x, m_.get(), e_.get(), rows, cols, sm, st);
        ctx_.mark("exp_sub", 2 * n * s + r * s);
        kernels::rowsum(t, e_.get(), s_.get(), rows, cols, sm, st);
        ctx_.mark("rowsum", n * s + r * s);
        kernels::divide(t, e_.get(), s_.get(), y_.get(), rows, cols, sm, st);
        ctx_.mark("divide", 2 * n * s + r * s);
        break;
      case Variant::two_pass:
      case Variant::online: {
        const Cost c = softmax::cost(p_);
        kernels::fused(algo(), t, x, y_.get(), rows, cols, sm, st);
        ctx_.mark(p_.variant == Variant::two_pass ? "two_pass" : "online", c.bytes);
        break;
      }
    }
  }

  Check check(const std::function<void()>& iterate) override {
    const std::size_t bytes = dev_->host->data_bytes();
    kernels::poison(y_.get(), bytes, ctx_.stream());
    iterate();
    // Not a variant's sync: read outside the counted path, after the iteration completed.
    std::vector<std::uint64_t> host((bytes + 7) / 8);
    LABRUN_CUDA(cudaStreamSynchronize(ctx_.stream()));
    if (bytes) LABRUN_CUDA(cudaMemcpy(host.data(), y_.get(), bytes, cudaMemcpyDeviceToHost));
    Check c = compare(*dev_->host, host.data(), *ref_, tolerance(p_.variant, p_.dtype, p_.cols, scale_));
    c.detail["poisoned"] = true;
    const kernels::Geometry g =
        p_.variant == Variant::unfused ? kernels::reduce_geometry(p_.dtype, p_.rows, p_.cols, ctx_.sm_count())
                                       : kernels::fused_geometry(algo(), p_.dtype, p_.rows, p_.cols, ctx_.sm_count());
    c.detail["geometry"] = {{"width", g.width},           {"threads_per_row", g.threads_per_row},
                            {"rows_per_block", g.rows_per_block}, {"block", g.block},
                            {"grid", g.grid},             {"on_chip", g.on_chip}};
    return c;
  }

  Cost cost() const override { return softmax::cost(p_); }

 private:
  kernels::Fused algo() const {
    return p_.variant == Variant::online ? kernels::Fused::online : kernels::Fused::two_pass;
  }

  Params p_;
  LaunchContext& ctx_;
  std::shared_ptr<DeviceInputs> dev_;
  std::shared_ptr<const Reference> ref_;
  double scale_;
  DeviceBuffer y_, e_, m_, s_;
};

}  // namespace

void register_cuda(Registry& registry) {
  auto cache = std::make_shared<InputCache>();
  auto device = std::make_shared<std::shared_ptr<DeviceInputs>>();
  auto create = [cache, device](const Point& point, Backend& backend,
                                const LabSettings& lab) -> std::unique_ptr<Workload> {
    LaunchContext& ctx = launch_context(backend);
    const Params p = params_of(point);
    auto in = cache->inputs(p, lab.seed);
    auto ref = cache->reference_for(p, lab.seed);
    auto& dev = *device;
    if (!dev || dev->host != in) {
      dev.reset();  // free the old device copy before allocating the new one
      auto fresh = std::make_shared<DeviceInputs>();
      fresh->host = in;
      fresh->x = DeviceBuffer(std::max<std::size_t>(in->data_bytes(), 16), MemoryRole::input);
      if (in->data_bytes())
        LABRUN_CUDA(cudaMemcpy(fresh->x.get(), in->data(), in->data_bytes(), cudaMemcpyHostToDevice));
      dev = fresh;
    }
    return std::make_unique<CudaWorkload>(p, ctx, dev, ref, lab.tolerance_scale.value_or(1.0));
  };
  registry.implement_all("softmax", BackendKind::cuda, create);
}

}  // namespace labrun::softmax
