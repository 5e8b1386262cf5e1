// Tests of the worker model (issue 12, src/run/supervisor.hpp): a sweep killed with SIGKILL at several moments and
// resumed holds each point once, as a clean run does (single and pooled); SIGINT and SIGTERM stop it with the
// resume command and exit 130/143, leaving no worker behind; the fault test aid's abort and hang cost their own
// point only (crashed, timeout); one writer per file; a resume of another run's file is refused.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "record.hpp"
#include "spawn.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

using test::kBinary;
using test::kTestAid;
const std::string kSmoke = test::kSource + "/configs/smoke.yaml";
const std::string kFaultConfig = test::kSource + "/tests/aids/fault.yaml";
// Slows every ok point of the smoke config to 20 samples of >= 2 ms (an unreachable CI target), so a host sweep
// lasts about 7 s: long enough to be killed in the middle.
const std::vector<std::string> kSlow = {"--lab", "min_samples=20",         "--lab", "target_rel_ci=1e-9",
                                        "--lab", "min_sample_time_s=0.002"};

using test::slurp;

// Runs `program args...` in `cwd` to completion, stdout and stderr captured together (in Logged::log).
test::Logged run(const std::string& cwd, const std::string& program, std::vector<std::string> args) {
  args.insert(args.begin(), program);
  const std::string log =
      (fs::temp_directory_path() / ("labrun-workers-" + std::to_string(::getpid()) + ".log")).string();
  return test::run_logged(cwd, test::quoted(args), log);
}

// Starts `program args...` with stdout and stderr to `log`; returns its pid.
int start(const std::string& program, std::vector<std::string> args, const std::string& log) {
  args.insert(args.begin(), program);
  SpawnOptions o;
  o.program = program;
  o.output = log;
  return start_process(args, o);
}

// The pids of `pid`'s children (Linux /proc/PID/task/PID/children).
std::vector<int> children_of(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/task/" + std::to_string(pid) + "/children");
  std::vector<int> out;
  int child = 0;
  while (in >> child) out.push_back(child);
  return out;
}

// True while a process `pid` exists (a zombie counts as gone: it runs nothing).
bool alive(int pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  if (!stat) return false;
  std::string line;
  std::getline(stat, line);
  const auto close = line.rfind(')');
  return close != std::string::npos && line.size() > close + 2 && line[close + 2] != 'Z';
}

