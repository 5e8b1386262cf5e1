// The Slurm test (issue 13): a real single-node Slurm (scripts/slurm_local.sh, started by .ci/run) runs a small
// host-backend sweep as a 4-task job array plus the afterok merge job that `labrun slurm --submit` writes; the
// merged file equals a serial run's point set and statuses. Skipped (reported SKIPPED) when no Slurm answers.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <thread>

#include "record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = LABRUN_BINARY;
const std::string kSource = LABRUN_SOURCE_DIR;

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

int sh(const std::string& command) {
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::map<std::string, std::string> statuses(const std::string& path) {
  std::map<std::string, std::string> out;
  for (const Json& r : read_jsonl(path))
    if (r["type"] == "point") EXPECT_TRUE(out.emplace(r["id"], r["status"]).second) << "duplicate " << r["id"];
  return out;
}

TEST(Slurm, JobArrayAndMergeJobEqualASerialRun) {
  if (sh("sinfo -h > /dev/null 2>&1") != 0) GTEST_SKIP() << "no Slurm answers (scripts/slurm_local.sh up starts one)";
  test::TempDir dir;
  const std::string d = dir.path().string(), config = kSource + "/configs/smoke.yaml";
  ASSERT_EQ(
      sh("cd '" + d + "' && '" + kBinary + "' sweep '" + config + "' --device cpu -q -o serial.jsonl > /dev/null 2>&1"),
      0);
  ASSERT_EQ(sh("cd '" + d + "' && '" + kBinary + "' slurm '" + config +
               "' --shards 4 --gpus-per-task 0 --device cpu --time 10:00 -o jobs --submit > submit.txt 2>&1"),
            0)
      << slurp(d + "/submit.txt");
  const std::string submitted = slurp(d + "/submit.txt");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(submitted, m, std::regex("array job (\\d+) \\(4 tasks\\), merge job (\\d+)")))
      << submitted;
  const std::string array_id = m[1], merge_id = m[2];
  // Wait for the merge job (sbatch --wait would poll every ~10 s): its state, up to 5 minutes.
  std::string state;
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::steady_clock::now() - t0 < std::chrono::minutes(5)) {
    sh("scontrol show job " + merge_id + " > '" + d + "/job.txt' 2>&1");
    std::smatch s;
    const std::string job = slurp(d + "/job.txt");
    if (std::regex_search(job, s, std::regex("JobState=(\\w+)"))) state = s[1];
    if (state == "COMPLETED" || state == "FAILED" || state == "CANCELLED" || state == "TIMEOUT") break;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
  }
  ASSERT_EQ(state, "COMPLETED") << slurp(d + "/job.txt");
  std::string merged;
  int logs = 0;
  for (const auto& e : fs::directory_iterator(d + "/jobs")) {
    const std::string f = e.path().string();
    if (f.ends_with("-merged.jsonl")) merged = f;
    if (f.find("-job" + array_id + "-task") != std::string::npos && f.ends_with(".log")) ++logs;
  }
  ASSERT_FALSE(merged.empty());
  EXPECT_EQ(logs, 4) << "one log per array task";
  EXPECT_EQ(statuses(merged), statuses(d + "/serial.jsonl"));
  const Json header = read_jsonl(merged).front();
  EXPECT_EQ(header["shards"].size(), 4u);
}

}  // namespace
}  // namespace labrun
