// GPU tests (CTest label `gpu`). Each test skips, reported as SKIPPED, when no CUDA device can be opened.
// Inputs are drawn with a fresh seed per run (printed; set LABRUN_TEST_SEED to reproduce).
#include <gtest/gtest.h>

#include "gpu/gpu_fixture.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <random>
#include <tuple>

#include "calibration.cuh"
#include "cuda_backend.hpp"
#include "lab.hpp"
#include "masking/cuda/masking_kernels.cuh"
#include "masking/masking.hpp"
#include "record.hpp"
#include "stats.hpp"

namespace labrun {
namespace {

using test::test_seed;

class Gpu : public test::GpuLabTest {
 protected:
  Json run(const std::string& variant, std::int64_t n, double density, const std::string& dtype,
           const std::string& mode, std::int64_t downstream = 0, const std::string& nonfinite = "none") {
    Point p{"masking",
            variant,
            {{"n", n},
             {"density", density},
             {"dtype", dtype},
             {"mode", mode},
             {"downstream", downstream},
             {"nonfinite", nonfinite}}};
    return run_lab(p);
  }
};

const char* kVariants[] = {"multiply", "index", "where", "sanitize", "index_device_count", "fused"};
const char* kDtypes[] = {"f32", "f16", "bf16", "f64"};

// Every variant x dtype x mode x N x density against the host double reference (C04 at n = 0), and graph
// replays give bit-identical results to eager runs (same kernels, deterministic reductions).
TEST_F(Gpu, AllVariantsMatchReferenceAndGraphEqualsEager) {
  for (const char* v : kVariants)
    for (const char* dt : kDtypes)
      for (std::int64_t n : {0, 1, 31, 4097, 1000003})
        for (double density : {0.0, 0.001, 0.5, 1.0})
          for (std::int64_t k : {0, 2}) {
            SCOPED_TRACE(std::string(v) + " " + dt + " n=" + std::to_string(n) + " density=" + std::to_string(density) +
                         " k=" + std::to_string(k));
            const Json eager = run(v, n, density, dt, "eager", k);
            ASSERT_EQ(eager["status"], "ok") << eager.dump();
            EXPECT_TRUE(eager["correctness"]["passed"].get<bool>());
            const Json graph = run(v, n, density, dt, "graph", k);
            if (std::string(v) == "index") {
              EXPECT_EQ(graph["status"], "capture_unsupported");
              continue;
            }
            ASSERT_EQ(graph["status"], "ok") << graph.dump();
            EXPECT_EQ(real_from_json(graph["correctness"]["value"]), real_from_json(eager["correctness"]["value"]));
            if (n == 0) EXPECT_EQ(real_from_json(eager["correctness"]["value"]), 0.0);  // case C04
          }
}

// Case C05: 20000 f16 values of 2.0, all selected: 80000 > 65504, exact when accumulated in f32.
TEST_F(Gpu, C05_HalfSumAccumulatesInFloat) {
  const std::int64_t n = 20000;
  std::vector<std::uint16_t> data(n, 0x4000);  // binary16 2.0
  std::vector<std::uint8_t> mask(n, 1);
  DeviceBuffer d(n * 2), m(n), tmp(n * 2), out(8), count(8);
  const int sm = cuda().context().sm_count();
  DeviceBuffer partials(masking::kernels::partials_bytes(DType::f16, sm));
  cudaStream_t s = cuda().context().stream();
  ASSERT_EQ(cudaMemcpy(d.get(), data.data(), n * 2, cudaMemcpyHostToDevice), cudaSuccess);
  ASSERT_EQ(cudaMemcpy(m.get(), mask.data(), n, cudaMemcpyHostToDevice), cudaSuccess);
  // A pageable copy may still be in flight on the legacy stream, which the kernels' stream does not wait for.
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  auto read = [&] {
    float f = 0;
    EXPECT_EQ(cudaStreamSynchronize(s), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(&f, out.get(), 4, cudaMemcpyDeviceToHost), cudaSuccess);
    return f;
  };
  masking::kernels::fused(DType::f16, d.get(), m.as<std::uint8_t>(), n, 0, partials.get(), out.get(), sm, s);
  EXPECT_EQ(read(), 80000.0f);
  const std::size_t temp_bytes = masking::kernels::sum_temp_bytes(DType::f16, n);
  DeviceBuffer temp(temp_bytes);
  masking::kernels::square(DType::f16, d.get(), tmp.get(), n, nullptr, sm, s);
  masking::kernels::sum(DType::f16, tmp.get(), n, out.get(), temp.get(), temp_bytes, s);
  EXPECT_EQ(read(), 80000.0f);
  masking::kernels::sum_device_count(DType::f16, tmp.get(), n, nullptr, partials.get(), out.get(), sm, s);
  EXPECT_EQ(read(), 80000.0f);
}

// Case C06 on the GPU: inf/NaN only in masked-out slots. multiply is incorrect (0 * inf), the others exact.
TEST_F(Gpu, C06_NonFiniteInMaskedOutSlots) {
  for (const char* dt : kDtypes)
    for (const char* v : kVariants) {
      SCOPED_TRACE(std::string(v) + " " + dt);
      const Json r = run(v, 1024, 0.5, dt, "eager", 0, "masked_out");
      if (std::string(v) == "multiply") {
        EXPECT_EQ(r["status"], "incorrect");
        EXPECT_TRUE(std::isnan(real_from_json(r["correctness"]["value"])));  // case C07: NaN never passes
      } else {
        EXPECT_EQ(r["status"], "ok") << r.dump();
      }
    }
}

// Case C08: a ~2 ms kernel on the non-blocking stream: event time within 10% of synchronized wall time.
TEST_F(Gpu, C08_EventsOnTheLaunchStream) {
  LaunchContext& ctx = cuda().context();
  lab_kernels::spin(0.002, ctx.stream());
  ASSERT_EQ(cudaStreamSynchronize(ctx.stream()), cudaSuccess);
  for (int i = 0; i < 5; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    ctx.sample_start().record(ctx.stream());
    lab_kernels::spin(0.002, ctx.stream());
    ctx.sample_stop().record(ctx.stream());
    ctx.sample_stop().synchronize();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double dev = ctx.sample_stop().seconds_since(ctx.sample_start());
    EXPECT_GT(dev, 0.0019);
    EXPECT_NEAR(dev, wall, 0.1 * wall);
  }
}

// A workload whose iteration is a 20 µs spin kernel after 1 ms of host work: live, the host paces the GPU;
// queued behind the blocking kernel, the events time the GPU's 20 µs and the host's millisecond is the
// submission time.
class HostPacedWorkload : public Workload {
 public:
  explicit HostPacedWorkload(LaunchContext& ctx) : ctx_(ctx) {}
  void run() override {
    const auto t0 = std::chrono::steady_clock::now();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::microseconds(1000)) {
    }
    lab_kernels::spin(20e-6, ctx_.stream());
  }
  CheckOutcome check(const std::function<void()>&) override { return CheckOutcome{}; }
  Cost cost() const override {
    Cost c;
    c.launches = 1;
    c.host_syncs = 0;
    return c;
  }

