// The lab pass with a mock backend: phase order, adaptive sampling stops (target, sample cap, time cap) and
// why, warnings, and that a failing point never stops a sweep.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "lab.hpp"
#include "record.hpp"
#include "test_util.hpp"
#include <labrun/status.hpp>

namespace labrun {
namespace {

// Everything the mock sees, in order.
struct Log {
  std::vector<std::string> calls;
};

class MockWorkload : public Workload {
 public:
  MockWorkload(Log& log, bool correct, bool throws) : log_(log), correct_(correct), throws_(throws) {}
  void run() override {
    if (throws_) throw std::runtime_error("kernel exploded");
    log_.calls.push_back("run");
  }
  CheckOutcome check(const std::function<void()>& iterate) override {
    log_.calls.push_back("check");
    iterate();
    CheckResult r;  // one scalar against its reference, as Compare::scalar makes it
    r.kind = "scalar";
    r.array = "result";
    r.compared = 1;
    r.worst_index = 0;
    r.worst_value = correct_ ? 1.0 : 2.0;
    r.worst_reference = 1.0;
    r.worst_bound = 1e-6;
    r.max_abs_error = std::fabs(r.worst_value - r.worst_reference);
    r.worst = r.max_abs_error / r.worst_bound;
    r.passed = correct_;
    r.mismatches = correct_ ? 0 : 1;
    CheckOutcome c;
    c.comparisons = {r};
    return c;
  }
  Cost cost() const override {
    Cost c;
    c.bytes = 1e6;
    c.compulsory_bytes = 1e6;
    c.flop = 2e6;
    return c;
  }

 private:
  Log& log_;
  bool correct_, throws_;
};

// Device time of sample i comes from `timeline(i)`; wall time is 10% above it.
class MockExecutor : public Executor {
 public:
  MockExecutor(Workload& w, Log& log, std::function<double(int)> timeline, std::optional<double> submit,
               std::int64_t cap, std::optional<double> probe = std::nullopt)
      : w_(w), log_(log), timeline_(timeline), submit_(submit), cap_(cap), probe_(probe) {}
  void iterate() override { w_.run(); }
  void wait() override {}
  // With submit_, a blocked sample as the CUDA backend takes it: at most cap_ iterations, enqueue time apart.
  Sample sample(std::int64_t batch) override {
    log_.calls.push_back("sample");
    Sample s;
    s.iterations = cap_ > 0 ? std::min(batch, cap_) : batch;
    const auto b = static_cast<double>(s.iterations);
    s.device_time_s = timeline_(samples_++) * b;
    s.wall_time_s = *s.device_time_s * 1.1;
    if (submit_) {
      s.submit_time_s = *submit_ * b;
      s.wall_time_s = *s.device_time_s + *s.submit_time_s;
    } else if (probe_) {
      s.host_probe_time_s =
          *probe_ * (1 + 0.01 * (samples_ - 1));  // +1% per sample  // per round trip, never scaled by the batch
    }
    return s;
  }

 private:
  Workload& w_;
  Log& log_;
  std::function<double(int)> timeline_;
  std::optional<double> submit_;
  std::int64_t cap_;
  std::optional<double> probe_;
  int samples_ = 0;
};

class MockBackend : public Backend {
 public:
  MockBackend(Log& log, std::function<double(int)> timeline) : log_(log), timeline_(std::move(timeline)) {}
  BackendKind kind() const override { return BackendKind::host; }
  std::string name() const override { return "mock"; }
  Json environment() override { return Json::object(); }
  Json calibrate() override { return Json::object(); }
  std::optional<std::string> mode_unsupported(const std::string&) const override { return std::nullopt; }
  std::unique_ptr<Executor> executor(Workload& w, const ExecOptions& options) override {
    log_.calls.push_back("executor");
    blocking_ = options.blocking;
    return std::make_unique<MockExecutor>(w, log_, timeline_, options.blocking ? submit_ : std::nullopt, cap_, probe_);
  }
  Json device_state() override { return state_; }
  std::optional<double> cache_bytes() const override { return cache_; }
  Json state_ = nullptr;
  std::optional<double> cache_;
  std::optional<double> submit_;  // per-iteration enqueue time of blocked samples
  std::int64_t cap_ = 0;          // iterations a sample may time (0: as asked)
  std::optional<double> probe_;   // host probe of live samples, seconds per round trip (the first sample's)
  bool blocking_ = false;         // what the lab asked of the last executor

