#include "analysis.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "format.hpp"
#include "interpret.hpp"

namespace labrun {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const InterpretThresholds& kT = kInterpretThresholds;

bool positive(double x) { return std::isfinite(x) && x > 0; }

// A JSON number for a finite value, null otherwise.
Json opt(double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); }

// One point as the cross-point analysis sees it: the record, and its iteration time with the CI of its median.
struct Pt {
  const PointRecord* rec = nullptr;
  bool usable = false;
  double t = kNaN, lo = kNaN, hi = kNaN;
  const std::string& experiment() const { return rec->experiment; }
  const std::string& variant() const { return rec->variant; }
  const Json& axes() const { return rec->axes; }
};

// Axis values as comparable doubles (numbers and json_real strings), NaN for words.
double axis_number(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    try {
      return real_from_json(v);
    } catch (const std::exception&) {
      return kNaN;
    }
  }
  return kNaN;
}

// The axis value `name` of a point's axes (null when absent).
const Json& axis_value(const Json& axes, const std::string& name) {
  static const Json kAbsent;
  if (!axes.is_object()) return kAbsent;
  const auto it = axes.find(name);
  return it == axes.end() ? kAbsent : *it;
}

// Are a and b the same number, up to a relative 1e-9?
bool same_number(double a, double b) {
  return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b));
}

// Does axis value `v` satisfy one `when` condition: [lo, hi] (inclusive), a list of values, or one value?
bool matches(const Json& v, const Json& cond) {
  const double x = axis_number(v);
  if (cond.is_array()) {
    if (is_when_range(cond)) {
      const double lo = cond[0].get<double>(), hi = cond[1].get<double>();
      return std::isfinite(x) && (x >= lo || same_number(x, lo)) && (x <= hi || same_number(x, hi));
    }
    for (const auto& c : cond)
      if (matches(v, c)) return true;
    return false;
  }
  if (cond.is_number()) return std::isfinite(x) && same_number(x, cond.get<double>());
  if (cond.is_string() && v.is_string()) return cond.get<std::string>() == v.get<std::string>();
  if (cond.is_boolean() && v.is_boolean()) return cond == v;
  return false;
}

// The axes object with `drop` removed, as a canonical string (sorted keys).
std::string axes_key(const Json& axes, const std::string& drop = "") {
  std::map<std::string, std::string> m;
  if (axes.is_object())
    for (const auto& [k, v] : axes.items())
      if (k != drop) m[k] = v.dump();
  std::string s;
  for (const auto& [k, v] : m) s += k + "=" + v + ";";
  return s;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t size = v.size();
  return size % 2 ? v[size / 2] : 0.5 * (v[size / 2 - 1] + v[size / 2]);
}

bool apart(const Pt& fast, const Pt& slow) {
  return std::isfinite(fast.hi) && std::isfinite(slow.lo) && fast.hi < slow.lo;
}

Json point_ref(const Pt& p) { return Json{{"id", p.rec->id}, {"key", p.rec->key}, {"axes", p.axes()}}; }

// One entry of config.hypothesis (docs/config.md): the config's own JSON, read here and nowhere else.
struct Hypothesis {
  std::string faster, than;
  Json when = Json::object();  // {axis: condition}
  double by_at_least = 1.0;
};

Hypothesis hypothesis_from_json(const Json& h) {
  Hypothesis out;
  if (!h.is_object()) return out;
  const auto text = [&](const char* key) {
    const auto it = h.find(key);
    return (it != h.end() && it->is_string()) ? it->get<std::string>() : std::string();
  };
  out.faster = text("faster");
  out.than = text("than");
  if (const auto it = h.find("when"); it != h.end() && it->is_object()) out.when = *it;
  const double by = json_number(h, {"by_at_least"});
  if (std::isfinite(by)) out.by_at_least = by;
  return out;
}

// The backend of a run: its header's, or, for points without a header, the one backend all of them name.
std::string run_backend(const Run& run) {
  std::string backend = run.header.backend();
  if (!backend.empty() || run.points.empty()) return backend;
  backend = run.points.front().backend;
  for (const auto& p : run.points)
    if (p.backend != backend) return "";
  return backend;
}

