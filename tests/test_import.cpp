// `labrun import nvbench` (src/import/, docs/formats.md "Import"): a real nvbench file (tests/data/nvbench/, 28 states
// on an H200) imported and read by report, its numbers equal to the file's, and every kind of bad input refused with
// its file and place, nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "exit_codes.hpp"
#include "import.hpp"
#include "point_record.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

namespace fs = std::filesystem;

const std::string kNvbench = std::string(LABRUN_SOURCE_DIR) + "/tests/data/nvbench/fused_masked_sumsq.json";

Json fixture() {
  std::ifstream in(kNvbench);
  return Json::parse(in);
}

// The fixture with summary `tag` of its state `s` (benchmark 0) set to `value` (nvbench's text of a number).
Json fixture_with_summary(std::size_t s, const std::string& tag, const std::string& value) {
  Json doc = fixture();
  for (Json& x : doc["benchmarks"][0]["states"][s]["summaries"])
    if (x["tag"] == tag) x["data"][0]["value"] = value;
  return doc;
}

// The arguments of `labrun import nvbench INPUT -o OUTPUT` (two paths), every other option at its default.
ImportArgs nvbench_args(const std::string& input, const std::string& output) {
  ImportArgs a;
  a.tool = "nvbench";
  a.input = input;
  a.output = output;
  return a;
}

ImportOptions options() {
  ImportOptions o;
  o.file = "nv.json";
  o.created_utc = "2026-12-01T10:00:00.000Z";
  return o;
}

// The value nvbench wrote for `tag` in state `s` of benchmark 0, as a number.
double summary(const Json& doc, std::size_t s, const std::string& tag) {
  for (const Json& x : doc["benchmarks"][0]["states"][s]["summaries"])
    if (x["tag"] == tag) return std::stod(x["data"][0]["value"].get<std::string>());
  return kNoValue;
}

TEST(Import, NvbenchStatesBecomeAColdAndAHotPointEachWithTheFilesNumbers) {
  const Json doc = fixture();
  const labrun::Run run = import_nvbench(doc, options());
  ASSERT_EQ(run.points.size(), 56u);  // 28 states, each cold and batch
  EXPECT_EQ(run.header.json["environment"]["device"]["name"], "NVIDIA H200");
  EXPECT_EQ(run.header.json["environment"]["device"]["sm_count"], 132);
  EXPECT_EQ(run.header.json["environment"]["device"]["arch"], "sm_90");
  EXPECT_EQ(run.header.json["environment"]["tool"]["git_sha"], "66212f1da71cc9afb2894a46fa8f234cbdd6c0d8");
  EXPECT_EQ(run.header.created_utc(), "2026-12-01T10:00:00.000Z");
  EXPECT_EQ(run.header.point_count(), 56);
  const PointRecord& cold = run.points[0];
  EXPECT_EQ(cold.key, "nvbench/fused_masked_sumsq_f32/Density=0.001,N=100000,l2=cold");
  EXPECT_EQ(cold.id, test::id_of(cold.key));
  EXPECT_EQ(cold.status, Status::ok);
  ASSERT_TRUE(cold.timing);
  EXPECT_EQ(cold.timing->method, TimingMethod::nvbench_cold);
  EXPECT_DOUBLE_EQ(cold.timing->time_s, summary(doc, 0, "nv/cold/time/gpu/median"));
  ASSERT_TRUE(cold.timing->device);
  EXPECT_EQ(cold.timing->device->count, 65936);
  EXPECT_DOUBLE_EQ(cold.timing->device->mean_time_s, summary(doc, 0, "nv/cold/time/gpu/mean"));
  EXPECT_DOUBLE_EQ(cold.timing->device->stddev_time_s, summary(doc, 0, "nv/cold/time/gpu/stdev/absolute"));
  EXPECT_DOUBLE_EQ(cold.timing->device->p25_time_s, summary(doc, 0, "nv/cold/time/gpu/q1"));
  EXPECT_DOUBLE_EQ(cold.cost.bytes, 500000.0);  // DataBytes 400000 + MaskBytes 100000
  const PointRecord& hot = run.points[1];
  EXPECT_EQ(hot.key, "nvbench/fused_masked_sumsq_f32/Density=0.001,N=100000,l2=hot");
  EXPECT_EQ(hot.timing->method, TimingMethod::nvbench_batch);
  EXPECT_DOUBLE_EQ(hot.timing->time_s, summary(doc, 0, "nv/batch/time/gpu/mean"));
  EXPECT_EQ(hot.axes["N"], 100000);
  EXPECT_DOUBLE_EQ(hot.axes["Density"].get<double>(), 0.001);
  // Every point round-trips through the record reader.
  for (const PointRecord& p : run.points) EXPECT_EQ(to_json(point_from_json(to_json(p))), to_json(p)) << p.key;
}

