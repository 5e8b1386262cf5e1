// The CUDA workloads of the kv_cache experiment. Every buffer is allocated in the constructor (case C12): concat's
// two ping-pong buffers at n1 tokens stand for the fresh tensor torch.cat allocates each step, so an iteration
// moves what cat moves (a full copy per step) without timing an allocator. Each decode step is one kernel on the
// backend's stream; nothing waits on the host, so both variants capture into a graph (n1 − n0 nodes).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "cuda_backend.hpp"
#include "kv_cache/cuda/kv_cache_kernels.cuh"
#include "kv_cache/kv_cache.hpp"
#include "registry.hpp"

namespace labrun::kv_cache {

namespace {

// A point's inputs on the device, generated there from the seed (bit for bit as generate() on the host) and made
// again only when the shape or seed changes (the two variants and two modes of a shape are consecutive).
struct DeviceInputs {
  std::string key;
  DeviceBuffer prefill;  // P [R][n0][D]
  DeviceBuffer tokens;   // T [S][R][D]
};

std::size_t cache_bytes(const Params& p, std::int64_t tokens) {
  return static_cast<std::size_t>(p.rows() * tokens * p.head_dim) * dtype_bytes(p.dtype);
}

class CudaWorkload : public Workload {
 public:
  CudaWorkload(const Params& p, LaunchContext& ctx, std::shared_ptr<DeviceInputs> dev, std::uint64_t seed)
      : p_(p), ctx_(ctx), dev_(std::move(dev)), seed_(seed) {
    const std::size_t cap = std::max<std::size_t>(cache_bytes(p, p.n1), 16);
    a_ = DeviceBuffer(cap);
    if (p.variant == Variant::concat) {
      b_ = DeviceBuffer(cap);
    } else {
      prefill_into_cache();
      LABRUN_CUDA(cudaStreamSynchronize(ctx.stream()));
    }
  }

  void run() override {
    const std::size_t s = dtype_bytes(p_.dtype);
    const std::int64_t rows = p_.rows(), D = p_.head_dim, S = p_.steps();
    const std::size_t token_bytes = static_cast<std::size_t>(p_.token_elements()) * s;
    const auto* tokens = dev_->tokens.as<const char>();
    cudaStream_t st = ctx_.stream();
    if (p_.variant == Variant::concat) {
      for (std::int64_t i = 0; i < S; ++i) {
        const std::int64_t n = p_.n0 + i;  // tokens in the old cache
        const void* old = i == 0 ? dev_->prefill.get() : (i % 2 == 1 ? a_.get() : b_.get());
        void* out = i % 2 == 0 ? a_.get() : b_.get();
        kernels::concat_step(s, old, tokens + i * token_bytes, out, rows, n, D, st);
      }
      // One mark for the whole generation: per-step marks would give the breakdown n1 − n0 entries.
      ctx_.mark("cat_steps", kv_cache::cost(p_).bytes);
      return;
    }
    for (std::int64_t i = 0; i < S; ++i)
      kernels::write_slot(s, tokens + i * token_bytes, a_.get(), rows, p_.n1, p_.n0 + i, D, st);
    ctx_.mark("write_slot_steps", kv_cache::cost(p_).bytes);
  }

  Check check(const std::function<void()>& iterate) override {
    cudaStream_t st = ctx_.stream();
    const std::size_t tok = static_cast<std::size_t>(p_.head_dim) * dtype_bytes(p_.dtype);
    // Poison (0xff bytes: NaN in f32, f16 and bf16) every slot an iteration writes.
    if (p_.variant == Variant::concat) {
      LABRUN_CUDA(cudaMemsetAsync(a_.get(), 0xff, a_.bytes(), st));
      LABRUN_CUDA(cudaMemsetAsync(b_.get(), 0xff, b_.bytes(), st));
    } else if (p_.steps() > 0) {
      LABRUN_CUDA(cudaMemset2DAsync(a_.as<char>() + p_.n0 * tok, p_.n1 * tok, 0xff, p_.steps() * tok,
                                    static_cast<std::size_t>(p_.rows()), st));
    }
    iterate();
    LABRUN_CUDA(cudaStreamSynchronize(st));
    const void* final = a_.get();
    if (p_.variant == Variant::concat) final = p_.steps() == 0 ? dev_->prefill.get() : (p_.steps() % 2 == 1 ? a_.get() : b_.get());
    const std::size_t bytes = cache_bytes(p_, p_.n1);
    std::unique_ptr<std::uint64_t[]> host(new std::uint64_t[bytes / 8 + 1]);
    // Not a variant's sync: read outside the counted path, after the iteration completed.
    if (bytes > 0) LABRUN_CUDA(cudaMemcpy(host.get(), final, bytes, cudaMemcpyDeviceToHost));
    Check c = compare(p_, seed_, host.get());
    c.detail["poisoned"] = p_.steps() > 0;
    return c;
  }

  Cost cost() const override { return kv_cache::cost(p_); }

 private:
  void prefill_into_cache() {
    kernels::copy_rows(dtype_bytes(p_.dtype), dev_->prefill.get(), p_.n0, a_.get(), p_.n1, p_.rows(), p_.n0,
                       p_.head_dim, ctx_.stream());
  }

  Params p_;
  LaunchContext& ctx_;
  std::shared_ptr<DeviceInputs> dev_;
  std::uint64_t seed_;
  DeviceBuffer a_, b_;  // concat: ping-pong at n1 tokens; preallocated: a_ is the cache
};

}  // namespace

void register_cuda(Registry& registry) {
  auto device = std::make_shared<std::shared_ptr<DeviceInputs>>();
  auto create = [device](const Point& point, Backend& backend, const LabSettings& lab) -> std::unique_ptr<Workload> {
    LaunchContext& ctx = launch_context(backend);
    const Params p = params_of(point);
    const std::uint64_t seed = input_seed(p, lab.seed);
    const std::string key = input_key(p) + "/" + std::to_string(seed);
    auto& dev = *device;
    if (!dev || dev->key != key) {
      dev.reset();  // free the old inputs before allocating the new ones
      auto fresh = std::make_shared<DeviceInputs>();
      fresh->key = key;
      fresh->prefill = DeviceBuffer(std::max<std::size_t>(cache_bytes(p, p.n0), 16), MemoryRole::input);
      fresh->tokens = DeviceBuffer(std::max<std::size_t>(cache_bytes(p, p.steps()), 16), MemoryRole::input);
      kernels::generate(format_of(p.dtype), p.rows(), p.n0, p.n1, p.head_dim, seed, fresh->prefill.get(),
                        fresh->tokens.get(), ctx.stream());
      LABRUN_CUDA(cudaStreamSynchronize(ctx.stream()));
      dev = fresh;
    }
    return std::make_unique<CudaWorkload>(p, ctx, dev, seed);
  };
  registry.implement_all("kv_cache", BackendKind::cuda, create);
}

}  // namespace labrun::kv_cache
