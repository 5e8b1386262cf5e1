// The fault test aid's CUDA workloads (tests/aids/fault/fault.hpp).
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdlib>
#include <limits>

#include "cuda_backend.hpp"
#include "fault/fault.hpp"
#include "fault/fault_kernels.cuh"

namespace labrun::fault {

namespace {

class CudaWorkload : public Workload {
 public:
  CudaWorkload(std::string variant, std::int64_t n, std::uint64_t seed, LaunchContext& ctx)
      : variant_(std::move(variant)), host_(inputs(n, seed)), ctx_(ctx) {
    x_ = DeviceBuffer(std::max<std::size_t>(host_.size() * sizeof(float), 16));
    out_ = DeviceBuffer(16);
    LABRUN_CUDA(cudaMemcpy(x_.get(), host_.data(), host_.size() * sizeof(float), cudaMemcpyHostToDevice));
    LABRUN_CUDA(cudaMemset(out_.get(), 0, 16));
  }

  void run() override {
    cudaStream_t s = ctx_.stream();
    if (variant_ == "abort") std::abort();
    if (variant_ == "illegal_address") kernels::illegal_address(s);
    else if (variant_ == "trap") kernels::trap(s);
    else if (variant_ == "hang") kernels::hang(out_.as<int>(), s);  // out_ holds zeros: the flag is never set
    else kernels::sum(x_.as<float>(), static_cast<long long>(host_.size()), out_.as<float>(), s);
    LABRUN_CUDA_LAUNCHED();
  }

  CheckOutcome check(const std::function<void()>& iterate) override {
    iterate();
    float value = std::numeric_limits<float>::quiet_NaN();
    LABRUN_CUDA(cudaStreamSynchronize(ctx_.stream()));
    LABRUN_CUDA(cudaMemcpy(&value, out_.get(), sizeof value, cudaMemcpyDeviceToHost));
    return check_sum(value, host_);
  }

  Cost cost() const override {
    const double n = static_cast<double>(host_.size());
    return Cost::of(4 * n, 4, 4 * n, n, 2, 0);
  }

 private:
  std::string variant_;
  std::vector<float> host_;
  LaunchContext& ctx_;
  DeviceBuffer x_, out_;
};

}  // namespace

void register_cuda(Registry& registry) {
  registry.implement_all("fault", BackendKind::cuda,
                         [](const Point& point, Backend& backend, const LabSettings& lab) -> std::unique_ptr<Workload> {
                           return std::make_unique<CudaWorkload>(point.variant, point.integer("n"), lab.seed,
                                                                 launch_context(backend));
                         });
}

}  // namespace labrun::fault
