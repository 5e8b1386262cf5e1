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

// A list of ratios as "median (min–max)", or "n/a" when empty.
std::string range_text(const std::vector<double>& v) {
  if (v.empty()) return std::string("n/a");
  return ratio_text(median_of(v)) + " (" + ratio_text(*std::min_element(v.begin(), v.end())) + "–" +
         ratio_text(*std::max_element(v.begin(), v.end())) + ")";
}

// One row of the ratio table: index / where, index / multiply, index's bound classes and its host stall.
struct Row {
  std::vector<double> rw, rm, stall;
  std::map<std::string, int> bounds;
};

// The ratios at moderate densities (10%–90%): per slice (mode, dtype, downstream) and n, and at downstream 0.
struct Ratios {
  std::map<std::tuple<std::string, std::string, double, double>, Row> rows;
  std::vector<double> all_rw0, all_rm0;  // downstream 0 (the seed's setting)
  std::map<double, std::vector<double>> rw_by_n0;
};

// The Ratios of the run's groups where index and where both have a time.
Ratios moderate_ratios(const RunView& run) {
  Ratios out;
  for (const auto& g : run.groups) {
    const double d = axis_number(g.axes, "density");
    if (!(d >= 0.1 - 1e-12 && d <= 0.9 + 1e-12)) continue;
    const double ti = g.time("index"), tw = g.time("where"), tm = g.time("multiply");
    if (!positive(ti) || !positive(tw)) continue;
    const double ds = axis_number(g.axes, "downstream");
    auto& row = out.rows[{axis_word(g.axes, "mode"), axis_word(g.axes, "dtype"), ds, axis_number(g.axes, "n")}];
    row.rw.push_back(ti / tw);
    if (positive(tm)) row.rm.push_back(ti / tm);
    if (const PointView* r = g.point("index")) {
      row.bounds[r->bound]++;
      if (std::isfinite(r->host_stall_share)) row.stall.push_back(r->host_stall_share);
    }
    if (ds == 0 || !std::isfinite(ds)) {
      out.all_rw0.push_back(ti / tw);
      if (positive(tm)) out.all_rm0.push_back(ti / tm);
      out.rw_by_n0[axis_number(g.axes, "n")].push_back(ti / tw);
    }
  }
  return out;
}

// A point where index is faster than both where and multiply.
struct Win {
  AxisValues axes;
  double ti, tw, tm, by;
  bool significant;
};

// Index's wins, and how many points could be compared (and of those, how many had a multiply time).
struct Wins {
  std::vector<Win> list;
  std::size_t compared = 0, multiply_timed = 0;
};

// The Wins of the run's groups.
Wins index_wins(const RunView& run, bool has_multiply) {
  Wins out;
  for (const auto& g : run.groups) {
    const double ti = g.time("index"), tw = g.time("where");
    const double tm = has_multiply ? g.time("multiply") : kNaN;
    if (!positive(ti) || !positive(tw)) continue;
    ++out.compared;
    out.multiply_timed += positive(tm);
    const double best = positive(tm) ? std::min(tw, tm) : tw;
    if (ti >= best) continue;
    // Significant when index's CI lies below the better rival's.
    bool sig = false;
    const PointView* ri = g.point("index");
    const PointView* rb = g.point(positive(tm) && tm < tw ? "multiply" : "where");
    if (ri && rb) sig = ri->ci95_high_s < rb->ci95_low_s;
    out.list.push_back(Win{g.axes, ti, tw, tm, best / ti, sig});
  }
  return out;
}

