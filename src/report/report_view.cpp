// labrun/report.hpp: the typed view of an experiment's runs, built from the ReportContext (records, interpretation,
// analysis JSON), and the text helpers, which are the report's own.
#include "report_view.hpp"

#include <cmath>
#include <limits>

#include "format.hpp"
#include "report_context.hpp"

namespace labrun {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// An axis value of a record or the analysis (JSON integer, number, json_real string or word), typed.
AxisValue axis_value(const Json& v) {
  if (v.is_number_integer()) return v.get<std::int64_t>();
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "NaN" || s == "Infinity" || s == "-Infinity") return real_from_json(v);
    return s;
  }
  return v.dump();
}

AxisValues axes_of(const Json& axes) {
  AxisValues out;
  if (axes.is_object())
    for (const auto& [k, v] : axes.items()) out.emplace_back(k, axis_value(v));
  return out;
}

Json to_json(const AxisValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) return Json(*i);
  if (const auto* d = std::get_if<double>(&v)) return Json(*d);
  return Json(std::get<std::string>(v));
}

// The record's kernel breakdown with each op's share of the marked iteration (their sum); empty without one.
std::vector<KernelShare> kernel_shares(const PointRecord& r) {
  std::vector<KernelShare> out;
  if (!r.kernels) return out;
  double total = 0;
  for (const KernelTime& k : *r.kernels)
    if (std::isfinite(k.time_s)) total += k.time_s;
  for (const KernelTime& k : *r.kernels)
    out.push_back(KernelShare{k.op, k.time_s, std::isfinite(k.time_s) && total > 0 ? k.time_s / total : kNaN});
  return out;
}

PointView point_view(const PointRecord& r) {
  PointView p;
  p.id = r.id;
  p.variant = r.variant;
  p.status = to_string(r.status);
  p.axes = axes_of(r.axes);
  p.cost = r.cost;
  const IterationTime t = ReportContext::iteration_time(r);
  p.time_s = t.time_s;
  p.ci95_low_s = t.ci95_low_s;
  p.ci95_high_s = t.ci95_high_s;
  p.host_paced = t.host_paced;
  const Interpretation& in = ReportContext::interpretation(r);
  p.bound = in.bound;
  p.launch_overhead_share = in.launch_overhead_share;
  p.host_stall_share = in.host_stall_share;
  p.host_syncs_per_iteration = in.host_syncs_per_iteration;
  p.memory_ceiling_fraction = in.fraction_of.memory_ceiling;
  p.compute_ceiling_fraction = in.fraction_of.compute_ceiling;
  p.bf16_gemm_fraction = in.fraction_of.bf16_gemm;
  p.suspect = in.suspect;
  p.kernels = kernel_shares(r);
  return p;
}

}  // namespace

double axis_number(const AxisValues& axes, const std::string& axis) {
  for (const auto& [name, v] : axes) {
    if (name != axis) continue;
    if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
    if (const auto* d = std::get_if<double>(&v)) return *d;
    return kNaN;
  }
  return kNaN;
}

std::string axis_word(const AxisValues& axes, const std::string& axis) {
  for (const auto& [name, v] : axes)
    if (name == axis) return std::holds_alternative<std::string>(v) ? std::get<std::string>(v) : to_json(v).dump();
  return "";
}

double GroupView::time(const std::string& variant) const {
  const auto it = time_s.find(variant);
  return it == time_s.end() ? kNaN : it->second;
}

const PointView* GroupView::point(const std::string& variant) const {
  const auto it = points.find(variant);
  return it == points.end() ? nullptr : &it->second;
}

bool RunView::has_variant(const std::string& variant) const {
  for (const auto& v : variants)
    if (v == variant) return true;
  return false;
}

std::string ratio_text(double ratio) { return ReportContext::ratio_text(ratio); }
std::string counts_text(const std::map<std::string, int>& counts) { return ReportContext::counts_text(counts); }
double median_of(std::vector<double> values) { return ReportContext::median(std::move(values)); }
std::string cell(const std::string& text) { return ReportContext::cell(text); }
std::string axis_text(const AxisValue& value) { return format_axis_value(to_json(value)); }

std::string axes_text(const AxisValues& axes, const std::vector<std::string>& only) {
  Json j = Json::object();
  for (const auto& [name, v] : axes) j[name] = to_json(v);
  return format_axes(j, only);
}

ReportView report_view(const ReportContext& c, const std::string& experiment) {
  std::vector<RunView> runs;
  for (const ReportRun* run : c.runs_of(experiment)) {
    RunView r;
    r.number = run->number;
    r.heading = c.run_heading(run->number);
    r.variants = run->variants;
    r.varying = run->varying;
    for (const auto& p : run->points) r.points.push_back(point_view(p));
    for (const Json* g : c.groups(run->number)) {
      GroupView x;
      x.axes = axes_of(g->value("axes", Json::object()));
      if (g->contains("times_s") && (*g)["times_s"].is_object())
        for (const auto& [v, t] : (*g)["times_s"].items()) x.time_s[v] = t.is_number() ? t.get<double>() : kNaN;
      if (g->contains("ids") && (*g)["ids"].is_object())
        for (const auto& [v, id] : (*g)["ids"].items())
          if (const PointRecord* p = c.find(run->number, id)) x.points[v] = point_view(*p);
      r.groups.push_back(std::move(x));
    }
    for (const Json* x : c.crossovers(run->number))
      r.crossovers.push_back(CrossoverView{x->value("faster_below", ""), x->value("faster_above", ""),
                                           x->value("significant", false), x->value("text", "")});
    runs.push_back(std::move(r));
  }
  return ReportView(std::move(runs));
}

}  // namespace labrun
