// Tests of labrun diff: the verdicts on seeded synthetic samples (lognormal noise), the process and host gates,
// the A/A false-slower rate (C15), non-finite samples (C14), environment warnings, the JSON / table / markdown
// outputs, and cmd_diff's exit codes on files. The statistics themselves are tested in test_stats.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numbers>
#include <optional>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "commands.hpp"
#include "diff.hpp"
#include "point_record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;

// ---- Synthetic records ------------------------------------------------------------------------------------------

/// n times (seconds) around `median` with lognormal noise of log-sd `sigma`.
std::vector<double> lognormal(std::mt19937_64& rng, std::size_t n, double median, double sigma) {
  std::lognormal_distribution<double> dist(std::log(median), sigma);
  std::vector<double> out(n);
  for (double& v : out) v = dist(rng);
  return out;
}

Json header(const std::string& gpu = "NVIDIA H200", double copy_bandwidth_Bps = 4.2e12) {
  return Json{{"type", "header"},
              {"schema_version", 1},
              {"lab", {{"min_samples", 10}}},
              {"environment",
               {{"labrun", {{"build_type", "Release"}}},
                {"device", {{"name", gpu}, {"driver_version", "580.159.04"}, {"runtime_version", "13.0"}}}}},
              {"calibration", {{"copy", {{"bandwidth_Bps", copy_bandwidth_Bps}}}}}};
}

/// Point `name` of experiment "exp": key "exp/v/i=NAME", and the id of that key (test::id_of).
Json point(const std::string& name, const std::vector<double>& samples_s, const std::string& status = "ok",
           double sm_clock_hz = 1.98e9) {
  const std::string key = "exp/v/i=" + name;
  Json p{{"type", "point"},
         {"id", test::id_of(key)},
         {"key", key},
         {"experiment", "exp"},
         {"variant", "v"},
         {"axes", {{"i", name}}},
         {"status", status},
         {"device_state", {{"before", {{"sm_clock_hz", sm_clock_hz}}}, {"after", {{"sm_clock_hz", sm_clock_hz}}}}}};
  if (status == "ok") {
    Json samples = Json::array();
    for (double s : samples_s) samples.push_back(json_real(s));
    p["timing"] = Json{{"time_s", json_real(samples_s.empty() ? 0.0 : samples_s.front())},
                       {"device_samples_s", samples},
                       {"wall_samples_s", samples}};
  }
  return p;
}

/// The runs of `records` as load_results() groups the lines of one file: a header starts a run, and points
/// before any header form one without a header.
std::vector<Run> runs_of(const std::vector<Json>& records) {
  std::vector<Run> runs;
  for (const Json& r : records) {
    if (r["type"] == "header") {
      runs.push_back(Run{"test.jsonl", header_from_json(r), true, {}});
    } else {
      if (runs.empty()) runs.push_back(Run{"test.jsonl", RunHeader{Json{{"type", "header"}}}, false, {}});
      runs.back().points.push_back(point_from_json(r));
    }
  }
  return runs;
}

/// diff_results() of two lists of record lines, as the --format json object.
Json diff_json(const std::vector<Json>& base, const std::vector<Json>& current, const DiffOptions& o) {
  return to_json(diff_results(runs_of(base), runs_of(current), o));
}

/// "p<i>", built by appending: GCC 12 gives a false -Wrestrict on "p" + std::to_string(i) at -O3.
std::string point_id(int i) {
  std::string id = "p";
  id += std::to_string(i);
  return id;
}

/// Diff of one point: base samples vs new samples.
Json diff_one(const std::vector<double>& base, const std::vector<double>& current, const DiffOptions& o = {}) {
  return diff_json({header(), point("p", base)}, {header(), point("p", current)}, o);
}

std::string verdict_of(const Json& diff, std::size_t i = 0) { return diff["points"][i]["verdict"].get<std::string>(); }