// What the analysis of one run works on.
struct RunView {
  int id = 0;
  const Run* run = nullptr;
  std::string backend;
  std::vector<Pt> points;
  std::vector<std::string> varying;  // axes with more than one value, in first-seen order
  // Groups: same experiment and axes, different variants; in first-seen order.
  std::vector<std::string> group_order;
  std::unordered_map<std::string, std::vector<const Pt*>> groups;
};

RunView view_of(const Run& run, int id) {
  RunView v;
  v.id = id;
  v.run = &run;
  v.backend = run_backend(run);
  v.points.reserve(run.points.size());
  for (const auto& rec : run.points) {
    Pt p;
    p.rec = &rec;
    // Variants are compared on what a loop of the iteration costs.
    const IterationTime it = iteration_time(rec);
    p.t = it.time_s;
    p.lo = it.ci95_low_s;
    p.hi = it.ci95_high_s;
    // The stored interpretation (computed once, by the lab or the pool); only a record without one (an old or
    // hand-made file) is interpreted here.
    const bool suspect = rec.interpretation ? rec.interpretation->suspect : interpret(rec, run.header).suspect;
    p.usable = rec.status == Status::ok && positive(p.t) && !suspect;
    v.points.push_back(p);
  }
  // Axes that vary within the run: the only ones worth naming in tables and texts.
  std::map<std::string, std::set<std::string>> seen;
  std::vector<std::string> axis_order;
  for (const auto& p : v.points)
    if (p.axes().is_object())
      for (const auto& [k, val] : p.axes().items()) {
        if (!seen.count(k)) axis_order.push_back(k);
        seen[k].insert(val.dump());
      }
  for (const auto& k : axis_order)
    if (seen[k].size() > 1) v.varying.push_back(k);
  for (const auto& p : v.points) {
    const std::string g = p.experiment() + "\x1f" + axes_key(p.axes());
    if (!v.groups.count(g)) v.group_order.push_back(g);
    v.groups[g].push_back(&p);
  }
  return v;
}

Json run_summary(const RunView& v) {
  const RunHeader& header = v.run->header;
  std::size_t usable = 0;
  for (const auto& p : v.points) usable += p.usable;
  std::string experiment = header.experiment();
  if (experiment.empty() && !v.points.empty()) experiment = v.points.front().experiment();
  return Json{{"run", v.id},
              {"experiment", experiment},
              {"config_path", header.config_path()},
              {"device", header.device_name()},
              {"backend", v.backend},
              {"created_utc", header.created_utc()},
              {"points", v.points.size()},
              {"usable_points", usable},
              {"varying_axes", v.varying}};
}

void add_groups(const RunView& v, Json& out) {
  for (const auto& g : v.group_order) {
    const auto& members = v.groups.at(g);
    std::vector<const Pt*> ok;
    for (const Pt* p : members)
      if (p->usable) ok.push_back(p);
    std::stable_sort(ok.begin(), ok.end(), [](const Pt* a, const Pt* b) { return a->t < b->t; });
    Json times = Json::object(), ids = Json::object();
    for (const Pt* p : members) {
      times[p->variant()] = p->usable ? Json(p->t) : Json(nullptr);
      ids[p->variant()] = p->rec->id;
    }
    Json gj{{"run", v.id},
            {"experiment", members.front()->experiment()},
            {"axes", members.front()->axes()},
            {"times_s", times},
            {"ids", ids}};
    if (ok.size() >= 2) {
      gj["winner"] = ok[0]->variant();
      gj["winner_time_s"] = ok[0]->t;
      gj["runner_up"] = ok[1]->variant();
      gj["runner_up_time_s"] = ok[1]->t;
      gj["margin_ratio"] = ok[1]->t / ok[0]->t;
      gj["significant"] = apart(*ok[0], *ok[1]);
    } else {
      gj["winner"] = ok.empty() ? Json(nullptr) : Json(ok[0]->variant());
      gj["winner_time_s"] = ok.empty() ? Json(nullptr) : Json(ok[0]->t);
      gj["runner_up"] = nullptr;
      gj["runner_up_time_s"] = nullptr;
      gj["margin_ratio"] = nullptr;
      gj["significant"] = false;
    }
    out.push_back(gj);
  }
}

