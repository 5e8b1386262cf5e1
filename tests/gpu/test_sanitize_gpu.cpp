// GPU tests of the sanitizer sweep (docs/integrity.md "The sanitizer sweep"; CTest label `gpu`, SKIPPED without a
// device or without compute-sanitizer): the integrity aid's one-past-the-end write named by memcheck with the array
// it lands past (case C19's write, found where the fences are off), the audit aid's shared-memory race named by
// racecheck (case C22), correct variants `sanitized`, and no timing in any record.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <string>

#include "gpu/gpu_fixture.hpp"
#include "integrity_expect.hpp"
#include "record.hpp"
#include "sanitize.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::points_of;
using test::source_file;
using test::testaid;

class SanitizeGpu : public test::GpuLabTest {
 protected:
  void SetUp() override {
    GpuLabTest::SetUp();
    if (IsSkipped()) return;
    if (find_compute_sanitizer().empty()) GTEST_SKIP() << "compute-sanitizer not found";
  }

  // The points of `labrun_testaid sweep CONFIG --sanitize TOOL --only ONLY`; its exit status in `exit_status`.
  std::vector<Json> sweep(const std::string& config, const std::string& tool, const std::string& only,
                          int& exit_status) {
    const std::string out = dir_.file(tool + "-" + std::to_string(++runs_) + ".jsonl");
    const std::string command = "'" + testaid() + "' sweep '" + source_file(config) + "' --device cuda -q --sanitize " +
                                tool + " --only '" + only + "' -o '" + out + "' > '" + dir_.file("log") + "' 2>&1";
    const int status = std::system(command.c_str());
    exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return points_of(out);
  }

  test::TempDir dir_{"labrun_sanitize_gpu"};
  int runs_ = 0;
};

TEST_F(SanitizeGpu, MemcheckNamesTheWritePastTheEndAndTheArray) {
  int status = 0;
  const auto points = sweep("tests/aids/integrity.yaml", "memcheck", "variant=past_end,n=1027", status);
  EXPECT_EQ(status, 1);
  ASSERT_EQ(points.size(), 2u);  // eager and graph
  for (const Json& p : points) {
    const std::string reason = p["reason"].is_string() ? p["reason"].get<std::string>() : "";
    EXPECT_EQ(p["status"], "incorrect") << p["key"] << ": " << reason;
    EXPECT_NE(reason.find("compute-sanitizer memcheck"), std::string::npos) << reason;
    EXPECT_NE(reason.find("Invalid __global__ write"), std::string::npos) << reason;
    EXPECT_NE(reason.find("y + 4108 bytes (past its end: y holds 4108 bytes)"), std::string::npos) << reason;
    EXPECT_FALSE(p.contains("timing")) << p["key"];
    ASSERT_TRUE(p["sanitizer"].is_object()) << p["key"];
    EXPECT_EQ(p["sanitizer"]["tool"], "memcheck");
    EXPECT_GE(p["sanitizer"]["errors"].get<int>(), 1);
  }
}

TEST_F(SanitizeGpu, CorrectVariantsAreSanitizedUntimed) {
  int status = 0;
  const auto points = sweep("tests/aids/integrity.yaml", "memcheck", "variant=correct,n=1027", status);
  EXPECT_EQ(status, 0);
  ASSERT_EQ(points.size(), 2u);
  for (const Json& p : points) {
    EXPECT_EQ(p["status"], "sanitized") << p["key"] << ": " << p["reason"];
    EXPECT_FALSE(p.contains("timing")) << p["key"];
    EXPECT_EQ(p["sanitizer"]["errors"], 0);
    EXPECT_TRUE(p["sanitizer"]["findings"].empty());
    EXPECT_FALSE(p["sanitizer"]["arrays"].empty());  // x and y at least
  }
}

TEST_F(SanitizeGpu, RacecheckNamesTheSharedMemoryRace) {
  int status = 0;
  const auto points = sweep("tests/aids/audit.yaml", "racecheck", "variant=racy_shared,n=1027,mode=eager", status);
  EXPECT_EQ(status, 1);
  ASSERT_EQ(points.size(), 1u);
  const Json& p = points[0];
  const std::string reason = p["reason"].is_string() ? p["reason"].get<std::string>() : "";
  EXPECT_EQ(p["status"], "incorrect") << reason;
  EXPECT_NE(reason.find("compute-sanitizer racecheck"), std::string::npos) << reason;
  EXPECT_NE(reason.find("racy_compute"), std::string::npos) << reason;
}

}  // namespace
}  // namespace labrun