/// A fresh directory under the system temp dir, removed with its contents at scope exit.
class TempDir {
 public:
  TempDir() {
    path_ = fs::temp_directory_path() /
            ("labrun_diff_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path_);
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string file(const std::string& name, const std::vector<Json>& records) const {
    const std::string p = (path_ / name).string();
    std::ofstream out(p);
    for (const auto& r : records) out << r.dump() << "\n";
    return p;
  }
  std::string path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

// Pooled lab.processes records: a sample-level +10% that the processes' medians do not show (they overlap:
// 1.00/1.20/0.90 vs 1.10/0.95/1.25) is inconclusive; the same samples with separated process medians are slower.
TEST(DiffVerdict, ProcessGateOnPooledRecords) {
  std::mt19937_64 rng(12);
  auto pooled = [](Json p, const std::vector<double>& medians) {
    Json m = Json::array();
    for (double x : medians) m.push_back(json_real(x));
    p["timing"]["processes"] = {{"count", medians.size()}, {"time_s", m}};
    return p;
  };
  const auto base = lognormal(rng, 60, 1.0e-3, 0.005), current = lognormal(rng, 60, 1.1e-3, 0.005);
  const Json overlap = diff_json({header(), pooled(point("p", base), {1.00e-3, 1.20e-3, 0.90e-3})},
                                 {header(), pooled(point("p", current), {1.10e-3, 0.95e-3, 1.25e-3})}, {});
  EXPECT_EQ(verdict_of(overlap), "inconclusive");
  EXPECT_NE(overlap["points"][0]["reason"].get<std::string>().find("processes' medians do not differ"),
            std::string::npos);
  EXPECT_GT(real_from_json(overlap["points"][0]["process_p"]), 0.05);
  const Json apart = diff_json({header(), pooled(point("p", base), {1.00e-3, 1.01e-3, 0.99e-3})},
                               {header(), pooled(point("p", current), {1.10e-3, 1.11e-3, 1.09e-3})}, {});
  EXPECT_EQ(verdict_of(apart), "slower");
  EXPECT_LT(real_from_json(apart["points"][0]["process_p"]), 0.05);
  // Without process medians on both sides the gate does not apply.
  EXPECT_EQ(verdict_of(
                diff_json({header(), point("p", base)}, {header(), pooled(point("p", current), {1.1e-3, 1.1e-3})}, {})),
            "slower");
}

// Host-sensitive pooled points with host probes (timing.processes.host_probe_time_s): the gate compares each
// process's median per host round trip. Numbers shaped on the H200's eager `index` (docs/metrics.md, "Host probe"):
// a ~40 us iteration that is ~3 host round trips of ~12 us, one process in three with a host 50-60% slower.
TEST(DiffVerdict, HostAdjustedProcessGate) {
  std::mt19937_64 rng(21);
  // A point of `host_s` host work scaled by each process's host factor plus `gpu_s`; probe 12 us x factor.
  auto pooled = [&](const std::string& id, const std::vector<double>& host_factor, double host_s, double gpu_s) {
    std::vector<double> samples, medians;
    Json m = Json::array(), probes = Json::array();
    for (double f : host_factor) {
      const double t = host_s * f + gpu_s;
      for (double x : lognormal(rng, 20, t, 0.01)) samples.push_back(x);
      m.push_back(json_real(t));
      probes.push_back(json_real(12e-6 * f));
    }
    Json p = point(id, samples);
    p["timing"]["method"] = "cuda_events+synchronized_wall";
    p["interpretation"] = {{"bound", "sync"}};
    p["timing"]["processes"] = {{"count", host_factor.size()}, {"time_s", m}, {"host_probe_time_s", probes}};
    return p;
  };
  const std::vector<double> base_host = {1.00, 1.60, 0.90}, new_host = {1.10, 0.95, 1.50};
  // 1. A 20 us GPU delay on top of host drift: the raw process medians overlap, per probe they do not.
  const Json delay = diff_json({header(), pooled("p", base_host, 36e-6, 4e-6)},
                               {header(), pooled("p", new_host, 36e-6, 24e-6)}, {});
  EXPECT_EQ(verdict_of(delay), "slower") << delay["points"][0].dump();
  EXPECT_LT(real_from_json(delay["points"][0]["host_adjusted"]["per_probe_p"]), 0.05 / 3);
  EXPECT_GT(real_from_json(delay["points"][0]["process_p"]), 0.05);
  // The raw medians alone would not have shown it.
  const auto raw = [](const Json& p) {
    std::vector<double> v;
    for (const auto& x : p["timing"]["processes"]["time_s"]) v.push_back(real_from_json(x));
    return v;
  };
  const Json b1 = pooled("q", base_host, 36e-6, 4e-6), n1 = pooled("q", new_host, 36e-6, 24e-6);
  EXPECT_GT(welch_log_test(raw(b1), raw(n1)).p_value, 0.05);

  // 2. Same code, the new side's host about 10% slower, the sides' probes overlapping (the host difference lies
  // within the speeds the processes saw): with the host's speed taken out by covariance (the medians follow the
  // probes exactly here) the change is nil: same.
  const Json host_only = diff_json({header(), pooled("p", {1.00, 1.12, 0.95}, 36e-6, 4e-6)},
                                   {header(), pooled("p", {1.08, 1.18, 1.10}, 36e-6, 4e-6)}, {});
  EXPECT_EQ(verdict_of(host_only), "same") << host_only["points"][0].dump();
  EXPECT_NEAR(real_from_json(host_only["points"][0]["host_adjusted"]["adjusted_ratio"]), 1.0, 0.01);
  EXPECT_NEAR(real_from_json(host_only["points"][0]["host_adjusted"]["probe_ratio"]), 1.096, 0.01);
  EXPECT_EQ(host_only["points"][0]["host_adjusted"]["probes_overlap"], true);
  EXPECT_EQ(host_only["points"][0]["gate"], "host_adjusted");
  // The host 15% slower in every process, the probes apart: the slope would be extrapolated beyond any host speed
  // observed, so the elasticity is taken anywhere in [0, 1] and a host-only change cannot be told from none:
  // inconclusive, naming the range; never slower.
  const Json apart = diff_json({header(), pooled("p", {1.00, 1.02, 0.99}, 36e-6, 4e-6)},
                               {header(), pooled("p", {1.15, 1.17, 1.14}, 36e-6, 4e-6)}, {});
  EXPECT_EQ(verdict_of(apart), "inconclusive") << apart["points"][0].dump();
  EXPECT_EQ(apart["points"][0]["host_adjusted"]["probes_overlap"], false);
  EXPECT_NE(apart["points"][0]["reason"].get<std::string>().find("the elasticity is taken anywhere in [0.00, 1."),
            std::string::npos)
      << apart["points"][0]["reason"];
  // The same hosts with medians that do not follow the probes: the elasticity is uncertain and the interval, which
  // carries it across the 15% host difference, is too wide to call: inconclusive, naming the host difference.
  Json noisy_b = pooled("p", {1.00, 1.02, 0.99}, 36e-6, 4e-6), noisy_n = pooled("p", {1.15, 1.17, 1.14}, 36e-6, 4e-6);
  noisy_b["timing"]["processes"]["time_s"] = {json_real(40e-6), json_real(39e-6), json_real(41e-6)};
  noisy_n["timing"]["processes"]["time_s"] = {json_real(45e-6), json_real(47e-6), json_real(44e-6)};
  const Json noisy = diff_json({header(), noisy_b}, {header(), noisy_n}, {});
  EXPECT_EQ(verdict_of(noisy), "inconclusive") << noisy["points"][0].dump();
  EXPECT_NE(noisy["points"][0]["reason"].get<std::string>().find("the hosts differ (host probe +15.0%"),
            std::string::npos)
      << noisy["points"][0]["reason"];
  EXPECT_NE(noisy["points"][0]["reason"].get<std::string>().find("with the host's speed taken out the change is"),
            std::string::npos)
      << noisy["points"][0]["reason"];

  // 3. A host slowdown on a point with a large GPU share moves the ratio per probe the other way; by covariance
  // (the hosts differ by 14%, the probes overlapping) the host's speed is taken out at the elasticity measured
  // (~0.5): same, never slower.
  const Json mixed = diff_json({header(), pooled("p", {1.00, 1.20, 0.90}, 40e-6, 40e-6)},
                               {header(), pooled("p", {1.15, 1.35, 1.10}, 40e-6, 40e-6)}, {});
  EXPECT_EQ(verdict_of(mixed), "same") << mixed["points"][0].dump();
  // The same with the hosts 30% apart and no overlap: never slower, and not same either (the elasticity beyond the
  // observed hosts could be anything in [0, 1]).
  const Json mixed_apart = diff_json({header(), pooled("p", {1.00, 1.01, 0.99}, 40e-6, 40e-6)},
                                     {header(), pooled("p", {1.30, 1.31, 1.29}, 40e-6, 40e-6)}, {});
  EXPECT_EQ(verdict_of(mixed_apart), "inconclusive") << mixed_apart["points"][0].dump();
  EXPECT_LT(real_from_json(mixed_apart["points"][0]["process_p"]), 0.05) << "the raw medians alone would call it";
  EXPECT_LT(real_from_json(mixed_apart["points"][0]["host_adjusted"]["per_probe_ratio"]), 1.0);
  EXPECT_NEAR(real_from_json(mixed_apart["points"][0]["host_adjusted"]["covariate_ratio"]), 1.0, 0.02);

  // 4. A 30 us delay on a GPU-heavy host-sensitive point (180 us of GPU work), the host drifting within each
  // side: the raw medians differ clearly; per probe the change is noisier, by covariance it is clean: slower.
  const Json gpu_heavy = diff_json({header(), pooled("p", {1.0, 1.3, 0.9}, 36e-6, 180e-6)},
                                   {header(), pooled("p", {1.0, 1.3, 0.9}, 36e-6, 210e-6)}, {});
  EXPECT_EQ(verdict_of(gpu_heavy), "slower") << gpu_heavy["points"][0].dump();
  EXPECT_GT(real_from_json(gpu_heavy["points"][0]["host_adjusted"]["per_probe_ratio"]), 1.05);
  EXPECT_LT(real_from_json(gpu_heavy["points"][0]["host_adjusted"]["elasticity"]), 0.3);

  // 5. Not host-sensitive (blocked, memory-bound): the probes are not used, the raw medians decide.
  Json blocked_b = pooled("p", base_host, 36e-6, 4e-6), blocked_n = pooled("p", new_host, 36e-6, 24e-6);
  for (Json* p : {&blocked_b, &blocked_n}) (*p)["interpretation"]["bound"] = "memory";
  const Json not_host = diff_json({header(), blocked_b}, {header(), blocked_n}, {});
  EXPECT_TRUE(not_host["points"][0]["host_adjusted"].is_null());
  EXPECT_EQ(verdict_of(not_host), "inconclusive");
}

// Across hosts (issue: the diff holds when the host changes): synthetic pooled runs as the H200's masking sweep
// makes them, 5 processes a side and 100 samples a process, the host's speed varying +-5% between processes and
// +-2% between samples; every sample's probe moves with the host, a host-sensitive point's time with the host's
// speed to the power 1.3 (its elasticity; the probe measures one sync round trip, the point spends more host time
// than that), the others not at all. The new side's host is 20% slower.
/// Point `i` pooled from processes (timing.processes): its samples, and each process's median and host probe
/// (seconds); host-sensitive (sync-bound, timed live) or memory-bound and blocked.
Json pooled_point(int i, const std::vector<double>& samples, const std::vector<double>& medians,
                  const std::vector<double>& probes, bool host_sensitive) {
  Json p = point(point_id(i), samples);
  Json m = Json::array(), pr = Json::array();
  for (std::size_t k = 0; k < medians.size(); ++k)
    m.push_back(json_real(medians[k])), pr.push_back(json_real(probes[k]));
  p["timing"]["method"] = host_sensitive ? "cuda_events+synchronized_wall" : "cuda_events";
  p["interpretation"] = {{"bound", host_sensitive ? "sync" : "memory"}};
  p["timing"]["processes"] = {{"count", medians.size()}, {"time_s", m}, {"host_probe_time_s", pr}};
  return p;
}

struct CrossHostRun {
  std::vector<Json> base, current;
  std::vector<bool> host_sensitive, changed;
};
CrossHostRun cross_host_runs(std::uint64_t seed, double changed_fraction, double change) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> between(-0.05, 0.05), within(-0.02, 0.02), noise(-0.003, 0.003);
  std::uniform_real_distribution<double> u(0, 1);
  CrossHostRun r;
  r.base.push_back(header());
  r.current.push_back(header());
  const int points = 60;
  for (int i = 0; i < points; ++i) {
    const bool hs = i % 2 == 0;  // half host-sensitive (sync-bound, timed live), half memory-bound and blocked
    const bool changed = hs && u(rng) < changed_fraction;
    r.host_sensitive.push_back(hs);
    r.changed.push_back(changed);
    const double t0 = 20e-6 * (1 + i % 7);
    for (int side = 0; side < 2; ++side) {
      const double host_slow = side == 1 ? 1.2 : 1.0, code = side == 1 && changed ? 1 + change : 1.0;
      std::vector<double> samples, medians, probes;
      for (int proc = 0; proc < 5; ++proc) {
        const double h = host_slow * (1 + between(rng));
        std::vector<double> ts, ps;
        for (int k = 0; k < 100; ++k) {
          const double hk = h * (1 + within(rng));
          ts.push_back(t0 * code * (hs ? std::pow(hk, 1.3) : 1.0) * (1 + noise(rng)));
          ps.push_back(12e-6 * hk);
        }
        samples.insert(samples.end(), ts.begin(), ts.end());
        auto median = [](std::vector<double> v) {
          std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
          return v[v.size() / 2];
        };
        medians.push_back(median(ts));
        probes.push_back(median(ps));
      }
      (side == 0 ? r.base : r.current).push_back(pooled_point(i, samples, medians, probes, hs));
    }
  }
  return r;
}

// A host 20% slower and no change in the code: no point slower or faster, exit 0 under --fail-on any (three seeds).
TEST(DiffAcrossHosts, ASlowerHostAloneGivesNoSlowerOrFaster) {
  DiffOptions o;
  o.fail_on = DiffOptions::FailOn::any;
  for (std::uint64_t seed : {1u, 2u, 3u}) {
    const CrossHostRun r = cross_host_runs(seed, 0.0, 0.0);
    const DiffResult d = diff_results(runs_of(r.base), runs_of(r.current), o);
    const Json j = to_json(d);
    int host_same = 0;
    for (std::size_t i = 0; i < r.host_sensitive.size(); ++i) {
      const std::string v = verdict_of(j, i);
      EXPECT_TRUE(v == "same" || v == "inconclusive")
          << "seed " << seed << " point " << i << ": " << v << " " << j["points"][i].dump();
      if (r.host_sensitive[i]) {
        EXPECT_EQ(j["points"][i]["gate"], "host_adjusted") << j["points"][i].dump();
        EXPECT_NEAR(real_from_json(j["points"][i]["host_adjusted"]["probe_ratio"]), 1.2, 0.1);
        EXPECT_NEAR(real_from_json(j["points"][i]["host_adjusted"]["slope"]), 1.3, 0.3);
        host_same += v == "same";
        // The sides' probes lie apart (20% against +-5%): the elasticity beyond them is a range, so a host-only
        // change is withheld, with the range said, rather than called same on an extrapolated slope.
        if (v == "inconclusive")
          EXPECT_NE(j["points"][i]["reason"].get<std::string>().find("the elasticity is taken anywhere in ["),
                    std::string::npos)
              << j["points"][i]["reason"];
      }
    }
    EXPECT_FALSE(d.regression) << "seed " << seed;
    // Said once, first: the host difference the probes measured, and the JSON carries it.
    ASSERT_FALSE(d.warnings.empty());
    EXPECT_EQ(d.warnings.front().rfind("HOSTS DIFFER: the host probe (one sync round trip) reads +", 0), 0u)
        << d.warnings.front();
    EXPECT_NEAR(real_from_json(j["hosts"]["probe_ratio"]), 1.2, 0.1);
    EXPECT_EQ(j["hosts"]["probed_points"], 30);
    EXPECT_EQ(j["hosts"]["differ_points"], 30);
    std::printf("seed %llu: %d of 30 host-sensitive points same\n", static_cast<unsigned long long>(seed), host_same);
  }
}

// The same, plus a +15% change of the code on 10% of the host-sensitive points: those points slower in at least 90%
// of cases over the three seeds, and no other point slower or faster.
TEST(DiffAcrossHosts, ATrueChangeOnASlowerHostIsStillFound) {
  DiffOptions o;
  o.fail_on = DiffOptions::FailOn::any;
  int changed = 0, found = 0;
  for (std::uint64_t seed : {11u, 12u, 13u}) {
    const CrossHostRun r = cross_host_runs(seed, 0.1, 0.15);
    const Json j = to_json(diff_results(runs_of(r.base), runs_of(r.current), o));
    for (std::size_t i = 0; i < r.changed.size(); ++i) {
      const std::string v = verdict_of(j, i);
      if (r.changed[i]) {
        ++changed;
        found += v == "slower";
        EXPECT_NE(v, "faster");
        EXPECT_NE(v, "same");
      } else {
        EXPECT_TRUE(v == "same" || v == "inconclusive") << "seed " << seed << " point " << i << ": " << v;
      }
    }
  }
  ASSERT_GT(changed, 0);
  std::printf("%d of %d changed host-sensitive points slower\n", found, changed);
  EXPECT_GE(found, 0.9 * changed) << found << " of " << changed << " changed points found";
}

// A change at the minimum effect itself (+5% on every host-sensitive point) cannot be called either way across the
// hosts: inconclusive, and the reason names the host difference and the change that would have been called.
TEST(DiffAcrossHosts, AWithheldVerdictNamesTheHostDifference) {
  const CrossHostRun r = cross_host_runs(7, 1.0, 0.05);
  const Json j = to_json(diff_results(runs_of(r.base), runs_of(r.current), {}));
  int named = 0;
  for (std::size_t i = 0; i < r.host_sensitive.size(); ++i) {
    if (!r.host_sensitive[i] || verdict_of(j, i) != "inconclusive") continue;
    const std::string reason = j["points"][i]["reason"].get<std::string>();
    named += reason.find("the hosts differ (host probe +") != std::string::npos &&
             reason.find("with the host's speed taken out the change is") != std::string::npos &&
             reason.find("would have been called") != std::string::npos;
  }
  EXPECT_GT(named, 5) << j["points"][0].dump();
}

// Case C24 across hosts, the launch path moved past its processes' spread while the probes overlap, as measured
// between two H100 hosts (results/h100/fleet/: host probe +13-18% with the sides' probes overlapping, calibrated
// eager launch +28%; eager `index` at n = 1e7 moved +20-29% raw and +12-19% with the probe's fitted slope of
// 0.45-0.5 taken out, and was `slower`). Here 12 processes a side; each process's host speed (its probe) and launch
// path (its calibrated eager launch) vary +-8% apart; a point's time moves with the square root of the one and the
// launch to the power 0.8. The new host: probe +10%, launch +28%, no change in the code. With each process's
// calibration the launch reads as moved (launch_moved) and no point is slower; the same records without them are.
TEST(DiffAcrossHosts, C24_ALaunchPathThatMovedPastItsProcessesIsNotASlowerPoint) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> spread(-0.08, 0.08), noise(-0.003, 0.003);
  constexpr int kProcesses = 12, kPoints = 20;
  auto side = [&](double host, double launch, bool calibrations) {
    std::vector<double> h(kProcesses), l(kProcesses);
    Json runs = Json::array();
    for (int k = 0; k < kProcesses; ++k) {
      h[k] = host * (1 + spread(rng));
      l[k] = launch * (1 + spread(rng));
      runs.push_back({{"index", k + 1}, {"calibration", {{"launch", {{"eager_time_s", 3.5e-6 * l[k]}}}}}});
    }
    Json head = header("NVIDIA H100 80GB HBM3");
    head["calibration"]["launch"] = {{"eager_time_s", 3.5e-6 * launch}};
    if (calibrations) head["processes"] = {{"count", kProcesses}, {"runs", runs}};
    std::vector<Json> records{head};
    for (int i = 0; i < kPoints; ++i) {
      std::vector<double> samples, medians, probes;
      for (int k = 0; k < kProcesses; ++k) {
        const double t = 60e-6 * (1 + 0.1 * i) * std::sqrt(h[k]) * std::pow(l[k], 0.8);
        for (int s = 0; s < 20; ++s) samples.push_back(t * (1 + noise(rng)));
        medians.push_back(t);
        probes.push_back(12e-6 * h[k]);
      }
      records.push_back(pooled_point(i, samples, medians, probes, true));
    }
    return records;
  };
  DiffOptions o;
  o.fail_on = DiffOptions::FailOn::any;
  for (const bool calibrations : {true, false}) {
    rng.seed(42);
    const std::vector<Json> base = side(1.0, 1.0, calibrations), current = side(1.10, 1.28, calibrations);
    const DiffResult d = diff_results(runs_of(base), runs_of(current), o);
    const Json j = to_json(d);
    int slower = 0, overlap = 0, moved = 0;
    for (int i = 0; i < kPoints; ++i) {
      const Json& h = j["points"][i]["host_adjusted"];
      ASSERT_TRUE(h.is_object()) << j["points"][i].dump();
      slower += verdict_of(j, i) == "slower";
      overlap += h["probes_overlap"].get<bool>();
      moved += h["launch_moved"].get<bool>();
      EXPECT_NE(verdict_of(j, i), "faster");
      if (calibrations && verdict_of(j, i) == "inconclusive")
        EXPECT_NE(j["points"][i]["reason"].get<std::string>().find("the calibrated eager launch moved +28.0%"),
                  std::string::npos)
            << j["points"][i]["reason"];
    }
    EXPECT_EQ(overlap, kPoints) << "the probes overlap, as on the fleet's hosts";
    if (calibrations) {
      EXPECT_EQ(moved, kPoints);
      EXPECT_EQ(slower, 0);
      EXPECT_FALSE(d.regression);
    } else {
      EXPECT_EQ(moved, 0);
      EXPECT_GT(slower, kPoints / 2) << "without the processes' calibrations the launch path is not seen";
    }
  }
}

// The gates never fail open: a timing.processes block that cannot be used (a bad entry, too few processes, probes
// that do not pair one to one with the processes) makes the point inconclusive with the reason; a host-sensitive
// point compared without probes on a side, or against an unpooled record, is said so in a warning; a withheld
// verdict's reason names the condition that failed.
TEST(DiffVerdict, ProcessGatesNeverFailOpen) {
  std::mt19937_64 rng(5);
  auto pooled = [&](const std::string& id, double t, const std::vector<double>& medians,
                    const std::optional<std::vector<double>>& probes) {
    Json p = point(id, lognormal(rng, 40, t, 0.005));
    p["timing"]["method"] = "cuda_events+synchronized_wall";
    p["interpretation"] = {{"bound", "sync"}};
    Json m = Json::array();
    for (double x : medians) m.push_back(json_real(x));
    p["timing"]["processes"] = {{"count", medians.size()}, {"time_s", m}};
    if (probes) {
      Json h = Json::array();
      for (double x : *probes) h.push_back(json_real(x));
      p["timing"]["processes"]["host_probe_time_s"] = h;
    }
    return p;
  };
  const std::vector<double> probes = {12e-6, 12e-6, 12e-6};
  const Json base = pooled("p", 50e-6, {50e-6, 50.5e-6, 49.5e-6}, probes);
  // A NaN process median: never dropped (it would misalign times and probes): inconclusive, with the reason.
  Json nan_median = pooled("p", 60e-6, {60e-6, 60e-6, 60e-6}, probes);
  nan_median["timing"]["processes"]["time_s"][1] = "NaN";
  Json d = diff_json({header(), base}, {header(), nan_median}, {});
  EXPECT_EQ(verdict_of(d), "inconclusive");
  EXPECT_NE(d["points"][0]["reason"].get<std::string>().find("new: timing.processes.time_s entry 1"), std::string::npos)
      << d["points"][0]["reason"];
  // Probes that do not pair with the processes.
  d = diff_json({header(), base},
                {header(), pooled("p", 60e-6, {60e-6, 60e-6, 60e-6}, std::vector<double>{12e-6, 12e-6})}, {});
  EXPECT_EQ(verdict_of(d), "inconclusive");
  EXPECT_NE(d["points"][0]["reason"].get<std::string>().find("holds 2 probes for 3 processes"), std::string::npos);
  // A zero probe, and one process only.
  d = diff_json({header(), base},
                {header(), pooled("p", 60e-6, {60e-6, 60e-6, 60e-6}, std::vector<double>{12e-6, 0, 12e-6})}, {});
  EXPECT_NE(d["points"][0]["reason"].get<std::string>().find("host_probe_time_s entry 1"), std::string::npos);
  d = diff_json({header(), base}, {header(), pooled("p", 60e-6, {60e-6}, std::nullopt)}, {});
  EXPECT_NE(d["points"][0]["reason"].get<std::string>().find("pooling needs 2 or more"), std::string::npos);

  // One side without probes (a run from before the probe): the raw process gate, and a warning.
  d = diff_json({header(), base}, {header(), pooled("p", 60e-6, {60e-6, 60.3e-6, 59.7e-6}, std::nullopt)}, {});
  EXPECT_EQ(verdict_of(d), "slower");
  EXPECT_EQ(d["points"][0]["gate"], "processes");
  ASSERT_EQ(d["environment"]["warnings"].size(), 1u);
  EXPECT_NE(d["environment"]["warnings"][0].get<std::string>().find("1 without host probes on a side"),
            std::string::npos);
  // Against an unpooled record: the samples alone, and two warnings (half pooled; host-sensitive unpooled).
  Json unpooled = pooled("p", 60e-6, {60e-6, 60e-6}, std::nullopt);
  unpooled["timing"].erase("processes");
  d = diff_json({header(), base}, {header(), unpooled}, {});
  EXPECT_EQ(d["points"][0]["gate"], "samples");
  EXPECT_EQ(d["environment"]["warnings"].size(), 2u) << d["environment"]["warnings"].dump();

  // Withheld for significance only: the effect holds per probe and by covariance (+20%), but two processes a
  // side with wide spread leave every Welch p above alpha / 3.
  const Json wide_b = pooled("p", 50e-6, {40e-6, 60e-6}, std::vector<double>{12e-6, 12e-6});
  const Json wide_n = pooled("p", 60e-6, {48e-6, 72e-6}, std::vector<double>{12e-6, 12e-6});
  d = diff_json({header(), wide_b}, {header(), wide_n}, {});
  ASSERT_EQ(verdict_of(d), "inconclusive") << d["points"][0].dump();
  const std::string reason = d["points"][0]["reason"].get<std::string>();
  EXPECT_EQ(reason.find("minimum effect"), std::string::npos) << reason;
  EXPECT_NE(reason.find("do not differ enough"), std::string::npos) << reason;
}

TEST(DiffOptionsParse, ParsePercentAndFailOn) {
  EXPECT_DOUBLE_EQ(parse_percent("5%"), 0.05);
  EXPECT_DOUBLE_EQ(parse_percent("0.05"), 0.05);
  EXPECT_DOUBLE_EQ(parse_percent("0.5%"), 0.005);
  EXPECT_DOUBLE_EQ(parse_percent("150%"), 1.5);
  EXPECT_EQ(parse_percent("0"), 0.0);
  for (const char* bad : {"", "%", "5", "-5%", "five", "5 %", " 5%", "5%%", "nan", "inf%", "0.05x"})
    EXPECT_THROW(parse_percent(bad), std::invalid_argument) << bad;
  EXPECT_EQ(parse_fail_on("any"), DiffOptions::FailOn::any);
  EXPECT_EQ(parse_fail_on("slower"), DiffOptions::FailOn::slower);
  EXPECT_THROW(parse_fail_on("faster"), std::invalid_argument);
}

// ---- Verdicts -----------------------------------------------------------------------------------------------------

TEST(DiffVerdict, IdenticalDistributionsAreSame) {
  std::mt19937_64 rng(1);
  const Json d = diff_one(lognormal(rng, 50, 1e-3, 0.02), lognormal(rng, 50, 1e-3, 0.02));
  EXPECT_EQ(verdict_of(d), "same");
  EXPECT_FALSE(d["regression"].get<bool>());
  EXPECT_EQ(d["summary"]["same"], 1);
  EXPECT_EQ(d["points"][0]["base_n"], 50);
}

TEST(DiffVerdict, TenPercentSlowerWithLowNoiseIsSlower) {
  std::mt19937_64 rng(2);
  const Json d = diff_one(lognormal(rng, 30, 1e-3, 0.01), lognormal(rng, 30, 1.1e-3, 0.01));
  EXPECT_EQ(verdict_of(d), "slower");
  EXPECT_TRUE(d["regression"].get<bool>());
  const Json& p = d["points"][0];
  EXPECT_NEAR(p["ratio"].get<double>(), 1.1, 0.01);
  EXPECT_GT(p["ratio_ci_low"].get<double>(), 1.05);
  EXPECT_LT(p["p_adjusted"].get<double>(), 1e-6);
  // The mirror image is faster, and faster is never a regression.
  std::mt19937_64 rng2(2);
  const std::vector<double> slow = lognormal(rng2, 30, 1e-3, 0.01), fast = lognormal(rng2, 30, 1.1e-3, 0.01);
  const Json f = diff_one(fast, slow);
  EXPECT_EQ(verdict_of(f), "faster");
  EXPECT_FALSE(f["regression"].get<bool>());
}

TEST(DiffVerdict, TwoPercentBelowFivePercentMinEffectIsSame) {
  std::mt19937_64 rng(3);
  DiffOptions o;
  o.min_effect = 0.05;
  const Json d = diff_one(lognormal(rng, 30, 1e-3, 0.01), lognormal(rng, 30, 1.02e-3, 0.01), o);
  EXPECT_EQ(verdict_of(d), "same");
  EXPECT_LT(d["points"][0]["p_adjusted"].get<double>(), 0.05);  // significant, yet below the minimum effect
}

TEST(DiffVerdict, ThreeSamplesEachAreInconclusive) {
  std::mt19937_64 rng(4);
  const Json d = diff_one(lognormal(rng, 3, 1e-3, 0.01), lognormal(rng, 3, 1.1e-3, 0.01));
  EXPECT_EQ(verdict_of(d), "inconclusive");
  EXPECT_FALSE(d["regression"].get<bool>());
  EXPECT_EQ(d["points"][0]["ratio_ci_high"], "Infinity");
  const Json two = diff_one({1e-3, 1e-3}, {2e-3, 2e-3});
  EXPECT_EQ(verdict_of(two), "inconclusive");
  EXPECT_NE(two["points"][0]["reason"].get<std::string>().find("fewer than 3 samples"), std::string::npos);
}

TEST(DiffVerdict, NoisierThanTheEffectIsInconclusive) {
  std::mt19937_64 rng(5);
  const Json d = diff_one(lognormal(rng, 10, 1e-3, 0.2), lognormal(rng, 10, 1.05e-3, 0.2));
  EXPECT_EQ(verdict_of(d), "inconclusive");
  EXPECT_NE(d["points"][0]["reason"].get<std::string>().find("crosses"), std::string::npos);
}

// C14: "NaN" and "Infinity" samples are read (json_real's encoding) and give inconclusive with a reason.
TEST(DiffVerdict, C14_NonFiniteSamplesAreInconclusive) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  const std::vector<double> good = {1e-3, 1.1e-3, 0.9e-3, 1e-3, 1.05e-3};
  for (double bad : {nan, inf}) {
    std::vector<double> with_bad = good;
    with_bad[2] = bad;
    Json d;
    ASSERT_NO_THROW(d = diff_one(good, with_bad));
    EXPECT_EQ(verdict_of(d), "inconclusive");
    EXPECT_NE(d["points"][0]["reason"].get<std::string>().find("not a finite positive time"), std::string::npos);
    EXPECT_TRUE(d["points"][0]["p_value"].is_null());
    ASSERT_NO_THROW(d = diff_one(with_bad, good));
    EXPECT_EQ(verdict_of(d), "inconclusive");
  }
  // A non-numeric sample is a malformed record: the one loader rejects it, naming the field (cmd_diff: exit 2,
  // DiffCommand.MalformedSampleIsBadInput), and a point with no samples at all is inconclusive.
  Json weird = point("p", good);
  weird["timing"]["device_samples_s"][0] = "fast";
  EXPECT_THROW(point_from_json(weird), ResultError);
  Json none = point("p", good);
  none.erase("timing");
  EXPECT_EQ(verdict_of(diff_json({header(), point("p", good)}, {header(), none}, {})), "inconclusive");
}

