// GPU tests of the host_read experiment (CTest label `gpu`, suite HostReadGpu). Each test skips, reported as
// SKIPPED, when no CUDA device can be opened. Seeds are fresh per run (printed; LABRUN_TEST_SEED reproduces).
// What they establish:
//  - both variants at n with and without a block tail, n = 0 and k = 0 (case C04), match the float64 reference at
//    every step (the SDK's elementwise check of the "loss" output: correctness.value is the worst step's loss,
//    detail.worst_ratio its error over its bound); accumulate_on_device's graph replays give the eager losses bit
//    for bit (fixed grid, fixed order);
//  - item_per_step in a graph ends capture_unsupported with the CUDA error's name (a host read cannot be
//    captured), the finding, unless k = 0 (nothing to read);
//  - case C09: host syncs per iteration are k for item_per_step and 1 for eager accumulate_on_device, 0 in a graph;
//    item_per_step is timed live with a host probe per sample, and its wall time exceeds its device time;
//  - at n = 1e3, k = 100 accumulating on the device is faster (printed; asserted loosely).
#include <gtest/gtest.h>

#include "gpu/gpu_fixture.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>

#include "cuda_backend.hpp"
#include "host_read/host_read.hpp"
#include "lab.hpp"
#include "record.hpp"

namespace labrun {
namespace {

using test::test_seed;

class HostReadGpu : public test::GpuLabTest {
 protected:
  Json run(const std::string& variant, std::int64_t steps, std::int64_t n, const std::string& mode) {
    Point p{"host_read", variant, {{"steps", steps}, {"n", n}, {"mode", mode}, {"l2", std::string("hot")}}};
    return run_lab(p);
  }
};

TEST_F(HostReadGpu, EveryVariantMatchesTheReference_C04) {
  for (std::int64_t n : {0, 1, 255, 257, 1000, 1000003})
    for (std::int64_t k : {0, 1, 9, 100}) {
      SCOPED_TRACE("n=" + std::to_string(n) + " k=" + std::to_string(k));
      const Json item = run("item_per_step", k, n, "eager");
      ASSERT_EQ(item["status"], "ok") << item.dump();
      EXPECT_TRUE(item["correctness"]["passed"].get<bool>()) << item["correctness"].dump();
      EXPECT_EQ(real_from_json(item["timing"]["host_syncs_per_iteration"]), static_cast<double>(k));
      const Json acc = run("accumulate_on_device", k, n, "eager");
      ASSERT_EQ(acc["status"], "ok") << acc.dump();
      EXPECT_TRUE(acc["correctness"]["passed"].get<bool>()) << acc["correctness"].dump();
      EXPECT_EQ(real_from_json(acc["timing"]["host_syncs_per_iteration"]), k > 0 ? 1.0 : 0.0);
      EXPECT_EQ(item["correctness"]["detail"]["compared"].get<std::int64_t>(), k);
      EXPECT_EQ(acc["correctness"]["detail"]["mismatches"].get<std::int64_t>(), 0);
      // Same kernels, same grid: the two variants' losses are the same bits, so their checks agree exactly.
      EXPECT_EQ(real_from_json(item["correctness"]["value"]), real_from_json(acc["correctness"]["value"]));
      EXPECT_EQ(real_from_json(item["correctness"]["detail"]["worst_ratio"]),
                real_from_json(acc["correctness"]["detail"]["worst_ratio"]));
      if (n == 0) {
        EXPECT_EQ(real_from_json(acc["correctness"]["value"]), 0.0);
        EXPECT_EQ(real_from_json(acc["correctness"]["detail"]["worst_ratio"]), 0.0);
      }
      const Json graph = run("accumulate_on_device", k, n, "graph");
      ASSERT_EQ(graph["status"], "ok") << graph.dump();
      EXPECT_EQ(real_from_json(graph["correctness"]["value"]), real_from_json(acc["correctness"]["value"]));
      EXPECT_EQ(real_from_json(graph["correctness"]["detail"]["worst_ratio"]),
                real_from_json(acc["correctness"]["detail"]["worst_ratio"]));
      EXPECT_EQ(real_from_json(graph["timing"]["host_syncs_per_iteration"]), 0.0);
      if (k > 0) {
        EXPECT_EQ(graph["phases"]["warmup"]["mode_setup"]["graph_nodes"].get<std::int64_t>(), 2 * k + 1);
      }
      const Json item_graph = run("item_per_step", k, n, "graph");
      if (k == 0) {
        EXPECT_EQ(item_graph["status"], "ok") << item_graph.dump();
      } else {
        EXPECT_EQ(item_graph["status"], "capture_unsupported") << item_graph.dump();
        EXPECT_NE(item_graph["reason"].get<std::string>().find("cudaErrorStreamCapture"), std::string::npos)
            << item_graph["reason"];
      }
    }
}

// Case C09: item_per_step waits on the host k times per iteration; timed live (no blocking kernel), each sample
// followed by a host probe; the host's share shows as wall > device. Eager accumulate_on_device syncs once.
TEST_F(HostReadGpu, C09_SyncsCountedAndWallExceedsDevice) {
  lab_.min_samples = lab_.max_samples = 10;
  const Json item = run("item_per_step", 100, 1000, "eager");
  ASSERT_EQ(item["status"], "ok") << item.dump();
  EXPECT_EQ(real_from_json(item["timing"]["host_syncs_per_iteration"]), 100.0);
  EXPECT_EQ(real_from_json(item["cost"]["host_syncs"]), 100.0);
  ASSERT_EQ(item["timing"]["host_probe_samples_s"].size(), 10u);
  const double wall = real_from_json(item["timing"]["wall"]["median_time_s"]);
  const double device = real_from_json(item["timing"]["device"]["median_time_s"]);
  EXPECT_GE(wall, device);
  const double probe = real_from_json(item["timing"]["host_probe"]["median_time_s"]);
  const Json acc = run("accumulate_on_device", 100, 1000, "eager");
  ASSERT_EQ(acc["status"], "ok") << acc.dump();
  EXPECT_EQ(real_from_json(acc["timing"]["host_syncs_per_iteration"]), 1.0);
  const Json graph = run("accumulate_on_device", 100, 1000, "graph");
  ASSERT_EQ(graph["status"], "ok") << graph.dump();
  const double t_item = real_from_json(item["timing"]["time_s"]), t_acc = real_from_json(acc["timing"]["time_s"]);
  const double t_graph = real_from_json(graph["timing"]["time_s"]);
  std::printf(
      "n=1e3 k=100: item_per_step %.1f us per step (wall %.1f, device %.1f; host probe %.1f us per round "
      "trip), accumulate_on_device eager %.1f us per step, graph %.1f us per step\n",
      t_item / 100 * 1e6, wall / 100 * 1e6, device / 100 * 1e6, probe * 1e6, t_acc / 100 * 1e6, t_graph / 100 * 1e6);
  EXPECT_GT(t_item, 1.2 * t_acc);
}

}  // namespace
}  // namespace labrun
