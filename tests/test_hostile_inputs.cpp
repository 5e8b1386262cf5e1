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

#include "sweep_driver.hpp"  // resume_command
#include "format.hpp"
#include "record.hpp"
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
  for (const std::string& command :
       {std::string("list"), std::string("env --device cpu"), "sweep " + smoke + " --dry-run --device cpu"}) {
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
  expect_config_error(
      "experiment: masking\nhypothesis:\n  - {than: where, faster: where}\n",
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
  EXPECT_EQ(printable("c\xc2\x9b"
                      "d"),
            "c\\u009bd");                 // C1 CSI
  EXPECT_EQ(printable("\xff"), "\\xff");  // not UTF-8
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
  if (std::system("python3 -c 'import matplotlib' >/dev/null 2>&1 || /usr/bin/python3 -c 'import matplotlib' "
                  ">/dev/null 2>&1") != 0)
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
  const std::string smoke = "sweep '" + std::string(LABRUN_SOURCE_DIR) +
                            "/configs/smoke.yaml' --device cpu -q --only n=1000 ";
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
  for (const std::string command :
       {"report loop1 -o r --no-plots", "diff loop1 loop1", "history loop1", "merge -o m.jsonl loop1"}) {
    const Outcome r = labrun(dir, command);
    EXPECT_EQ(r.code, 2) << command << "\n" << r.err;
    EXPECT_EQ(r.err.find("internal error"), std::string::npos) << r.err;
  }
}

TEST(Hostile, H09_WithoutATimeoutAPointMustStillFinishWithinADay) {
  expect_config_error(
      "experiment: masking\nlab:\n  point_timeout_s: 0\n  min_samples: 1000000\n  max_samples: 1000000\n"
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

// Expects `labrun report` to read the run `lines` (header first), written to `dir`/`name`: exit 0, the report in
// `dir`/`out`.
void expect_report_reads(const TempDir& dir, const std::string& name, const std::vector<std::string>& lines,
                         const std::string& out = "rep") {
  write_file(dir.file(name), joined(lines));
  const Outcome r = labrun(dir, "report " + name + " -o " + out + " --no-plots");
  EXPECT_EQ(r.code, 0) << name << "\n" << r.err;
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
  // The point with the hostile text in its key (and that key's id), at line 2 and again at the end.
  std::vector<std::string> twice = lines;
  point = Json::parse(lines[1]);
  point["key"] = point["key"].get<std::string>() + kHostile;
  point["id"] = test::id_of(point["key"].get<std::string>());
  twice[1] = point.dump();
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
        << command << "\n"
        << r.err;
  }
  EXPECT_EQ(std::filesystem::file_size(sparse), std::uintmax_t{8} << 30);  // --resume left it as it was
}

// Cases H01 and H05 for slurm's scripts: a second `labrun slurm -o DIR` is refused (exit 4, nothing touched) naming
// the script and --force, as every other writer; with --force it replaces both.
TEST(Hostile, H01_SlurmRefusesToOverwriteItsScriptsWithoutForce) {
  TempDir dir;
  const std::string slurm = "slurm '" + kSmokeConfig + "' --shards 2 -o jobs";
  const Outcome first = labrun(dir, slurm);
  ASSERT_EQ(first.code, 0) << first.err;
  std::vector<std::string> scripts;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("jobs"))) scripts.push_back(e.path().string());
  ASSERT_EQ(scripts.size(), 2u);
  for (const auto& s : scripts) write_file(s, "edited by hand");
  const Outcome again = labrun(dir, slurm);
  EXPECT_EQ(again.code, 4) << again.err;
  EXPECT_NE(again.err.find("-array.sbatch exists"), std::string::npos) << again.err;
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  for (const auto& s : scripts) EXPECT_EQ(slurp(s), "edited by hand") << s;
  const auto entries = std::distance(std::filesystem::directory_iterator(dir.file("jobs")),
                                     std::filesystem::directory_iterator());
  EXPECT_EQ(entries, 2) << "no lock or partial file left";
  const Outcome forced = labrun(dir, slurm + " --force");
  EXPECT_EQ(forced.code, 0) << forced.err;
  for (const auto& s : scripts) {
    EXPECT_EQ(slurp(s).rfind("#!/bin/bash\n", 0), 0u) << s;
    EXPECT_NE(::access(s.c_str(), X_OK), -1) << s << " is executable";
  }
}

