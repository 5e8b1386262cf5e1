// labrun history, one point's model (history_fit.hpp): run variances, the shared prior, the best split of a
// stretch, ramps and steps, and the rounds of binary segmentation over all points.
#include "history_fit.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "stats.hpp"

namespace labrun::history_fit {
namespace {

/// The most degrees of freedom a point borrows from the others: the points of a history need not share one
/// variance (a host-sensitive point is noisier than a bandwidth-bound one), so the prior weighs at most as much
/// as this many runs of the point's own.
constexpr double kPriorMaxDf = 4;

/// The asymptotic efficiency of a median-based variance estimate relative to the mean of squares, for normal
/// data: 0.37 (the MAD's, Rousseeuw & Croux, "Alternatives to the median absolute deviation", JASA 1993). A prior
/// estimated from m differences weighs as much as 0.37·m degrees of freedom of a mean of squares.
constexpr double kMedianEfficiency = 0.37;

}  // namespace

std::optional<std::pair<double, double>> run_variance(const PointFit& f, double ss, std::size_t segments) {
  const double df_e = static_cast<double>(f.n()) - static_cast<double>(segments);
  const double own_df = std::max(df_e, 0.0);
  // Moderated (Smyth 2004, eq. 3): the prior's df·var added to the point's own residual sum of squares.
  const double df_m = own_df + f.prior.df;
  const double s2e = df_m > 0 ? (f.prior.df * f.prior.var + (df_e > 0 ? ss : 0.0)) / df_m : kNoValue;
  if (df_m > 0 && s2e >= f.vbar && s2e > 0) return std::pair{s2e, df_m};
  if (f.vbar > 0) {
    const double df = std::max(df_m, f.process_df);
    if (df >= 1) return std::pair{f.vbar, df};
  }
  return std::nullopt;
}

/// The prior of the run variances (a moderated t in the manner of Smyth, "Linear models and empirical Bayes
/// methods for assessing differential expression in microarray experiments", 2004), from the first differences
/// of every point's levels, as change-point practice estimates the noise (Fryzlewicz, "Wild binary segmentation",
/// 2014: the MAD of differences): a step or a ramp moves one difference or a few of a point's. A difference d of
/// two runs has variance 2σ², and the median of χ²₁ is 0.45494, so s₀² = median(d²) / (2 · 0.45494). A step
/// only ever makes a difference larger, so the differences beyond the null's 99.9th percentile of the estimate so
/// far (d² > 2 s₀² · 10.828, χ²₁'s) are set aside and the median taken again, until none is: steps in a quarter
/// of the differences would otherwise double s₀². Its weight is kMedianEfficiency times the differences kept, at
/// most kPriorMaxDf. Differences across a change of lab settings are left out. No prior (weight 0) from fewer
/// than 2 differences.
VariancePrior variance_prior(const std::vector<PointFit>& fits) {
  std::vector<double> squares;
  for (const PointFit& f : fits)
    for (std::size_t i = 1; i < f.n(); ++i)
      if (!f.forced.count(i)) {
        const double d = f.obs[i].y - f.obs[i - 1].y;
        if (std::isfinite(d)) squares.push_back(d * d);
      }
  double var = 0;
  for (int round = 0; round < 16 && squares.size() >= 2; ++round) {
    var = median(squares) / (2 * 0.45494);
    const double limit = 2 * var * 10.828;
    const auto kept = std::partition(squares.begin(), squares.end(), [&](double q) { return q <= limit; });
    if (kept == squares.end()) break;
    squares.erase(kept, squares.end());
  }
  if (squares.size() < 2 || !(var > 0)) return {};
  return {var, std::min(kMedianEfficiency * static_cast<double>(squares.size()), kPriorMaxDf)};
}

std::optional<Candidate> best_split(const PointFit& f, std::size_t a, std::size_t b, double model,
                                    std::size_t segments) {
  if (b < a + 2) return std::nullopt;
  std::optional<Candidate> best;
  const double rest = model - f.ss(a, b);
  for (std::size_t tau = a + 1; tau < b; ++tau) {
    const double ss_new = rest + f.ss(a, tau) + f.ss(tau, b);
    const auto var = run_variance(f, ss_new, segments + 1);
    if (!var) continue;
    const double n1 = static_cast<double>(tau - a), n2 = static_cast<double>(b - tau);
    const double d = f.mean(tau, b) - f.mean(a, tau);
    const double se = std::sqrt(var->first * (1 / n1 + 1 / n2));
    if (!(se > 0)) continue;
    const double t = d / se;
    if (!best || std::fabs(t) > std::fabs(best->t)) best = Candidate{0, a, b, tau, t, var->second, 1, 1};
  }
  if (best) {
    best->p_single = student_t_two_sided_p(std::fabs(best->t), best->df);
    best->p_scan = std::min(1.0, static_cast<double>(b - a - 1) * best->p_single);
  }
  return best;
}

double ramp_rss(const std::vector<double>& y, std::size_t a, std::size_t b, std::size_t s, std::size_t e, double* left,
                double* right) {
  double A = 0, B = 0, C = 0, Y0 = 0, Y1 = 0, YY = 0;
  for (std::size_t j = a; j < b; ++j) {
    const double w = j < s ? 0.0 : j >= e ? 1.0 : static_cast<double>(j - s + 1) / static_cast<double>(e - s + 1);
    A += (1 - w) * (1 - w);
    B += (1 - w) * w;
    C += w * w;
    Y0 += y[j] * (1 - w);
    Y1 += y[j] * w;
    YY += y[j] * y[j];
  }
  const double det = A * C - B * B;
  if (!(det > 0)) return kNoValue;
  const double L = (C * Y0 - B * Y1) / det, R = (A * Y1 - B * Y0) / det;
  if (left) *left = L;
  if (right) *right = R;
  return std::max(0.0, YY - (L * Y0 + R * Y1));
}

Shape fit_shape(const std::vector<double>& y, std::size_t a, std::size_t b, std::size_t max_commits, double var,
                double df, double level, bool own_variance) {
  Shape step;
  double step_rss = kNoValue;
  for (std::size_t e = a + 1; e < b; ++e) {
    const double r = ramp_rss(y, a, b, e, e);
    if (std::isfinite(r) && (!std::isfinite(step_rss) || r < step_rss)) {
      step_rss = r;
      step.s = step.e = e;
    }
  }
  if (!std::isfinite(step_rss) || max_commits < 3 || (!own_variance && (!(var > 0) || !(df > 0)))) return step;
  Shape ramp;
  double ramp_rss_best = kNoValue;
  double dir = 0;
  ramp_rss(y, a, b, step.e, step.e, &dir);  // L of the step
  double right = 0;
  ramp_rss(y, a, b, step.e, step.e, nullptr, &right);
  dir = right - dir;
  for (std::size_t s = a + 1; s < b; ++s)
    for (std::size_t e = s + 2; e < b && e - s + 1 <= max_commits; ++e) {
      double L = 0, R = 0;
      const double r = ramp_rss(y, a, b, s, e, &L, &R);
      if (!std::isfinite(r) || (R - L) * dir <= 0) continue;
      if (!std::isfinite(ramp_rss_best) || r < ramp_rss_best) {
        ramp_rss_best = r;
        ramp.s = s;
        ramp.e = e;
      }
    }
  if (!std::isfinite(ramp_rss_best) || ramp_rss_best >= step_rss) return step;
  if (own_variance) {  // the ramp's own residual variance (3 parameters: L, R and its place)
    df = static_cast<double>(b - a) - 3;
    var = df > 0 ? ramp_rss_best / df : kNoValue;
    if (!(var > 0)) return step;
  }
  const double F = (step_rss - ramp_rss_best) / var;
  const double p = student_t_two_sided_p(std::sqrt(F), df);
  if (p > level) return step;
  ramp.drift = true;
  ramp.p = p;
  return ramp;
}

std::vector<Candidate> point_candidates(const std::vector<PointFit>& fits, std::size_t si) {
  std::vector<Candidate> out;
  const PointFit& f = fits[si];
  const std::vector<std::size_t> b = f.bounds();
  const double model = f.model_ss(b);
  for (std::size_t i = 0; i + 1 < b.size(); ++i)
    if (auto c = best_split(f, b[i], b[i + 1], model, b.size() - 1)) {
      c->point = si;
      out.push_back(*c);
    }
  return out;
}

double first_round(std::vector<PointFit>& fits, const HistoryOptions& o, std::size_t& candidates,
                   std::set<std::size_t>& passed) {
  std::vector<Candidate> first;
  for (std::size_t si = 0; si < fits.size(); ++si)
    for (const auto& c : point_candidates(fits, si)) first.push_back(c);
  candidates = first.size();
  std::vector<double> raw(first.size());
  for (std::size_t i = 0; i < first.size(); ++i) raw[i] = first[i].p_scan;
  const std::vector<double> q = benjamini_hochberg(raw);
  std::size_t selected = 0;
  for (std::size_t i = 0; i < first.size(); ++i)
    if (q[i] <= o.alpha && first[i].p_scan <= o.alpha_history) {
      fits[first[i].point].splits[first[i].tau] = Split{first[i].p_scan, q[i]};
      passed.insert(first[i].point);
      ++selected;
    }
  return selected > 0 ? static_cast<double>(first.size()) / static_cast<double>(selected) : 1.0;
}

void later_rounds(std::vector<PointFit>& fits, const HistoryOptions& o, double inflate, std::set<std::size_t> dirty) {
  for (std::size_t round = 0; !dirty.empty() && round < 64; ++round) {
    std::set<std::size_t> next;
    for (std::size_t si : dirty)
      for (const auto& c : point_candidates(fits, si)) {
        const double qv = std::min(1.0, c.p_scan * inflate);
        if (qv <= o.alpha && c.p_scan <= o.alpha_history) {
          fits[si].splits[c.tau] = Split{c.p_scan, qv};
          next.insert(si);
        }
      }
    dirty = std::move(next);
  }
}

void move_splits(PointFit& f) {
  std::vector<std::size_t> positions;
  for (const auto& [at, info] : f.splits) positions.push_back(at);
  for (std::size_t at : positions) {
    const Split info = f.splits.at(at);
    f.splits.erase(at);
    const std::vector<std::size_t> b = f.bounds();
    const auto up = std::upper_bound(b.begin(), b.end(), at);
    const std::size_t prev = *(up - 1), next = *up;
    const auto c = best_split(f, prev, next, f.model_ss(b), b.size() - 1);
    f.splits[c ? c->tau : at] = info;
  }
}

}  // namespace labrun::history_fit
