// labrun history: the steps of many points gathered into groups at one commit (history_steps.hpp): seeded at the
// commit with the most steps of one direction, shaped from the members' mean, joined by nearby steps, moved, then
// split by their environment label; then the steps put in order, the groups summarised and the newest commit judged.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "history_steps.hpp"

namespace labrun::history_detail {

namespace {

using namespace history_fit;

/// The chi-square(1) quantile 0.999: a step joins a group at another commit when moving it there costs at most
/// this in (residual sum of squares) / variance, the likelihood-ratio confidence set of a change's position.
constexpr double kLocationChi2 = 10.828;
/// How far (commits) from a group's commit (or drift) a step may lie and still be tested for joining it.
constexpr std::size_t kReach = 6;
/// How many of a group's members must survive their ceiling taken out for the group's members without a ceiling
/// to count as the code's at another card of the same kind.
constexpr std::size_t kMinNormalizedMembers = 3;

// ---- Groups: the steps of many points at one commit -----------------------------------------------------------------

/// A new group from the steps not yet `taken`: the commit with the most steps of one direction, with the steps
/// within one commit of it (marked taken). nullopt when every step is taken.
std::optional<HistoryGroup> seed_group(const std::vector<HistoryStep>& all, std::vector<bool>& taken) {
  std::map<std::pair<std::size_t, bool>, std::size_t> count;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (!taken[i]) ++count[{all[i].after, all[i].ratio > 1}];
  if (count.empty()) return std::nullopt;
  auto best = count.begin();
  for (auto it = count.begin(); it != count.end(); ++it)
    if (it->second > best->second) best = it;
  const auto [commit, slower] = best->first;
  HistoryGroup g;
  g.slower = slower;
  g.after = commit;
  for (std::size_t i = 0; i < all.size(); ++i)
    if (!taken[i] && (all[i].ratio > 1) == slower && all[i].after + 1 >= commit && all[i].after <= commit + 1) {
      g.steps.push_back(i);
      taken[i] = true;
    }
  return g;
}

/// The members' mean shape: each member's series scaled to 0 before and 1 after, averaged per commit over the
/// commits every member's stretch covers; its best step (or drift) is the group's commit. False (g unchanged)
/// when the group has fewer than 3 members or the shape fewer than 3 commits.
bool shape_from_mean(HistoryGroup& g, const HistoryResult& h, const std::vector<PointFit>& fits,
                     const FoundSteps& found) {
  if (g.steps.size() < 3) return false;
  std::size_t lo = 0, hi = h.commits.size();
  std::vector<double> sum(h.commits.size(), 0.0);
  std::vector<std::size_t> n(h.commits.size(), 0);
  for (std::size_t i : g.steps) {
    const PointFit& f = fits[found.all[i].series];
    const auto [prev, s, e, next] = found.spans[i];
    const double left = f.mean(prev, s), right = f.mean(e, next);
    if (!(std::fabs(right - left) > 0)) continue;
    lo = std::max(lo, f.obs[prev].commit);
    hi = std::min(hi, f.obs[next - 1].commit + 1);
    for (std::size_t j = prev; j < next; ++j) {
      sum[f.obs[j].commit] += (f.obs[j].y - left) / (right - left);
      ++n[f.obs[j].commit];
    }
  }
  std::vector<double> shape;
  std::vector<std::size_t> at;
  for (std::size_t c = lo; c < hi; ++c)
    if (n[c] > 0) {
      shape.push_back(sum[c] / static_cast<double>(n[c]));
      at.push_back(c);
    }
  if (shape.size() < 3) return false;
  // The existence of the change is settled by the members; this is its shape, tested at alpha.
  const Shape sh = fit_shape(shape, 0, shape.size(), h.options.max_drift_commits, 0, 0, h.options.alpha, true);
  g.after = at[sh.e];
  g.start = at[sh.drift ? sh.s : sh.e];
  g.before = at[(sh.drift ? sh.s : sh.e) - 1];
  g.kind = sh.drift ? StepKind::drift : StepKind::step;
  return true;
}

/// The group's commit without a mean shape: the most common commit of the members, the first member's shape there.
void shape_from_members(HistoryGroup& g, const std::vector<HistoryStep>& all) {
  std::map<std::size_t, std::size_t> c;
  for (std::size_t i : g.steps) ++c[all[i].after];
  std::size_t most = 0;
  for (const auto& [commit2, k] : c)
    if (k > most) {
      most = k;
      g.after = commit2;
    }
  for (std::size_t i : g.steps)
    if (all[i].after == g.after) {
      g.before = all[i].before;
      g.start = all[i].start;
      g.kind = all[i].kind;
      break;
    }
}

/// The steps of this direction nearby whose own data are consistent with the group's commit join it: the
/// profile likelihood of the change's position (Siegmund 1988), (RSS at the group's shape - RSS at its own
/// position) / variance <= the chi-square(1) 99.9% point. A noisy point places a 4% step a few commits off.
void join_nearby(HistoryGroup& g, const std::vector<PointFit>& fits, const FoundSteps& found,
                 std::vector<bool>& taken) {
  const std::vector<HistoryStep>& all = found.all;
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (taken[i] || (all[i].ratio > 1) != g.slower) continue;
    if (all[i].after + kReach < g.start || all[i].after > g.after + kReach) continue;
    const PointFit& f = fits[all[i].series];
    const auto [prev, s0, e0, next] = found.spans[i];
    std::size_t e = prev, s = prev;
    while (e < next && f.obs[e].commit < g.after) ++e;
    while (s < next && f.obs[s].commit < g.start) ++s;
    if (s <= prev || e >= next || s > e) continue;
    std::vector<double> y(f.n());
    for (std::size_t j = 0; j < f.n(); ++j) y[j] = f.obs[j].y;
    const std::vector<std::size_t> b = f.bounds();
    const auto var = run_variance(f, f.model_ss(b), b.size() - 1);
    if (!var) continue;
    const double own = ramp_rss(y, prev, next, s0, e0), there = ramp_rss(y, prev, next, s, e);
    if (std::isfinite(own) && std::isfinite(there) && (there - own) / var->first <= kLocationChi2) {
      g.steps.push_back(i);
      taken[i] = true;
    }
  }
}

/// The members take the group's commits (their own last run before it), and their label is looked at again.
void move_members(const HistoryGroup& g, const std::vector<HistoryCommit>& commits, const std::vector<PointFit>& fits,
                  FoundSteps& found) {
  for (std::size_t i : g.steps) {
    HistoryStep& st = found.all[i];
    const PointFit& f = fits[st.series];
    std::size_t e = 0, s = 0;
    while (e < f.n() && f.obs[e].commit < g.after) ++e;
    while (s < f.n() && f.obs[s].commit < g.start) ++s;
    if (e == 0 || e >= f.n() || s == 0 || s > e) continue;  // the member has no run there: it keeps its own
    st.kind = g.kind;
    st.after = f.obs[e].commit;
    st.start = f.obs[s].commit;
    st.before = f.obs[s - 1].commit;
    relabel(commits, st, found.normalized_env[i]);
  }
}

/// Members with no ceiling to take out (latency- and sync-bound points, unknown bound) whose only environment
/// change is another card (or host) of the same kind: the members that could be normalised decide for the
/// group. When most of them, and at least kMinNormalizedMembers, stay beyond the minimum effect with their
/// ceiling taken out, the machine did not make this group's step, and the others are the code's too.
void settle_instance_labels(const HistoryGroup& g, const std::vector<HistoryCommit>& commits,
                            std::vector<HistoryStep>& all) {
  std::size_t normalizable = 0, survived = 0;
  for (std::size_t i : g.steps)
    if (all[i].normalized_ratio) {
      ++normalizable;
      survived += !all[i].environment && !all[i].instance_change.empty();
    }
  // And the other way: when most vanish, the machine moved the whole run, and a member that stayed is the
  // environment's too (a noisy point's normalised step can stay significant by chance).
  if (normalizable >= kMinNormalizedMembers && 2 * survived <= normalizable)
    for (std::size_t i : g.steps) {
      HistoryStep& st = all[i];
      if (st.environment || st.instance_change.empty()) continue;
      st.environment = true;
      st.environment_reason = fmt::format(
          "{} (only {} of the group's {} normalisable members stay beyond the "
          "minimum effect with their ceiling taken out)",
          st.instance_change, survived, normalizable);
      st.instance_change.clear();
    }
  if (survived >= kMinNormalizedMembers && 2 * survived > normalizable)
    for (std::size_t i : g.steps) {
      HistoryStep& st = all[i];
      if (!st.environment || st.normalized_ratio) continue;
      const SpanChange span = span_change(commits, st.before, st.after);
      if (!span.instance_only) continue;
      st.environment = false;
      st.environment_reason.clear();
      st.instance_change = fmt::format(
          "{} ({} of the group's {} normalisable members stay beyond the minimum "
          "effect with their ceiling taken out)",
          span.change, survived, normalizable);
    }
}

/// Adds `g` to `groups` split by its members' labels: the code's, then the tool's, then the environment's (each
/// part only when it has members).
void split_by_label(const HistoryGroup& g, std::vector<HistoryStep>& all, std::vector<HistoryGroup>& groups) {
  HistoryGroup env = g, code = g, tool = g;
  env.steps.clear();
  code.steps.clear();
  tool.steps.clear();
  env.environment = true;
  tool.tool = true;
  for (std::size_t i : g.steps) {
    all[i].tool = !all[i].environment && !all[i].tool_change.empty();  // the environment label may have moved
    (all[i].environment ? env : all[i].tool ? tool : code).steps.push_back(i);
  }
  for (HistoryGroup* part : {&code, &tool, &env})
    if (!part->steps.empty()) groups.push_back(std::move(*part));
}

}  // namespace