// Case H07 for slurm's scripts: when the second script cannot be written (here the merge script of 300 shards runs
// past a file size limit, as on a full disk, while the small array script fits), neither is left: no array job
// without its merge job, no partial file.
TEST(Hostile, H07_SlurmWritesBothScriptsOrNeither) {
  TempDir dir;
  const std::string command = "cd '" + dir.path().string() + "' && (trap '' XFSZ; ulimit -f 8; exec '" +
                              std::string(LABRUN_BINARY) + "' slurm '" + kSmokeConfig +
                              "' --shards 300 -o jobs) >out.txt 2>err.txt";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  const std::string err = slurp(dir.file("err.txt"));
  EXPECT_EQ(WEXITSTATUS(status), 4) << err;
  EXPECT_NE(err.find("-merge.sbatch: File too large"), std::string::npos) << err;
  // Neither script, and not the folder either: this call made it, and nothing is left behind on failure (case H18).
  EXPECT_FALSE(std::filesystem::exists(dir.file("jobs")));
  // A folder that was there before stays, empty.
  std::filesystem::create_directory(dir.file("kept"));
  const std::string again = "cd '" + dir.path().string() + "' && (trap '' XFSZ; ulimit -f 8; exec '" +
                            std::string(LABRUN_BINARY) + "' slurm '" + kSmokeConfig +
                            "' --shards 300 -o kept) >out.txt 2>err.txt";
  ASSERT_EQ(WEXITSTATUS(std::system(again.c_str())), 4);
  EXPECT_TRUE(std::filesystem::is_directory(dir.file("kept")));
  EXPECT_TRUE(std::filesystem::is_empty(dir.file("kept")));
}

// Case H18: `labrun slurm -o PATH` where PATH is not a folder said "cannot create PATH: Success"; it now says what
// PATH is, and touches nothing.
TEST(Hostile, H18_SlurmNamesWhatItsOutputIsWhenNotAFolder) {
  TempDir dir;
  write_file(dir.file("regular"), "kept");
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  std::filesystem::create_symlink(dir.file("regular"), dir.file("link"));
  const std::pair<std::string, std::string> cases[] = {
      {"regular", "it is a regular file, not a folder"},
      {"fifo", "it is a named pipe (FIFO), not a folder"},
      {"link", "it is a regular file, not a folder"},
      {"/dev/null", "it is a character device, not a folder"},
  };
  for (const auto& [target, words] : cases) {
    const Outcome r = labrun(dir, "slurm '" + kSmokeConfig + "' --shards 2 -o " + target);
    EXPECT_EQ(r.code, 4) << target << "\n" << r.err;
    EXPECT_NE(r.err.find("cannot write the scripts into "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(words), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("Success"), std::string::npos) << r.err;
  }
  EXPECT_EQ(slurp(dir.file("regular")), "kept");
}

// Case H04: the reason of a failed write to standard output is the system's ("No space left on device"), not "a
// write failed": the errno of the first failed write through std::cout (a long one leaves nothing for the last
// flush: diff --format json), else of the last flush (printf's `list`), is kept.
TEST(Hostile, H04_FailedWriteToStandardOutputSaysWhy) {
  TempDir dir;
  small_run(dir, "good.jsonl");
  for (const std::string command :
       {"list", "diff good.jsonl good.jsonl --format json", "history good.jsonl --format json"}) {
    const Outcome r = labrun(dir, command, "/dev/full");
    EXPECT_EQ(r.code, 4) << command << "\n" << r.err;
    EXPECT_EQ(r.err, "labrun: cannot write standard output: No space left on device\n") << command;
  }
}

// Case H04: a closed pipe on standard output (`labrun history ... | head`) ends labrun quietly by SIGPIPE, as GNU
// tools end, not with "cannot write standard output: Broken pipe" and exit 4 (history ignores SIGPIPE while it runs).
TEST(Hostile, H04_ClosedPipeOnStandardOutputEndsQuietly) {
  TempDir dir;
  small_run(dir, "good.jsonl");
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ::close(fds[0]);  // the reader is gone before labrun writes a byte
  const std::string err = dir.file("err.txt");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(e, STDERR_FILENO);
    ::signal(SIGPIPE, SIG_DFL);
    ::chdir(dir.path().c_str());
    ::execl(LABRUN_BINARY, LABRUN_BINARY, "history", "good.jsonl", static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(fds[1]);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status)) << "exit status " << WEXITSTATUS(status) << "\n" << slurp(err);
  if (WIFSIGNALED(status)) EXPECT_EQ(WTERMSIG(status), SIGPIPE);
  EXPECT_EQ(slurp(err), "");
}

