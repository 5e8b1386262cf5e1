// Tests of the integrity checks (docs/integrity.md, src/lab/integrity.hpp, src/lab/guards.hpp): the guard regions
// and how a write into one reads (case C19), the content hash that finds a changed input (C20), and the integrity
// test aid (tests/aids/integrity) swept on the host backend, plain and interleaved: every planted fault is
// `incorrect` with its cause named (C19 a write outside an array, C20 a write into an input, C21 a result replayed
// from a cache or computed in setup), no worker crashes, every correct variant is `ok`; with the checks off the
// record says so and why.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "guards.hpp"
#include "integrity_expect.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

const std::string kAidConfig = test::kSource + "/tests/aids/integrity.yaml";

// ---- Guards, hashes -------------------------------------------------------------------------------------------

struct Guards {
  std::vector<std::uint8_t> before = std::vector<std::uint8_t>(kGuardBytes, kGuardByte), after;
  explicit Guards(const FencedArray& a) : after(a.after_guard_bytes(), kGuardByte) {}
};

TEST(Guards, KeepTheAlignmentAndAtLeastAGuardOnEachSide) {
  for (const std::size_t bytes : {0u, 1u, 4u, 255u, 256u, 4108u, 1000000u}) {
    const FencedArray a{"y", 4, bytes};
    EXPECT_EQ(fenced_allocation_bytes(bytes) % kFenceAlignment, 0u) << bytes;
    EXPECT_GE(a.after_guard_bytes(), kGuardBytes) << bytes;
    EXPECT_LT(a.after_guard_bytes(), kGuardBytes + kFenceAlignment) << bytes;
    EXPECT_EQ(kGuardBytes % kFenceAlignment, 0u);  // the array starts where an unfenced one would be aligned
  }
}

TEST(Guards, AnIntactGuardIsNoFinding) {
  const FencedArray a{"y", 4, 4108};
  const Guards g(a);
  EXPECT_FALSE(guard_write(a, g.before.data(), g.after.data()));
}

// Case C19: one element past the end, before the start, and raw memory in bytes.
TEST(Guards, AWriteNamesTheArrayTheSideAndTheElement) {
  const FencedArray a{"y", 4, 4108};  // 1027 f32
  {
    Guards g(a);
    g.after[0] = 0;  // y[1027], its first byte
    EXPECT_EQ(guard_write(a, g.before.data(), g.after.data()).value(),
              "wrote past the end of y (first at element 1027)");
  }
  {
    Guards g(a);
    g.after[9] = 0;  // inside y[1029]
    EXPECT_EQ(guard_write(a, g.before.data(), g.after.data()).value(),
              "wrote past the end of y (first at element 1029)");
  }
  {
    Guards g(a);
    g.before[kGuardBytes - 1] = 0;  // the last byte of y[-1]
    EXPECT_EQ(guard_write(a, g.before.data(), g.after.data()).value(),
              "wrote before the start of y (nearest at element -1)");
    g.before[kGuardBytes - 1] = kGuardByte;
    g.before[kGuardBytes - 8] = 0;  // y[-2]
    EXPECT_EQ(guard_write(a, g.before.data(), g.after.data()).value(),
              "wrote before the start of y (nearest at element -2)");
  }
  {
    const FencedArray raw{"memory from Launch::allocate #1 (10 bytes)", 1, 10, true};
    Guards g(raw);
    g.after[3] = 1;
    EXPECT_EQ(guard_write(raw, g.before.data(), g.after.data()).value(),
              "wrote past the end of memory from Launch::allocate #1 (10 bytes) (first at byte 13)");
  }
}

