// The cross-point analysis on typed synthetic runs: crossovers along a declared size axis (and along every
// numeric axis without one), host-backend hypothesis verdicts (host_only with the host data's verdict apart),
// and the JSON shim against the typed entry point. The winner, crossover and verdict rules themselves are
// tested in test_interpret.cpp (InterpretAnalyze).
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analysis.hpp"
#include "point_record.hpp"

namespace labrun {
namespace {

// A calibrated GPU header (or the host backend's, which has no ceilings) with optional hypotheses.
RunHeader header(const std::string& backend, Json hypothesis = nullptr) {
  Json h{{"type", "header"}};
  h["config"] = {{"path", "synthetic.yaml"}, {"experiment", "synth"}, {"hypothesis", std::move(hypothesis)}};
  if (backend == "host") {
    h["environment"] = {{"backend", "host"}, {"device", {{"kind", "host"}}}};
    h["calibration"] = {{"backend", "host"}};
  } else {
    h["environment"] = {{"backend", backend}, {"device", {{"name", "Test GPU"}, {"l2_bytes", 6e7}}}};
    h["calibration"] = {{"fp32_fma", {{"flop_per_s", 5e13}}},
                        {"copy", {{"bandwidth_Bps", 4e12}}},
                        {"read", {{"bandwidth_Bps", 4.4e12}}},
                        {"launch", {{"eager_time_s", 4e-6}, {"graph_time_s", 5e-7}}}};
  }
  return header_from_json(h);
}

// An ok point of experiment "synth" timed at `time_s` with a ±1% CI (device events on a GPU, the wall clock on
// the host), moving 1 MB per iteration.
PointRecord point(const std::string& variant, Json axes, double time_s, bool host = false) {
  static int counter = 0;
  PointRecord p;
  p.id = "p" + std::to_string(++counter);
  p.key = "synth/" + variant + "/" + axes.dump();
  p.experiment = "synth";
  p.variant = variant;
  p.axes = std::move(axes);
  p.backend = host ? "host" : "cuda:0";
  p.status = Status::ok;
  p.cost = Cost::of(5e5, 5e5, 1e6, 0, 1, 0);
  Timing t;
  t.mode = "graph";
  t.l2 = "cold";
  t.method = host ? TimingMethod::host_steady_clock : TimingMethod::cuda_events;
  TimeSummary s;
  s.count = 20;
  s.median_time_s = time_s;
  s.ci95_low_time_s = time_s * 0.99;
  s.ci95_high_time_s = time_s * 1.01;
  t.wall = s;
  if (!host) t.device = s;
  t.host_syncs_per_iteration = 0;
  t.time_s = time_s;
  p.timing = t;
  return p;
}

// Variants a and b over size ∈ {1e3, 1e5} × ratio ∈ {0.1, 0.9}: b is 2× faster at the large end of both axes and
// a 2× faster elsewhere, so the time ratio changes sign along size (at ratio 0.9) and along ratio (at size 1e5).
Run crossing_run(const RunHeader& h, bool host = false) {
  Run run;
  run.header = h;
  run.has_header = true;
  for (const std::int64_t size : {1000, 100000})
    for (const double ratio : {0.1, 0.9}) {
      const bool large = size == 100000 && ratio == 0.9;
      const double ta = 1e-3, tb = large ? 0.5e-3 : 2e-3;
      run.points.push_back(point("a", {{"size", size}, {"ratio", ratio}}, ta, host));
      run.points.push_back(point("b", {{"size", size}, {"ratio", ratio}}, tb, host));
    }
  return run;
}

std::vector<Json> along(const Json& analysis, const std::string& axis) {
  std::vector<Json> out;
  for (const auto& x : analysis["crossovers"])
    if (x["axis"] == axis) out.push_back(x);
  return out;
}

TEST(Analysis, CrossoversAlongEveryNumericAxisWithoutASizeAxis) {
  ResultSet set;
  set.runs.push_back(crossing_run(header("cuda:0")));
  const Json a = analyze(set);
  EXPECT_FALSE(along(a, "size").empty());
  EXPECT_FALSE(along(a, "ratio").empty());
  for (const auto& x : a["crossovers"]) EXPECT_EQ(x["size_axis"], false) << x.dump();
  // A size axis declared for another experiment changes nothing here.
  EXPECT_EQ(analyze(set, {{"other", "ratio"}}), a);
}

TEST(Analysis, CrossoversOnlyAlongTheDeclaredSizeAxis) {
  ResultSet set;
  set.runs.push_back(crossing_run(header("cuda:0")));
  const Json a = analyze(set, {{"synth", "size"}});
  ASSERT_FALSE(a["crossovers"].empty());
  for (const auto& x : a["crossovers"]) {
    EXPECT_EQ(x["axis"], "size") << x.dump();
    EXPECT_EQ(x["size_axis"], true) << x.dump();
    EXPECT_EQ(x["fixed"].size(), 1u);  // the slice: ratio fixed
    EXPECT_TRUE(x["fixed"].contains("ratio"));
  }
  // The same crossings as along `size` without a declared axis, apart from the flag.
  const std::vector<Json> plain = along(analyze(set), "size");
  ASSERT_EQ(plain.size(), a["crossovers"].size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    Json x = a["crossovers"][i];
    x["size_axis"] = false;
    EXPECT_EQ(x, plain[i]);
  }
  // Declared, but not varying in the run (or not an axis at all): no crossover along anything else.
  EXPECT_TRUE(analyze(set, {{"synth", "length"}})["crossovers"].empty());
}

Json hypothesis(const std::string& faster, const std::string& than, double by) {
  return Json::array({Json{{"faster", faster}, {"than", than}, {"when", Json::object()}, {"by_at_least", by}}});
}

// a 2× faster than b at every point.
Run uniform_run(const RunHeader& h, bool host, bool with_header = true) {
  Run run;
  run.header = h;
  run.has_header = with_header;
  for (const std::int64_t size : {1000, 10000, 100000}) {
    run.points.push_back(point("a", {{"size", size}}, 1e-3, host));
    run.points.push_back(point("b", {{"size", size}}, 2e-3, host));
  }
  return run;
}

TEST(Analysis, DeviceBackendVerdictIsTheDataVerdict) {
  ResultSet set;
  set.runs.push_back(uniform_run(header("cuda:0", hypothesis("a", "b", 1.5)), false));
  const Json a = analyze(set);
  ASSERT_EQ(a["hypotheses"].size(), 1u);
  const Json& v = a["hypotheses"][0];
  EXPECT_EQ(v["verdict"], "confirmed");
  EXPECT_TRUE(v["host_verdict"].is_null());
  EXPECT_EQ(v["reason"].get<std::string>().find("host"), std::string::npos) << v["reason"];
  EXPECT_EQ(a["runs"][0]["backend"], "cuda:0");
}

TEST(Analysis, HostBackendVerdictIsHostOnly) {
  for (const auto& [by, host_verdict] : {std::pair{1.5, "confirmed"}, std::pair{3.0, "refuted"}}) {
    ResultSet set;
    set.runs.push_back(uniform_run(header("host", hypothesis("a", "b", by)), true));
    const Json a = analyze(set);
    ASSERT_EQ(a["hypotheses"].size(), 1u);
    const Json& v = a["hypotheses"][0];
    EXPECT_EQ(v["verdict"], "host_only") << v.dump();
    EXPECT_EQ(v["host_verdict"], host_verdict) << v.dump();
    const std::string reason = v["reason"];
    EXPECT_NE(reason.find("the timings are the host CPU's and say nothing about the GPU prediction"), std::string::npos)
        << reason;
    EXPECT_NE(reason.find(std::string("the host data alone: ") + host_verdict), std::string::npos) << reason;
    // The counts are still the host data's.
    EXPECT_EQ(v["matched"], 3);
    EXPECT_EQ(v["passed"], by < 2 ? 3 : 0);
    EXPECT_EQ(a["runs"][0]["backend"], "host");
  }
  // No matching point, or a malformed hypothesis: still host_only, with host_verdict inconclusive.
  for (const Json& h : {hypothesis("a", "nope", 1.0), Json::array({Json{{"faster", "a"}}})}) {
    ResultSet set;
    set.runs.push_back(uniform_run(header("host", h), true));
    const Json v = analyze(set)["hypotheses"][0];
    EXPECT_EQ(v["verdict"], "host_only") << v.dump();
    EXPECT_EQ(v["host_verdict"], "inconclusive") << v.dump();
  }
}

TEST(Analysis, PointsWithoutAHeaderTakeTheirOwnBackend) {
  // Host points before any header: no header backend, but every point says host. (They have no hypothesis
  // either, so only the run's backend shows it.)
  ResultSet set;
  set.runs.push_back(uniform_run(RunHeader{}, true, false));
  EXPECT_EQ(analyze(set)["runs"][0]["backend"], "host");
  // Mixed backends: none.
  labrun::Run mixed = uniform_run(RunHeader{}, true, false);
  mixed.points.push_back(point("c", {{"size", 1000}}, 1e-3, false));
  ResultSet two;
  two.runs.push_back(mixed);
  EXPECT_EQ(analyze(two)["runs"][0]["backend"], "");
}

TEST(Analysis, JsonShimEqualsTypedAnalysis) {
  ResultSet set;
  set.runs.push_back(crossing_run(header("cuda:0", hypothesis("a", "b", 1.5))));
  set.runs.push_back(uniform_run(header("host", hypothesis("a", "b", 1.5)), true));
  std::vector<Json> records;
  for (const auto& run : set.runs) {
    records.push_back(to_json(run.header));
    for (const auto& p : run.points) records.push_back(to_json(p));
  }
  const std::map<std::string, std::string> sizes{{"synth", "size"}};
  EXPECT_EQ(analyze(records, sizes), analyze(set, sizes));
  EXPECT_EQ(analyze(records), analyze(set));
  // Records the loader would reject still analyze: a point with a malformed timing takes part without a time.
  Json bad = records[1];
  bad["timing"] = "fast";
  records.push_back(Json{{"type", "note"}});
  records.push_back(bad);
  Json a;
  ASSERT_NO_THROW(a = analyze(records));
  EXPECT_EQ(a["runs"][1]["points"], set.runs[1].points.size() + 1);
}

}  // namespace
}  // namespace labrun
