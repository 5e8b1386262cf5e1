// The sanitizer sweep's host logic (docs/integrity.md "The sanitizer sweep", case C22): compute-sanitizer's report
// read into findings, an address named by the labrun array it falls in or next to, the point's reason, the record's
// `sanitizer` round trip, and the sweep refused where it cannot run (no tool: exit 6; the host backend: exit 5).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "point_record.hpp"
#include "sanitize.hpp"
#include "sanitizer_log.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

// memcheck's report of a write one element past a 1027-float array, as compute-sanitizer prints it (the program's
// own output interleaved, which the reader skips).
const char* kMemcheckLog = R"(========= COMPUTE-SANITIZER
[info] 1 points on cuda:0
========= Invalid __global__ write of size 4 bytes
=========     at (anonymous namespace)::past_end_kernel(float const*, float*, long)+0x1b0 in integrity.cu:40
=========     by thread (3,0,0) in block (4,0,0)
=========     Address 0x7f3c1e001010 is out of bounds
=========     and is 1 bytes after the nearest allocation at 0x7f3c1e000000 of size 4108 bytes
=========     Saved host backtrace up to driver entry point at kernel launch time
=========         Host Frame: [0x2f2e13] in libcuda.so.1
=========         Host Frame: [0x1a2b3] in labrun_testaid
=========
========= Program hit cudaErrorLaunchFailure (error 719) due to "unspecified launch failure" on CUDA API call to cudaStreamSynchronize.
=========     Saved host backtrace up to driver entry point at error
=========         Host Frame: [0x2ee1c3] in libcuda.so.1
=========
========= ERROR SUMMARY: 2 errors
)";

const char* kRacecheckLog = R"(========= COMPUTE-SANITIZER
========= Error: Race reported between Write access at (anonymous namespace)::racy_compute(float const*, float*, long)+0x2a0 in audit.cu:22
=========     and Read access at (anonymous namespace)::racy_compute(float const*, float*, long)+0x280 in audit.cu:22 [896 hazards]
=========
========= RACECHECK SUMMARY: 1 hazard displayed (1 error, 0 warnings)
)";

std::vector<SanitizerArray> arrays_at(std::uint64_t x, std::uint64_t y) {
  char xa[24], ya[24];
  std::snprintf(xa, sizeof xa, "0x%llx", static_cast<unsigned long long>(x));
  std::snprintf(ya, sizeof ya, "0x%llx", static_cast<unsigned long long>(y));
  return {SanitizerArray{"x", "input", xa, 4108}, SanitizerArray{"y", "output", ya, 4108}};
}

TEST(SanitizerLog, C22_MemcheckReportReadsIntoFindingsWithTheKernelAndAddress) {
  const SanitizerLog log = parse_sanitizer_log(kMemcheckLog);
  ASSERT_EQ(log.findings.size(), 2u);
  EXPECT_EQ(log.errors, 2);
  EXPECT_EQ(log.findings[0].kind, "Invalid __global__ write of size 4 bytes");
  EXPECT_EQ(log.findings[0].kernel, "(anonymous namespace)::past_end_kernel(float const*, float*, long)");
  ASSERT_TRUE(log.addresses[0]);
  EXPECT_EQ(*log.addresses[0], 0x7f3c1e001010ull);
  EXPECT_NE(log.findings[0].detail.find("by thread (3,0,0) in block (4,0,0)"), std::string::npos);
  EXPECT_EQ(log.findings[0].detail.find("Host Frame"), std::string::npos);  // the backtrace is left out
  EXPECT_EQ(log.findings[0].detail.find("[info]"), std::string::npos);      // the program's own output too
  EXPECT_NE(log.findings[1].kind.find("cudaErrorLaunchFailure"), std::string::npos);
  EXPECT_EQ(log.findings[1].kernel, "");
  EXPECT_FALSE(log.addresses[1]);
}

TEST(SanitizerLog, C22_RacecheckReportCountsItsErrors) {
  const SanitizerLog log = parse_sanitizer_log(kRacecheckLog);
  ASSERT_EQ(log.findings.size(), 1u);
  EXPECT_EQ(log.errors, 1);
  EXPECT_EQ(log.findings[0].kernel, "(anonymous namespace)::racy_compute(float const*, float*, long)");
  EXPECT_NE(log.findings[0].detail.find("[896 hazards]"), std::string::npos);
}

