#include <cuda_runtime_api.h>

#include <cstring>
#include <limits>
#include <utility>

#include "cuda_backend.hpp"
#include "stream_pool.hpp"
#include "masking/cuda/masking_kernels.cuh"
#include "masking/masking.hpp"
#include "registry.hpp"
#include <labrun/status.hpp>

namespace labrun::masking {

namespace {

// A point's inputs on the device, made again only when the inputs' key changes (variants are innermost):
// generated on the device from the seed (f32, f64), else copied from the host's generate().
struct DeviceInputs {
  std::string key;            ///< input key and seed (InputCache)
  std::int64_t selected = 0;  ///< elements the mask selects
  DeviceBuffer data, mask;
};

class CudaWorkload : public Workload {
 public:
  CudaWorkload(const Params& p, LaunchContext& ctx, std::shared_ptr<DeviceInputs> dev, const Reference& ref,
               double scale)
      : p_(p), ctx_(ctx), dev_(std::move(dev)), ref_(ref), scale_(scale), pinned_(16) {
    const std::size_t n = static_cast<std::size_t>(p.n);
    const std::size_t s = dtype_bytes(p.dtype);
    // Everything an iteration needs is allocated here, before any capture (case C12). Only `index`
    // allocates per iteration, from the stream-ordered pool, as an eager framework does.
    if (p.variant != Variant::fused && p.variant != Variant::index) tmp_ = DeviceBuffer(std::max<std::size_t>(n * s, 16));
    if (p.variant == Variant::index_device_count) sel_ = DeviceBuffer(std::max<std::size_t>(n * s, 16));
    temp_bytes_ = kernels::sum_temp_bytes(p.dtype, p.n);
    if (p.variant == Variant::index || p.variant == Variant::index_device_count)
      temp_bytes_ = std::max(temp_bytes_, kernels::select_temp_bytes(p.dtype, p.n));
    if (p.variant == Variant::index) caching_ = CachingPool(ctx.device());
    temp_ = DeviceBuffer(temp_bytes_);
    count_ = DeviceBuffer(sizeof(std::int64_t));
    result_ = DeviceBuffer(sizeof(double));
    partials_ = DeviceBuffer(kernels::partials_bytes(p.dtype, ctx.sm_count()));
  }

  void run() override {
    const DType t = p_.dtype;
    const std::int64_t n = p_.n;
    const double s = static_cast<double>(dtype_bytes(t));
    const double nn = static_cast<double>(n);
    const double m = static_cast<double>(dev_->selected);
    const int sm = ctx_.sm_count();
    cudaStream_t st = ctx_.stream();
    const void* d = dev_->data.get();
    const auto* mask = dev_->mask.as<std::uint8_t>();
    auto downstream = [&](void* buf, std::int64_t count, const std::int64_t* dcount, double elems) {
      for (int r = 0; r < p_.downstream; ++r) {
        kernels::downstream(t, buf, count, dcount, sm, st);
        ctx_.mark("downstream", 2 * elems * s);
      }
    };
    switch (p_.variant) {
      case Variant::multiply:
        kernels::square(t, d, tmp_.get(), n, nullptr, sm, st);
        ctx_.mark("square", 2 * nn * s);
        downstream(tmp_.get(), n, nullptr, nn);
        kernels::mask_multiply(t, tmp_.get(), mask, n, sm, st);
        ctx_.mark("mask_multiply", 2 * nn * s + nn);
        kernels::sum(t, tmp_.get(), n, result_.get(), temp_.get(), temp_bytes_, st);
        ctx_.mark("sum", nn * s);
        break;
      case Variant::where:
        kernels::square(t, d, tmp_.get(), n, nullptr, sm, st);
        ctx_.mark("square", 2 * nn * s);
        downstream(tmp_.get(), n, nullptr, nn);
        kernels::where_zero(t, tmp_.get(), mask, tmp_.get(), n, sm, st);
        ctx_.mark("where", 2 * nn * s + nn);
        kernels::sum(t, tmp_.get(), n, result_.get(), temp_.get(), temp_bytes_, st);
        ctx_.mark("sum", nn * s);
        break;
      case Variant::sanitize:
        kernels::where_zero(t, d, mask, tmp_.get(), n, sm, st);
        ctx_.mark("where", 2 * nn * s + nn);
        kernels::square(t, tmp_.get(), tmp_.get(), n, nullptr, sm, st);
        ctx_.mark("square", 2 * nn * s);
        downstream(tmp_.get(), n, nullptr, nn);
        kernels::sum(t, tmp_.get(), n, result_.get(), temp_.get(), temp_bytes_, st);
        ctx_.mark("sum", nn * s);
        break;
      case Variant::index: {
        // As an eager framework runs d[mask]: compaction into a pool buffer, the count read by the host to size
        // the result (the host synchronization), then the ops over the count.
        PoolBuffer sel(std::max<std::size_t>(static_cast<std::size_t>(n) * dtype_bytes(t), 16), st);
        kernels::select_flagged(t, d, mask, sel.get(), count_.as<std::int64_t>(), n, temp_.get(), temp_bytes_, st);
        ctx_.mark("select", nn * s + nn + m * s);
        ctx_.read_to_host(pinned_.as<std::int64_t>(), count_.get(), sizeof(std::int64_t));
        ctx_.mark("count_to_host", sizeof(std::int64_t));
        const std::int64_t count = *pinned_.as<std::int64_t>();
        PoolBuffer sq(std::max<std::size_t>(static_cast<std::size_t>(count) * dtype_bytes(t), 16), st);
        // The host's wake-up from the sync, the allocation and the next launch: not kernel time.
        ctx_.mark("host_round_trip", 0);
        kernels::square(t, sel.get(), sq.get(), count, nullptr, sm, st);
        ctx_.mark("square", 2 * m * s);
        downstream(sq.get(), count, nullptr, m);
        kernels::sum(t, sq.get(), count, result_.get(), temp_.get(), temp_bytes_, st);
        ctx_.mark("sum", m * s);
        break;
      }
      case Variant::index_device_count: {
        auto* dcount = count_.as<std::int64_t>();
        kernels::select_flagged(t, d, mask, sel_.get(), dcount, n, temp_.get(), temp_bytes_, st);
        ctx_.mark("select", nn * s + nn + m * s);
        kernels::square(t, sel_.get(), tmp_.get(), n, dcount, sm, st);
        ctx_.mark("square", 2 * m * s);
        downstream(tmp_.get(), n, dcount, m);
        kernels::sum_device_count(t, tmp_.get(), n, dcount, partials_.get(), result_.get(), sm, st);
        ctx_.mark("sum", m * s);
        break;
      }
      case Variant::fused:
        kernels::fused(t, d, mask, n, p_.downstream, partials_.get(), result_.get(), sm, st);
        ctx_.mark("fused", nn * s + nn);
        break;
    }
  }