// Crossovers of the points `pts` of experiment `exp` along `axis`, slice by slice, for every pair of variants.
void add_crossovers_along(const RunView& v, const std::string& exp, const std::vector<const Pt*>& pts,
                          const std::vector<std::string>& variants, const std::string& axis, bool is_size_axis,
                          Json& out) {
  // Numeric in every point of this experiment?
  bool integers = true;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const Pt* p : pts) {
    const Json& x = axis_value(p->axes(), axis);
    if (x.is_null() || !std::isfinite(axis_number(x))) return;
    integers = integers && x.is_number_integer();
    lo = std::min(lo, axis_number(x));
    hi = std::max(hi, axis_number(x));
  }
  if (!(hi > lo)) return;
  const bool log_scale = integers && lo > 0 && hi / lo >= 100;
  // slice → variant → x → point
  std::vector<std::string> slice_order;
  std::map<std::string, std::map<std::string, std::map<double, const Pt*>>> slices;
  for (const Pt* p : pts) {
    if (!p->usable) continue;
    const std::string s = axes_key(p->axes(), axis);
    if (!slices.count(s)) slice_order.push_back(s);
    slices[s][p->variant()][axis_number(axis_value(p->axes(), axis))] = p;
  }
  std::vector<std::string> fixed_names;
  for (const auto& k : v.varying)
    if (k != axis) fixed_names.push_back(k);
  for (const auto& s : slice_order) {
    auto& by_variant = slices[s];
    for (std::size_t a = 0; a < variants.size(); ++a)
      for (std::size_t b = a + 1; b < variants.size(); ++b) {
        const auto ia = by_variant.find(variants[a]), ib = by_variant.find(variants[b]);
        if (ia == by_variant.end() || ib == by_variant.end()) continue;
        std::vector<std::pair<const Pt*, const Pt*>> common;
        for (const auto& [x, pa] : ia->second) {
          auto jb = ib->second.find(x);
          if (jb != ib->second.end()) common.emplace_back(pa, jb->second);
        }
        for (std::size_t i = 0; i + 1 < common.size(); ++i) {
          const auto [a0, b0] = common[i];
          const auto [a1, b1] = common[i + 1];
          const double y0 = std::log(a0->t / b0->t), y1 = std::log(a1->t / b1->t);
          if (!(y0 * y1 < 0)) continue;
          const Json& v0 = axis_value(a0->axes(), axis);
          const Json& v1 = axis_value(a1->axes(), axis);
          const double x0 = axis_number(v0), x1 = axis_number(v1);
          const double w = y0 / (y0 - y1);  // fraction of the way from x0 to x1 where the log ratio is 0
          const double at = log_scale ? std::exp(std::log(x0) + w * (std::log(x1) - std::log(x0))) : x0 + w * (x1 - x0);
          // y < 0: variant a is faster.
          const std::string below = y0 < 0 ? variants[a] : variants[b];
          const std::string above = y0 < 0 ? variants[b] : variants[a];
          const bool sig0 = y0 < 0 ? apart(*a0, *b0) : apart(*b0, *a0);
          const bool sig1 = y1 < 0 ? apart(*a1, *b1) : apart(*b1, *a1);
          const std::string fixed = format_axes(a0->axes(), fixed_names);
          const double r0 = std::exp(std::fabs(y0)), r1 = std::exp(std::fabs(y1));
          const std::string text = above + " overtakes " + below + " between " + axis + " " + format_axis_value(v0) +
                                   " and " + format_axis_value(v1) + ", at ≈ " + format_number(at) +
                                   (fixed.empty() ? "" : " (" + fixed + ")") + ": " + below + " " +
                                   fmt::format("{:.2f}", r0) + "× faster at " + format_axis_value(v0) + ", " + above +
                                   " " + fmt::format("{:.2f}", r1) + "× faster at " + format_axis_value(v1);
          Json fixed_j = Json::object();
          for (const auto& k : fixed_names)
            if (a0->axes().contains(k)) fixed_j[k] = a0->axes()[k];
          out.push_back(Json{{"run", v.id},
                             {"experiment", exp},
                             {"axis", axis},
                             {"size_axis", is_size_axis},
                             {"scale", log_scale ? "log" : "linear"},
                             {"between", Json::array({v0, v1})},
                             {"at", at},
                             {"faster_below", below},
                             {"faster_above", above},
                             {"ratio_below", r0},
                             {"ratio_above", r1},
                             {"fixed", fixed_j},
                             {"significant", sig0 && sig1},
                             {"text", text}});
        }
      }
  }
}