 private:
  LaunchContext& ctx_;
};

TEST_F(Gpu, BlockingKernelSeparatesGpuTimeFromHostSubmission) {
  HostPacedWorkload w(cuda().context());
  for (const bool blocking : {true, false}) {
    ExecOptions o;
    o.blocking = blocking;
    auto exec = backend_->executor(w, o);
    exec->iterate();
    exec->wait();
    const Sample s = exec->sample(8);
    ASSERT_EQ(s.iterations, 8);
    const double gpu = *s.device_time_s / 8;
    if (blocking) {
      ASSERT_TRUE(s.submit_time_s.has_value());
      EXPECT_FALSE(s.host_probe_time_s.has_value());
      EXPECT_NEAR(gpu, 20e-6, 5e-6) << "GPU time of 8 queued 20 us spins";
      EXPECT_GT(*s.submit_time_s / 8, 0.9e-3);
      EXPECT_GT(s.wall_time_s, *s.submit_time_s + *s.device_time_s * 0.9);
    } else {
      EXPECT_FALSE(s.submit_time_s.has_value());
      EXPECT_GT(gpu, 0.9e-3) << "live, the events span the host's work between launches";
      ASSERT_TRUE(s.host_probe_time_s.has_value()) << "a live sample is followed by a host probe";
      // A sync round trip: at least an empty kernel's launch and completion, far below the 1 ms host pace.
      EXPECT_GT(*s.host_probe_time_s, 1e-6);
      EXPECT_LT(*s.host_probe_time_s, 0.5e-3);
    }
  }
}

// Case C10: the cold-L2 flush (plain reads of a 2 x L2 buffer) evicts a 32 MB working set. One plain-load read
// of the 32 MB is timed right after a read of the same buffer (hot: served by L2) and right after the flush
// (cold: from DRAM). 32 MB at the ~4.3 TB/s DRAM read rate is ~7.5 µs, far above launch-latency noise.
TEST_F(Gpu, C10_ColdL2FlushEvictsAnL2ResidentBuffer) {
  LaunchContext& ctx = cuda().context();
  int l2 = 0;
  ASSERT_EQ(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ctx.device()), cudaSuccess);
  const std::size_t bytes = 32u << 20, flush_bytes = (2 * static_cast<std::size_t>(l2) + 15) / 16 * 16;
  ASSERT_LT(bytes, static_cast<std::size_t>(l2));
  DeviceBuffer data(bytes), flush(flush_bytes),
      sink(static_cast<std::size_t>(lab_kernels::read_stream_sink_words(ctx.sm_count())) * 4);
  ASSERT_EQ(cudaMemsetAsync(data.get(), 1, bytes, ctx.stream()), cudaSuccess);
  ASSERT_EQ(cudaMemsetAsync(flush.get(), 2, flush_bytes, ctx.stream()), cudaSuccess);
  auto read_after = [&](const DeviceBuffer& before) {
    std::vector<double> t;
    for (int i = 0; i < 15; ++i) {
      lab_kernels::l2_flush(before.get(), before.bytes(), sink.as<unsigned int>(), ctx.sm_count(), ctx.stream());
      ctx.sample_start().record(ctx.stream());
      lab_kernels::l2_flush(data.get(), bytes, sink.as<unsigned int>(), ctx.sm_count(), ctx.stream());
      ctx.sample_stop().record(ctx.stream());
      ctx.sample_stop().synchronize();
      t.push_back(ctx.sample_stop().seconds_since(ctx.sample_start()));
    }
    return summarize(t).median;
  };
  const double hot = read_after(data), cold = read_after(flush);
  std::printf("32 MB read: hot %.2f us (%.2f TB/s), after the flush %.2f us (%.2f TB/s)\n", hot * 1e6,
              bytes / hot / 1e12, cold * 1e6, bytes / cold / 1e12);
  EXPECT_GT(cold, 1.3 * hot);
}