TEST(DiffVerdict, StatusChangeIsReportedAndFailsPerFailOn) {
  std::mt19937_64 rng(6);
  const auto s = [&] { return lognormal(rng, 20, 1e-3, 0.01); };
  const std::vector<Json> base = {header(), point("a", s()), point("b", s()), point("c", s())};
  const std::vector<Json> current = {header(), point("a", s()), point("b", {}, "incorrect"),
                                     point("c", {}, "capture_unsupported")};
  DiffOptions o;
  const Json d = diff_json(base, current, o);
  EXPECT_EQ(verdict_of(d, 0), "same");
  EXPECT_EQ(verdict_of(d, 1), "status_changed");
  EXPECT_EQ(verdict_of(d, 2), "status_changed");
  ASSERT_EQ(d["status_changes"].size(), 2u);
  EXPECT_EQ(d["status_changes"][0]["new_status"], "incorrect");
  EXPECT_EQ(d["summary"]["status_changed"], 2);
  EXPECT_TRUE(d["regression"].get<bool>());  // ok -> incorrect fails even under fail_on slower

  // ok -> capture_unsupported alone: reported, a regression only under fail_on any.
  const std::vector<Json> base2 = {header(), point("c", s())};
  const std::vector<Json> new2 = {header(), point("c", {}, "capture_unsupported")};
  EXPECT_FALSE(diff_json(base2, new2, o)["regression"].get<bool>());
  o.fail_on = DiffOptions::FailOn::any;
  const Json any = diff_json(base2, new2, o);
  EXPECT_TRUE(any["regression"].get<bool>());
  EXPECT_EQ(any["options"]["fail_on"], "any");
}

