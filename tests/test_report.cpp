// `labrun report` as a new experiment sees it: a toy experiment registered in a test registry (a size axis, two
// variants, no report section of its own) run on the host backend gets a report that reads well alone
// (summary, host-only verdicts, winners, crossovers along its size axis, roofline, notes) and never names
// another experiment; an experiment's report_section hook is called with the context; stored interpretations
// are used as stored; the ReportContext lookups; and the committed H200 masking results still get the masking
// section.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <labrun/report.hpp>

#include "interpret.hpp"
#include "lab_axes.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "registry.hpp"
#include "report.hpp"
#include "report_context.hpp"
#include "report_plots.hpp"
#include "commands.hpp"
#include "point_test.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::TempDir;
namespace fs = std::filesystem;

const std::vector<std::int64_t> kSizes = {1000, 10000, 100000, 1000000};

// The toy experiment: `lean` costs 10 µs + 2 ns per element, `bulky` 40 µs + 1 ns per element, so `lean` wins
// at small sizes, `bulky` at large ones, and they cross between size 1e4 and 1e5 (at 3e4).
std::shared_ptr<ExperimentDef> toy_experiment() {
  auto e = std::make_shared<ExperimentDef>("toy");
  e->describe("a toy experiment for the report's tests").int_axis("size", "elements", 1.0, 1e9, 1000).size_axis("size");
  e->variant("lean", "small fixed cost").modes({"eager"});
  e->variant("bulky", "large fixed cost, cheaper per element").modes({"eager"});
  return e;
}

double toy_time(const std::string& variant, double size) {
  return variant == "lean" ? 10e-6 + 2e-9 * size : 40e-6 + 1e-9 * size;
}

// A host-backend header: no calibration ceilings. `hypothesis`: the config's hypothesis list.
Json host_header(Json hypothesis) {
  return Json{{"type", "header"},
              {"schema_version", 1},
              {"created_utc", "2026-12-01T00:00:00.000Z"},
              {"config", {{"path", "toy.yaml"}, {"experiment", "toy"}, {"hypothesis", std::move(hypothesis)}}},
              {"environment", {{"backend", "host"}}},
              {"calibration", {{"backend", "host"}}},
              {"lab", {{"timing", "synchronized"}, {"l2", "hot"}, {"target_rel_ci", 0.01}}}};
}

// A host point of the toy experiment, as the lab writes it (without the interpretation of older files).
PointRecord toy_point(const std::string& variant, std::int64_t size) {
  PointRecord p;
  p.experiment = "toy";
  p.variant = variant;
  p.axes = Json{{"size", size}, {kModeAxis, "eager"}, {kL2Axis, "hot"}};
  p.key = "toy/" + variant + "/l2=hot,mode=eager,size=" + std::to_string(size);
  p.id = test::id_of(p.key);
  p.backend = "host";
  p.status = Status::ok;
  const double n = static_cast<double>(size);
  p.cost.bytes = p.cost.compulsory_bytes = 8 * n;
  p.cost.flop = n;
  p.cost.launches = 1;
  p.cost.host_syncs = 0;
  p.timing = test::hot_timing(toy_time(variant, n));
  return p;
}

std::string write_run(const std::string& path, const Json& header, const std::vector<PointRecord>& points) {
  std::ofstream f(path);
  f << header.dump() << '\n';
  for (const auto& p : points) f << to_json(p).dump() << '\n';
  return path;
}

std::vector<PointRecord> toy_points() {
  std::vector<PointRecord> out;
  for (const auto size : kSizes)
    for (const char* v : {"lean", "bulky"}) out.push_back(toy_point(v, size));
  return out;
}