// Case C12: CUB's temporary storage is sized and allocated before capture, so replays allocate nothing: the
// device's free memory, the default pool's used memory and the graph memory in use are the same before and after
// 20 replays of every capturable variant.
TEST_F(Gpu, C12_GraphReplaysDoNotAllocate) {
  for (const char* v : {"multiply", "where", "sanitize", "index_device_count", "fused"}) {
    SCOPED_TRACE(v);
    const Point p{"masking",
                  v,
                  {{"n", std::int64_t{1000000}},
                   {"density", 0.5},
                   {"dtype", std::string("f32")},
                   {"mode", std::string("graph")},
                   {"downstream", std::int64_t{0}},
                   {"nonfinite", std::string("none")}}};
    expect_replays_allocate_nothing(p);
  }
}

// Case C09: eager index synchronizes with the host every iteration and its wall time exceeds device time;
// index_device_count in a graph never does.
TEST_F(Gpu, C09_HostSyncsAreCounted) {
  lab_.min_samples = lab_.max_samples = 10;
  const Json index = run("index", 1000000, 0.5, "f32", "eager");
  ASSERT_EQ(index["status"], "ok");
  EXPECT_GE(real_from_json(index["timing"]["host_syncs_per_iteration"]), 1.0);
  EXPECT_GT(real_from_json(index["timing"]["wall"]["median_time_s"]),
            real_from_json(index["timing"]["device"]["median_time_s"]));
  // Timed live, so every sample carries the host probe; index waits on at least one such round trip.
  ASSERT_EQ(index["timing"]["host_probe_samples_s"].size(), 10u);
  const double probe = real_from_json(index["timing"]["host_probe"]["median_time_s"]);
  std::printf("eager index n=1e6: %.2f us per iteration, host probe %.2f us per sync round trip\n",
              real_from_json(index["timing"]["time_s"]) * 1e6, probe * 1e6);
  EXPECT_GT(probe, 1e-6);
  EXPECT_LT(probe, real_from_json(index["timing"]["wall"]["median_time_s"]));
  const Json dc = run("index_device_count", 1000000, 0.5, "f32", "graph");
  ASSERT_EQ(dc["status"], "ok");
  EXPECT_EQ(real_from_json(dc["timing"]["host_syncs_per_iteration"]), 0.0);
  EXPECT_TRUE(dc["timing"]["host_probe"].is_null()) << "graph replays are queued blocked: no probe";
}