TEST(DiffVerdict, NewMissingAndNotComparedPoints) {
  std::mt19937_64 rng(8);
  const auto s = [&] { return lognormal(rng, 20, 1e-3, 0.01); };
  const std::vector<Json> base = {header(), point("kept", s()), point("gone", s()), point("skip", {}, "skipped")};
  const std::vector<Json> current = {header(), point("kept", s()), point("added", s()), point("skip", {}, "skipped")};
  const Json d = diff_json(base, current, {});
  ASSERT_EQ(d["points"].size(), 2u);
  EXPECT_EQ(verdict_of(d, 1), "not_compared");
  ASSERT_EQ(d["new"].size(), 1u);
  EXPECT_EQ(d["new"][0]["id"], test::id_of("exp/v/i=added"));
  EXPECT_EQ(d["new"][0]["key"], "exp/v/i=added");
  ASSERT_EQ(d["missing"].size(), 1u);
  EXPECT_EQ(d["missing"][0]["id"], test::id_of("exp/v/i=gone"));
  EXPECT_EQ(d["summary"]["new"], 1);
  EXPECT_EQ(d["summary"]["missing"], 1);
  EXPECT_EQ(d["summary"]["compared"], 1);
  EXPECT_FALSE(d["regression"].get<bool>());
}

// Shards: several headers on a side; an id present in two shards takes the later record.
TEST(DiffVerdict, ShardsAndLastRecordWins) {
  std::mt19937_64 rng(9);
  const std::vector<Json> base = {header(), point("a", lognormal(rng, 20, 1e-3, 0.01)), header(),
                                  point("b", lognormal(rng, 20, 1e-3, 0.01))};
  const std::vector<Json> current = {
      header(), point("a", lognormal(rng, 20, 2e-3, 0.01)), point("b", {}, "error"),
      header(), point("a", lognormal(rng, 20, 1e-3, 0.01)), point("b", lognormal(rng, 20, 1e-3, 0.01))};
  const Json d = diff_json(base, current, {});
  EXPECT_EQ(verdict_of(d, 0), "same");
  EXPECT_EQ(verdict_of(d, 1), "same");
  // The new side's first shard lost both its points to the second: said, and nothing else differs.
  ASSERT_EQ(d["environment"]["warnings"].size(), 1u) << d["environment"]["warnings"].dump();
  EXPECT_NE(d["environment"]["warnings"][0].get<std::string>().find("new side: 1 run(s)"), std::string::npos);
}