const Json kToyHypothesis = Json::array(
    {Json{{"faster", "lean"}, {"than", "bulky"}, {"when", {{"size", {1000, 10000}}}}, {"by_at_least", 1.5}}});

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Reports the run file `in` without plots into `dir`/out with the experiments of `registry` (nullptr: the built-in
// ones) and stores the report.md it wrote in `md`; a fatal failure when the report fails.
void report_md(const TempDir& dir, const std::string& in, const Registry* registry, std::string* md) {
  std::ostringstream out, err;
  ReportOptions o;
  o.plots = false;
  o.registry = registry;
  ASSERT_EQ(cmd_report({in}, dir.file("out"), out, err, o), 0) << err.str();
  *md = slurp(dir.file("out/report.md"));
}

TEST(ReportNewExperiment, GenericReportReadsWellAlone) {
  Registry registry;
  registry.add(toy_experiment());
  TempDir dir;
  const std::string in = write_run(dir.file("toy.jsonl"), host_header(kToyHypothesis), toy_points());
  std::string md;
  ASSERT_NO_FATAL_FAILURE(report_md(dir, in, &registry, &md));

  EXPECT_TRUE(has(md, "## Summary"));
  EXPECT_TRUE(has(md, "ran on the host backend (CPU):**")) << "a host run says so in the summary";
  // Verdicts: the host's, never a GPU verdict.
  EXPECT_TRUE(has(md, "## Hypothesis verdicts"));
  EXPECT_TRUE(has(md, "— **host only** (the host's timings say: confirmed)")) << md.substr(0, 4000);
  EXPECT_FALSE(has(md, "— **confirmed**"));
  // Winners: lean at the two small sizes, bulky at the two large ones.
  EXPECT_TRUE(has(md, "## Winners"));
  EXPECT_TRUE(has(md, "Wins: 2 lean, 2 bulky") || has(md, "Wins: 2 bulky, 2 lean")) << md;
  // Crossovers along the size axis: lean → bulky between 1e4 and 1e5.
  EXPECT_TRUE(has(md, "## Crossovers"));
  EXPECT_TRUE(has(md, "**Along the size axis `size`.** 1 crossover, 1 significant. It is:")) << md;
  EXPECT_TRUE(has(md, "| size | 1e4 – 1e5 |"));
  EXPECT_TRUE(has(md, "lean → bulky"));
  // Roofline and ceilings: a host run has no calibrated ceilings; the summary says so, and no section is all "n/a".
  EXPECT_FALSE(has(md, "## Roofline"));
  EXPECT_TRUE(has(md, "No calibrated ceilings (backend host)"));
  EXPECT_LT(md.find("No calibrated ceilings"), md.find("## Hypothesis verdicts"));
  EXPECT_FALSE(has(md, "## Left out")) << "a small report keeps every section";
  EXPECT_TRUE(fs::exists(dir.file("out/ceilings.json")));
  // Notes: one per variant (and mode) at the largest size.
  EXPECT_TRUE(has(md, "the largest value of the size axis (`size`)"));
  EXPECT_TRUE(has(md, "#### lean: size=1e6"));
  EXPECT_TRUE(has(md, "#### bulky: size=1e6"));
  EXPECT_TRUE(has(md, "## Time and bandwidth by variant"));
  // Nothing of another experiment.
  EXPECT_FALSE(has(lower(md), "masking"));
  EXPECT_FALSE(has(md, "`index`"));
  EXPECT_FALSE(has(md, "downstream"));

  // plots.json: without ExperimentDef::plots, time against the size axis.
  std::ifstream pj(dir.file("out/plots.json"));
  const Json plots = Json::parse(pj);
  ASSERT_EQ(plots["figures"].size(), 1u) << plots.dump(2);
  EXPECT_EQ(plots["figures"][0]["x"], "size");
  EXPECT_EQ(plots["figures"][0]["x_scale"], "log");
  EXPECT_EQ(plots["figures"][0]["series"], "variant");
  EXPECT_EQ(plots["figures"][0]["name"], "time_vs_size_run0");
  EXPECT_EQ(plots["roofline"]["marker"], kModeAxis);
  // points.csv names the toy's axis and no other.
  const std::string csv = slurp(dir.file("out/points.csv"));
  EXPECT_EQ(csv.rfind("run,file,id,experiment,variant,axis.size,axis.mode,axis.l2,status,", 0), 0u)
      << csv.substr(0, 200);
}

TEST(ReportNewExperiment, GpuRunGetsPlainVerdicts) {
  Registry registry;
  registry.add(toy_experiment());
  TempDir dir;
  Json header = host_header(kToyHypothesis);
  header["environment"] = {{"backend", "cuda:0"}, {"device", {{"name", "Test GPU"}}}};
  header["calibration"] = {{"copy", {{"bandwidth_Bps", 4e12}}}, {"fp32_fma", {{"flop_per_s", 5e13}}}};
  auto points = toy_points();
  for (auto& p : points) p.backend = "cuda:0";
  const std::string in = write_run(dir.file("toy_gpu.jsonl"), header, points);
  std::string md;
  ASSERT_NO_FATAL_FAILURE(report_md(dir, in, &registry, &md));
  EXPECT_TRUE(has(md, "— **confirmed**"));
  EXPECT_FALSE(has(md, "host only"));
  EXPECT_FALSE(has(md, "ran on the host backend"));
  EXPECT_TRUE(has(md, "Ceilings: memory 4.00 TB/s (copy), compute 50.0 TFLOP/s (FP32 FMA); ridge point 12.5 flop/B."));
}

TEST(ReportNewExperiment, ReportSectionHookIsCalledAfterTheVerdicts) {
  Registry registry;
  auto e = toy_experiment();
  e->report_section([](const ReportView& view, std::ostream& md) {
    const auto& runs = view.runs();
    md << "## Toy section\n\nruns " << runs.size() << ", points " << runs.at(0).points.size() << ", variants "
       << runs.at(0).variants.size() << ", " << ratio_text(2.0) << ", " << cell("a|b") << "\n\n";
  });
  registry.add(e);
  TempDir dir;
  const std::string in = write_run(dir.file("toy.jsonl"), host_header(kToyHypothesis), toy_points());
  std::string md;
  ASSERT_NO_FATAL_FAILURE(report_md(dir, in, &registry, &md));
  const auto at = md.find("## Toy section\n\nruns 1, points 8, variants 2, 2.00×, a\\|b");
  ASSERT_NE(at, std::string::npos) << md;
  EXPECT_LT(md.find("## Hypothesis verdicts"), at);
  EXPECT_LT(md.find("## Winners"), at);  // after what a pull request needs first
}

TEST(ReportNewExperiment, StoredInterpretationIsUsedAsStored) {
  Registry registry;
  registry.add(toy_experiment());
  const RunHeader header = header_from_json(host_header(nullptr));
  auto points = toy_points();
  for (auto& p : points) {
    p.interpretation = interpret(p, header);
    p.interpretation->note.measured = "as the lab stored it";
  }
  points.front().interpretation.reset();  // an old record: interpreted by the report
  TempDir dir;
  const std::string in = write_run(dir.file("toy.jsonl"), header.json, points);
  std::string md;
  ASSERT_NO_FATAL_FAILURE(report_md(dir, in, &registry, &md));
  EXPECT_TRUE(has(md, "- **Measured:** as the lab stored it"));

  ResultSet set = load_results({in});
  const ReportContext c(std::move(set), &registry);
  ASSERT_EQ(c.runs().size(), 1u);
  const ReportRun& run = c.runs()[0];
  ASSERT_TRUE(run.points.front().interpretation.has_value());
  EXPECT_NE(run.points.front().interpretation->note.measured, "as the lab stored it");
  EXPECT_EQ(run.points.back().interpretation->note.measured, "as the lab stored it");
}

TEST(ReportContextApi, RunsLookupsAndRepresentativePoints) {
  Registry registry;
  registry.add(toy_experiment());
  TempDir dir;
  const auto points = toy_points();
  const std::string in = write_run(dir.file("toy.jsonl"), host_header(kToyHypothesis), points);
  const ReportContext c(load_results({in}), &registry);
  ASSERT_EQ(c.runs().size(), 1u);
  const ReportRun& run = c.runs()[0];
  EXPECT_EQ(run.number, 0u);
  EXPECT_EQ(run.file_name(), "toy.jsonl");
  EXPECT_EQ(run.experiment_name(), "toy");
  ASSERT_NE(run.experiment, nullptr);
  EXPECT_EQ(run.size_axis, "size");
  EXPECT_TRUE(run.host_backend);
  EXPECT_EQ(run.variants, (std::vector<std::string>{"lean", "bulky"}));
  EXPECT_EQ(run.varying, (std::vector<std::string>{"size"}));
  EXPECT_EQ(c.point_count(), 8u);
  EXPECT_EQ(c.groups(0).size(), 4u);
  EXPECT_EQ(c.crossovers(0).size(), 1u);
  EXPECT_TRUE(c.groups(1).empty());
  const PointRecord* p = c.find(0, points[3].id);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->variant, points[3].variant);
  EXPECT_EQ(c.find(0, Json(42)), nullptr);
  EXPECT_EQ(c.find(1, points[3].id), nullptr);
  const auto rep = c.representative_points(0);
  ASSERT_EQ(rep.size(), 2u);
  for (const PointRecord* r : rep) EXPECT_EQ(r->axis_number("size"), 1e6) << r->variant;
  EXPECT_EQ(c.run_heading(0), "");  // one run: no per-run headings

  // Without a registry (or an experiment it lacks), the size axis is the axis swept over decades.
  const ReportContext bare(load_results({in}), nullptr);
  EXPECT_EQ(bare.runs()[0].experiment, nullptr);
  EXPECT_EQ(bare.runs()[0].size_axis, "size");
}

