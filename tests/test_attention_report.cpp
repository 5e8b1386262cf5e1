// The attention experiment's report section (experiments/attention/report.cpp) on views built by hand: the walk's
// table (times, "—" and "n/a" where a variant has no time, the step ratios), the groups it leaves out past 24, where
// the time goes at the judged point (bound, ceilings, kernel breakdown, "none recorded" in graph mode) and the
// ratios in words; PointView's kernel breakdown filled from records with `kernels` through the report's own path
// (ReportContext, report_view); and the committed H200 run, which has no cudnn, reported whole.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <labrun/report.hpp>

#include "attention/attention.hpp"
#include "commands.hpp"
#include "lab_axes.hpp"
#include "point_record.hpp"
#include "report_context.hpp"
#include "report_view.hpp"
#include "point_test.hpp"
#include "test_util.hpp"

namespace labrun {
namespace {

using test::TempDir;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The line of `text` that starts with `prefix`, "" when none does.
std::string line_of(const std::string& text, const std::string& prefix) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) return line;
  return "";
}

// The percentages of the kernels' part of a "Where the time goes" line, summed ("qk_gemm 20%, ..." → 100).
double kernel_percent_sum(const std::string& line) {
  const auto at = line.find("kernels: ");
  const auto end = line.find(" (the marked ops together");
  if (at == std::string::npos || end == std::string::npos) return kNaN;
  const std::string ops = line.substr(at, end - at);
  double sum = 0;
  const std::regex pct("([0-9.]+)%");
  for (auto it = std::sregex_iterator(ops.begin(), ops.end(), pct); it != std::sregex_iterator(); ++it)
    sum += std::stod((*it)[1]);
  return sum;
}

// ---- views built by hand ------------------------------------------------------------------------------------------

// The axes of an attention group: B 4, H 32, eager unless told, L2 hot.
AxisValues axes(std::int64_t seq, std::int64_t head_dim, std::int64_t causal, const std::string& mode = "eager") {
  return {{"seq", seq},
          {"batch", std::int64_t{4}},
          {"heads", std::int64_t{32}},
          {"head_dim", head_dim},
          {"causal", causal},
          {"mode", mode},
          {"l2", std::string("hot")}};
}

// An ok point of `variant` taking `time_s`, with the ops of `kernels` (op, seconds) as report_view would share them.
PointView ok_point(const std::string& variant, const AxisValues& a, double time_s,
                   const std::vector<std::pair<std::string, double>>& kernels = {}) {
  PointView p;
  p.variant = variant;
  p.status = "ok";
  p.axes = a;
  p.time_s = p.ci95_low_s = p.ci95_high_s = time_s;
  p.bound = "memory";
  p.memory_ceiling_fraction = 0.9;
  p.compute_ceiling_fraction = 0.25;
  p.bf16_gemm_fraction = 0.02;
  double total = 0;
  for (const auto& k : kernels) total += k.second;
  for (const auto& k : kernels) p.kernels.push_back(KernelShare{k.first, k.second, k.second / total});
  return p;
}

void add(GroupView& g, PointView p) {
  g.time_s[p.variant] = p.status == "ok" ? p.time_s : kNaN;
  g.points[p.variant] = std::move(p);
}

// A group where, with b = 10 ms × seq / 4096 × head_dim / 128, naive_out_of_place takes 1.5 b, naive_in_place b,
// tiled b / 5 and cudnn b / 10 (left out when `cudnn` is false). The naive variants' and tiled's breakdowns.
GroupView walk_group(std::int64_t seq, std::int64_t head_dim, std::int64_t causal, bool cudnn = true,
                     const std::string& mode = "eager") {
  const double b = 10e-3 * static_cast<double>(seq) / 4096 * static_cast<double>(head_dim) / 128;
  GroupView g;
  g.axes = axes(seq, head_dim, causal, mode);
  const bool eager = mode == "eager";
  using Ops = std::vector<std::pair<std::string, double>>;
  add(g, ok_point("naive_out_of_place", g.axes, 1.5 * b,
                  eager ? Ops{{"qk_gemm", 0.25 * b},
                              {"scale", 0.4 * b},
                              {"mask_fill_copy", 0.4 * b},
                              {"softmax", 0.3 * b},
                              {"pv_gemm", 0.15 * b}}
                        : Ops{}));
  add(g, ok_point("naive_in_place", g.axes, b,
                  eager ? Ops{{"qk_gemm", 0.2 * b}, {"scale_mask", 0.4 * b}, {"softmax", 0.3 * b}, {"pv_gemm", 0.1 * b}}
                        : Ops{}));
  add(g, ok_point("tiled", g.axes, b / 5, eager ? Ops{{"flash_forward", b / 5}} : Ops{}));
  if (cudnn) add(g, ok_point("cudnn", g.axes, b / 10, eager ? Ops{{"cudnn_sdpa", b / 10}} : Ops{}));
  return g;
}