// Cases C11 and C13: a capture that hits a host sync is recorded as capture_unsupported with the CUDA error
// name, and the next point captures and times normally (> 0).
TEST_F(Gpu, C11_CaptureFailureIsContained_C13_GraphTimed) {
  const Json bad = run("index", 100000, 0.5, "f32", "graph");
  EXPECT_EQ(bad["status"], "capture_unsupported");
  EXPECT_NE(bad["reason"].get<std::string>().find("cudaErrorStreamCapture"), std::string::npos) << bad["reason"];
  const Json good = run("fused", 100000, 0.5, "f32", "graph");
  ASSERT_EQ(good["status"], "ok") << good.dump();
  EXPECT_GT(real_from_json(good["timing"]["device"]["median_time_s"]), 0.0);
  EXPECT_GT(good["phases"]["warmup"]["mode_setup"]["graph_nodes"].get<int>(), 0);
}

// The environment record has real values and the calibration measures positive ceilings.
TEST_F(Gpu, EnvironmentAndCalibration) {
  const Json env = backend_->environment();
  EXPECT_GT(env["sm_count"].get<int>(), 0);
  EXPECT_GT(env["memory_bytes"].get<std::int64_t>(), 0);
  EXPECT_FALSE(env["name"].get<std::string>().empty());
  const Json cal = backend_->calibrate();
  EXPECT_GT(cal["copy"]["bandwidth_Bps"].get<double>(), 1e11);
  EXPECT_GT(cal["read"]["bandwidth_Bps"].get<double>(), 1e11);
  EXPECT_GT(cal["launch"]["eager_time_s"].get<double>(), 0.0);
  EXPECT_GT(cal["launch"]["eager_queued_time_s"].get<double>(), 0.0);
  // The floors of kernel time (docs/metrics.md "Kernel time"): one queued empty kernel between the events costs more
  // than the events alone, and both are microseconds.
  EXPECT_GT(cal["launch"]["one_queued_time_s"].get<double>(), cal["launch"]["event_pair_time_s"].get<double>());
  EXPECT_LT(cal["launch"]["one_queued_time_s"].get<double>(), 50e-6);
  // The host sync round trip at start, and as every point's device state reads it (case C23's slow_sync).
  const double sync = cal["sync"]["round_trip_time_s"].get<double>();
  EXPECT_GT(sync, 1e-6);
  EXPECT_LT(sync, 1e-3);
  const Json state = backend_->device_state();
  EXPECT_GT(state["sync_round_trip_time_s"].get<double>(), 1e-6);
  EXPECT_LT(state["sync_round_trip_time_s"].get<double>(), 1e-3);
}

