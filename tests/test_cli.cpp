// Tests of the labrun binary as users run it: exit codes, the records a host sweep writes, refusal to
// overwrite, strict config errors before anything runs (C01, C03), dry runs and the --only filter, and the one writer
// policy of every command that writes (src/base/output_file.hpp: H01, H05, H07, H08, H10).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "lab_settings.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "sha256.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;

const std::string kBinary = LABRUN_BINARY;
const std::string kSource = LABRUN_SOURCE_DIR;
const std::string kSmoke = kSource + "/configs/smoke.yaml";

/// A fresh directory (mkdtemp) with an empty working directory `cwd` inside; removed at scope exit.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "labrun_cli_XXXXXX").string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    root_ = pattern;
    fs::create_directory(root_ / "cwd");
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  std::string cwd() const { return (root_ / "cwd").string(); }
  std::string path(const std::string& name) const { return (root_ / name).string(); }

 private:
  fs::path root_;
};

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string quote(const std::string& s) { return "'" + s + "'"; }

struct Result {
  int code = -1;  ///< exit status, or -1 when the process did not exit normally
  std::string out, err;
};

/// Runs `labrun ARGS` in `dir.cwd()` and captures its exit status, stdout and stderr.
Result labrun(const TempDir& dir, const std::string& args) {
  const std::string out = dir.path("stdout.txt"), err = dir.path("stderr.txt");
  const std::string command = "cd " + quote(dir.cwd()) + " && " + quote(kBinary) + " " + args + " >" + quote(out) +
                              " 2>" + quote(err);
  const int status = std::system(command.c_str());
  Result r;
  if (status != -1 && WIFEXITED(status)) r.code = WEXITSTATUS(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) out.push_back(line);
  return out;
}

bool is_hex16(const std::string& s) {
  return s.size() == 16 && s.find_first_not_of("0123456789abcdef") == std::string::npos;
}

/// The smoke sweep on the host backend, run once per process and shared by the tests that read it.
struct SmokeRun {
  TempDir dir;
  std::string output;
  std::string args;
  Result result;
  std::string bytes;
};

SmokeRun& smoke_run() {
  static SmokeRun run;
  static const bool ran = [] {
    run.output = run.dir.path("out.jsonl");
    run.args = "sweep " + quote(kSmoke) + " --device cpu -q -o " + quote(run.output);
    run.result = labrun(run.dir, run.args);
    run.bytes = slurp(run.output);
    return true;
  }();
  (void)ran;
  return run;
}

/// The smoke run, for the tests that read it; throws std::runtime_error (failing the test that asks, as an ASSERT
/// would) when its sweep did not exit 0.
const SmokeRun& ok_smoke_run() {
  const SmokeRun& run = smoke_run();
  if (run.result.code != 0)
    throw std::runtime_error("the smoke sweep exited " + std::to_string(run.result.code) + ": " + run.result.err);
  return run;
}

/// Header of a smoke-sweep output: schema 1, the config's exact bytes and SHA-256, build type, point count.
void check_smoke_header(const Json& header) {
  EXPECT_EQ(header["type"], "header");
  EXPECT_EQ(header["schema_version"], kRecordSchemaVersion);
  EXPECT_EQ(header["config"]["sha256"], sha256_hex(slurp(kSmoke)));
  EXPECT_EQ(header["config"]["text"], slurp(kSmoke));
  ASSERT_TRUE(header["environment"]["labrun"]["build_type"].is_string());
  EXPECT_FALSE(header["environment"]["labrun"]["build_type"].get<std::string>().empty());
  EXPECT_EQ(header["environment"]["backend"], "host");
  ASSERT_TRUE(header["point_count"].is_number_integer());
  EXPECT_EQ(header["point_count"].get<std::size_t>(), 288u);
}

/// Fields every point line has, and those of an "ok" point: a passed check and positive times.
void check_point_line(const Json& r) {
  EXPECT_EQ(r["type"], "point");
  ASSERT_TRUE(r["id"].is_string());
  EXPECT_TRUE(is_hex16(r["id"].get<std::string>())) << r["id"];
  ASSERT_TRUE(r["variant"].is_string());
  ASSERT_TRUE(r["key"].is_string());
  EXPECT_EQ(r["key"].get<std::string>().rfind("masking/" + r["variant"].get<std::string>() + "/", 0), 0u);
  EXPECT_EQ(r["experiment"], "masking");
  EXPECT_TRUE(r["axes"].is_object());
  ASSERT_TRUE(r["status"].is_string());
  if (r["axes"]["mode"] == "graph" || r["variant"] == "index_device_count") {
    EXPECT_EQ(r["status"], "not_supported");
  }
  if (r["status"] != "ok") return;
  const Json& c = r["correctness"];
  ASSERT_TRUE(c.is_object());
  for (const char* key : {"value", "reference", "abs_error", "tolerance"})
    EXPECT_TRUE(std::isfinite(real_from_json(c[key]))) << key;
  EXPECT_EQ(c["passed"], true);
  EXPECT_LE(real_from_json(c["abs_error"]), real_from_json(c["tolerance"]));
  const Json& t = r["timing"];
  ASSERT_TRUE(t.is_object());
  EXPECT_GT(real_from_json(t["time_s"]), 0);
  EXPECT_GT(real_from_json(t["wall"]["median_time_s"]), 0);
  ASSERT_TRUE(t["wall_samples_s"].is_array());
  EXPECT_FALSE(t["wall_samples_s"].empty());
  if (r["axes"]["n"] == 0) {
    EXPECT_EQ(real_from_json(c["value"]), 0.0);
    EXPECT_EQ(c["detail"]["selected"], 0);
  }
}

// The host smoke sweep exits 0 and writes a header plus one line per point (288, unique ids); the 120 eager
// points of host variants are "ok" with a passed check and timing, including every n = 0 point (C04); the
// 168 graph or index_device_count points are "not_supported".
TEST(Cli, C04_SmokeSweepWritesHeaderAndEveryPoint) {
  const SmokeRun& run = ok_smoke_run();
  const auto records = read_jsonl(run.output);
  ASSERT_FALSE(records.empty());
  check_smoke_header(records.front());
  EXPECT_EQ(records.size(), 1 + records.front()["point_count"].get<std::size_t>());
  std::map<std::string, int> ids, statuses;
  int empty_ok = 0;
  for (std::size_t i = 1; i < records.size(); ++i) {
    SCOPED_TRACE("line " + std::to_string(i + 1) + ": " + records[i]["key"].dump());
    check_point_line(records[i]);
    ++ids[records[i]["id"].get<std::string>()];
    ++statuses[records[i]["status"].get<std::string>()];
    empty_ok += records[i]["axes"]["n"] == 0 && records[i]["status"] == "ok";
  }
  EXPECT_EQ(ids.size(), 288u);
  EXPECT_EQ(statuses["ok"], 120);
  EXPECT_EQ(statuses["not_supported"], 168);
  EXPECT_EQ(statuses.size(), 2u);
  EXPECT_EQ(empty_ok, 5 * 2 * 2 * 2);
}