// "Where it loses": index's median ratio against where (and multiply) at downstream 0, and the gap by n.
void write_losses(const Ratios& r, std::ostream& md) {
  if (r.all_rw0.empty()) return;
  md << "**Where it loses.** At moderate densities (10%–90%) with no downstream work, `index` takes a median "
     << ratio_text(median_of(r.all_rw0)) << " the time of `where` (range "
     << ratio_text(*std::min_element(r.all_rw0.begin(), r.all_rw0.end())) << "–"
     << ratio_text(*std::max_element(r.all_rw0.begin(), r.all_rw0.end())) << ")";
  if (!r.all_rm0.empty()) md << " and " << ratio_text(median_of(r.all_rm0)) << " the time of `multiply`";
  md << ", over " << r.all_rw0.size() << " comparisons. By n (median of index / where): ";
  bool first = true;
  for (const auto& [n, v] : r.rw_by_n0) {
    md << (first ? "" : ", ") << "n = " << format_number(n) << ": " << ratio_text(median_of(v));
    first = false;
  }
  if (r.rw_by_n0.size() >= 2) {
    const double a = median_of(r.rw_by_n0.begin()->second), b = median_of(r.rw_by_n0.rbegin()->second);
    double peak = 0, peak_n = kNaN;
    for (const auto& [n, v] : r.rw_by_n0)
      if (median_of(v) > peak) {
        peak = median_of(v);
        peak_n = n;
      }
    md << ". The gap "
       << (b > a * 1.1   ? "widens"
           : b < a / 1.1 ? "narrows"
                         : "stays about the same")
       << " from the smallest to the largest n, and is largest at n = " << format_number(peak_n) << " ("
       << ratio_text(peak) << ")";
  }
  md << ". A ratio above 1 means `index` is slower.\n\n";
}

// A set of values as one value, or "from lowest to highest".
std::string span_text(const std::set<double>& set) {
  return *set.begin() == *set.rbegin() ? format_number(*set.begin())
                                       : "from " + format_number(*set.begin()) + " to " + format_number(*set.rbegin());
}

// "Where it wins": how many wins, the best one, and the n and densities of the wins per downstream value.
void write_wins(const Wins& wins, const std::string& vs, const RunView& run, std::ostream& md) {
  if (wins.list.empty()) {
    md << "**Where it wins.** Nowhere in this sweep is `index` faster than " << vs << ".\n\n";
    return;
  }
  const auto best = std::max_element(wins.list.begin(), wins.list.end(),
                                     [](const Win& a, const Win& b) { return a.by < b.by; });
  std::map<std::string, std::set<double>> dens_by_ds, n_by_ds;
  for (const auto& w : wins.list) {
    std::string ds = "0";
    for (const auto& [k, v] : w.axes)
      if (k == "downstream") ds = axis_text(v);
    dens_by_ds[ds].insert(axis_number(w.axes, "density"));
    n_by_ds[ds].insert(axis_number(w.axes, "n"));
  }
  md << "**Where it wins.** `index` is faster than " << vs << " at " << wins.list.size() << " of " << wins.compared
     << " points where they can be compared";
  std::size_t sig = 0;
  for (const auto& w : wins.list) sig += w.significant;
  md << " (" << sig << " with non-overlapping confidence intervals); by up to " << ratio_text(best->by) << " at "
     << axes_text(best->axes, run.varying) << ". ";
  for (const auto& [ds, dens] : dens_by_ds)
    md << "With downstream = " << ds << ": n " << span_text(n_by_ds[ds]) << ", density " << span_text(dens) << ". ";
  md << "\n\n";
}

// What the ok index points say: their bound classes, stall and launch shares, and the fixed cost at the smallest n.
struct IndexFacts {
  std::map<std::string, int> bounds;
  std::vector<double> stall, launch;
  int unsupported = 0;
  double n_min = std::numeric_limits<double>::infinity();
  double fixed_s = kNaN;  // median time at n_min with no downstream work
};

