// The masking experiment's own report section (ExperimentDef::report_section, on the typed ReportView): the
// founding text's question answered from the data — where boolean indexing (`index`) loses, by how much, where it
// wins, and why.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <labrun/report.hpp>

#include "masking.hpp"

namespace labrun::masking {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

bool positive(double x) { return std::isfinite(x) && x > 0; }

void run_section(const RunView& run, std::ostream& md) {
  const std::vector<GroupView>& groups = run.groups;
  const bool has_multiply = run.has_variant("multiply");

  // 1. Ratios at moderate densities, per slice (mode, dtype, downstream) and n.
  struct Row {
    std::vector<double> rw, rm, stall;
    std::map<std::string, int> bounds;
  };
  std::map<std::tuple<std::string, std::string, double, double>, Row> rows;
  std::vector<double> all_rw0, all_rm0;  // downstream 0 (the seed's setting)
  std::map<double, std::vector<double>> rw_by_n0;
  for (const auto& g : groups) {
    const double d = axis_number(g.axes, "density");
    if (!(d >= 0.1 - 1e-12 && d <= 0.9 + 1e-12)) continue;
    const double ti = g.time("index"), tw = g.time("where"), tm = g.time("multiply");
    if (!positive(ti) || !positive(tw)) continue;
    const double ds = axis_number(g.axes, "downstream");
    auto& row = rows[{axis_word(g.axes, "mode"), axis_word(g.axes, "dtype"), ds, axis_number(g.axes, "n")}];
    row.rw.push_back(ti / tw);
    if (positive(tm)) row.rm.push_back(ti / tm);
    if (const PointView* r = g.point("index")) {
      row.bounds[r->bound]++;
      if (std::isfinite(r->host_stall_share)) row.stall.push_back(r->host_stall_share);
    }
    if (ds == 0 || !std::isfinite(ds)) {
      all_rw0.push_back(ti / tw);
      if (positive(tm)) all_rm0.push_back(ti / tm);
      rw_by_n0[axis_number(g.axes, "n")].push_back(ti / tw);
    }
  }
  auto range_text = [](const std::vector<double>& v) {
    if (v.empty()) return std::string("n/a");
    return ratio_text(median_of(v)) + " (" + ratio_text(*std::min_element(v.begin(), v.end())) + "–" +
           ratio_text(*std::max_element(v.begin(), v.end())) + ")";
  };

  // Wins: index faster than both where and multiply.
  struct Win {
    AxisValues axes;
    double ti, tw, tm, by;
    bool significant;
  };
  std::vector<Win> wins;
  std::size_t compared = 0, multiply_timed = 0;
  for (const auto& g : groups) {
    const double ti = g.time("index"), tw = g.time("where");
    const double tm = has_multiply ? g.time("multiply") : kNaN;
    if (!positive(ti) || !positive(tw)) continue;
    ++compared;
    multiply_timed += positive(tm);
    const double best = positive(tm) ? std::min(tw, tm) : tw;
    if (ti >= best) continue;
    // Significant when index's CI lies below the better rival's.
    bool sig = false;
    const PointView* ri = g.point("index");
    const PointView* rb = g.point(positive(tm) && tm < tw ? "multiply" : "where");
    if (ri && rb) sig = ri->ci95_high_s < rb->ci95_low_s;
    wins.push_back(Win{g.axes, ti, tw, tm, best / ti, sig});
  }

  // Narrative.
  // `multiply` is named only where it had a time (it may be incorrect everywhere, as with planted NaNs: C06).
  const std::string vs = multiply_timed > 0                ? "`where` and `multiply`"
                         : has_multiply && compared > 0 ? "`where` (`multiply` has no time here: not ok)"
                                                         : "`where`";
  if (!all_rw0.empty()) {
    md << "**Where it loses.** At moderate densities (10%–90%) with no downstream work, `index` takes a median "
       << ratio_text(median_of(all_rw0)) << " the time of `where` (range "
       << ratio_text(*std::min_element(all_rw0.begin(), all_rw0.end())) << "–"
       << ratio_text(*std::max_element(all_rw0.begin(), all_rw0.end())) << ")";
    if (!all_rm0.empty()) md << " and " << ratio_text(median_of(all_rm0)) << " the time of `multiply`";
    md << ", over " << all_rw0.size() << " comparisons. By n (median of index / where): ";
    bool first = true;
    for (const auto& [n, v] : rw_by_n0) {
      md << (first ? "" : ", ") << "n = " << format_number(n) << ": " << ratio_text(median_of(v));
      first = false;
    }
    if (rw_by_n0.size() >= 2) {
      const double a = median_of(rw_by_n0.begin()->second), b = median_of(rw_by_n0.rbegin()->second);
      double peak = 0, peak_n = kNaN;
      for (const auto& [n, v] : rw_by_n0)
        if (median_of(v) > peak) {
          peak = median_of(v);
          peak_n = n;
        }
      md << ". The gap " << (b > a * 1.1 ? "widens" : b < a / 1.1 ? "narrows" : "stays about the same")
         << " from the smallest to the largest n, and is largest at n = " << format_number(peak_n) << " ("
         << ratio_text(peak) << ")";
    }
    md << ". A ratio above 1 means `index` is slower.\n\n";
  }
  if (!wins.empty()) {
    const auto best = std::max_element(wins.begin(), wins.end(), [](const Win& a, const Win& b) { return a.by < b.by; });
    std::map<std::string, std::set<double>> dens_by_ds, n_by_ds;
    for (const auto& w : wins) {
      std::string ds = "0";
      for (const auto& [k, v] : w.axes)
        if (k == "downstream") ds = axis_text(v);
      dens_by_ds[ds].insert(axis_number(w.axes, "density"));
      n_by_ds[ds].insert(axis_number(w.axes, "n"));
    }
    md << "**Where it wins.** `index` is faster than " << vs << " at " << wins.size() << " of " << compared
       << " points where they can be compared";
    std::size_t sig = 0;
    for (const auto& w : wins) sig += w.significant;
    md << " (" << sig << " with non-overlapping confidence intervals); by up to " << ratio_text(best->by) << " at "
       << axes_text(best->axes, run.varying) << ". ";
    for (const auto& [ds, dens] : dens_by_ds) {
      const auto& ns = n_by_ds[ds];
      auto span = [](const auto& set) {
        return *set.begin() == *set.rbegin()
                   ? format_number(*set.begin())
                   : "from " + format_number(*set.begin()) + " to " + format_number(*set.rbegin());
      };
      md << "With downstream = " << ds << ": n " << span(ns) << ", density " << span(dens) << ". ";
    }
    md << "\n\n";
  } else {
    md << "**Where it wins.** Nowhere in this sweep is `index` faster than " << vs << ".\n\n";
  }

  // Why: the index points' bound classes, their stall, and the static-shape variants' traffic.
  std::map<std::string, int> index_bounds;
  std::vector<double> index_stall, index_launch;
  int unsupported = 0;
  double n_min = std::numeric_limits<double>::infinity();
  for (const auto& r : run.points) {
    if (r.variant != "index") continue;
    if (r.status == "capture_unsupported") ++unsupported;
    if (r.status != "ok") continue;
    index_bounds[r.bound]++;
    if (std::isfinite(r.host_stall_share)) index_stall.push_back(r.host_stall_share);
    if (std::isfinite(r.launch_overhead_share)) index_launch.push_back(r.launch_overhead_share);
    const double n = r.axis_number("n");
    if (n < n_min) n_min = n;
  }
  std::vector<double> small;
  for (const auto& r : run.points) {
    // The cheapest configuration only: no downstream work where the experiment has that axis.
    const double ds = r.axis_number("downstream");
    if (r.variant == "index" && r.status == "ok" && r.axis_number("n") == n_min && (!std::isfinite(ds) || ds == 0))
      small.push_back(r.time_s);
  }
  const double fixed = median_of(small);
  // where at the largest n: its traffic and its fraction of the memory ceiling.
  double n_max = 0;
  for (const auto& r : run.points) n_max = std::max(n_max, r.axis_number("n"));
  std::map<double, std::vector<double>> excess;  // downstream → issued / compulsory bytes
  std::vector<double> fmem;
  for (const auto& r : run.points) {
    if (r.variant != "where" || r.status != "ok" || r.axis_number("n") != n_max) continue;
    const double b = r.cost.bytes, cb = r.cost.compulsory_bytes;
    const double ds = r.axis_number("downstream");
    if (positive(cb)) excess[std::isfinite(ds) ? ds : 0].push_back(b / cb);
    const double f = r.memory_ceiling_fraction;
    if (std::isfinite(f)) fmem.push_back(f);
  }
  int total_index = 0;
  for (const auto& [b, n] : index_bounds) total_index += n;
  md << "**Why.** ";
  if (total_index > 0) {
    const auto top = std::max_element(index_bounds.begin(), index_bounds.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    md << "`index` is classed " << top->first << "-bound at " << top->second << " of its " << total_index
       << " timed points (" << counts_text(index_bounds) << "). It copies the selected count to the host every "
       << "iteration to size its result: the host waits for it, and cannot queue the next launches ahead, so "
       << "every launch after the sync is exposed (its launches at the calibrated eager cost: median "
       << format_percent(median_of(index_launch)) << " of its time; the stall the two clocks can see: median "
       << format_percent(median_of(index_stall)) << " of the wall time, a lower bound, since neither clock sees "
       << "the device idle while the count travels). Its fixed cost "
       << "shows at the smallest size: " << format_time(fixed) << " median at n = " << format_number(n_min)
       << " (no downstream work)"
       << ", where there is almost no work to save. ";
  }
  if (unsupported > 0)
    md << "In graph mode it cannot run at all: " << unsupported
       << " points are capture_unsupported (a host read cannot be captured). ";
  if (!excess.empty()) {
    md << "`where` (like `multiply`) computes on every element: at n = " << format_number(n_max) << " it moves ";
    bool first = true;
    for (const auto& [ds, v] : excess) {
      char times[32];
      std::snprintf(times, sizeof times, "%.1f", median_of(v));
      md << (first ? "" : ", ") << times << "× the compulsory bytes with downstream = "
         << format_number(ds);
      first = false;
    }
    md << " (median " << format_percent(median_of(fmem)) << " of the memory ceiling), so its time grows with n "
       << "and with the "
       << "downstream work whatever the density. Compaction makes the work after it scale with the selected "
       << "count instead: `index` wins where that saving (small density, expensive downstream work, large n) "
       << "outweighs its fixed sync cost.";
  }
  md << "\n\n";

  // Table: ratios by slice and n.
  if (!rows.empty()) {
    md << "Ratios at moderate densities (10%–90%): median (min–max) over the densities; above 1 means `index` "
          "is slower.\n\n"
       << "| mode | dtype | downstream | n | index / where | index / multiply | index bound | index host stall |\n"
       << "|---|---|---:|---:|---:|---:|---|---:|\n";
    for (const auto& [k, row] : rows) {
      const auto& [mode, dtype, ds, n] = k;
      md << "| " << mode << " | " << dtype << " | " << format_number(ds) << " | " << format_number(n) << " | "
         << range_text(row.rw) << " | " << range_text(row.rm) << " | " << counts_text(row.bounds) << " | "
         << format_percent(median_of(row.stall)) << " |\n";
    }
    md << "\n";
  }
  if (!wins.empty()) {
    md << "Points where `index` beats " << vs << ":\n\n| point | index | where |"
       << (has_multiply ? " multiply |" : "") << " index faster by | significant |\n|---|---:|---:|"
       << (has_multiply ? "---:|" : "") << "---:|:---:|\n";
    for (const auto& w : wins) {
      md << "| " << cell(axes_text(w.axes, run.varying)) << " | " << format_time(w.ti) << " | "
         << format_time(w.tw) << " |";
      if (has_multiply) md << " " << format_time(w.tm) << " |";
      md << " " << ratio_text(w.by) << " | " << (w.significant ? "yes" : "no") << " |\n";
    }
    md << "\n";
  }
  // Crossovers that involve index against where or multiply.
  std::vector<const CrossoverView*> cx;
  for (const CrossoverView& x : run.crossovers) {
    const std::string &a = x.faster_below, &b = x.faster_above;
    if (x.significant && (a == "index" || b == "index") && (a == "where" || b == "where" || a == "multiply" || b == "multiply"))
      cx.push_back(&x);
  }
  if (!cx.empty()) {
    md << "Crossovers of `index` against `where` and `multiply` (significant at both ends)";
    const bool fold = cx.size() > 12;
    md << (fold ? ": " + std::to_string(cx.size()) + ", listed below.\n\n<details><summary>Show them</summary>\n\n"
                : ":\n\n");
    for (const CrossoverView* x : cx) md << "- " << x->text << "\n";
    md << (fold ? "\n</details>\n\n" : "\n");
  }
}

}  // namespace

void report_section(const ReportView& view, std::ostream& md) {
  bool any = false;
  for (const RunView& run : view.runs()) {
    if (!run.has_variant("index") || !run.has_variant("where")) continue;
    if (!any) md << "## Where boolean indexing loses and wins\n\n";
    any = true;
    md << run.heading;
    run_section(run, md);
  }
}

}  // namespace labrun::masking
