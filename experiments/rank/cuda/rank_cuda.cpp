// The CUDA workloads of the rank experiment: one class, dispatching on the variant. Everything an iteration
// needs is allocated in the constructor (case C12), except indexed_assign's arange and index buffers, which an
// eager framework allocates per call from its caching allocator once the host knows the count: here they come
// from the stream-ordered pool (cudaMallocAsync), as masking's `index` does.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "cuda_backend.hpp"
#include "stream_pool.hpp"
#include "rank/cuda/rank_kernels.cuh"
#include "rank/rank.hpp"
#include "registry.hpp"
#include <labrun/status.hpp>

namespace labrun::rank {

namespace {

// Device copy of the host mask, re-uploaded only when the host set changes (variants are innermost).
struct DeviceInputs {
  std::shared_ptr<const Inputs> host;
  DeviceBuffer mask;
};

// Elements per device-to-host copy of the correctness check: 4 Mi int64 (32 MiB), a multiple of kPrefixBlock.
constexpr std::int64_t kCopyChunk = 64 * kPrefixBlock;

std::size_t at_least_16(double bytes) { return std::max<std::size_t>(static_cast<std::size_t>(bytes), 16); }

class CudaWorkload : public Workload {
 public:
  CudaWorkload(const Params& p, LaunchContext& ctx, std::shared_ptr<DeviceInputs> dev)
      : p_(p), ctx_(ctx), dev_(std::move(dev)), pinned_(16) {
    const double n = static_cast<double>(p.n);
    out_ = DeviceBuffer(at_least_16(8 * n));
    switch (p.variant) {
      case Variant::indexed_assign:
        temp_bytes_ = std::max(kernels::count_temp_bytes(p.n), kernels::select_temp_bytes(p.n));
        count_ = DeviceBuffer(sizeof(std::int64_t));
        selected_ = DeviceBuffer(sizeof(std::int64_t));
        caching_ = CachingPool(ctx.device());
        break;
      case Variant::scan_select:
        temp_bytes_ = kernels::scan_temp_bytes(p.n);
        s_ = DeviceBuffer(at_least_16(8 * n));
        select_grid_ = kernels::select_rank_grid(p.n, ctx.sm_count());  // outside any capture
        break;
      case Variant::fused:
        temp_bytes_ = kernels::fused_temp_bytes(p.n);
        break;
    }
    temp_ = DeviceBuffer(temp_bytes_);
  }

  void run() override {
    const std::int64_t n = p_.n;
    const double nn = static_cast<double>(n);
    const int sm = ctx_.sm_count();
    cudaStream_t st = ctx_.stream();
    const auto* mask = dev_->mask.as<std::uint8_t>();
    auto* out = out_.as<std::int64_t>();
    switch (p_.variant) {
      case Variant::indexed_assign: {
        // As eager `out.fill_(-1); out[mask] = torch.arange(mask.sum())` runs: the count sizes arange and the
        // index buffer, so the host must read it (the host synchronization), then allocate, then launch.
        kernels::fill(out, kMaskedOut, n, sm, st);
        ctx_.mark("fill", 8 * nn);
        kernels::count(mask, n, count_.as<std::int64_t>(), temp_.get(), temp_bytes_, st);
        ctx_.mark("count", nn);
        ctx_.read_to_host(pinned_.as<std::int64_t>(), count_.get(), sizeof(std::int64_t));
        ctx_.mark("count_to_host", sizeof(std::int64_t));
        const std::int64_t c = *pinned_.as<std::int64_t>();
        if (c < 0 || c > n) throw std::runtime_error("rank: device count " + std::to_string(c) + " outside [0, n]");
        const double cc = static_cast<double>(c);
        PoolBuffer ar(at_least_16(8 * cc), st), idx(at_least_16(8 * cc), st);
        // The host's wake-up from the sync, the allocations and the next launch: not kernel time.
        ctx_.mark("host_round_trip", 0);
        kernels::arange(ar.as<std::int64_t>(), c, sm, st);
        ctx_.mark("arange", 8 * cc);
        kernels::select_indices(mask, n, idx.as<std::int64_t>(), selected_.as<std::int64_t>(), temp_.get(), temp_bytes_,
                                st);
        ctx_.mark("select", nn + 8 * cc);
        kernels::scatter(out, idx.as<std::int64_t>(), ar.as<std::int64_t>(), c, sm, st);
        ctx_.mark("scatter", 24 * cc);
        break;
      }
      case Variant::scan_select:
        kernels::inclusive_count(mask, n, s_.as<std::int64_t>(), temp_.get(), temp_bytes_, st);
        ctx_.mark("scan", 9 * nn);
        kernels::select_rank(mask, s_.as<std::int64_t>(), out, n, select_grid_, st);
        ctx_.mark("select", 17 * nn);
        break;
      case Variant::fused:
        kernels::fused_rank(mask, n, out, temp_.get(), temp_bytes_, st);
        ctx_.mark("scan", 9 * nn);
        break;
    }
  }

