// GPU tests of the integrity checks (docs/integrity.md; CTest label `gpu`, SKIPPED without a device): the integrity
// test aid (tests/aids/integrity) swept on the device in eager and graph mode, plain and interleaved, every point
// held to what labrun must say (tests/integrity_expect.hpp): each planted fault `incorrect` with its cause named
// (cases C19, C20, C21), each correct variant after it `ok`, no device fault.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "gpu/gpu_fixture.hpp"
#include "integrity_expect.hpp"
#include "record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::source_file;
using test::testaid;

class IntegrityGpu : public test::GpuLabTest {};

using test::points_of;

// Sweeps the aid on the device with `extra` arguments into `dir`/`out`, expecting exit 1 (its planted faults are
// incorrect points): the file's point records.
std::vector<Json> sweep_aid(const test::TempDir& dir, const std::string& out, const std::string& extra) {
  const std::string command = "'" + testaid() + "' sweep '" + source_file("tests/aids/integrity.yaml") +
                              "' --device cuda -q -o '" + dir.file(out) + "' " + extra + " > '" +
                              dir.file(out + ".log") + "' 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 1) << out;
  return points_of(dir.file(out));
}

TEST_F(IntegrityGpu, EveryPlantedFaultIsNamedInEagerAndGraphMode) {
  test::TempDir dir("labrun_integrity_gpu");
  const auto points = sweep_aid(dir, "plain.jsonl", "");
  ASSERT_EQ(points.size(), 76u);
  EXPECT_EQ(test::expect_aid_points(points, {"eager", "graph"}), 76);
  for (const Json& p : points) EXPECT_NE(p["status"], "device_fault") << p["key"] << ": " << p["reason"];
}

TEST_F(IntegrityGpu, AnInterleavedGroupKeepsEachFaultToItsVariant) {
  test::TempDir dir("labrun_integrity_gpu");
  const auto points = sweep_aid(dir, "interleaved.jsonl", "--lab interleave=19");
  ASSERT_EQ(points.size(), 76u);
  EXPECT_EQ(test::expect_aid_points(points, {"eager", "graph"}), 76);
}

}  // namespace
}  // namespace labrun