void add_crossovers(const RunView& v, const std::map<std::string, std::string>& size_axes, Json& out) {
  std::vector<std::string> experiments;
  for (const auto& p : v.points)
    if (std::find(experiments.begin(), experiments.end(), p.experiment()) == experiments.end())
      experiments.push_back(p.experiment());
  for (const auto& exp : experiments) {
    std::vector<const Pt*> pts;
    std::vector<std::string> variants;
    for (const auto& p : v.points)
      if (p.experiment() == exp) {
        pts.push_back(&p);
        if (std::find(variants.begin(), variants.end(), p.variant()) == variants.end()) variants.push_back(p.variant());
      }
    const auto declared = size_axes.find(exp);
    const std::string size_axis = declared == size_axes.end() ? std::string() : declared->second;
    for (const auto& axis : v.varying)
      // With a declared size axis, only along it: the other axes are the slices.
      if (size_axis.empty() || axis == size_axis)
        add_crossovers_along(v, exp, pts, variants, axis, !size_axis.empty(), out);
  }
}

// Sets a hypothesis's verdict and reason. On the host backend the verdict says so, and what the host data says
// moves to host_verdict.
void set_verdict(Json& hj, bool host, const std::string& verdict, const std::string& reason) {
  if (host) {
    hj["verdict"] = "host_only";
    hj["host_verdict"] = verdict;
    hj["reason"] =
        "host backend: the timings are the host CPU's and say nothing about the GPU prediction (run "
        "on a GPU backend for a verdict); the host data alone: " +
        verdict + ", " + reason;
  } else {
    hj["verdict"] = verdict;
    hj["host_verdict"] = nullptr;
    hj["reason"] = reason;
  }
}

// What the matching points of one hypothesis say: the ratio than / faster at each point where both ran ok inside
// `when`, and the points skipped because a side was not ok or suspect.
struct HypothesisTally {
  std::vector<double> ratios;
  Json points = Json::array(), counter = Json::array();  // every compared point; those that failed
  std::size_t passed = 0, skipped = 0;
  std::map<std::string, int> skip_why;  // "variant status" → count
  const Pt *min_p = nullptr, *max_p = nullptr;
  double rmin = std::numeric_limits<double>::infinity(), rmax = -rmin;
};

// The fraction of the matched points that met by_at_least; NaN with none matched.
double fraction_passed(const HypothesisTally& t) {
  const std::size_t matched = t.ratios.size();
  return matched ? static_cast<double>(t.passed) / static_cast<double>(matched) : kNaN;
}

// Does the point lie inside the hypothesis's `when` (every condition met by an axis it has)?
bool inside_when(const Pt& p, const Json& when) { return labrun::inside_when(p.axes(), when); }

// Counts a pair of points one of whose sides is not usable, by variant and status.
void tally_skipped(const Pt* A, const Pt* B, HypothesisTally& t) {
  ++t.skipped;
  for (const Pt* p : {A, B})
    if (!p->usable)
      ++t.skip_why[p->variant() + " " +
                   (p->rec->status == Status::ok ? std::string("suspect") : to_string(p->rec->status))];
}

// Adds the ratio of a usable pair (A of `faster`, B of `than`) and whether it meets `by`.
void tally_ratio(const Pt* A, const Pt* B, double by, HypothesisTally& t) {
  const double r = B->t / A->t;
  const bool pass = r >= by;
  t.passed += pass;
  t.ratios.push_back(r);
  Json pj{{"id_faster", A->rec->id}, {"id_than", B->rec->id}, {"key", A->rec->key}, {"axes", A->axes()}, {"ratio", r},
          {"passed", pass}};
  if (!pass) t.counter.push_back(pj);
  t.points.push_back(pj);
  if (r < t.rmin) {
    t.rmin = r;
    t.min_p = A;
  }
  if (r > t.rmax) {
    t.rmax = r;
    t.max_p = A;
  }
}

