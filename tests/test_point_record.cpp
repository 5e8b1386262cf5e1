// Tests of the typed result records (src/records/point_record.hpp): exact round trips of committed H200 results,
// plain and gzip-compressed, and load_results() on folders, comma lists, concatenated runs, torn last lines and
// each kind of bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "interrupt.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "stats.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::TempDir;
namespace fs = std::filesystem;

// A committed pooled H200 run of configs/masking.yaml (five processes, host probes; results/h200/diff/across-hosts/).
const std::string kMaskingRun = std::string(LABRUN_SOURCE_DIR) + "/results/h200/diff/across-hosts/normal-1.jsonl.xz";

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

// `gzip -dc SRC > DST` (or `xz -dc` for a .xz file); false when the tool is missing or fails.
bool unpack(const std::string& src, const std::string& dst) {
  const std::string tool = src.ends_with(".xz") ? "xz" : "gzip";
  if (std::system(("command -v " + tool + " >/dev/null 2>&1").c_str()) != 0) return false;
  FILE* pipe = ::popen((tool + " -dc '" + src + "'").c_str(), "r");
  if (!pipe) return false;
  std::ofstream out(dst, std::ios::binary);
  char buf[1 << 16];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) out.write(buf, static_cast<std::streamsize>(n));
  return ::pclose(pipe) == 0 && static_cast<bool>(out);
}

// Every line of `path` through its typed record and back: same keys, same order, same values, same text.
// Returns the number of points checked.
std::size_t expect_round_trips(const std::string& path) {
  bool torn = false;
  const std::vector<Json> lines = read_jsonl(path, &torn);
  EXPECT_FALSE(torn) << path;
  std::size_t points = 0, headers = 0, failures = 0;
  for (std::size_t i = 0; i < lines.size() && failures < 3; ++i) {
    const Json& j = lines[i];
    const std::string type = j.value("type", "");
    Json back;
    if (type == "point") {
      back = to_json(point_from_json(j));
      ++points;
    } else if (type == "header") {
      back = to_json(header_from_json(j));
      ++headers;
    } else {
      continue;
    }
    if (back.dump() != j.dump() || back != j) {
      ++failures;
      ADD_FAILURE() << path << " line " << i + 1
                    << " does not round-trip; patch to the original: " << Json::diff(back, j).dump().substr(0, 2000);
    }
  }
  EXPECT_GE(headers, 1u) << path;
  return points;
}

TEST(PointRecord, RoundTripsCommittedPlainFile) {
  TempDir dir("labrun_rec");
  const std::string path = test::schema1_masking_run(dir);
  if (path.empty()) GTEST_SKIP() << "gzip is needed to unpack the fixture";
  const std::size_t points = expect_round_trips(path);
  EXPECT_GT(points, 100u);
}

TEST(PointRecord, RoundTripsCommittedCompressedFile) {
  TempDir dir("labrun_rec");
  const std::string plain = dir.file("normal-1.jsonl");
  if (!unpack(kMaskingRun, plain)) GTEST_SKIP() << "xz -dc unavailable";
  const std::size_t points = expect_round_trips(plain);
  EXPECT_GT(points, 100u);
}

// Every committed result file, plain or compressed, is accepted and round-trips (older and newer records:
// with and without host probes, pooled and not, skipped, incorrect and capture_unsupported points).
TEST(PointRecord, RoundTripsEveryCommittedResult) {
  TempDir dir("labrun_rec");
  std::size_t files = 0, points = 0;
  bool have_tools = true;
  for (const auto& e : fs::recursive_directory_iterator(std::string(LABRUN_SOURCE_DIR) + "/results")) {
    const std::string p = e.path().string();
    std::string plain;
    if (p.ends_with(".jsonl")) {
      plain = p;
    } else if ((p.ends_with(".jsonl.gz") || p.ends_with(".jsonl.xz")) && have_tools) {
      plain = dir.file("f" + std::to_string(files) + ".jsonl");
      if (!unpack(p, plain)) {
        have_tools = false;
        continue;
      }
    } else {
      continue;
    }
    SCOPED_TRACE(p);
    points += expect_round_trips(plain);
    ++files;
    if (plain != p) fs::remove(plain);
  }
  EXPECT_GT(files, 5u);
  EXPECT_GT(points, 1000u);
}