// Case H06 for a header's lab settings: each setting this build knows has its JSON type and least value checked
// (lab.processes: "abc" loaded); settings it does not know are left alone.
TEST(Hostile, H06_HeaderLabSettingsAreTypeChecked) {
  TempDir dir;
  const std::vector<std::string> lines = small_run(dir, "good.jsonl");
  ASSERT_GT(lines.size(), 1u);
  const std::pair<Json, std::string> cases[] = {
      {Json{{"processes", "abc"}}, "bad.jsonl:1: lab.processes: \"abc\" is not an integer, as this setting is"},
      {Json{{"processes", 0}}, "bad.jsonl:1: lab.processes: 0 is out of range: the setting is at least 1"},
      {Json{{"processes", nullptr}}, "bad.jsonl:1: lab.processes: null, but this setting always has a value"},
      {Json{{"max_time_s", "2"}}, "bad.jsonl:1: lab.max_time_s: \"2\" is not a number, as this setting is"},
      {Json{{"timing", 5}},
       "bad.jsonl:1: lab.timing: 5 is not one of this setting's words (synchronized, unsynchronized)"},
      {Json{{"l2", "warm"}}, "bad.jsonl:1: lab.l2: \"warm\" is not one of this setting's words (hot, cold)"},
      {Json{{"blocking_kernel", "yes"}}, "bad.jsonl:1: lab.blocking_kernel: \"yes\" is not true or false"},
  };
  for (const auto& [change, message] : cases) {
    Json header = Json::parse(lines[0]);
    for (const auto& [k, v] : change.items()) header["lab"][k] = v;
    std::vector<std::string> changed = lines;
    changed[0] = header.dump();
    write_file(dir.file("bad.jsonl"), joined(changed));
    const Outcome r = labrun(dir, "report bad.jsonl -o rep --no-plots");
    EXPECT_EQ(r.code, 2) << change.dump() << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
  Json header = Json::parse(lines[0]);  // unset optional settings and settings of other schemas load
  header["lab"]["tolerance_scale"] = nullptr;
  header["lab"]["host_max_n"] = "anything";
  std::vector<std::string> changed = lines;
  changed[0] = header.dump();
  expect_report_reads(dir, "ok.jsonl", changed);
}

// Case H06 for a point's other times: interpretation.iteration_time_s and each phase's times are at least 0 s.
TEST(Hostile, H06_NegativeInterpretationAndPhaseTimesAreRefused) {
  TempDir dir;
  const std::vector<std::string> lines = small_run(dir, "good.jsonl");
  ASSERT_GT(lines.size(), 1u);
  const std::pair<Json::json_pointer, std::string> cases[] = {
      {Json::json_pointer("/interpretation/iteration_time_s"),
       "bad.jsonl:2: interpretation.iteration_time_s: -1.0 is negative; a time is at least 0 s"},
      {Json::json_pointer("/phases/timing/time_s"), "bad.jsonl:2: phases.timing.time_s: -1.0 is negative"},
      {Json::json_pointer("/phases/warmup/first_iteration_time_s"),
       "bad.jsonl:2: phases.warmup.first_iteration_time_s: -1.0 is negative"},
  };
  for (const auto& [pointer, message] : cases) {
    Json point = Json::parse(lines[1]);
    ASSERT_TRUE(point.contains(pointer)) << pointer.to_string();
    point[pointer] = -1.0;
    std::vector<std::string> changed = lines;
    changed[1] = point.dump();
    write_file(dir.file("bad.jsonl"), joined(changed));
    for (const std::string command : {"report bad.jsonl -o rep --no-plots", "diff bad.jsonl good.jsonl"}) {
      const Outcome r = labrun(dir, command);
      EXPECT_EQ(r.code, 2) << command << "\n" << r.err;
      EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    }
  }
}

// Case H06 for merge: shards of two --only filters are parts of two sweeps (each split its own points), refused
// naming both files and both filters; report and diff read shards by the same rule.
TEST(Hostile, H06_MergeRefusesShardsOfDifferentOnlyFilters) {
  TempDir dir;
  small_run(dir, "a.jsonl", " --shard 1/2 --only n=1000,dtype=f32,mode=eager,downstream=0,density=0.5");
  small_run(dir, "b.jsonl", " --shard 2/2 --only n=1000,dtype=f32,mode=eager,downstream=0,density=0.01");
  const Outcome r = labrun(dir, "merge -o m.jsonl a.jsonl b.jsonl");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("labrun merge: b.jsonl ran --only \"n=1000,dtype=f32,mode=eager,downstream=0,density=0.01\", "
                       "a.jsonl ran --only \"n=1000,dtype=f32,mode=eager,downstream=0,density=0.5\": shards of one "
                       "sweep run the same --only filter; nothing written"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir.file("m.jsonl")));
  const Outcome report = labrun(dir, "report a.jsonl b.jsonl -o rep --no-plots");
  EXPECT_EQ(report.code, 2) << report.err;
  small_run(dir, "c.jsonl", " --shard 2/2 --only=n=1000,dtype=f32,mode=eager,downstream=0,density=0.5");  // --only=F
  const Outcome ok = labrun(dir, "merge -o m.jsonl a.jsonl c.jsonl");
  EXPECT_EQ(ok.code, 0) << ok.err;
}