// The test aid LABRUN_TESTAID_SLOWER's hook: a delay added to an eager executor lengthens every later iteration's GPU
// time by at least the delay (a spin kernel, plus its launch).
TEST_F(Gpu, AddedDelayLengthensEveryIteration) {
  HostPacedWorkload w(cuda().context());
  ExecOptions o;
  auto exec = backend_->executor(w, o);
  exec->iterate();
  exec->wait();
  const double before = *exec->sample(8).device_time_s / 8;
  ASSERT_TRUE(exec->add_delay(10e-6));
  const double after = *exec->sample(8).device_time_s / 8;
  EXPECT_GT(after - before, 10e-6) << before << " s then " << after << " s";
  EXPECT_LT(after - before, 20e-6) << before << " s then " << after << " s";
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// Inputs generated on the device from the seed equal the host's generate() bit for bit (f32, f64), mask included,
// with and without planted non-finite values: the host reference of a point then holds for its device inputs
// without a host-to-device copy (issue 14).
TEST(GpuGenerate, DeviceInputsEqualTheHostsBitForBit) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) GTEST_SKIP() << "no CUDA device";
  for (const DType t : {DType::f32, DType::f64})
    for (const std::int64_t n : {std::int64_t{1}, std::int64_t{1000}, std::int64_t{1234567}})
      for (const double density : {0.0, 0.3, 1.0})
        for (const bool nonfinite : {false, true}) {
          const std::uint64_t seed = test_seed() ^ static_cast<std::uint64_t>(n);
          const std::size_t bytes = static_cast<std::size_t>(n) * dtype_bytes(t);
          std::vector<std::uint64_t> host((bytes + 7) / 8 + 1);
          std::vector<std::uint8_t> host_mask(static_cast<std::size_t>(n));
          masking::generate(View{host.data(), n, Elem::of(t)}, View{host_mask.data(), n, Elem::raw<std::uint8_t>()},
                            density, nonfinite, seed);
          void* data = nullptr;
          std::uint8_t* mask = nullptr;
          ASSERT_EQ(cudaMalloc(&data, bytes), cudaSuccess);
          ASSERT_EQ(cudaMalloc(reinterpret_cast<void**>(&mask), static_cast<std::size_t>(n)), cudaSuccess);
          masking::kernels::generate(t, n, density, nonfinite, seed, data, mask, 132, nullptr);
          std::vector<unsigned char> d(bytes), m(static_cast<std::size_t>(n));
          ASSERT_EQ(cudaMemcpy(d.data(), data, bytes, cudaMemcpyDeviceToHost), cudaSuccess);
          ASSERT_EQ(cudaMemcpy(m.data(), mask, m.size(), cudaMemcpyDeviceToHost), cudaSuccess);
          cudaFree(data);
          cudaFree(mask);
          EXPECT_EQ(std::memcmp(d.data(), host.data(), bytes), 0)
              << to_string(t) << " n " << n << " density " << density << " nonfinite " << nonfinite;
          EXPECT_EQ(std::memcmp(m.data(), host_mask.data(), m.size()), 0) << "mask, n " << n;
        }
  EXPECT_FALSE(masking::kernels::can_generate(DType::bf16));
  EXPECT_THROW(masking::kernels::generate(DType::f16, 1, 0.5, false, 1, nullptr, nullptr, 132, nullptr),
               std::invalid_argument);
}

}  // namespace
}  // namespace labrun
