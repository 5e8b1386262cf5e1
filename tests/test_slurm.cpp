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

// `word` single-quoted for sh (a ' written '\'').
std::string test_quote(const std::string& word) {
  std::string out = "'";
  for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
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

// H11: a value written into a script can never end its line or word. Values sbatch reads from #SBATCH lines are
// checked (exit 2 naming the flag, nothing created); values bash reads are single-quoted, so the array script, run
// with a config under a folder whose name holds a command substitution and quotes, runs no command of theirs.
TEST(Slurm, H11_ValuesThatCouldEndAnSbatchLineAreRefusedNamingTheFlag) {
  test::TempDir dir;
  const std::string d = dir.path().string(), config = kSource + "/configs/smoke.yaml";
  const auto slurm = [&](const std::string& args) {  // bash: the hostile values are written $'...'
    return sh("bash -c " + test_quote("cd '" + d + "' && '" + kBinary + "' slurm '" + config + "' --shards 2 " + args +
                                      " > out.txt 2>&1"));
  };
  const std::vector<std::pair<std::string, std::string>> hostile = {
      {"-o s --partition $'gpu\\ntouch PWNED'", "--partition"},
      {"-o s --partition 'gpu;touch PWNED'", "--partition"},
      {"-o s --account 'a b'", "--account"},
      {"-o s --time garbage", "--time"},
      {"-o s --time $'1:00\\ntouch PWNED'", "--time"},
      {"-o $'s\\ntouch PWNED'", "-o"},
      {"-o 's p'", "-o"},
      {"-o 's%A'", "-o"},
      {"-o 'a,b'", "-o"},      // a shard's file name would carry the comma, which sweep refuses in every task
      {"-o ''", "--output"}};  // empty: "cannot make absolute path", exit 70, before
  for (const auto& [args, flag] : hostile) {
    EXPECT_EQ(slurm(args), 2) << args;
    const std::string said = slurp(d + "/out.txt");
    EXPECT_NE(said.find(flag + ": "), std::string::npos) << args << ": " << said;
    EXPECT_EQ(said.find("\ntouch PWNED"), std::string::npos) << "the value's newline is shown escaped: " << said;
    std::vector<std::string> left;
    for (const auto& e : fs::directory_iterator(d))
      if (e.path().filename() != "out.txt") left.push_back(e.path().filename().string());
    EXPECT_TRUE(left.empty()) << args << ": nothing is created, but " << left.front();
  }
  for (const std::string time : {"30", "30:00", "1:00:00", "2-12", "2-12:30", "2-12:30:00", "UNLIMITED"}) {
    EXPECT_EQ(slurm("-o ok --force --time " + time + " --partition gpu,gpu-long --account lab_1.x"), 0)
        << time << ": " << slurp(d + "/out.txt");
    for (const auto& e : fs::directory_iterator(d + "/ok"))
      if (e.path().string().ends_with("-array.sbatch"))
        EXPECT_NE(slurp(e.path().string()).find("#SBATCH --time=" + time + "\n"), std::string::npos) << time;
  }
}

TEST(Slurm, H11_TheArrayScriptRunsNoCommandAHostileConfigPathHolds) {
  test::TempDir dir;
  const std::string d = dir.path().string();
  // A config under a folder whose name is a command substitution with quotes (no whitespace: -o could not hold it,
  // but the config's path is only ever a quoted word).
  const std::string hostile = d + "/c$(touch${IFS}PWNED)'q\"`touch${IFS}PWNED2`";
  fs::create_directories(hostile);
  fs::copy_file(kSource + "/configs/smoke.yaml", hostile + "/smoke.yaml");
  ASSERT_EQ(sh("cd '" + d + "' && '" + kBinary + "' slurm " + test_quote(hostile + "/smoke.yaml") +
               " --shards 2 -o s > out.txt 2>&1"),
            0)
      << slurp(d + "/out.txt");
  std::string array;
  for (const auto& e : fs::directory_iterator(d + "/s"))
    if (e.path().string().ends_with("-array.sbatch")) array = e.path().string();
  ASSERT_FALSE(array.empty());
  // The task's labrun replaced by a recorder of its arguments (the one line of the script that names the binary).
  std::string script = slurp(array);
  const std::string recorder = d + "/record.sh";
  {
    std::ofstream r(recorder);
    r << "#!/bin/bash\nprintf '%s\\n' \"$@\" > '" << d << "/args.txt'\n";
  }
  fs::permissions(recorder, fs::perms::owner_all);
  const auto at = script.find("exec '");
  ASSERT_NE(at, std::string::npos);
  const auto end = script.find("' sweep ", at);
  script.replace(at + 5, end + 1 - (at + 5), "'" + recorder + "'");
  {
    std::ofstream out(d + "/task.sh");
    out << script;
  }
  EXPECT_EQ(sh("cd '" + d + "' && SLURM_ARRAY_TASK_ID=0 bash task.sh > task.out 2>&1"), 0) << slurp(d + "/task.out");
  EXPECT_FALSE(fs::exists(d + "/PWNED"));
  EXPECT_FALSE(fs::exists(d + "/PWNED2"));
  const std::string args = slurp(d + "/args.txt");
  EXPECT_NE(args.find("sweep\n" + hostile + "/smoke.yaml\n"), std::string::npos) << args;
  EXPECT_NE(args.find("--shard\n1/2\n"), std::string::npos) << args;
}

}  // namespace
}  // namespace labrun
