// The CUDA workloads of the gemv experiment: device copies of A and x (shared by the variants of a point, counted
// as input memory), y and the cuBLAS handle (work memory) allocated in the constructor (case C12), the kernels
// or the cuBLAS call enqueued on the backend's stream in run().
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cuda_backend.hpp"
#include "gemv/cuda/gemv_kernels.cuh"
#include "gemv/gemv.hpp"
#include "registry.hpp"
#include <labrun/status.hpp>

#if __has_include("cublas.hpp")
#include "cublas.hpp"
#define LABRUN_GEMV_HAS_CUBLAS 1
#else
#define LABRUN_GEMV_HAS_CUBLAS 0
#endif

namespace labrun::gemv {

namespace {

// Device copies of a host input set, re-uploaded only when the host set changes (variants are innermost).
struct DeviceInputs {
  std::shared_ptr<const Inputs> host;
  DeviceBuffer a, x;
};

class CudaWorkload : public Workload {
 public:
  CudaWorkload(const Params& p, LaunchContext& ctx, std::shared_ptr<DeviceInputs> dev,
               std::shared_ptr<const Reference> ref, double scale)
      : p_(p), ctx_(ctx), dev_(std::move(dev)), ref_(std::move(ref)), scale_(scale) {
    // Everything an iteration touches is allocated here, before any capture (case C12).
    y_ = DeviceBuffer(std::max<std::size_t>(static_cast<std::size_t>(p.m) * sizeof(float), 16));
    if (p.variant == Variant::cublas) {
#if LABRUN_GEMV_HAS_CUBLAS
      if (!cublas::available())
        throw PointOutcome(Status::not_supported, "cuBLAS cannot be used here: " + cublas::unavailable_reason());
      handle_ = std::make_unique<cublas::Handle>(ctx.stream(), static_cast<std::size_t>(kCublasWorkspaceBytes));
#else
      throw PointOutcome(Status::not_supported, "this build has no labrun::cublas facade (src/device/cublas.hpp)");
#endif
    } else {
      kernels::prepare(p.dtype);  // kernels loaded now, not inside a graph capture
    }
  }

  void run() override {
    cudaStream_t st = ctx_.stream();
    const void* a = dev_->a.get();
    const void* x = dev_->x.get();
    float* y = y_.as<float>();
    const double bytes = gemv::cost(p_).bytes;
    switch (p_.variant) {
      case Variant::row_block_256:
      case Variant::row_block_512:
      case Variant::row_block_1024:
        kernels::row_block(threads_per_row(p_.variant), p_.dtype, a, x, y, p_.m, p_.n, st);
        ctx_.mark(to_string(p_.variant), bytes);
        break;
      case Variant::warp_row:
        kernels::warp_row(p_.dtype, a, x, y, p_.m, p_.n, st);
        ctx_.mark("warp_row", bytes);
        break;
      case Variant::cublas: {
#if LABRUN_GEMV_HAS_CUBLAS
        // Row-major A (m × n) is column-major Aᵀ (n × m, lda = n): y = op(Aᵀ)·x with op = T, a GEMM with
        // m' = m, n' = 1, k = n; f16 (or bf16) A and x, f32 y, f32 compute.
        const auto type = p_.dtype == DType::bf16 ? cublas::Type::bf16 : cublas::Type::f16;
        const int m = static_cast<int>(p_.m), n = static_cast<int>(p_.n);
        handle_->gemm(cublas::Op::t, cublas::Op::n, m, 1, n, 1.0f, a, type, std::max(n, 1), x, type, std::max(n, 1),
                      0.0f, y, cublas::Type::f32, std::max(m, 1));
#endif
        ctx_.mark("cublas_gemm", bytes);
        break;
      }
    }
  }

  Check check(const std::function<void()>& iterate) override {
    kernels::poison(y_.as<float>(), p_.m, ctx_.stream());  // NaN: a row no thread wrote fails (case C07)
    iterate();
    LABRUN_CUDA(cudaStreamSynchronize(ctx_.stream()));
    // Not a variant's sync: read outside the counted path, after the iteration completed.
    std::vector<float> host(static_cast<std::size_t>(p_.m) + 1);
    if (p_.m > 0) LABRUN_CUDA(cudaMemcpy(host.data(), y_.get(), static_cast<std::size_t>(p_.m) * 4, cudaMemcpyDeviceToHost));
    Check c = compare(*dev_->host, host.data(), *ref_, tolerance(p_.variant, p_.n, scale_));
    c.detail["poisoned"] = true;
    if (p_.variant != Variant::cublas) {
      const kernels::Geometry g = kernels::geometry(threads_per_row(p_.variant), p_.m, p_.n);
      c.detail["geometry"] = {{"width", g.width}, {"threads_per_row", g.threads_per_row},
                              {"rows_per_block", g.rows_per_block}, {"block", g.block}, {"grid", g.grid}};
    }
#if LABRUN_GEMV_HAS_CUBLAS
    if (handle_) c.detail["cublas_library"] = handle_->library();
#endif
    return c;
  }

  Cost cost() const override {
    Cost c = gemv::cost(p_);
#if LABRUN_GEMV_HAS_CUBLAS
    if (handle_) c.peak_work_bytes = 4 * static_cast<double>(p_.m) + static_cast<double>(handle_->workspace_bytes());
#endif
    return c;
  }

 private:
  Params p_;
  LaunchContext& ctx_;
  std::shared_ptr<DeviceInputs> dev_;
  std::shared_ptr<const Reference> ref_;
  double scale_;
  DeviceBuffer y_;
#if LABRUN_GEMV_HAS_CUBLAS
  std::unique_ptr<cublas::Handle> handle_;
#endif
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
      fresh->a = DeviceBuffer(std::max<std::size_t>(in->a_bytes(), 16), MemoryRole::input);
      fresh->x = DeviceBuffer(std::max<std::size_t>(in->x_bytes(), 16), MemoryRole::input);
      if (in->a_bytes()) LABRUN_CUDA(cudaMemcpy(fresh->a.get(), in->a.data(), in->a_bytes(), cudaMemcpyHostToDevice));
      if (in->x_bytes()) LABRUN_CUDA(cudaMemcpy(fresh->x.get(), in->x.data(), in->x_bytes(), cudaMemcpyHostToDevice));
      dev = fresh;
    }
    return std::make_unique<CudaWorkload>(p, ctx, dev, ref, lab.tolerance_scale.value_or(1.0));
  };
  registry.implement_all("gemv", BackendKind::cuda, create);
}

}  // namespace labrun::gemv
