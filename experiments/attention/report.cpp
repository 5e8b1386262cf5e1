// The attention experiment's own report section (ExperimentDef::report_section, on the typed ReportView): the
// founding text's backend walk side by side — naive out of place → naive in place → labrun's fused kernel (`tiled`)
// → cuDNN's fused kernel (`cudnn`) — with the measured ratio of each step, and where each variant's time goes at the
// judged point (its bound class, its fractions of the ceilings, the ops it marked and their shares).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <iterator>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <labrun/report.hpp>

#include "attention.hpp"

namespace labrun::attention {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The walk, in the founding text's order (the variants' names from the experiment's table, to_string).
const char* const kWalk[] = {to_string(Variant::naive_out_of_place), to_string(Variant::naive_in_place),
                             to_string(Variant::tiled), to_string(Variant::cudnn)};

/// One step of the walk: time(slow) / time(fast), above 1 when the step pays.
struct Step {
  const char* slow;
  const char* fast;
};
const Step kSteps[] = {{kWalk[0], kWalk[1]}, {kWalk[1], kWalk[2]}, {kWalk[2], kWalk[3]}};

/// A run's table shows every group up to this many; past it, only the largest seq of each slice.
constexpr std::size_t kMaxRows = 24;

/// The axes in the order the table's columns take them (others follow in the run's order).
const char* const kAxisOrder[] = {"seq", "batch", "heads", "head_dim", "causal", "mode", "l2"};

bool positive(double x) { return std::isfinite(x) && x > 0; }

// The variant's time in a group where it is positive, else NaN.
double time_of(const GroupView& g, const std::string& variant) {
  const double t = g.time(variant);
  return positive(t) ? t : kNaN;
}

// time(slow) / time(fast); NaN where either has no time.
double step_ratio(const GroupView& g, const Step& s) { return time_of(g, s.slow) / time_of(g, s.fast); }

// An axis as a number that sorts: NaN (absent, or a word) as -inf.
double sortable(const GroupView& g, const char* axis) {
  const double x = axis_number(g.axes, axis);
  return std::isnan(x) ? -std::numeric_limits<double>::infinity() : x;
}

// A group's slice (everything but seq and the shape of the batch) and its place in the table.
using Slice = std::tuple<std::string, std::string, double, double>;  // mode, l2, head_dim, causal
Slice slice_of(const GroupView& g) {
  return {axis_word(g.axes, "mode"), axis_word(g.axes, "l2"), sortable(g, "head_dim"), sortable(g, "causal")};
}
auto order_of(const GroupView& g) {
  return std::make_tuple(axis_word(g.axes, "mode"), axis_word(g.axes, "l2"), sortable(g, "batch"), sortable(g, "heads"),
                         sortable(g, "head_dim"), sortable(g, "causal"), sortable(g, "seq"));
}

// The groups the table shows, in table order, and how many it leaves out.
struct Shown {
  std::vector<const GroupView*> rows;
  std::size_t total = 0, left_out = 0;
};

// Every group up to kMaxRows; past it, only those at the largest seq of each (head_dim, causal, mode, l2).
Shown shown_groups(const RunView& run) {
  Shown s;
  for (const GroupView& g : run.groups) s.rows.push_back(&g);
  std::stable_sort(s.rows.begin(), s.rows.end(),
                   [](const GroupView* a, const GroupView* b) { return order_of(*a) < order_of(*b); });
  s.total = s.rows.size();
  if (s.total <= kMaxRows) return s;
  std::map<Slice, double> largest;
  for (const GroupView* g : s.rows) {
    auto [it, fresh] = largest.emplace(slice_of(*g), sortable(*g, "seq"));
    if (!fresh) it->second = std::max(it->second, sortable(*g, "seq"));
  }
  std::vector<const GroupView*> kept;
  for (const GroupView* g : s.rows)
    if (sortable(*g, "seq") == largest[slice_of(*g)]) kept.push_back(g);
  s.left_out = s.total - kept.size();
  s.rows = std::move(kept);
  return s;
}

// The run's varying axes in column order, seq (the size axis) always.
std::vector<std::string> ordered_axes(const RunView& run) {
  std::vector<std::string> out;
  for (const char* a : kAxisOrder)
    if (std::string(a) == "seq" || std::find(run.varying.begin(), run.varying.end(), a) != run.varying.end())
      out.emplace_back(a);
  for (const std::string& a : run.varying)
    if (std::find(out.begin(), out.end(), a) == out.end()) out.push_back(a);
  return out;
}

// The value of `axis` in a group as the table writes it ("" when absent).
std::string value_text(const GroupView& g, const std::string& axis) {
  for (const auto& [name, v] : g.axes)
    if (name == axis) return axis_text(v);
  return "";
}

// The table's axis columns: the varying axes that still vary among the rows shown (seq always); the others, each
// with its one value, go to `constant` ("batch = 4").
std::vector<std::string> axis_columns(const RunView& run, const Shown& s, std::vector<std::string>* constant) {
  std::vector<std::string> columns;
  for (const std::string& axis : ordered_axes(run)) {
    std::set<std::string> values;
    for (const GroupView* g : s.rows) values.insert(value_text(*g, axis));
    if (axis == "seq" || values.size() > 1) columns.push_back(axis);
    else if (!values.empty()) constant->push_back(axis + " = " + *values.begin());
  }
  return columns;
}

// The table of one run: the axes, each variant's time, each step's ratio; the sentence on what it leaves out.
void write_table(const RunView& run, std::ostream& md) {
  const Shown s = shown_groups(run);
  std::vector<std::string> constant;
  const std::vector<std::string> columns = axis_columns(run, s, &constant);
  md << "Each variant's iteration time (— where it has no ok point) and each step of the walk as a time ratio, the "
        "step before over the step after (above 1: the step pays; n/a where either has no time).\n\n|";
  for (const auto& a : columns) md << " " << a << " |";
  for (const char* v : kWalk) md << " " << v << " |";
  for (const Step& st : kSteps) md << " " << st.slow << " / " << st.fast << " |";
  md << "\n|";
  for (std::size_t i = 0; i < columns.size(); ++i) md << "---:|";
  for (std::size_t i = 0; i < std::size(kWalk) + std::size(kSteps); ++i) md << "---:|";
  md << "\n";
  for (const GroupView* g : s.rows) {
    md << "|";
    for (const auto& a : columns) md << " " << cell(value_text(*g, a)) << " |";
    for (const char* v : kWalk) {
      const double t = time_of(*g, v);
      md << " " << (std::isfinite(t) ? format_time(t) : "—") << " |";
    }
    for (const Step& st : kSteps) md << " " << ratio_text(step_ratio(*g, st)) << " |";
    md << "\n";
  }
  md << "\n";
  if (s.left_out > 0)
    md << "Only the largest `seq` of each (head_dim, causal, mode, l2) is shown: " << s.left_out << " of the "
       << s.total << " groups are left out (index.html and points.csv have them all). ";
  if (!constant.empty()) {
    md << "Every row shown has ";
    for (std::size_t i = 0; i < constant.size(); ++i) md << (i ? ", " : "") << constant[i];
    md << ".";
  }
  if (s.left_out > 0 || !constant.empty()) md << "\n\n";
}

// The judged point's group: batch 4, heads 32, seq 4096, head_dim 128, causal 1 if the run has it, else the largest
// seq with causal 1 and head_dim 128; eager and L2 hot before graph and cold, then the most heads. nullptr if none.
const GroupView* judged_group(const RunView& run) {
  const GroupView* best = nullptr;
  std::tuple<bool, double, bool, bool, double> best_key;
  for (const GroupView& g : run.groups) {
    if (axis_number(g.axes, "head_dim") != 128 || axis_number(g.axes, "causal") != 1) continue;
    const bool exact = axis_number(g.axes, "batch") == 4 && axis_number(g.axes, "heads") == 32 &&
                       axis_number(g.axes, "seq") == 4096;
    const auto key = std::make_tuple(exact, exact ? 0.0 : sortable(g, "seq"), axis_word(g.axes, "mode") != "graph",
                                     axis_word(g.axes, "l2") != "cold", sortable(g, "batch") * sortable(g, "heads"));
    if (!best || key > best_key) {
      best = &g;
      best_key = key;
    }
  }
  return best;
}

// The judged point in the founding text's words: "S = 4096, D = 128, causal (B = 4, H = 32, eager, L2 hot)".
std::string point_text(const GroupView& g) {
  const double causal = axis_number(g.axes, "causal");
  std::string out = "S = " + value_text(g, "seq") + ", D = " + value_text(g, "head_dim") + ", " +
                    (causal == 1 ? "causal" : "not causal");
  std::vector<std::string> rest;
  if (!value_text(g, "batch").empty()) rest.push_back("B = " + value_text(g, "batch"));
  if (!value_text(g, "heads").empty()) rest.push_back("H = " + value_text(g, "heads"));
  if (!axis_word(g.axes, "mode").empty()) rest.push_back(axis_word(g.axes, "mode"));
  if (!axis_word(g.axes, "l2").empty()) rest.push_back("L2 " + axis_word(g.axes, "l2"));
  for (std::size_t i = 0; i < rest.size(); ++i) out += (i ? ", " : " (") + rest[i];
  return rest.empty() ? out : out + ")";
}

// A bound class as a phrase: "memory-bound", "bound unknown".
std::string bound_text(const std::string& bound) {
  if (bound.empty() || bound == "unknown") return "bound unknown";
  return bound + "-bound";
}

// The ops of a breakdown with their shares: "qk_gemm 23%, softmax 28%"; the sum of their times in `total`.
std::string kernels_text(const PointView& p, double* total) {
  std::string out;
  *total = 0;
  for (const KernelShare& k : p.kernels) {
    out += (out.empty() ? "" : ", ") + k.op + " " + format_percent(k.share);
    if (std::isfinite(k.time_s)) *total += k.time_s;
  }
  return out;
}

// One variant's line under "Where the time goes".
void write_variant_line(const RunView& run, const GroupView& g, const std::string& variant, std::ostream& md) {
  md << "- `" << variant << "`: ";
  const PointView* p = g.point(variant);
  if (!p) {
    md << (run.has_variant(variant) ? "no point here.\n" : "not in this run.\n");
    return;
  }
  if (p->status != "ok" || !std::isfinite(time_of(g, variant))) {
    md << "no time (" << p->status << ").\n";
    return;
  }
  md << format_time(time_of(g, variant)) << ", " << bound_text(p->bound) << "; "
     << format_percent(p->compute_ceiling_fraction) << " of the compute ceiling (FP32 FMA; "
     << format_percent(p->bf16_gemm_fraction) << " of the bf16 GEMM rate), "
     << format_percent(p->memory_ceiling_fraction) << " of the memory ceiling; kernels: ";
  double total = 0;
  const std::string ops = kernels_text(*p, &total);
  if (ops.empty()) md << "none recorded" << (p->axis_word("mode") == "graph" ? " (graph mode)" : "") << ".\n";
  else md << ops << " (the marked ops together: " << format_time(total) << ").\n";
}

// The share of the marked iteration a variant's GEMMs take (its ops named *gemm*); NaN without a breakdown or GEMMs.
double gemm_share(const PointView* p) {
  if (!p || p->kernels.empty()) return kNaN;
  double gemm = 0;
  bool any = false;
  for (const KernelShare& k : p->kernels)
    if (k.op.find("gemm") != std::string::npos && std::isfinite(k.share)) {
      gemm += k.share;
      any = true;
    }
  return any ? gemm : kNaN;
}

// One step of the walk in words: "`tiled` is 4.84× faster than `naive_in_place`".
std::string step_text(const GroupView& g, const Step& s) {
  const double r = step_ratio(g, s);
  const std::string fast = std::string("`") + s.fast + "`", slow = std::string("`") + s.slow + "`";
  if (!std::isfinite(r)) {
    const char* missing = std::isfinite(time_of(g, s.fast)) ? s.slow : s.fast;
    return fast + " against " + slow + ": not measured (`" + missing + "` has no time here)";
  }
  return fast + " is " + (r >= 1 ? ratio_text(r) + " faster" : ratio_text(1 / r) + " slower") + " than " + slow;
}

// The paragraph: the judged point's steps in words, the walk end to end, and the naive variants' GEMM shares.
void write_walk_words(const GroupView& g, std::ostream& md) {
  md << "**The walk in words.** At " << point_text(g) << ": ";
  for (std::size_t i = 0; i < std::size(kSteps); ++i) md << (i ? "; " : "") << step_text(g, kSteps[i]);
  md << ".";
  // End to end: the fastest variant against the first step.
  const char* fastest = nullptr;
  for (const char* v : kWalk)
    if (std::isfinite(time_of(g, v)) && (!fastest || time_of(g, v) < time_of(g, fastest))) fastest = v;
  const double whole = time_of(g, kWalk[0]) / (fastest ? time_of(g, fastest) : kNaN);
  if (fastest && std::string(fastest) != kWalk[0] && std::isfinite(whole))
    md << " End to end, the fastest, `" << fastest << "`, is " << ratio_text(whole) << " faster than `" << kWalk[0]
       << "`.";
  for (const char* v : {kWalk[0], kWalk[1]}) {  // the naive variants
    const double share = gemm_share(g.point(v));
    if (std::isfinite(share))
      md << " In `" << v << "` the two cuBLAS GEMMs take " << format_percent(share)
         << " of the marked iteration, the S × S passes between them " << format_percent(1 - share) << ".";
  }
  md << "\n\n";
}

// "Where the time goes" at the judged point, then the paragraph.
void write_judged(const RunView& run, std::ostream& md) {
  const GroupView* g = judged_group(run);
  if (!g) {
    md << "No group has head_dim = 128 and causal = 1: no point to judge where the time goes.\n\n";
    return;
  }
  md << "**Where the time goes** at " << point_text(*g)
     << ": each variant's bound class, its fractions of the compute and memory ceilings, and its kernel breakdown "
        "(the ops it marked, each as a share of one marked eager iteration; docs/records.md, `kernels`).\n\n";
  bool past_fp32 = false;
  for (const char* v : kWalk) {
    write_variant_line(run, *g, v, md);
    const PointView* p = g->point(v);
    past_fp32 = past_fp32 || (p && p->status == "ok" && p->compute_ceiling_fraction > 1);
  }
  md << "\n";
  if (past_fp32)
    md << "The compute ceiling is the calibrated FP32 FMA rate (docs/metrics.md); the GEMMs and the fused kernels "
          "run on the tensor cores, past it, so their fraction of the bf16 GEMM rate is the one to read.\n\n";
  write_walk_words(*g, md);
}

// A run the section speaks of: one with at least two variants of the walk.
bool walks(const RunView& run) {
  int n = 0;
  for (const char* v : kWalk) n += run.has_variant(v);
  return n >= 2;
}

}  // namespace

void report_section(const ReportView& view, std::ostream& md) {
  bool any = false;
  for (const RunView& run : view.runs()) {
    if (!walks(run)) continue;
    if (!any)
      md << "## The backend walk: naive → in place → tiled → cuDNN\n\n"
         << "The founding text's walk: `naive_out_of_place` (five kernels, two S × S buffers), `naive_in_place` (the "
            "mask fused into the scale, one buffer), `tiled` (labrun's fused kernel: FlashAttention-2's on mma.sync, "
            "or on TMA and wgmma at D = 128 on Hopper; its kernel breakdown names which) and `cudnn` (cuDNN's fused "
            "attention).\n\n";
    any = true;
    md << run.heading;
    write_table(run, md);
    write_judged(run, md);
  }
}

}  // namespace labrun::attention
