// labrun diff: a compared point's verdict (docs/diff.md "Verdicts", "Across hosts", "Across GPUs"), and the names
// and options of a diff.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "config.hpp"
#include "diff_parts.hpp"
#include "format.hpp"
#include "stats.hpp"

namespace labrun {
namespace diff_detail {

// ---- Verdicts -------------------------------------------------------------------------------------------------

/// How many processes per side would shrink a process-level interval of log half-width `half` (around log ratio
/// `log_ratio`) inside +-log(up), from `n` processes: the half-width falls as 1/sqrt(n) (the t quantile's fall
/// with the degrees of freedom is ignored, so this is a slight overestimate). 0 when the ratio itself lies
/// beyond the bound (no number of processes makes such a point `same`).
std::size_t processes_needed(double half, double log_ratio, double log_up, std::size_t n) {
  const double room = log_up - std::fabs(log_ratio);
  if (!(room > 0)) return 0;
  return static_cast<std::size_t>(std::ceil(static_cast<double>(n) * (half / room) * (half / room)));
}

bool hosts_differ(const HostAdjusted& h) { return std::fabs(std::log(h.probe_ratio)) > std::log1p(kHostsAlike); }

/// A host-sensitive point whose sides' hosts differ (hosts_differ): the verdict from the host-adjusted change's
/// interval alone (HostAdjusted, analysis of covariance; its width counts the elasticity's uncertainty): wholly
/// beyond the minimum effect, slower/faster; wholly inside, same; else inconclusive, naming the host difference
/// and the change that would have been called. The raw samples are not asked: they moved with the host.
/// A launch path that moved past the processes' spread (HostAdjusted::launch_moved) withholds slower/faster unless
/// the interval over the widened elasticity range is wholly beyond; `same` is still judged on the fitted slope's
/// interval, as without it (docs/diff.md, "A launch path that moved past its processes").
std::pair<Verdict, std::string> decide_across_hosts(const HostAdjusted& h, const DiffOptions& o) {
  const double up = 1 + o.min_effect, down = 1 / up;
  const RatioEstimate a = host_adjusted_interval(h, 1 - o.alpha);
  if (a.ci_low > up) return {Verdict::slower, ""};
  if (a.ci_high < down) return {Verdict::faster, ""};
  HostAdjusted fitted = h;
  fitted.launch_moved = false;
  const RatioEstimate f = h.launch_moved ? host_adjusted_interval(fitted, 1 - o.alpha) : a;
  if (f.ci_low >= down && f.ci_high <= up) return {Verdict::same, ""};
  const std::string host = fmt::format("the hosts differ (host probe {:+.1f}%, new against base)",
                                       100 * (h.probe_ratio - 1));
  if (!std::isfinite(a.ci_high))
    return {Verdict::inconclusive,
            fmt::format("{}, and the probes hardly vary within a side, so the time's elasticity to the host cannot be "
                        "measured and the host's speed cannot be taken out: more processes per side, or hosts alike, "
                        "would decide it",
                        host)};
  // The change that would have been called: the bound plus the interval's width below the estimate.
  const double below = std::log(a.ratio / a.ci_low);
  const auto [b_lo, b_hi] = host_elasticity_range(h, 1 - o.alpha);
  const std::string range =
      !h.probes_overlap
          ? fmt::format(
                "; the hosts lie beyond the speeds either side's processes saw, so the elasticity is taken "
                "anywhere in [{:.2f}, {:.2f}]",
                b_lo, b_hi)
      : h.launch_moved ? fmt::format(
                             "; the calibrated eager launch moved {:+.1f}%, beyond the processes' spread and "
                             "further than the probe, so the elasticity is taken anywhere in [{:.2f}, {:.2f}]",
                             100 * (h.launch_ratio - 1), b_lo, b_hi)
                       : "";
  return {Verdict::inconclusive,
          fmt::format("{}; with the host's speed taken out the change is {:+.1f}% (elasticity {:.2f} +- {:.2f}{}), "
                      "interval [{:+.1f}%, {:+.1f}%], not wholly {} the {:g}% minimum effect: a change beyond about "
                      "{:.0f}% would have been called",
                      host, 100 * (a.ratio - 1), h.slope, h.slope_se, range, 100 * (a.ci_low - 1),
                      100 * (a.ci_high - 1), a.ci_low < down || a.ci_high > up ? "beyond" : "within",
                      100 * o.min_effect, 100 * (std::exp(std::log(up) + below) - 1))};
}

/// The verdict rule of an ok/ok point with usable samples (docs/diff.md "Verdicts"), in one place. `row` holds the
/// sample statistics (ratio, p_adjusted: BH over the diff's points) and, for a point pooled from lab.processes on
/// both sides, the process-level ones (process, process_interval, process_p_adjusted: BH over the pooled points),
/// and host_adjusted for a host-sensitive point probed in every process.
/// Case C24 (docs/diff.md "Across GPUs"): a point whose sides ran on two physical GPUs, judged on its process medians
/// with each process's calibrated ceiling taken out, alone: the raw samples and medians moved with the GPU (eager
/// launch-bound points 6-8% between H200s, no code change) and are not asked. `same` when the normalised interval lies
/// inside the bounds; `slower` (`faster`) when the normalised test passes Benjamini-Hochberg over the pooled points
/// and its selection-adjusted interval lies wholly beyond; else `inconclusive`, saying the change and its interval.
std::pair<Verdict, std::string> decide_across_gpus(const DiffPoint& row, const DiffOptions& o) {
  const double up = 1 + o.min_effect, down = 1 / up;
  const RatioEstimate& ni = *row.normalized_interval;
  if (ni.ci_low >= down && ni.ci_high <= up) return {Verdict::same, ""};
  const bool significant = row.process_p_adjusted && *row.process_p_adjusted <= o.alpha;
  const RatioEstimate& sel = *row.process_selected_interval;
  if (significant && sel.ci_low > up) return {Verdict::slower, ""};
  if (significant && sel.ci_high < down) return {Verdict::faster, ""};
  return {
      Verdict::inconclusive,
      fmt::format("on two GPUs, with each process's calibrated {} taken out (elasticity {:.2f}), the change is "
                  "{:+.1f}% [{:+.1f}%, {:+.1f}%] (BH-adjusted p {:.3g}): neither inside the {:g}% bounds nor surely "
                  "beyond them",
                  row.normalized_by, row.normalized_elasticity, 100 * (ni.ratio - 1), 100 * (ni.ci_low - 1),
                  100 * (ni.ci_high - 1), row.process_p_adjusted.value_or(1.0), 100 * o.min_effect)};
}

namespace {

// A point pooled from lab.processes on both sides whose samples moved beyond the bounds, significantly
// (`slower`: up): the change must hold between the processes (Welch on their medians' logs, BH over the pooled
// points, the selection-adjusted interval beyond the minimum effect in the samples' direction), with the machine
// taken out (normalized) and with the host's speed taken out (host_adjusted).
std::pair<Verdict, std::string> decide_pooled_change(const DiffPoint& row, const DiffOptions& o, bool slower) {
  const double up = 1 + o.min_effect, down = 1 / up;
  const RatioEstimate& pr = *row.process_interval;
  const double pp = *row.process_p_adjusted;
  auto holds = [&](double ratio) { return slower ? ratio > up : ratio < down; };
  if (pp > o.alpha)
    return {Verdict::inconclusive,
            fmt::format("the samples moved {} but the processes' medians do not differ enough (Welch p {:.3g}, "
                        "BH-adjusted over the pooled points {:.3g} > alpha {:g}): the change is within the "
                        "variation between processes",
                        slower ? "up" : "down", row.process_family_p.value_or(1.0), pp, o.alpha)};
  const RatioEstimate& sel = *row.process_selected_interval;
  // A host-adjusted point is judged with the host's speed taken out (below), not on the raw medians.
  if (!row.host_adjusted && !holds(slower ? sel.ci_low : sel.ci_high))
    return {Verdict::inconclusive,
            fmt::format("between processes the change is {:+.1f}% with the selection-adjusted interval [{:+.1f}%, "
                        "{:+.1f}%], not wholly beyond the {:g}% minimum effect",
                        100 * (pr.ratio - 1), 100 * (sel.ci_low - 1), 100 * (sel.ci_high - 1), 100 * o.min_effect)};
  if (row.normalized && !holds(row.normalized->ratio))
    return {Verdict::inconclusive,
            fmt::format("with each process's calibrated {} taken out the change is {:+.1f}%, not beyond the {:g}% "
                        "minimum effect: the machine, not the code, may have moved",
                        row.normalized_by, 100 * (row.normalized->ratio - 1), 100 * o.min_effect)};
  // The host's speed taken out: by covariance (only the part of the time that moves with the probe, at the
  // elasticity measured) the change must be beyond the minimum effect, and per probe (as if all of it moved
  // with the host) it must at least go the same way. Per probe alone over-corrects a point whose GPU share is
  // large (a 20 us GPU delay on a 136 us index point reads +3% per probe, +15% by covariance).
  if (const auto& host = row.host_adjusted;
      host && !(holds(host->covariate.ratio) && (slower ? host->per_probe.ratio > 1 : host->per_probe.ratio < 1)))
    return {Verdict::inconclusive,
            fmt::format("with the host's speed taken out the change is {:+.1f}% by covariance (elasticity {:.2f}) "
                        "and {:+.1f}% per probe: not beyond the {:g}% minimum effect by covariance with the "
                        "per-probe change in the same direction",
                        100 * (host->covariate.ratio - 1), host->elasticity, 100 * (host->per_probe.ratio - 1),
                        100 * o.min_effect)};
  return {slower ? Verdict::slower : Verdict::faster, ""};
}

// A pooled point whose samples did not move surely beyond the bounds: `same` rests on the processes (their
// interval, raw or with the machine taken out, inside the bounds; the pooled samples' interval is narrower than the
// variation between processes it pools); `inconclusive` with how many processes would decide it when only the
// samples agree (`within`); nothing when the generic reasons below apply.
std::optional<std::pair<Verdict, std::string>> decide_pooled_rest(const DiffPoint& row, const DiffOptions& o,
                                                                  bool within) {
  const double up = 1 + o.min_effect, down = 1 / up;
  const RatioEstimate& pr = *row.process_interval;
  const bool process_within = pr.ci_low >= down && pr.ci_high <= up;
  if (process_within) return std::pair{Verdict::same, std::string()};
  if (const auto& ni = row.normalized_interval; ni && ni->ci_low >= down && ni->ci_high <= up)
    return std::pair{Verdict::same, std::string()};  // decided with the machine taken out: row.gate says normalized
  if (within) {
    const double half = std::log(pr.ci_high / pr.ratio);
    const std::size_t n = std::min(row.process_counts.first, row.process_counts.second);
    const std::size_t need = processes_needed(half, std::log(pr.ratio), std::log(up), n);
    return std::pair{
        Verdict::inconclusive,
        fmt::format("the samples agree within {:g}%, but between processes the interval is [{:+.1f}%, {:+.1f}%]"
                    "{}",
                    100 * o.min_effect, 100 * (pr.ci_low - 1), 100 * (pr.ci_high - 1),
                    need > n ? fmt::format(": about {} processes per side (now {}) would decide it", need, n)
                             : std::string(": more processes per side would decide it"))};
  }
  return std::nullopt;
}

// Why a point that no rule decided stays inconclusive: too few samples for an interval, beyond the bounds but not
// significant after correction, or an interval that crosses a bound.
std::pair<Verdict, std::string> undecided(const DiffPoint& row, const DiffOptions& o) {
  const RatioEstimate& r = *row.ratio;
  const double up = 1 + o.min_effect, down = 1 / up;
  const bool beyond = r.ci_low > up || r.ci_high < down;
  if (!std::isfinite(r.ci_high))
    return {Verdict::inconclusive, fmt::format("too few samples for a {:g}% interval", 100 * (1 - o.alpha))};
  if (beyond)
    return {Verdict::inconclusive, fmt::format("beyond the minimum effect but not significant after correction "
                                               "(p_adjusted {:.3g} > alpha {:g})",
                                               *row.p_adjusted, o.alpha)};
  return {Verdict::inconclusive, fmt::format("the interval [{:.4f}, {:.4f}] crosses a minimum-effect bound "
                                             "[{:.4f}, {:.4f}]: noise larger than the effect, or too few samples{}",
                                             r.ci_low, r.ci_high, down, up,
                                             row.process ? ""
                                                         : " (one process per side: more samples, or "
                                                           "lab.processes, would decide it)")};
}

}  // namespace

std::pair<Verdict, std::string> decide(const DiffPoint& row, const DiffOptions& o) {
  const RatioEstimate& r = *row.ratio;
  const double up = 1 + o.min_effect, down = 1 / up;
  const std::size_t n_base = *row.base_samples, n_new = *row.new_samples;
  if (n_base < kMinSamples || n_new < kMinSamples)
    return {Verdict::inconclusive,
            fmt::format("fewer than {} samples on a side ({} base, {} new)", kMinSamples, n_base, n_new)};
  const bool significant = *row.p_adjusted <= o.alpha;
  const bool beyond = r.ci_low > up || r.ci_high < down;
  const bool within = r.ci_low >= down && r.ci_high <= up;
  if (row.process) {
    if (const auto& host = row.host_adjusted; host && hosts_differ(*host)) return decide_across_hosts(*host, o);
    if (row.across_gpus && row.normalized) return decide_across_gpus(row, o);
    // Pooled on both sides: the process is the unit of replication.
    if (significant && beyond) return decide_pooled_change(row, o, r.ci_low > up);
    if (auto verdict = decide_pooled_rest(row, o, within)) return *verdict;
  } else {
    if (significant && r.ci_low > up) return {Verdict::slower, ""};
    if (significant && r.ci_high < down) return {Verdict::faster, ""};
    if (within) return {Verdict::same, ""};
  }
  return undecided(row, o);
}

}  // namespace diff_detail

// ---- Names and options ----------------------------------------------------------------------------------------

const char* to_string(Verdict verdict) {
  switch (verdict) {
    case Verdict::same: return "same";
    case Verdict::slower: return "slower";
    case Verdict::faster: return "faster";
    case Verdict::inconclusive: return "inconclusive";
    case Verdict::status_changed: return "status_changed";
    case Verdict::not_compared: return "not_compared";
  }
  return "inconclusive";
}

const char* to_string(Gate gate) {
  switch (gate) {
    case Gate::samples: return "samples";
    case Gate::processes: return "processes";
    case Gate::host_adjusted: return "host_adjusted";
    case Gate::normalized: return "normalized";
    case Gate::summaries: return "summaries";
  }
  return "samples";
}

const char* to_string(DiffOptions::FailOn fail_on) { return fail_on == DiffOptions::FailOn::any ? "any" : "slower"; }

DiffOptions::FailOn parse_fail_on(const std::string& text) {
  if (text == "slower") return DiffOptions::FailOn::slower;
  if (text == "any") return DiffOptions::FailOn::any;
  throw std::invalid_argument("--fail-on: expected 'slower' or 'any', got '" + text + "'");
}

double parse_percent(const std::string& text) {
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  const auto bad = [&](const std::string& why) {
    return std::invalid_argument("'" + text + "': " + why + " (write e.g. 5% or 0.05)");
  };
  const std::optional<double> parsed = parse_decimal(number);
  if (!parsed) throw bad("not a decimal number");
  const double value = *parsed;
  if (value < 0) throw bad("expected a finite value >= 0");
  if (percent) return value / 100;
  if (value > 1) throw bad("a plain number is a fraction and must lie in [0, 1]; add % for a percentage");
  return value;
}

}  // namespace labrun
