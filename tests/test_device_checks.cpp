// Kernel time (docs/metrics.md "Kernel time"): the event and launch floor taken out of a blocked point's device time,
// from the run's calibration; pooled over processes, each with its own floor. The sync round-trip check (case C23's
// other face: a process left on the GPU made every round trip take milliseconds): a round trip at 3x the run's
// calibration or more is `slow_sync`. And the test aid LABRUN_TESTAID_SLOWER's parsing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab.hpp"
#include "point_record.hpp"
#include "processes.hpp"
#include "record.hpp"
#include "stats.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

// A header whose calibration.launch has the floors (seconds): one queued empty kernel between the events, the GPU
// side of one launch in a long queue, a graph node.
Json calibrated(double one_s, double queued_s, double graph_s, double sync_s = 1e-5) {
  return Json{
      {"type", "header"},
      {"created_utc", "t"},
      {"lab", Json::object()},
      {"environment", {{"device", {{"l2_bytes", 50e6}}}}},
      {"calibration",
       {{"launch", {{"one_queued_time_s", one_s}, {"eager_queued_time_s", queued_s}, {"graph_time_s", graph_s}}},
        {"sync", {{"round_trip_time_s", sync_s}}}}}};
}

TEST(KernelTime, TheFloorIsTheEventPairsShareAndEachLaunchsGpuSide) {
  const RunHeader h = header_from_json(calibrated(2.0e-6, 1.5e-6, 0.5e-6));
  // Eager, one kernel, one iteration a sample (a cold point): the whole of one queued empty kernel between events.
  EXPECT_NEAR(kernel_floor_s(h, "eager", 1, 1), 2.0e-6, 1e-15);
  // Eager, 3 launches, 100 iterations a sample: the pair's 0.5 us shared by 100, then 3 launches each.
  EXPECT_NEAR(kernel_floor_s(h, "eager", 3, 100), 0.5e-6 / 100 + 3 * 1.5e-6, 1e-15);
  // Graph of 4 nodes: the replay's launch, then 3 more nodes at the graph's per-node cost.
  EXPECT_NEAR(kernel_floor_s(h, "graph", 4, 10), 0.5e-6 / 10 + 1.5e-6 + 3 * 0.5e-6, 1e-15);
  // Not known: no launches, no calibration (the host backend, an older run), no graph figure for a graph point.
  EXPECT_TRUE(std::isnan(kernel_floor_s(h, "eager", std::nan(""), 1)));
  EXPECT_TRUE(std::isnan(kernel_floor_s(header_from_json(Json{{"type", "header"}}), "eager", 1, 1)));
  EXPECT_TRUE(std::isnan(kernel_floor_s(header_from_json(calibrated(2e-6, 1.5e-6, std::nan(""))), "graph", 2, 1)));
}