// Case H08: a merge refused for its shards leaves a pre-existing empty (0-byte) target as it was; a merge that
// succeeds writes it afresh.
TEST(Hostile, H08_RefusedMergeLeavesAnEmptyTarget) {
  TempDir dir;
  small_run(dir, "whole.jsonl");  // not a shard
  write_file(dir.file("m.jsonl"), "");
  const Outcome r = labrun(dir, "merge -o m.jsonl whole.jsonl");
  EXPECT_EQ(r.code, 2) << r.err;
  ASSERT_TRUE(std::filesystem::exists(dir.file("m.jsonl")));
  EXPECT_EQ(std::filesystem::file_size(dir.file("m.jsonl")), 0u);
  EXPECT_EQ(r.err.find("holds no results"), std::string::npos) << r.err;
  small_run(dir, "shard.jsonl", kFewPoints + " --shard 1/1");
  const Outcome ok = labrun(dir, "merge -o m.jsonl shard.jsonl");
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.err.find("m.jsonl holds no results"), std::string::npos) << ok.err;
  EXPECT_GT(std::filesystem::file_size(dir.file("m.jsonl")), 0u);
}

// Case H02 for configs: a config that is not a regular file is refused at once (exit 3); a FIFO blocked validate.
TEST(Hostile, H02_ConfigThatIsNotARegularFileIsRefused) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("c.yaml").c_str(), 0600), 0);
  for (const std::string command : {"validate c.yaml", "sweep c.yaml --dry-run --device cpu"}) {
    const Outcome r = labrun(dir, command);
    EXPECT_EQ(r.code, 3) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("labrun: invalid config: c.yaml:0: the config is a named pipe (FIFO), not a regular file"),
              std::string::npos)
        << r.err;
  }
  const Outcome zero = labrun(dir, "validate /dev/zero");
  EXPECT_EQ(zero.code, 3) << zero.err;
  EXPECT_NE(zero.err.find("the config is a character device, not a regular file"), std::string::npos) << zero.err;
}

// Case H10: --max-plots -1 says what it takes, not a range of 309 digits.
TEST(Hostile, H10_NegativeMaxPlotsSaysItTakesANonNegativeInteger) {
  TempDir dir;
  for (const std::string command : {"report x.jsonl --max-plots -1", "history x.jsonl --max-plots -1"}) {
    const Outcome r = labrun(dir, command);
    EXPECT_EQ(r.code, 2) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("--max-plots: must be a non-negative integer (0, 1, 2, ...), got '-1'"), std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("e+308"), std::string::npos) << r.err;
    EXPECT_LT(r.err.size(), 300u) << r.err;
  }
}

/// Shards 1/2 and 2/2 of the smoke config with every point copied `copies` times under new ids (one sweep of many
/// points, to make a merge's write phase long enough to stop it in).
void large_shards(const TempDir& dir, int copies) {
  for (const std::string shard : {"1", "2"}) {
    const std::string name = "s" + shard + ".jsonl";
    const std::vector<std::string> lines = small_run(
        dir, name, " --shard " + shard + "/2 --only density=0.5,dtype=f32,mode=eager,downstream=0");
    ASSERT_GT(lines.size(), 1u) << name << " holds no point";
    Json header = Json::parse(lines[0]);
    std::ofstream out(dir.file("big-" + name), std::ios::binary);
    header["point_count"] = static_cast<std::int64_t>((lines.size() - 1) * static_cast<std::size_t>(copies));
    out << header.dump() << "\n";
    for (int c = 0; c < copies; ++c)
      for (std::size_t i = 1; i < lines.size(); ++i) {
        Json point = Json::parse(lines[i]);
        point["key"] = point["key"].get<std::string>() + ",copy=" + std::to_string(c);
        point["id"] = test::id_of(point["key"].get<std::string>());
        out << point.dump() << "\n";
      }
  }
}