TEST(Import, TheCommandWritesAResultFileThatReportReads) {
  const test::TempDir dir;
  ImportArgs a = nvbench_args(kNvbench, dir.file("nv.jsonl"));
  a.code_rev = "66212f1+dirty";
  std::ostringstream err;
  ASSERT_EQ(cmd_import(a, err), kExitOk) << err.str();
  EXPECT_NE(err.str().find("56 points (0 skipped)"), std::string::npos) << err.str();
  EXPECT_NE(err.str().find("the file's modification time"), std::string::npos) << err.str();
  const ResultSet set = load_results({a.output}, LoadDepth::full);
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_EQ(set.runs[0].header.code_sha(), "66212f1");
  EXPECT_EQ(set.runs[0].header.code_dirty(), true);
  EXPECT_EQ(set.runs[0].header.code_source(), "--code-rev");
  std::ostringstream out, rerr;
  ReportOptions ro;
  ro.plots = false;
  EXPECT_EQ(cmd_report({a.output}, dir.file("rep"), out, rerr, ro), kExitOk) << rerr.str();
  EXPECT_NE(out.str().find("56 points"), std::string::npos) << out.str();
  // Without --force, an existing output is kept.
  std::ostringstream again;
  EXPECT_EQ(cmd_import(a, again), kExitOutput);
  EXPECT_NE(again.str().find("exists (--force replaces it)"), std::string::npos) << again.str();
}

// diff on imported summaries (no samples): the file against itself is clean (exit 0); a copy with one state's times
// scaled by 1.5 is a regression naming that state alone. nvbench's batch measurement (a mean, no spread) cannot be
// tested and says so.
TEST(Import, DiffComparesImportedSummariesAndNamesTheOneStateMadeSlower) {
  const test::TempDir dir;
  Json scaled = fixture();
  for (Json& s : scaled["benchmarks"][0]["states"][5]["summaries"]) {
    const std::string tag = s["tag"];
    if ((tag.rfind("nv/cold/time/gpu/", 0) == 0 && tag.find("relative") == std::string::npos) ||
        tag == "nv/batch/time/gpu/mean")
      s["data"][0]["value"] = fmt::format("{:.17g}", 1.5 * std::stod(s["data"][0]["value"].get<std::string>()));
  }
  std::ofstream(dir.file("scaled.json")) << scaled.dump();
  for (const auto& [in, out] : {std::pair{kNvbench, "a.jsonl"}, std::pair{dir.file("scaled.json"), "b.jsonl"}}) {
    ImportArgs a = nvbench_args(in, dir.file(out));
    a.created = "2026-12-01T10:00:00.000Z";
    std::ostringstream err;
    ASSERT_EQ(cmd_import(a, err), kExitOk) << err.str();
  }
  std::ostringstream out, err;
  EXPECT_EQ(cmd_diff({dir.file("a.jsonl")}, {dir.file("a.jsonl")}, DiffOptions{}, "json", out, err), 0) << err.str();
  const Json self = Json::parse(out.str());
  EXPECT_EQ(self["summary"]["same"], 28) << self["summary"];  // every cold point
  EXPECT_EQ(self["summary"]["inconclusive"], 28);             // every batch point: a mean alone
  std::ostringstream out2, err2;
  EXPECT_EQ(cmd_diff({dir.file("a.jsonl")}, {dir.file("b.jsonl")}, DiffOptions{}, "json", out2, err2), 1);
  const Json d = Json::parse(out2.str());
  std::vector<std::string> slower;
  for (const Json& p : d["points"]) {
    if (p["verdict"] == "slower") slower.push_back(p["key"]);
    if (p["key"] == "nvbench/fused_masked_sumsq_f32/Density=0.01,N=1000000,l2=cold") {
      EXPECT_EQ(p["gate"], "summaries") << p;
      EXPECT_NEAR(p["ratio"].get<double>(), 1.5, 1e-6) << p;
    }
    if (p["key"] == "nvbench/fused_masked_sumsq_f32/Density=0.01,N=1000000,l2=hot")
      EXPECT_NE(p["reason"].get<std::string>().find("holds no spread"), std::string::npos) << p;
  }
  EXPECT_EQ(slower, std::vector<std::string>{"nvbench/fused_masked_sumsq_f32/Density=0.01,N=1000000,l2=cold"});
}