TEST(ContentHash, ChangesWithAnyByteAndIsTheSameForTheSameBytes) {
  std::vector<unsigned char> x(100003);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<unsigned char>(i * 131 + 7);
  const std::uint64_t h = content_hash(x.data(), x.size());
  EXPECT_EQ(content_hash(x.data(), x.size()), h);
  for (const std::size_t at : {std::size_t{0}, std::size_t{7}, std::size_t{50000}, x.size() - 1}) {
    auto y = x;
    y[at] ^= 1;
    EXPECT_NE(content_hash(y.data(), y.size()), h) << at;
    EXPECT_EQ(first_difference(x.data(), y.data(), static_cast<std::int64_t>(x.size()), 1).value(),
              static_cast<std::int64_t>(at));
  }
  // Swapping two words changes it (the index is mixed in), and the hash of nothing is 0.
  auto z = x;
  std::swap_ranges(z.begin(), z.begin() + 8, z.begin() + 8);
  EXPECT_NE(content_hash(z.data(), z.size()), h);
  EXPECT_EQ(content_hash(x.data(), 0), 0u);
  EXPECT_FALSE(first_difference(x.data(), x.data(), static_cast<std::int64_t>(x.size()), 1));
  EXPECT_EQ(first_difference(x.data(), z.data(), 25000, 4).value(), 0);
}

TEST(ContentHash, TheRecheckSeedDiffersFromTheLabSeed) {
  for (const std::uint64_t seed : {0ull, 1ull, 20261129ull}) {
    EXPECT_NE(recheck_lab_seed(seed), seed);
    EXPECT_EQ(recheck_lab_seed(seed), recheck_lab_seed(seed));
  }
}

// ---- The integrity test aid, swept on the host backend ---------------------------------------------------------

// Runs labrun_testaid with `args` in `dir`; returns its exit code, stdout and stderr in `log`.
int testaid(const TempDir& dir, std::vector<std::string> args, std::string* log = nullptr) {
  args.insert(args.begin(), test::kTestAid);
  const test::Logged r = test::run_logged(dir.path().string(), test::quoted(args), dir.file("log"));
  if (log) *log = r.log;
  return r.code;
}

using test::points_of;