// Case H07 for merge: Ctrl-C while it writes (stopped with SIGSTOP as its beside-file appears, then sent SIGINT and
// SIGCONT) ends it with 130 and "nothing written", its partial file removed: it was ignored once the copy was done
// (the fsync and the rename were not looked at).
TEST(Hostile, H07_InterruptedMergeWritePhaseWritesNothing) {
  TempDir dir;
  large_shards(dir, 500);
  ASSERT_FALSE(HasFatalFailure());
  const int watch = ::inotify_init1(IN_CLOEXEC);
  ASSERT_GE(watch, 0);
  ASSERT_GE(::inotify_add_watch(watch, dir.path().c_str(), IN_CREATE), 0);
  const std::string out = dir.file("out.txt"), err = dir.file("err.txt");
  const pid_t pid = ::fork();
  if (pid == 0) {
    ::chdir(dir.path().c_str());
    ::dup2(::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDOUT_FILENO);
    ::dup2(::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644), STDERR_FILENO);
    ::execl(LABRUN_BINARY, LABRUN_BINARY, "merge", "-o", "m.jsonl", "big-s1.jsonl", "big-s2.jsonl",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  const std::string partial = "m.jsonl.new-" + std::to_string(pid);
  bool stopped = false;
  alignas(inotify_event) char buffer[4096];
  int status = 0;
  while (!stopped) {
    struct pollfd p {
      watch, POLLIN, 0
    };
    if (::poll(&p, 1, 1000) == 0) {  // no event for a second: has the merge ended without writing?
      if (::waitpid(pid, &status, WNOHANG) == pid) break;
      continue;
    }
    const ssize_t n = ::read(watch, buffer, sizeof buffer);
    if (n <= 0) break;
    for (ssize_t at = 0; at < n;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      if (event->len > 0 && partial == event->name) stopped = ::kill(pid, SIGSTOP) == 0;
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
    }
  }
  ::close(watch);
  ASSERT_TRUE(stopped) << "the merge ended before it wrote: " << slurp(err);
  // Stopped before its rename (the beside-file still there): the interrupt lands in the write phase.
  ASSERT_TRUE(std::filesystem::exists(dir.file(partial))) << "the merge finished before it could be stopped";
  ::kill(pid, SIGINT);
  ::kill(pid, SIGCONT);
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130) << slurp(err);
  EXPECT_NE(slurp(err).find("labrun merge: interrupted by SIGINT; nothing written"), std::string::npos) << slurp(err);
  EXPECT_FALSE(std::filesystem::exists(dir.file("m.jsonl")));
  EXPECT_FALSE(std::filesystem::exists(dir.file(partial)));
}

// ---- Hostile inputs, round three (docs/cases.md H12-H16) ---------------------------------------------------------

// Case H13: a record of a type no labrun writes, a segment that makes no sense, a header whose created_utc is not a
// timestamp: refused by every reader with FILE:LINE and the key, never skipped.
TEST(Hostile, H13_UnknownTypesAndSenselessSegmentsAndHeadersAreRefused) {
  TempDir dir;
  const std::vector<std::string> lines = small_run(dir, "good.jsonl");
  ASSERT_GT(lines.size(), 2u);
  struct Case {
    std::size_t line;  // 0: the header
    Json record;       // replaces that line (or is inserted after the header, for a segment)
    bool insert;
    std::string message;
  };
  Json header = Json::parse(lines[0]);
  header["created_utc"] = 12345;
  const Case cases[] = {
      {1, Json{{"type", "evil"}}, false,
       "bad.jsonl:2: type: \"evil\" is not a record type of a labrun result file (header, point, segment)"},
      {1, Json{{"type", "segment"}, {"index", -1}, {"environment", 5}}, true,
       "bad.jsonl:2: index: -1 is not a segment's index (an integer >= 2"},
      {1, Json{{"type", "segment"}, {"index", 2}, {"environment", 5}}, true,
       "bad.jsonl:2: environment: 5 is not an object"},
      {1, Json{{"type", "segment"}, {"index", 2}, {"created_utc", "yesterday"}}, true,
       "bad.jsonl:2: created_utc: \"yesterday\" is not a UTC timestamp"},
      {0, header, false, "bad.jsonl:1: created_utc: 12345 is not a UTC timestamp"},
  };
  for (const std::string t : {"2026-13-45T99:99:99.000Z", "2026-02-30T00:00:00.000Z", "0000-01-01T00:00:00.000Z",
                              "2025-02-29T00:00:00.000Z", "2026-01-01T24:00:00.000Z"}) {
    Json h = Json::parse(lines[0]);
    h["created_utc"] = t;
    std::vector<std::string> changed = lines;
    changed[0] = h.dump();
    write_file(dir.file("date.jsonl"), joined(changed));
    const Outcome r = labrun(dir, "report date.jsonl -o rep --no-plots");
    EXPECT_EQ(r.code, 2) << t << "\n" << r.err;
    EXPECT_NE(r.err.find("is not a time that exists"), std::string::npos) << t << "\n" << r.err;
  }
  {
    Json h = Json::parse(lines[0]);
    h["created_utc"] = "2024-02-29T23:59:60.5Z";  // a leap day and a leap second exist
    std::vector<std::string> changed = lines;
    changed[0] = h.dump();
    expect_report_reads(dir, "leap.jsonl", changed, "rep-leap");
  }
  for (const Case& c : cases) {
    std::vector<std::string> changed = lines;
    if (c.insert) changed.insert(changed.begin() + static_cast<long>(c.line), c.record.dump());
    else changed[c.line] = c.record.dump();
    write_file(dir.file("bad.jsonl"), joined(changed));
    for (const std::string command :
         {"report bad.jsonl -o rep --no-plots", "diff good.jsonl bad.jsonl", "history bad.jsonl"}) {
      const Outcome r = labrun(dir, command);
      EXPECT_EQ(r.code, 2) << command << "\n" << c.record.dump() << "\n" << r.err;
      EXPECT_NE(r.err.find(c.message), std::string::npos) << command << "\n" << r.err;
    }
  }
  // A well-formed segment reads as before.
  std::vector<std::string> with_segment = lines;
  with_segment.insert(with_segment.begin() + 2, Json{{"type", "segment"},
                                                     {"index", 2},
                                                     {"created_utc", "2026-12-06T07:20:02.123Z"},
                                                     {"environment", Json::object()},
                                                     {"points_held", 1}}
                                                    .dump());
  expect_report_reads(dir, "segment.jsonl", with_segment, "rep2");
}

