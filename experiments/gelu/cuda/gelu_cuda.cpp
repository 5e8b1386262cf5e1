// The CUDA workloads of the gelu experiment: every buffer allocated in the constructor (case C12), the variants'
// kernels enqueued on the backend's stream in run(), each op marked for the kernel breakdown.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "cuda_backend.hpp"
#include "gelu/cuda/gelu_kernels.cuh"
#include "gelu/gelu.hpp"
#include "registry.hpp"

namespace labrun::gelu {

namespace {

// The device copy of a host input set, re-uploaded only when the host set changes (variants are innermost).
struct DeviceInputs {
  std::shared_ptr<const Inputs> host;
  DeviceBuffer x;
};

class CudaWorkload : public Workload {
 public:
  CudaWorkload(const Params& p, LaunchContext& ctx, std::shared_ptr<DeviceInputs> dev,
               std::shared_ptr<const std::vector<double>> ref, double scale)
      : p_(p), ctx_(ctx), dev_(std::move(dev)), ref_(std::move(ref)), scale_(scale) {
    const std::size_t bytes = std::max<std::size_t>(dev_->host->data_bytes(), 16);
    y_ = DeviceBuffer(bytes);
    if (p.variant == Variant::unfused) {  // the two scratch tensors the seven ops alternate between
      a_ = DeviceBuffer(bytes);
      b_ = DeviceBuffer(bytes);
    }
    kernels::prepare(p.dtype);  // occupancy look-ups now, not inside a graph capture
  }

  void run() override {
    const DType t = p_.dtype;
    const std::int64_t n = p_.n;
    const double ns = static_cast<double>(n) * static_cast<double>(dtype_bytes(t));
    const int sm = ctx_.sm_count();
    cudaStream_t st = ctx_.stream();
    const void* x = dev_->x.get();
    switch (p_.variant) {
      case Variant::unfused: {
        using kernels::Op;
        void* a = a_.get();
        void* b = b_.get();
        // As an eager framework runs 0.5*x*(1 + tanh(sqrt(2/pi)*(x + 0.044715*x**3))): seven kernels, each a full
        // read of its inputs and a full write of its output in the storage dtype.
        kernels::unfused_op(Op::pow3, t, x, nullptr, a, n, sm, st);
        ctx_.mark("pow3", 2 * ns);
        kernels::unfused_op(Op::scale_alpha, t, a, nullptr, b, n, sm, st);
        ctx_.mark("scale_alpha", 2 * ns);
        kernels::unfused_op(Op::add, t, x, b, a, n, sm, st);
        ctx_.mark("add_x", 3 * ns);
        kernels::unfused_op(Op::scale_sqrt2pi, t, a, nullptr, b, n, sm, st);
        ctx_.mark("scale_sqrt2pi", 2 * ns);
        kernels::unfused_op(Op::tanh, t, b, nullptr, a, n, sm, st);
        ctx_.mark("tanh", 2 * ns);
        kernels::unfused_op(Op::add_one, t, a, nullptr, b, n, sm, st);
        ctx_.mark("add_one", 2 * ns);
        kernels::unfused_op(Op::mul_half, t, x, b, y_.get(), n, sm, st);
        ctx_.mark("mul_half_x", 3 * ns);
        break;
      }
      case Variant::fused:
        kernels::fused(t, x, y_.get(), n, sm, st);
        ctx_.mark("gelu_scalar", 2 * ns);
        break;
      case Variant::fused_vec:
        kernels::fused_vec(t, x, y_.get(), n, sm, st);
        ctx_.mark("gelu_vec", 2 * ns);
        break;
    }
  }

  Check check(const std::function<void()>& iterate) override {
    // Poison: all-ones bytes are NaN in f32 and in bf16, so an element no thread wrote fails (case C07).
    LABRUN_CUDA(cudaMemsetAsync(y_.get(), 0xff, y_.bytes(), ctx_.stream()));
    iterate();
    LABRUN_CUDA(cudaStreamSynchronize(ctx_.stream()));
    const std::size_t bytes = dev_->host->data_bytes();
    // Uninitialised (no 4 GB memset at n = 2^30): every byte is overwritten by the copy.
    std::unique_ptr<std::uint64_t[]> host(new std::uint64_t[(bytes + 7) / 8 + 1]);
    // Not a variant's sync: read outside the counted path, after the iteration completed.
    if (bytes > 0) LABRUN_CUDA(cudaMemcpy(host.get(), y_.get(), bytes, cudaMemcpyDeviceToHost));
    Check c = compare(p_.variant, *dev_->host, *ref_, host.get(), scale_);
    c.detail["poisoned"] = true;
    return c;
  }

  Cost cost() const override { return gelu::cost(p_); }

 private:
  Params p_;
  LaunchContext& ctx_;
  std::shared_ptr<DeviceInputs> dev_;
  std::shared_ptr<const std::vector<double>> ref_;
  double scale_;
  DeviceBuffer y_, a_, b_;
};

}  // namespace

void register_cuda(Registry& registry) {
  auto cache = std::make_shared<InputCache>();
  auto device = std::make_shared<std::shared_ptr<DeviceInputs>>();
  auto create = [cache, device](const Point& point, Backend& backend, const LabSettings& lab) -> std::unique_ptr<Workload> {
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
      if (in->data_bytes() > 0)
        LABRUN_CUDA(cudaMemcpy(fresh->x.get(), in->data(), in->data_bytes(), cudaMemcpyHostToDevice));
      dev = fresh;
    }
    return std::make_unique<CudaWorkload>(p, ctx, dev, ref, lab.tolerance_scale.value_or(1.0));
  };
  registry.implement_all("gelu", BackendKind::cuda, create);
}

}  // namespace labrun::gelu