std::vector<HistoryGroup> group_steps(const HistoryResult& h, const std::vector<PointFit>& fits, FoundSteps& found) {
  std::vector<bool> taken(found.all.size(), false);
  std::vector<HistoryGroup> groups;
  while (std::optional<HistoryGroup> seeded = seed_group(found.all, taken)) {
    HistoryGroup& g = *seeded;
    if (!shape_from_mean(g, h, fits, found)) shape_from_members(g, found.all);
    join_nearby(g, fits, found, taken);
    move_members(g, h.commits, fits, found);
    settle_instance_labels(g, h.commits, found.all);
    split_by_label(g, found.all, groups);
  }
  return groups;
}

namespace {

// ---- The result: steps in order, groups summarised, the newest commit judged ----------------------------------------

/// A group's sizes (median, min, max ratio) and bound classes (most members first), from h.steps.
void summarise_group(HistoryGroup& g, const HistoryResult& h) {
  std::vector<double> ratios;
  std::map<std::string, std::size_t> bounds;
  for (std::size_t i : g.steps) {
    ratios.push_back(h.steps[i].ratio);
    const std::string& bnd = h.series[h.steps[i].series].bound;
    ++bounds[bnd.empty() ? "unknown" : bnd];
  }
  g.median_ratio = median(ratios);
  g.min_ratio = *std::min_element(ratios.begin(), ratios.end());
  g.max_ratio = *std::max_element(ratios.begin(), ratios.end());
  for (const auto& kv : bounds) g.bounds.push_back(kv);
  std::stable_sort(g.bounds.begin(), g.bounds.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  g.bound = g.bounds.size() == 1 ? g.bounds.front().first : "mixed";
}

}  // namespace

/// Sets h.steps (in commit order, then by size) and h.groups (their indices remapped, summarised, by commit then
/// size).

void order_steps(const std::vector<HistoryStep>& all, std::vector<HistoryGroup> groups, HistoryResult& h) {
  std::vector<std::size_t> order(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (all[a].after != all[b].after) return all[a].after < all[b].after;
    return std::fabs(std::log(all[a].ratio)) > std::fabs(std::log(all[b].ratio));
  });
  std::vector<std::size_t> where(all.size());
  for (std::size_t i = 0; i < order.size(); ++i) {
    where[order[i]] = i;
    h.steps.push_back(all[order[i]]);
  }
  for (HistoryGroup& g : groups) {
    for (std::size_t& i : g.steps) i = where[i];
    std::sort(g.steps.begin(), g.steps.end());
    summarise_group(g, h);
  }
  std::stable_sort(groups.begin(), groups.end(), [](const HistoryGroup& a, const HistoryGroup& b) {
    if (a.after != b.after) return a.after < b.after;
    return a.steps.size() > b.steps.size();
  });
  h.groups = std::move(groups);
}