// The IndexFacts of the run's points.
IndexFacts index_facts(const RunView& run) {
  IndexFacts f;
  for (const auto& r : run.points) {
    if (r.variant != "index") continue;
    if (r.status == "capture_unsupported") ++f.unsupported;
    if (r.status != "ok") continue;
    f.bounds[r.bound]++;
    if (std::isfinite(r.host_stall_share)) f.stall.push_back(r.host_stall_share);
    if (std::isfinite(r.launch_overhead_share)) f.launch.push_back(r.launch_overhead_share);
    const double n = r.axis_number("n");
    if (n < f.n_min) f.n_min = n;
  }
  std::vector<double> small;
  for (const auto& r : run.points) {
    // The cheapest configuration only: no downstream work where the experiment has that axis.
    const double ds = r.axis_number("downstream");
    if (r.variant == "index" && r.status == "ok" && r.axis_number("n") == f.n_min && (!std::isfinite(ds) || ds == 0))
      small.push_back(r.time_s);
  }
  f.fixed_s = median_of(small);
  return f;
}

// where at the largest n: its traffic (issued / compulsory bytes, by downstream) and its fraction of the ceiling.
struct WhereTraffic {
  double n_max = 0;
  std::map<double, std::vector<double>> excess;  // downstream → issued / compulsory bytes
  std::vector<double> fmem;
};

// The WhereTraffic of the run's points.
WhereTraffic where_traffic(const RunView& run) {
  WhereTraffic w;
  for (const auto& r : run.points) w.n_max = std::max(w.n_max, r.axis_number("n"));
  for (const auto& r : run.points) {
    if (r.variant != "where" || r.status != "ok" || r.axis_number("n") != w.n_max) continue;
    const double b = r.cost.bytes, cb = r.cost.compulsory_bytes;
    const double ds = r.axis_number("downstream");
    if (positive(cb)) w.excess[std::isfinite(ds) ? ds : 0].push_back(b / cb);
    const double f = r.memory_ceiling_fraction;
    if (std::isfinite(f)) w.fmem.push_back(f);
  }
  return w;
}

// The "Why" paragraph's part on index: its bound classes, the sync's cost, and graph mode.
void write_index_why(const IndexFacts& f, std::ostream& md) {
  int total_index = 0;
  for (const auto& [b, n] : f.bounds) total_index += n;
  if (total_index > 0) {
    const auto top = std::max_element(f.bounds.begin(), f.bounds.end(),
                                      [](const auto& a, const auto& b) { return a.second < b.second; });
    md << "`index` is classed " << top->first << "-bound at " << top->second << " of its " << total_index
       << " timed points (" << counts_text(f.bounds) << "). It copies the selected count to the host every "
       << "iteration to size its result: the host waits for it, and cannot queue the next launches ahead, so "
       << "every launch after the sync is exposed (its launches at the calibrated eager cost: median "
       << format_percent(median_of(f.launch)) << " of its time; the stall the two clocks can see: median "
       << format_percent(median_of(f.stall)) << " of the wall time, a lower bound, since neither clock sees "
       << "the device idle while the count travels). Its fixed cost "
       << "shows at the smallest size: " << format_time(f.fixed_s) << " median at n = " << format_number(f.n_min)
       << " (no downstream work)"
       << ", where there is almost no work to save. ";
  }
  if (f.unsupported > 0)
    md << "In graph mode it cannot run at all: " << f.unsupported
       << " points are capture_unsupported (a host read cannot be captured). ";
}

// The "Why" paragraph's part on where: the bytes it moves whatever the density.
void write_where_why(const WhereTraffic& w, std::ostream& md) {
  if (w.excess.empty()) return;
  md << "`where` (like `multiply`) computes on every element: at n = " << format_number(w.n_max) << " it moves ";
  bool first = true;
  for (const auto& [ds, v] : w.excess) {
    char times[32];
    std::snprintf(times, sizeof times, "%.1f", median_of(v));
    md << (first ? "" : ", ") << times << "× the compulsory bytes with downstream = " << format_number(ds);
    first = false;
  }
  md << " (median " << format_percent(median_of(w.fmem)) << " of the memory ceiling), so its time grows with n "
     << "and with the "
     << "downstream work whatever the density. Compaction makes the work after it scale with the selected "
     << "count instead: `index` wins where that saving (small density, expensive downstream work, large n) "
     << "outweighs its fixed sync cost.";
}