// The same command again exits 4 (output exists) and leaves the file byte-identical; --force rewrites it.
TEST(Cli, SweepNeverOverwritesWithoutForce) {
  SmokeRun& run = smoke_run();
  ASSERT_EQ(run.result.code, 0) << run.result.err;
  const std::string before = slurp(run.output);
  const Result again = labrun(run.dir, run.args);
  EXPECT_EQ(again.code, 4) << again.err;
  EXPECT_NE(again.err.find("--force"), std::string::npos) << again.err;
  EXPECT_EQ(slurp(run.output), before);
  const Result forced = labrun(run.dir, run.args + " --force");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(read_jsonl(run.output).size(), 289u);
}

// --lab KEY=VALUE overrides a lab setting with the config's own checks: a bad one is a config error (exit 3)
// naming --lab and the key, before any output; a good one is in force and in the header.
TEST(Cli, LabOverridesAreCheckedAndRecorded) {
  TempDir dir;
  const std::string out = dir.path("o.jsonl");
  Result bad = labrun(dir, "sweep " + quote(kSmoke) + " --device cpu -o " + quote(out) + " --lab procesess=2");
  EXPECT_EQ(bad.code, 3) << bad.err;
  EXPECT_NE(bad.err.find("--lab"), std::string::npos) << bad.err;
  EXPECT_NE(bad.err.find("did you mean 'processes'?"), std::string::npos) << bad.err;
  bad = labrun(dir, "sweep " + quote(kSmoke) + " --device cpu -o " + quote(out) + " --lab processes=0");
  EXPECT_EQ(bad.code, 3) << bad.err;
  EXPECT_NE(bad.err.find("lab.processes"), std::string::npos) << bad.err;
  bad = labrun(dir, "sweep " + quote(kSmoke) + " --device cpu -o " + quote(out) + " --lab processes");
  EXPECT_EQ(bad.code, 3) << bad.err;
  EXPECT_FALSE(fs::exists(out));
  const Result ok = labrun(dir, "sweep " + quote(kSmoke) + " --device cpu -q -o " + quote(out) +
                                    " --only variant=fused,n=1000,density=0.5,dtype=f32,mode=eager,downstream=0"
                                    " --lab max_samples=12 --lab min_samples=12");
  ASSERT_EQ(ok.code, 0) << ok.err;
  const auto records = read_jsonl(out);
  EXPECT_EQ(records[0]["lab"]["max_samples"], 12);
  EXPECT_EQ(records[1]["timing"]["wall"]["count"], 12);
}

// Profiler mode (docs/profiling.md): --profile, or a profiler's variable in the environment (said on stderr), runs
// each point's correctness check and then exactly kProfileIterations (5: ncu's five readings) one-iteration samples, in
// one process with no calibration, and records lab.profile with the settings it forced.
TEST(Cli, ProfileModeRunsCorrectnessThenFivePlainIterations) {
  TempDir dir;
  const std::string only = " --only variant=fused,n=1000,density=0.5,dtype=f32,mode=eager,downstream=0";
  const std::string out = dir.path("p.jsonl");
  const Result r = labrun(dir, "sweep " + quote(kSmoke) + " --device cpu -q -o " + quote(out) + only +
                                   " --profile --lab processes=3");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("running under"), std::string::npos) << r.err;
  auto records = read_jsonl(out);
  ASSERT_EQ(records.size(), 2u);
  const Json& lab = records[0]["lab"];
  EXPECT_EQ(lab["profile"], true);
  EXPECT_EQ(lab["blocking_kernel"], false);
  EXPECT_EQ(lab["processes"], 1);
  EXPECT_EQ(lab["point_timeout_s"], 0);
  EXPECT_EQ(records[0]["calibration"]["skipped"], "profiler mode (lab.profile)");
  EXPECT_EQ(records[1]["status"], "ok");
  EXPECT_EQ(records[1]["correctness"]["passed"], true);
  EXPECT_EQ(records[1]["timing"]["wall"]["count"], kProfileIterations);
  EXPECT_EQ(records[1]["timing"]["batch"], 1);

  // Started under Nsight Compute (its variable set), without --profile: switches to it and says so.
  const std::string out2 = dir.path("q.jsonl");
  const Result under = labrun(dir, "sweep " + quote(kSmoke) + " --device cpu -q -o " + quote(out2) + only);
  ASSERT_EQ(under.code, 0) << under.err;
  EXPECT_EQ(read_jsonl(out2)[0]["lab"]["profile"], false);
  const std::string out3 = dir.path("r.jsonl");
  const std::string env_run = "env NV_NSIGHT_INJECTION_TRANSPORT_TYPE=2 " + quote(kBinary);
  const std::string command = "cd " + quote(dir.cwd()) + " && " + env_run + " sweep " + quote(kSmoke) +
                              " --device cpu -q -o " + quote(out3) + only + " 2>" + quote(dir.path("e.txt"));
  ASSERT_EQ(std::system(command.c_str()), 0) << slurp(dir.path("e.txt"));
  const std::string err = slurp(dir.path("e.txt"));
  EXPECT_NE(err.find("running under Nsight Compute: profiler mode (--profile)"), std::string::npos) << err;
  records = read_jsonl(out3);
  EXPECT_EQ(records[0]["lab"]["profile"], true);
  EXPECT_EQ(records[1]["timing"]["wall"]["count"], kProfileIterations);
}

// A pooled sweep that cannot run (here: no GPU for --device cuda) exits with the child's status and writes
// nothing; an OUTPUT.processes left by an earlier run is never reused or removed without --force.
TEST(Cli, PooledSweepFailsCleanlyAndKeepsEarlierFiles) {
  TempDir dir;
  const std::string config = dir.path("p.yaml"), out = dir.path("p.jsonl");
  write_file(config,
             "experiment: masking\naxes:\n  n: [1000]\n  density: [0.5]\n  mode: [eager]\n"
             "variants: [fused]\nlab:\n  processes: 2\n  min_sample_time_s: 0\n");
  const Result device = labrun(dir, "sweep " + quote(config) + " --device cuda -q -o " + quote(out));
  EXPECT_EQ(device.code, 5) << device.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_FALSE(fs::exists(out + ".processes"));

  fs::create_directory(out + ".processes");
  write_file(out + ".processes/process-1-of-2.jsonl", "precious\n");
  const Result kept = labrun(dir, "sweep " + quote(config) + " --device cpu -q -o " + quote(out));
  EXPECT_EQ(kept.code, 4) << kept.err;
  EXPECT_NE(kept.err.find(".processes exists"), std::string::npos) << kept.err;
  EXPECT_EQ(slurp(out + ".processes/process-1-of-2.jsonl"), "precious\n");
  EXPECT_FALSE(fs::exists(out));
  const Result forced = labrun(dir, "sweep " + quote(config) + " --device cpu -q -o " + quote(out) + " --force");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(read_jsonl(out).size(), 2u);
}