/// Notes the steps labelled code although they coincide with another GPU (or host) of the same kind.
void note_instance_steps(HistoryResult& h) {
  std::size_t instance_only = 0;
  for (const HistoryStep& st : h.steps) instance_only += !st.environment && !st.instance_change.empty();
  if (instance_only > 0)
    h.notes.push_back(fmt::format(
        "{} step(s) coincide with another GPU (or host) of the same model, driver, runtime and build type and stay "
        "beyond the minimum effect with each run's calibrated ceiling taken out (theirs, or for points without one "
        "their group's): labelled code, not environment (instance_change in the json)",
        instance_only));
}

/// Sets h.newest (the groups with a step at the newest commit) and h.fail per options.fail_on.
void judge_newest(HistoryResult& h) {
  const HistoryOptions& o = h.options;
  const std::size_t newest = h.commits.size() - 1;
  for (std::size_t gi = 0; gi < h.groups.size(); ++gi) {
    const HistoryGroup& g = h.groups[gi];
    bool at_newest = g.after == newest;
    for (std::size_t i : g.steps) at_newest = at_newest || h.steps[i].after == newest;
    if (!at_newest) continue;
    h.newest.push_back(gi);
    if (o.fail_on == HistoryOptions::FailOn::any) h.fail = true;
    for (std::size_t i : g.steps)
      if (h.steps[i].after == newest && h.steps[i].ratio > 1 && !h.steps[i].environment && !h.steps[i].tool)
        h.fail = true;
  }
  for (const auto& sc : h.status_changes)
    if (sc.after == newest && (o.fail_on == HistoryOptions::FailOn::any || is_failure(sc.to))) h.fail = true;
}

}  // namespace labrun::history_detail