// Table: ratios by slice and n.
void write_ratio_table(const Ratios& r, std::ostream& md) {
  if (r.rows.empty()) return;
  md << "Ratios at moderate densities (10%–90%): median (min–max) over the densities; above 1 means `index` "
        "is slower.\n\n"
     << "| mode | dtype | downstream | n | index / where | index / multiply | index bound | index host stall |\n"
     << "|---|---|---:|---:|---:|---:|---|---:|\n";
  for (const auto& [k, row] : r.rows) {
    const auto& [mode, dtype, ds, n] = k;
    md << "| " << mode << " | " << dtype << " | " << format_number(ds) << " | " << format_number(n) << " | "
       << range_text(row.rw) << " | " << range_text(row.rm) << " | " << counts_text(row.bounds) << " | "
       << format_percent(median_of(row.stall)) << " |\n";
  }
  md << "\n";
}

// Table: the points where index wins, with each variant's time.
void write_wins_table(const Wins& wins, const std::string& vs, bool has_multiply, const RunView& run,
                      std::ostream& md) {
  if (wins.list.empty()) return;
  md << "Points where `index` beats " << vs << ":\n\n| point | index | where |" << (has_multiply ? " multiply |" : "")
     << " index faster by | significant |\n|---|---:|---:|" << (has_multiply ? "---:|" : "") << "---:|:---:|\n";
  for (const auto& w : wins.list) {
    md << "| " << cell(axes_text(w.axes, run.varying)) << " | " << format_time(w.ti) << " | " << format_time(w.tw)
       << " |";
    if (has_multiply) md << " " << format_time(w.tm) << " |";
    md << " " << ratio_text(w.by) << " | " << (w.significant ? "yes" : "no") << " |\n";
  }
  md << "\n";
}

// Crossovers that involve index against where or multiply, folded when there are many.
void write_crossovers(const RunView& run, std::ostream& md) {
  std::vector<const CrossoverView*> cx;
  for (const CrossoverView& x : run.crossovers) {
    const std::string &a = x.faster_below, &b = x.faster_above;
    const bool rival = a == "where" || b == "where" || a == "multiply" || b == "multiply";
    if (x.significant && (a == "index" || b == "index") && rival) cx.push_back(&x);
  }
  if (cx.empty()) return;
  md << "Crossovers of `index` against `where` and `multiply` (significant at both ends)";
  const bool fold = cx.size() > 12;
  md << (fold ? ": " + std::to_string(cx.size()) + ", listed below.\n\n<details><summary>Show them</summary>\n\n"
              : ":\n\n");
  for (const CrossoverView* x : cx) md << "- " << x->text << "\n";
  md << (fold ? "\n</details>\n\n" : "\n");
}

// The section of one run that has both index and where: narrative (loses, wins, why), then the tables.
void run_section(const RunView& run, std::ostream& md) {
  const bool has_multiply = run.has_variant("multiply");
  const Ratios ratios = moderate_ratios(run);
  const Wins wins = index_wins(run, has_multiply);
  // `multiply` is named only where it had a time (it may be incorrect everywhere, as with planted NaNs: C06).
  const std::string vs = wins.multiply_timed > 0             ? "`where` and `multiply`"
                         : has_multiply && wins.compared > 0 ? "`where` (`multiply` has no time here: not ok)"
                                                             : "`where`";
  write_losses(ratios, md);
  write_wins(wins, vs, run, md);
  // Why: the index points' bound classes, their stall, and the static-shape variants' traffic.
  md << "**Why.** ";
  write_index_why(index_facts(run), md);
  write_where_why(where_traffic(run), md);
  md << "\n\n";
  write_ratio_table(ratios, md);
  write_wins_table(wins, vs, has_multiply, run, md);
  write_crossovers(run, md);
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
