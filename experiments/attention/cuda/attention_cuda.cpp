// The CUDA workloads of the attention experiment: device copies of Q, K, V (shared by the variants of one input
// set), every buffer and the cuBLAS handle created in the constructor (case C12), the kernels and GEMMs enqueued
// on the backend's stream.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "attention/attention.hpp"
#include "attention/cuda/attention_kernels.cuh"
#include "cublas.hpp"
#include "cuda_backend.hpp"
#include "registry.hpp"
#include <labrun/status.hpp>

namespace labrun::attention {

namespace {

constexpr float kLog2e = 1.44269504088896340736f;

struct DeviceInputs {
  std::shared_ptr<const Inputs> host;
  DeviceBuffer q, k, v;
};

class CudaWorkload : public Workload {
 public:
  CudaWorkload(const Params& p, LaunchContext& ctx, std::shared_ptr<DeviceInputs> dev,
               std::shared_ptr<const Reference> ref, double scale)
      : p_(p), ctx_(ctx), dev_(std::move(dev)), ref_(std::move(ref)), tol_scale_(scale) {
    out_bytes_ = dev_->host->tensor_bytes();
    o_ = DeviceBuffer(out_bytes_);
    if (p.variant == Variant::tiled) {
      kernels::prepare(p.head_dim);
      return;
    }
    if (!cublas::available()) throw PointOutcome(Status::not_supported, "cuBLAS: " + cublas::unavailable_reason());
    const std::size_t score_bytes = static_cast<std::size_t>(p.score_elements()) * kScoreBytes;
    scores_ = DeviceBuffer(score_bytes);
    if (p.variant == Variant::naive_out_of_place) filled_ = DeviceBuffer(score_bytes);
    blas_ = std::make_unique<cublas::Handle>(ctx.stream(), kWorkspaceBytes);
  }

  void run() override {
    cudaStream_t st = ctx_.stream();
    const std::int64_t bh = p_.bh(), s = p_.seq;
    const int d = p_.head_dim;
    const double e2 = 2.0 * static_cast<double>(p_.elements());
    const double ps = p_.score_elements() * kScoreBytes, p2 = p_.score_elements() * 2;
    if (p_.variant == Variant::tiled) {
      kernels::flash_forward(dev_->q.get(), dev_->k.get(), dev_->v.get(), o_.get(), bh, s, d, p_.causal,
                             p_.scale() * kLog2e, st);
      ctx_.mark("flash_forward", 4 * e2);
      return;
    }
    using cublas::Op;
    using cublas::Type;
    const int si = static_cast<int>(s);
    const long long sd = static_cast<long long>(s) * d, ss = static_cast<long long>(s) * s;
    // Row-major scores[i][j] = q_i . k_j is the column-major S x S matrix K Q^T (K^T op, ld D).
    blas_->gemm_strided_batched(Op::t, Op::n, si, si, d, 1.0f, dev_->k.get(), Type::bf16, d, sd, dev_->q.get(),
                                Type::bf16, d, sd, 0.0f, scores_.get(), Type::f32, si, ss, static_cast<int>(bh));
    ctx_.mark("qk_gemm", 2 * e2 + ps);
    float* probs = scores_.as<float>();
    if (p_.variant == Variant::naive_out_of_place) {
      kernels::scale_mask(scores_.as<float>(), scores_.as<float>(), bh, s, p_.scale(), false, st);
      ctx_.mark("scale", 2 * ps);
      kernels::scale_mask(scores_.as<float>(), filled_.as<float>(), bh, s, 1.0f, p_.causal, st);
      ctx_.mark("mask_fill_copy", 2 * ps);
      probs = filled_.as<float>();
    } else {
      kernels::scale_mask(scores_.as<float>(), scores_.as<float>(), bh, s, p_.scale(), p_.causal, st);
      ctx_.mark("scale_mask", 2 * ps);
    }
    kernels::softmax_rows(probs, bh, s, st);
    ctx_.mark("softmax", ps + p2);
    // P is bf16 over the score rows (row stride 2 S elements); O^T = V^T P^T column-major: m = D, n = S, k = S.
    blas_->gemm_strided_batched(Op::n, Op::n, d, si, si, 1.0f, dev_->v.get(), Type::bf16, d, sd, probs, Type::bf16,
                                2 * si, 2 * ss, 0.0f, o_.get(), Type::bf16, d, sd, static_cast<int>(bh));
    ctx_.mark("pv_gemm", p2 + 2 * e2);
  }

  Check check(const std::function<void()>& iterate) override {
    kernels::poison(o_.get(), out_bytes_, ctx_.stream());
    iterate();
    // Not a variant's sync: read outside the counted path, after the iteration completed.
    std::vector<std::uint16_t> host(out_bytes_ / 2);
    LABRUN_CUDA(cudaStreamSynchronize(ctx_.stream()));
    LABRUN_CUDA(cudaMemcpy(host.data(), o_.get(), out_bytes_, cudaMemcpyDeviceToHost));
    Check c = compare(*dev_->host, host.data(), *ref_, tolerance(p_, tol_scale_));
    c.detail["poisoned"] = true;
    if (blas_) c.detail["cublas"] = blas_->library();
    return c;
  }

  Cost cost() const override {
    return attention::cost(p_, blas_ ? blas_->workspace_bytes() : kWorkspaceBytes);
  }

 private:
  Params p_;
  LaunchContext& ctx_;
  std::shared_ptr<DeviceInputs> dev_;
  std::shared_ptr<const Reference> ref_;
  double tol_scale_;
  std::size_t out_bytes_ = 0;
  DeviceBuffer o_, scores_, filled_;
  std::unique_ptr<cublas::Handle> blas_;
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
      const std::size_t bytes = in->tensor_bytes();
      fresh->q = DeviceBuffer(bytes, MemoryRole::input);
      fresh->k = DeviceBuffer(bytes, MemoryRole::input);
      fresh->v = DeviceBuffer(bytes, MemoryRole::input);
      LABRUN_CUDA(cudaMemcpy(fresh->q.get(), in->q.data(), bytes, cudaMemcpyHostToDevice));
      LABRUN_CUDA(cudaMemcpy(fresh->k.get(), in->k.data(), bytes, cudaMemcpyHostToDevice));
      LABRUN_CUDA(cudaMemcpy(fresh->v.get(), in->v.data(), bytes, cudaMemcpyHostToDevice));
      dev = fresh;
    }
    return std::make_unique<CudaWorkload>(p, ctx, dev, ref, lab.tolerance_scale.value_or(1.0));
  };
  registry.implement_all("attention", BackendKind::cuda, create);
}

}  // namespace labrun::attention
