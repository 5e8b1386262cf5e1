// Hostile inputs, round two (docs/cases.md H04, H09, H10): the config-side and output-side edges of labrun's
// promises, each tried through the labrun binary as a user would, with its exact message and exit code.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>

#include "format.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::TempDir;

struct Outcome {
  int code = -1;  ///< exit status, -1 when the process did not exit normally
  std::string out, err;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Runs `labrun ARGS` in `dir` with stdout to `stdout_to` (a file in `dir` when empty) and captures the status.
Outcome labrun(const TempDir& dir, const std::string& args, const std::string& stdout_to = "") {
  const std::string out = stdout_to.empty() ? dir.file("stdout.txt") : stdout_to;
  const std::string err = dir.file("stderr.txt");
  const std::string command = "cd '" + dir.path().string() + "' && '" + std::string(LABRUN_BINARY) + "' " + args +
                              " >'" + out + "' 2>'" + err + "'";
  const int status = std::system(command.c_str());
  Outcome r;
  if (status != -1 && WIFEXITED(status)) r.code = WEXITSTATUS(status);
  if (stdout_to.empty()) r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

void write_file(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

/// `validate` of the config `text`: exit 3 and `message` on stderr, and `sweep` of it writes nothing.
void expect_config_error(const std::string& text, const std::string& message) {
  TempDir dir;
  write_file(dir.file("c.yaml"), text);
  const Outcome v = labrun(dir, "validate c.yaml");
  EXPECT_EQ(v.code, 3) << text << "\n" << v.err;
  EXPECT_NE(v.err.find(message), std::string::npos) << v.err;
  const Outcome s = labrun(dir, "sweep c.yaml --device cpu -o out.jsonl");
  EXPECT_EQ(s.code, 3) << s.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("out.jsonl")));
}

// Case H04: a result lost on its way to standard output is exit 4, never 0.
TEST(Hostile, H04_FailedWriteToStandardOutputIsExit4) {
  TempDir dir;
  const std::string smoke = std::string(LABRUN_SOURCE_DIR) + "/configs/smoke.yaml";
  for (const std::string& command : {std::string("list"), std::string("env --device cpu"),
                                     "sweep " + smoke + " --dry-run --device cpu"}) {
    const Outcome r = labrun(dir, command, "/dev/full");
    EXPECT_EQ(r.code, 4) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("labrun: cannot write standard output: "), std::string::npos) << r.err;
  }
  const Outcome ok = labrun(dir, "list");  // the same commands to a file succeed
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("masking"), std::string::npos);
}

// Case H09: lab values that would run every point to point_timeout_s are refused, naming the bound.
TEST(Hostile, H09_LabValuesThatNeverFinishAreRefused) {
  const std::string head = "experiment: masking\naxes:\n  n: [1000]\nlab:\n";
  expect_config_error(head + "  min_sample_time_s: 1e300\n",
                      "c.yaml:5: key 'lab.min_sample_time_s': 1e300 is out of range; expected at most 10 (a larger "
                      "value keeps every point running until point_timeout_s)");
  expect_config_error(head + "  warmup_iterations: 9223372036854775807\n",
                      "key 'lab.warmup_iterations': 9223372036854775807 is out of range; expected at most 1000000");
  expect_config_error(head + "  max_time_s: 1e9\n", "key 'lab.max_time_s': 1e9 is out of range; expected at most 3600");
  expect_config_error(head + "  min_samples: 200\n  min_sample_time_s: 5\n",
                      "c.yaml:6: key 'lab.min_sample_time_s': min_samples x min_sample_time_s + warmup_time_s = 200 x "
                      "5 s + 0.02 s = 1000.02 s reaches point_timeout_s (600 s): every point would time out");
  TempDir dir;  // the same bound on the command line
  const Outcome r = labrun(dir, "validate " + std::string(LABRUN_SOURCE_DIR) +
                                    "/configs/smoke.yaml --lab min_sample_time_s=1e300");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("expected at most 10"), std::string::npos) << r.err;
}