// --lab arguments cannot smuggle YAML structure in, are given once each, and errors name the argument's position.
TEST(Cli, LabOverridesAreWordsAndScalars) {
  TempDir dir;
  const std::string args = "sweep " + quote(kSmoke) + " --device cpu --dry-run";
  for (const char* bad : {"'seed: 7 #=x'", "'seed=1 # comment'", "' seed=4'", "'seed =4'", "seed=1 --lab seed=2"}) {
    const Result r = labrun(dir, args + " --lab " + bad);
    EXPECT_EQ(r.code, 3) << bad << ": " << r.err;
  }
  const Result second = labrun(dir, args + " --lab seed=1 --lab sede=2");
  EXPECT_NE(second.err.find("--lab:2: key 'lab.sede'"), std::string::npos) << second.err;
  const Result label = labrun(dir, args + " --lab max_samples=5");
  EXPECT_NE(label.err.find("min_samples (10, from the config)"), std::string::npos) << label.err;
}

// The complete example of docs/config.md is a valid config.
TEST(Cli, DocsCompleteExampleValidates) {
  TempDir dir;
  const std::string doc = slurp(kSource + "/docs/config.md");
  const auto start = doc.find("```yaml", doc.find("## Complete example"));
  ASSERT_NE(start, std::string::npos);
  const auto body = doc.find('\n', start) + 1;
  const std::string yaml = doc.substr(body, doc.find("```", body) - body);
  write_file(dir.path("complete.yaml"), yaml);
  const Result r = labrun(dir, "validate " + quote(dir.path("complete.yaml")));
  EXPECT_EQ(r.code, 0) << r.err;
}

// lab.processes: the sweep runs in that many child processes and their records are pooled: one header that
// lists the processes, one point per id whose raw samples are the processes' together, and no leftover files.
TEST(Cli, ProcessesArePooledPointByPoint) {
  TempDir dir;
  const std::string config = dir.path("p.yaml"), out = dir.path("p.jsonl");
  write_file(config,
             "experiment: masking\n"
             "axes:\n  n: [1000, 4096]\n  density: [0.5]\n  mode: [eager]\n"
             "variants: [multiply, index, index_device_count]\n"
             "lab:\n  min_samples: 10\n  max_samples: 10\n  min_sample_time_s: 0\n  warmup_time_s: 0\n"
             "  processes: 3\n");
  const Result r = labrun(dir, "sweep " + quote(config) + " --device cpu -q -o " + quote(out));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("3 processes pooled"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("results:"), r.out.rfind("results:")) << "one summary, the pooled one:\n" << r.out;
  EXPECT_FALSE(fs::exists(out + ".processes"));
  const auto records = read_jsonl(out);
  ASSERT_EQ(records.size(), 7u);  // header + 2 n x 3 variants
  EXPECT_EQ(records[0]["processes"]["count"], 3);
  EXPECT_FALSE(records[0].contains("process"));  // a child's marker, not the pooled run's
  EXPECT_EQ(records[0]["processes"]["runs"].size(), 3u);
  // Each process keeps its host as it started (a loaded host shows per process): load averages where readable.
  for (const Json& run : records[0]["processes"]["runs"]) {
    ASSERT_TRUE(run["host"].is_object()) << run.dump();
    EXPECT_EQ(run["host"]["load"]["load_average"].size(), 3u) << run.dump();
    EXPECT_GE(run["host"]["load"]["load_average"][0].get<double>(), 0.0);
  }
  EXPECT_EQ(records[0]["lab"]["processes"], 3);
  for (std::size_t i = 1; i < records.size(); ++i) {
    const Json& p = records[i];
    if (p["variant"] == "index_device_count") {  // not_supported alike in all three: reason unprefixed
      EXPECT_EQ(p["status"], "not_supported");
      EXPECT_EQ(p["reason"].get<std::string>().find("process"), std::string::npos) << p["reason"];
      continue;
    }
    ASSERT_EQ(p["status"], "ok") << p.dump();
    EXPECT_EQ(p["timing"]["wall_samples_s"].size(), 30u);
    EXPECT_EQ(p["timing"]["wall"]["count"], 30);
    EXPECT_EQ(p["timing"]["processes"]["count"], 3);
    EXPECT_EQ(p["timing"]["processes"]["time_s"].size(), 3u);
    EXPECT_TRUE(p["interpretation"].is_object());
  }
}

const char* const kUnknownAxisConfig =
    "experiment: masking\n"
    "axes:\n"
    "  n: [1000]\n"
    "  densty: [0.5]\n";

const char* const kDuplicateKeyConfig =
    "experiment: masking\n"
    "axes:\n"
    "  n: [1024]\n"
    "  n: [4096]\n";

// Expects `labrun report` of `file` to refuse it as bad input (exit 2) with a message that holds `message`, and to
// write no report.
void expect_report_refuses(const TempDir& dir, const std::string& file, const std::string& message) {
  const Result r = labrun(dir, "report " + quote(file) + " -o rep --no-plots");
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.cwd() + "/rep")) << "a refused report wrote rep/";
}

// `labrun sweep` on the host of the config `text`, written to `dir`/`name`: expects a config error (exit 3) that
// leaves no result file, and the same exit from `validate`; returns the sweep's stderr.
std::string config_error(const TempDir& dir, const std::string& name, const std::string& text) {
  const std::string bad = dir.path(name);
  write_file(bad, text);
  const std::string out = dir.path("out2.jsonl");
  const Result r = labrun(dir, "sweep " + quote(bad) + " --device cpu -o " + quote(out));
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_FALSE(fs::exists(out));
  EXPECT_EQ(labrun(dir, "validate " + quote(bad)).code, 3);
  return r.err;
}