// Each bad input: exit 2, the file and the place named, nothing written.
TEST(Import, BadInputIsRefusedWithItsPlaceAndNothingWritten) {
  const test::TempDir dir;
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(dir.file(name)) << text;
    return dir.file(name);
  };
  const Json negative = fixture_with_summary(2, "nv/cold/time/gpu/median", "-1e-6");
  Json word = fixture();
  word["benchmarks"][0]["states"][0]["summaries"][2]["data"][0]["value"] = "many";
  const Json outside = fixture_with_summary(1, "nv/cold/time/gpu/median", "1.0");
  Json reserved = fixture();
  reserved["benchmarks"][0]["states"][0]["axis_values"][0]["name"] = "l2";
  Json twice = fixture();
  twice["benchmarks"][0]["states"].push_back(twice["benchmarks"][0]["states"][3]);
  Json skipped_word = fixture();
  skipped_word["benchmarks"][0]["states"][0]["is_skipped"] = "true";
  const Json mean_outside = fixture_with_summary(0, "nv/cold/time/gpu/mean", "1.0");
  Json overflow = fixture();
  overflow["benchmarks"][0]["states"][0]["axis_values"][0]["value"] = "99999999999999999999";
  Json version2 = fixture();
  version2["meta"]["version"]["json"]["major"] = 2;
  Json meta_word = fixture();
  meta_word["meta"] = "x";
  Json zero = fixture();
  for (Json& s : zero["benchmarks"][0]["states"][0]["summaries"])
    if (s["tag"].get<std::string>().rfind("nv/cold/time/gpu/", 0) == 0) s["data"][0]["value"] = "0";
  Json no_device = fixture();
  no_device["benchmarks"][0]["states"][0]["device"] = 3;
  const std::pair<std::string, std::string> cases[] = {
      {write("torn.json", "{\n  \"meta\": {\n  \"devices\": [\n"), "torn.json:4:1: not JSON"},
      {write("other.json", "{\"benchmarks\": []}"), "other.json: has no \"meta\" (is this nvbench's --json output?)"},
      {write("negative.json", negative.dump()), "negative.json: benchmarks[0].states[2].summaries["},
      {write("word.json", word.dump()),
       "word.json: benchmarks[0].states[0].summaries[2].data[0].value: not a number: "
       "\"many\""},
      {write("outside.json", outside.dump()), "lies outside its own min"},
      {write("reserved.json", reserved.dump()), "one labrun reserves (l2, mode)"},
      {write("twice.json", twice.dump()),
       "twice.json: benchmarks[0].states[28]: the same point as "
       "benchmarks[0].states[3]"},
      {write("skipped_word.json", skipped_word.dump()), "benchmarks[0].states[0].is_skipped: not true or false"},
      {write("mean_outside.json", mean_outside.dump()), "lies outside its own min and max"},
      {write("overflow.json", overflow.dump()), "benchmarks[0].states[0].axis_values[0].value: not an int64"},
      {write("version2.json", version2.dump()), "meta.version.json.major: not 1"},
      {write("meta_word.json", meta_word.dump()), "meta_word.json: meta: not an object"},
      {write("zero.json", zero.dump()), "a GPU median or mean above 0 s"},
      {write("no_device.json", no_device.dump()), "benchmarks[0].states[0].device: device 3 is not one of devices[]"},
  };
  for (const auto& [path, message] : cases) {
    ImportArgs a = nvbench_args(path, dir.file("out.jsonl"));
    std::ostringstream err;
    EXPECT_EQ(cmd_import(a, err), kExitUsage) << path << ": " << err.str();
    EXPECT_NE(err.str().find(message), std::string::npos) << path << ": " << err.str();
    EXPECT_NE(err.str().find("nothing written"), std::string::npos) << err.str();
    EXPECT_FALSE(fs::exists(a.output)) << path;
  }
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 14);  // no staging left
  ImportArgs a = nvbench_args(kNvbench, dir.file("out.jsonl"));
  a.code_rev = "not-a-sha";
  std::ostringstream err;
  EXPECT_EQ(cmd_import(a, err), kExitUsage);
  EXPECT_NE(err.str().find("--code-rev not-a-sha"), std::string::npos) << err.str();
  a.code_rev = "abc";  // hex, but shorter than any sha git prints
  std::ostringstream err_short;
  EXPECT_EQ(cmd_import(a, err_short), kExitUsage);
  EXPECT_NE(err_short.str().find("7 to 64 hex digits"), std::string::npos) << err_short.str();
  a.code_rev.clear();
  a.created = "yesterday";
  std::ostringstream err2;
  EXPECT_EQ(cmd_import(a, err2), kExitUsage);
  EXPECT_NE(err2.str().find("--created yesterday: not a UTC time"), std::string::npos) << err2.str();
  EXPECT_FALSE(fs::exists(a.output));
  // A device, a FIFO or a folder is never replaced, --force or not (case H01).
  a.created.clear();
  a.force = true;
  for (const std::string target : {std::string("/dev/null"), dir.path().string()}) {
    a.output = target;
    std::ostringstream err3;
    EXPECT_EQ(cmd_import(a, err3), kExitOutput) << target << ": " << err3.str();
    EXPECT_NE(err3.str().find("not a regular file"), std::string::npos) << err3.str();
  }
  EXPECT_FALSE(fs::is_regular_file("/dev/null"));
}