// C15 on synthetic data: 1000 points whose base and new come from one lognormal (sigma 3%, 30 samples each).
// BH holds the false discovery rate at alpha and "slower" also needs the interval above 1 + min effect, so the
// count of false "slower" must stay at or below alpha * 1000 (expected: 0), and at least 95% must be "same".
TEST(DiffVerdict, C15_AAFalseSlowerRateAtMostAlpha) {
  std::mt19937_64 rng(20261129);
  std::vector<Json> base = {header()}, current = {header()};
  for (int i = 0; i < 1000; ++i) {
    const std::string id = point_id(i);
    const double median = 1e-5 * std::pow(10.0, i % 5);
    base.push_back(point(id, lognormal(rng, 30, median, 0.03)));
    current.push_back(point(id, lognormal(rng, 30, median, 0.03)));
  }
  const DiffOptions o;
  const Json d = diff_json(base, current, o);
  const std::size_t slower = d["summary"]["slower"].get<std::size_t>();
  EXPECT_LE(static_cast<double>(slower), o.alpha * 1000);
  EXPECT_EQ(slower, 0u);
  EXPECT_EQ(d["summary"]["faster"], 0);
  EXPECT_GE(d["summary"]["same"].get<std::size_t>(), 950u);
  EXPECT_FALSE(d["regression"].get<bool>());
}