  Check check(const std::function<void()>& iterate) override {
    kernels::poison_result(p_.dtype, result_.get(), ctx_.stream());
    iterate();
    // Not a variant's sync: read outside the counted path, after the iteration completed.
    LABRUN_CUDA(cudaMemcpyAsync(pinned_.as<char>() + 8, result_.get(), 8, cudaMemcpyDeviceToHost, ctx_.stream()));
    LABRUN_CUDA(cudaStreamSynchronize(ctx_.stream()));
    double value;
    if (p_.dtype == DType::f64) {
      std::memcpy(&value, pinned_.as<char>() + 8, 8);
    } else {
      float f;
      std::memcpy(&f, pinned_.as<char>() + 8, 4);
      value = f;
    }
    Check c = compare(value, ref_, tolerance(p_, ref_, scale_));
    c.detail["poisoned"] = true;
    return c;
  }

  Cost cost() const override { return masking::cost(p_, dev_->selected); }

 private:
  Params p_;
  LaunchContext& ctx_;
  std::shared_ptr<DeviceInputs> dev_;
  Reference ref_;
  double scale_;
  PinnedBuffer pinned_;
  DeviceBuffer tmp_, sel_, temp_, count_, result_, partials_;
  std::size_t temp_bytes_ = 0;
  CachingPool caching_;  // index only; declared last, so it is released after the buffers
};

}  // namespace

void register_cuda(Registry& registry) {
  auto cache = std::make_shared<InputCache>();
  auto device = std::make_shared<std::shared_ptr<DeviceInputs>>();
  auto create = [cache, device](const Point& point, Backend& backend, const LabSettings& lab) -> std::unique_ptr<Workload> {
    LaunchContext& ctx = launch_context(backend);
    const Params p = params_of(point);
    // The reference first: from another process's cache entry it needs no host inputs (reference_cache.hpp).
    const Reference& ref = cache->reference_for(p, lab.seed);
    const std::uint64_t seed = input_seed(p, lab.seed);
    const std::string key = input_key(p) + "/" + std::to_string(seed);
    auto& dev = *device;
    if (!dev || dev->key != key) {
      dev.reset();  // free the old device copy before allocating the new one
      auto fresh = std::make_shared<DeviceInputs>();
      fresh->key = key;
      fresh->selected = ref.selected;
      const std::size_t n = static_cast<std::size_t>(p.n);
      fresh->data = DeviceBuffer(std::max<std::size_t>(n * dtype_bytes(p.dtype), 16), MemoryRole::input);
      fresh->mask = DeviceBuffer(std::max<std::size_t>(n, 16), MemoryRole::input);
      if (kernels::can_generate(p.dtype)) {
        kernels::generate(p.dtype, p.n, p.density, p.nonfinite, seed, fresh->data.get(),
                          static_cast<std::uint8_t*>(fresh->mask.get()), ctx.sm_count(), ctx.stream());
        LABRUN_CUDA(cudaStreamSynchronize(ctx.stream()));
      } else {
        auto in = cache->inputs(p, lab.seed);
        LABRUN_CUDA(cudaMemcpy(fresh->data.get(), in->data(), in->data_bytes(), cudaMemcpyHostToDevice));
        LABRUN_CUDA(cudaMemcpy(fresh->mask.get(), in->mask.data(), n, cudaMemcpyHostToDevice));
      }
      dev = fresh;
    }
    return std::make_unique<CudaWorkload>(p, ctx, dev, ref, lab.tolerance_scale.value_or(1.0));
  };
  registry.implement_all("masking", BackendKind::cuda, create);
}

}  // namespace labrun::masking
