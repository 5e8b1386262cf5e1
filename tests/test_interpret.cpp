// The interpretation on synthetic records: one test per bound class, the suspect flag (below the physical floor;
// unsynchronized timing), records without ceilings or with non-finite fields, winners, crossover detection and
// interpolation, hypothesis verdicts, and `labrun report`'s outputs and exit codes.
#include <gtest/gtest.h>

#include <stdlib.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "interpret.hpp"
#include "point_record.hpp"
#include "commands.hpp"
#include "test_util.hpp"
#include "record.hpp"
#include "report.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;

// Round numbers close to an H200's, so expected fractions are easy to check by hand.
constexpr double kCopy = 4.0e12, kRead = 4.4e12, kTheoretical = 4.8e12;
constexpr double kFp32 = 5.0e13, kBf16 = 8.0e14;
constexpr double kEagerLaunch = 4e-6, kGraphLaunch = 5e-7;
constexpr double kL2 = 6e7;

Json gpu_header(Json hypothesis = nullptr) {
  Json h;
  h["type"] = "header";
  h["schema_version"] = kRecordSchemaVersion;
  h["config"] = {{"path", "synthetic.yaml"}, {"experiment", "synthetic"}, {"hypothesis", hypothesis}};
  h["lab"] = {{"timing", "synchronized"}, {"l2", "hot"}, {"target_rel_ci", 0.01}};
  h["environment"] = {{"backend", "cuda:0"},
                      {"device",
                       {{"name", "Test GPU"}, {"theoretical_bandwidth_Bps", kTheoretical}, {"l2_bytes", kL2}}}};
  h["calibration"] = {{"fp32_fma", {{"flop_per_s", kFp32}}},
                      {"bf16_gemm", {{"flop_per_s", kBf16}}},
                      {"copy", {{"bandwidth_Bps", kCopy}}},
                      {"read", {{"bandwidth_Bps", kRead}}},
                      {"launch", {{"eager_time_s", kEagerLaunch}, {"graph_time_s", kGraphLaunch}}}};
  return h;
}

// What a synthetic point costs and how it was timed.
struct Spec {
  std::string variant = "v";
  Json axes = Json::object();
  double time_s = 1e-3;
  double wall_s = -1;  // < 0: equal to the device time
  double bytes = 0, compulsory = 0, flop = 0, launches = 1, syncs = 0;
  std::string mode = "graph";
  std::string l2 = "cold";
  std::string method = "cuda_events+synchronized_wall";
  double rel_ci = 0.01;  // CI half-width relative to the median
  double submit_s = -1;  // >= 0: a blocked sample's per-iteration host enqueue time (method ..._blocked...)
};

Json point(const Spec& s) {
  Json p;
  p["type"] = "point";
  p["key"] = "synthetic/" + s.variant + "/" + s.axes.dump();
  p["id"] = test::id_of(p["key"].get<std::string>());
  p["experiment"] = "synthetic";
  p["variant"] = s.variant;
  p["axes"] = s.axes;
  p["status"] = "ok";
  p["cost"] = {{"bytes", s.bytes},
               {"compulsory_bytes", s.compulsory},
               {"flop", s.flop},
               {"launches", s.launches},
               {"host_syncs", s.syncs}};
  const double wall = s.wall_s < 0 ? s.time_s : s.wall_s;
  auto summary = [&](double median) {
    return Json{{"median_time_s", median},
                {"ci95_low_time_s", median * (1 - s.rel_ci)},
                {"ci95_high_time_s", median * (1 + s.rel_ci)}};
  };
  const bool unsync = s.method == "host_clock_unsynchronized";
  p["timing"] = {{"mode", s.mode},        {"l2", s.l2},
                 {"method", s.method},    {"host_syncs_per_iteration", s.syncs},
                 {"wall", summary(wall)}, {"device", unsync ? Json(nullptr) : summary(s.time_s)},
                 {"time_s", s.time_s}};
  if (s.submit_s >= 0) {
    p["timing"]["method"] = "cuda_events_blocked+synchronized_wall";
    p["timing"]["submit"] = summary(s.submit_s);
    p["timing"]["wall"] = summary(wall + s.submit_s);  // a blocked sample enqueues, then executes
  }
  return p;
}

// The bytes a point must move in `time` to run at `fraction` of the read ceiling.
double bytes_at(double fraction, double time) { return fraction * kRead * time; }

// ---- bound classes ------------------------------------------------------------------------------------------

TEST(InterpretPoint, MemoryBound) {
  Spec s;
  s.time_s = 1e-3;
  s.bytes = s.compulsory = bytes_at(0.9, s.time_s);
  s.flop = 1e9;  // 2% of the FP32 ceiling
  s.launches = 2;
  const Json in = interpret_point(point(s), gpu_header());
  EXPECT_EQ(in["bound"], "memory");
  EXPECT_EQ(in["confidence"], "strong");
  EXPECT_FALSE(in["suspect"].get<bool>());
  EXPECT_NEAR(in["fraction_of"]["memory_ceiling"].get<double>(), 0.9, 1e-12);
  EXPECT_NEAR(in["fraction_of"]["read"].get<double>(), 0.9, 1e-12);
  EXPECT_NEAR(in["fraction_of"]["copy"].get<double>(), 0.9 * kRead / kCopy, 1e-12);  // the higher ceiling rules
  EXPECT_NEAR(in["achieved_bandwidth_Bps"].get<double>(), 0.9 * kRead, 1e3);
  EXPECT_NEAR(in["arithmetic_intensity_flop_per_byte"].get<double>(), 1e9 / s.compulsory, 1e-12);
  // Roofline at this intensity: min(memory ceiling × AI, compute ceiling).
  EXPECT_NEAR(in["roofline_ceiling_flop_per_s"].get<double>(), kRead * 1e9 / s.compulsory, 1e-3);
  // Floor: compulsory bytes at the peak bandwidth (the theoretical figure here).
  EXPECT_NEAR(in["time_floor_s"].get<double>(), s.compulsory / kTheoretical, 1e-15);
  const std::string bound = in["note"]["bound"];
  EXPECT_NE(bound.find("memory-bound"), std::string::npos) << bound;
  EXPECT_NE(bound.find("90% of the 4.40 TB/s read ceiling"), std::string::npos) << bound;
  EXPECT_NE(bound.find("copy figure"), std::string::npos) << bound;
  for (const char* part : {"measured", "bound", "evidence", "next_change", "other_cause_checked"})
    EXPECT_FALSE(in["note"][part].get<std::string>().empty()) << part;
}

