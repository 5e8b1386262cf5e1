// GPU tests of fault isolation and the memory check (issue 12; CTest label `gpu`, SKIPPED without a device).
//
// What they establish: a point whose footprint exceeds the device's free memory is `skipped` with both numbers
// before it allocates, and the next point runs; the fault test aid mid-sweep on the device (labrun_testaid,
// tests/aids/fault) gives `device_fault` with the CUDA error's name for the illegal address and the trap,
// `crashed` for the abort, `timeout` for the hung kernel, and every `sum` point the status a run without the
// faulty variants gives it.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "gpu/gpu_fixture.hpp"
#include "cuda_backend.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::source_file;
using test::testaid;

class WorkersGpu : public test::GpuLabTest {
 protected:
  WorkersGpu() { quick_samples_ = 2; }
};

// A point larger than free device memory (most of it taken by a blob first) is skipped with both numbers, and
// the sweep goes on: the next, small point is ok.
TEST_F(WorkersGpu, PointLargerThanFreeMemoryIsSkippedWithBothNumbers) {
  std::size_t free = 0, total = 0;
  ASSERT_EQ(cudaMemGetInfo(&free, &total), cudaSuccess);
  const std::size_t leave = std::size_t{6} << 30;  // 6 GiB free
  ASSERT_GT(free, leave + (std::size_t{1} << 30));
  void* blob = nullptr;
  ASSERT_EQ(cudaMalloc(&blob, free - leave), cudaSuccess);
  const RegisteredExperiment& softmax = *registry_.find("softmax");
  // An online softmax point of `elements` f32 elements in rows of 4096, eager, hot L2.
  const auto online = [](std::int64_t elements) {
    return Point{"softmax",
                 "online",
                 {{"cols", std::int64_t{4096}},
                  {"elements", elements},
                  {"dtype", std::string("f32")},
                  {"mode", std::string("eager")},
                  {"l2", std::string("hot")}}};
  };
  // 2^31 f32 elements: x and y take 17.2 GB, under 90% of the device's memory but over what is free now.
  const Point big = online(std::int64_t{1} << 31);
  const Point small = online(std::int64_t{1} << 20);
  std::vector<PointRecord> records;
  run_sweep({big, small}, softmax, *backend_, lab_, Json(), [&](const PointRecord& r) { records.push_back(r); }, {});
  cudaFree(blob);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].status, Status::skipped);
  const std::string reason = records[0].reason.value_or("");
  EXPECT_EQ(reason.rfind("the point needs ", 0), 0u) << reason;
  EXPECT_NE(reason.find(" but the device has "), std::string::npos) << reason;
  EXPECT_NE(reason.find(" free of "), std::string::npos) << reason;
  EXPECT_EQ(records[1].status, Status::ok) << records[1].reason.value_or("");
}

// The fault test aid mid-sweep on the device, through the supervisor: each faulty point costs itself only.
TEST_F(WorkersGpu, FaultAidMidSweepCostsOnlyItsPoints) {
  backend_.reset();  // the workers open the device themselves
  test::TempDir dir;
  const std::string out = dir.file("fault.jsonl"), plain = dir.file("plain.jsonl"), log = dir.file("log.txt");
  const std::string config = source_file("tests/aids/fault.yaml");
  const std::string base = "'" + testaid() + "' sweep '" + config + "' --device cuda -q --lab point_timeout_s=5";
  int status = std::system((base + " -o '" + out + "' > '" + log + "' 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 1);
  status = std::system((base + " --only variant=sum -o '" + plain + "' >> '" + log + "' 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 0);
  std::map<std::string, std::string> clean;
  for (const Json& r : read_jsonl(plain))
    if (r["type"] == "point") clean[r["id"]] = r["status"];
  std::map<std::string, int> count;
  std::size_t segments = 0;
  for (const Json& r : read_jsonl(out)) {
    if (r["type"] == "segment") ++segments;
    if (r["type"] != "point") continue;
    const std::string variant = r["variant"], st = r["status"];
    const std::string reason = r["reason"].is_string() ? r["reason"].get<std::string>() : "";
    ++count[variant + ":" + st];
    if (clean.count(r["id"])) EXPECT_EQ(st, clean[r["id"]]) << r["key"];
    if (variant == "illegal_address") EXPECT_EQ(reason.rfind("cudaErrorIllegalAddress: ", 0), 0u) << reason;
    if (variant == "trap") EXPECT_EQ(reason.rfind("cudaErrorLaunchFailure: ", 0), 0u) << reason;
    if (st == "device_fault") EXPECT_NE(reason.find("(in phase warmup;"), std::string::npos) << reason;
  }
  const std::map<std::string, int> expected = {{"sum:ok", 2},
                                               {"illegal_address:device_fault", 2},
                                               {"abort:crashed", 2},
                                               {"trap:device_fault", 2},
                                               {"hang:timeout", 2}};
  EXPECT_EQ(count, expected);
  EXPECT_EQ(segments, 7u) << "a fresh worker after each faulty point but the last";
  std::ifstream in(log);
  std::stringstream s;
  s << in.rdbuf();
  std::printf("%s", s.str().c_str());
}

}  // namespace
}  // namespace labrun
