// The revision of the code under test (src/base/code_rev.hpp, scripts/code_rev.cmake): the generated file's sha and
// dirty flag from a scratch git repository (untracked files count, ignored ones do not), labrun's own build_info
// dirty flag likewise, the precedence of --code-rev over LABRUN_CODE_REV over the build, the header's
// environment.code round trip, headers of schema <= 2 falling back to labrun's sha, and through the binary: the
// header records which source won, and --resume refuses another code sha.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>

#include "build_info.hpp"
#include "code_rev.hpp"
#include "env.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;
using test::TempDir;

int sh(const std::string& command) {
  const int status = std::system(command.c_str());
  return status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

bool have(const char* tool) { return sh(std::string("command -v ") + tool + " >/dev/null 2>&1") == 0; }

/// A scratch git repository at `dir`/repo with one committed file and a .gitignore ignoring *.log; "" without git.
std::string make_repo(const TempDir& dir) {
  const std::string repo = dir.file("repo");
  const std::string git = "git -C '" + repo + "' -c user.name=t -c user.email=t@example.com ";
  if (sh("git init -q '" + repo + "' >/dev/null 2>&1") != 0) return "";
  std::ofstream(repo + "/kernel.cu") << "// v1\n";
  std::ofstream(repo + "/.gitignore") << "*.log\n";
  if (sh(git + "add kernel.cu .gitignore >/dev/null 2>&1 && " + git + "commit -q -m one >/dev/null 2>&1") != 0)
    return "";
  return repo;
}

std::string head_of(const std::string& repo) {
  const std::string out = repo + "/../head.txt";
  if (sh("git -C '" + repo + "' rev-parse HEAD > '" + out + "'") != 0) return "";
  std::string s = test::slurp(out);
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

struct Generated {
  std::string project, sha;
  bool dirty = false;
  bool found = false;
};

/// Runs scripts/code_rev.cmake (only its -D arguments, as an installed copy is run) and reads the values the
/// generated file hands to labrun::set_built_code_rev.
Generated generate(const std::string& source_dir, const std::string& project, const std::string& output) {
  const std::string cmd = "cmake -DSOURCE_DIR='" + source_dir + "' -DPROJECT='" + project + "' -DOUTPUT='" + output +
                          "' -P '" + test::kSource + "/scripts/code_rev.cmake' >/dev/null 2>&1";
  Generated g;
  if (sh(cmd) != 0) return g;
  const std::string text = test::slurp(output);
  std::smatch m;
  static const std::regex call(R"re(labrun::set_built_code_rev\("([^"]*)", "([^"]*)", (true|false)\))re");
  if (!std::regex_search(text, m, call)) return g;
  g.project = m[1];
  g.sha = m[2];
  g.dirty = m[3] == "true";
  g.found = true;
  return g;
}

TEST(CodeRevScript, DirtyCountsUntrackedFilesGitDoesNotIgnore) {
  if (!have("git") || !have("cmake")) GTEST_SKIP() << "git or cmake is not available";
  TempDir dir("labrun_code_rev");
  const std::string repo = make_repo(dir);
  ASSERT_FALSE(repo.empty());
  const std::string head = head_of(repo);
  ASSERT_EQ(head.size(), 40u);
  const std::string out = dir.file("build/code_rev.cpp");  // outside the repository
  fs::create_directories(dir.file("build"));

  Generated clean = generate(repo, "myproj", out);
  ASSERT_TRUE(clean.found) << test::slurp(out);
  EXPECT_EQ(clean.project, "myproj");
  EXPECT_EQ(clean.sha, head);
  EXPECT_FALSE(clean.dirty);

  // An ignored file: still clean.
  std::ofstream(repo + "/run.log") << "x\n";
  EXPECT_FALSE(generate(repo, "myproj", out).dirty);
  // An untracked file git does not ignore (a new source not yet added): dirty.
  std::ofstream(repo + "/new_kernel.cu") << "// new\n";
  const Generated untracked = generate(repo, "myproj", out);
  EXPECT_TRUE(untracked.dirty);
  EXPECT_EQ(untracked.sha, head);
  fs::remove(repo + "/new_kernel.cu");
  EXPECT_FALSE(generate(repo, "myproj", out).dirty);
  // A modified tracked file: dirty.
  std::ofstream(repo + "/kernel.cu") << "// v2\n";
  EXPECT_TRUE(generate(repo, "myproj", out).dirty);

  // Rewritten only when the content changes (an unchanged tree does not relink).
  const auto before = fs::last_write_time(out);
  const std::string text = test::slurp(out);
  ASSERT_EQ(sh("touch -d '2001-01-01' '" + out + "'"), 0);
  const auto old_time = fs::last_write_time(out);
  generate(repo, "myproj", out);
  EXPECT_EQ(fs::last_write_time(out), old_time);
  EXPECT_EQ(test::slurp(out), text);
  (void)before;
}

TEST(CodeRevScript, NoRepositoryIsUnknownAndDirty) {
  if (!have("cmake")) GTEST_SKIP() << "cmake is not available";
  TempDir dir("labrun_code_rev");
  fs::create_directories(dir.file("tarball"));
  // GIT_CEILING_DIRECTORIES keeps git from finding a repository above the temp dir.
  ::setenv("GIT_CEILING_DIRECTORIES", dir.path().string().c_str(), 1);
  const Generated g = generate(dir.file("tarball"), "myproj", dir.file("code_rev.cpp"));
  ::unsetenv("GIT_CEILING_DIRECTORIES");
  ASSERT_TRUE(g.found);
  EXPECT_EQ(g.sha, "unknown");
  EXPECT_TRUE(g.dirty);
  // Every argument is required, and named when missing.
  EXPECT_NE(sh("cmake -DSOURCE_DIR=/tmp -DOUTPUT='" + dir.file("x.cpp") + "' -P '" + test::kSource +
               "/scripts/code_rev.cmake' >/dev/null 2>&1"),
            0);
}

TEST(CodeRevScript, LabrunsBuildInfoCountsUntrackedFilesToo) {
  if (!have("git") || !have("cmake")) GTEST_SKIP() << "git or cmake is not available";
  TempDir dir("labrun_code_rev");
  const std::string repo = make_repo(dir);
  ASSERT_FALSE(repo.empty());
  const std::string out = dir.file("build_info.cpp");
  const auto dirty = [&] {
    EXPECT_EQ(sh("cmake -DSOURCE_DIR='" + repo + "' -DOUTPUT='" + out + "' -DVERSION=9.9.9 -DBUILD_TYPE=Release -P '" +
                 test::kSource + "/scripts/build_info.cmake' >/dev/null 2>&1"),
              0);
    const std::string text = test::slurp(out);
    EXPECT_NE(text.find(head_of(repo)), std::string::npos) << text;
    return text.find(head_of(repo) + "\", true,") != std::string::npos;
  };
  EXPECT_FALSE(dirty());
  std::ofstream(repo + "/untracked.cpp") << "int x;\n";
  EXPECT_TRUE(dirty());
}

TEST(CodeRev, OverridePrecedenceOptionThenEnvironmentThenBuild) {
  const CodeRev built{"myproj", "0123456789abcdef0123456789abcdef01234567", false, "build"};
  const CodeRev b = resolve_code_rev(built, std::nullopt, nullptr);
  EXPECT_EQ(b.git_sha, built.git_sha);
  EXPECT_EQ(b.source, "build");
  EXPECT_EQ(resolve_code_rev(built, std::string(), "").source, "build");

  const CodeRev e = resolve_code_rev(built, std::nullopt, "abcdef1+dirty");
  EXPECT_EQ(e.project, "myproj");
  EXPECT_EQ(e.git_sha, "abcdef1");
  EXPECT_TRUE(e.git_dirty);
  EXPECT_EQ(e.source, "LABRUN_CODE_REV");

  const CodeRev o = resolve_code_rev(built, std::string("ABCDEF0123"), "abcdef1+dirty");
  EXPECT_EQ(o.git_sha, "abcdef0123");  // lower-cased
  EXPECT_FALSE(o.git_dirty);
  EXPECT_EQ(o.source, "--code-rev");
  EXPECT_EQ(o.project, "myproj");

  EXPECT_EQ(parse_code_rev("unknown+dirty", "p", "--code-rev").git_sha, "unknown");
  for (const char* bad :
       {"", "abc", "xyz1234", "1234567+clean", "+dirty", " 1234567", "0123456789abcdef0123456789abcdef012345678"}) {
    try {
      parse_code_rev(bad, "p", "--code-rev");
      ADD_FAILURE() << "accepted '" << bad << "'";
    } catch (const std::invalid_argument& err) {
      EXPECT_NE(std::string(err.what()).find("--code-rev: expected SHA[+dirty]"), std::string::npos) << err.what();
    }
  }
  EXPECT_THROW(resolve_code_rev(built, std::nullopt, "not-a-sha"), std::invalid_argument);
}

TEST(CodeRev, TestsWithoutAGeneratedFileFallBackToLabrunsBuildInfo) {
  // labrun_tests links no generated code_rev.cpp: the code under test is labrun's own build.
  const CodeRev d = built_code_rev();
  EXPECT_EQ(d.project, "labrun");
  EXPECT_EQ(d.git_sha, build_info().git_sha);
  EXPECT_EQ(d.git_dirty, build_info().git_dirty);
  EXPECT_EQ(d.source, "default");
}

TEST(CodeRev, HeaderRoundTrip) {
  ::unsetenv("LABRUN_CODE_REV");
  set_code_rev_option("");
  Json env = host_environment();
  ASSERT_TRUE(env.contains("code"));
  EXPECT_EQ(env["code"], to_json(built_code_rev()));

  ::setenv("LABRUN_CODE_REV", "1111111+dirty", 1);
  env = host_environment();
  EXPECT_EQ(env["code"]["git_sha"], "1111111");
  EXPECT_EQ(env["code"]["source"], "LABRUN_CODE_REV");
  set_code_rev_option("2222222222");
  env = host_environment();
  ::unsetenv("LABRUN_CODE_REV");
  set_code_rev_option("");
  EXPECT_THROW(set_code_rev_option("nope"), std::invalid_argument);
  EXPECT_EQ(code_rev_option(), "");
  EXPECT_EQ(env["code"],
            (Json{{"project", "labrun"}, {"git_sha", "2222222222"}, {"git_dirty", false}, {"source", "--code-rev"}}));
  // Key order: environment.code right after environment.labrun.
  auto it = env.begin();
  EXPECT_EQ(it.key(), "labrun");
  EXPECT_EQ((++it).key(), "code");

  // Read back through a header line, as every consumer reads it.
  env["labrun"]["version"] = "0.3.0";
  const RunHeader h = header_from_json(
      Json::parse(Json{{"type", "header"}, {"schema_version", kRecordSchemaVersion}, {"environment", env}}.dump()));
  EXPECT_EQ(h.code_project(), "labrun");
  EXPECT_EQ(h.code_sha(), "2222222222");
  EXPECT_EQ(h.code_dirty(), std::optional<bool>(false));
  EXPECT_EQ(h.code_source(), "--code-rev");
  EXPECT_EQ(h.git_sha(), build_info().git_sha);  // labrun's own sha stays
  EXPECT_EQ(h.code_key(), "labrun@2222222222 labrun 0.3.0");
}

TEST(CodeRev, HeadersOfEarlierSchemasAreLabrunsOwnCode) {
  const RunHeader old = header_from_json(Json{
      {"type", "header"},
      {"schema_version", 2},
      {"environment", {{"labrun", {{"version", "0.1.0"}, {"git_sha", "abcdef0123456789"}, {"git_dirty", true}}}}}});
  EXPECT_EQ(old.code_project(), "labrun");
  EXPECT_EQ(old.code_sha(), "abcdef0123456789");
  EXPECT_EQ(old.code_dirty(), std::optional<bool>(true));
  EXPECT_EQ(old.code_source(), "");
  EXPECT_EQ(old.code_key(), "labrun@abcdef0123456789+dirty labrun 0.1.0");

  // The committed schema-1 H200 run loads, and its code under test is its labrun sha.
  TempDir dir("labrun_code_rev");
  const std::string file = test::schema1_masking_run(dir);
  if (file.empty()) GTEST_SKIP() << "gzip is not available";
  const ResultSet set = load_results({file});
  ASSERT_FALSE(set.runs.empty());
  const RunHeader& h = set.runs.front().header;
  EXPECT_FALSE(h.git_sha().empty());
  EXPECT_EQ(h.code_sha(), h.git_sha());
  EXPECT_EQ(h.code_project(), "labrun");
}

// ---- Through the binary ----------------------------------------------------------------------------------------

// labrun `args` in `dir` under the environment assignments `env` (an `env ...` prefix or ""): exit status and output.
test::Logged run_labrun(const TempDir& dir, const std::string& env, const std::string& args) {
  return test::run_logged(dir.path().string(), env + " '" + test::kBinary + "' " + args, dir.file("log.txt"));
}

Json header_of(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  std::getline(in, line);
  return Json::parse(line);
}

// A quick host sweep: two points of the smoke config.
const std::string kQuick = "sweep '" + test::kSource +
                           "/configs/smoke.yaml' --device cpu -q --only variant=index,n=1000,"
                           "density=0.5,dtype=f32,downstream=0";

TEST(CodeRevCli, TheHeaderRecordsWhichSourceWonAndResumeRefusesAnotherCodeSha) {
  TempDir dir("labrun_code_rev_cli");
  // The labrun binary's own code rev, from its generated file.
  ASSERT_EQ(run_labrun(dir, "env -u LABRUN_CODE_REV", kQuick + " -o built.jsonl").code, 0);
  const Json built = header_of(dir.file("built.jsonl"));
  EXPECT_EQ(built["schema_version"], kRecordSchemaVersion);
  EXPECT_EQ(built["environment"]["code"]["project"], "labrun");
  EXPECT_EQ(built["environment"]["code"]["git_sha"], build_info().git_sha);
  EXPECT_EQ(built["environment"]["code"]["source"], "build");
  EXPECT_EQ(built["environment"]["labrun"]["git_sha"], build_info().git_sha);

  ASSERT_EQ(run_labrun(dir, "LABRUN_CODE_REV=abcdef1234+dirty", kQuick + " -o env.jsonl").code, 0);
  const Json env = header_of(dir.file("env.jsonl"))["environment"]["code"];
  EXPECT_EQ(
      env,
      (Json{{"project", "labrun"}, {"git_sha", "abcdef1234"}, {"git_dirty", true}, {"source", "LABRUN_CODE_REV"}}));

  const test::Logged both = run_labrun(dir, "LABRUN_CODE_REV=abcdef1234+dirty",
                                       kQuick + " -o both.jsonl --code-rev 7654321");
  ASSERT_EQ(both.code, 0) << both.log;
  const Json opt = header_of(dir.file("both.jsonl"))["environment"]["code"];
  EXPECT_EQ(opt, (Json{{"project", "labrun"}, {"git_sha", "7654321"}, {"git_dirty", false}, {"source", "--code-rev"}}));

  // A malformed override is bad input (exit 2) before anything runs.
  const test::Logged bad = run_labrun(dir, "env -u LABRUN_CODE_REV", kQuick + " -o bad.jsonl --code-rev main");
  EXPECT_EQ(bad.code, 2);
  EXPECT_NE(bad.log.find("--code-rev: expected SHA[+dirty]"), std::string::npos) << bad.log;
  EXPECT_FALSE(fs::exists(dir.file("bad.jsonl")));

  // --resume of the file with another code sha is refused (exit 4), the file untouched; the same sha resumes.
  const std::string before = test::slurp(dir.file("both.jsonl"));
  const test::Logged other = run_labrun(dir, "env -u LABRUN_CODE_REV",
                                        kQuick + " -o both.jsonl --resume --code-rev 7654322");
  EXPECT_EQ(other.code, 4);
  EXPECT_NE(other.log.find("its code commit is 7654321, this run's 7654322"), std::string::npos) << other.log;
  EXPECT_EQ(test::slurp(dir.file("both.jsonl")), before);
  const test::Logged dirty = run_labrun(dir, "env -u LABRUN_CODE_REV",
                                        kQuick + " -o both.jsonl --resume --code-rev 7654321+dirty");
  EXPECT_EQ(dirty.code, 4);
  EXPECT_NE(dirty.log.find("its code dirty flag is false, this run's true"), std::string::npos) << dirty.log;
  const test::Logged same = run_labrun(dir, "env -u LABRUN_CODE_REV",
                                       kQuick + " -o both.jsonl --resume --code-rev 7654321");
  EXPECT_EQ(same.code, 0) << same.log;
  EXPECT_EQ(test::slurp(dir.file("both.jsonl")), before);
}

}  // namespace
}  // namespace labrun