// Waits until `path` holds at least `points` point lines (or `limit_s` passes). The limit is generous: it returns as
// soon as the points are there, and a loaded CI machine once needed more than 30 s for 170 (the kill then came at 169).
void wait_for_points(const std::string& path, std::size_t points, double limit_s = 180) {
  const auto t0 = std::chrono::steady_clock::now();
  while (std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() < limit_s) {
    std::ifstream in(path);
    std::string line;
    std::size_t n = 0;
    while (std::getline(in, line)) n += line.find("\"type\":\"point\"") != std::string::npos;
    if (n >= points) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// id -> status of every point line of a file; `duplicates` counts ids seen twice.
std::map<std::string, std::string> statuses(const std::string& path, int* duplicates = nullptr) {
  std::map<std::string, std::string> out;
  int dup = 0;
  for (const Json& r : read_jsonl(path))
    if (r["type"] == "point") dup += !out.emplace(r["id"].get<std::string>(), r["status"].get<std::string>()).second;
  if (duplicates) *duplicates = dup;
  return out;
}

std::vector<std::string> with(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// A host sweep killed with SIGKILL (the supervisor; its worker dies with it) at several moments, then resumed:
// the final file holds each point exactly once and the same statuses as a clean run.
TEST(Workers, SigkilledSweepResumesToTheCleanRunsPointSet) {
  TempDir dir;
  const std::string cwd = dir.path().string();
  const auto args = with({"sweep", kSmoke, "--device", "cpu", "-q"}, kSlow);
  ASSERT_EQ(run(cwd, kBinary, with(args, {"-o", "clean.jsonl"})).code, 0);
  const auto clean = statuses(cwd + "/clean.jsonl");
  ASSERT_EQ(clean.size(), 288u);
  for (const std::size_t after : {std::size_t{1}, std::size_t{40}, std::size_t{170}}) {
    const std::string out = cwd + "/killed-" + std::to_string(after) + ".jsonl";
    const int pid = start(kBinary, with(args, {"-o", out}), cwd + "/run.log");
    wait_for_points(out, after);
    const std::vector<int> workers = children_of(pid);
    ::kill(pid, SIGKILL);
    (void)wait_process(pid, true);
    for (int w = 0; w < 100 && !workers.empty() && alive(workers.front()); ++w)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    for (int w : workers) EXPECT_FALSE(alive(w)) << "worker " << w << " outlived its killed supervisor";
    const std::size_t kept = statuses(out).size();
    EXPECT_GE(kept, after);
    EXPECT_LT(kept, 288u) << "the run finished before it was killed: the test proves nothing";
    // -q keeps warnings only; --log-level info brings the worker's "holds N of M" back.
    const test::Logged resumed = run(cwd, kBinary, with(args, {"-o", out, "--resume", "--log-level", "info"}));
    EXPECT_EQ(resumed.code, 0) << resumed.log;
    EXPECT_NE(resumed.log.find("holds " + std::to_string(kept) + " of 288 points"), std::string::npos) << resumed.log;
    int duplicates = -1;
    EXPECT_EQ(statuses(out, &duplicates), clean) << "killed after " << after;
    EXPECT_EQ(duplicates, 0);
    // The resumed segment records its own environment and calibration.
    std::size_t segments = 0;
    for (const Json& r : read_jsonl(out))
      if (r["type"] == "segment") {
        ++segments;
        EXPECT_TRUE(r["calibration"].is_object());
        EXPECT_EQ(r["points_held"], kept);
      }
    EXPECT_EQ(segments, 1u);
  }
}

// The same for a pooled run (lab.processes = 2): killed in the first and in the second process, resumed, pooled.
TEST(Workers, SigkilledPooledSweepResumes) {
  TempDir dir;
  const std::string cwd = dir.path().string();
  const auto args = with({"sweep", kSmoke, "--device", "cpu", "-q", "--lab", "processes=2"}, kSlow);
  ASSERT_EQ(run(cwd, kBinary, with(args, {"-o", "clean.jsonl"})).code, 0);
  const auto clean = statuses(cwd + "/clean.jsonl");
  ASSERT_EQ(clean.size(), 288u);
  for (const int process : {1, 2}) {
    const std::string out = cwd + "/pooled-" + std::to_string(process) + ".jsonl";
    const int pid = start(kBinary, with(args, {"-o", out}), cwd + "/run.log");
    wait_for_points(out + ".processes/process-" + std::to_string(process) + "-of-2.jsonl", 60);
    ::kill(pid, SIGKILL);
    (void)wait_process(pid, true);
    EXPECT_FALSE(fs::exists(out)) << "a killed pooled run leaves no output, only its processes' files";
    const test::Logged resumed = run(cwd, kBinary, with(args, {"-o", out, "--resume"}));
    EXPECT_EQ(resumed.code, 0) << resumed.log;
    int duplicates = -1;
    EXPECT_EQ(statuses(out, &duplicates), clean);
    EXPECT_EQ(duplicates, 0);
    EXPECT_FALSE(fs::exists(out + ".processes"));
    const Json header = read_jsonl(out).front();
    EXPECT_EQ(header["processes"]["count"], 2);
  }
}

// SIGINT and SIGTERM: the worker is stopped (checked by pid), the message names the finished points and the
// exact resume command, the exit status is 128 + the signal; running that command completes the file.
TEST(Workers, InterruptPrintsResumeCommandAndLeavesNoOrphan) {
  TempDir dir;
  const std::string cwd = dir.path().string();
  for (const int signal : {SIGINT, SIGTERM}) {
    const std::string out = cwd + "/int-" + std::to_string(signal) + ".jsonl", log = cwd + "/int.log";
    const int pid = start(kBinary, with({"sweep", kSmoke, "--device", "cpu", "-q", "-o", out}, kSlow), log);
    wait_for_points(out, 20);
    const std::vector<int> workers = children_of(pid);
    ASSERT_EQ(workers.size(), 1u);
    ::kill(pid, signal);
    const int code = *wait_process(pid, true);
    EXPECT_EQ(code, 128 + signal);
    EXPECT_FALSE(alive(workers.front())) << "the worker outlived the interrupted sweep";
    const std::string err = slurp(log);
    const std::size_t kept = statuses(out).size();
    EXPECT_NE(err.find(std::string("interrupted by SIG") + (signal == SIGINT ? "INT" : "TERM") + ": " +
                       std::to_string(kept) + " of 288 points finished, kept in " + out),
              std::string::npos)
        << err;
    const auto at = err.find("resume with: ");
    ASSERT_NE(at, std::string::npos) << err;
    const std::string command = err.substr(at + 13, err.find('\n', at) - at - 13);
    EXPECT_NE(command.find(" -o " + out + " --resume"), std::string::npos) << command;
    const int status = std::system(("cd '" + cwd + "' && " + command + " > /dev/null 2>&1").c_str());
    EXPECT_EQ(WEXITSTATUS(status), 0) << command;
    EXPECT_EQ(statuses(out).size(), 288u);
  }
}

// The fault test aid mid-sweep on the host backend: abort -> crashed (SIGABRT, warmup), hang -> timeout, and
// every other point the status a run without the faulty variants gives it; exit 1 (a failed point).
TEST(Workers, CrashAndHangCostTheirOwnPointOnly) {
  TempDir dir;
  const std::string cwd = dir.path().string();
  const test::Logged faulty = run(cwd, kTestAid,
                                  {"sweep", kFaultConfig, "--device", "cpu", "-q", "-o", "faulty.jsonl", "--lab",
                                   "point_timeout_s=1"});
  EXPECT_EQ(faulty.code, 1) << faulty.log;
  const test::Logged plain = run(cwd, kTestAid,
                                 {"sweep", kFaultConfig, "--device", "cpu", "-q", "-o", "plain.jsonl", "--lab",
                                  "point_timeout_s=1", "--only", "variant=sum"});
  EXPECT_EQ(plain.code, 0) << plain.log;
  int duplicates = -1;
  const auto got = statuses(cwd + "/faulty.jsonl", &duplicates);
  EXPECT_EQ(duplicates, 0);
  EXPECT_EQ(got.size(), 10u);
  for (const auto& [id, status] : statuses(cwd + "/plain.jsonl")) EXPECT_EQ(got.at(id), status) << id;
  std::map<std::string, int> count;
  for (const Json& r : read_jsonl(cwd + "/faulty.jsonl")) {
    if (r["type"] != "point") continue;
    const std::string variant = r["variant"], status = r["status"];
    ++count[variant + ":" + status];
    if (variant == "abort") {
      EXPECT_EQ(r["reason"],
                "the worker died of SIGABRT (Aborted) in phase warmup; a fresh worker runs the next point");
      EXPECT_EQ(r["failed_phase"], "warmup");
    }
    if (variant == "hang")
      EXPECT_EQ(r["reason"],
                "the point ran past lab.point_timeout_s = 1 s (in phase warmup); its worker was killed "
                "and a fresh one runs the next point");
  }
  const std::map<std::string, int> expected = {{"sum:ok", 2},
                                               {"abort:crashed", 2},
                                               {"hang:timeout", 2},
                                               {"illegal_address:not_supported", 2},
                                               {"trap:not_supported", 2}};
  EXPECT_EQ(count, expected);
  EXPECT_NE(faulty.log.find("crashed its worker (SIGABRT (Aborted), phase warmup); starting a fresh worker"),
            std::string::npos)
      << faulty.log;
}

// The normal build does not have the test aid.
TEST(Workers, LabrunListHasNoTestAid) {
  TempDir dir;
  const test::Logged list = run(dir.path().string(), kBinary, {"list"});
  EXPECT_EQ(list.code, 0);
  EXPECT_NE(list.log.find("masking:"), std::string::npos);
  EXPECT_EQ(list.log.find("fault:"), std::string::npos);
  const test::Logged aid = run(dir.path().string(), kTestAid, {"list"});
  EXPECT_NE(aid.log.find("fault: test aid"), std::string::npos);
}

// One writer per file: a second sweep onto a file being written is refused (exit 4), even with --force, and the
// first finishes unharmed.
TEST(Workers, SecondWriterIsRefused) {
  TempDir dir;
  const std::string cwd = dir.path().string(), out = cwd + "/one.jsonl";
  const int pid = start(kBinary, with({"sweep", kSmoke, "--device", "cpu", "-q", "-o", out}, kSlow), cwd + "/a.log");
  wait_for_points(out, 5);
  const test::Logged second = run(cwd, kBinary, {"sweep", kSmoke, "--device", "cpu", "-q", "-o", out, "--force"});
  EXPECT_EQ(second.code, 4);
  EXPECT_NE(second.log.find(out + " is being written by another labrun (pid " + std::to_string(pid) + ")"),
            std::string::npos)
      << second.log;
  EXPECT_EQ(*wait_process(pid, true), 0);
  int duplicates = -1;
  EXPECT_EQ(statuses(out, &duplicates).size(), 288u);
  EXPECT_EQ(duplicates, 0);
  EXPECT_FALSE(fs::exists(out + ".lock"));
}

// --resume of a file another config wrote is refused (exit 4) and the file is left as it was.
TEST(Workers, ResumeOfAnotherRunIsRefused) {
  TempDir dir;
  const std::string cwd = dir.path().string();
  ASSERT_EQ(run(cwd, kBinary, {"sweep", kSmoke, "--device", "cpu", "-q", "-o", "a.jsonl"}).code, 0);
  const std::string before = slurp(cwd + "/a.jsonl");
  std::ofstream(cwd + "/other.yaml") << slurp(kSmoke) << "\n# another config\n";
  const test::Logged r = run(cwd, kBinary,
                             {"sweep", "other.yaml", "--device", "cpu", "-q", "-o", "a.jsonl", "--resume"});
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.log.find("cannot resume a.jsonl: it holds another run (its config sha256 is "), std::string::npos)
      << r.log;
  EXPECT_EQ(slurp(cwd + "/a.jsonl"), before);
  // A complete file resumes to itself: nothing to run.
  const test::Logged same = run(cwd, kBinary, {"sweep", kSmoke, "--device", "cpu", "-q", "-o", "a.jsonl", "--resume"});
  EXPECT_EQ(same.code, 0) << same.log;
  EXPECT_EQ(slurp(cwd + "/a.jsonl"), before);
}

// An unwritable place for the default results/ folder names the folder and the way out.
TEST(Workers, UnwritableWorkingDirectoryIsAClearOutputError) {
  const test::Logged r = run("/proc", kBinary, {"sweep", kSmoke, "--device", "cpu", "-q"});
  EXPECT_EQ(r.code, 4);
  EXPECT_NE(r.log.find("cannot create the folder results for the results"), std::string::npos) << r.log;
  EXPECT_NE(r.log.find("-o"), std::string::npos);
}

// Review findings (issue 12): a last line that lost only its newline is a whole record, kept, not run twice or
// dropped; a header that lost its newline stays the header.
TEST(Workers, LastLineWithoutNewlineIsKept) {
  TempDir dir;
  const std::string cwd = dir.path().string();
  const auto args = std::vector<std::string>{"sweep", kSmoke, "--device", "cpu", "-q"};
  ASSERT_EQ(run(cwd, kBinary, with(args, {"-o", "clean.jsonl"})).code, 0);
  const std::string clean = slurp(cwd + "/clean.jsonl");
  std::size_t at = 0;
  for (int line = 0; line < 100; ++line) at = clean.find('\n', at) + 1;
  for (const std::size_t cut : {at - 1, clean.find('\n')}) {  // 99 points without the last newline; the header alone
    std::ofstream(cwd + "/cut.jsonl", std::ios::trunc) << clean.substr(0, cut);
    const test::Logged r = run(cwd, kBinary, with(args, {"-o", "cut.jsonl", "--resume"}));
    EXPECT_EQ(r.code, 0) << r.log;
    int duplicates = -1;
    EXPECT_EQ(statuses(cwd + "/cut.jsonl", &duplicates), statuses(cwd + "/clean.jsonl"));
    EXPECT_EQ(duplicates, 0);
    EXPECT_EQ(read_jsonl(cwd + "/cut.jsonl").front()["type"], "header");
  }
}

// The one-writer lock follows the file: a symlink to a file being written is refused too, and so is a hard link.
TEST(Workers, SecondWriterThroughALinkIsRefused) {
  TempDir dir;
  const std::string cwd = dir.path().string(), out = cwd + "/real.jsonl";
  const int pid = start(kBinary, with({"sweep", kSmoke, "--device", "cpu", "-q", "-o", out}, kSlow), cwd + "/a.log");
  wait_for_points(out, 5);
  fs::create_symlink(out, cwd + "/sym.jsonl");
  fs::create_hard_link(out, cwd + "/hard.jsonl");
  for (const char* name : {"sym.jsonl", "hard.jsonl"}) {
    const test::Logged second = run(cwd, kBinary, {"sweep", kSmoke, "--device", "cpu", "-q", "-o", name, "--resume"});
    EXPECT_EQ(second.code, 4) << name << ": " << second.log;
    EXPECT_NE(second.log.find("is being written by another labrun"), std::string::npos) << second.log;
  }
  EXPECT_EQ(*wait_process(pid, true), 0);
  int duplicates = -1;
  EXPECT_EQ(statuses(out, &duplicates).size(), 288u);
  EXPECT_EQ(duplicates, 0);
}

// A pooled run's processes are resumed only by a run of as many processes; nothing of them is removed otherwise.
TEST(Workers, PooledResumeNeedsTheSameProcessCount) {
  TempDir dir;
  const std::string cwd = dir.path().string(), out = cwd + "/pc.jsonl";
  const int pid = start(kBinary,
                        with({"sweep", kSmoke, "--device", "cpu", "-q", "--lab", "processes=2", "-o", out}, kSlow),
                        cwd + "/a.log");
  wait_for_points(out + ".processes/process-1-of-2.jsonl", 30);
  ::kill(pid, SIGKILL);
  (void)wait_process(pid, true);
  const std::string part = slurp(out + ".processes/process-1-of-2.jsonl");
  const test::Logged three = run(
      cwd, kBinary,
      with({"sweep", kSmoke, "--device", "cpu", "-q", "--lab", "processes=3", "-o", out, "--resume"}, kSlow));
  EXPECT_EQ(three.code, 4) << three.log;
  EXPECT_NE(three.log.find("holds the processes of a 2-process run, and this one has lab.processes = 3"),
            std::string::npos)
      << three.log;
  const test::Logged one = run(cwd, kBinary,
                               with({"sweep", kSmoke, "--device", "cpu", "-q", "-o", out, "--resume"}, kSlow));
  EXPECT_EQ(one.code, 4) << one.log;
  EXPECT_NE(one.log.find("holds a pooled run's processes (lab.processes = 2)"), std::string::npos) << one.log;
  EXPECT_EQ(slurp(out + ".processes/process-1-of-2.jsonl"), part);
  EXPECT_FALSE(fs::exists(out));
}

// --force interrupted before its first point says the earlier results are unchanged (and they are); the header's
// argv is the user's command line, not the worker's; -o naming a folder and SIGHUP are clear.
TEST(Workers, ForceInterruptedEarlyArgvFolderAndSighup) {
  TempDir dir;
  const std::string cwd = dir.path().string(), out = cwd + "/f.jsonl";
  ASSERT_EQ(run(cwd, kBinary, {"sweep", kSmoke, "--device", "cpu", "-q", "-o", out}).code, 0);
  const std::string before = slurp(out);
  const Json header = read_jsonl(out).front();
  EXPECT_EQ(header["argv"], Json({kBinary, "sweep", kSmoke, "--device", "cpu", "-q", "-o", out}));
  // A slow first point: each of its 10 samples lasts at least 5 s (warmup ends early at steady state).
  const int pid = start(kBinary,
                        {"sweep", kSmoke, "--device", "cpu", "-o", out, "--force", "--lab", "warmup_time_s=3", "--lab",
                         "min_sample_time_s=5"},
                        cwd + "/force.log");
  std::this_thread::sleep_for(std::chrono::milliseconds(700));
  ::kill(pid, SIGINT);
  EXPECT_EQ(*wait_process(pid, true), 130);
  EXPECT_NE(
      slurp(cwd + "/force.log").find("before this run's first point: " + out + " still holds the earlier results"),
      std::string::npos)
      << slurp(cwd + "/force.log");
  EXPECT_EQ(slurp(out), before);
  fs::create_directory(cwd + "/folder");
  const test::Logged folder = run(cwd, kBinary, {"sweep", kSmoke, "--device", "cpu", "-q", "-o", "folder", "--force"});
  EXPECT_EQ(folder.code, 4);
  EXPECT_NE(folder.log.find("folder is a folder; -o names the result file (e.g. -o folder/masking.jsonl)"),
            std::string::npos)
      << folder.log;
  // A name with a comma, which every reader takes as a list of files, is refused before any point runs (a pooled
  // run once measured for minutes and then could not read its own processes back).
  const test::Logged comma = run(cwd, kBinary,
                                 {"sweep", kSmoke, "--device", "cpu", "-q", "-o", "a,b.jsonl", "--lab", "processes=2"});
  EXPECT_EQ(comma.code, 4);
  EXPECT_NE(comma.log.find("a,b.jsonl: a result file's name cannot hold ','"), std::string::npos) << comma.log;
  EXPECT_NE(comma.log.find("name it e.g. a_b.jsonl"), std::string::npos) << comma.log;
  EXPECT_FALSE(fs::exists(cwd + "/a,b.jsonl"));
  EXPECT_FALSE(fs::exists(cwd + "/a,b.jsonl.processes"));
  const std::string hup = cwd + "/hup.jsonl";
  const int p2 = start(kBinary, with({"sweep", kSmoke, "--device", "cpu", "-q", "-o", hup}, kSlow), cwd + "/hup.log");
  wait_for_points(hup, 10);
  ::kill(p2, SIGHUP);
  EXPECT_EQ(*wait_process(p2, true), 129);
  EXPECT_NE(slurp(cwd + "/hup.log").find("resume with: "), std::string::npos);
}

}  // namespace
}  // namespace labrun
