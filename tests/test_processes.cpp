// Pooling the records of a sweep run in several processes (lab.processes, src/run/processes.hpp).
#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>

#include "point_record.hpp"
#include "processes.hpp"
#include "record.hpp"
#include "stats.hpp"

namespace labrun {
namespace {

Json header(double copy_Bps, double launch_s) {
  return Json{{"type", "header"},
              {"created_utc", "t"},
              {"lab", Json::object()},
              {"environment", {{"device", {{"l2_bytes", 50e6}, {"host_thread_cpu", 3}}}}},
              {"process", {{"index", 1}, {"count", 3}}},
              {"calibration",
               {{"copy", {{"bandwidth_Bps", copy_Bps}, {"method", "m"}}},
                {"launch", {{"eager_time_s", launch_s}}},
                {"n", 8192}}}};
}

Json ok_point(const std::string& id, const std::vector<double>& samples) {
  Json s = Json::array();
  for (double x : samples) s.push_back(json_real(x));
  return Json{{"type", "point"},
              {"id", id},
              {"key", "e/v/" + id},
              {"experiment", "e"},
              {"variant", "v"},
              {"status", "ok"},
              {"reason", nullptr},
              {"cost", {{"bytes", 1e6}, {"compulsory_bytes", 1e6}, {"flop", 0}, {"launches", 1}}},
              {"device_state", {{"before", nullptr}, {"after", nullptr}}},
              {"timing",
               {{"mode", "eager"},
                {"l2", "hot"},
                {"method", "cuda_events+synchronized_wall"},
                {"stop_reason", "ci_target"},
                {"host_syncs_per_iteration", 0.0},
                {"time_s", json_real(summarize(samples).median)},
                {"wall_samples_s", s},
                {"device_samples_s", s},
                {"submit_samples_s", nullptr}}},
              {"warnings", Json::array()}};
}

// An ok point timed live whose samples each carry a host probe of `probe_s` (seconds per round trip).
Json probed_point(const std::string& id, const std::vector<double>& samples, double probe_s) {
  Json p = ok_point(id, samples);
  Json probes = Json::array();
  for (std::size_t i = 0; i < samples.size(); ++i) probes.push_back(json_real(probe_s));
  p["timing"]["host_probe_samples_s"] = probes;
  p["timing"]["host_probe"] = {{"median_time_s", probe_s}};
  return p;
}

Json other_point(const std::string& id, const std::string& status, const std::string& reason) {
  return Json{{"type", "point"}, {"id", id},         {"key", "e/v/" + id}, {"experiment", "e"},
              {"variant", "v"},  {"status", status}, {"reason", reason}};
}

// pool_processes over runs given as JSON lines (what each process's file holds), back as JSON lines: the pooled
// header, then its points.
std::vector<Json> pool(const std::vector<std::vector<Json>>& lines, const Json& argv, const LabSettings& lab) {
  std::vector<Run> runs;
  for (const auto& file : lines) {
    Run run;
    for (const auto& line : file) {
      if (line["type"] == "header") {
        run.header = header_from_json(line);
        run.has_header = true;
      } else {
        run.points.push_back(point_from_json(line));
      }
    }
    runs.push_back(run);
  }
  const Run pooled = pool_processes(runs, argv, lab);
  std::vector<Json> out{to_json(pooled.header)};
  for (const auto& p : pooled.points) out.push_back(to_json(p));
  return out;
}

TEST(Processes, SamplesArePooledAndTheSpreadIsReported) {
  LabSettings lab;  // target_rel_ci 1%: a process spread above 3% is warned about
  const std::vector<std::vector<Json>> runs = {
      {header(4.0e12, 4.0e-6), ok_point("a", {1.00e-3, 1.01e-3, 0.99e-3}), ok_point("b", {2e-3, 2e-3, 2e-3})},
      {header(4.2e12, 5.0e-6), ok_point("a", {1.05e-3, 1.06e-3, 1.04e-3}), ok_point("b", {2e-3, 2e-3, 2e-3})},
      {header(4.1e12, 4.4e-6), ok_point("a", {1.02e-3, 1.03e-3, 1.01e-3}), ok_point("b", {2e-3, 2e-3, 2e-3})}};
  const std::vector<Json> out = pool(runs, Json::array({"labrun", "sweep"}), lab);
  ASSERT_EQ(out.size(), 3u);
  const Json& h = out[0];
  EXPECT_EQ(h["processes"]["count"], 3);
  EXPECT_DOUBLE_EQ(h["calibration"]["copy"]["bandwidth_Bps"].get<double>(), 4.1e12);  // median of 4.0, 4.2, 4.1
  EXPECT_DOUBLE_EQ(h["calibration"]["launch"]["eager_time_s"].get<double>(), 4.4e-6);
  EXPECT_EQ(h["calibration"]["copy"]["method"], "m");
  EXPECT_TRUE(h["calibration"]["n"].is_number_integer()) << h["calibration"].dump();  // equal integers stay so
  EXPECT_FALSE(h.contains("process"));
  EXPECT_EQ(h["argv"], Json::array({"labrun", "sweep"}));
  EXPECT_DOUBLE_EQ(h["processes"]["runs"][1]["calibration"]["copy"]["bandwidth_Bps"].get<double>(), 4.2e12);

  const Json& a = out[1];
  EXPECT_EQ(a["timing"]["device"]["count"], 9);
  EXPECT_DOUBLE_EQ(real_from_json(a["timing"]["time_s"]), 1.02e-3);  // median of the 9 pooled samples
  EXPECT_NEAR(real_from_json(a["timing"]["processes"]["spread"]), 1.05 / 1.00 - 1, 1e-12);
  EXPECT_EQ(a["timing"]["processes"]["time_s"].size(), 3u);
  const auto& w = a["warnings"];
  EXPECT_TRUE(std::any_of(w.begin(), w.end(), [](const Json& x) { return x["kind"] == "process_spread"; })) << w;
  EXPECT_TRUE(a["interpretation"].is_object());
  const Json& b = out[2];
  EXPECT_DOUBLE_EQ(real_from_json(b["timing"]["processes"]["spread"]), 0.0);
  EXPECT_TRUE(std::none_of(b["warnings"].begin(), b["warnings"].end(),
                           [](const Json& x) { return x["kind"] == "process_spread"; }));
  EXPECT_FALSE(b["timing"]["processes"].contains("host_probe_time_s"));  // no process probed the host
}

// The audit's warnings are findings about the code, not statistics of the samples: the pooled record keeps the first
// process's (which audited the point); the statistical warnings are recomputed from the pooled samples.
TEST(Processes, TheFirstProcesssAuditWarningsAreKept) {
  Json first = ok_point("a", {1e-3, 1e-3, 1e-3});
  first["warnings"] = Json::array({Json{{"kind", "undeclared_sync"}, {"message", "waits in cudaStreamSynchronize"}},
                                   Json{{"kind", "allocation"}, {"message", "cudaMalloc"}},
                                   Json{{"kind", "process_spread"}, {"message", "stale"}}});
  const std::vector<Json> out = pool({{header(4e12, 4e-6), first}, {header(4e12, 4e-6), ok_point("a", {1e-3})}},
                                     Json::array({"labrun"}), LabSettings{});
  ASSERT_EQ(out.size(), 2u);
  std::vector<std::string> kinds;
  for (const Json& w : out[1]["warnings"]) kinds.push_back(w["kind"]);
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "undeclared_sync"), 1) << out[1]["warnings"];
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "allocation"), 1) << out[1]["warnings"];
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "process_spread"), 0) << out[1]["warnings"];  // recomputed
}