TEST(InterpretPoint, ComputeBound) {
  Spec s;
  s.time_s = 1e-3;
  s.flop = 0.8 * kFp32 * s.time_s;
  s.bytes = s.compulsory = bytes_at(0.05, s.time_s);
  const Json in = interpret_point(point(s), gpu_header());
  EXPECT_EQ(in["bound"], "compute");
  EXPECT_NEAR(in["fraction_of"]["compute_ceiling"].get<double>(), 0.8, 1e-12);
  EXPECT_NE(in["note"]["bound"].get<std::string>().find("80% of the 50.0 TFLOP/s FP32 FMA ceiling"), std::string::npos)
      << in["note"]["bound"];
}

TEST(InterpretPoint, LaunchBound) {
  Spec s;
  s.mode = "eager";
  s.launches = 10;  // 10 × 4 µs = 40 µs of a 50 µs iteration
  s.time_s = 50e-6;
  s.bytes = s.compulsory = bytes_at(0.1, s.time_s);
  const Json in = interpret_point(point(s), gpu_header());
  EXPECT_EQ(in["bound"], "launch");
  EXPECT_NEAR(in["launch_overhead_share"].get<double>(), 0.8, 1e-12);
  EXPECT_NE(in["note"]["next_change"].get<std::string>().find("CUDA graph"), std::string::npos);
  // The same work replayed from a graph (0.5 µs per launch) is no longer launch-bound.
  s.mode = "graph";
  EXPECT_NEAR(interpret_point(point(s), gpu_header())["launch_overhead_share"].get<double>(), 0.1, 1e-12);
  EXPECT_NE(interpret_point(point(s), gpu_header())["bound"], "launch");
}

// Blocked samples: the launch share is the measured submission over the GPU time, the loop is launch-bound
// (host-paced) only once submission exceeds the GPU time, and the blocked wall - device is no host stall.
TEST(InterpretPoint, BlockedSamplesUseMeasuredSubmission) {
  Spec s;
  s.mode = "eager";
  s.launches = 4;
  s.time_s = 8e-6;     // GPU time of the queued iteration
  s.submit_s = 20e-6;  // the host needs 20 µs to issue it
  s.bytes = s.compulsory = bytes_at(0.1, s.time_s);
  Json in = interpret_point(point(s), gpu_header());
  EXPECT_EQ(in["bound"], "launch");
  EXPECT_EQ(in["evidence"]["rule"], "launch_overhead_share >= 1");
  EXPECT_NEAR(in["launch_overhead_share"].get<double>(), 2.5, 1e-12);
  EXPECT_TRUE(in["host_stall_share"].is_null());
  EXPECT_DOUBLE_EQ(in["iteration_time_s"].get<double>(), 20e-6);
  EXPECT_EQ(in["iteration_time_basis"], "host_submission");
  EXPECT_NE(in["note"]["bound"].get<std::string>().find("host submission 20.0 µs"), std::string::npos)
      << in["note"]["bound"];
  // Submission at 60% of the GPU time: the GPU paces the loop; by the calibrated model (4 × 4 µs = 16 µs
  // against 8 µs) it would have been called launch-bound.
  s.submit_s = 4.8e-6;
  in = interpret_point(point(s), gpu_header());
  EXPECT_NE(in["bound"], "launch");
  EXPECT_DOUBLE_EQ(in["iteration_time_s"].get<double>(), 8e-6);
  EXPECT_EQ(in["iteration_time_basis"], "measured_time");
}

TEST(InterpretPoint, SyncBound) {
  Spec s;
  s.mode = "eager";
  s.syncs = 1;
  s.launches = 2;
  s.time_s = 700e-6;  // device
  s.wall_s = 1e-3;    // the host waited 300 µs of 1 ms
  s.bytes = s.compulsory = bytes_at(0.2, s.time_s);
  const Json in = interpret_point(point(s), gpu_header());
  EXPECT_EQ(in["bound"], "sync");
  EXPECT_EQ(in["confidence"], "strong");
  EXPECT_NEAR(in["host_stall_share"].get<double>(), 0.3, 1e-12);
  EXPECT_NE(in["note"]["next_change"].get<std::string>().find("on the device"), std::string::npos);
  // With a host probe the evidence says how many bare sync round trips the iteration is worth.
  Json probed = point(s);
  probed["timing"]["host_probe"] = {{"median_time_s", 100e-6}};
  const Json pin = interpret_point(probed, gpu_header());
  EXPECT_DOUBLE_EQ(pin["evidence"]["host_probe_time_s"].get<double>(), 100e-6);
  EXPECT_NE(pin["note"]["evidence"].get<std::string>().find("a bare sync round trip (host probe) took 100 µs, the "
                                                            "iteration 7 of them"),
            std::string::npos)
      << pin["note"]["evidence"];
  // Without the sync the same stall is not called sync-bound.
  s.syncs = 0;
  EXPECT_NE(interpret_point(point(s), gpu_header())["bound"], "sync");
}