// Case H10: YAML tags, a hypothesis of a variant against itself, and excludes that remove every point.
TEST(Hostile, H10_TagsSelfHypothesesAndEmptySweepsAreRefused) {
  expect_config_error("experiment: !custom masking\n",
                      "c.yaml:1: key 'experiment': the YAML tag '!custom' is not supported");
  expect_config_error("experiment: masking\naxes:\n  n: [!!float 1000]\n",
                      "c.yaml:3: key 'axes.n[0]': the YAML tag '!!float' is not supported");
  expect_config_error("experiment: masking\nhypothesis:\n  - {than: where, faster: where}\n",
                      "'faster' and 'than' name the same variant (where): a hypothesis compares two different variants");
  expect_config_error("experiment: masking\naxes:\n  n: [1000]\nexclude:\n  - {n: 1000}\n",
                      "c.yaml:5: key 'exclude': the exclude rules remove every point of the sweep: nothing would run");
  // !!str stays allowed: it makes a value a string (here where a word belongs).
  TempDir dir;
  write_file(dir.file("ok.yaml"), "experiment: masking\naxes:\n  n: [1000]\n  dtype: [!!str f32]\n");
  const Outcome ok = labrun(dir, "validate ok.yaml");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// Case H10: -0.0 is the value 0: one key and one id, and [0, -0.0] a value given twice.
TEST(Hostile, H10_NegativeZeroIsZero) {
  TempDir dir;
  write_file(dir.file("neg.yaml"), "experiment: masking\naxes:\n  n: [1000]\n  density: [-0.0]\n");
  write_file(dir.file("pos.yaml"), "experiment: masking\naxes:\n  n: [1000]\n  density: [0]\n");
  const Outcome neg = labrun(dir, "sweep neg.yaml --dry-run --device cpu");
  const Outcome pos = labrun(dir, "sweep pos.yaml --dry-run --device cpu");
  ASSERT_EQ(neg.code, 0) << neg.err;
  ASSERT_EQ(pos.code, 0) << pos.err;
  EXPECT_EQ(neg.out, pos.out);
  EXPECT_NE(neg.out.find("density=0,"), std::string::npos) << neg.out;
  EXPECT_EQ(neg.out.find("density=-0"), std::string::npos) << neg.out;
  expect_config_error("experiment: masking\naxes:\n  density: [0, -0.0]\n", "value 0 is given twice");
}

// Case H10: --max-plots -1 is a usage error (it wrapped to the largest size_t).
TEST(Hostile, H10_NegativeMaxPlotsIsAUsageError) {
  TempDir dir;
  for (const std::string command : {"report x.jsonl --max-plots -1", "history x.jsonl --max-plots -1"}) {
    const Outcome r = labrun(dir, command);
    EXPECT_EQ(r.code, 2) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("--max-plots"), std::string::npos) << r.err;
  }
}

// Case H10: ESC and U+202E from a file anyone can edit reach the terminal, report.md and CSV as visible escapes.
TEST(Hostile, H10_ControlCharactersAreShownEscaped) {
  EXPECT_EQ(printable("a\x1b[31mb"), "a\\x1b[31mb");
  EXPECT_EQ(printable("x\u202Ey"), "x\\u202ey");
  EXPECT_EQ(printable("c\xc2\x9b" "d"), "c\\u009bd");  // C1 CSI
  EXPECT_EQ(printable("\xff"), "\\xff");                 // not UTF-8
  EXPECT_EQ(printable("µs, 日本, tab\t"), "µs, 日本, tab\\x09");
  EXPECT_EQ(printable("line\nnext\t", true), "line\nnext\t");
  EXPECT_EQ(printable(printable("\x1b")), printable("\x1b"));  // idempotent: escapes are printable
  EXPECT_EQ(format_axes(Json{{"mode", "e\x1b"}}), "mode=e\\x1b");
}

// Case H10, end to end: an axis word carrying ESC and U+202E in a result file anyone can edit reaches report.md and
// points.csv escaped, never raw.
TEST(Hostile, H10_ReportShowsControlCharactersEscaped) {
  TempDir dir;
  const Outcome sweep = labrun(dir, "sweep '" + std::string(LABRUN_SOURCE_DIR) +
                                        "/configs/smoke.yaml' --device cpu -q --only n=1000 -o good.jsonl");
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  std::ifstream in(dir.file("good.jsonl"));
  std::ofstream out(dir.file("evil.jsonl"));
  std::string line;
  while (std::getline(in, line)) {
    Json r = Json::parse(line);
    if (r["type"] == "point") r["axes"]["mode"] = r["axes"]["mode"].get<std::string>() + "\x1b[2J\u202e";
    out << r.dump() << "\n";
  }
  out.close();
  const Outcome report = labrun(dir, "report evil.jsonl -o rep --no-plots");
  ASSERT_EQ(report.code, 0) << report.err;
  for (const char* name : {"rep/report.md", "rep/points.csv"}) {
    const std::string text = slurp(dir.file(name));
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << name;
    EXPECT_EQ(text.find("\u202e"), std::string::npos) << name;
    EXPECT_NE(text.find("\\x1b[2J\\u202e"), std::string::npos) << name;
  }
}