// Several devices: each state's device (state.device) is an axis, so the states of two GPUs are two points.
TEST(Import, EachDeviceOfAFileWithSeveralIsAnAxis) {
  Json doc = fixture();
  Json second = doc["devices"][0];
  second["id"] = 1;
  second["name"] = "NVIDIA H100 80GB HBM3";
  doc["devices"].push_back(second);
  Json& states = doc["benchmarks"][0]["states"];
  const std::size_t n = states.size();
  for (std::size_t i = 0; i < n; ++i) {
    Json copy = states[i];
    copy["device"] = 1;
    states.push_back(copy);
  }
  const labrun::Run run = import_nvbench(doc, options());
  ASSERT_EQ(run.points.size(), 4 * n);
  EXPECT_EQ(run.points.front().axes["Device"], 0);
  EXPECT_EQ(run.points.back().axes["Device"], 1);
  EXPECT_NE(run.points.front().key, run.points[2 * n].key);
  EXPECT_EQ(run.header.json["environment"]["devices"], Json::array({"NVIDIA H200", "NVIDIA H100 80GB HBM3"}));
}

// nvbench's per-sample files (--jsonbin, read with --samples DIR): a file of the fixture's first two states, each
// naming its float32 sample file as nvbench does (FILE.json-bin/N.bin, relative to the JSON's folder), imports with
// the samples as the cold points' device samples; diff tests the samples (gate samples), names the one state whose
// samples were scaled by 1.5, and a missing, short or miscounted sample file is refused with its place.
struct JsonbinCase {
  Json doc;                                 // the fixture's first two states, each naming its sample file
  std::vector<std::vector<float>> samples;  // each state's samples, as written
};

JsonbinCase jsonbin_case(std::size_t count) {
  JsonbinCase c{fixture(), {}};
  Json& states = c.doc["benchmarks"][0]["states"];
  states = Json::array({states[0], states[1]});
  for (std::size_t s = 0; s < 2; ++s) {
    const double lo = summary(c.doc, s, "nv/cold/time/gpu/min"), hi = summary(c.doc, s, "nv/cold/time/gpu/max");
    std::vector<float> x(count);
    for (std::size_t i = 0; i < count; ++i)  // a fixed spread of times from the state's min to its max
      x[i] = static_cast<float>(lo +
                                (hi - lo) * static_cast<double>((i * 7919) % count) / static_cast<double>(count - 1));
    c.samples.push_back(x);
    for (Json& sum : states[s]["summaries"])
      if (sum["tag"] == "nv/cold/sample_size") sum["data"][0]["value"] = std::to_string(count);
    states[s]["summaries"].push_back(
        {{"tag", "nv/json/bin:nv/cold/sample_times"},
         {"data",
          Json::array({{{"name", "filename"}, {"type", "string"}, {"value", fmt::format("nv.json-bin/{}.bin", s)}},
                       {{"name", "size"}, {"type", "int64"}, {"value", std::to_string(count)}}})}});
  }
  return c;
}