// Each process's host probe median is kept in process order beside its time; the probe samples are pooled.
// Where one process has no probe, there is no per-process probe list (nothing to pair with).
TEST(Processes, HostProbesArePooledAndKeptPerProcess) {
  LabSettings lab;
  const std::vector<std::vector<Json>> runs = {
      {header(4e12, 4e-6), probed_point("a", {40e-6, 41e-6}, 12e-6), probed_point("b", {1e-3, 1e-3}, 12e-6)},
      {header(4e12, 5e-6), probed_point("a", {48e-6, 49e-6}, 15e-6), ok_point("b", {1e-3, 1e-3})},
      {header(4e12, 4e-6), probed_point("a", {42e-6, 43e-6}, 13e-6), probed_point("b", {1e-3, 1e-3}, 13e-6)}};
  const std::vector<Json> out = pool(runs, Json::array(), lab);
  const Json& a = out[1]["timing"];
  ASSERT_EQ(a["processes"]["host_probe_time_s"].size(), 3u) << a.dump();
  EXPECT_DOUBLE_EQ(real_from_json(a["processes"]["host_probe_time_s"][1]), 15e-6);
  EXPECT_EQ(a["host_probe_samples_s"].size(), 6u);
  EXPECT_DOUBLE_EQ(real_from_json(a["host_probe"]["median_time_s"]), 13e-6);
  EXPECT_FALSE(out[2]["timing"]["processes"].contains("host_probe_time_s"));
}

TEST(Processes, AFailedProcessDecidesThePointAndIsNamed) {
  LabSettings lab;
  const std::vector<std::vector<Json>> runs = {
      {header(4e12, 4e-6), ok_point("a", {1e-3, 1e-3, 1e-3}), other_point("b", "not_supported", "no")},
      {header(4e12, 4e-6), other_point("a", "incorrect", "result 2 vs 1"), other_point("b", "not_supported", "no")}};
  const std::vector<Json> out = pool(runs, Json::array(), lab);
  EXPECT_EQ(out[1]["status"], "incorrect");
  EXPECT_EQ(out[1]["reason"], "process 2 of 2: result 2 vs 1");
  EXPECT_EQ(out[2]["reason"], "no");  // the same in every process
}

TEST(Processes, DifferentSweepsAreRefused) {
  LabSettings lab;
  EXPECT_THROW(pool({}, Json::array(), lab), std::invalid_argument);
  EXPECT_THROW(pool({{header(4e12, 4e-6), ok_point("a", {1e-3})}, {header(4e12, 4e-6), ok_point("z", {1e-3})}},
                    Json::array(), lab),
               std::invalid_argument);
  EXPECT_THROW(pool({{ok_point("a", {1e-3})}}, Json::array(), lab), std::invalid_argument);
}

}  // namespace
}  // namespace labrun
