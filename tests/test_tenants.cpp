// Case C23 (docs/cases.md): another process on the device. The tenants NVML lists become device_state's `tenants`
// with labrun's own processes left out (a fake process table stands for NVML and /proc here); a point measured with a
// tenant gets a `shared_device` warning naming it and is suspect (kept out of winners, crossovers and hypotheses);
// diff never compares it and fails on it unless --allow-shared.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "diff.hpp"
#include "interpret.hpp"
#include "lab.hpp"
#include "point_record.hpp"
#include "tenants.hpp"
#include "test_util.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

// A fake host: labrun's worker 300, its supervisor 200 (which holds a context too), their shell 100.
ProcessTable fake_table() {
  ProcessTable t;
  t.self = 300;
  t.parent_of = [](std::int64_t pid) -> std::int64_t {
    static const std::map<std::int64_t, std::int64_t> parents{{300, 200}, {200, 100}, {100, 1}, {4242, 1}, {77, 1}};
    const auto it = parents.find(pid);
    return it == parents.end() ? 0 : it->second;
  };
  t.name_of = [](std::int64_t pid) -> std::string { return pid == 4242 ? "python3" : pid == 300 ? "labrun" : ""; };
  return t;
}

TEST(Tenants, C23_OwnProcessesAreLeftOutAndEachOtherOneIsListedOnce) {
  const std::vector<DeviceProcess> nvml{{300, 1e9, "compute"},
                                        {200, 5e8, "compute"},
                                        {4242, 2.1e9, "compute"},
                                        {4242, std::nullopt, "graphics"},
                                        {77, std::nullopt, "compute"}};
  const Json t = tenants_json(nvml, fake_table());
  ASSERT_EQ(t.size(), 2u) << t;
  EXPECT_EQ(t[0]["pid"], 77);
  EXPECT_TRUE(t[0]["name"].is_null());  // another namespace: /proc has no name for it
  EXPECT_TRUE(t[0]["used_memory_bytes"].is_null());
  EXPECT_EQ(t[1]["pid"], 4242);
  EXPECT_EQ(t[1]["name"], "python3");
  EXPECT_DOUBLE_EQ(t[1]["used_memory_bytes"].get<double>(), 2.1e9);
  EXPECT_EQ(t[1]["kind"], "compute+graphics");
  EXPECT_EQ(tenants_text(t), "pid 77 (name unreadable), pid 4242 (python3, 2.1 GB)");
  EXPECT_TRUE(tenants_json({{300, 1e9, "compute"}, {200, 1e9, "compute"}}, fake_table()).empty());
  EXPECT_EQ(tenants_text("unavailable"), "");
}

// A timed ok point whose device_state lists `tenants` before timing (none after).
PointRecord point_with(const Json& tenants) {
  PointRecord p = test::point_record("x", "exp/v/n=1", Status::ok);
  p.device_state = {{"before", {{"sm_clock_hz", 1.98e9}, {"tenants", tenants}}},
                    {"after", {{"sm_clock_hz", 1.98e9}, {"tenants", Json::array()}}}};
  Timing t;
  t.mode = "eager";
  t.l2 = "hot";
  t.time_s = 1e-4;
  t.wall_samples_s = std::vector<double>(10, 1e-4);
  p.timing = t;
  return p;
}

TEST(Tenants, C23_APointMeasuredBesideAnotherProcessIsWarnedAndSuspect) {
  const Json tenants = tenants_json({{4242, 2.1e9, "compute"}}, fake_table());
  const PointRecord shared = point_with(tenants);
  const DeviceState before = device_state_of(shared, "before");
  EXPECT_TRUE(before.tenants_recorded);
  EXPECT_EQ(before.tenant_count, 1u);
  std::vector<std::string> kinds;
  std::string message;
  for (const Warning& w : point_warnings(shared, test::quick_lab(), std::nullopt)) {
    kinds.push_back(w.kind);
    if (w.kind == "shared_device") message = w.message;
  }
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "shared_device"), kinds.end());
  EXPECT_NE(message.find("before timing: pid 4242 (python3, 2.1 GB)"), std::string::npos) << message;
  const Interpretation in = interpret(shared, RunHeader{Json{{"type", "header"}}});
  EXPECT_TRUE(in.suspect);
  EXPECT_NE(in.suspect_reason.value_or("").find("another process held the device during timing (pid 4242"),
            std::string::npos);
  // Alone on the device (an empty list) or not listed at all (no NVML): no warning, not suspect for it.
  for (const Json& none : {Json::array(), Json("unavailable")}) {
    const PointRecord alone = point_with(none);
    for (const Warning& w : point_warnings(alone, test::quick_lab(), std::nullopt)) EXPECT_NE(w.kind, "shared_device");
    EXPECT_EQ(interpret(alone, RunHeader{Json{{"type", "header"}}}).suspect_reason.value_or("").find("another process"),
              std::string::npos);
  }
  EXPECT_FALSE(device_state_of(point_with("unavailable"), "before").tenants_recorded);
}

Run run_of(const std::vector<PointRecord>& points) {
  Run r{"t.jsonl", RunHeader{Json{{"type", "header"}, {"lab", {{"min_samples", 10}}}}}, true, points, {}};
  return r;
}

TEST(Tenants, C23_DiffNeverComparesASharedPointAndFailsOnItUnlessAllowed) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> noise(std::log(1e-4), 0.01);
  const auto samples = [&] {
    std::vector<double> s(30);
    for (double& x : s) x = noise(rng);
    return s;
  };
  PointRecord alone = point_with(Json::array());
  alone.timing->wall_samples_s = samples();
  PointRecord shared = point_with(tenants_json({{4242, 2.1e9, "compute"}}, fake_table()));
  shared.timing->wall_samples_s = samples();
  for (double& x : shared.timing->wall_samples_s) x *= 0.8;  // looks faster: a tenant must not make a verdict
  DiffOptions o;
  const DiffResult d = diff_results({run_of({alone})}, {run_of({shared})}, o);
  ASSERT_EQ(d.points.size(), 1u);
  EXPECT_EQ(d.points[0].verdict, Verdict::not_compared);
  EXPECT_TRUE(d.points[0].shared);
  EXPECT_NE(d.points[0].reason.value_or("").find("another process held the device: new pid 4242"), std::string::npos)
      << d.points[0].reason.value_or("");
  EXPECT_EQ(d.summary.shared, 1u);
  EXPECT_TRUE(d.regression);  // a tenant cannot hide a regression
  o.allow_shared = true;
  const DiffResult allowed = diff_results({run_of({alone})}, {run_of({shared})}, o);
  EXPECT_EQ(allowed.points[0].verdict, Verdict::not_compared);
  EXPECT_FALSE(allowed.regression);
  EXPECT_NE(diff_table(allowed).find("1 not compared: another process held the device"), std::string::npos)
      << diff_table(allowed);
  // The table shows the point and why, though it was not compared.
  EXPECT_NE(diff_table(d).find("another process held the device: new pid 4242 (python3, 2.1 GB)"), std::string::npos)
      << diff_table(d);
  // The shared side may be the base: the same.
  EXPECT_TRUE(diff_results({run_of({shared})}, {run_of({alone})}, DiffOptions{}).regression);
}

}  // namespace
}  // namespace labrun