TEST(PointRecord, TypedFieldsOfACommittedPoint) {
  TempDir dir("labrun_rec");
  const std::string path = test::schema1_masking_run(dir);
  if (path.empty()) GTEST_SKIP() << "gzip is needed to unpack the fixture";
  const ResultSet set = load_results({path});
  ASSERT_EQ(set.runs.size(), 1u);
  const labrun::Run& run = set.runs[0];
  EXPECT_TRUE(run.has_header);
  EXPECT_EQ(run.header.experiment(), "masking");
  EXPECT_NE(run.header.device_name().find("H200"), std::string::npos);
  EXPECT_EQ(run.header.backend(), "cuda:0");
  EXPECT_GT(run.header.calibration("copy", "bandwidth_Bps"), 1e12);
  EXPECT_GT(run.header.l2_bytes(), 1e6);
  EXPECT_GT(run.header.theoretical_bandwidth_Bps(), 1e12);
  EXPECT_TRUE(std::isnan(run.header.calibration("copy", "no_such_key")));
  EXPECT_TRUE(run.header.lab().is_object());
  EXPECT_EQ(run.header.config_sha256().size(), 64u);
  EXPECT_FALSE(run.header.created_utc().empty());
  EXPECT_TRUE(set.warnings.empty());
  std::size_t timed = 0;
  for (const PointRecord& p : run.points) {
    EXPECT_EQ(p.id.size(), 16u);
    EXPECT_EQ(p.experiment, "masking");
    EXPECT_FALSE(std::isnan(p.axis_number("n")));
    EXPECT_EQ(p.axis_word("n"), p.axes["n"].dump());
    EXPECT_FALSE(p.axis_word("dtype").empty());
    EXPECT_TRUE(std::isnan(p.axis_number("dtype")));
    EXPECT_EQ(p.axis_word("no_such_axis"), "");
    // Each axis's text is the one in the key.
    EXPECT_NE(p.key.find("density=" + p.axis_word("density")), std::string::npos) << p.key;
    if (p.status == Status::ok) {
      ASSERT_TRUE(p.timing && p.interpretation) << p.id;
      ASSERT_TRUE(p.timing->wall);
      EXPECT_EQ(p.timing->wall->count, static_cast<std::int64_t>(p.timing->wall_samples_s.size()));
      EXPECT_GT(p.timing->time_s, 0);
      EXPECT_FALSE(p.cost.empty());
      EXPECT_FALSE(p.interpretation->bound.empty());
      ++timed;
    } else {
      EXPECT_TRUE(p.reason.has_value()) << p.id;
    }
  }
  EXPECT_GT(timed, 100u);
}

TEST(PointRecord, TimeSummaryOfSummaryWritesAsStats) {
  const Summary s = summarize({3e-6, 1e-6, 2e-6, 5e-6, 4e-6, 2.5e-6, 9e-6});
  EXPECT_EQ(to_json(TimeSummary::of(s)), to_json(s, "time_s"));
  EXPECT_EQ(to_json(TimeSummary::of(s)).dump(), to_json(s, "time_s").dump());
  const Summary few = summarize({1.0});  // ci95_rel_halfwidth is +inf: written "Infinity", read back
  const Json j = to_json(TimeSummary::of(few));
  EXPECT_EQ(j["ci95_rel_halfwidth"], "Infinity");
  EXPECT_EQ(to_json(time_summary_from_json(j)), j);
}

TEST(PointRecord, MinimalRecordReadsWithDefaults) {
  const Json j = Json{{"type", "point"},   {"id", "0123456789abcdef"}, {"key", "e/v/n=1"},
                      {"experiment", "e"}, {"variant", "v"},           {"status", "skipped"}};
  const PointRecord p = point_from_json(j);
  EXPECT_EQ(p.status, Status::skipped);
  EXPECT_FALSE(p.reason);
  EXPECT_FALSE(p.cost_recorded);
  EXPECT_TRUE(p.cost.empty());
  EXPECT_FALSE(p.timing || p.correctness || p.kernels || p.interpretation || p.failed_phase);
  EXPECT_TRUE(std::isnan(p.axis_number("n")));
  // Always-written keys appear; absent optional parts (cost included) stay absent.
  const Json back = to_json(p);
  EXPECT_EQ(back.dump(), R"({"type":"point","id":"0123456789abcdef","key":"e/v/n=1","experiment":"e",)"
                         R"("variant":"v","axes":{},"backend":"","status":"skipped","reason":null,"warnings":[]})");
}

