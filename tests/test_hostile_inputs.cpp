// Hostile inputs, round two (docs/cases.md H04, H09, H10): the config-side and output-side edges of labrun's
// promises, each tried through the labrun binary as a user would, with its exact message and exit code; and what a
// break test of those fixes found (the tests at the end, each named by the case it extends).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

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


// ---- Found by a break test of the cases above ----------------------------------------------------------------

const std::string kSmokeConfig = std::string(LABRUN_SOURCE_DIR) + "/configs/smoke.yaml";
/// One point per variant of the smoke config: a small, quick result file.
const std::string kFewPoints = " --only n=1000,density=0.5,dtype=f32,mode=eager,downstream=0";

/// A host sweep of the smoke config into `dir`/`name` (with `extra` arguments), its lines.
std::vector<std::string> small_run(const TempDir& dir, const std::string& name, const std::string& extra = kFewPoints) {
  const Outcome r = labrun(dir, "sweep '" + kSmokeConfig + "' --device cpu -q -o " + name + extra);
  EXPECT_EQ(r.code, 0) << r.err;
  std::vector<std::string> lines;
  std::istringstream in(slurp(dir.file(name)));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

/// The text that ESC, a C1 control (U+009B, CSI) and U+202E (right-to-left override) become, and the raw text.
const std::string kHostile = "\x1b[2J\xc2\x9b\u202e";
const std::string kShown = "\\x1b[2J\\u009b\\u202e";

/// `err` holds none of the three raw and shows them escaped.
void expect_escaped(const std::string& err, const std::string& what) {
  EXPECT_EQ(err.find('\x1b'), std::string::npos) << what << ": raw ESC in\n" << err;
  EXPECT_EQ(err.find("\xc2\x9b"), std::string::npos) << what << ": raw U+009B in\n" << err;
  EXPECT_EQ(err.find("\u202e"), std::string::npos) << what << ": raw U+202E in\n" << err;
  EXPECT_NE(err.find(kShown), std::string::npos) << what << ": no escapes in\n" << err;
}

// Case H10 on standard error: text from a result file, a folder's listing, a config (YAML "\e", "\x9b", "\u202e")
// and the command line reaches the terminal in labrun's messages escaped, whatever the message.
TEST(Hostile, H10_MessagesShowControlCharactersEscaped) {
  TempDir dir;
  // A config's value and key, written with YAML's escapes.
  write_file(dir.file("c.yaml"), "experiment: \"mask\\e[2J\\x9b\\u202e\"\n");
  Outcome r = labrun(dir, "validate c.yaml");
  EXPECT_EQ(r.code, 3) << r.err;
  expect_escaped(r.err, "config value");
  write_file(dir.file("k.yaml"), "experiment: masking\naxes:\n  \"n\\e[2J\\x9b\\u202e\": [1]\n");
  r = labrun(dir, "validate k.yaml");
  EXPECT_EQ(r.code, 3) << r.err;
  expect_escaped(r.err, "config key");
  // --lab and --only values echoed in errors.
  r = labrun(dir, "validate '" + kSmokeConfig + "' --lab 'x" + kHostile + "'");
  EXPECT_EQ(r.code, 3) << r.err;
  expect_escaped(r.err, "--lab without =");
  r = labrun(dir, "validate '" + kSmokeConfig + "' --lab 'seed=" + kHostile + "'");
  EXPECT_EQ(r.code, 3) << r.err;
  expect_escaped(r.err, "--lab value");
  r = labrun(dir, "sweep '" + kSmokeConfig + "' --dry-run --device cpu --only 'n=" + kHostile + "'");
  EXPECT_EQ(r.code, 2) << r.err;
  expect_escaped(r.err, "--only");

  // A result file's values: a point of "another experiment", a point given twice.
  const std::vector<std::string> lines = small_run(dir, "good.jsonl");
  ASSERT_GT(lines.size(), 2u);
  std::vector<std::string> other = lines;
  Json point = Json::parse(other[1]);
  point["experiment"] = "rank" + kHostile;
  other[1] = point.dump();
  write_file(dir.file("other.jsonl"), joined(other));
  r = labrun(dir, "report other.jsonl -o rep1 --no-plots");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("other.jsonl:2: experiment: rank"), std::string::npos) << r.err;
  expect_escaped(r.err, "experiment mismatch");
  std::vector<std::string> twice = lines;
  point = Json::parse(lines[1]);
  point["key"] = point["key"].get<std::string>() + kHostile;
  twice.push_back(point.dump());
  write_file(dir.file("twice.jsonl"), joined(twice));
  r = labrun(dir, "report twice.jsonl -o rep2 --no-plots");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("is also at line 2 of the same run"), std::string::npos) << r.err;
  expect_escaped(r.err, "duplicate point");
  // A file name from a folder's listing.
  std::filesystem::create_directory(dir.file("full"));
  write_file(dir.file("full/notes" + kHostile), "mine");
  r = labrun(dir, "report good.jsonl -o full --no-plots");
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("full holds files that are not a labrun report (notes"), std::string::npos) << r.err;
  expect_escaped(r.err, "folder listing");
  // A log line (spdlog): the stale partial file of an output named with them.
  const std::string name = "out" + kHostile + ".jsonl";
  write_file(dir.file(name + ".new-999999"), "partial");
  r = labrun(dir, "sweep '" + kSmokeConfig + "' --device cpu -q -o '" + name + "'" + kFewPoints);
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find(".new-999999, the partial file of a write that was interrupted"), std::string::npos) << r.err;
  expect_escaped(r.err, "log line");
}