TEST(ReportContextApi, TypedIterationTimeMatchesTheJsonOne) {
  PointRecord p = toy_point("lean", 1000);
  EXPECT_EQ(ReportContext::iteration_time(p).time_s, iteration_time(to_json(p)).time_s);
  // A blocked eager sample whose host submission is slower than the GPU: host-paced.
  p.timing->method = TimingMethod::cuda_events_blocked;
  TimeSummary dev = *p.timing->wall, sub = *p.timing->wall;
  dev.median_time_s = 5e-6;
  dev.ci95_low_time_s = 4.9e-6;
  dev.ci95_high_time_s = 5.1e-6;
  sub.median_time_s = 8e-6;
  sub.ci95_low_time_s = 7.8e-6;
  sub.ci95_high_time_s = 8.2e-6;
  p.timing->device = dev;
  p.timing->submit = sub;
  p.timing->time_s = 5e-6;
  const IterationTime typed = ReportContext::iteration_time(p), json = iteration_time(to_json(p));
  EXPECT_TRUE(typed.host_paced);
  EXPECT_EQ(typed.host_paced, json.host_paced);
  EXPECT_EQ(typed.time_s, json.time_s);
  EXPECT_EQ(typed.ci95_low_s, json.ci95_low_s);
  EXPECT_EQ(typed.ci95_high_s, json.ci95_high_s);
  EXPECT_EQ(ReportContext::iteration_time(PointRecord{}).host_paced, false);
}

