// Helpers shared by the host tests: a scratch directory, the built-in registry, quick lab settings and a point run
// on the host backend.
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdlib>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <labrun/counter_rng.hpp>
#include <labrun/experiment.hpp>
#include <labrun/point.hpp>

#include "config.hpp"
#include "host_backend.hpp"
#include "lab.hpp"
#include "lab_settings.hpp"
#include "point_record.hpp"
#include "registry.hpp"
#include "sdk_registry.hpp"
#include "sweep.hpp"

namespace labrun::test {

/// The repository's root (an absolute path): configs/, tests/data/ and the other committed inputs lie below it.
inline const std::string kSource = LABRUN_SOURCE_DIR;
#ifdef LABRUN_BINARY
/// The labrun binary this build made (an absolute path).
inline const std::string kBinary = LABRUN_BINARY;
#endif
#ifdef LABRUN_TESTAID_BINARY
/// labrun_testaid, labrun with the test aids registered (tests/aids/), as this build made it (an absolute path).
inline const std::string kTestAid = LABRUN_TESTAID_BINARY;
#endif

/// A fresh directory (mkdtemp under the system temp dir), removed with its contents at scope exit.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix = "labrun") {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "_XXXXXX")).string();
    if (!::mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  /// Path of `name` inside the directory.
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

/// What a command line printed and returned.
struct Cli {
  int code = -1;  ///< exit status; -1 when it did not exit
  std::string out, err;
};

/// The whole file at `path` ("" when unreadable).
inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

/// Runs `binary args` (args as a shell would split them) in `dir`, its stdout and stderr captured.
inline Cli run_cli(const TempDir& dir, const std::string& binary, const std::string& args) {
  const std::string out = dir.file("stdout.txt"), err = dir.file("stderr.txt");
  const int status = std::system(
      ("cd '" + dir.path().string() + "' && '" + binary + "' " + args + " >'" + out + "' 2>'" + err + "'").c_str());
  Cli r;
  if (status != -1 && WIFEXITED(status)) r.code = WEXITSTATUS(status);
  r.out = slurp(out);
  r.err = slurp(err);
  return r;
}

/// What a command line printed, stdout and stderr together in the order written, and its exit status.
struct Logged {
  int code = -1;    ///< exit status; -1 when it did not exit
  std::string log;  ///< stdout and stderr together
};

/// `words` as shell words: each in single quotes, separated by spaces (no word may hold a single quote).
inline std::string quoted(const std::vector<std::string>& words) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "'" : " '") + w + "'";
  return out;
}

/// Runs the shell command line `command` in the folder `cwd`, its stdout and stderr captured together through the
/// file `log` (a path, overwritten).
inline Logged run_logged(const std::string& cwd, const std::string& command, const std::string& log) {
  const int status = std::system(("cd '" + cwd + "' && " + command + " >'" + log + "' 2>&1").c_str());
  Logged r;
  if (status != -1 && WIFEXITED(status)) r.code = WEXITSTATUS(status);
  r.log = slurp(log);
  return r;
}

/// A git repository of `n` empty commits in `dir`/repo; their shas oldest first, or empty without git.
inline std::vector<std::string> make_repo(const TempDir& dir, std::size_t n) {
  const std::string repo = dir.file("repo");
  std::string cmd = "git init -q '" + repo + "' >/dev/null 2>&1";
  for (std::size_t i = 0; i < n; ++i)
    cmd += " && git -C '" + repo + "' -c user.name=t -c user.email=t@example.com commit -q --allow-empty -m c" +
           std::to_string(i) + " >/dev/null 2>&1";
  cmd += " && git -C '" + repo + "' rev-list --reverse HEAD > '" + dir.file("shas.txt") + "'";
  if (std::system(cmd.c_str()) != 0) return {};
  std::vector<std::string> shas;
  std::ifstream in(dir.file("shas.txt"));
  for (std::string line; std::getline(in, line);) shas.push_back(line);
  return shas;
}

/// The schema-1 GPU run kept as a fixture (configs/masking.yaml on the H200, build 4770c85, before the
/// experiment-package redesign), unpacked into `dir`: the path of the .jsonl, or "" when gzip is missing.
inline std::string schema1_masking_run(const TempDir& dir) {
  const std::string src = std::string(LABRUN_SOURCE_DIR) + "/tests/data/masking-schema1-4770c85.jsonl.gz";
  const std::string dst = dir.file("masking-schema1-4770c85.jsonl");
  if (std::system("command -v gzip >/dev/null 2>&1") != 0) return "";
  if (std::system(("gzip -dc '" + src + "' > '" + dst + "'").c_str()) != 0) return "";
  return dst;
}

/// The id a point record of `key` carries (Point::id(): FNV-1a 64 of the key, 16 hex digits); the reader refuses a
/// point whose id is not its key's, so fixtures that write point records by hand take their ids from here.
inline std::string id_of(const std::string& key) { return fmt::format("{:016x}", fnv1a64(key)); }

/// A point record written by hand: its `id`, its `key` ("experiment/variant/axes", whose first two parts are its
/// experiment and variant) and its `status`; every other field unset.
inline PointRecord point_record(const std::string& id, const std::string& key, Status status) {
  PointRecord p;
  p.id = id;
  p.key = key;
  const std::size_t a = key.find('/'), b = key.find('/', a + 1);
  p.experiment = key.substr(0, a);
  p.variant = key.substr(a + 1, b - a - 1);
  p.status = status;
  return p;
}

/// The registry of every built-in experiment (host implementations), built once.
inline const Registry& builtin() {
  static const Registry instance = [] {
    Registry r;
    register_builtin(r);
    return r;
  }();
  return instance;
}