// C03: an unknown axis stops `sweep` with exit 3 naming file:line and the nearest key, before any output.
TEST(Cli, C03_UnknownAxisIsAConfigErrorBeforeAnyOutput) {
  TempDir dir;
  const std::string err = config_error(dir, "densty.yaml", kUnknownAxisConfig);
  EXPECT_NE(err.find("densty.yaml:4:"), std::string::npos) << err;
  EXPECT_NE(err.find("did you mean 'density'"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(fs::path(dir.cwd()) / "results"));
}

// An unknown stopping criterion (lab.stopping) is a config error: exit 3 naming file, line and key, before any output.
TEST(Cli, UnknownStoppingCriterionIsAConfigError) {
  TempDir dir;
  const std::string err = config_error(dir, "stopping.yaml",
                                       "experiment: masking\naxes:\n  n: [1000]\nlab:\n  stopping: nosie\n");
  EXPECT_NE(err.find("stopping.yaml:5: key 'lab.stopping'"), std::string::npos) << err;
  EXPECT_NE(err.find("'nosie' is not one of noise"), std::string::npos) << err;
  const std::string out = dir.path("out.jsonl");
  const Result cli = labrun(dir, "sweep " + quote(kSmoke) + " --device cpu -o " + quote(out) + " --lab stopping=x");
  EXPECT_EQ(cli.code, 3) << cli.err;
  EXPECT_NE(cli.err.find("lab.stopping"), std::string::npos) << cli.err;
}

// C01: `n:` given twice stops `sweep` with exit 3 naming the file, the key and both lines, before any output.
TEST(Cli, C01_DuplicateKeyIsAConfigErrorBeforeAnyOutput) {
  TempDir dir;
  const std::string err = config_error(dir, "dup.yaml", kDuplicateKeyConfig);
  EXPECT_NE(err.find("dup.yaml:4:"), std::string::npos) << err;
  EXPECT_NE(err.find("'n'"), std::string::npos) << err;
  EXPECT_NE(err.find("line 3"), std::string::npos) << err;
  EXPECT_FALSE(fs::exists(fs::path(dir.cwd()) / "results"));
}

// `validate` accepts the shipped masking config (exit 0) and reports its point count.
TEST(Cli, ValidateAcceptsShippedConfigs) {
  TempDir dir;
  const Result r = labrun(dir, "validate " + quote(kSource + "/configs/masking.yaml"));
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("valid"), std::string::npos) << r.out;
  EXPECT_EQ(labrun(dir, "validate " + quote(kSmoke)).code, 0);
  // The overrides a sweep would take are checked the same way (exit 3 for a bad one).
  EXPECT_EQ(labrun(dir, "validate " + quote(kSmoke) + " --lab processes=5").code, 0);
  const Result bad = labrun(dir, "validate " + quote(kSmoke) + " --lab processes=99");
  EXPECT_EQ(bad.code, 3) << bad.err;
  EXPECT_NE(bad.err.find("--lab"), std::string::npos) << bad.err;
}

// --dry-run lists every point (id, variant, estimate, label) and ends with "288 points, estimated ..."; it writes
// nothing.
TEST(Cli, DryRunListsPointsAndWritesNothing) {
  TempDir dir;
  const Result r = labrun(dir, "sweep " + quote(kSmoke) + " --dry-run");
  EXPECT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_FALSE(lines.empty());
  EXPECT_EQ(lines.back().rfind("288 points, estimated ", 0), 0u) << lines.back();
  EXPECT_NE(lines.back().find(" per process on the "), std::string::npos) << lines.back();
  EXPECT_EQ(lines.size() - 1, 288u);
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) EXPECT_TRUE(is_hex16(lines[i].substr(0, 16))) << lines[i];
  EXPECT_FALSE(fs::exists(fs::path(dir.cwd()) / "results"));
  EXPECT_TRUE(fs::is_empty(dir.cwd()));
}

// --only "variant=fused,n=1000" keeps exactly the 16 fused points at n = 1000 (2 densities x 2 dtypes x
// 2 modes x 2 downstream); an unknown axis in --only is a usage error (exit 2).
TEST(Cli, OnlyFiltersDryRun) {
  TempDir dir;
  const Result r = labrun(dir, "sweep " + quote(kSmoke) + " --dry-run --only 'variant=fused,n=1000'");
  EXPECT_EQ(r.code, 0) << r.err;
  const auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 17u) << r.out;
  EXPECT_EQ(lines.back().rfind("16 points, estimated ", 0), 0u) << lines.back();
  for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
    EXPECT_NE(lines[i].find("  fused "), std::string::npos) << lines[i];
    EXPECT_NE(lines[i].find(" n=1000,"), std::string::npos) << lines[i];
  }
  EXPECT_EQ(labrun(dir, "sweep " + quote(kSmoke) + " --dry-run --only 'size=1'").code, 2);
}

// --device cuda:0 without a usable GPU exits 5 and writes no output.
TEST(Cli, CudaDeviceWithoutGpuExits5) {
  if (fs::exists("/dev/nvidiactl") || fs::exists("/dev/nvidia0")) GTEST_SKIP() << "this machine has a GPU";
  TempDir dir;
  const std::string out = dir.path("cuda.jsonl");
  const Result r = labrun(dir, "sweep " + quote(kSmoke) + " --device cuda:0 -o " + quote(out));
  EXPECT_EQ(r.code, 5) << r.err;
  EXPECT_NE(r.err.find("cuda:0"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(out));
}

// An unknown subcommand is a usage error: exit 2.
// A folder with no .jsonl file is named in the error (exit 2), with a hint when it holds .jsonl.gz files; a
// missing file says why it cannot be read.
TEST(Cli, DiffNamesAnEmptyFolderAndAMissingFile) {
  TempDir dir;
  const std::string folder = dir.path("runs");
  fs::create_directory(folder);
  std::ofstream(folder + "/a.jsonl.gz") << "x";
  const Result r = labrun(dir, "diff " + quote(folder) + " " + quote(folder));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("holds no .jsonl result file"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("gunzip -k"), std::string::npos) << r.err;
  const Result missing = labrun(dir, "diff " + quote(dir.path("nope.jsonl")) + " " + quote(dir.path("nope.jsonl")));
  EXPECT_EQ(missing.code, 2) << missing.err;
  EXPECT_NE(missing.err.find("No such file or directory"), std::string::npos) << missing.err;
}

TEST(Cli, UnknownSubcommandExits2) {
  TempDir dir;
  EXPECT_EQ(labrun(dir, "bogus").code, 2);
  EXPECT_EQ(labrun(dir, "").code, 2);
}

// `list` exits 0 and names the experiment, each of its axes and each of its variants.
TEST(Cli, ListNamesExperimentAxesAndVariants) {
  TempDir dir;
  const Result r = labrun(dir, "list");
  EXPECT_EQ(r.code, 0) << r.err;
  Registry registry;
  register_builtin(registry);
  const RegisteredExperiment* masking = registry.find("masking");
  ASSERT_NE(masking, nullptr);
  EXPECT_NE(r.out.find("masking"), std::string::npos);
  for (const auto& v : masking->variants()) EXPECT_NE(r.out.find(" " + v.name() + " "), std::string::npos) << v.name();
  for (const auto& a : masking->axes) EXPECT_NE(r.out.find(" " + a.name + " "), std::string::npos) << a.name;
  for (const char* v : {"multiply", "index", "where", "sanitize", "index_device_count", "fused"})
    EXPECT_NE(r.out.find(v), std::string::npos) << v;
}

// `env --device cpu` prints the environment record as JSON: labrun build (git sha, build type), host backend.
TEST(Cli, EnvPrintsEnvironmentJson) {
  TempDir dir;
  const Result r = labrun(dir, "env --device cpu");
  EXPECT_EQ(r.code, 0) << r.err;
  Json env;
  ASSERT_NO_THROW(env = Json::parse(r.out)) << r.out;
  ASSERT_TRUE(env["labrun"]["git_sha"].is_string());
  EXPECT_FALSE(env["labrun"]["git_sha"].get<std::string>().empty());
  ASSERT_TRUE(env["labrun"]["build_type"].is_string());
  EXPECT_FALSE(env["labrun"]["build_type"].get<std::string>().empty());
  EXPECT_TRUE(env["labrun"]["git_dirty"].is_boolean());
  EXPECT_TRUE(env["host"].is_object());
  EXPECT_EQ(env["backend"], "host");
  EXPECT_EQ(env["device"]["kind"], "host");
}

// Hostile inputs (issue 12): each a clear error with its documented exit code, nothing written, no unbounded
// memory or time. The one-byte "," config made yaml-cpp 0.7.0's LoadAll grow to 24 GB; labrun parses one
// document with Load and finds a second by its marker.
TEST(Cli, HostileConfigsAreClearErrors) {
  TempDir dir;
  const std::pair<std::string, std::string> cases[] = {
      {",", "holds no YAML map of keys"},
      {"experiment: masking\ndescription: caf\xe9\n", "byte 0xE9 is not valid UTF-8 (a Latin-1 file?"},
      {std::string("\xff\xfe") + "e\0x\0", "(the file is UTF-16: save it as UTF-8)"},
      {std::string("experiment: masking\ndescription: a") + '\0' + "b\n", "control character U+0000"},
      {"experiment: masking\naxes:\n  n: " + std::string(10000, '[') + std::string(10000, ']') + "\n",
       "nested deeper than 64 levels"},
      {"experiment: masking\n" + std::string(std::size_t{1} << 20, '#') + "\n", "larger than 1048576 bytes"},
  };
  int i = 0;
  for (const auto& [text, message] : cases) {
    const std::string file = dir.path("hostile" + std::to_string(i++) + ".yaml");
    write_file(file, text);
    const Result r = labrun(dir, "validate " + quote(file));
    EXPECT_EQ(r.code, 3) << message << "\n" << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    const Result s = labrun(dir, "sweep " + quote(file) + " -o out.jsonl");
    EXPECT_EQ(s.code, 3) << s.err;
    EXPECT_FALSE(fs::exists(dir.cwd() + "/out.jsonl")) << "nothing is written for a bad config";
  }
  // /dev/zero is not read at all: a config is a regular file (case H02, test_hostile_inputs.cpp).
  const Result z = labrun(dir, "validate /dev/zero");
  EXPECT_EQ(z.code, 3);
  EXPECT_NE(z.err.find("/dev/zero:0: the config is a character device, not a regular file"), std::string::npos)
      << z.err;
}

// A result file nested 100000 levels deep (a stack overflow in a recursive parser) is bad input, exit 2.
TEST(Cli, DeeplyNestedResultFileIsBadInput) {
  TempDir dir;
  const std::string file = dir.path("deep.jsonl");
  write_file(file, "{\"type\": \"header\", \"x\": " + std::string(100000, '[') + std::string(100000, ']') + "}\n");
  for (const std::string command :
       {"report " + quote(file) + " -o rep --no-plots", "diff " + quote(file) + " " + quote(file)}) {
    const Result r = labrun(dir, command);
    EXPECT_EQ(r.code, 2) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("nested deeper than 64 levels"), std::string::npos) << r.err;
  }
}