TEST(KernelTime, KernelTimeIsTheDeviceMedianLessTheFloorAndWrittenBesideIt) {
  Timing t;
  t.device = TimeSummary::of(summarize({10e-6, 11e-6, 12e-6}));
  set_kernel_time(t, 1.5e-6);
  EXPECT_NEAR(t.kernel_time_s, 11e-6 - 1.5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(t.floor_time_s, 1.5e-6);
  const Json j = to_json(t);
  EXPECT_NEAR(real_from_json(j["kernel_time_s"]), 9.5e-6, 1e-15);
  EXPECT_DOUBLE_EQ(timing_from_json(j).floor_time_s, 1.5e-6);
  // A floor at or above the median says nothing of the kernels: no kernel time (no key), the floor kept.
  set_kernel_time(t, 20e-6);
  EXPECT_TRUE(std::isnan(t.kernel_time_s));
  EXPECT_FALSE(to_json(t).contains("kernel_time_s"));
  // Without a floor (live samples, no calibration) neither key is written.
  set_kernel_time(t, std::nan(""));
  EXPECT_FALSE(to_json(t).contains("kernel_time_s"));
  EXPECT_FALSE(to_json(t).contains("floor_time_s"));
}

// A blocked ok point of process k with `samples` (seconds per iteration) and its own floor.
Json blocked_point(const std::vector<double>& samples, double floor_s) {
  Json s = Json::array();
  for (double x : samples) s.push_back(json_real(x));
  Json timing = {{"mode", "eager"},
                 {"l2", "hot"},
                 {"method", "cuda_events_blocked+synchronized_wall"},
                 {"stop_reason", "ci_target"},
                 {"host_syncs_per_iteration", 0.0},
                 {"time_s", json_real(summarize(samples).median)},
                 {"wall_samples_s", s},
                 {"device_samples_s", s},
                 {"submit_samples_s", s},
                 {"floor_time_s", floor_s}};
  return Json{{"type", "point"},   {"id", "a"},
              {"key", "e/v/a"},    {"experiment", "e"},
              {"variant", "v"},    {"status", "ok"},
              {"reason", nullptr}, {"cost", {{"bytes", 1e6}, {"launches", 1}}},
              {"timing", timing},  {"warnings", Json::array()}};
}

TEST(KernelTime, APooledPointTakesTheMedianOfItsProcessesFloors) {
  std::vector<labrun::Run> runs;
  const double floors[] = {1.2e-6, 1.4e-6, 1.3e-6};
  for (double f : floors) {
    labrun::Run r;
    r.header = header_from_json(calibrated(2e-6, f, 0.5e-6));
    r.has_header = true;
    r.points.push_back(point_from_json(blocked_point({10e-6, 10e-6, 10e-6}, f)));
    runs.push_back(r);
  }
  const labrun::Run pooled = pool_processes(runs, Json::array(), LabSettings{});
  ASSERT_EQ(pooled.points.size(), 1u);
  const Timing& t = *pooled.points[0].timing;
  EXPECT_DOUBLE_EQ(t.floor_time_s, 1.3e-6);
  EXPECT_NEAR(t.kernel_time_s, 10e-6 - 1.3e-6, 1e-15);
}

// A point whose host sync round trip read `before_s` and `after_s` seconds.
PointRecord with_round_trips(double before_s, double after_s) {
  PointRecord p;
  p.id = "x";
  p.key = "e/v/n=1";
  p.status = Status::ok;
  p.device_state = {{"before", {{"sm_clock_hz", 1.98e9}, {"sync_round_trip_time_s", before_s}}},
                    {"after", {{"sm_clock_hz", 1.98e9}, {"sync_round_trip_time_s", after_s}}}};
  return p;
}

std::string slow_sync_message(const PointRecord& p, double calibrated_s) {
  for (const Warning& w : point_warnings(p, test::quick_lab(), std::nullopt, calibrated_s))
    if (w.kind == "slow_sync") return w.message;
  return "";
}

TEST(SlowSync, C23_ARoundTripAtThreeTimesTheCalibrationIsSaid) {
  EXPECT_DOUBLE_EQ(device_state_of(with_round_trips(12e-6, 11e-6), "before").sync_round_trip_time_s, 12e-6);
  // The case: 10-12 us calibrated, 1.2-2.4 ms while a process was left on the GPU.
  const std::string m = slow_sync_message(with_round_trips(11e-6, 1.8e-3), 11e-6);
  EXPECT_NE(m.find("after timing"), std::string::npos) << m;
  EXPECT_NE(m.find("163.6x"), std::string::npos) << m;
  EXPECT_NE(slow_sync_message(with_round_trips(33e-6, 10e-6), 11e-6).find("before timing"), std::string::npos);
  // Below 3x, or nothing to hold it to (no calibration, no round trip recorded): not said.
  EXPECT_EQ(slow_sync_message(with_round_trips(32e-6, 20e-6), 11e-6), "");
  EXPECT_EQ(slow_sync_message(with_round_trips(1e-3, 1e-3), std::nan("")), "");
  EXPECT_EQ(slow_sync_message(with_round_trips(std::nan(""), std::nan("")), 11e-6), "");
}

TEST(SlowerAid, ParsesVariantAndShareAndRefusesAnythingElse) {
  ::unsetenv("LABRUN_TESTAID_SLOWER");
  EXPECT_FALSE(slower_aid().has_value());
  ::setenv("LABRUN_TESTAID_SLOWER", "where:0.1", 1);
  ASSERT_TRUE(slower_aid().has_value());
  EXPECT_EQ(slower_aid()->variant, "where");
  EXPECT_DOUBLE_EQ(slower_aid()->share, 0.1);
  for (const char* bad : {"where", "where:", ":0.1", "where:0", "where:1.5", "where:0.1x"}) {
    ::setenv("LABRUN_TESTAID_SLOWER", bad, 1);
    EXPECT_THROW(slower_aid(), std::invalid_argument) << bad;
  }
  ::unsetenv("LABRUN_TESTAID_SLOWER");
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// Without NVML (or with one that cannot list processes) the header says which device checks do not run.
TEST(UncheckedDevice, C23_TheHeaderSaysWhichChecksDidNotRun) {
  const Json host = {{"kind", "host"}};
  EXPECT_TRUE(unchecked_device(host).empty());
  const Json full = {{"kind", "cuda"}, {"nvml", "available"}, {"state_at_start", {{"tenants", Json::array()}}}};
  EXPECT_TRUE(unchecked_device(full).empty());
  const std::vector<Warning> none = unchecked_device({{"kind", "cuda"}, {"nvml", "libnvidia-ml.so.1 not found"}});
  ASSERT_EQ(none.size(), 1u);
  EXPECT_EQ(none[0].kind, "nvml");
  EXPECT_NE(none[0].message.find("libnvidia-ml.so.1 not found"), std::string::npos);
  EXPECT_NE(none[0].message.find("another process on the device (case C23)"), std::string::npos);
  EXPECT_NE(none[0].message.find("sync round-trip check does"), std::string::npos);
  const std::vector<Warning> unlisted = unchecked_device(
      {{"kind", "cuda"}, {"nvml", "available"}, {"state_at_start", {{"tenants", "unavailable"}}}});
  ASSERT_EQ(unlisted.size(), 1u);
  EXPECT_NE(unlisted[0].message.find("cannot list the processes"), std::string::npos);
}

}  // namespace
}  // namespace labrun
