// The HTML views (docs/html.md) as data: the page a report writes embeds every point of the records with the median
// and interval the report shows; record text cannot close the page's script element; a diff's page holds the diff's
// points; a history's folder gets its page. What a browser makes of them is tests/html/check_views.sh's (headless
// Chromium).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "diff.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "report.hpp"
#include "report_context.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::slurp;
using test::TempDir;

// The JSON a page embeds: the text of <script id="labrun-data" type="application/json">.
Json page_data(const std::string& html) {
  const std::string open = "<script id=\"labrun-data\" type=\"application/json\">";
  const std::size_t a = html.find(open);
  if (a == std::string::npos) return nullptr;
  const std::size_t b = html.find("</script>", a);
  return Json::parse(html.substr(a + open.size(), b - a - open.size()));
}

// A committed H200 run of configs/masking.yaml, unpacked into `dir`; "" when xz is missing.
std::string committed_masking_run(const TempDir& dir, const std::string& name) {
  std::string flat = name;
  for (char& c : flat)
    if (c == '/') c = '_';
  const std::string out = dir.file(flat + ".jsonl");
  const std::string cmd = fmt::format("xz -dc '{}/results/h200/{}.jsonl.xz' > '{}' 2> /dev/null", LABRUN_SOURCE_DIR,
                                      name, out);
  return std::system(cmd.c_str()) == 0 ? out : "";
}

double number(const Json& j) { return j.is_number() ? j.get<double>() : std::nan(""); }

TEST(ReportHtml, EmbedsEveryPointWithTheMedianAndIntervalOfItsRecord) {
  const TempDir dir;
  const std::string in = committed_masking_run(dir, "history/masking-01db259");
  if (in.empty()) GTEST_SKIP() << "xz is needed to unpack the committed run";
  std::ostringstream out, err;
  ReportOptions o;
  o.plots = false;
  ASSERT_EQ(cmd_report({in}, dir.file("rep"), out, err, o), 0) << err.str();
  const Json data = page_data(slurp(dir.file("rep/index.html")));
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["kind"], "report");
  std::map<std::string, const Json*> by_id;
  for (const Json& p : data["points"]) by_id[p["id"].get<std::string>()] = &p;
  std::ifstream f(in);
  std::size_t points = 0, compared_raw = 0;
  for (std::string line; std::getline(f, line);) {
    const Json r = Json::parse(line);
    if (r.value("type", "") != "point") continue;
    ++points;
    const auto it = by_id.find(r["id"].get<std::string>());
    ASSERT_NE(it, by_id.end()) << r["key"];
    const Json& e = *it->second;
    EXPECT_EQ(e["variant"], r["variant"]);
    EXPECT_EQ(e["axes"], r["axes"]);
    EXPECT_EQ(e["status"], r["status"]);
    const IterationTime t = ReportContext::iteration_time(point_from_json(r));
    if (!std::isfinite(t.time_s)) {
      EXPECT_TRUE(e["time_s"].is_null()) << r["key"];
      continue;
    }
    EXPECT_DOUBLE_EQ(number(e["time_s"]), t.time_s) << r["key"];
    EXPECT_DOUBLE_EQ(number(e["ci95_low_s"]), t.ci95_low_s) << r["key"];
    EXPECT_DOUBLE_EQ(number(e["ci95_high_s"]), t.ci95_high_s) << r["key"];
    // And, read from the record's own fields where the iteration time is the device time: its median and interval.
    if (!t.host_paced && r["timing"]["device"].is_object()) {
      ++compared_raw;
      EXPECT_DOUBLE_EQ(number(e["time_s"]), r["timing"]["time_s"].get<double>()) << r["key"];
      EXPECT_DOUBLE_EQ(number(e["ci95_low_s"]), r["timing"]["device"]["ci95_low_time_s"].get<double>()) << r["key"];
      EXPECT_DOUBLE_EQ(number(e["ci95_high_s"]), r["timing"]["device"]["ci95_high_time_s"].get<double>()) << r["key"];
    }
  }
  EXPECT_EQ(points, 840u);
  EXPECT_EQ(data["points"].size(), points);
  EXPECT_GT(compared_raw, 600u);
  EXPECT_EQ(data["runs"].size(), 1u);
  EXPECT_EQ(data["hypotheses"].size(), 3u);  // configs/masking.yaml states three
  EXPECT_FALSE(data["groups"].empty());
}