// The tally of a well-formed hypothesis over the run's groups, in group order.
HypothesisTally tally_hypothesis(const RunView& v, const Hypothesis& h) {
  HypothesisTally t;
  for (const auto& g : v.group_order) {
    const Pt *A = nullptr, *B = nullptr;
    for (const Pt* p : v.groups.at(g)) {
      if (p->variant() == h.faster) A = p;
      if (p->variant() == h.than) B = p;
    }
    if (!A || !B || !inside_when(*A, h.when)) continue;
    if (!A->usable || !B->usable) tally_skipped(A, B, t);
    else tally_ratio(A, B, h.by_at_least, t);
  }
  return t;
}

// The verdict (confirmed | refuted | inconclusive) of a tally and its reason.
std::pair<std::string, std::string> hypothesis_verdict(const Hypothesis& h, const HypothesisTally& t) {
  const std::string& fa = h.faster;
  const std::string& th = h.than;
  const std::size_t matched = t.ratios.size(), passed = t.passed;
  const double frac = fraction_passed(t);
  const std::string claim = fa + " faster than " + th + " by ≥ " + format_number(h.by_at_least) + "×";
  if (matched == 0)
    return {"inconclusive",
            "no point where both " + fa + " and " + th + " ran ok inside `when`" +
                (t.skipped ? " (" + std::to_string(t.skipped) + " such points had one side not ok or suspect)" : "")};
  if (frac >= kT.confirm_fraction)
    return {"confirmed", claim + " at " + std::to_string(passed) + " of " + std::to_string(matched) +
                             " matching points (" + format_percent(frac) + ", threshold " +
                             format_percent(kT.confirm_fraction) + ")"};
  if (frac < kT.refute_fraction)
    return {"refuted", claim + " at only " + std::to_string(passed) + " of " + std::to_string(matched) +
                           " matching points (" + format_percent(frac) + ", below " +
                           format_percent(kT.refute_fraction) + ")"};
  return {"inconclusive", "mixed evidence: " + claim + " at " + std::to_string(passed) + " of " +
                              std::to_string(matched) + " matching points (" + format_percent(frac) + ", between " +
                              format_percent(kT.refute_fraction) + " and " + format_percent(kT.confirm_fraction) + ")"};
}

// Writes the tally's counts, ratios, extreme points and point lists after the verdict.
void write_tally(const HypothesisTally& t, Json& hj) {
  const std::size_t matched = t.ratios.size();
  hj["matched"] = matched;
  hj["passed"] = t.passed;
  hj["skipped"] = t.skipped;
  hj["skipped_because"] = t.skip_why.empty() ? Json::object() : Json(t.skip_why);
  hj["fraction_passed"] = opt(fraction_passed(t));
  hj["ratio_min"] = matched ? Json(t.rmin) : Json(nullptr);
  hj["ratio_median"] = opt(median_of(t.ratios));
  hj["ratio_max"] = matched ? Json(t.rmax) : Json(nullptr);
  hj["min_point"] = t.min_p ? point_ref(*t.min_p) : Json(nullptr);
  hj["max_point"] = t.max_p ? point_ref(*t.max_p) : Json(nullptr);
  hj["counterexamples"] = t.counter;
  hj["points"] = t.points;
}