RunView run_of(std::vector<GroupView> groups, const std::vector<std::string>& varying) {
  RunView r;
  r.variants = {"naive_out_of_place", "naive_in_place", "tiled", "cudnn"};
  r.varying = varying;
  for (const auto& g : groups)
    for (const auto& [v, p] : g.points) r.points.push_back(p);
  r.groups = std::move(groups);
  return r;
}

std::string section(const RunView& run) {
  std::ostringstream md;
  attention::report_section(ReportView({run}), md);
  return md.str();
}

// seq 1024 and 4096, head_dim 64 and 128, causal 0 and 1: 8 groups, every variant timed.
std::vector<GroupView> eight_groups() {
  std::vector<GroupView> out;
  for (std::int64_t seq : {1024, 4096})
    for (std::int64_t d : {64, 128})
      for (std::int64_t c : {0, 1}) out.push_back(walk_group(seq, d, c));
  return out;
}

TEST(AttentionReport, TableHasEveryVariantsTimeAndTheStepRatios) {
  const std::string md = section(run_of(eight_groups(), {"seq", "head_dim", "causal"}));
  ASSERT_TRUE(has(md, "## The backend walk: naive → in place → tiled → cuDNN")) << md;
  EXPECT_TRUE(has(md,
                  "| seq | head_dim | causal | naive_out_of_place | naive_in_place | tiled | cudnn | "
                  "naive_out_of_place / naive_in_place | naive_in_place / tiled | tiled / cudnn |"))
      << md;
  EXPECT_TRUE(has(md, "| 4096 | 128 | 1 | 15.0 ms | 10.0 ms | 2.00 ms | 1.00 ms | 1.50× | 5.00× | 2.00× |")) << md;
  EXPECT_TRUE(has(md, "| 1024 | 64 | 0 | 1.88 ms | 1.25 ms | 250 µs | 125 µs | 1.50× | 5.00× | 2.00× |")) << md;
  EXPECT_FALSE(has(md, "left out")) << md;  // 8 groups: all shown
  EXPECT_FALSE(has(md, "Every row shown has")) << md;
  // Rows by head_dim, causal, then seq.
  EXPECT_LT(md.find("| 1024 | 64 | 0 |"), md.find("| 4096 | 64 | 0 |"));
  EXPECT_LT(md.find("| 4096 | 64 | 0 |"), md.find("| 1024 | 64 | 1 |"));
}