TEST(InterpretPoint, LatencyBound) {
  Spec s;
  s.mode = "graph";
  s.launches = 4;  // 2 µs of graph launches in 8 µs: not launch-bound
  s.time_s = 8e-6;
  s.bytes = s.compulsory = bytes_at(0.1, s.time_s);
  const Json in = interpret_point(point(s), gpu_header());
  EXPECT_EQ(in["bound"], "latency");
  // Also above 10 µs when each launch has less than 5 µs of ideal streaming.
  s.time_s = 40e-6;
  s.launches = 20;
  s.bytes = s.compulsory = bytes_at(0.3, s.time_s);  // 0.6 µs of streaming per launch
  EXPECT_EQ(interpret_point(point(s), gpu_header())["bound"], "latency");
}

TEST(InterpretPoint, BelowBothRoofsWithLargeWorkIsUnknown) {
  Spec s;
  s.time_s = 1e-3;
  s.launches = 1;
  s.bytes = s.compulsory = bytes_at(0.1, s.time_s);  // 100 µs of streaming in one launch
  const Json in = interpret_point(point(s), gpu_header());
  EXPECT_EQ(in["bound"], "unknown");
  EXPECT_TRUE(in["confidence"].is_null());
}

// ---- suspect ------------------------------------------------------------------------------------------------

TEST(InterpretPoint, SuspectBelowPhysicalFloor) {
  Spec s;
  s.l2 = "hot";  // a 5 GB working set: not L2-resident, and the cold-L2 rule (C10 test below) stays out of it
  s.time_s = 1e-3;
  s.bytes = s.compulsory = 1.1 * kTheoretical * s.time_s;  // 10% faster than the theoretical peak allows
  const Json in = interpret_point(point(s), gpu_header());
  EXPECT_TRUE(in["suspect"].get<bool>());
  EXPECT_EQ(in["bound"], "unknown");
  EXPECT_NE(in["suspect_reason"].get<std::string>().find("below the physical floor"), std::string::npos);
  // Within the 5% margin: not suspect.
  s.bytes = s.compulsory = 1.04 * kTheoretical * s.time_s;
  EXPECT_FALSE(interpret_point(point(s), gpu_header())["suspect"].get<bool>());
}

TEST(InterpretPoint, HotL2ResidentWorkingSetMayBeatDram) {  // case C10
  Spec s;
  s.time_s = 1e-6;
  s.compulsory = s.bytes = 8e6;  // 8 TB/s: above DRAM, possible from a hot L2 of 60 MB
  s.l2 = "hot";
  const Json in = interpret_point(point(s), gpu_header());
  EXPECT_TRUE(in["l2_resident"].get<bool>());
  EXPECT_FALSE(in["suspect"].get<bool>());
  s.l2 = "cold";  // a flushed L2: the same rate is impossible
  EXPECT_TRUE(interpret_point(point(s), gpu_header())["suspect"].get<bool>());
}

// Case C10: with a cold L2 the measured memory ceiling (not the theoretical peak) bounds the compulsory rate.
TEST(InterpretPoint, C10_ColdL2AboveMeasuredCeilingIsSuspect) {
  Spec s;
  s.time_s = 1e-3;
  s.l2 = "cold";
  s.bytes = s.compulsory = 1.02 * kRead * s.time_s;  // above the read ceiling, still under the theoretical peak
  const Json in = interpret_point(point(s), gpu_header());
  EXPECT_TRUE(in["suspect"].get<bool>());
  EXPECT_NE(in["suspect_reason"].get<std::string>().find("cold L2"), std::string::npos);
  s.bytes = s.compulsory = 0.98 * kRead * s.time_s;
  EXPECT_FALSE(interpret_point(point(s), gpu_header())["suspect"].get<bool>());
}

TEST(InterpretPoint, UnsynchronizedTimingIsAlwaysSuspect) {
  Spec s;
  s.method = "host_clock_unsynchronized";
  s.time_s = 5e-3;  // a plausible-looking time: the method alone makes it suspect
  s.bytes = s.compulsory = bytes_at(0.1, s.time_s);
  const Json in = interpret_point(point(s), gpu_header());
  EXPECT_TRUE(in["suspect"].get<bool>());
  EXPECT_EQ(in["bound"], "unknown");
  EXPECT_NE(in["suspect_reason"].get<std::string>().find("enqueue"), std::string::npos);
  EXPECT_NE(in["note"]["next_change"].get<std::string>().find("synchronized"), std::string::npos);
}

// ---- robustness ---------------------------------------------------------------------------------------------

TEST(InterpretPoint, HostBackendIsUnknownWithAReason) {
  Json header = gpu_header();
  header["calibration"] = {{"backend", "host"}};
  header["environment"] = {{"backend", "host"}, {"device", {{"kind", "host"}}}};
  Spec s;
  s.bytes = s.compulsory = 1e6;
  s.method = "host_steady_clock";
  Json p = point(s);
  p["timing"]["device"] = nullptr;
  const Json in = interpret_point(p, header);
  EXPECT_EQ(in["bound"], "unknown");
  EXPECT_NE(in["reason"].get<std::string>().find("no calibrated ceilings"), std::string::npos) << in["reason"];
  EXPECT_TRUE(in["fraction_of"]["memory_ceiling"].is_null());
  EXPECT_NEAR(in["achieved_bandwidth_Bps"].get<double>(), 1e9, 1e-3);  // still derived from the cost model
  EXPECT_FALSE(in["suspect"].get<bool>());
  // Quantities without a ceiling read n/a in the note, never NaN.
  const std::string evidence = in["note"]["evidence"].get<std::string>();
  EXPECT_EQ(evidence.find("NaN"), std::string::npos) << evidence;
  EXPECT_NE(evidence.find("ridge point n/a"), std::string::npos) << evidence;
}