// Sweeps the integrity aid on the host into `dir`/`out` with `extra` arguments, expecting exit 1 (its planted faults
// are incorrect points): the file's point records.
std::vector<Json> sweep_aid(const TempDir& dir, const std::string& out, const std::vector<std::string>& extra = {}) {
  std::vector<std::string> args = {"sweep", kAidConfig, "--device", "cpu", "-o", out, "-q"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::string log;
  EXPECT_EQ(testaid(dir, args, &log), 1) << log;
  return points_of(dir.file(out));
}

// Cases C19, C20, C21: every planted host fault named, every correct variant after it ok, no worker crashed; the
// records round-trip with their integrity.
TEST(IntegrityAid, EveryPlantedFaultIsNamedOnTheHost) {
  TempDir dir("labrun_integrity");
  const auto points = sweep_aid(dir, "plain.jsonl");
  ASSERT_EQ(points.size(), 76u);  // 19 variants x 2 sizes x 2 modes (graph: not_supported on the host)
  EXPECT_EQ(test::expect_aid_points(points, {"eager"}), 38);
  for (const Json& p : points) {
    EXPECT_NE(p["status"], "crashed") << p["key"];
    EXPECT_EQ(to_json(point_from_json(p)), p) << p["key"];
  }
}

// Interleaved: the 19 variants of one size sampled round-robin share one input set; writes_input_late changes it
// during the group's timing, so the group is timed again point by point and only writes_input_late is blamed.
TEST(IntegrityAid, AnInterleavedGroupIsTimedAgainAloneWhenItsInputsChange) {
  TempDir dir("labrun_integrity");
  const auto points = sweep_aid(dir, "interleaved.jsonl", {"--only", "mode=eager", "--lab", "interleave=19"});
  ASSERT_EQ(points.size(), 38u);
  EXPECT_EQ(test::expect_aid_points(points, {"eager"}), 38);
  int retimed = 0;
  for (const Json& p : points) {
    if (!p.contains("timing")) continue;  // ended before timing
    const Json& retime = p["integrity"]["retimed"];
    ASSERT_TRUE(retime.is_string()) << p["key"];
    EXPECT_NE(retime.get<std::string>().find("changed input x at element 0"), std::string::npos);
    EXPECT_EQ(p["timing"]["interleaved_points"], 1) << p["key"];  // timed alone
    ++retimed;
  }
  EXPECT_EQ(retimed, 2 * 13);  // the 13 points of each size that reached timing
}

// A group that holds two input sets (both sizes: 38 points) still finds the late write in the set it landed in: each
// point checks the set it holds, not the one the experiment generated last.
TEST(IntegrityAid, AGroupOfTwoInputSetsFindsTheWriteInEither) {
  TempDir dir("labrun_integrity");
  const auto points = sweep_aid(dir, "two.jsonl", {"--only", "mode=eager", "--lab", "interleave=38"});
  ASSERT_EQ(points.size(), 38u);
  EXPECT_EQ(test::expect_aid_points(points, {"eager"}), 38);
}

// A plain interleaved group whose inputs hold is sampled round-robin as ever, with nothing retimed.
TEST(IntegrityAid, AGroupWhoseInputsHoldIsNotRetimed) {
  TempDir dir("labrun_integrity");
  std::string log;
  EXPECT_EQ(testaid(dir,
                    {"sweep", kAidConfig, "--device", "cpu", "-o", "clean.jsonl", "-q", "--only", "mode=eager,n=1027",
                     "--lab", "interleave=4"},
                    &log),
            1)
      << log;
  for (const Json& p : points_of(dir.file("clean.jsonl"))) {
    if (p["variant"] != "correct") continue;  // the first group: correct, past_end, after_past_end, before_start
    EXPECT_EQ(p["status"], "ok");
    EXPECT_FALSE(p["integrity"].contains("retimed"));
    EXPECT_EQ(p["timing"]["interleaved_points"], 2);  // correct and after_past_end reached timing
  }
}

// Each check off by its lab setting: the record says which and why, and the fault it would have found goes unseen
// (one variant per run: with the fences off, a write outside an array lands in the heap). writes_input, unguarded,
// corrupts the inputs of its own later iterations: the comparison sees the effect (y[0]), not the cause.
TEST(IntegrityAid, EachCheckCanBeTurnedOffAndTheRecordSaysSo) {
  for (const std::string variant : {"correct", "replays_cache", "setup_work", "writes_input"}) {
    TempDir dir("labrun_integrity");
    std::string log;
    EXPECT_EQ(testaid(dir,
                      {"sweep", kAidConfig, "--device", "cpu", "-o", "off.jsonl", "-q", "--only",
                       "mode=eager,n=1027,variant=" + variant, "--lab", "fences=false", "--lab", "guard_inputs=false",
                       "--lab", "recheck=false"},
                      &log),
              variant == "writes_input" ? 1 : 0)
        << variant << ": " << log;
    const auto points = points_of(dir.file("off.jsonl"));
    ASSERT_EQ(points.size(), 1u);
    const Json& p = points[0];
    if (variant == "writes_input") {
      EXPECT_EQ(p["status"], "incorrect");
      EXPECT_EQ(p["reason"].get<std::string>().rfind("y[0] = ", 0), 0u) << p["reason"];
    } else {
      EXPECT_EQ(p["status"], "ok") << variant << ": " << p["reason"];
    }
    EXPECT_EQ(p["integrity"]["fences"]["state"], "off");
    EXPECT_EQ(p["integrity"]["fences"]["reason"], "lab.fences: false");
    EXPECT_EQ(p["integrity"]["inputs"]["state"], "off");
    EXPECT_EQ(p["integrity"]["inputs"]["reason"], "lab.guard_inputs: false");
    EXPECT_EQ(p["integrity"]["recheck"]["state"], "off");
    EXPECT_EQ(p["integrity"]["recheck"]["reason"], "lab.recheck: false");
    const Json header = read_jsonl(dir.file("off.jsonl")).front();
    EXPECT_EQ(header["lab"]["fences"], false);
    EXPECT_EQ(header["lab"]["guard_inputs"], false);
    EXPECT_EQ(header["lab"]["recheck"], false);
  }
}

// A record whose integrity state is no CheckState's name is refused, naming the field.
TEST(IntegrityRecord, AnUnknownStateIsRefused) {
  Json j = Json::parse(R"({"fences":{"state":"passed","reason":null},"inputs":{"state":"maybe","reason":null},
                          "recheck":{"state":"off","reason":"lab.recheck: false"}})");
  try {
    integrity_from_json(j);
    FAIL() << "accepted";
  } catch (const ResultError& e) {
    EXPECT_NE(std::string(e.what()).find("integrity.inputs.state: \"maybe\" is not a check state"), std::string::npos)
        << e.what();
  }
  j["inputs"]["state"] = "failed";
  EXPECT_EQ(to_json(integrity_from_json(j)), j);
}