TEST(ReportPlots, FiguresFollowTheExperimentsPlots) {
  Registry registry;
  auto e = toy_experiment();
  e->word_axis("width", "a word axis", {"narrow", "wide"}, "narrow");
  e->plot({"size", "variant", {"width"}, "time by width"}).plot({"size", "width", {}, ""});
  e->plot({"not_swept", "variant", {}, ""});
  registry.add(e);
  std::vector<PointRecord> points;
  for (const char* w : {"narrow", "wide"})
    for (auto p : toy_points()) {
      p.axes["width"] = w;
      p.key += std::string(",width=") + w;
      p.id = test::id_of(p.key);
      points.push_back(std::move(p));
    }
  TempDir dir;
  const std::string in = write_run(dir.file("toy.jsonl"), host_header(nullptr), points);
  const ReportContext c(load_results({in}), &registry);
  const std::vector<PlotFigure> figs = plot_figures(c);
  ASSERT_EQ(figs.size(), 2u);  // the spec whose x is not swept draws nothing
  EXPECT_EQ(figs[0].x, "size");
  EXPECT_EQ(figs[0].x_scale, "log");
  EXPECT_EQ(figs[0].facets, (std::vector<std::string>{"width"}));
  EXPECT_TRUE(figs[0].split.empty());
  EXPECT_EQ(figs[0].title, "toy: time by width");
  EXPECT_EQ(figs[0].name, "time_vs_size_run0");
  // One line per width: the variants go to separate figures.
  EXPECT_EQ(figs[1].series, "width");
  EXPECT_EQ(figs[1].split, (std::vector<std::string>{"variant"}));
  EXPECT_EQ(figs[1].title, "toy: time vs size");
  EXPECT_EQ(figs[1].name, "time_vs_size_run0_2");
}