// Writes the case's JSON at dir/NAME.json and its sample files under dir/NAME-bin/nv.json-bin/ (state `scaled`'s
// samples and GPU-time summaries scaled by `scale`); returns the --samples folder.
std::string write_jsonbin(const test::TempDir& dir, const JsonbinCase& c, const std::string& name, double scale = 1,
                          std::size_t scaled = 99) {
  Json doc = c.doc;
  if (scaled < 2)
    for (Json& s : doc["benchmarks"][0]["states"][scaled]["summaries"]) {
      const std::string tag = s["tag"];
      if (tag.rfind("nv/cold/time/gpu/", 0) == 0 && tag.find("relative") == std::string::npos)
        s["data"][0]["value"] = fmt::format("{:.17g}", scale * std::stod(s["data"][0]["value"].get<std::string>()));
    }
  std::ofstream(dir.file(name + ".json")) << doc.dump();
  const fs::path bins = fs::path(dir.file(name + "-bin")) / "nv.json-bin";
  fs::create_directories(bins);
  for (std::size_t s = 0; s < c.samples.size(); ++s) {
    std::ofstream f(bins / fmt::format("{}.bin", s), std::ios::binary);
    for (float x : c.samples[s]) {
      const float y = s == scaled ? static_cast<float>(x * scale) : x;
      f.write(reinterpret_cast<const char*>(&y), sizeof y);  // little-endian on the machines labrun builds for
    }
  }
  return dir.file(name + "-bin");
}

int import_with_samples(const test::TempDir& dir, const std::string& name, const std::string& samples,
                        std::string& err) {
  ImportArgs a = nvbench_args(dir.file(name + ".json"), dir.file(name + ".jsonl"));
  a.samples = samples;
  a.created = "2026-12-01T10:00:00.000Z";
  std::ostringstream e;
  const int rc = cmd_import(a, e);
  err = e.str();
  return rc;
}

TEST(Import, NvbenchSampleFilesBecomeTheColdPointsSamplesAndDiffTestsThem) {
  const test::TempDir dir;
  const JsonbinCase c = jsonbin_case(400);
  const std::string a_bins = write_jsonbin(dir, c, "a");
  const std::string b_bins = write_jsonbin(dir, c, "b", 1.5, 1);
  std::string err;
  ASSERT_EQ(import_with_samples(dir, "a", a_bins, err), kExitOk) << err;
  ASSERT_EQ(import_with_samples(dir, "b", b_bins, err), kExitOk) << err;
  const ResultSet set = load_results({dir.file("a.jsonl")}, LoadDepth::full);
  const PointRecord& cold = set.runs[0].points[0];
  ASSERT_EQ(cold.key, "nvbench/fused_masked_sumsq_f32/Density=0.001,N=100000,l2=cold");
  ASSERT_EQ(cold.timing->device_samples_s.size(), 400u);
  for (std::size_t i = 0; i < 400; ++i)
    EXPECT_EQ(cold.timing->device_samples_s[i], static_cast<double>(c.samples[0][i])) << i;
  EXPECT_EQ(set.runs[0].header.json["import"]["samples"], a_bins);
  std::ostringstream out, derr;
  EXPECT_EQ(cmd_diff({dir.file("a.jsonl")}, {dir.file("a.jsonl")}, DiffOptions{}, "json", out, derr), 0) << derr.str();
  const Json parsed1 = Json::parse(out.str());
  for (const Json& p : parsed1["points"])
    if (p["axes"]["l2"] == "cold") EXPECT_EQ(p["gate"], "samples") << p;
  std::ostringstream out2, derr2;
  EXPECT_EQ(cmd_diff({dir.file("a.jsonl")}, {dir.file("b.jsonl")}, DiffOptions{}, "json", out2, derr2), 1);
  std::vector<std::string> slower;
  const Json parsed2 = Json::parse(out2.str());
  for (const Json& p : parsed2["points"])
    if (p["verdict"] == "slower") slower.push_back(p["key"]);
  EXPECT_EQ(slower, std::vector<std::string>{"nvbench/fused_masked_sumsq_f32/Density=0.001,N=1000000,l2=cold"});
}