// Case H07: Ctrl-C during a report (here sent by the plot script, which report runs from ./scripts first) leaves no
// partial folder: exit 130, no report folder and no REPORT.new-PID beside it.
TEST(Hostile, H07_InterruptedReportLeavesNothingPartial) {
  TempDir dir;
  const Outcome sweep = labrun(dir, "sweep '" + std::string(LABRUN_SOURCE_DIR) +
                                        "/configs/smoke.yaml' --device cpu -q --only n=1000 -o good.jsonl");
  ASSERT_EQ(sweep.code, 0) << sweep.err;
  std::filesystem::create_directory(dir.file("scripts"));
  write_file(dir.file("scripts/plot_report.py"), "import os, signal\nos.kill(os.getppid(), signal.SIGINT)\n");
  if (std::system("python3 -c 'import matplotlib' >/dev/null 2>&1 || /usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "python3 with matplotlib is needed to run the plot script";
  const Outcome r = labrun(dir, "report good.jsonl -o rep");
  EXPECT_EQ(r.code, 130) << r.err;
  EXPECT_NE(r.err.find("labrun report: interrupted by SIGINT; nothing written"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("rep")));
  for (const auto& e : std::filesystem::directory_iterator(dir.path()))
    EXPECT_EQ(e.path().filename().string().find("rep.new-"), std::string::npos) << e.path();
}

// Found by a break test of the fixes above: a lock file that is a link or a device was written through; a user's
// file with no newline was taken for a torn run and replaced; a folder named like a partial sibling was removed
// whole; a symlink loop given as input was an internal error; point_timeout_s: 0 skipped the finish bound.
TEST(Hostile, H01_H07_H08_WritersLeaveWhatIsNotTheirs) {
  TempDir dir;
  const std::string smoke = "sweep '" + std::string(LABRUN_SOURCE_DIR) + "/configs/smoke.yaml' --device cpu -q --only n=1000 ";
  write_file(dir.file("victim.txt"), "precious");
  std::filesystem::create_symlink("victim.txt", dir.file("b.jsonl.lock"));
  const Outcome linked = labrun(dir, smoke + "-o b.jsonl");
  EXPECT_EQ(linked.code, 4) << linked.err;
  EXPECT_NE(linked.err.find("the lock file b.jsonl.lock is a symbolic link"), std::string::npos) << linked.err;
  EXPECT_EQ(slurp(dir.file("victim.txt")), "precious");
  write_file(dir.file("notes.txt"), "my notes, not a result");  // no newline, not JSON
  const Outcome notes = labrun(dir, smoke + "-o notes.txt");
  EXPECT_EQ(notes.code, 4) << notes.err;
  EXPECT_NE(notes.err.find("exists"), std::string::npos) << notes.err;
  EXPECT_EQ(slurp(dir.file("notes.txt")), "my notes, not a result");
  std::filesystem::create_directory(dir.file("s.jsonl.new-999998"));
  write_file(dir.file("s.jsonl.new-999998/inside"), "mine");
  const Outcome sibling = labrun(dir, smoke + "-o s.jsonl");
  EXPECT_EQ(sibling.code, 0) << sibling.err;
  EXPECT_EQ(slurp(dir.file("s.jsonl.new-999998/inside")), "mine");
}

TEST(Hostile, H02_SymlinkLoopInputIsBadInputNotAnInternalError) {
  TempDir dir;
  std::filesystem::create_symlink("loop2", dir.file("loop1"));
  std::filesystem::create_symlink("loop1", dir.file("loop2"));
  for (const std::string command : {"report loop1 -o r --no-plots", "diff loop1 loop1", "history loop1", "merge -o m.jsonl loop1"}) {
    const Outcome r = labrun(dir, command);
    EXPECT_EQ(r.code, 2) << command << "\n" << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
}

TEST(Hostile, H09_WithoutATimeoutAPointMustStillFinishWithinADay) {
  expect_config_error("experiment: masking\nlab:\n  point_timeout_s: 0\n  min_samples: 1000000\n  max_samples: 1000000\n"
                      "  min_sample_time_s: 10\n",
                      "every point would run for more than a day");
}

}  // namespace
}  // namespace labrun