// A pooled sweep re-checks in its first process only (the code under test is the same in each): the pooled record
// carries that process's re-check, and a replayed result is still named.
TEST(IntegrityAid, APooledSweepRechecksInItsFirstProcess) {
  TempDir dir("labrun_integrity");
  const auto points = sweep_aid(dir, "pooled.jsonl", {"--only", "mode=eager,n=1027", "--lab", "processes=3"});
  ASSERT_EQ(points.size(), 19u);
  EXPECT_EQ(test::expect_aid_points(points, {"eager"}), 19);
  for (const Json& p : points) {
    if (p["variant"] == "correct") EXPECT_EQ(p["integrity"]["recheck"]["state"], "passed");
    if (p["variant"] == "replays_cache")
      EXPECT_EQ(p["reason"].get<std::string>().rfind("process 1 of 3: re-check on fresh inputs failed", 0), 0u)
          << p["reason"];
  }
}

// The report lists every point an integrity check failed, with the check and its finding; a finding one side of a
// diff has and the other lacks is a status change, a regression (exit 1).
TEST(IntegrityAid, TheReportListsEveryFindingAndTheDiffCallsItAStatusChange) {
  TempDir dir("labrun_integrity");
  const std::vector<std::string> one = {"--device", "cpu", "-q", "--only", "mode=eager,n=1027,variant=replays_cache"};
  auto sweep = [&](const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> args = {"sweep", kAidConfig, "-o", out};
    args.insert(args.end(), one.begin(), one.end());
    args.insert(args.end(), extra.begin(), extra.end());
    return testaid(dir, args);
  };
  EXPECT_EQ(sweep("off.jsonl", {"--lab", "recheck=false"}), 0);
  EXPECT_EQ(sweep("on.jsonl", {}), 1);
  std::string log;
  EXPECT_EQ(testaid(dir, {"diff", "off.jsonl", "on.jsonl"}, &log), 1) << log;
  EXPECT_NE(log.find("status_changed  ok -> incorrect"), std::string::npos) << log;
  EXPECT_EQ(testaid(dir, {"report", "on.jsonl", "-o", "report", "--no-plots"}, &log), 0) << log;
  const std::string md = test::slurp(dir.file("report/report.md"));
  EXPECT_NE(md.find("## Integrity checks"), std::string::npos);
  const auto row = md.find("| replays_cache | ");
  ASSERT_NE(row, std::string::npos) << md.substr(0, 3000);
  EXPECT_NE(md.find(" | re-check | re-check on fresh inputs failed: y[", row), std::string::npos)
      << md.substr(row, 400);
}

// The audit runs on the CUDA backend only; a host record whose audit is set by hand stands for a GPU point here.
TEST(IntegrityAid, C17_TheReportListsWhatTheAuditWarnedOf) {
  TempDir dir("labrun_integrity");
  EXPECT_EQ(testaid(dir, {"sweep", kAidConfig, "-o", "host.jsonl", "--device", "cpu", "-q", "--only",
                          "mode=eager,n=1027,variant=correct"}),
            0);
  std::vector<Json> lines = read_jsonl(dir.file("host.jsonl"));
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["integrity"]["audit"]["state"], "not_run");  // the host backend has no audit
  lines[1]["integrity"]["audit"] = Json{{"state", "warned"},
                                        {"reason", "the iteration waits on the host in cudaStreamSynchronize"}};
  {
    std::ofstream out(dir.file("gpu.jsonl"));
    for (const Json& l : lines) out << l.dump() << "\n";
  }
  std::string log;
  EXPECT_EQ(testaid(dir, {"report", "gpu.jsonl", "-o", "report", "--no-plots"}, &log), 0) << log;
  const std::string md = test::slurp(dir.file("report/report.md"));
  EXPECT_NE(md.find("| correct | n=1027, mode=eager, l2=hot | audit (warned) | the iteration waits on the host in "
                    "cudaStreamSynchronize |"),
            std::string::npos)
      << md.substr(md.find("## Integrity checks"), 600);
}

}  // namespace
}  // namespace labrun