TEST(InterpretPoint, NonFiniteAndMalformedFieldsNeverCrash) {
  Spec s;
  s.bytes = s.compulsory = 1e9;
  Json p = point(s);
  p["timing"]["time_s"] = json_real(std::nan(""));
  p["timing"]["wall"]["median_time_s"] = "Infinity";
  p["cost"]["bytes"] = "NaN";
  Json in;
  ASSERT_NO_THROW(in = interpret_point(p, gpu_header()));
  EXPECT_EQ(in["bound"], "unknown");
  EXPECT_TRUE(in["time_s"].is_null());

  p["timing"]["time_s"] = 1e-3;  // a time, but NaN costs and ceilings
  Json header = gpu_header();
  header["calibration"]["read"]["bandwidth_Bps"] = "NaN";
  header["calibration"]["copy"]["bandwidth_Bps"] = "NaN";
  ASSERT_NO_THROW(in = interpret_point(p, header));
  EXPECT_TRUE(in["achieved_bandwidth_Bps"].is_null());
  EXPECT_EQ(in["bound"], "unknown");

  for (const Json& weird : {Json(nullptr), Json(42), Json("text"), Json::array({1, 2}),
                            Json{{"timing", 5}, {"cost", "abc"}, {"axes", 3}, {"status", "ok"}}})
    EXPECT_NO_THROW(interpret_point(weird, weird));
}

TEST(InterpretPoint, FailedPointIsNotTimed) {
  Spec s;
  Json p = point(s);
  p["status"] = "capture_unsupported";
  p["reason"] = "cudaErrorStreamCaptureUnsupported";
  p.erase("timing");
  const Json in = interpret_point(p, gpu_header());
  EXPECT_EQ(in["bound"], "unknown");
  EXPECT_NE(in["reason"].get<std::string>().find("capture_unsupported"), std::string::npos);
}

// ---- the typed path against stored interpretations -------------------------------------------------------------

// Differences between `a` and `b` (JSON), as "path: a vs b" lines: numbers within `rel` relative (or both 0),
// strings, booleans and nulls exactly, objects with the same keys in the same order, arrays elementwise.
void json_diff(const Json& a, const Json& b, const std::string& path, double rel, std::vector<std::string>& out) {
  if (a.is_number() && b.is_number()) {
    const double x = a.get<double>(), y = b.get<double>();
    if (!(x == y || std::fabs(x - y) <= rel * std::max(std::fabs(x), std::fabs(y))))
      out.push_back(path + ": " + a.dump() + " vs " + b.dump());
    return;
  }
  if (a.type() != b.type()) {
    out.push_back(path + ": " + a.dump() + " vs " + b.dump());
    return;
  }
  if (a.is_object()) {
    std::vector<std::string> ka, kb;
    for (const auto& [k, v] : a.items()) ka.push_back(k);
    for (const auto& [k, v] : b.items()) kb.push_back(k);
    if (ka != kb) out.push_back(path + ": keys " + Json(ka).dump() + " vs " + Json(kb).dump());
    for (const auto& [k, v] : a.items())
      if (b.contains(k)) json_diff(v, b[k], path + "." + k, rel, out);
    return;
  }
  if (a.is_array()) {
    if (a.size() != b.size())
      out.push_back(path + ": sizes " + std::to_string(a.size()) + " vs " + std::to_string(b.size()));
    for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i)
      json_diff(a[i], b[i], path + "[" + std::to_string(i) + "]", rel, out);
    return;
  }
  if (a != b) out.push_back(path + ": " + a.dump() + " vs " + b.dump());
}

// The one deliberate text change since the committed runs were interpreted: the sync-bound advice no longer
// names a variant (src/ names no experiment).
Json without_named_variant(Json interpretation) {
  std::string next = interpretation["note"]["next_change"].get<std::string>();
  const std::string before =
      "keep the data-dependent size on the device (a device-side count, as "
      "index_device_count does) so the host never waits inside the iteration; the "
      "iteration can then be queued ahead and captured in a CUDA graph";
  const std::string after =
      "keep the data-dependent size on the device (a device-side count) so the host never "
      "waits inside the iteration; the iteration can then be queued ahead and captured in a "
      "CUDA graph";
  if (const auto at = next.find(before); at != std::string::npos) next.replace(at, before.size(), after);
  interpretation["note"]["next_change"] = next;
  return interpretation;
}

// Every difference between the interpretation interpret() gives `p` now and the one stored in it: numbers to
// 1e-12 relative, text exactly, up to what older builds wrote otherwise: the deliberate edit above, and no
// evidence.host_probe_time_s key before the host probe existed (this build writes null there for such a record).
std::vector<std::string> differences_from_stored(const PointRecord& p, const RunHeader& header) {
  Json fresh = to_json(interpret(p, header));
  if (!p.interpretation->evidence.host_probe_recorded) {
    EXPECT_TRUE(fresh["evidence"]["host_probe_time_s"].is_null()) << p.key;
    fresh["evidence"].erase("host_probe_time_s");
  }
  std::vector<std::string> diffs;
  json_diff(fresh, without_named_variant(to_json(*p.interpretation)), p.key, 1e-12, diffs);
  return diffs;
}