// The committed H200 results (schema_version 1, interpretations stored by the lab of their day) still get the
// masking experiment's own section from its report_section hook, with the generic sections around it.
TEST(ReportCommittedResults, MaskingRunGetsItsSection) {
  TempDir dir;
  const std::string in = test::schema1_masking_run(dir);  // written before the redesign (schema 1)
  if (in.empty()) GTEST_SKIP() << "gzip is needed to unpack the fixture";
  std::string md;
  ASSERT_NO_FATAL_FAILURE(report_md(dir, in, nullptr, &md));  // registry: the built-in experiments
  const auto section = md.find("## Where boolean indexing loses and wins");
  ASSERT_NE(section, std::string::npos);
  // What a pull request needs first: the summary, the verdicts, the winners; then the experiment's own section.
  EXPECT_LT(md.find("## Summary"), md.find("## Hypothesis verdicts"));
  EXPECT_LT(md.find("## Hypothesis verdicts"), md.find("## Winners"));
  EXPECT_LT(md.find("## Winners"), section);
  EXPECT_TRUE(has(md, "**Where it loses.**"));
  EXPECT_TRUE(has(md, "**Where it wins.**"));
  EXPECT_TRUE(has(md, "**Why.**"));
  EXPECT_TRUE(has(md, "**Along the size axis `n`.**"));
  EXPECT_TRUE(has(md, "## Roofline"));
  EXPECT_FALSE(has(md, "host only"));
  std::ifstream pj(dir.file("out/plots.json"));
  const Json plots = Json::parse(pj);
  ASSERT_EQ(plots["figures"].size(), 2u);  // masking's plots: time vs n, time vs density
  EXPECT_EQ(plots["figures"][0]["name"], "time_vs_n_run0");
  EXPECT_EQ(plots["figures"][1]["name"], "time_vs_density_run0");
}

// report.md fits a pull-request comment (GitHub's 65,536 characters) for every committed H200 run of
// configs/masking.yaml, 840 points each; the sections it leaves out are named, and the first ones are all there.
TEST(ReportCommittedResults, EveryCommittedMaskingReportFitsAPullRequestComment) {
  std::size_t runs = 0;
  for (const auto& entry : fs::recursive_directory_iterator(std::string(LABRUN_SOURCE_DIR) + "/results/h200")) {
    const std::string path = entry.path().string();
    if (!entry.is_regular_file() || path.size() < 9 || path.substr(path.size() - 9) != ".jsonl.xz") continue;
    TempDir dir;
    const std::string in = dir.file("run.jsonl");
    if (std::system(("xz -dc '" + path + "' > '" + in + "' 2> /dev/null").c_str()) != 0) GTEST_SKIP() << "no xz";
    std::ifstream f(in);
    std::string first;
    std::getline(f, first);
    const Json header = Json::parse(first, nullptr, false);
    if (!header.is_object() || json_find(header, {"config", "experiment"}) == nullptr ||
        header["config"]["experiment"] != "masking" || header["config"].value("path", "") != "configs/masking.yaml")
      continue;
    std::ostringstream out, err;
    ReportOptions o;
    o.plots = false;
    ASSERT_EQ(cmd_report({in}, dir.file("out"), out, err, o), 0) << path << err.str();
    const std::string md = slurp(dir.file("out/report.md"));
    ++runs;
    EXPECT_LT(md.size(), 65536u) << path;
    for (const char* heading : {"## Summary", "## Hypothesis verdicts", "## Winners"})
      EXPECT_TRUE(has(md, heading)) << path << ": " << heading;
  }
  EXPECT_GE(runs, 5u);
}

// A killed run (fewer points than its header announces) is reported as incomplete (issue 12); a whole one is not.
TEST(ReportCommittedResults, IncompleteRunIsNamedSo) {
  TempDir dir;
  const std::string in = test::schema1_masking_run(dir);
  if (in.empty()) GTEST_SKIP() << "gzip is needed to unpack the fixture";
  std::ifstream whole(in);
  std::ofstream cut(dir.file("killed.jsonl"));
  std::string line;
  for (int i = 0; i < 101 && std::getline(whole, line); ++i) cut << line << "\n";
  cut.close();
  std::ostringstream out, err;
  ReportOptions o;
  o.plots = false;
  ASSERT_EQ(cmd_report({dir.file("killed.jsonl")}, dir.file("cut"), out, err, o), 0) << err.str();
  EXPECT_TRUE(has(slurp(dir.file("cut/report.md")), "**incomplete**: 100 of the 840 points the header announces"));
  ASSERT_EQ(cmd_report({in}, dir.file("all"), out, err, o), 0) << err.str();
  EXPECT_FALSE(has(slurp(dir.file("all/report.md")), "**incomplete**"));
}

}  // namespace
}  // namespace labrun