TEST(AttentionReport, WhereTheTimeGoesAndTheWalkInWords) {
  const std::string md = section(run_of(eight_groups(), {"seq", "head_dim", "causal"}));
  EXPECT_TRUE(has(md, "**Where the time goes** at S = 4096, D = 128, causal (B = 4, H = 32, eager, L2 hot)")) << md;
  const std::string in_place = line_of(md, "- `naive_in_place`: ");
  EXPECT_EQ(in_place,
            "- `naive_in_place`: 10.0 ms, memory-bound; 25% of the compute ceiling (FP32 FMA; 2.0% of the bf16 GEMM "
            "rate), 90% of the memory ceiling; kernels: qk_gemm 20%, scale_mask 40%, softmax 30%, pv_gemm 10% (the "
            "marked ops together: 10.0 ms).");
  EXPECT_NEAR(kernel_percent_sum(in_place), 100, 1);
  EXPECT_NEAR(kernel_percent_sum(line_of(md, "- `naive_out_of_place`: ")), 100, 1);
  EXPECT_FALSE(has(md, "one to read")) << md;  // no variant past the FP32 FMA ceiling
  EXPECT_TRUE(has(line_of(md, "- `tiled`: "), "kernels: flash_forward 100% (the marked ops together: 2.00 ms)."));
  const std::string words = line_of(md, "**The walk in words.**");
  EXPECT_TRUE(has(words,
                  "At S = 4096, D = 128, causal (B = 4, H = 32, eager, L2 hot): `naive_in_place` is 1.50× "
                  "faster than `naive_out_of_place`; `tiled` is 5.00× faster than `naive_in_place`; `cudnn` "
                  "is 2.00× faster than `tiled`."))
      << words;
  EXPECT_TRUE(has(words, "End to end, the fastest, `cudnn`, is 15.00× faster than `naive_out_of_place`.")) << words;
  EXPECT_TRUE(has(words,
                  "In `naive_in_place` the two cuBLAS GEMMs take 30% of the marked iteration, the S × S "
                  "passes between them 70%."))
      << words;
}

TEST(AttentionReport, MissingCudnnReadsAsDashAndNotApplicable) {
  std::vector<GroupView> groups = eight_groups();
  for (auto& g : groups) {
    if (axis_number(g.axes, "seq") != 4096) continue;
    if (axis_number(g.axes, "head_dim") == 128 && axis_number(g.axes, "causal") == 1) {
      g = walk_group(4096, 128, 1, /*cudnn=*/false);  // the judged group: no cudnn point at all
    } else {
      PointView p = g.points.at("cudnn");  // cudnn not supported here
      p.status = "not_supported";
      p.kernels.clear();
      add(g, p);
    }
  }
  const std::string md = section(run_of(groups, {"seq", "head_dim", "causal"}));
  EXPECT_TRUE(has(md, "| 4096 | 128 | 1 | 15.0 ms | 10.0 ms | 2.00 ms | — | 1.50× | 5.00× | n/a |")) << md;
  EXPECT_TRUE(has(md, "| 4096 | 64 | 0 | 7.50 ms | 5.00 ms | 1.00 ms | — | 1.50× | 5.00× | n/a |")) << md;
  EXPECT_TRUE(has(md, "| 1024 | 128 | 1 | 3.75 ms | 2.50 ms | 500 µs | 250 µs | 1.50× | 5.00× | 2.00× |")) << md;
  EXPECT_EQ(line_of(md, "- `cudnn`: "), "- `cudnn`: no point here.");
  EXPECT_TRUE(has(md, "`cudnn` against `tiled`: not measured (`cudnn` has no time here)")) << md;
  EXPECT_TRUE(has(md, "End to end, the fastest, `tiled`, is 7.50× faster than `naive_out_of_place`.")) << md;

  // At a judged point where cudnn ran but is not supported: its status.
  for (auto& g : groups)
    if (axis_number(g.axes, "seq") == 4096 && axis_number(g.axes, "head_dim") == 128 &&
        axis_number(g.axes, "causal") == 1) {
      PointView p = groups[0].points.at("cudnn");
      p.axes = g.axes;
      p.status = "not_supported";
      add(g, p);
    }
  EXPECT_EQ(line_of(section(run_of(groups, {"seq", "head_dim", "causal"})), "- `cudnn`: "),
            "- `cudnn`: no time (not_supported).");
}