/// The built-in SDK experiment `name` (its generator, reference and check, as the lab runs them).
inline std::shared_ptr<SdkExperiment> builtin_sdk(const std::string& name) { return sdk_experiment(builtin(), name); }

/// A shipped config and the points it expands to.
struct Shipped {
  SweepConfig config;
  std::vector<Point> points;
};

/// configs/`name`.yaml loaded with the built-in experiments, and its points expanded by experiment `name`; a test
/// failure unless the config sweeps that experiment.
inline Shipped shipped(const std::string& name) {
  Shipped s{load_config(kSource + "/configs/" + name + ".yaml", builtin()), {}};
  EXPECT_EQ(s.config.experiment, name);
  s.points = expand(s.config, *builtin().find(name));
  return s;
}

/// The input seed an experiment drew before the SDK: splitmix64(`lab_seed` ^ FNV-1a 64 of its pre-SDK key `key`).
inline std::uint64_t pre_sdk_seed(std::uint64_t lab_seed, const std::string& key) {
  return splitmix64(lab_seed ^ fnv1a64(key));
}

/// A point, the lab seed it runs under, and the pre-SDK key its inputs were drawn from ("gemv/37x513/bf16").
struct SeedCase {
  Point point;
  std::uint64_t lab_seed;
  std::string key;
};

/// Expects `sdk` to draw each case's input seed as the experiment drew it before the SDK (pre_sdk_seed).
inline void expect_pre_sdk_seeds(const SdkExperiment& sdk, const std::vector<SeedCase>& cases) {
  for (const SeedCase& c : cases)
    EXPECT_EQ(sdk.input_seed(Args(c.point), c.lab_seed), pre_sdk_seed(c.lab_seed, c.key)) << c.point.label();
}

/// An input array as a test expects it: its name in the input set, and the bytes (`bytes` of them at `data`).
struct ArrayBytes {
  std::string name;
  const void* data;
  std::size_t bytes;
};

/// Expects the inputs `sdk` generates for point `p` under `lab_seed` to hold, array by array, `want`'s bytes.
inline void expect_input_bytes(SdkExperiment& sdk, const Point& p, std::uint64_t lab_seed,
                               const std::vector<ArrayBytes>& want) {
  const auto in = sdk.inputs(Args(p), lab_seed);
  for (const ArrayBytes& a : want) EXPECT_EQ(std::memcmp(in->arrays()[a.name].data, a.data, a.bytes), 0) << a.name;
}

/// Lab settings for a quick host run: one warmup iteration, one or two samples, no time floors or limits (host tests
/// assert values and statuses, never timings).
inline LabSettings quick_lab() {
  return LabSettings{.warmup_iterations = 1,
                     .warmup_time_s = 0,
                     .min_samples = 1,
                     .max_samples = 2,
                     .max_time_s = 0,
                     .min_sample_time_s = 0};
}

/// Point `p` of `experiment` through the lab pass on the host backend: its record (run_point's JSON object).
inline Json run_on_host(const Point& p, const RegisteredExperiment& experiment, const LabSettings& lab = quick_lab()) {
  HostBackend backend;
  return run_point(p, experiment, backend, lab);
}

/// Expects the point record `rec` to be `skipped` for a working set over lab.host_max_bytes (its reason names it).
inline void expect_over_host_max_bytes(const Json& rec) {
  EXPECT_EQ(rec["status"], "skipped") << rec.dump();
  ASSERT_TRUE(rec["reason"].is_string()) << rec.dump();
  EXPECT_NE(rec["reason"].get<std::string>().find("host_max_bytes"), std::string::npos) << rec["reason"];
}

/// Expects `points` (a sweep, in order) to come in consecutive groups of `size`, as lab.interleave = `size` assumes:
/// within each group every point has the group's first point's value of each axis named in `axes`.
inline void expect_groups_of(const std::vector<Point>& points, std::size_t size, const std::vector<std::string>& axes) {
  for (std::size_t i = 0; i < points.size(); i += size)
    for (std::size_t j = i + 1; j < i + size; ++j)
      for (const std::string& axis : axes)
        EXPECT_EQ(points.at(j).at(axis), points.at(i).at(axis)) << points.at(j).label() << ": " << axis;
}

/// quick_lab() with lab.host_max_bytes = `max_bytes` (bytes), checked to bound the working set exactly there on the
/// host: point `fits` of `experiment` (working set `max_bytes`) runs ok, point `over` (a little more) is skipped.
inline LabSettings host_max_bytes_lab(double max_bytes, const RegisteredExperiment& experiment, const Point& fits,
                                      const Point& over) {
  LabSettings lab = quick_lab();
  lab.host_max_bytes = max_bytes;
  EXPECT_EQ(run_on_host(fits, experiment, lab)["status"], "ok") << fits.label();
  expect_over_host_max_bytes(run_on_host(over, experiment, lab));
  return lab;
}

/// A check's outcome as the point's record spells it: `correctness.detail` (the reported comparison's fields and
/// notes, `checks` when there are several, `poisoned`; docs/records.md).
inline Json detail_of(const CheckOutcome& c) { return to_json(Correctness{c, Json()})["detail"]; }

/// The named number a check attached to a comparison (Compare::note); a test failure and NaN when there is none.
inline double note(const CheckResult& c, const std::string& name) {
  for (const auto& [n, v] : c.notes)
    if (n == name) return v;
  ADD_FAILURE() << "no note " << name;
  return std::numeric_limits<double>::quiet_NaN();
}

}  // namespace labrun::test