TEST(SanitizerLog, AReportWithoutSummaryOrFindingsReadsAsNothing) {
  const SanitizerLog clean = parse_sanitizer_log("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(clean.findings.empty());
  EXPECT_EQ(clean.errors, 0);
  const SanitizerLog cut = parse_sanitizer_log("");  // the process died before the tool wrote anything
  EXPECT_TRUE(cut.findings.empty());
  EXPECT_FALSE(cut.errors);
}

TEST(SanitizerLog, KeepsAtMostTheFindingsARecordHolds) {
  std::string text;
  for (int i = 0; i < 50; ++i)
    text += "========= Invalid __global__ read of size 4 bytes\n=========     at k()+0x10 in a.cu:1\n";
  EXPECT_EQ(static_cast<std::int64_t>(parse_sanitizer_log(text).findings.size()), kMaxSanitizerFindings);
}

TEST(SanitizerLog, AnAddressIsNamedByTheArrayItFallsInOrNextTo) {
  const auto arrays = arrays_at(0x10000, 0x20000);
  EXPECT_EQ(locate_address(0x20010, arrays), "y + 16 bytes");
  EXPECT_EQ(locate_address(0x20000 + 4108, arrays), "y + 4108 bytes (past its end: y holds 4108 bytes)");
  EXPECT_EQ(locate_address(0x20000 - 4, arrays), "y - 4 bytes (before its start)");
  EXPECT_EQ(locate_address(0x10000 + 4108 + 8, arrays), "x + 4116 bytes (past its end: x holds 4108 bytes)");
  EXPECT_EQ(locate_address(0x90000000, arrays), std::nullopt);  // near none
  EXPECT_EQ(locate_address(0x20010, {SanitizerArray{"z", "output", "not hex", 16}}), std::nullopt);
}

TEST(SanitizerLog, C22_AFailedPointNamesTheErrorTheKernelAndTheArray) {
  SanitizerReport report;
  report.tool = "memcheck";
  report.arrays = arrays_at(0x7f3c1dff0000, 0x7f3c1e000000);
  add_sanitizer_log(report, parse_sanitizer_log(kMemcheckLog));
  EXPECT_EQ(report.errors, 2);
  ASSERT_EQ(report.findings.size(), 2u);
  EXPECT_EQ(report.findings[0].array, "y + 4112 bytes (past its end: y holds 4108 bytes)");
  EXPECT_EQ(sanitizer_failure_reason(report),
            "compute-sanitizer memcheck: 2 errors: Invalid __global__ write of size 4 bytes in (anonymous "
            "namespace)::past_end_kernel(float const*, float*, long) at y + 4112 bytes (past its end: y holds 4108 "
            "bytes)");
}

TEST(SanitizerLog, TheRecordsSanitizerRoundTrips) {
  PointRecord p = test::point_record("0123456789abcdef", "integrity/past_end/mode=eager,n=1027", Status::incorrect);
  p.reason = "compute-sanitizer memcheck: 1 error";
  SanitizerReport report;
  report.tool = "memcheck";
  report.arrays = arrays_at(0x10000, 0x20000);
  add_sanitizer_log(report, parse_sanitizer_log(kMemcheckLog));
  p.sanitizer = report;
  const Json j = to_json(p);
  EXPECT_EQ(j["sanitizer"]["tool"], "memcheck");
  EXPECT_EQ(j["sanitizer"]["arrays"][1]["address"], "0x20000");
  EXPECT_EQ(to_json(point_from_json(j)), j);
  Json bad = j;
  bad["sanitizer"]["errors"] = "two";
  EXPECT_THROW(point_from_json(bad), ResultError);
}

using test::slurp;

// The committed compute-sanitizer report tests/data/sanitizer/`name`, parsed.
SanitizerLog committed_log(const std::string& name) {
  return parse_sanitizer_log(slurp(test::kSource + "/tests/data/sanitizer/" + name));
}

// Reports compute-sanitizer 2025.3.1 wrote on an H100 (tests/data/sanitizer/): memcheck of the integrity aid's
// past_end at n = 1027 (the write, then the failed calls after the fault) and racecheck of the audit aid's racy_shared.
TEST(SanitizerLog, C22_RealMemcheckReportNamesTheWriteAndTheArrayPastWhoseEndItLands) {
  const SanitizerLog log = committed_log("memcheck-past-end.log");
  EXPECT_EQ(log.errors, 20);
  ASSERT_EQ(log.findings.size(), 20u);
  EXPECT_EQ(log.findings[0].kind, "Invalid __global__ write of size 4 bytes");
  EXPECT_EQ(log.findings[0].kernel,
            "<unnamed>::compute(float *, float *, long, float *, long, unsigned long long *, unsigned long long)");
  ASSERT_TRUE(log.addresses[0]);
  SanitizerReport report;
  report.tool = "memcheck";
  // y as the worker recorded it: the nearest allocation the tool names, 4108 bytes (1027 floats).
  report.arrays = {SanitizerArray{"x", "input", "0x7f0ddac00000", 4108},
                   SanitizerArray{"y", "output", "0x7f0ddac01400", 4108}};
  add_sanitizer_log(report, log);
  EXPECT_EQ(report.findings[0].array, "y + 4108 bytes (past its end: y holds 4108 bytes)");
  EXPECT_NE(log.findings[1].kind.find("cudaErrorLaunchFailure"), std::string::npos);
}

TEST(SanitizerLog, C22_RealRacecheckReportNamesTheRacyKernel) {
  const SanitizerLog log = committed_log("racecheck-racy-shared.log");
  EXPECT_EQ(log.errors, 2);
  ASSERT_EQ(log.findings.size(), 2u);
  EXPECT_EQ(log.findings[0].kernel, "<unnamed>::racy_compute(const float *, float *, long)");
  EXPECT_NE(log.findings[0].kind.find("Race reported between Read access"), std::string::npos);
  EXPECT_NE(log.findings[0].detail.find("[2560 hazards]"), std::string::npos);
}

// labrun sweep --sanitize: refused before anything runs where it cannot, each with its exit code (README).
TEST(SanitizeSweep, C22_IsRefusedWithoutTheToolAndOnTheHostBackend) {
  test::TempDir dir("labrun_sanitize");
  const std::string out = dir.file("s.jsonl");
  const auto run = [&](const std::string& env) {
    return test::run_logged(dir.path().string(),
                            env + " '" + test::kBinary + "' sweep '" + test::kSource +
                                "/configs/masking.yaml' --device cpu --sanitize memcheck -o '" + out + "'",
                            dir.file("log"))
        .code;
  };
  EXPECT_EQ(run("LABRUN_COMPUTE_SANITIZER=" + dir.file("absent")), 6);
  EXPECT_NE(slurp(dir.file("log")).find("compute-sanitizer not found"), std::string::npos);
  // A tool in place (any executable stands in: the sweep is refused before it runs): the host backend has no kernel.
  EXPECT_EQ(run("LABRUN_COMPUTE_SANITIZER=/bin/true"), 5);
  EXPECT_NE(slurp(dir.file("log")).find("compute-sanitizer checks CUDA kernels"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(out));
}

}  // namespace
}  // namespace labrun