// ---- Environment and normalize ------------------------------------------------------------------------------

TEST(DiffEnvironment, WarnsOnDifferences) {
  std::mt19937_64 rng(10);
  Json other = header("NVIDIA H100 80GB HBM3", 3.0e12);
  other["environment"]["labrun"]["build_type"] = "Debug";
  other["lab"]["min_samples"] = 20;
  const Json d = diff_json({header(), point("p", lognormal(rng, 20, 1e-3, 0.01), "ok", 1.98e9)},
                           {other, point("p", lognormal(rng, 20, 1e-3, 0.01), "ok", 1.70e9)}, {});
  const Json& w = d["environment"]["warnings"];
  const auto has = [&](const std::string& text) {
    for (const auto& line : w)
      if (line.get<std::string>().find(text) != std::string::npos) return true;
    return false;
  };
  EXPECT_TRUE(has("GPU differs: base NVIDIA H200, new NVIDIA H100 80GB HBM3"));
  EXPECT_TRUE(has("build type differs"));
  EXPECT_TRUE(has("calibrated copy bandwidth differs by 40.0%"));
  EXPECT_TRUE(has("median SM clock"));
  EXPECT_TRUE(has("lab setting min_samples differs: base 10, new 20"));
  EXPECT_FALSE(has("driver"));
  EXPECT_EQ(d["environment"]["base"]["gpu"], "NVIDIA H200");

  // Within tolerance: copy bandwidth 4% apart, clocks 1% apart -> no warning.
  const Json close = diff_json({header("NVIDIA H200", 4.2e12), point("p", {1e-3, 1e-3, 1e-3}, "ok", 1.98e9)},
                               {header("NVIDIA H200", 4.04e12), point("p", {1e-3, 1e-3, 1e-3}, "ok", 1.96e9)}, {});
  EXPECT_TRUE(close["environment"]["warnings"].empty()) << close["environment"]["warnings"].dump();
}

// A slower host (calibrated eager launch 4.15 vs 4.74 µs, as two back-to-back H200 runs measured) earns a warning,
// and a slower verdict on a sync-bound point timed live is counted as host-sensitive; a blocked one is not.
TEST(DiffEnvironment, HostSpeedAndHostSensitivePoints) {
  std::mt19937_64 rng(11);
  Json fast = header(), slow = header();
  fast["calibration"]["launch"] = {{"eager_time_s", 4.15e-6}, {"eager_queued_time_s", 1.00e-6}};
  slow["calibration"]["launch"] = {{"eager_time_s", 4.74e-6}, {"eager_queued_time_s", 1.02e-6}};
  auto with = [](Json p, const std::string& method, const std::string& bound) {
    p["timing"]["method"] = method;
    p["interpretation"] = {{"bound", bound}};
    return p;
  };
  const std::string live = "cuda_events+synchronized_wall", blocked = "cuda_events_blocked+synchronized_wall";
  const DiffResult result = diff_results(
      runs_of({fast, with(point("a", lognormal(rng, 30, 50e-6, 0.005)), live, "sync"),
               with(point("b", lognormal(rng, 30, 10e-6, 0.005)), blocked, "launch")}),
      runs_of({slow, with(point("a", lognormal(rng, 30, 56e-6, 0.005)), live, "sync"),
               with(point("b", lognormal(rng, 30, 11.2e-6, 0.005)), blocked, "launch")}),
      {});
  const Json d = to_json(result);
  bool warned = false;
  for (const auto& line : d["environment"]["warnings"])
    warned = warned || line.get<std::string>().find("host speed (calibrated eager launch time") != std::string::npos;
  EXPECT_TRUE(warned) << d["environment"]["warnings"].dump();
  // The second warning: the host-sensitive point could not have the host's speed taken out (no processes).
  ASSERT_EQ(d["environment"]["warnings"].size(), 2u) << "the GPU side, 2% apart, is within tolerance";
  EXPECT_NE(d["environment"]["warnings"][1].get<std::string>().find(
                "1 host-sensitive point(s) were compared without taking the host's speed out (1 not pooled"),
            std::string::npos)
      << d["environment"]["warnings"].dump();
  EXPECT_EQ(d["points"][0]["gate"], "samples");
  slow["calibration"]["launch"]["eager_queued_time_s"] = 1.10e-6;
  const Json gpu_side = diff_json({fast, point("c", {1e-3, 1e-3, 1e-3})}, {slow, point("c", {1e-3, 1e-3, 1e-3})}, {});
  bool gpu_warned = false;
  for (const auto& line : gpu_side["environment"]["warnings"])
    gpu_warned = gpu_warned || line.get<std::string>().find("GPU-side eager launch cost") != std::string::npos;
  EXPECT_TRUE(gpu_warned) << gpu_side["environment"]["warnings"].dump();
  EXPECT_NEAR(d["environment"]["new"]["eager_launch_time_s"].get<double>(), 4.74e-6, 1e-12);
  ASSERT_EQ(verdict_of(d, 0), "slower");
  ASSERT_EQ(verdict_of(d, 1), "slower");
  EXPECT_TRUE(d["points"][0]["host_sensitive"].get<bool>());
  EXPECT_FALSE(d["points"][1]["host_sensitive"].get<bool>());
  EXPECT_EQ(d["summary"]["host_sensitive_changes"], 1);
  EXPECT_NE(diff_markdown(result).find("1 of the slower/faster verdicts are on host-sensitive points"),
            std::string::npos);
  EXPECT_NE(diff_markdown(result).find("| slower *host* |"), std::string::npos) << diff_markdown(result);
  EXPECT_NE(diff_table(result, false).find("slower (host)"), std::string::npos) << diff_table(result, false);

  // The same points timed live on one side and blocked on the other measure different things: said so.
  Json live_b = with(point("b", lognormal(rng, 30, 10e-6, 0.005)), live, "launch");
  const Json mixed = diff_json({fast, live_b},
                               {fast, with(point("b", lognormal(rng, 30, 10e-6, 0.005)), blocked, "launch")}, {});
  bool method_warned = false;
  for (const auto& line : mixed["environment"]["warnings"])
    method_warned = method_warned || line.get<std::string>().find("timing.method differs") != std::string::npos;
  EXPECT_TRUE(method_warned) << mixed["environment"]["warnings"].dump();
}