// interpret(point, header) of a committed GPU run reproduces the interpretation stored in every ok point. The
// file was written by build 4770c85, which wrote the sync-bound advice with a variant's name and no
// evidence.host_probe_time_s (see differences_from_stored()); nothing else differs.
TEST(InterpretTyped, ReproducesStoredInterpretationsOfACommittedRun) {
  test::TempDir dir;
  const std::string path = test::schema1_masking_run(dir);
  if (path.empty()) GTEST_SKIP() << "gzip is needed to unpack the fixture";
  const ResultSet set = load_results({path});
  ASSERT_EQ(set.runs.size(), 1u);
  const labrun::Run& run = set.runs[0];
  ASSERT_EQ(run.header.backend(), "cuda:0");
  std::size_t compared = 0, sync_advice = 0;
  for (const PointRecord& p : run.points) {
    if (p.status != Status::ok) continue;
    ASSERT_TRUE(p.interpretation.has_value()) << p.key;
    sync_advice += without_named_variant(to_json(*p.interpretation)) != to_json(*p.interpretation);
    const std::vector<std::string> diffs = differences_from_stored(p, run.header);
    EXPECT_TRUE(diffs.empty()) << diffs.size() << " differences, first: " << diffs.front();
    // The JSON shim is the typed path.
    EXPECT_EQ(interpret_point(to_json(p), run.header.json), to_json(interpret(p, run.header))) << p.key;
    ++compared;
  }
  EXPECT_GT(compared, 700u);
  std::cout << compared << " ok points compared; " << sync_advice << " with the reworded sync-bound advice\n";
}

// A fresh host-backend run of this build (the smoke sweep): the interpretation the lab stored in each ok point
// is interpret() of the point as loaded back, exactly.
TEST(InterpretTyped, ReproducesStoredInterpretationsOfAFreshHostRun) {
  test::TempDir dir;
  const std::string out = dir.file("smoke.jsonl");
  const std::string command = std::string("'") + LABRUN_BINARY + "' sweep '" + LABRUN_SOURCE_DIR +
                              "/configs/smoke.yaml' --device cpu -q -o '" + out + "' >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  const ResultSet set = load_results({out});
  ASSERT_EQ(set.runs.size(), 1u);
  ASSERT_EQ(set.runs[0].header.backend(), "host");
  std::size_t compared = 0;
  for (const PointRecord& p : set.runs[0].points) {
    if (p.status != Status::ok) continue;
    ASSERT_TRUE(p.interpretation.has_value()) << p.key;
    EXPECT_EQ(to_json(interpret(p, set.runs[0].header)).dump(), to_json(*p.interpretation).dump()) << p.key;
    ++compared;
  }
  EXPECT_GT(compared, 0u);
}

// The typed iteration time equals the JSON shim's, and both follow the blocked-sample rule.
TEST(InterpretTyped, IterationTimeOverloadsAgree) {
  Spec s;
  s.mode = "eager";
  s.time_s = 8e-6;
  s.submit_s = 20e-6;
  const Json j = point(s);
  const IterationTime typed = iteration_time(point_from_json(j)), shim = iteration_time(j);
  EXPECT_TRUE(typed.host_paced);
  EXPECT_DOUBLE_EQ(typed.time_s, 20e-6);
  EXPECT_DOUBLE_EQ(typed.ci95_low_s, 20e-6 * 0.99);
  EXPECT_DOUBLE_EQ(shim.time_s, typed.time_s);
  EXPECT_DOUBLE_EQ(shim.ci95_high_s, typed.ci95_high_s);
  // Without device timing the CI is the wall clock's.
  Spec w;
  w.method = "host_steady_clock";
  w.time_s = 1e-3;
  w.wall_s = 1e-3;
  Json wj = point(w);
  wj["timing"]["device"] = nullptr;
  wj["timing"]["wall"]["ci95_low_time_s"] = 0.9e-3;
  const IterationTime wall = iteration_time(point_from_json(wj));
  EXPECT_FALSE(wall.host_paced);
  EXPECT_DOUBLE_EQ(wall.ci95_low_s, 0.9e-3);
  // No timing at all: NaN, never a throw.
  Json none = point(w);
  none.erase("timing");
  EXPECT_TRUE(std::isnan(iteration_time(point_from_json(none)).time_s));
}

// The sync-bound advice names no variant.
TEST(InterpretTyped, AdviceNamesNoVariant) {
  Spec s;
  s.mode = "eager";
  s.syncs = 1;
  s.launches = 2;
  s.time_s = 700e-6;
  s.wall_s = 1e-3;
  s.bytes = s.compulsory = bytes_at(0.2, s.time_s);
  const Interpretation in = interpret(point_from_json(point(s)), header_from_json(gpu_header()));
  EXPECT_EQ(in.bound, "sync");
  EXPECT_NE(in.note.next_change.find("a device-side count"), std::string::npos) << in.note.next_change;
  EXPECT_EQ(in.note.next_change.find("_device_count"), std::string::npos) << in.note.next_change;
}

// ---- across points ------------------------------------------------------------------------------------------

// Two variants a, b along one axis with the given times.
std::vector<Json> two_variants(const std::string& axis, const std::vector<Json>& xs, const std::vector<double>& ta,
                               const std::vector<double>& tb, const Json& header) {
  std::vector<Json> recs{header};
  for (std::size_t i = 0; i < xs.size(); ++i)
    for (const auto& [v, t] : {std::pair{"a", ta[i]}, std::pair{"b", tb[i]}}) {
      Spec s;
      s.variant = v;
      s.axes = {{axis, xs[i]}, {"mode", "graph"}};
      s.time_s = t;
      s.bytes = s.compulsory = 1e6;
      recs.push_back(point(s));
    }
  return recs;
}

TEST(InterpretAnalyze, WinnerWithMargin) {
  const auto recs = two_variants("density", {0.5}, {1e-3}, {1.5e-3}, gpu_header());
  const Json a = analyze(recs);
  ASSERT_EQ(a["groups"].size(), 1u);
  const Json& g = a["groups"][0];
  EXPECT_EQ(g["winner"], "a");
  EXPECT_EQ(g["runner_up"], "b");
  EXPECT_NEAR(g["margin_ratio"].get<double>(), 1.5, 1e-12);
  EXPECT_TRUE(g["significant"].get<bool>());
  // 1% CIs around times 1% apart overlap: not beyond the noise.
  const Json close = analyze(two_variants("density", {0.5}, {1e-3}, {1.01e-3}, gpu_header()));
  EXPECT_FALSE(close["groups"][0]["significant"].get<bool>());
}