  Check check(const std::function<void()>& iterate) override {
    const std::int64_t n = p_.n;
    cudaStream_t st = ctx_.stream();
    if (n > 0) LABRUN_CUDA(cudaMemsetAsync(out_.get(), 0x5a, static_cast<std::size_t>(n) * 8, st));  // kPoison
    iterate();
    LABRUN_CUDA(cudaStreamSynchronize(st));
    // Not a variant's sync: the output is copied back in chunks through two pinned buffers (the copy of chunk
    // k + 1 overlaps the comparison of chunk k), and every element is compared with the reference.
    Mismatches m;
    if (n > 0) {
      const std::int64_t chunk = std::min(n, kCopyChunk);
      const std::int64_t chunks = (n + kCopyChunk - 1) / kCopyChunk;
      PinnedBuffer staging(static_cast<std::size_t>(2 * chunk) * 8);
      auto slot = [&](std::int64_t k) { return staging.as<std::int64_t>() + (k % 2) * chunk; };
      auto length = [&](std::int64_t k) { return std::min(kCopyChunk, n - k * kCopyChunk); };
      auto copy = [&](std::int64_t k) {
        LABRUN_CUDA(cudaMemcpyAsync(slot(k), out_.as<std::int64_t>() + k * kCopyChunk,
                                    static_cast<std::size_t>(length(k)) * 8, cudaMemcpyDeviceToHost, st));
      };
      copy(0);
      for (std::int64_t k = 0; k < chunks; ++k) {
        LABRUN_CUDA(cudaStreamSynchronize(st));
        if (k + 1 < chunks) copy(k + 1);
        m.merge(compare_slice(*dev_->host, slot(k), k * kCopyChunk, length(k)));
      }
      LABRUN_CUDA(cudaStreamSynchronize(st));
    }
    Check c = check_of(*dev_->host, m);
    c.detail["poisoned"] = true;
    return c;
  }

  Cost cost() const override { return rank::cost(p_, dev_->host->selected); }

 private:
  Params p_;
  LaunchContext& ctx_;
  std::shared_ptr<DeviceInputs> dev_;
  PinnedBuffer pinned_;
  DeviceBuffer out_, s_, temp_, count_, selected_;
  std::size_t temp_bytes_ = 0;
  int select_grid_ = 1;
  CachingPool caching_;  // indexed_assign only; declared last, so it is released after the buffers
};

}  // namespace

void register_cuda(Registry& registry) {
  auto cache = std::make_shared<InputCache>();
  auto device = std::make_shared<std::shared_ptr<DeviceInputs>>();
  auto create = [cache, device](const Point& point, Backend& backend, const LabSettings& lab) -> std::unique_ptr<Workload> {
    LaunchContext& ctx = launch_context(backend);
    const Params p = params_of(point);
    auto in = cache->inputs(p, lab.seed);
    auto& dev = *device;
    if (!dev || dev->host != in) {
      dev.reset();  // free the old device copy before allocating the new one
      auto fresh = std::make_shared<DeviceInputs>();
      fresh->host = in;
      fresh->mask = DeviceBuffer(std::max<std::size_t>(static_cast<std::size_t>(in->n), 16), MemoryRole::input);
      // On the workload's (non-blocking) stream, then waited for: a plain cudaMemcpy from pageable memory may
      // return before its last DMA lands, and the legacy stream does not order the non-blocking one.
      if (in->n > 0) {
        LABRUN_CUDA(cudaMemcpyAsync(fresh->mask.get(), in->mask.data(), static_cast<std::size_t>(in->n),
                                    cudaMemcpyHostToDevice, ctx.stream()));
        LABRUN_CUDA(cudaStreamSynchronize(ctx.stream()));
      }
      dev = fresh;
    }
    return std::make_unique<CudaWorkload>(p, ctx, dev);
  };
  registry.implement_all("rank", BackendKind::cuda, create);
}

}  // namespace labrun::rank