// Case H13: a result of an experiment this runner does not have (a user's runner, an imported file) is read by
// report, diff and history; only --resume, which must run it, refuses it, and --force does not override that (it
// appended this config's points to the other experiment's run, and every reader then refused the file).
TEST(Hostile, H13_AResultOfAnotherExperimentIsReadButNeverResumed) {
  TempDir dir;
  const std::vector<std::string> lines = small_run(dir, "good.jsonl");
  std::vector<std::string> foreign;
  for (const auto& line : lines) {
    Json r = Json::parse(line);
    r["experiment"] = "mykernel";
    if (r["type"] == "header" && r.contains("config")) r["config"]["experiment"] = "mykernel";
    if (r["type"] == "point") {
      std::string key = r["key"];
      key = "mykernel" + key.substr(key.find('/'));
      r["key"] = key;
      r["id"] = test::id_of(key);
    }
    foreign.push_back(r.dump());
  }
  write_file(dir.file("foreign.jsonl"), joined(foreign));
  for (const std::string command :
       {"report foreign.jsonl -o rep --no-plots", "diff foreign.jsonl foreign.jsonl", "history foreign.jsonl"}) {
    const Outcome r = labrun(dir, command);
    EXPECT_EQ(r.code, 0) << command << "\n" << r.err;
  }
  for (const std::string force : {"", " --force"}) {
    const Outcome r = labrun(dir, "sweep '" + kSmokeConfig + "' --device cpu -q -o foreign.jsonl --resume" + force +
                                      kFewPoints);
    EXPECT_EQ(r.code, 4) << r.err;
    EXPECT_NE(r.err.find("it holds a run of experiment mykernel and the config is of experiment masking"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(slurp(dir.file("foreign.jsonl")), joined(foreign)) << "the file is left as it was";
  }
}

// Case H14: diff's comparison of the lab settings is linear in their count (a header's `lab` indexed once; it was
// quadratic: 80,000 unknown settings took 31 s) and its warnings about them are bounded (4.4 MB before). Bounded by
// counts, not by wall time: the warnings about 80,000 differing settings are 21 lines.
TEST(Hostile, H14_ManyLabSettingsAreComparedWithBoundedWarnings) {
  TempDir dir;
  const std::vector<std::string> lines = small_run(dir, "good.jsonl");
  ASSERT_GT(lines.size(), 1u);
  Json base = Json::parse(lines[0]), other = base;
  for (int i = 0; i < 80'000; ++i) {
    base["lab"]["unknown_" + std::to_string(i)] = i;
    other["lab"]["unknown_" + std::to_string(i)] = i + 1;
  }
  std::vector<std::string> a = lines, b = lines;
  a[0] = base.dump();
  b[0] = other.dump();
  write_file(dir.file("a.jsonl"), joined(a));
  write_file(dir.file("b.jsonl"), joined(b));
  const Outcome r = labrun(dir, "diff a.jsonl b.jsonl");
  EXPECT_EQ(r.code, 0) << r.err.substr(0, 2000);
  std::size_t named = 0, pos = 0;
  const std::string all = r.out + r.err;
  while ((pos = all.find("lab setting unknown_", pos)) != std::string::npos) ++named, ++pos;
  EXPECT_EQ(named, 20u);
  EXPECT_NE(all.find("79980 more lab settings differ (the first 20 are named above)"), std::string::npos)
      << all.substr(0, 3000);
  EXPECT_LT(all.size(), 20'000u);
}

// Case H15: aliases expand under a bound. 1 MB of aliases of one claim made `report` take 37 s and 4.95 GB; a
// config whose aliases stand for more than 10 MB of YAML, or whose hypothesis holds more than 1000 claims, is refused
// (exit 3) naming the alias, before anything runs.
TEST(Hostile, H15_AliasExpansionIsBoundedAndNamed) {
  expect_config_error(
      "experiment: masking\naxes:\n  n: [1000]\nvariants: &blob [" + std::string(200'000, 'v') + "]\nexclude:\n" +
          [&] {
    std::string s;
    for (int i = 0; i < 60; ++i) s += "  - {variant: *blob}\n";
    return s;
      }(),
      "expands to more than 10 MB of YAML through its aliases (alias *blob, used 60 times)");
  std::string claims = "experiment: masking\naxes:\n  n: [1000]\nhypothesis:\n  - &c {faster: index, than: where}\n";
  for (int i = 0; i < 1000; ++i) claims += "  - *c\n";
  expect_config_error(claims, "key 'hypothesis': holds 1001 claims; at most 1000");
  // A result whose header holds more (an older labrun's, an edited one): the report judges the first 1000 and says so;
  // its size is bounded by that, not by the header (145,000 claims made a 93 MB report).
  TempDir dir;
  const std::vector<std::string> lines = small_run(dir, "good.jsonl");
  Json header = Json::parse(lines[0]);
  header["config"]["hypothesis"] = Json::array();
  for (int i = 0; i < 20'000; ++i)
    header["config"]["hypothesis"].push_back(Json{{"faster", "where"}, {"than", "index"}});
  std::vector<std::string> changed = lines;
  changed[0] = header.dump();
  write_file(dir.file("many.jsonl"), joined(changed));
  const Outcome r = labrun(dir, "report many.jsonl -o rep --no-plots");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = slurp(dir.file("rep/report.md"));
  EXPECT_NE(md.find("19000 more claims in the run's header were not judged"), std::string::npos);
  EXPECT_LT(md.size(), 2'000'000u);
}

// Case H16: a name's control characters never reach the terminal raw (a newline in a config's name forged a log
// line), and the command printed to resume an interrupted sweep names the same file when pasted into bash.
TEST(Hostile, H16_NamesAreEscapedAndTheResumeCommandPastesBack) {
  TempDir dir;
  // (in single quotes, a real newline: the shell is sh)
  const Outcome r = labrun(dir, "validate 'no\n[2026-01-01] [labrun] [info] all good.yaml'");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(r.err.find("no\\x0a[2026-01-01]"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("\n[2026-01-01]"), std::string::npos) << r.err;
  for (const std::string command : {"report", "history"}) {
    const Outcome m = labrun(dir, command + " 'no\n[2026-01-01] forged.jsonl'");
    EXPECT_EQ(m.code, 2) << m.err;
    EXPECT_NE(m.err.find("cannot read no\\x0a[2026-01-01] forged.jsonl"), std::string::npos) << command << m.err;
  }
  const std::string command = resume_command({"labrun", "sweep", "c.yaml", "-o", "first.jsonl"},
                                             std::string("int\x1b[31m\nx's.jsonl"));
  EXPECT_EQ(command, "labrun sweep c.yaml -o $'int\\x1b[31m\\x0ax\\'s.jsonl' --resume");
  // Pasted into bash, the quoted word is the file's name, byte for byte.
  const std::string echo = "bash -c \"printf %s " +
                           command.substr(command.find("$'"), command.rfind(" --resume") - command.find("$'")) +
                           "\" > '" + dir.file("name.txt") + "'";
  ASSERT_EQ(std::system(echo.c_str()), 0);
  EXPECT_EQ(slurp(dir.file("name.txt")), std::string("int\x1b[31m\nx's.jsonl"));
}

// Case H17: --lab values are read by the file's rules (no YAML tags), and an empty --only or --devices is refused
// (--only '' ran every point, --devices '' ran on the host and exited 0).
TEST(Hostile, H17_LabTagsAndEmptyFiltersAreRefused) {
  TempDir dir;
  write_file(dir.file("c.yaml"), "experiment: masking\naxes:\n  n: [1000]\n");
  for (const std::string lab : {"'seed=!!python/object 1'", "'timing=!custom synchronized'"}) {
    const Outcome r = labrun(dir, "sweep c.yaml --device cpu --dry-run --lab " + lab);
    EXPECT_EQ(r.code, 3) << lab << "\n" << r.err;
    EXPECT_NE(r.err.find("is not supported"), std::string::npos) << r.err;
  }
  for (const std::string option : {"--only ''", "--devices ''"}) {
    const Outcome r = labrun(dir, "sweep c.yaml --device cpu -o out.jsonl " + option);
    EXPECT_EQ(r.code, 2) << option << "\n" << r.err;
    EXPECT_NE(r.err.find("must not be empty"), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir.file("out.jsonl")));
  }
}

// Case H19, a new user's first hour: --only suggests the nearest axis and value; validate says how it read each
// claim's `when` and warns of one that holds no swept point; -q says "no usable CUDA device" once per sweep, not once
// per process.
TEST(Hostile, H19_FirstHourHintsOnlyValidateAndQuiet) {
  TempDir dir;
  write_file(dir.file("c.yaml"),
             "experiment: masking\naxes:\n  n: [1000, 4096]\n  density: [0.5]\n  mode: [eager]\n"
             "  downstream: [0]\nhypothesis:\n  - {faster: where, than: index, when: {n: [512, 4096]}}\n"
             "  - {faster: where, than: index, when: {n: 7}}\n");
  const Outcome axis = labrun(dir, "sweep c.yaml --device cpu --dry-run --only varient=fused");
  EXPECT_EQ(axis.code, 2) << axis.err;
  EXPECT_NE(axis.err.find("--only: unknown axis 'varient'; did you mean 'variant'?"), std::string::npos) << axis.err;
  const Outcome value = labrun(dir, "sweep c.yaml --device cpu --dry-run --only variant=fusd");
  EXPECT_EQ(value.code, 2) << value.err;
  EXPECT_NE(value.err.find("no point of the config has variant=fusd; did you mean 'variant=fused'?"), std::string::npos)
      << value.err;
  const Outcome number = labrun(dir, "sweep c.yaml --device cpu --dry-run --only n=4095");
  EXPECT_NE(number.err.find("did you mean 'n=4096'?"), std::string::npos) << number.err;

  const Outcome v = labrun(dir, "validate c.yaml");
  EXPECT_EQ(v.code, 0) << v.err;
  EXPECT_NE(v.out.find("hypothesis[0]: where faster than index when n in [512, 4096] (a range: a list of two numbers "
                       "is one): 2 swept points of where"),
            std::string::npos)
      << v.out;
  EXPECT_NE(v.out.find("hypothesis[1]: where faster than index when n = 7: 0 swept points of where"), std::string::npos)
      << v.out;
  EXPECT_NE(v.err.find("hypothesis[1]: its `when` (n = 7) holds no swept point of where"), std::string::npos) << v.err;
  EXPECT_EQ(v.err.find("hypothesis[0]"), std::string::npos) << v.err;

  // --device auto on a machine without a GPU (CI), three processes: one line, from the sweep itself.
  const Outcome q = labrun(dir, "sweep c.yaml -q -o q.jsonl --only variant=where --lab processes=3");
  EXPECT_EQ(q.code, 0) << q.err;
  std::size_t lines = 0;
  for (std::size_t at = q.err.find("no usable CUDA device"); at != std::string::npos;
       at = q.err.find("no usable CUDA device", at + 1))
    ++lines;
  EXPECT_LE(lines, 1u) << q.err;
}

// Case H19: report.md shows each failed point's mismatch line, and says so when every variant of a point agrees with
// the others but not with the reference (the reference may be what is wrong).
TEST(Hostile, H19_ReportShowsMismatchesAndSuspectsTheReference) {
  TempDir dir;
  const std::vector<std::string> lines = small_run(dir, "good.jsonl");
  ASSERT_GT(lines.size(), 2u);
  std::vector<std::string> changed = {lines[0]};
  std::size_t variants = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    Json p = Json::parse(lines[i]);
    if (p["type"] == "point" && p["status"] == "ok") {
      p["status"] = "incorrect";
      p["reason"] =
          "y[16384] = nan vs reference 1.5 (error inf > tolerance 1e-06 = bound x 1); 16384 of 32768 "
          "elements wrong";
      ++variants;
    }
    changed.push_back(p.dump());
  }
  ASSERT_GE(variants, 2u);
  write_file(dir.file("bad.jsonl"), joined(changed));
  const Outcome r = labrun(dir, "report bad.jsonl -o rep --no-plots");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::string md = slurp(dir.file("rep/report.md"));
  EXPECT_NE(md.find("## Failed points"), std::string::npos) << md;
  EXPECT_NE(md.find("| incorrect | y[16384] = nan vs reference 1.5"), std::string::npos) << md;
  EXPECT_NE(md.find("variants agree with each other (y[16384] = nan) but not with the reference: the reference may "
                    "be the one that is wrong"),
            std::string::npos)
      << md;
}

}  // namespace
}  // namespace labrun