TEST(Import, NvbenchSampleFilesThatDoNotFitAreRefusedWithTheirPlace) {
  const test::TempDir dir;
  const JsonbinCase c = jsonbin_case(50);
  const std::string bins = write_jsonbin(dir, c, "nv");
  std::string err;
  // A file missing from --samples.
  fs::remove(fs::path(bins) / "nv.json-bin" / "1.bin");
  EXPECT_EQ(import_with_samples(dir, "nv", bins, err), kExitUsage);
  EXPECT_NE(err.find("benchmarks[0].states[1].summaries["), std::string::npos) << err;
  EXPECT_NE(err.find("is not in --samples"), std::string::npos) << err;
  // A short file.
  std::ofstream(fs::path(bins) / "nv.json-bin" / "1.bin", std::ios::binary) << "abcd";
  EXPECT_EQ(import_with_samples(dir, "nv", bins, err), kExitUsage);
  EXPECT_NE(err.find("4 bytes, expected 200 (50 float32 samples)"), std::string::npos) << err;
  // A count other than nv/cold/sample_size.
  JsonbinCase miscounted = c;
  for (Json& sum : miscounted.doc["benchmarks"][0]["states"][0]["summaries"])
    if (sum["tag"] == "nv/cold/sample_size") sum["data"][0]["value"] = "49";
  write_jsonbin(dir, miscounted, "nv");
  EXPECT_EQ(import_with_samples(dir, "nv", bins, err), kExitUsage);
  EXPECT_NE(err.find("50 samples in nv.json-bin/0.bin, but nv/cold/sample_size says 49"), std::string::npos) << err;
  // Samples of another run: the count fits, the values do not.
  JsonbinCase other = c;
  for (float& x : other.samples[1]) x = 1.0f;
  write_jsonbin(dir, other, "nv");
  EXPECT_EQ(import_with_samples(dir, "nv", bins, err), kExitUsage);
  EXPECT_NE(err.find("are not the ones its summary was made from"), std::string::npos) << err;
  // Two states naming one file.
  JsonbinCase twice = c;
  twice.doc["benchmarks"][0]["states"][1]["summaries"].back()["data"][0]["value"] = "nv.json-bin/0.bin";
  twice.samples[1] = twice.samples[0];
  write_jsonbin(dir, twice, "nv");
  EXPECT_EQ(import_with_samples(dir, "nv", bins, err), kExitUsage);
  EXPECT_NE(err.find("is another state's too"), std::string::npos) << err;
  // --samples for a file whose states name no sample file.
  std::ofstream(dir.file("plain.json")) << fixture().dump();
  EXPECT_EQ(import_with_samples(dir, "plain", bins, err), kExitUsage);
  EXPECT_NE(err.find("was it run with --jsonbin?"), std::string::npos) << err;
  // --samples for Google Benchmark, which has none.
  ImportArgs g;
  g.tool = "gbench";
  g.input = dir.file("plain.json");
  g.output = dir.file("g.jsonl");
  g.samples = bins;
  std::ostringstream e;
  EXPECT_EQ(cmd_import(g, e), kExitUsage);
  EXPECT_NE(e.str().find("--samples reads nvbench's per-sample files"), std::string::npos) << e.str();
  EXPECT_FALSE(fs::exists(dir.file("nv.jsonl")));
  EXPECT_FALSE(fs::exists(dir.file("plain.jsonl")));
  // A file that names sample files, imported without --samples: the summaries, and a warning that says so.
  write_jsonbin(dir, c, "named");
  ImportArgs n;
  n.tool = "nvbench";
  n.input = dir.file("named.json");
  n.output = dir.file("named.jsonl");
  n.created = "2026-12-01T10:00:00.000Z";
  std::ostringstream ne;
  EXPECT_EQ(cmd_import(n, ne), kExitOk) << ne.str();
  EXPECT_NE(ne.str().find("warning: the file names per-sample files (nvbench --jsonbin) that were not read"),
            std::string::npos)
      << ne.str();
  // -o - (import writes a file, never standard output).
  n.output = "-";
  std::ostringstream dash;
  EXPECT_EQ(cmd_import(n, dash), kExitUsage);
  EXPECT_NE(dash.str().find("not standard output"), std::string::npos) << dash.str();
}

}  // namespace
}  // namespace labrun
