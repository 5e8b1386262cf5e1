#include "report_plots.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <ostream>
#include <set>

#include "output_file.hpp"
#include "lab_axes.hpp"
#include "spawn.hpp"
#include "record.hpp"

namespace labrun {

namespace fs = std::filesystem;

namespace {

// The distinct values of `axis` among the run's points (as JSON text), and whether every one is a number.
struct AxisValues {
  std::set<std::string> values;
  bool numeric = true;
  double lo = INFINITY, hi = -INFINITY;
};

AxisValues values_of(const ReportRun& run, const std::string& axis) {
  AxisValues out;
  for (const auto& p : run.points) {
    const auto it = p.axes.is_object() ? p.axes.find(axis) : p.axes.end();
    if (it == p.axes.end()) continue;
    out.values.insert(it->dump());
    if (!it->is_number()) {
      out.numeric = false;
      continue;
    }
    out.lo = std::min(out.lo, it->get<double>());
    out.hi = std::max(out.hi, it->get<double>());
  }
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

/// An axis whose positive values span this ratio or more is drawn on a log scale: powers of two from 2^10 to 2^14
/// already, decades always.
constexpr double kLogSpan = 16;

/// What the hypotheses' speedup plot needs of each hypothesis: its variants, threshold, verdict, and each matched
/// point's axes and ratio time(than) / time(faster), with the run's size axis to draw them against.
Json hypotheses_spec(const ReportContext& c) {
  Json out = Json::array();
  const Json& hyps = c.analysis().value("hypotheses", Json::array());
  int k = 0;
  for (const Json& h : hyps) {
    ++k;
    const std::size_t run = h.value("run", std::size_t{0});
    if (run >= c.runs().size()) continue;
    Json points = Json::array();
    for (const Json& p : h.value("points", Json::array()))
      points.push_back(Json{{"axes", p.value("axes", Json::object())},
                            {"ratio", p.value("ratio", Json())},
                            {"passed", p.value("passed", false)}});
    out.push_back(Json{{"run", run},
                       {"number", k},
                       {"faster", h.value("faster", Json())},
                       {"than", h.value("than", Json())},
                       {"by_at_least", h.value("by_at_least", Json())},
                       {"verdict", h.value("verdict", Json())},
                       {"x", c.runs()[run].size_axis},
                       {"points", points}});
  }
  return out;
}

/// The winner heatmap of each run with two varying axes besides the launch mode: its size axis (else its first
/// varying numeric axis) across, the other varying axis with the most values down; each group's winner, margin and
/// significance (the script shows the most frequent winner of a cell's groups).
Json winners_spec(const ReportContext& c) {
  Json out = Json::array();
  for (const auto& run : c.runs()) {
    std::string cols = contains(run.varying, run.size_axis) ? run.size_axis : "";
    for (const auto& a : run.varying)
      if (cols.empty() && values_of(run, a).numeric) cols = a;
    std::string rows;
    std::size_t most = 1;
    for (const auto& a : run.varying) {
      const std::size_t n = values_of(run, a).values.size();
      if (a != cols && n > most) rows = a, most = n;
    }
    if (cols.empty() && rows.empty()) continue;
    Json groups = Json::array();
    for (const Json* g : c.groups(run.number))
      if (g->contains("runner_up") && (*g)["runner_up"].is_string())
        groups.push_back(Json{{"axes", g->value("axes", Json::object())},
                              {"winner", g->value("winner", Json())},
                              {"margin_ratio", g->value("margin_ratio", Json())},
                              {"significant", g->value("significant", false)}});
    if (!groups.empty())
      out.push_back(Json{{"run", run.number},
                         {"experiment", run.experiment_name()},
                         {"cols", cols},
                         {"rows", rows},
                         {"groups", groups}});
  }
  return out;
}

PlotFigure figure(const ReportRun& run, const std::string& x, const std::string& series,
                  const std::vector<std::string>& facets, const std::string& title) {
  PlotFigure f;
  f.run = run.number;
  f.experiment = run.experiment_name();
  f.x = x;
  const AxisValues xs = values_of(run, x);
  f.x_scale = xs.numeric && xs.lo > 0 && xs.hi / xs.lo >= kLogSpan ? "log" : "linear";
  f.series = series.empty() ? "variant" : series;
  for (const auto& a : facets)
    if (a != x && a != f.series && contains(run.varying, a) && !contains(f.facets, a)) f.facets.push_back(a);
  std::vector<std::string> rest;
  for (const auto& a : run.varying)
    if (a != x && a != f.series && !contains(f.facets, a)) rest.push_back(a);
  constexpr std::size_t kStyles = 4;  // line styles the script has
  for (int pass = 0; pass < 2 && f.style.empty(); ++pass)
    for (const auto& a : rest) {
      const AxisValues v = values_of(run, a);
      if (v.values.size() <= kStyles && (pass == 1 || v.numeric)) {
        f.style = a;
        break;
      }
    }
  for (const auto& a : rest)
    if (a != f.style) f.split.push_back(a);
  if (f.series != "variant" && run.variants.size() > 1) f.split.insert(f.split.begin(), "variant");
  f.title = (f.experiment.empty() ? std::string("run ") + std::to_string(run.number) : f.experiment) + ": " +
            (title.empty() ? "time vs " + x : title);
  return f;
}

Json to_json(const PlotFigure& f) {
  return Json{{"run", f.run},         {"experiment", f.experiment}, {"x", f.x},
              {"x_scale", f.x_scale}, {"series", f.series},         {"facets", f.facets},
              {"style", f.style},     {"split", f.split},           {"title", f.title},
              {"name", f.name}};
}

}  // namespace

std::vector<PlotFigure> plot_figures(const ReportContext& c) {
  std::vector<PlotFigure> out;
  for (const auto& run : c.runs()) {
    std::vector<PlotFigure> figs;
    if (run.experiment && !run.experiment->def->plots().empty()) {
      for (const auto& spec : run.experiment->def->plots())
        if (contains(run.varying, spec.x)) figs.push_back(figure(run, spec.x, spec.series, spec.facets, spec.title));
    } else if (!run.size_axis.empty() && contains(run.varying, run.size_axis)) {
      figs.push_back(figure(run, run.size_axis, "variant", {}, ""));
    }
    std::map<std::string, int> taken;
    for (auto& f : figs) {
      const std::string stem = "time_vs_" + f.x + "_run" + std::to_string(run.number);
      const int k = ++taken[stem];
      f.name = k == 1 ? stem : stem + "_" + std::to_string(k);
      out.push_back(std::move(f));
    }
  }
  return out;
}

void write_plot_specs(const ReportContext& c, const fs::path& file, std::size_t max_time_plots) {
  Json figures = Json::array();
  for (const auto& f : plot_figures(c)) figures.push_back(to_json(f));
  const Json spec{{"points", "points.csv"},
                  {"ceilings", "ceilings.json"},
                  {"figures", figures},
                  {"roofline", {{"marker", kModeAxis}}},
                  {"hypotheses", hypotheses_spec(c)},
                  {"winners", winners_spec(c)},
                  {"max_time_plots", max_time_plots}};
  std::ofstream f = open_for_write(file);
  f << spec.dump(2) << '\n';
  close_or_throw(f, file);
}

Json draw_plots(const fs::path& out_dir, const std::string& given_script, std::ostream& err, std::size_t* not_drawn) {
  const std::string script = find_script(given_script, "plot_report.py");
  if (script.empty()) {
    err << "labrun report: warning: scripts/plot_report.py not found; no plots\n";
    return Json::array();
  }
  const std::string python = python_with_matplotlib();
  if (python.empty()) {
    err << "labrun report: warning: python3 with matplotlib not available (Debian: python3-matplotlib); no plots\n";
    return Json::array();
  }
  const fs::path log = out_dir / "plot.log";
  SpawnOptions logged;
  logged.output = log.string();
  const int rc = run_process({python, script, out_dir.string()}, logged);
  if (rc != 0) {
    err << "labrun report: warning: plotting failed (exit status " << rc << "); see " << log.string() << "\n";
    return Json::array();
  }
  std::error_code ec;
  fs::remove(log, ec);
  try {
    std::ifstream f(out_dir / "plots.json");
    const Json m = Json::parse(f);
    Json plots = Json::array();
    if (not_drawn && m.is_object() && m.contains("not_drawn") && m["not_drawn"].is_number_unsigned())
      *not_drawn = m["not_drawn"].get<std::size_t>();
    if (m.is_object() && m.contains("drawn") && m["drawn"].is_array())
      for (const auto& p : m["drawn"])
        if (p.is_object() && p.contains("file") && p["file"].is_string() &&
            fs::exists(out_dir / p["file"].get<std::string>(), ec))
          plots.push_back(p);
    return plots;
  } catch (const std::exception& e) {
    err << "labrun report: warning: the plotting script left no readable plots.json (" << e.what() << ")\n";
    return Json::array();
  }
}

}  // namespace labrun