TEST(ReportHtml, RecordTextCannotCloseThePagesScript) {
  const TempDir dir;
  const std::string hostile = "</script><script>alert(1)</script><!-- x";
  Json header{{"type", "header"},
              {"schema_version", 1},
              {"created_utc", "2026-12-01T00:00:00.000Z"},
              {"config", {{"path", "t.yaml"}, {"experiment", "toy"}}},
              {"environment", {{"backend", "host"}}},
              {"lab", Json::object()}};
  PointRecord p;
  p.experiment = "toy";
  p.variant = "v</script>";
  p.axes = Json{{"size", 1000}};
  p.key = "toy/v/size=1000";
  p.id = test::id_of(p.key);
  p.backend = "host";
  p.status = Status::error;
  p.reason = hostile;
  {
    std::ofstream f(dir.file("in.jsonl"));
    f << header.dump() << '\n' << to_json(p).dump() << '\n';
  }
  std::ostringstream out, err;
  ReportOptions o;
  o.plots = false;
  ASSERT_EQ(cmd_report({dir.file("in.jsonl")}, dir.file("rep"), out, err, o), 0) << err.str();
  const std::string html = slurp(dir.file("rep/index.html"));
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);
  const Json data = page_data(html);
  ASSERT_TRUE(data.is_object());
  ASSERT_EQ(data["points"].size(), 1u);
  EXPECT_EQ(data["points"][0]["reason"], hostile);
  EXPECT_EQ(data["points"][0]["variant"], "v</script>");
  EXPECT_EQ(data["points"][0]["failed"], true);
}

TEST(DiffHtml, ThePageHoldsEveryComparedPointAndMinusOWritesItWhole) {
  const TempDir dir;
  const std::string a = committed_masking_run(dir, "diff/across-hosts/normal-1");
  const std::string b = committed_masking_run(dir, "diff/across-hosts/normal-2");
  if (a.empty() || b.empty()) GTEST_SKIP() << "xz is needed to unpack the committed runs";
  std::ostringstream out, err;
  EXPECT_EQ(cmd_diff({a}, {b}, DiffOptions{}, "html", out, err), kDiffNoRegression) << err.str();
  const Json data = page_data(out.str());
  ASSERT_TRUE(data.is_object());
  EXPECT_EQ(data["kind"], "diff");
  std::size_t with_ratio = 0;
  for (const Json& p : data["diff"]["points"]) with_ratio += p["ratio"].is_number();
  EXPECT_EQ(with_ratio, data["diff"]["summary"]["compared"].get<std::size_t>());
  EXPECT_EQ(data["diff"]["summary"]["compared"], 770);
  // -o: written whole; an existing file is refused without --force, kept as it was.
  const test::Cli first = test::run_cli(dir, LABRUN_BINARY, "diff '" + a + "' '" + b + "' --format html -o d.html");
  EXPECT_EQ(first.code, 0) << first.err;
  EXPECT_TRUE(page_data(slurp(dir.file("d.html"))).is_object());
  { std::ofstream(dir.file("keep.html")) << "mine"; }
  const test::Cli refused = test::run_cli(dir, LABRUN_BINARY,
                                          "diff '" + a + "' '" + b + "' --format html -o keep.html");
  EXPECT_EQ(refused.code, kDiffOutput) << refused.err;
  EXPECT_NE(refused.err.find("already exists"), std::string::npos) << refused.err;
  EXPECT_EQ(slurp(dir.file("keep.html")), "mine");
}

}  // namespace
}  // namespace labrun
