// The sync round-trip check (case C23's other face: a process left on the GPU made every round trip take
// milliseconds): a round trip at 3x the run's calibration or more is `slow_sync`. The header's word on the checks
// that could not run without NVML. And the test aid LABRUN_TESTAID_SLOWER's parsing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

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