TEST(AttentionReport, PastTwentyFourGroupsOnlyTheLargestSeqOfEachSliceIsShown) {
  std::vector<GroupView> groups;
  for (std::int64_t seq = 128; seq <= 8192; seq *= 2)
    for (std::int64_t d : {64, 128})
      for (std::int64_t c : {0, 1}) groups.push_back(walk_group(seq, d, c));
  ASSERT_EQ(groups.size(), 28u);
  const std::string md = section(run_of(groups, {"seq", "head_dim", "causal"}));
  EXPECT_TRUE(has(md,
                  "Only the largest `seq` of each (head_dim, causal, mode, l2) is shown: 24 of the 28 groups are "
                  "left out (index.html and points.csv have them all)."))
      << md;
  std::size_t rows = 0;
  std::istringstream in(md);
  for (std::string line; std::getline(in, line);) rows += line.rfind("| ", 0) == 0 && !has(line, "| seq |");
  EXPECT_EQ(rows, 4u) << md;
  EXPECT_TRUE(has(md, "| 8192 | 128 | 1 | 30.0 ms | 20.0 ms | 4.00 ms | 2.00 ms | 1.50× | 5.00× | 2.00× |")) << md;
  EXPECT_FALSE(has(md, "| 4096 |")) << md;
  // The judged point is still S = 4096, which the table left out.
  EXPECT_TRUE(has(md, "**Where the time goes** at S = 4096, D = 128, causal")) << md;

  // 24 groups: all shown.
  groups.erase(groups.begin(), groups.begin() + 4);  // seq 128 off
  const std::string all = section(run_of(groups, {"seq", "head_dim", "causal"}));
  EXPECT_FALSE(has(all, "left out")) << all;
  EXPECT_TRUE(has(all, "| 256 | 64 | 0 |")) << all;
}

TEST(AttentionReport, GraphModeHasNoBreakdownAndTheJudgedPointFallsBack) {
  // No S = 4096: the judged point is the largest seq with D = 128, causal; graph mode at that seq only.
  std::vector<GroupView> groups = {walk_group(1024, 128, 1), walk_group(2048, 128, 1),
                                   walk_group(2048, 128, 1, true, "graph"), walk_group(2048, 64, 1)};
  std::string md = section(run_of(groups, {"seq", "head_dim", "mode"}));
  EXPECT_TRUE(has(md, "| seq | head_dim | mode |")) << md;
  EXPECT_TRUE(has(md, "**Where the time goes** at S = 2048, D = 128, causal (B = 4, H = 32, eager, L2 hot)")) << md;
  groups.erase(groups.begin() + 1);  // only graph mode at S = 2048
  md = section(run_of(groups, {"seq", "head_dim", "mode"}));
  EXPECT_TRUE(has(md, "**Where the time goes** at S = 2048, D = 128, causal (B = 4, H = 32, graph, L2 hot)")) << md;
  EXPECT_TRUE(has(line_of(md, "- `tiled`: "), "; kernels: none recorded (graph mode).")) << md;
  EXPECT_FALSE(has(line_of(md, "**The walk in words.**"), "cuBLAS GEMMs")) << md;  // no breakdown to speak of
}

TEST(AttentionReport, RunsWithFewerThanTwoVariantsOfTheWalkGetNoSection) {
  RunView r = run_of({walk_group(4096, 128, 1)}, {});
  r.variants = {"tiled"};
  EXPECT_EQ(section(r), "");
  const std::string md = section(run_of({walk_group(4096, 128, 1)}, {}));
  EXPECT_TRUE(has(md, "| seq | naive_out_of_place |")) << md;  // seq is always a column
  EXPECT_TRUE(has(md, "| 4096 | 15.0 ms | 10.0 ms | 2.00 ms | 1.00 ms | 1.50× | 5.00× | 2.00× |")) << md;
}

// ---- through the report's own path ---------------------------------------------------------------------------

// A GPU header of the attention experiment with ceilings: copy 4 TB/s, FP32 FMA 50 TFLOP/s, bf16 GEMM 800 TFLOP/s.
Json gpu_header() {
  return Json{{"type", "header"},
              {"schema_version", 1},
              {"created_utc", "2026-12-01T00:00:00.000Z"},
              {"config", {{"path", "attention.yaml"}, {"experiment", "attention"}}},
              {"environment", {{"backend", "cuda:0"}, {"device", {{"name", "Test GPU"}}}}},
              {"calibration",
               {{"copy", {{"bandwidth_Bps", 4e12}}},
                {"fp32_fma", {{"flop_per_s", 5e13}}},
                {"bf16_gemm", {{"flop_per_s", 8e14}}}}},
              {"lab", {{"timing", "synchronized"}, {"l2", "hot"}, {"target_rel_ci", 0.01}}}};
}