TEST(InterpretAnalyze, CrossoverLinearInterpolation) {
  // log(ta/tb) goes from log(0.5) at density 0 to log(4) at density 1: zero a third of the way.
  const auto recs = two_variants("density", {0.0, 1.0}, {1e-3, 4e-3}, {2e-3, 1e-3}, gpu_header());
  const Json a = analyze(recs);
  ASSERT_EQ(a["crossovers"].size(), 1u);
  const Json& x = a["crossovers"][0];
  EXPECT_EQ(x["axis"], "density");
  EXPECT_EQ(x["scale"], "linear");
  EXPECT_NEAR(x["at"].get<double>(), 1.0 / 3.0, 1e-12);
  EXPECT_EQ(x["faster_below"], "a");
  EXPECT_EQ(x["faster_above"], "b");
  EXPECT_NEAR(x["ratio_below"].get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(x["ratio_above"].get<double>(), 4.0, 1e-12);
  EXPECT_TRUE(x["significant"].get<bool>());
  EXPECT_NE(x["text"].get<std::string>().find("b overtakes a between density 0 and 1, at ≈ 0.333"), std::string::npos)
      << x["text"];
}

TEST(InterpretAnalyze, CrossoverLogInterpolationAlongSizes) {
  // Symmetric log ratios at n = 1e5 and 1e7: the crossing is the geometric midpoint, 1e6 (not 5.05e6).
  const auto recs = two_variants("n", {100000, 10000000}, {1e-5, 4e-3}, {2e-5, 2e-3}, gpu_header());
  const Json a = analyze(recs);
  ASSERT_EQ(a["crossovers"].size(), 1u);
  EXPECT_EQ(a["crossovers"][0]["scale"], "log");
  EXPECT_NEAR(a["crossovers"][0]["at"].get<double>(), 1e6, 1e-3);
}

TEST(InterpretAnalyze, NoCrossoverWithoutSignChangeAndPerSlice) {
  // a is faster everywhere: nothing to report.
  EXPECT_TRUE(
      analyze(two_variants("density", {0.1, 0.5, 0.9}, {1, 1, 1}, {2, 2, 2}, gpu_header()))["crossovers"].empty());
  // Two slices (n fixed at two values); only the second crosses, between 0.1 and 0.5.
  std::vector<Json> recs{gpu_header()};
  for (const int n : {1000, 2000})
    for (const double d : {0.1, 0.5, 0.9})
      for (const char* v : {"a", "b"}) {
        Spec s;
        s.variant = v;
        s.axes = {{"n", n}, {"density", d}};
        s.time_s = std::string(v) == "a" ? 1e-3 : (n == 2000 && d > 0.2 ? 0.5e-3 : 2e-3);
        recs.push_back(point(s));
      }
  const Json a = analyze(recs);
  std::vector<Json> along_density;
  for (const auto& x : a["crossovers"])
    if (x["axis"] == "density") along_density.push_back(x);
  ASSERT_EQ(along_density.size(), 1u);
  EXPECT_EQ(along_density[0]["fixed"]["n"], 2000);
  EXPECT_EQ(along_density[0]["between"], Json::array({0.1, 0.5}));
  EXPECT_NEAR(along_density[0]["at"].get<double>(), 0.3, 1e-12);  // |log 2| each side: the midpoint
}

Json hypothesis(const std::string& faster, const std::string& than, Json when, double by) {
  return Json{{"faster", faster}, {"than", than}, {"when", std::move(when)}, {"by_at_least", by}};
}

// Variants a and b over n ∈ {1e5, 1e6, 1e7}, density ∈ {0.1, 0.5, 0.9}: b takes `ratio(n, d)` × a's time.
template <class F>
std::vector<Json> grid(const Json& hypotheses, F ratio) {
  std::vector<Json> recs{gpu_header(hypotheses)};
  for (const std::int64_t n : {100000, 1000000, 10000000})
    for (const double d : {0.1, 0.5, 0.9})
      for (const char* v : {"a", "b"}) {
        Spec s;
        s.variant = v;
        // Json{...}, not a bare {...}: clang before 17 omits the destructor of the by-value operator='s
        // argument built from a braced list inside a template (llvm-project issue 51037), a leak under LSan.
        s.axes = Json{{"n", n}, {"density", d}};
        s.time_s = 1e-3 * (std::string(v) == "b" ? ratio(static_cast<double>(n), d) : 1.0);
        s.bytes = s.compulsory = s.flop = 1e7;  // intensity 1 flop/B: a place on the roofline
        recs.push_back(point(s));
      }
  return recs;
}

TEST(InterpretAnalyze, HypothesisConfirmed) {
  const Json h = Json::array({hypothesis("a", "b", {{"density", {0.1, 0.5}}, {"n", {1e6, 1e7}}}, 1.5)});
  const Json a = analyze(grid(h, [](double, double) { return 2.0; }));
  ASSERT_EQ(a["hypotheses"].size(), 1u);
  const Json& v = a["hypotheses"][0];
  EXPECT_EQ(v["verdict"], "confirmed");
  EXPECT_EQ(v["matched"], 4);  // n ∈ {1e6, 1e7} × density ∈ {0.1, 0.5}: ranges are inclusive
  EXPECT_EQ(v["passed"], 4);
  EXPECT_NEAR(v["ratio_min"].get<double>(), 2.0, 1e-12);
  EXPECT_NEAR(v["ratio_median"].get<double>(), 2.0, 1e-12);
  EXPECT_EQ(v["points"].size(), 4u);
}

TEST(InterpretAnalyze, HypothesisRefuted) {
  // a is slower than b everywhere the hypothesis looks.
  const Json h = Json::array({hypothesis("a", "b", {{"density", 0.5}}, 1.2)});
  const Json a = analyze(grid(h, [](double, double) { return 0.8; }));
  const Json& v = a["hypotheses"][0];
  EXPECT_EQ(v["verdict"], "refuted");
  EXPECT_EQ(v["matched"], 3);
  EXPECT_EQ(v["passed"], 0);
  EXPECT_EQ(v["counterexamples"].size(), 3u);
}

TEST(InterpretAnalyze, HypothesisInconclusive) {
  // No matching point: density 0.3 was never run.
  const Json none = Json::array({hypothesis("a", "b", {{"density", 0.3}}, 1.0)});
  const Json v1 = analyze(grid(none, [](double, double) { return 2.0; }))["hypotheses"][0];
  EXPECT_EQ(v1["verdict"], "inconclusive");
  EXPECT_EQ(v1["matched"], 0);
  // Mixed: a wins by 2× at two of three sizes and loses at the third (67%, between 50% and 90%).
  const Json mixed = Json::array({hypothesis("a", "b", {{"density", 0.5}}, 1.5)});
  const Json v2 = analyze(grid(mixed, [](double n, double) { return n < 5e6 ? 2.0 : 0.9; }))["hypotheses"][0];
  EXPECT_EQ(v2["verdict"], "inconclusive");
  EXPECT_EQ(v2["passed"], 2);
  EXPECT_EQ(v2["matched"], 3);
  EXPECT_EQ(v2["counterexamples"][0]["axes"]["n"], 10000000);
  // Unknown variant names match nothing.
  const Json typo = Json::array({hypothesis("nope", "b", Json::object(), 1.0)});
  EXPECT_EQ(analyze(grid(typo, [](double, double) { return 2.0; }))["hypotheses"][0]["verdict"], "inconclusive");
}

TEST(InterpretAnalyze, SuspectPointsTakeNoPart) {
  std::vector<Json> recs{gpu_header(Json::array({hypothesis("a", "b", Json::object(), 1.0)}))};
  for (const char* v : {"a", "b"}) {
    Spec s;
    s.variant = v;
    s.axes = {{"density", 0.5}};
    s.method = "host_clock_unsynchronized";
    s.time_s = std::string(v) == "a" ? 1e-6 : 2e-6;
    recs.push_back(point(s));
  }
  const Json a = analyze(recs);
  EXPECT_TRUE(a["groups"][0]["winner"].is_null());
  EXPECT_EQ(a["hypotheses"][0]["verdict"], "inconclusive");
  EXPECT_EQ(a["hypotheses"][0]["skipped"], 1);
  EXPECT_EQ(a["runs"][0]["usable_points"], 0);
}

TEST(InterpretAnalyze, EachHeaderStartsARun) {
  auto first = two_variants("density", {0.5}, {1e-3}, {2e-3}, gpu_header());
  const auto second = two_variants("density", {0.5}, {3e-3}, {2e-3}, gpu_header());
  first.insert(first.end(), second.begin(), second.end());
  const Json a = analyze(first);
  ASSERT_EQ(a["runs"].size(), 2u);
  ASSERT_EQ(a["groups"].size(), 2u);  // same axes, different runs: never mixed
  EXPECT_EQ(a["groups"][0]["winner"], "a");
  EXPECT_EQ(a["groups"][1]["winner"], "b");
}

// ---- labrun report ------------------------------------------------------------------------------------------

using test::TempDir;

std::string write_jsonl(const std::string& path, const std::vector<Json>& recs) {
  std::ofstream f(path);
  for (const auto& r : recs) f << r.dump() << '\n';
  return path;
}

using test::slurp;

TEST(ReportCmd, WritesMarkdownAndCsv) {
  TempDir dir;
  const Json h = Json::array({hypothesis("a", "b", {{"density", {0.1, 0.9}}}, 1.5)});
  const std::string in = write_jsonl(dir.file("run.jsonl"), grid(h, [](double, double) { return 2.0; }));
  std::ostringstream out, err;
  ReportOptions o;
  o.plots = false;
  ASSERT_EQ(cmd_report({in}, dir.file("out"), out, err, o), 0) << err.str();
  const std::string md = slurp(dir.file("out/report.md"));
  EXPECT_NE(md.find("## Summary"), std::string::npos);
  EXPECT_NE(md.find("## Hypothesis verdicts"), std::string::npos);
  EXPECT_NE(md.find("**confirmed**"), std::string::npos);
  EXPECT_LT(md.find("## Hypothesis verdicts"), md.find("## Winners"));  // verdicts first
  EXPECT_NE(md.find("## Crossovers"), std::string::npos);
  EXPECT_NE(md.find("**Likely bound:**"), std::string::npos);
  EXPECT_EQ(md.find("!["), std::string::npos);  // no plot drawn, none linked
  const std::string csv = slurp(dir.file("out/points.csv"));
  EXPECT_EQ(csv.rfind("run,file,id,experiment,variant,axis.n,axis.density,status,time_s", 0), 0u) << csv.substr(0, 200);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 1 + 18);  // header + 3 n × 3 densities × 2 variants
  EXPECT_TRUE(fs::exists(dir.file("out/ceilings.json")));
}