// The verdict of the data (confirmed | refuted | inconclusive) with its reason, and the fields that say why.
void add_hypotheses(const RunView& v, Json& out) {
  const Json& hyp = v.run->header.hypothesis();
  if (hyp.is_null()) return;
  const Json list = hyp.is_array() ? hyp : Json::array({hyp});
  const bool host = v.backend == "host";
  // A config holds at most 1000 claims (docs/config.md); a header written otherwise (an older labrun, an edit) is
  // judged as far as that, so a small file cannot make a report do work far beyond its size (case H15).
  constexpr std::size_t kMaxClaims = 1000;
  for (std::size_t index = 0; index < list.size() && index < kMaxClaims; ++index) {
    const Hypothesis h = hypothesis_from_json(list[index]);
    Json hj{{"run", v.id}, {"index", index}};
    hj["faster"] = h.faster;
    hj["than"] = h.than;
    hj["when"] = h.when;
    hj["by_at_least"] = h.by_at_least;
    if (h.faster.empty() || h.than.empty()) {
      set_verdict(hj, host, "inconclusive", "malformed hypothesis: it needs `faster` and `than` variant names");
      hj["matched"] = 0;
      hj["passed"] = 0;
      hj["skipped"] = 0;
      hj["points"] = Json::array();
    } else {
      const HypothesisTally t = tally_hypothesis(v, h);
      const auto [verdict, reason] = hypothesis_verdict(h, t);
      set_verdict(hj, host, verdict, reason);
      write_tally(t, hj);
    }
    out.push_back(hj);
  }
  if (list.size() > kMaxClaims) {
    Json hj{{"run", v.id}, {"index", kMaxClaims},    {"faster", ""},
            {"than", ""},  {"when", Json::object()}, {"by_at_least", nullptr}};
    set_verdict(hj, host, "inconclusive",
                fmt::format("{} more claims in the run's header were not judged: a report judges the first {} "
                            "(a config holds at most {})",
                            list.size() - kMaxClaims, kMaxClaims, kMaxClaims));
    hj["matched"] = 0;
    hj["passed"] = 0;
    hj["skipped"] = 0;
    hj["points"] = Json::array();
    out.push_back(hj);
  }
}

}  // namespace

Json analyze(const ResultSet& results, const std::map<std::string, std::string>& size_axes) {
  Json runs_j = Json::array(), groups_j = Json::array(), cross_j = Json::array(), hyp_j = Json::array();
  for (std::size_t ri = 0; ri < results.runs.size(); ++ri) {
    const RunView v = view_of(results.runs[ri], static_cast<int>(ri));
    runs_j.push_back(run_summary(v));
    add_groups(v, groups_j);
    add_crossovers(v, size_axes, cross_j);
    add_hypotheses(v, hyp_j);
  }
  Json out = Json::object();
  out["runs"] = runs_j;
  out["groups"] = groups_j;
  out["crossovers"] = cross_j;
  out["hypotheses"] = hyp_j;
  return out;
}

Json analyze(const std::vector<Json>& records, const std::map<std::string, std::string>& size_axes) {
  ResultSet results;
  for (const auto& r : records) {
    if (!r.is_object()) continue;
    const auto type = r.find("type");
    if (type == r.end() || !type->is_string()) continue;
    if (*type == "header") {
      Run run;
      run.header.json = r;
      run.has_header = true;
      results.runs.push_back(std::move(run));
    } else if (*type == "point") {
      if (results.runs.empty()) results.runs.push_back(Run{});
      results.runs.back().points.push_back(point_from_json_tolerant(r));
    }
  }
  return analyze(results, size_axes);
}

bool inside_when(const Json& axes, const Json& when) {
  if (!when.is_object()) return true;
  for (const auto& [axis, cond] : when.items()) {
    const Json& x = axis_value(axes, axis);
    if (x.is_null() || !matches(x, cond)) return false;
  }
  return true;
}

bool is_when_range(const Json& cond) {
  return cond.is_array() && cond.size() == 2 && cond[0].is_number() && cond[1].is_number();
}

std::string when_phrases(const Json& when, const WhenWords& words) {
  if (!when.is_object() || when.empty()) return words.none;
  std::string out;
  for (const auto& [axis, cond] : when.items()) {
    std::string phrase;
    if (is_when_range(cond))
      phrase = axis + words.range_open + words.value(cond[0]) + ", " + words.value(cond[1]) + words.range_close;
    else if (cond.is_array()) {
      phrase = axis + words.list_open;
      for (std::size_t i = 0; i < cond.size(); ++i) phrase += (i ? ", " : "") + words.value(cond[i]);
      phrase += words.list_close;
    } else {
      phrase = axis + " = " + words.value(cond);
    }
    out += (out.empty() ? "" : ", ") + phrase;
  }
  return out;
}

std::string describe_when(const Json& when) {
  const auto value = [](const Json& v) { return v.is_string() ? v.get<std::string>() : v.dump(); };
  return when_phrases(when,
                      {value, " in [", "] (a range: a list of two numbers is one)", " one of ", "", "every point"});
}

}  // namespace labrun