// A command-line argument that is not UTF-8 (a Latin-1 output name, --only value) is bad command-line input:
// exit 2 before anything is written (it used to reach the header's JSON and exit 70 leaving an empty file).
TEST(Cli, NonUtf8ArgumentIsACommandLineError) {
  TempDir dir;
  const std::string smoke = quote(std::string(LABRUN_SOURCE_DIR) + "/configs/smoke.yaml");
  for (const std::string args :
       {"sweep " + smoke + " -o caf\xe9.jsonl", "sweep " + smoke + " --only n=1\xff --dry-run"}) {
    const Result r = labrun(dir, args);
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("is not valid UTF-8"), std::string::npos) << r.err;
  }
  EXPECT_TRUE(fs::is_empty(dir.cwd()));
}

// --lab takes one KEY=VALUE per occurrence: it never swallows the config after it.
TEST(Cli, LabOptionTakesOneValueEach) {
  TempDir dir;
  const std::string smoke = quote(std::string(LABRUN_SOURCE_DIR) + "/configs/smoke.yaml");
  Result r = labrun(dir, "sweep --lab processes=1 " + smoke + " --dry-run");
  EXPECT_EQ(r.code, 0) << r.err;
  r = labrun(dir, "sweep --lab processes=1 --lab seed=7 " + smoke + " --dry-run");
  EXPECT_EQ(r.code, 0) << r.err;
  r = labrun(dir, "sweep --lab seed=-1 " + smoke + " --dry-run");
  EXPECT_EQ(r.code, 3) << r.err;  // a negative value is the setting's value, refused by its rule
  EXPECT_NE(r.err.find("lab.seed"), std::string::npos) << r.err;
  // A value without KEY= is refused saying the form (exit 3, as any bad --lab value), never a swallowed config.
  r = labrun(dir, "sweep --lab seed -1 " + smoke + " --dry-run");
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_NE(
      r.err.find(
          "labrun: invalid config: --lab takes KEY=VALUE, one setting per --lab; got 'seed' (for the value -1: --lab "
          "seed=-1)"),
      std::string::npos)
      << r.err;
}

// ---- Result readers: bounded, checked for sense (H02, H06, H10) ----------------------------------------------

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

// H02: report, diff, history and merge refuse a character device (/dev/zero never ended) and a FIFO with exit 2,
// naming the path and what it is, before reading a byte.
TEST(Cli, H02_ResultReadersRefuseDevicesAndFifos) {
  const SmokeRun& run = ok_smoke_run();
  TempDir dir;
  for (const std::string command :
       {std::string("report /dev/zero -o rep --no-plots"), "diff " + quote(run.output) + " /dev/zero",
        std::string("history /dev/zero"), std::string("merge -o m.jsonl /dev/zero")}) {
    const Result r = labrun(dir, command);
    EXPECT_EQ(r.code, 2) << command << "\n" << r.err;
    EXPECT_NE(r.err.find("/dev/zero: a character device, not a regular file"), std::string::npos) << r.err;
  }
  const std::string fifo = dir.path("pipe.jsonl");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_report_refuses(dir, fifo, fifo + ": a named pipe (FIFO), not a regular file");
  EXPECT_FALSE(fs::exists(dir.cwd() + "/m.jsonl"));
}

