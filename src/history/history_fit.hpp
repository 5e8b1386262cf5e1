// labrun history, one point's model: its run levels as observations, the binary segmentation that splits them
// (with the false discovery rate held over all points) and the shape (step or drift) of a change. Used by
// history.cpp; docs/history.md has the formulas and sources.
#pragma once

#include <algorithm>
#include <cstddef>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "history.hpp"

namespace labrun::history_fit {

/// One usable run of a point: its level and the variance of that level from its processes.
struct Obs {
  double y = 0, v = 0;
  std::size_t k = 1;    ///< processes
  std::size_t run = 0;  ///< index into the series' runs
  std::size_t commit = 0;
  std::size_t segment = 0;  ///< the commit's stretch of equal lab settings
};

/// A split kept by the segmentation.
struct Split {
  double p_value = 1, q_value = 1;
};

/// The best split of a stretch [a, b) of observations.
struct Candidate {
  std::size_t point = 0, a = 0, b = 0, tau = 0;
  double t = 0, df = 0, p_single = 1, p_scan = 1;
};

/// What every point's run variance borrows from the others: a prior variance of a run's level and its weight in
/// degrees of freedom (VariancePrior below).
struct VariancePrior {
  double var = 0, df = 0;
};

/// One point's levels as the segmentation sees them: the observations, their prefix sums, the variance their
/// processes give, and the boundaries (forced by the lab settings, or splits found).
struct PointFit {
  std::vector<Obs> obs;
  VariancePrior prior;                  ///< shared by the points of the history
  std::vector<double> s1{0}, s2{0};     ///< prefix sums of y and y²
  double vbar = 0;                      ///< mean v: the variance a run's level has from its processes alone
  double process_df = 0;                ///< sum of (k - 1): the degrees of freedom behind vbar
  std::set<std::size_t> forced;         ///< boundaries where the lab settings change (no step sought across)
  std::map<std::size_t, Split> splits;  ///< boundaries found: obs position of the first run after

  std::size_t n() const { return obs.size(); }
  double sum(std::size_t a, std::size_t b) const { return s1[b] - s1[a]; }
  double mean(std::size_t a, std::size_t b) const { return sum(a, b) / static_cast<double>(b - a); }
  /// Residual sum of squares of [a, b) about its mean.
  double ss(std::size_t a, std::size_t b) const {
    if (b <= a + 1) return 0;
    const double s = sum(a, b);
    return std::max(0.0, s2[b] - s2[a] - s * s / static_cast<double>(b - a));
  }
  /// Every boundary, 0 and n included, sorted.
  std::vector<std::size_t> bounds() const {
    std::set<std::size_t> all(forced.begin(), forced.end());
    for (const auto& [at, s] : splits) all.insert(at);
    all.insert(0);
    all.insert(n());
    return {all.begin(), all.end()};
  }
  double model_ss(const std::vector<std::size_t>& b) const {
    double total = 0;
    for (std::size_t i = 0; i + 1 < b.size(); ++i) total += ss(b[i], b[i + 1]);
    return total;
  }
};

/// The variance of one run's level and its degrees of freedom, for a model with residual sum of squares `ss` over
/// `segments` stretches: the residual variance (df n - segments) moderated by the prior the points share (its df
/// added), floored at the processes' vbar. nullopt when neither can be estimated.
std::optional<std::pair<double, double>> run_variance(const PointFit& f, double ss, std::size_t segments);

/// The prior of the run variances the points share, from the first differences of every point's levels (a
/// moderated t, Smyth 2004; history_fit.cpp says how).
VariancePrior variance_prior(const std::vector<PointFit>& fits);

/// The best split of [a, b) (the largest |t| of the two stretches' mean levels), given the point's current model
/// with residual sum of squares `model` over `segments` stretches; nullopt when [a, b) cannot be split or tested.
std::optional<Candidate> best_split(const PointFit& f, std::size_t a, std::size_t b, double model,
                                    std::size_t segments);

/// Least squares of y = L (1 - w) + R w over the observations [a, b) of `y`, with w 0 before `s`, (j - s + 1) /
/// (e - s + 1) for s <= j < e and 1 from e on (a step at e when s == e). Returns the residual sum of squares.
double ramp_rss(const std::vector<double>& y, std::size_t a, std::size_t b, std::size_t s, std::size_t e,
                double* left = nullptr, double* right = nullptr);

/// The shape of a change in [a, b): the best step (s == e) and the best ramp of 3 to max_commits runs, and whether
/// the ramp fits significantly better (F test with variance `var` and `df` degrees of freedom, at `level`).
struct Shape {
  std::size_t s = 0, e = 0;  ///< observation positions: first off the old level, first at the new one
  bool drift = false;
  double p = 1;  ///< the ramp's F-test p (1 for a step)
};

/// The shape of the change in [a, b) of `y` (Shape above); with `own_variance`, `var` and `df` are the ramp's own
/// residual variance instead of those given.
Shape fit_shape(const std::vector<double>& y, std::size_t a, std::size_t b, std::size_t max_commits, double var,
                double df, double level, bool own_variance = false);

// ---- Segmentation: the splits of every point ------------------------------------------------------------------------

/// The best split of each stretch of point `si` between its current boundaries.
std::vector<Candidate> point_candidates(const std::vector<PointFit>& fits, std::size_t si);

/// Round 1: every stretch of every point, BH over them; keeps the splits that pass. Sets `candidates` (the BH
/// family's size) and `passed` (the points with a split kept); returns the later rounds' inflation m / R.
double first_round(std::vector<PointFit>& fits, const HistoryOptions& o, std::size_t& candidates,
                   std::set<std::size_t>& passed);

/// Later rounds: the points whose first split passed (`dirty`), at alpha R / m (Benjamini & Bogomolov 2014), until
/// no point gains a split.
void later_rounds(std::vector<PointFit>& fits, const HistoryOptions& o, double inflate, std::set<std::size_t> dirty);

/// One pass, in order: each split of `f` moves to the best position between its neighbours (order is kept, since
/// each stays strictly between them).
void move_splits(PointFit& f);

}  // namespace labrun::history_fit