// Case H10 in points.csv: an axis name from a result file reaches its header escaped (its values already were).
TEST(Hostile, H10_AxisNameReachesPointsCsvEscaped) {
  TempDir dir;
  std::vector<std::string> lines = small_run(dir, "good.jsonl");
  ASSERT_GT(lines.size(), 2u);
  for (std::size_t i = 1; i < lines.size(); ++i) {
    Json point = Json::parse(lines[i]);
    point["axes"]["mode" + kHostile] = point["axes"]["mode"];
    point["axes"].erase("mode");
    lines[i] = point.dump();
  }
  write_file(dir.file("evil.jsonl"), joined(lines));
  const Outcome r = labrun(dir, "report evil.jsonl -o rep --no-plots");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string csv = slurp(dir.file("rep/points.csv"));
  const std::string header = csv.substr(0, csv.find('\n'));
  EXPECT_NE(header.find(",axis.mode" + kShown + ","), std::string::npos) << header;
  EXPECT_EQ(csv.find('\x1b'), std::string::npos);
  EXPECT_EQ(csv.find("\u202e"), std::string::npos);
  EXPECT_EQ(csv.find("\xc2\x9b"), std::string::npos);
}

// Case H02: a line over the 64 MiB bound is refused once it is seen, not after the whole file was read: an 8 GiB
// sparse file without a newline (a pre-count of its lines read all of it first: 20 s for report, 50 s for
// --resume on a 10 GiB file) is bad input for every reader and for --resume.
TEST(Hostile, H02_OverLongFirstLineIsRefusedWithoutReadingTheRest) {
  TempDir dir;
  const std::string sparse = dir.file("sparse.jsonl");
  {
    const int fd = ::open(sparse.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::ftruncate(fd, off_t{8} << 30), 0);
    ::close(fd);
  }
  for (const std::string command :
       {std::string("report sparse.jsonl -o rep --no-plots"), std::string("diff sparse.jsonl sparse.jsonl"),
        std::string("history sparse.jsonl"), std::string("merge -o m.jsonl sparse.jsonl"),
        "sweep '" + kSmokeConfig + "' --device cpu -q -o sparse.jsonl --resume" + kFewPoints}) {
    const Outcome r = labrun(dir, command);
    EXPECT_EQ(r.code, 2) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("sparse.jsonl:1: a line longer than 67108864 bytes (64 MiB)"), std::string::npos)
        << command << "\n" << r.err;
  }
  EXPECT_EQ(std::filesystem::file_size(sparse), std::uintmax_t{8} << 30);  // --resume left it as it was
}

}  // namespace
}  // namespace labrun