// An attention record at B 4, H 32, S 4096, D 128, causal, eager, L2 hot: ok in `time_s` with the ops of
// `kernels` (op, seconds), or not_supported where time_s is NaN.
PointRecord record(const std::string& variant, double time_s, const std::vector<std::pair<std::string, double>>& ops) {
  PointRecord p;
  p.experiment = "attention";
  p.variant = variant;
  p.axes = Json{{"seq", 4096}, {"batch", 4},         {"heads", 32},   {"head_dim", 128},
                {"causal", 1}, {kModeAxis, "eager"}, {kL2Axis, "hot"}};
  p.key = "attention/" + variant + "/batch=4,causal=1,head_dim=128,heads=32,l2=hot,mode=eager,seq=4096";
  p.id = test::id_of(p.key);
  p.backend = "cuda:0";
  p.cost.bytes = 4.3e10;
  p.cost.compulsory_bytes = 5.4e8;
  p.cost.flop = 5.55e11;
  p.cost.launches = static_cast<double>(ops.size());
  p.cost.host_syncs = 0;
  if (std::isnan(time_s)) {
    p.status = Status::not_supported;
    return p;
  }
  p.status = Status::ok;
  p.timing = test::hot_timing(time_s);
  if (!ops.empty()) {
    p.kernels.emplace();
    for (const auto& [op, s] : ops) p.kernels->push_back(KernelTime{op, 1e9, s, 1e9 / s});
  }
  return p;
}

// The run file of four records: naive_in_place and tiled with breakdowns, naive_out_of_place without, cudnn
// not_supported.
std::string write_attention_run(const TempDir& dir) {
  const std::vector<PointRecord> points = {
      record("naive_out_of_place", 15e-3, {}),
      record("naive_in_place", 10e-3,
             {{"qk_gemm", 2.2e-3}, {"scale_mask", 4.4e-3}, {"softmax", 3.3e-3}, {"pv_gemm", 1.1e-3}}),
      record("tiled", 2e-3, {{"flash_forward", 2.05e-3}}),
      record("cudnn", kNaN, {}),
  };
  const std::string path = dir.file("attention.jsonl");
  std::ofstream f(path);
  f << gpu_header().dump() << '\n';
  for (const auto& p : points) f << to_json(p).dump() << '\n';
  return path;
}

TEST(AttentionReportView, PointViewKernelsAreFilledFromTheRecordsBreakdown) {
  TempDir dir;
  const ReportContext c(load_results({write_attention_run(dir)}), &test::builtin());
  const ReportView view = report_view(c, "attention");
  ASSERT_EQ(view.runs().size(), 1u);
  std::map<std::string, const PointView*> by_variant;
  for (const PointView& p : view.runs()[0].points) by_variant[p.variant] = &p;
  ASSERT_EQ(by_variant.size(), 4u);
  const auto& k = by_variant.at("naive_in_place")->kernels;
  ASSERT_EQ(k.size(), 4u);
  const char* ops[] = {"qk_gemm", "scale_mask", "softmax", "pv_gemm"};
  const double shares[] = {0.2, 0.4, 0.3, 0.1};  // of the ops' sum, 11 ms
  double sum = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(k[i].op, ops[i]);
    EXPECT_NEAR(k[i].share, shares[i], 1e-12) << ops[i];
    sum += k[i].share;
  }
  EXPECT_DOUBLE_EQ(k[1].time_s, 4.4e-3);
  EXPECT_NEAR(sum, 1, 1e-12);
  ASSERT_EQ(by_variant.at("tiled")->kernels.size(), 1u);
  EXPECT_EQ(by_variant.at("tiled")->kernels[0].op, "flash_forward");
  EXPECT_DOUBLE_EQ(by_variant.at("tiled")->kernels[0].share, 1);
  EXPECT_TRUE(by_variant.at("naive_out_of_place")->kernels.empty());  // no `kernels` in the record
  EXPECT_TRUE(by_variant.at("cudnn")->kernels.empty());
  // The interpretation's fractions: 5.55e11 flop in 2 ms = 277.5 TFLOP/s.
  EXPECT_NEAR(by_variant.at("tiled")->compute_ceiling_fraction, 277.5e12 / 5e13, 1e-9);
  EXPECT_NEAR(by_variant.at("tiled")->bf16_gemm_fraction, 277.5e12 / 8e14, 1e-9);
  // The group the analysis made holds all four, cudnn without a time.
  ASSERT_EQ(view.runs()[0].groups.size(), 1u);
  EXPECT_TRUE(std::isnan(view.runs()[0].groups[0].time("cudnn")));
}

