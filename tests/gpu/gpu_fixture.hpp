// The GPU suites' one fixture: the CUDA device opened or the test skipped (reported SKIPPED, never a pass), every
// built-in experiment registered, and lab settings for quick correctness runs with the suite's fresh seed
// (gpu_test_seed.hpp). A suite derives from it and adds its own point builders and checks.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <tuple>

#include <cuda_runtime_api.h>

#include "cuda_backend.hpp"
#include "gpu/gpu_test_seed.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "registry.hpp"

namespace labrun::test {

/// The test aid binary: $LABRUN_TESTAID (set where the binaries travel, scripts/gpu_pack.sh), else the build's.
inline std::string testaid() {
  const char* env = std::getenv("LABRUN_TESTAID");
  return env ? env : LABRUN_TESTAID_BINARY;
}

/// A file of the repository: under LABRUN_SOURCE_DIR where the build ran, else relative to the working directory
/// (the repository root on the GPU machine, where the binaries travel without the build's paths).
inline std::string source_file(const std::string& relative) {
  const std::string built = std::string(LABRUN_SOURCE_DIR) + "/" + relative;
  return std::filesystem::exists(built) ? built : relative;
}

class GpuLabTest : public ::testing::Test {
 protected:
  /// Opens CUDA device 0 or skips; registers the experiments; one warmup iteration, `samples` samples (3 unless a
  /// suite sets quick_samples_ in its constructor), no time floors, the suite's seed.
  void SetUp() override {
    std::string why;
    backend_ = open_cuda_backend(0, &why);
    if (!backend_) GTEST_SKIP() << "no CUDA device: " << why;
    register_builtin(registry_);
    register_cuda_experiments(registry_);
    lab_.seed = test_seed();
    lab_.warmup_iterations = 1;
    lab_.warmup_time_s = 0;
    lab_.min_samples = quick_samples_;
    lab_.max_samples = quick_samples_;
    lab_.min_sample_time_s = 0;
  }
  /// One point through the whole lab pass (run_point) with the fixture's backend and settings.
  Json run_lab(const Point& p) { return run_point(p, *registry_.find(p.experiment), *backend_, lab_); }
  CudaBackend& cuda() { return static_cast<CudaBackend&>(*backend_); }

  /// What the device has in use, in bytes: free memory, the default pool's used memory, the graph memory in use.
  std::tuple<std::size_t, std::uint64_t, std::uint64_t> memory_use() {
    std::size_t free = 0, total = 0;
    EXPECT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
    cudaMemPool_t pool = nullptr;
    EXPECT_EQ(cudaDeviceGetDefaultMemPool(&pool, ctx().device()), cudaSuccess);
    std::uint64_t pool_used = 0, graph_used = 0;
    EXPECT_EQ(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrUsedMemCurrent, &pool_used), cudaSuccess);
    EXPECT_EQ(cudaDeviceGetGraphMemAttribute(ctx().device(), cudaGraphMemAttrUsedMemCurrent, &graph_used), cudaSuccess);
    return {free, pool_used, graph_used};
  }

  /// Case C12: point p's CUDA variant (mode graph), captured and replayed once, then `replays` more replays
  /// allocate nothing: memory_use() is the same before and after them.
  void expect_replays_allocate_nothing(const Point& p, int replays = 20) {
    const RegisteredExperiment& experiment = *registry_.find(p.experiment);
    auto workload = (*experiment.implementation(p.variant, BackendKind::cuda))(p, *backend_, lab_);
    ExecOptions o;
    o.mode = "graph";
    auto exec = backend_->executor(*workload, o);
    exec->iterate();
    exec->wait();
    const auto before = memory_use();
    for (int i = 0; i < replays; ++i) exec->iterate();
    exec->wait();
    EXPECT_EQ(memory_use(), before) << p.experiment << "/" << p.variant << ": a replay allocated device memory";
  }
  LaunchContext& ctx() { return cuda().context(); }

  /// Timing for a judged point: `min_samples` to `max_samples` samples of at least `min_sample_time_s` seconds each,
  /// sampled for at most `max_time_s` seconds.
  void judge_with(std::int64_t min_samples, std::int64_t max_samples, double max_time_s, double min_sample_time_s) {
    lab_.min_samples = min_samples;
    lab_.max_samples = max_samples;
    lab_.max_time_s = max_time_s;
    lab_.min_sample_time_s = min_sample_time_s;
  }

  int quick_samples_ = 3;
  std::unique_ptr<Backend> backend_;
  Registry registry_;
  LabSettings lab_;
};

/// GpuLabTest for suites that run many points: two samples a point and no time limit (lab.max_time_s = 0).
class QuickGpuLabTest : public GpuLabTest {
 protected:
  QuickGpuLabTest() { quick_samples_ = 2; }
  void SetUp() override {
    GpuLabTest::SetUp();
    lab_.max_time_s = 0;
  }
};

}  // namespace labrun::test