TEST(ReportCmd, UnsynchronizedRunListsEverySuspectPoint) {
  TempDir dir;
  Json header = gpu_header();
  header["lab"]["timing"] = "unsynchronized";
  std::vector<Json> recs{header};
  for (const char* v : {"a", "b", "c"}) {
    Spec s;
    s.variant = v;
    s.method = "host_clock_unsynchronized";
    s.time_s = 2e-6;
    s.bytes = s.compulsory = 4e8;
    recs.push_back(point(s));
  }
  const std::string in = write_jsonl(dir.file("unsync.jsonl"), recs);
  std::ostringstream out, err;
  ReportOptions o;
  o.plots = false;
  ASSERT_EQ(cmd_report({in}, dir.file("out"), out, err, o), 0) << err.str();
  const std::string md = slurp(dir.file("out/report.md"));
  // One row each in the suspect table, with its reason.
  const std::size_t table = md.find("## Suspect points");
  ASSERT_NE(table, std::string::npos);
  const std::string section = md.substr(table, md.find("\n## ", table + 1) - table);
  for (const char* v : {"| a |", "| b |", "| c |"}) EXPECT_NE(section.find(v), std::string::npos) << section;
  std::size_t rows = 0;
  for (auto p = section.find("\n| "); p != std::string::npos; p = section.find("\n| ", p + 1)) ++rows;
  EXPECT_EQ(rows, 4u) << section;  // the heading row and three points
  EXPECT_NE(md.find("| suspect points | 3"), std::string::npos);
}