// H06: records that make no sense are bad input (exit 2) naming file, line and key: a status outside the set
// (diff printed 288 status changes and "No regression"), a negative time (report printed "-1.00 s"), a file
// without its header.
TEST(Cli, H06_NonsenseRecordsAreBadInput) {
  const SmokeRun& run = ok_smoke_run();
  TempDir dir;
  std::vector<std::string> lines = lines_of(run.bytes);
  ASSERT_GT(lines.size(), 2u);
  const std::string bad = dir.path("bad.jsonl");
  // `command` on the run with its first point changed by `change`, written to `bad`: bad input (exit 2); its stderr.
  const auto refused = [&](const std::function<void(Json&)>& change, const std::string& command) {
    Json point = Json::parse(lines[1]);
    change(point);
    std::vector<std::string> changed = lines;
    changed[1] = point.dump();
    write_file(bad, joined(changed));
    const Result r = labrun(dir, command);
    EXPECT_EQ(r.code, 2) << r.err;
    return r.err;
  };

  std::string err = refused([](Json& p) { p["status"] = "exploded"; }, "diff " + quote(run.output) + " " + quote(bad));
  EXPECT_NE(err.find(bad + ":2: status: \"exploded\" is not a point status"), std::string::npos) << err;

  err = refused([](Json& p) { p["timing"]["time_s"] = -1; }, "report " + quote(bad) + " -o rep --no-plots");
  EXPECT_NE(err.find(bad + ":2: timing.time_s: -1.0 is negative; a time is at least 0 s"), std::string::npos) << err;

  write_file(bad, joined(std::vector<std::string>(lines.begin() + 1, lines.end())));
  expect_report_refuses(dir, bad, bad + ":1: a point before any header");
}

// H06: --resume refuses (exit 2, file and line) a file holding a point twice or a point of another experiment,
// rather than keeping it in the run it continues.
TEST(Cli, H06_ResumeRefusesADuplicatedOrForeignPoint) {
  const SmokeRun& run = ok_smoke_run();
  TempDir dir;
  const std::vector<std::string> lines = lines_of(run.bytes);
  const std::string file = dir.path("resume.jsonl");
  const std::string resume = "sweep " + quote(kSmoke) + " --device cpu -q -o " + quote(file) + " --resume";

  write_file(file, run.bytes + lines[1] + "\n");
  Result r = labrun(dir, resume);
  EXPECT_EQ(r.code, 2) << r.err;
  const std::string twice = file + ":" + std::to_string(lines.size() + 1) + ": point " +
                            Json::parse(lines[1])["id"].get<std::string>();
  EXPECT_NE(r.err.find("cannot resume " + file + ": " + twice), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("is also at line 2 of the same run"), std::string::npos) << r.err;

  // Another point (its own key, and that key's id: no duplicate, no edited id) of another experiment.
  Json foreign = Json::parse(lines[1]);
  const std::string key = foreign["key"].get<std::string>();
  foreign["experiment"] = "rank";
  foreign["key"] = "rank" + key.substr(key.find('/'));
  foreign["id"] = test::id_of(foreign["key"].get<std::string>());
  write_file(file, run.bytes + foreign.dump() + "\n");
  r = labrun(dir, resume);
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(file + ":" + std::to_string(lines.size() + 1) +
                       ": experiment: rank, but the header of this run is of experiment masking"),
            std::string::npos)
      << r.err;
}

// H10: every merge error names the file and line (a field of the wrong type said only `timing.time_s: expected a
// number, got "nan"`), and a gzip-compressed shard is named as such with the command that unpacks it.
TEST(Cli, H10_MergeErrorsNameFileAndLine) {
  const SmokeRun& run = ok_smoke_run();
  TempDir dir;
  std::vector<std::string> lines = lines_of(run.bytes);
  Json point = Json::parse(lines[2]);
  point["timing"]["time_s"] = "nan";
  lines[2] = point.dump();
  const std::string shard = dir.path("shard.jsonl");
  write_file(shard, joined(lines));
  Result r = labrun(dir, "merge -o m.jsonl " + quote(shard));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find("labrun merge: " + shard + ":3: timing.time_s: expected a number, got \"nan\"; nothing written"),
            std::string::npos)
      << r.err;
  const std::string gz = dir.path("shard.jsonl.gz");
  write_file(gz, std::string("\x1f\x8b\x08\x00", 4) + "rest");
  r = labrun(dir, "merge -o m.jsonl " + quote(gz));
  EXPECT_EQ(r.code, 2) << r.err;
  EXPECT_NE(r.err.find(gz + ": gzip-compressed: unpack it first (gunzip -k " + gz + ")"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir.cwd() + "/m.jsonl"));
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// report -o DIR --force replaces the report file by file, each a rename, only once the new one is made: a
// report that fails leaves the old one whole, and files that are not the report's stay (issue 12).
TEST(Cli, ReportForceNeverDestroysTheOldReportFirst) {
  TempDir dir;
  const std::string run = dir.path("run.jsonl");
  ASSERT_EQ(labrun(dir, "sweep " + quote(kSmoke) + " --device cpu -q -o " + quote(run)).code, 0);
  const std::string rep = dir.path("rep");
  ASSERT_EQ(labrun(dir, "report " + quote(run) + " -o " + quote(rep) + " --no-plots").code, 0);
  const std::string before = slurp(rep + "/report.md");
  ASSERT_FALSE(before.empty());
  write_file(rep + "/notes.txt", "mine\n");
  write_file(dir.path("bad.jsonl"), "{\"type\": \"header\"}\nnot json\n{\"type\": \"point\"}\n");
  const Result bad = labrun(dir,
                            "report " + quote(dir.path("bad.jsonl")) + " -o " + quote(rep) + " --force --no-plots");
  EXPECT_EQ(bad.code, 2) << bad.err;
  EXPECT_EQ(slurp(rep + "/report.md"), before);
  const Result again = labrun(dir, "report " + quote(run) + " -o " + quote(rep) + " --force --no-plots");
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_EQ(slurp(rep + "/notes.txt"), "mine\n");
  EXPECT_TRUE(fs::exists(rep + "/points.csv"));
  for (const auto& e : fs::directory_iterator(dir.path("")))
    EXPECT_EQ(e.path().filename().string().find(".new-"), std::string::npos) << e.path() << " left behind";
}

}  // namespace
}  // namespace labrun