 private:
  Log& log_;
  std::function<double(int)> timeline_;
};

// Built by hand, not through Registry::add: its one axis is the lab's own `mode`.
RegisteredExperiment mock_experiment(Log& log) {
  auto def = std::make_shared<ExperimentDef>("mock");
  for (const char* v : {"good", "wrong", "throws", "gpu_only"}) def->variant(v, "");
  RegisteredExperiment e;
  e.def = def;
  e.axes = {{"mode", AxisKind::Word, "", {}, {}, {"eager"}, std::string("eager")}};
  auto make = [&log](bool correct, bool throws) {
    return [&log, correct, throws](const Point&, Backend&, const LabSettings&) -> std::unique_ptr<Workload> {
      log.calls.push_back("setup");
      return std::make_unique<MockWorkload>(log, correct, throws);
    };
  };
  e.implementations["good"][BackendKind::host] = make(true, false);
  e.implementations["wrong"][BackendKind::host] = make(false, false);
  e.implementations["throws"][BackendKind::host] = make(true, true);
  return e;
}

Point point(const std::string& variant) { return Point{"mock", variant, {{"mode", std::string("eager")}}}; }

// Enough samples for the CI-target stop to be seen (test::quick_lab takes two at most).
LabSettings quick_lab() {
  LabSettings lab = test::quick_lab();
  lab.warmup_iterations = 2;
  lab.min_samples = 10;
  lab.max_samples = 50;
  lab.max_time_s = 60;
  return lab;
}

TEST(Lab, PhasesRunInOrderAndStopAtTheCiTarget) {
  Log log;
  MockBackend backend(log, [](int) { return 1e-3; });  // no noise: the CI collapses at once
  const RegisteredExperiment e = mock_experiment(log);
  const Json r = run_point(point("good"), e, backend, quick_lab());
  EXPECT_EQ(r["status"], "ok");
  const std::vector<std::string> head(log.calls.begin(), log.calls.begin() + 6);
  EXPECT_EQ(head, (std::vector<std::string>{"setup", "executor", "run", "run", "check", "run"}));
  EXPECT_EQ(log.calls.back(), "sample");
  EXPECT_EQ(r["timing"]["stop_reason"], "ci_target");
  EXPECT_EQ(r["timing"]["device"]["count"], 10);  // never fewer than min_samples
  EXPECT_DOUBLE_EQ(real_from_json(r["timing"]["time_s"]), 1e-3);
  EXPECT_DOUBLE_EQ(r["interpretation"]["achieved_bandwidth_Bps"].get<double>(), 1e9);
  EXPECT_EQ(r["warnings"].size(), 0u);
  for (const Phase phase : kPhases) EXPECT_TRUE(r["phases"].contains(to_string(phase))) << to_string(phase);
}

// Warmup ends at steady state (two consecutive chunks of at least min_sample_time_s agree within
// warmup_tolerance, after warmup_iterations), else at warmup_time_s; with warmup_time_s 0 after the minimum
// iterations. Tolerances are wide or impossible so that a loaded machine cannot flip the outcome.
TEST(Lab, WarmupStopsAtSteadyStateOrAtItsTimeCap) {
  Log log;
  MockBackend backend(log, [](int) { return 1e-3; });
  LabSettings lab = quick_lab();
  lab.warmup_iterations = 3;
  lab.warmup_time_s = 30;
  lab.warmup_tolerance = 1.0;  // any two chunks within 2x of each other
  lab.min_sample_time_s = 1e-5;
  const Json steady = run_point(point("good"), mock_experiment(log), backend, lab);
  ASSERT_EQ(steady["status"], "ok") << steady.dump();
  EXPECT_EQ(steady["phases"]["warmup"]["stop_reason"], "steady");
  EXPECT_GE(steady["phases"]["warmup"]["iterations"].get<std::int64_t>(), 3);
  EXPECT_LT(real_from_json(steady["phases"]["warmup"]["time_s"]), 30.0);

  lab.warmup_tolerance = 0;  // never steady (strictly within 0): the cap ends it
  lab.warmup_time_s = 0.02;
  const Json capped = run_point(point("good"), mock_experiment(log), backend, lab);
  EXPECT_EQ(capped["phases"]["warmup"]["stop_reason"], "max_time") << capped["phases"].dump();
  EXPECT_GE(real_from_json(capped["phases"]["warmup"]["time_s"]), 0.02);

  lab.warmup_time_s = 0;
  const Json minimum = run_point(point("good"), mock_experiment(log), backend, lab);
  EXPECT_EQ(minimum["phases"]["warmup"]["stop_reason"], "iterations");
  EXPECT_EQ(minimum["phases"]["warmup"]["iterations"], 3);
}

// Blocked samples (lab.blocking_kernel): the host's enqueue time is recorded apart from the GPU time, the batch
// recorded is what a sample timed (the queue-depth cap), and the loop is host-paced when submission is slower.
TEST(Lab, BlockedSamplesRecordSubmitTimeAndTheBatchTimed) {
  Log log;
  MockBackend backend(log, [](int) { return 1e-6; });
  backend.submit_ = 3e-6;
  backend.cap_ = 64;
  LabSettings lab = quick_lab();
  lab.min_sample_time_s = 1e-3;  // asks for 1000 iterations a sample
  const Json r = run_point(point("good"), mock_experiment(log), backend, lab);
  ASSERT_EQ(r["status"], "ok") << r.dump();
  EXPECT_TRUE(backend.blocking_);
  EXPECT_EQ(r["timing"]["method"], "cuda_events_blocked+synchronized_wall");
  EXPECT_EQ(r["timing"]["batch"], 64);
  EXPECT_DOUBLE_EQ(real_from_json(r["timing"]["time_s"]), 1e-6);
  EXPECT_DOUBLE_EQ(real_from_json(r["timing"]["submit"]["median_time_s"]), 3e-6);
  EXPECT_EQ(r["timing"]["submit_samples_s"].size(), r["timing"]["device_samples_s"].size());
  EXPECT_DOUBLE_EQ(r["interpretation"]["iteration_time_s"].get<double>(), 3e-6);
  EXPECT_EQ(r["interpretation"]["iteration_time_basis"], "host_submission");

  lab.blocking_kernel = false;  // live samples: no submit time, the measured time is the loop's
  const Json live = run_point(point("good"), mock_experiment(log), backend, lab);
  EXPECT_FALSE(backend.blocking_);
  EXPECT_EQ(live["timing"]["method"], "cuda_events+synchronized_wall");
  EXPECT_TRUE(live["timing"]["submit"].is_null());
  EXPECT_EQ(live["interpretation"]["iteration_time_basis"], "measured_time");
}

// A live sample's host probe (the host's speed right after it) is kept per sample, unscaled by the batch, with
// a summary; blocked samples have none.
TEST(Lab, LiveSamplesKeepTheirHostProbe) {
  Log log;
  MockBackend backend(log, [](int) { return 1e-6; });
  backend.submit_ = 3e-6;
  backend.probe_ = 10e-6;
  LabSettings lab = quick_lab();
  lab.min_sample_time_s = 1e-4;  // 100 iterations a sample
  const Json blocked = run_point(point("good"), mock_experiment(log), backend, lab);
  EXPECT_TRUE(blocked["timing"]["host_probe"].is_null());
  EXPECT_TRUE(blocked["timing"]["host_probe_samples_s"].is_null());

  lab.blocking_kernel = false;
  const Json live = run_point(point("good"), mock_experiment(log), backend, lab);
  ASSERT_EQ(live["status"], "ok") << live.dump();
  const Json& probes = live["timing"]["host_probe_samples_s"];
  ASSERT_EQ(probes.size(), live["timing"]["device_samples_s"].size());
  ASSERT_EQ(probes.size(), 10u);  // constant samples: the CI target is met at min_samples
  EXPECT_DOUBLE_EQ(real_from_json(probes[0]), 10e-6);
  EXPECT_DOUBLE_EQ(real_from_json(probes[9]), 10e-6 * 1.09);
  EXPECT_NEAR(real_from_json(live["timing"]["host_probe"]["median_time_s"]), 10e-6 * 1.045, 1e-15);
}

TEST(Lab, NoisySamplesStopAtTheSampleCapAndSaySo) {
  Log log;
  MockBackend backend(log, [](int i) { return i % 2 ? 1e-3 : 2e-3; });  // bimodal: CI never narrows to 1%
  const Json r = run_point(point("good"), mock_experiment(log), backend, quick_lab());
  EXPECT_EQ(r["timing"]["stop_reason"], "max_samples");
  EXPECT_EQ(r["timing"]["device"]["count"], 50);
  ASSERT_EQ(r["warnings"].size(), 1u);
  EXPECT_EQ(r["warnings"][0]["kind"], "noise");
}

TEST(Lab, TimeCapStopsSamplingAfterMinSamples) {
  Log log;
  MockBackend backend(log, [](int i) { return i % 2 ? 1e-3 : 2e-3; });
  LabSettings lab = quick_lab();
  lab.max_time_s = 1e-12;
  const Json r = run_point(point("good"), mock_experiment(log), backend, lab);
  EXPECT_EQ(r["timing"]["stop_reason"], "max_time");
  EXPECT_EQ(r["timing"]["device"]["count"], 10);
}

TEST(Lab, ConvergesOnceNoiseSettles) {
  Log log;
  // Noisy for 20 samples, then steady: the CI of the median closes and sampling stops before the cap.
  MockBackend backend(log, [](int i) { return i < 20 ? (i % 2 ? 1e-3 : 3e-3) : 1.5e-3; });
  const Json r = run_point(point("good"), mock_experiment(log), backend, quick_lab());
  EXPECT_EQ(r["timing"]["stop_reason"], "ci_target");
  const auto count = r["timing"]["device"]["count"].get<int>();
  EXPECT_GT(count, 20);
  EXPECT_LT(count, 50);
}

TEST(Lab, IncorrectResultIsNeverTimed) {
  Log log;
  MockBackend backend(log, [](int) { return 1e-3; });
  const Json r = run_point(point("wrong"), mock_experiment(log), backend, quick_lab());
  EXPECT_EQ(r["status"], "incorrect");
  EXPECT_FALSE(r.contains("timing"));
  EXPECT_EQ(std::count(log.calls.begin(), log.calls.end(), "sample"), 0);
}

TEST(Lab, AFailingPointDoesNotStopTheSweep) {
  Log log;
  MockBackend backend(log, [](int) { return 1e-3; });
  const RegisteredExperiment e = mock_experiment(log);
  std::vector<Json> written;
  const auto records = run_sweep(
      {point("throws"), point("gpu_only"), point("good")}, e, backend, quick_lab(), Json(),
      [&](const PointRecord& r) { written.push_back(to_json(r)); }, nullptr);
  ASSERT_EQ(written.size(), 3u);
  EXPECT_EQ(written[0]["status"], "error");
  EXPECT_EQ(written[0]["failed_phase"], "warmup");
  EXPECT_NE(written[0]["reason"].get<std::string>().find("kernel exploded"), std::string::npos);
  EXPECT_EQ(written[1]["status"], "not_supported");
  EXPECT_NE(written[1]["reason"].get<std::string>().find("no host implementation"), std::string::npos);
  EXPECT_EQ(written[2]["status"], "ok");
  EXPECT_TRUE(written[2]["timing"].contains("wall_samples_s"));  // raw samples stay in the file
}

// With lab.interleave, a group's points all pass correctness before any is timed, then are sampled in turn;
// records keep sweep order and say how many points shared the timing.
TEST(Lab, InterleavedGroupsAreSampledRoundRobin) {
  Log log;
  MockBackend backend(log, [](int) { return 1e-3; });
  LabSettings lab = quick_lab();
  lab.interleave = 3;
  std::vector<Json> written;
  run_sweep(
      {point("good"), point("wrong"), point("good"), point("good")}, mock_experiment(log), backend, lab, Json(),
      [&](const PointRecord& r) { written.push_back(to_json(r)); }, nullptr);
  ASSERT_EQ(written.size(), 4u);
  EXPECT_EQ(written[0]["status"], "ok");
  EXPECT_EQ(written[1]["status"], "incorrect");
  EXPECT_EQ(written[2]["status"], "ok");
  EXPECT_EQ(written[0]["timing"]["interleaved_points"], 2);  // the incorrect point is never timed
  EXPECT_EQ(written[3]["timing"]["interleaved_points"], 1);
  // All three checks of the first group happen before its first sample.
  const auto first_sample = std::find(log.calls.begin(), log.calls.end(), "sample");
  EXPECT_EQ(std::count(log.calls.begin(), first_sample, "check"), 3);
  EXPECT_EQ(std::count(log.calls.begin(), log.calls.end(), "sample"), 30);  // 10 samples x 3 timed points
}

TEST(Lab, WarnsOnThrottleClockChangeAndL2ResidentWorkingSet) {
  Log log;
  MockBackend backend(log, [](int) { return 1e-3; });
  backend.state_ = Json{{"sm_clock_hz", 1980e6}, {"throttled", true}, {"clocks_event_reasons", {"sw_power_cap"}}};
  backend.cache_ = 60e6;
  Json r = run_point(point("good"), mock_experiment(log), backend, quick_lab());
  std::vector<std::string> kinds;
  for (const auto& w : r["warnings"]) kinds.push_back(w["kind"]);
  // The mock's working set (1 MB) fits its 60 MB cache, and both states report a throttle reason.
  EXPECT_EQ(kinds, (std::vector<std::string>{"l2_resident", "throttle", "throttle"}));
  r["device_state"]["after"]["sm_clock_hz"] = 1500e6;
  r["device_state"]["before"]["throttled"] = false;
  r["device_state"]["after"]["throttled"] = false;
  const std::vector<Warning> w = point_warnings(point_from_json(r), quick_lab(), std::nullopt);
  ASSERT_EQ(w.size(), 1u);
  EXPECT_EQ(w[0].kind, "clocks_changed");
}

TEST(Lab, BatchSizeCoversTheMinimumSampleTime) {
  EXPECT_EQ(choose_batch(1e-6, 1e-3), 1000);
  EXPECT_EQ(choose_batch(2e-3, 1e-3), 1);
  EXPECT_EQ(choose_batch(0, 1e-3), 1);
  EXPECT_EQ(choose_batch(1e-12, 1.0), 100000);
}

}  // namespace
}  // namespace labrun