TEST(PointRecord, CostIsAnObjectEmptyWhenEmpty) {
  PointRecord p;
  p.id = "x";
  EXPECT_EQ(to_json(p)["cost"], Json::object());
  p.cost = Cost::of(8, 4, 8, 2, 1, 0);
  EXPECT_EQ(to_json(p)["cost"].dump(),
            R"({"bytes_read":8.0,"bytes_written":4.0,"bytes":12.0,"compulsory_bytes":8.0,"flop":2.0,)"
            R"("launches":1.0,"host_syncs":0.0})");
  const Json empty_cost = Json{{"id", "a"},      {"key", "k"},     {"experiment", "e"},
                               {"variant", "v"}, {"status", "ok"}, {"cost", Json::object()}};
  const PointRecord q = point_from_json(empty_cost);
  EXPECT_TRUE(q.cost_recorded && q.cost.empty());
  EXPECT_EQ(to_json(q)["cost"], Json::object());
}

TEST(PointRecord, RequiredFieldsOfTheWrongTypeThrow) {
  const Json good = Json{{"type", "point"},   {"id", "a"},      {"key", "k"},
                         {"experiment", "e"}, {"variant", "v"}, {"status", "ok"}};
  for (const char* key : {"id", "key", "experiment", "variant", "status"}) {
    Json j = good;
    j[key] = 7;
    try {
      point_from_json(j);
      ADD_FAILURE() << key << " = 7 was accepted";
    } catch (const ResultError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
    j.erase(key);
    EXPECT_THROW(point_from_json(j), ResultError) << key << " missing";
  }
  Json j = good;
  j["timing"] = {{"time_s", "fast"}};
  try {
    point_from_json(j);
    ADD_FAILURE() << "timing.time_s = \"fast\" was accepted";
  } catch (const ResultError& e) {
    EXPECT_NE(std::string(e.what()).find("timing.time_s"), std::string::npos) << e.what();
  }
  EXPECT_THROW(point_from_json(Json::array()), ResultError);
  EXPECT_THROW(header_from_json(Json{{"type", "point"}}), ResultError);
}

// ---- load_results --------------------------------------------------------------------------------------------

// A header of experiment "e" (as point_line's points) whose config is named `name` (config.description).
std::string header_line(const std::string& name) {
  return Json{{"type", "header"}, {"schema_version", 1}, {"config", {{"experiment", "e"}, {"description", name}}}}
             .dump() +
         "\n";
}

// A point of experiment "e" named `name`: key "e/v/n=NAME", and the id of that key (test::id_of).
std::string point_line(const std::string& name) {
  const std::string key = "e/v/n=" + name;
  return Json{{"type", "point"},   {"id", test::id_of(key)},   {"key", key},        {"experiment", "e"},
              {"variant", "v"},    {"axes", {{"n", 1}}},       {"backend", "host"}, {"status", "ok"},
              {"reason", nullptr}, {"warnings", Json::array()}}
             .dump() +
         "\n";
}

std::string message_of(const std::vector<std::string>& paths) {
  try {
    load_results(paths);
  } catch (const ResultError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(PointRecord, LoadsAFolderSortedAndOnlyJsonl) {
  TempDir dir("labrun_rec");
  write_file(dir.file("b.jsonl"), header_line("b") + point_line("b1"));
  write_file(dir.file("a.jsonl"), header_line("a") + point_line("a1") + point_line("a2"));
  write_file(dir.file("notes.txt"), "not a result");
  fs::create_directory(dir.path() / "sub");
  write_file(dir.file("sub/c.jsonl"), header_line("c") + point_line("c1"));
  const ResultSet set = load_results({dir.path().string()});
  ASSERT_EQ(set.runs.size(), 2u);
  EXPECT_EQ(set.runs[0].file, dir.file("a.jsonl"));
  EXPECT_EQ(set.runs[0].header.description(), "a");
  EXPECT_EQ(set.runs[0].points.size(), 2u);
  EXPECT_EQ(set.runs[1].header.description(), "b");
  EXPECT_EQ(set.runs[1].points[0].key, "e/v/n=b1");
}

TEST(PointRecord, LoadsACommaList) {
  TempDir dir("labrun_rec");
  write_file(dir.file("s1.jsonl"), header_line("s1") + point_line("p1"));
  write_file(dir.file("s2.jsonl"), header_line("s2") + point_line("p2"));
  const ResultSet set = load_results({dir.file("s2.jsonl") + "," + dir.file("s1.jsonl")});
  ASSERT_EQ(set.runs.size(), 2u);
  EXPECT_EQ(set.runs[0].header.description(), "s2");  // the list's order
  EXPECT_EQ(set.runs[1].points.at(0).key, "e/v/n=p1");
  EXPECT_NE(message_of({dir.file("s1.jsonl") + ",," + dir.file("s2.jsonl")}).find("empty file name"),
            std::string::npos);
}

// Whole runs concatenated into one file (`cat a.jsonl b.jsonl`) are still read as runs, one per header.
TEST(PointRecord, TwoHeadersInOneFileAreTwoRuns) {
  TempDir dir("labrun_rec");
  const std::string f = dir.file("cat.jsonl");
  write_file(f, header_line("one") + point_line("x1") + "\n" + header_line("two") + point_line("x2") +
                    point_line("x3") + header_line("three"));
  const ResultSet set = load_results({f});
  ASSERT_EQ(set.runs.size(), 3u);
  EXPECT_TRUE(set.runs[0].has_header);
  EXPECT_EQ(set.runs[0].header.description(), "one");
  EXPECT_EQ(set.runs[0].points.size(), 1u);
  EXPECT_EQ(set.runs[1].header.description(), "two");
  EXPECT_EQ(set.runs[1].points.size(), 2u);
  EXPECT_EQ(set.runs[2].header.description(), "three");  // a header with no points is a run without points
  EXPECT_TRUE(set.runs[2].points.empty());
  for (const labrun::Run& r : set.runs) EXPECT_EQ(r.file, f);
}

TEST(PointRecord, DropsATornLastLineWithAWarning) {
  TempDir dir("labrun_rec");
  const std::string f = dir.file("killed.jsonl");
  const std::string torn = point_line("t2");
  write_file(f, header_line("h") + point_line("t1") + torn.substr(0, torn.size() / 2));
  const ResultSet set = load_results({f});
  ASSERT_EQ(set.runs.size(), 1u);
  EXPECT_EQ(set.runs[0].points.size(), 1u);
  ASSERT_EQ(set.warnings.size(), 1u);
  EXPECT_NE(set.warnings[0].find(f + ":3"), std::string::npos) << set.warnings[0];
  EXPECT_NE(set.warnings[0].find("torn"), std::string::npos) << set.warnings[0];
}

TEST(PointRecord, ErrorsNameTheFileAndLine) {
  TempDir dir("labrun_rec");
  const std::string missing = dir.file("missing.jsonl");
  EXPECT_NE(message_of({missing}).find("cannot read " + missing), std::string::npos) << message_of({missing});

  const std::string bad_json = dir.file("bad.jsonl");
  write_file(bad_json, header_line("h") + "{not json\n" + point_line("p"));
  EXPECT_NE(message_of({bad_json}).find(bad_json + ":2: not JSON"), std::string::npos) << message_of({bad_json});

  const std::string no_type = dir.file("notype.jsonl");
  write_file(no_type, header_line("h") + point_line("p") + "\n" + R"({"id": "x"})" + "\n");
  EXPECT_NE(message_of({no_type}).find(no_type + ":4: "), std::string::npos) << message_of({no_type});
  EXPECT_NE(message_of({no_type}).find("\"type\""), std::string::npos) << message_of({no_type});

  const std::string empty = dir.file("empty.jsonl");
  write_file(empty, "");
  EXPECT_NE(message_of({empty}).find(empty + ": empty"), std::string::npos) << message_of({empty});

  const std::string bad_id = dir.file("badid.jsonl");
  Json p = Json::parse(point_line("p"));
  p["id"] = 12;
  write_file(bad_id, header_line("h") + p.dump() + "\n");
  EXPECT_NE(message_of({bad_id}).find(bad_id + ":2: id"), std::string::npos) << message_of({bad_id});

  const std::string not_object = dir.file("array.jsonl");
  write_file(not_object, "[1, 2]\n");
  EXPECT_NE(message_of({not_object}).find(not_object + ":1: "), std::string::npos) << message_of({not_object});

  TempDir gz("labrun_rec");
  write_file(gz.file("r.jsonl.gz"), "");
  EXPECT_NE(message_of({gz.path().string()}).find("gunzip"), std::string::npos) << message_of({gz.path().string()});
}

// ---- H06: records checked for sense at load ------------------------------------------------------------------

// The message load_results() refuses `text` with, written to a file `name` in `dir`; "(no error)" if it loads.
std::string load_message(const TempDir& dir, const std::string& text, const std::string& name = "r.jsonl") {
  const std::string f = dir.file(name);
  write_file(f, text);
  return message_of({f});
}

Json header_json() { return Json::parse(header_line("h")); }
Json point_json(const std::string& name = "p") { return Json::parse(point_line(name)); }
std::string line_of(const Json& j) { return j.dump() + "\n"; }

// H06: schema_version an integer this build reads (1..kRecordSchemaVersion); anything else is refused, naming it.
TEST(PointRecord, H06_SchemaVersionMustBeOneThisBuildReads) {
  TempDir dir("labrun_rec");
  const std::string f = dir.file("r.jsonl");
  for (const Json& v : {Json(99), Json(0), Json(-1), Json("2"), Json(2.5)}) {
    Json h = header_json();
    h["schema_version"] = v;
    EXPECT_EQ(load_message(dir, line_of(h) + point_line("p")),
              f + ":1: schema_version: " + v.dump() +
                  " is not a schema this labrun reads (it reads the integers 1 to 3; a file of a newer labrun?)");
  }
  Json h = header_json();
  h.erase("schema_version");
  EXPECT_EQ(load_message(dir, line_of(h) + point_line("p")),
            f + ":1: schema_version: missing; every labrun header has one (this labrun reads the integers 1 to 3)");
  for (int v = 1; v <= kRecordSchemaVersion; ++v) {
    h["schema_version"] = v;
    EXPECT_EQ(load_message(dir, line_of(h) + point_line("p")), "(no error)");
  }
}

// H06: a status outside the documented set is refused (diff used to count 288 status changes and say "No
// regression").
TEST(PointRecord, H06_StatusMustBeOneOfTheDocumentedSet) {
  TempDir dir("labrun_rec");
  Json p = point_json();
  p["status"] = "exploded";
  EXPECT_EQ(load_message(dir, header_line("h") + line_of(p)),
            dir.file("r.jsonl") +
                ":2: status: \"exploded\" is not a point status (ok, incorrect, skipped, "
                "not_supported, capture_unsupported, error, device_fault, crashed, timeout, escaped, sanitized)");
  for (const char* status : {"ok", "incorrect", "skipped", "not_supported", "capture_unsupported", "error",
                             "device_fault", "crashed", "timeout"})
    EXPECT_TRUE(parse_status(status).has_value()) << status;
}

// H06: every time is at least 0 s (report printed "-1.00 s"); a time of no value ("NaN", null) passes.
TEST(PointRecord, H06_TimesMustNotBeNegative) {
  TempDir dir("labrun_rec");
  const std::string f = dir.file("r.jsonl");
  const std::pair<Json, std::string> cases[] = {
      {Json{{"time_s", -1}}, "timing.time_s: -1.0 is negative; a time is at least 0 s"},
      {Json{{"wall_samples_s", {0.1, -2}}}, "timing.wall_samples_s[1]: -2.0 is negative"},
      {Json{{"device", {{"median_time_s", -0.5}}}}, "timing.device.median_time_s: -0.5 is negative"},
      {Json{{"processes", {{"count", 2}, {"time_s", {1e-3, "-Infinity"}}}}},
       "timing.processes.time_s[1]: \"-Infinity\" is negative"},
      {Json{{"batch", 0}}, "timing.batch: 0 is not a count (at least 1)"},
      {Json{{"wall", {{"count", -3}}}}, "timing.wall.count: -3 is not a count (at least 0)"},
  };
  for (const auto& [timing, message] : cases) {
    Json p = point_json();
    p["timing"] = timing;
    EXPECT_EQ(load_message(dir, header_line("h") + line_of(p)).find(f + ":2: " + message), 0u)
        << load_message(dir, header_line("h") + line_of(p));
  }
  Json p = point_json();
  p["timing"] = Json{{"time_s", "NaN"}, {"wall_samples_s", Json::array()}, {"device", nullptr}};
  EXPECT_EQ(load_message(dir, header_line("h") + line_of(p)), "(no error)");
}

// The traced breakdown (launches[]) round-trips, and its times are checked as every time is.
TEST(PointRecord, LaunchesRoundTripAndTheirTimesAreChecked) {
  Json j = Json{{"type", "point"},   {"id", "0123456789abcdef"}, {"key", "e/v/n=1"},
                {"experiment", "e"}, {"variant", "v"},           {"status", "ok"}};
  j["launches"] = Json::array({Json{{"name", "cutlass::Kernel2<sm90_gemm>"},
                                    {"kind", "kernel"},
                                    {"stream", "lab"},
                                    {"grid", "132x1x1"},
                                    {"block", "384x1x1"},
                                    {"bytes", nullptr},
                                    {"time_s", 1.5e-5}},
                               Json{{"name", "memcpy DtoH"},
                                    {"kind", "memcpy"},
                                    {"stream", "0x6000"},
                                    {"grid", ""},
                                    {"block", ""},
                                    {"bytes", 8.0},
                                    {"time_s", 2e-6}}});
  const PointRecord p = point_from_json(j);
  ASSERT_TRUE(p.launches);
  ASSERT_EQ(p.launches->size(), 2u);
  EXPECT_EQ((*p.launches)[0].name, "cutlass::Kernel2<sm90_gemm>");
  EXPECT_EQ((*p.launches)[0].block, "384x1x1");
  EXPECT_TRUE(std::isnan((*p.launches)[0].bytes));
  EXPECT_DOUBLE_EQ((*p.launches)[1].bytes, 8.0);
  EXPECT_EQ(to_json(p)["launches"], j["launches"]);

  TempDir dir("labrun_rec");
  const std::string f = dir.file("r.jsonl");
  Json bad = point_json();
  bad["launches"] = Json::array({Json{{"name", "k"}, {"kind", "kernel"}, {"time_s", -1e-6}}});
  EXPECT_EQ(load_message(dir, header_line("h") + line_of(bad)).find(f + ":2: launches[0].time_s: -1e-06 is negative"),
            0u)
      << load_message(dir, header_line("h") + line_of(bad));
}

// H06: counts in a header are counts: point_count >= 0, lab.processes >= 1 (each lab setting by its rule).
TEST(PointRecord, H06_HeaderCountsMustBeCounts) {
  TempDir dir("labrun_rec");
  const std::string f = dir.file("r.jsonl");
  Json h = header_json();
  h["point_count"] = -1;
  EXPECT_EQ(load_message(dir, line_of(h) + point_line("p")),
            f + ":1: point_count: -1 is not a count (an integer >= 0)");
  h = header_json();
  h["lab"] = {{"processes", -5}};
  EXPECT_EQ(load_message(dir, line_of(h) + point_line("p")),
            f + ":1: lab.processes: -5 is out of range: the setting is at least 1 (docs/config.md)");
  h["lab"] = {{"max_time_s", 0}};
  EXPECT_EQ(load_message(dir, line_of(h) + point_line("p")),
            f + ":1: lab.max_time_s: 0 is out of range: the setting is more than 0 (docs/config.md)");
  h["lab"] = {{"host_max_n", -1}, {"processes", 5}};  // a setting of an older schema is left alone
  EXPECT_EQ(load_message(dir, line_of(h) + point_line("p")), "(no error)");
}

// H06: a file starts with its header; a point before any header is refused (report read such a file).
TEST(PointRecord, H06_PointBeforeAnyHeaderIsRefused) {
  TempDir dir("labrun_rec");
  EXPECT_EQ(load_message(dir, point_line("p") + header_line("h")),
            dir.file("r.jsonl") +
                ":1: a point before any header: a labrun result file starts with its header line "
                "(is this a labrun result file?)");
}

// H06: a point of another experiment than its header's is refused (rank points under a masking header).
TEST(PointRecord, H06_PointOfAnotherExperimentIsRefused) {
  TempDir dir("labrun_rec");
  Json p = point_json();
  p["experiment"] = "rank";
  EXPECT_EQ(load_message(dir, header_line("h") + point_line("q") + line_of(p)),
            dir.file("r.jsonl") +
                ":3: experiment: rank, but the header of this run is of experiment e (points of "
                "another run appended to this file?)");
}

// H06: a header in the middle of a run (before the points its first header announces) is refused; whole runs
// concatenated are read (PointRecord.TwoHeadersInOneFileAreTwoRuns).
TEST(PointRecord, H06_HeaderInTheMiddleOfARunIsRefused) {
  TempDir dir("labrun_rec");
  Json h = header_json();
  h["point_count"] = 2;
  EXPECT_EQ(load_message(dir, line_of(h) + point_line("p") + line_of(h) + point_line("q")),
            dir.file("r.jsonl") +
                ":3: a second header after 1 of the 2 points the header of line 1 announces: a "
                "header starts a file, or a whole run after another whole one (concatenated runs)");
  EXPECT_EQ(load_message(dir, line_of(h) + point_line("p") + point_line("q") + line_of(h) + point_line("r")),
            "(no error)");
}

// H06: a point twice in one run is a warning for report and diff, and the first one is kept for --resume, which
// refuses it (Cli.H06_ResumeRefusesADuplicatedOrForeignPoint).
TEST(PointRecord, H06_DuplicatePointIsNamedWithBothLines) {
  TempDir dir("labrun_rec");
  const std::string f = dir.file("r.jsonl");
  write_file(f, header_line("h") + point_line("p") + point_line("q") + point_line("p"));
  const ResultSet set = load_results({f});
  EXPECT_EQ(set.first_duplicate, f + ":4: point " + test::id_of("e/v/n=p") +
                                     " (e/v/n=p) is also at line 2 of the same run (two writers on one file?)");
  ASSERT_EQ(set.warnings.size(), 1u);
  EXPECT_EQ(set.warnings[0], set.first_duplicate);
}

// H12: a point's id is its key's (FNV-1a 64 of the key, as Point::id() computes it); an id that is not, however
// well formed, is refused at its line, naming the id, the key and the id the key has.
TEST(PointRecord, H12_AnIdThatIsNotItsKeysIsRefused) {
  TempDir dir("labrun_rec");
  const std::string f = dir.file("r.jsonl");
  Json zzzz = point_json("p");
  zzzz["id"] = "zzzz";
  Json zeros = point_json("q");
  zeros["id"] = "0000000000000000";
  const std::string tail = ", the FNV-1a 64 of the key): the line was edited, or written by another tool";
  EXPECT_EQ(load_message(dir, header_line("h") + line_of(zzzz) + line_of(zeros)),
            f + ":2: id: \"zzzz\" is not the id of key \"e/v/n=p\" (" + test::id_of("e/v/n=p") + tail);
  // Sixteen hex digits are not enough: the id must be the key's.
  EXPECT_EQ(load_message(dir, header_line("h") + point_line("p") + line_of(zeros)),
            f + ":3: id: \"0000000000000000\" is not the id of key \"e/v/n=q\" (" + test::id_of("e/v/n=q") + tail);
  EXPECT_EQ(load_message(dir, header_line("h") + point_line("p") + point_line("q")), "(no error)");
}

// H03: a signal (with src/base/interrupt's handlers installed, as in a sweep) stops the loader between lines with
// Interrupted, which the sweep turns into exit 128 + the signal.
TEST(PointRecord, H03_ASignalStopsTheLoader) {
  TempDir dir("labrun_rec");
  const std::string f = dir.file("r.jsonl");
  write_file(f, header_line("h") + point_line("p"));
  EXPECT_EXIT(
      {
        install_interrupt_handlers();
        std::raise(SIGINT);
        try {
          load_results({f});
        } catch (const Interrupted& e) {
          std::fprintf(stderr, "interrupted by %d\n", e.signal());
          std::_Exit(128 + e.signal());
        }
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(130), "interrupted by 2");
}

}  // namespace
}  // namespace labrun