// Shards where a later run replaces every point of an earlier one: the earlier header no longer describes what
// is compared, so its environment is left out (no host-speed warning here) and the replacement is said.
TEST(DiffEnvironment, SupersededShardHeadersAreLeftOut) {
  Json slow = header(), fast = header();
  slow["calibration"]["launch"] = {{"eager_time_s", 4.6e-6}};
  fast["calibration"]["launch"] = {{"eager_time_s", 4.2e-6}};
  const Json d = diff_json({slow, point("a", {1e-3, 1e-3, 1e-3}), fast, point("a", {1e-3, 1e-3, 1e-3})},
                           {fast, point("a", {1e-3, 1e-3, 1e-3})}, {});
  const Json& w = d["environment"]["warnings"];
  ASSERT_EQ(w.size(), 1u) << w.dump();
  EXPECT_NE(w[0].get<std::string>().find("base side: 1 run(s) had every point replaced"), std::string::npos) << w[0];
  EXPECT_NEAR(d["environment"]["base"]["eager_launch_time_s"].get<double>(), 4.2e-6, 1e-15);
}

// New GPU with half the copy bandwidth and twice the times: slower in seconds, the same in "bytes it could
// have copied".
TEST(DiffEnvironment, NormalizeByCopyBandwidth) {
  std::mt19937_64 rng(11);
  const std::vector<double> b = lognormal(rng, 30, 1e-3, 0.01);
  std::vector<double> n = lognormal(rng, 30, 1e-3, 0.01);
  for (double& v : n) v *= 2;
  const std::vector<Json> base = {header("NVIDIA H200", 4e12), point("p", b)};
  const std::vector<Json> current = {header("NVIDIA H200", 2e12), point("p", n)};
  EXPECT_EQ(verdict_of(diff_json(base, current, {})), "slower");
  DiffOptions o;
  o.normalize = true;
  const Json d = diff_json(base, current, o);
  EXPECT_EQ(verdict_of(d), "same");
  EXPECT_NEAR(d["points"][0]["new_median_s"].get<double>() / d["points"][0]["base_median_s"].get<double>(), 2.0, 0.05);

  Json no_calibration = header();
  no_calibration.erase("calibration");
  EXPECT_THROW(diff_json({no_calibration, point("p", b)}, current, o), std::invalid_argument);
}

TEST(DiffEnvironment, RejectsBadOptions) {
  DiffOptions o;
  for (double bad : {0.0, 1e-300, 0.6, 1.0}) {  // outside [1e-12, 0.5]: no interval narrower than 50%
    o.alpha = bad;
    EXPECT_THROW(diff_one({1, 2, 3}, {1, 2, 3}, o), std::invalid_argument) << bad;
  }
  o.alpha = 0.5;
  EXPECT_NO_THROW(diff_one({1, 2, 3}, {1, 2, 3}, o));
  o.alpha = 0.05;
  o.min_effect = -0.1;
  EXPECT_THROW(diff_one({1, 2, 3}, {1, 2, 3}, o), std::invalid_argument);
}

// ---- cmd_diff and the renderers -----------------------------------------------------------------------------

class DiffCommand : public ::testing::Test {
 protected:
  /// A result file of 40 points with `scale` times the base medians, from its own seed.
  std::string result_file(const std::string& name, double scale, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::vector<Json> records = {header()};
    for (int i = 0; i < 40; ++i)
      records.push_back(point(point_id(i), lognormal(rng, 20, scale * 1e-4 * (1 + i), 0.01)));
    return dir_.file(name, records);
  }
  int run(const std::vector<std::string>& base, const std::vector<std::string>& current, const std::string& format,
          const DiffOptions& o = {}) {
    out_.str("");
    err_.str("");
    return cmd_diff(base, current, o, format, out_, err_);
  }
  TempDir dir_;
  std::ostringstream out_, err_;
};

TEST_F(DiffCommand, ExitCodes) {
  const std::string base = result_file("base.jsonl", 1.0, 1);
  const std::string aa = result_file("aa.jsonl", 1.0, 2);
  const std::string slow = result_file("slow.jsonl", 1.2, 3);

  EXPECT_EQ(run({base}, {aa}, "table"), kDiffNoRegression) << err_.str();
  EXPECT_NE(out_.str().find("No regression"), std::string::npos) << out_.str();

  EXPECT_EQ(run({base}, {slow}, "table"), kDiffRegression) << err_.str();
  EXPECT_NE(out_.str().find("40 slower"), std::string::npos) << out_.str();
  EXPECT_NE(out_.str().find("REGRESSION"), std::string::npos);

  EXPECT_EQ(run({base}, {dir_.path("nope.jsonl")}, "table"), kDiffBadInput);
  EXPECT_NE(err_.str().find("nope.jsonl"), std::string::npos) << err_.str();

  const std::string headless = dir_.file("headless.jsonl", {point("p0", {1e-3, 1e-3, 1e-3})});
  EXPECT_EQ(run({headless}, {aa}, "table"), kDiffBadInput);
  EXPECT_NE(err_.str().find("headless.jsonl:1: a point before any header"), std::string::npos) << err_.str();

  const std::string empty_run = dir_.file("header_only.jsonl", {header()});
  EXPECT_EQ(run({base}, {empty_run}, "table"), kDiffBadInput);
  EXPECT_NE(err_.str().find("header_only.jsonl: no point records"), std::string::npos) << err_.str();

  {
    std::ofstream junk(dir_.path("junk.jsonl"));
    junk << "{\"type\": \"header\", \"schema_version\": 3}\nnot json\n";
  }
  EXPECT_EQ(run({dir_.path("junk.jsonl")}, {aa}, "table"), kDiffBadInput);
  EXPECT_NE(err_.str().find("junk.jsonl:2"), std::string::npos) << err_.str();

  {
    std::ofstream torn(dir_.path("torn.jsonl"));
    torn << header().dump() << "\n" << point("p0", {1e-4, 1e-4, 1e-4}).dump() << "\n{\"type\": \"poi";
  }
  EXPECT_EQ(run({dir_.path("torn.jsonl")}, {aa}, "table"), kDiffNoRegression);  // a killed run is still a result
  EXPECT_NE(err_.str().find("torn.jsonl:3: dropped a torn last line"), std::string::npos) << err_.str();

  EXPECT_EQ(run({base}, {aa}, "yaml"), kDiffBadInput);
  DiffOptions normalize;
  normalize.normalize = true;
  Json bare = header();
  bare.erase("calibration");
  EXPECT_EQ(run({dir_.file("bare.jsonl", {bare, point("p0", {1e-3, 1e-3, 1e-3})})}, {aa}, "table", normalize),
            kDiffBadInput);
}

TEST_F(DiffCommand, ShardsOnEachSide) {
  std::mt19937_64 rng(12);
  const std::string b1 = dir_.file("b1.jsonl", {header(), point("x", lognormal(rng, 20, 1e-3, 0.01))});
  const std::string b2 = dir_.file("b2.jsonl", {header(), point("y", lognormal(rng, 20, 1e-3, 0.01))});
  const std::string n1 = dir_.file("n1.jsonl", {header(), point("x", lognormal(rng, 20, 1e-3, 0.01)),
                                                point("y", lognormal(rng, 20, 1e-3, 0.01))});
  EXPECT_EQ(run({b1, b2}, {n1}, "json"), kDiffNoRegression) << err_.str();
  const Json d = Json::parse(out_.str());
  EXPECT_EQ(d["summary"]["same"], 2);
  EXPECT_EQ(d["type"], "diff");
}