TEST(ReportCmd, BadInputNamesTheFile) {
  TempDir dir;
  std::ostringstream out, err;
  ReportOptions o;
  o.plots = false;
  const std::string missing = dir.file("missing.jsonl");
  EXPECT_EQ(cmd_report({missing}, dir.file("out"), out, err, o), 2);
  EXPECT_NE(err.str().find(missing), std::string::npos) << err.str();

  const std::string garbage = dir.file("garbage.jsonl");
  std::ofstream(garbage) << "{\"type\": \"header\"}\nthis is not json\n{}\n";
  err.str("");
  EXPECT_EQ(cmd_report({garbage}, dir.file("out"), out, err, o), 2);
  EXPECT_NE(err.str().find(garbage), std::string::npos) << err.str();

  const std::string untyped = dir.file("untyped.jsonl");
  std::ofstream(untyped) << "{\"variant\": \"a\"}\n";
  err.str("");
  EXPECT_EQ(cmd_report({untyped}, dir.file("out"), out, err, o), 2);
  EXPECT_NE(err.str().find(untyped), std::string::npos) << err.str();

  const std::string empty = dir.file("empty.jsonl");
  std::ofstream{empty};
  err.str("");
  EXPECT_EQ(cmd_report({empty}, dir.file("out"), out, err, o), 2);
  EXPECT_NE(err.str().find(empty), std::string::npos) << err.str();
}

/// Whether a python3 with matplotlib is there to draw plots (on PATH, or /usr/bin/python3).
bool have_matplotlib() {
  for (const char* py : {"python3", "/usr/bin/python3"})
    if (std::system((std::string(py) + " -c 'import matplotlib' >/dev/null 2>&1").c_str()) == 0) return true;
  return false;
}

TEST(ReportCmd, PlotsAreLinkedOnlyWhenDrawn) {
  if (!have_matplotlib()) GTEST_SKIP() << "python3 with matplotlib not available";
  TempDir dir;
  const std::string in = write_jsonl(dir.file("run.jsonl"),
                                     grid(nullptr, [](double n, double) { return n < 5e5 ? 2.0 : 0.5; }));
  std::ostringstream out, err;
  ReportOptions o;
  o.plot_script = std::string(LABRUN_SOURCE_DIR) + "/scripts/plot_report.py";
  ASSERT_EQ(cmd_report({in}, dir.file("out"), out, err, o), 0) << err.str();
  const std::string md = slurp(dir.file("out/report.md"));
  EXPECT_TRUE(fs::exists(dir.file("out/roofline_run0.png"))) << err.str();
  EXPECT_NE(md.find("](roofline_run0.png)"), std::string::npos);
  EXPECT_NE(md.find("](time_vs_n_run0"), std::string::npos);
}

// A result with a replica or seed axis asks for one time plot per combination: --max-plots caps them, the rooflines
// are still drawn, and the report says how many were left out.
TEST(ReportCmd, MaxPlotsCapsTheTimePlotsAndSaysHowManyWereLeftOut) {
  if (!have_matplotlib()) GTEST_SKIP() << "python3 with matplotlib not available";
  TempDir dir;
  std::vector<Json> recs{gpu_header(nullptr)};
  for (const std::int64_t replica : {0, 1, 2, 3, 4, 5})  // 6 values: more than a line style takes, so a split
    for (const std::int64_t n : {100000, 1000000, 10000000})
      for (const char* v : {"a", "b"}) {
        Spec s;
        s.variant = v;
        s.axes = Json{{"n", n}, {"replica", replica}};
        s.time_s = 1e-3 * (1.0 + 0.1 * static_cast<double>(replica));
        s.bytes = s.compulsory = s.flop = 1e7;
        recs.push_back(point(s));
      }
  const std::string in = write_jsonl(dir.file("run.jsonl"), recs);
  auto time_plots = [](const std::string& folder) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(folder)) n += e.path().filename().string().rfind("time_vs_", 0) == 0;
    return n;
  };
  std::ostringstream out, err;
  ReportOptions all;
  all.plot_script = std::string(LABRUN_SOURCE_DIR) + "/scripts/plot_report.py";
  all.max_plots = 0;
  ASSERT_EQ(cmd_report({in}, dir.file("all"), out, err, all), 0) << err.str();
  const std::size_t uncapped = time_plots(dir.file("all"));
  ASSERT_GE(uncapped, 2u) << "the grid should ask for several time plots";
  ReportOptions one = all;
  one.max_plots = 1;
  ASSERT_EQ(cmd_report({in}, dir.file("one"), out, err, one), 0) << err.str();
  EXPECT_EQ(time_plots(dir.file("one")), 1u);
  EXPECT_TRUE(fs::exists(dir.file("one/roofline_run0.png")));
  const std::string md = slurp(dir.file("one/report.md"));
  EXPECT_NE(md.find(std::to_string(uncapped - 1) + " more time plot(s) were not drawn"), std::string::npos) << md;
  EXPECT_NE(err.str().find("not drawn (over --max-plots 1)"), std::string::npos) << err.str();
}

}  // namespace
}  // namespace labrun