TEST(AttentionReportView, TheSectionReadsTheBreakdownOfARealReport) {
  TempDir dir;
  std::ostringstream out, err;
  ReportOptions o;
  o.plots = false;
  ASSERT_EQ(cmd_report({write_attention_run(dir)}, dir.file("out"), out, err, o), 0) << err.str();
  std::ifstream f(dir.file("out/report.md"));
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string md = ss.str();
  ASSERT_TRUE(has(md, "## The backend walk")) << md;
  const std::string in_place = line_of(md, "- `naive_in_place`: ");
  EXPECT_TRUE(has(in_place,
                  "kernels: qk_gemm 20%, scale_mask 40%, softmax 30%, pv_gemm 10% (the marked ops "
                  "together: 11.0 ms)."))
      << in_place;
  EXPECT_NEAR(kernel_percent_sum(in_place), 100, 1);
  EXPECT_TRUE(has(line_of(md, "- `naive_out_of_place`: "), "; kernels: none recorded.")) << md;
  EXPECT_EQ(line_of(md, "- `cudnn`: "), "- `cudnn`: no time (not_supported).");
  EXPECT_TRUE(has(md, "| 4096 | 15.0 ms | 10.0 ms | 2.00 ms | — | 1.50× | 5.00× | n/a |")) << md;
}

// The committed H200 run (three variants: no cudnn) gets the section, with real ratios and "—" for cudnn.
TEST(AttentionReport, CommittedH200RunGetsTheWalk) {
  TempDir dir;
  const std::string in = dir.file("attention.jsonl");
  const std::string src = std::string(LABRUN_SOURCE_DIR) + "/results/h200/attention/attention.jsonl.xz";
  if (std::system(("xz -dc '" + src + "' > '" + in + "' 2> /dev/null").c_str()) != 0) GTEST_SKIP() << "no xz";
  std::ostringstream out, err;
  ReportOptions o;
  o.plots = false;
  ASSERT_EQ(cmd_report({in}, dir.file("out"), out, err, o), 0) << err.str();
  std::ifstream f(dir.file("out/report.md"));
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string md = ss.str();
  ASSERT_TRUE(has(md, "## The backend walk")) << md.substr(0, 2000);
  EXPECT_TRUE(has(md, "| 8192 | 128 | 1 | 58.9 ms | 42.6 ms | 8.57 ms | — | 1.38× | 4.97× | n/a |")) << md;
  EXPECT_TRUE(has(md, "24 of the 28 groups are left out")) << md;
  EXPECT_TRUE(has(md, "Every row shown has batch = 4, heads = 32.")) << md;
  EXPECT_TRUE(has(md, "`tiled` is 4.85× faster than `naive_in_place`")) << md;
  EXPECT_NEAR(kernel_percent_sum(line_of(md, "- `naive_in_place`: ")), 100, 1);
  EXPECT_EQ(line_of(md, "- `cudnn`: "), "- `cudnn`: not in this run.");
  EXPECT_TRUE(has(md,
                  "\n- `tiled`: 2.23 ms, compute-bound; 445% of the compute ceiling (FP32 FMA; 32% of the bf16 GEMM "
                  "rate), 5.4% of the memory ceiling; kernels: flash_forward 100% (the marked ops together: "
                  "2.25 ms).\n"))
      << md;
  EXPECT_TRUE(has(md, "so their fraction of the bf16 GEMM rate is the one to read.")) << md;
}

}  // namespace
}  // namespace labrun