TEST_F(DiffCommand, MarkdownHasTableAndWarnings) {
  const std::string base = result_file("base.jsonl", 1.0, 1);
  std::mt19937_64 rng(13);
  std::vector<Json> records = {header("NVIDIA H100 80GB HBM3")};
  for (int i = 0; i < 40; ++i) {
    const std::string id = point_id(i);
    records.push_back(i == 0   ? point(id, {}, "incorrect")
                      : i == 1 ? point(id, lognormal(rng, 2, 1e-4 * (1 + i), 0.01))
                               : point(id, lognormal(rng, 20, (i == 2 ? 1.3 : 1.0) * 1e-4 * (1 + i), 0.01)));
  }
  records.push_back(point("brand_new", {1e-3, 1e-3, 1e-3}));
  const std::string current = dir_.file("new.jsonl", records);

  EXPECT_EQ(run({base}, {current}, "markdown"), kDiffRegression) << err_.str();
  const std::string md = out_.str();
  EXPECT_NE(md.find("### labrun diff: **regression**"), std::string::npos) << md;
  EXPECT_NE(md.find("| verdict | point | change | interval | processes | p (BH) | base | new | samples |\n|---|"),
            std::string::npos)
      << md;
  EXPECT_NE(md.find("| status_changed | `exp/v/i=p0` | ok -> incorrect |"), std::string::npos) << md;
  EXPECT_NE(md.find("| slower | `exp/v/i=p2` | +2"), std::string::npos) << md;  // about +30%
  EXPECT_NE(md.find("> [!WARNING]"), std::string::npos);
  EXPECT_NE(md.find("GPU differs"), std::string::npos);
  EXPECT_NE(md.find("<details><summary>1 inconclusive point(s)</summary>"), std::string::npos) << md;
  EXPECT_NE(md.find("<details><summary>1 new point(s)</summary>"), std::string::npos) << md;

  EXPECT_EQ(run({base}, {current}, "table"), kDiffRegression);
  const std::string table = out_.str();
  EXPECT_EQ(table.rfind("warning: GPU differs", 0), 0u) << table;
  // Worst first: the status change row comes before the slower row, which comes before the inconclusive one.
  const auto changed = table.find("status_changed"), slower = table.find("slower "),
             inconclusive = table.find("inconclusive ");
  EXPECT_LT(changed, slower);
  EXPECT_LT(slower, inconclusive);
  EXPECT_EQ(table.find("same "), std::string::npos);  // same rows hidden by default
  ASSERT_EQ(run({base}, {current}, "json"), kDiffRegression);
  const DiffResult loaded = diff_results(load_results({base}).runs, load_results({current}).runs, {});
  EXPECT_EQ(to_json(loaded).dump(2) + "\n", out_.str());                 // --format json is to_json of the result
  EXPECT_NE(diff_table(loaded, true).find("same "), std::string::npos);  // all rows on request
  EXPECT_NE(table.find("samples  point"), std::string::npos) << table;   // the sample-count column
}

// A sample that is not a number is a malformed record: exit 2, naming the file, line and field.
TEST_F(DiffCommand, MalformedSampleIsBadInput) {
  const std::string base = result_file("base.jsonl", 1.0, 1);
  Json weird = point("p0", {1e-3, 1e-3, 1e-3});
  weird["timing"]["device_samples_s"][0] = "fast";
  EXPECT_EQ(run({base}, {dir_.file("weird.jsonl", {header(), weird})}, "table"), kDiffBadInput);
  EXPECT_NE(err_.str().find("weird.jsonl:2"), std::string::npos) << err_.str();
  EXPECT_NE(err_.str().find("device_samples_s"), std::string::npos) << err_.str();
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// A host-backend run against a GPU run is refused (bad input, exit 2): their times are of different machines.
TEST(DiffBackends, HostAgainstGpuIsRefused) {
  auto run_on = [](const std::string& backend) {
    labrun::Run run;
    run.has_header = true;
    run.header = header_from_json(Json{{"type", "header"}, {"environment", {{"backend", backend}}}});
    PointRecord p = test::point_record("0000000000000001", "e/v/size=1,l2=hot,mode=eager", Status::ok);
    p.backend = backend;
    run.points.push_back(p);
    return std::vector<labrun::Run>{run};
  };
  try {
    diff_results(run_on("host"), run_on("cuda:0"), DiffOptions{});
    ADD_FAILURE() << "a host run against a GPU run must be refused";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("host backend"), std::string::npos) << e.what();
  }
  EXPECT_THROW(diff_results(run_on("cuda:1"), run_on("host"), DiffOptions{}), std::invalid_argument);
}

// A memory-bound point whose iteration waits on the host (eager `index` reads its count: host_syncs_per_iteration 1)
// moves with the host's speed too (on the H200, +18% raw against a blocking-sync host, bound "memory"): it is
// host-sensitive when timed live, not when timed behind a blocking kernel, and a memory-bound point that never waits
// on the host is not.
TEST(DiffVerdict, AnIterationThatWaitsOnTheHostIsHostSensitive) {
  std::mt19937_64 rng(9);
  auto with = [&](const std::string& id, const std::string& method, double syncs) {
    Json p = point(id, lognormal(rng, 30, 200e-6, 0.005));
    p["timing"]["method"] = method;
    if (syncs >= 0) p["timing"]["host_syncs_per_iteration"] = syncs;
    p["interpretation"] = {{"bound", "memory"}};
    return p;
  };
  const auto run = [&] {
    return std::vector<Json>{header(), with("waits", "cuda_events+synchronized_wall", 1.0),
                             with("blocked", std::string(to_string(TimingMethod::cuda_events_blocked)), 1.0),
                             with("no_wait", "cuda_events+synchronized_wall", 0.0),
                             with("unrecorded", "cuda_events+synchronized_wall", -1)};
  };
  const Json d = diff_json(run(), run(), {});
  EXPECT_TRUE(d["points"][0]["host_sensitive"].get<bool>()) << d["points"][0].dump();
  EXPECT_FALSE(d["points"][1]["host_sensitive"].get<bool>());
  EXPECT_FALSE(d["points"][2]["host_sensitive"].get<bool>());
  EXPECT_FALSE(d["points"][3]["host_sensitive"].get<bool>());
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// A point `id` with `samples_s` whose integrity record holds the audit in `state` (with `reason`), or no audit.
Json audited_point(const std::string& id, const std::vector<double>& samples_s, const std::string& state,
                   const std::string& reason = "") {
  Json p = point(id, samples_s);
  const Json passed{{"state", "passed"}, {"reason", nullptr}};
  p["integrity"] = Json{{"fences", passed}, {"inputs", passed}, {"recheck", passed}};
  if (!state.empty())
    p["integrity"]["audit"] = Json{{"state", state}, {"reason", reason.empty() ? Json() : Json(reason)}};
  return p;
}

TEST(DiffVerdict, C17_AnAuditFindingOnOneSideIsAStatusChange) {
  std::mt19937_64 rng(17);
  const auto s = [&] { return lognormal(rng, 20, 1e-3, 0.01); };
  const std::string sync =
      "the iteration waits on the host in cudaStreamSynchronize, which the variant did not declare";
  const Json d = diff_json({header(), audited_point("a", s(), "passed"), audited_point("b", s(), "passed"),
                            audited_point("c", s(), "")},
                           {header(), audited_point("a", s(), "passed"), audited_point("b", s(), "warned", sync),
                            audited_point("c", s(), "warned", sync)},
                           {});
  EXPECT_EQ(verdict_of(d, 0), "same");
  EXPECT_EQ(verdict_of(d, 1), "status_changed");
  EXPECT_EQ(d["points"][1]["reason"], "ok -> ok, audit passed -> warned: " + sync);
  // A side without the audit (a record from before it) is no finding either way: the instrument changed, not the code.
  EXPECT_NE(verdict_of(d, 2), "status_changed");
  EXPECT_FALSE(d["regression"].get<bool>());  // ok on both sides: a regression only under --fail-on any
  DiffOptions any;
  any.fail_on = DiffOptions::FailOn::any;
  EXPECT_TRUE(diff_json({header(), audited_point("b", s(), "passed")},
                        {header(), audited_point("b", s(), "warned", sync)}, any)["regression"]
                  .get<bool>());
}

}  // namespace
}  // namespace labrun