namespace labrun {
namespace {

// ---- The writer policy (src/base/output_file.hpp): cases H01, H05, H07, H08, H10 ---------------------------------

// One point of the smoke config: a sweep of a second or so.
const std::string kOnePoint = " --only variant=fused,n=1000,density=0.5,dtype=f32,mode=eager,downstream=0";

/// `labrun ARGS` in `dir.cwd()` with no file allowed to grow (RLIMIT_FSIZE 0, SIGXFSZ ignored): every write to a
/// file fails with EFBIG ("File too large"), as on a full disk. stdout and stderr come back together through a
/// pipe (Result::err), which the limit does not cover.
Result labrun_without_space(const TempDir& dir, const std::string& args) {
  const std::string all = dir.path("limited.txt");
  const std::string command = "cd " + quote(dir.cwd()) + " && ( (trap '' XFSZ; ulimit -f 0; exec " + quote(kBinary) +
                              " " + args + ") 2>&1; echo \"exit=$?\" ) | cat >" + quote(all);
  (void)std::system(command.c_str());
  Result r;
  r.err = slurp(all);
  const auto at = r.err.rfind("exit=");
  if (at != std::string::npos) r.code = std::atoi(r.err.c_str() + at + 5);
  return r;
}

/// A one-point shard (--shard 1/1) of the smoke config, made once per process: an input `merge` accepts.
const std::string& one_point_shard() {
  static TempDir dir;
  static const std::string file = [] {
    const std::string path = dir.path("shard.jsonl");
    const Result r = labrun(dir,
                            "sweep " + quote(kSmoke) + " --device cpu -q --shard 1/1 -o " + quote(path) + kOnePoint);
    if (r.code != 0) throw std::runtime_error("the one-point shard failed: " + r.err);
    return path;
  }();
  return file;
}

/// The pid of a process that has exited (and been reaped): a writer that died.
long dead_pid() {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

/// Holds the one-writer lock of `target` (OutputLock's TARGET.lock, src/base/output_lock.hpp) as another labrun would.
class HeldLock {
 public:
  explicit HeldLock(const std::string& target)
      : path_(fs::weakly_canonical(fs::absolute(target)).string() + ".lock"),
        fd_(::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
    const std::string pid = std::to_string(::getpid());
    if (fd_ < 0 || ::flock(fd_, LOCK_EX | LOCK_NB) != 0 || ::write(fd_, pid.data(), pid.size()) < 0)
      throw std::runtime_error("cannot hold " + path_);
  }
  ~HeldLock() {
    ::unlink(path_.c_str());
    ::close(fd_);
  }
  HeldLock(const HeldLock&) = delete;
  HeldLock& operator=(const HeldLock&) = delete;

 private:
  std::string path_;
  int fd_;
};

// Names in `dir` that contain `part` (leftovers such as ".new-" or ".lock").
std::vector<std::string> names_with(const std::string& dir, const std::string& part) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().filename().string().find(part) != std::string::npos) out.push_back(e.path().filename().string());
  return out;
}

// H01: a target that exists and is not a regular file (a device node, a FIFO) is refused by every writer, --force or
// not, naming the path and what it is (exit 4), and nothing is touched: no lock file, no partial file beside it.
// (`sweep -o fakenull --force` used to replace a character device with a regular file.)
TEST(Cli, H01_NonRegularTargetIsRefused) {
  SmokeRun& run = smoke_run();
  ASSERT_EQ(run.result.code, 0) << run.result.err;
  TempDir dir;
  std::vector<std::pair<std::string, std::string>> nodes;  // name, what it is
  ASSERT_EQ(::mkfifo(dir.path("cwd/fifo").c_str(), 0644), 0);
  nodes.emplace_back("fifo", "a named pipe (FIFO)");
  if (::mknod(dir.path("cwd/fakenull").c_str(), S_IFCHR | 0666, ::makedev(1, 3)) == 0)  // root only
    nodes.emplace_back("fakenull", "a character device");
  for (const auto& [name, what] : nodes) {
    const std::string file_message = name + " is " + what + ", not a regular file";
    for (const std::string& args : {"sweep " + quote(kSmoke) + " --device cpu -q -o " + name + " --force" + kOnePoint,
                                    "sweep " + quote(kSmoke) + " --device cpu -q -o " + name + " --resume" + kOnePoint,
                                    "merge -o " + name + " --force " + quote(run.output)}) {
      const Result r = labrun(dir, args);
      EXPECT_EQ(r.code, 4) << args << "\n" << r.err;
      EXPECT_NE(r.err.find(file_message), std::string::npos) << r.err;
    }
    for (const std::string command : {"report", "history"}) {
      const Result r = labrun(dir, command + " " + quote(run.output) + (command == "report" ? " --no-plots" : "") +
                                       " -o " + name + " --force");
      EXPECT_EQ(r.code, 4) << command << "\n" << r.err;
      EXPECT_NE(r.err.find(name + " is " + what + ", not a folder"), std::string::npos) << r.err;
    }
    struct stat st {};
    ASSERT_EQ(::stat(dir.path("cwd/" + name).c_str(), &st), 0);
    EXPECT_FALSE(S_ISREG(st.st_mode)) << name << " was replaced";
  }
  EXPECT_EQ(names_with(dir.cwd(), ".lock"), std::vector<std::string>{});
  EXPECT_EQ(names_with(dir.cwd(), ".new"), std::vector<std::string>{});
  // A folder that holds other files is not a report folder: refused even with --force, its files untouched.
  fs::create_directory(dir.path("cwd/mine"));
  write_file(dir.path("cwd/mine/points.csv"), "my own\n");
  const Result mine = labrun(dir, "report " + quote(run.output) + " --no-plots -o mine --force");
  EXPECT_EQ(mine.code, 4) << mine.err;
  EXPECT_NE(mine.err.find("mine holds files that are not a labrun report (points.csv, ...)"), std::string::npos)
      << mine.err;
  EXPECT_EQ(slurp(dir.path("cwd/mine/points.csv")), "my own\n");
}

// H05: merge, report and history hold the one-writer lock on their output while they write it: a second writer
// (here: this test, holding the lock as a running labrun would) makes them exit 4 naming the holder, and they write
// nothing. history -o refuses an earlier history report without --force, as report does; --force replaces it.
TEST(Cli, H05_ConcurrentWritersAreRefusedByTheLock) {
  SmokeRun& run = smoke_run();
  ASSERT_EQ(run.result.code, 0) << run.result.err;
  TempDir dir;
  const std::string held = "is being written by another labrun (pid " + std::to_string(::getpid()) + ")";
  const std::pair<std::string, std::string> writers[] = {
      {"merged.jsonl", "merge -o merged.jsonl " + quote(one_point_shard())},
      {"rep", "report " + quote(run.output) + " --no-plots -o rep"},
      {"hist", "history " + quote(run.output) + " -o hist"},
  };
  for (const auto& [target, args] : writers) {
    {
      const HeldLock lock(dir.path("cwd/" + target));
      const Result r = labrun(dir, args);
      EXPECT_EQ(r.code, 4) << args << "\n" << r.err;
      EXPECT_NE(r.err.find(held), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(dir.path("cwd/" + target))) << args;
    }
    const Result free = labrun(dir, args);
    EXPECT_EQ(free.code, 0) << args << "\n" << free.err;
  }
  const Result again = labrun(dir, "history " + quote(run.output) + " -o hist");
  EXPECT_EQ(again.code, 4) << again.err;
  EXPECT_NE(again.err.find("labrun history: hist already holds a history report; labrun never overwrites results "
                           "(use --force)"),
            std::string::npos)
      << again.err;
  write_file(dir.path("cwd/hist/history.md"), "old\n");
  const Result forced = labrun(dir, "history " + quote(run.output) + " -o hist --force");
  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_NE(slurp(dir.path("cwd/hist/history.md")), "old\n");
  EXPECT_EQ(names_with(dir.cwd(), ".lock"), std::vector<std::string>{});
  EXPECT_EQ(names_with(dir.cwd(), ".new"), std::vector<std::string>{});
}

// H07: a partial file left by a writer that died (FILE.new-PID, PID gone) is removed by the next writer of FILE (a
// fresh sweep, a --resume, a merge, a report of its folder), which says so; one of a live writer is left alone. Given
// to a reader it is refused as a partial file (exit 2), never read as a run.
TEST(Cli, H07_StalePartialFilesAreRemovedAndRefusedAsInput) {
  SmokeRun& run = smoke_run();
  ASSERT_EQ(run.result.code, 0) << run.result.err;
  TempDir dir;
  // What a pooled write killed by SIGKILL leaves: the header and two points.
  const std::vector<std::string> lines = lines_of(run.bytes);
  const std::string partial = lines[0] + "\n" + lines[1] + "\n" + lines[2] + "\n";
  const std::string stale = "out.jsonl.new-" + std::to_string(dead_pid());
  write_file(dir.path("cwd/" + stale), partial);
  for (const std::string& args : {"report " + stale + " --no-plots -o rep", "diff " + stale + " " + quote(run.output),
                                  "history " + stale, "merge -o m.jsonl " + stale}) {
    const Result r = labrun(dir, args);
    EXPECT_EQ(r.code, 2) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(stale + " is a partial file of an interrupted write"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.path("cwd/rep")));
  EXPECT_FALSE(fs::exists(dir.path("cwd/m.jsonl")));
  // A live writer's partial file (this process's) stays; the dead one's goes, with a word on stderr.
  const std::string live = "out.jsonl.new-" + std::to_string(::getpid());
  write_file(dir.path("cwd/" + live), partial);
  const std::string sweep = "sweep " + quote(kSmoke) + " --device cpu -q -o out.jsonl" + kOnePoint;
  const Result fresh = labrun(dir, sweep);
  ASSERT_EQ(fresh.code, 0) << fresh.err;
  EXPECT_NE(fresh.err.find("removed " + stale + ", the partial file of a write that was interrupted"),
            std::string::npos)
      << fresh.err;
  EXPECT_FALSE(fs::exists(dir.path("cwd/" + stale)));
  EXPECT_TRUE(fs::exists(dir.path("cwd/" + live)));
  // --resume, merge -o and report -o clean up after their own kind too.
  const std::string stale2 = "out.jsonl.new-" + std::to_string(dead_pid());
  write_file(dir.path("cwd/" + stale2), partial);
  const Result resumed = labrun(dir, sweep + " --resume");
  EXPECT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_FALSE(fs::exists(dir.path("cwd/" + stale2)));
  const std::string stale3 = "m.jsonl.new-" + std::to_string(dead_pid());
  write_file(dir.path("cwd/" + stale3), partial);
  EXPECT_EQ(labrun(dir, "merge -o m.jsonl " + quote(one_point_shard())).code, 0);
  EXPECT_FALSE(fs::exists(dir.path("cwd/" + stale3)));
  const std::string stale4 = "rep.new-" + std::to_string(dead_pid());
  fs::create_directory(dir.path("cwd/" + stale4));
  write_file(dir.path("cwd/" + stale4 + "/points.csv"), "half\n");
  EXPECT_EQ(labrun(dir, "report out.jsonl --no-plots -o rep").code, 0);
  EXPECT_FALSE(fs::exists(dir.path("cwd/" + stale4)));
}

// H08: an output file that holds no results (0 bytes, or only a torn first line: a run that died as it began) is
// treated as absent by a plain rerun, a --resume and a merge, which say so and write it afresh; a fresh sweep whose
// header cannot be written exits 4 and leaves no file behind.
TEST(Cli, H08_EmptyOrTornOutputIsNotADeadEnd) {
  TempDir dir;
  const std::string sweep = "sweep " + quote(kSmoke) + " --device cpu -q -o out.jsonl" + kOnePoint;
  const std::string says = "out.jsonl holds no results (0 bytes, or only a torn first line";
  for (const auto& [content, extra] : {std::pair<std::string, std::string>{"", ""},
                                       {"{\"type\":\"header\",\"schema_ver", ""},
                                       {"", " --resume"},
                                       {"{\"type\":\"header\",\"schema_ver", " --resume"}}) {
    write_file(dir.path("cwd/out.jsonl"), content);
    const Result r = labrun(dir, sweep + extra);
    EXPECT_EQ(r.code, 0) << extra << "\n" << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_EQ(lines_of(slurp(dir.path("cwd/out.jsonl"))).size(), 2u);
  }
  write_file(dir.path("cwd/m.jsonl"), "");
  const Result merged = labrun(dir, "merge -o m.jsonl " + quote(one_point_shard()));
  EXPECT_EQ(merged.code, 0) << merged.err;
  EXPECT_NE(merged.err.find("m.jsonl holds no results"), std::string::npos) << merged.err;
  // No space for the header: exit 4 with the reason, and no empty file to trip over next time.
  const Result full = labrun_without_space(dir, "sweep " + quote(kSmoke) + " --device cpu -q -o new.jsonl" + kOnePoint);
  EXPECT_EQ(full.code, 4) << full.err;
  EXPECT_NE(full.err.find("File too large"), std::string::npos) << full.err;
  EXPECT_FALSE(fs::exists(dir.path("cwd/new.jsonl")));
  EXPECT_EQ(names_with(dir.cwd(), ".new"), std::vector<std::string>{});
}

// H10: a write that fails (here every file write fails with EFBIG, as on a full disk) is exit 4 with a message that
// names the file and carries the reason, for every writer, and leaves no partial file. history -o exits 4 as report.
TEST(Cli, H10_WriteErrorsCarryTheReason) {
  SmokeRun& run = smoke_run();
  ASSERT_EQ(run.result.code, 0) << run.result.err;
  TempDir dir;
  const std::pair<std::string, std::string> cases[] = {
      {"report " + quote(run.output) + " --no-plots -o rep", "/points.csv: File too large"},
      {"history " + quote(run.output) + " -o hist", "/history.json: File too large"},
      {"merge -o m.jsonl " + quote(one_point_shard()), "m.jsonl.new-"},
      {"slurm " + quote(kSmoke) + " --shards 2 -o slurm", "-array.sbatch: File too large"},
  };
  for (const auto& [args, message] : cases) {
    const Result r = labrun_without_space(dir, args);
    EXPECT_EQ(r.code, 4) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("cannot write "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("File too large"), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.path("cwd/rep")));
  EXPECT_FALSE(fs::exists(dir.path("cwd/hist")));
  EXPECT_FALSE(fs::exists(dir.path("cwd/m.jsonl")));
  EXPECT_EQ(names_with(dir.cwd(), ".new"), std::vector<std::string>{});
  EXPECT_FALSE(fs::exists(dir.path("cwd/slurm")));  // the folder slurm made is removed again (case H18)
}

}  // namespace
}  // namespace labrun
