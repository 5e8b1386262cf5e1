// labrun diff: a matched point's times tested (samples, process medians, the bound-normalised medians, imported
// summaries) and the noise of the compared points.
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "diff_parts.hpp"
#include "format.hpp"
#include "stats.hpp"
#include <labrun/status.hpp>

namespace labrun {

namespace diff_detail {

double time_scale(const PointRef& p, const DiffOptions& options, const char* side) {
  if (!options.normalize) return 1.0;
  const double bw = p.header != nullptr ? p.header->calibration("copy", "bandwidth_Bps") : kNoValue;
  if (!std::isfinite(bw) || bw <= 0)
    throw std::invalid_argument(
        fmt::format("--normalize: {} point {} comes from a run without a calibrated copy bandwidth "
                    "(calibration.copy.bandwidth_Bps); compare without --normalize",
                    side, p.record->key.empty() ? p.record->id : p.record->key));
  return bw;
}

}  // namespace diff_detail

std::optional<Ceiling> ceiling_for(const PointRecord& record) {
  if (!record.interpretation) return std::nullopt;
  const std::string& bound = record.interpretation->bound;
  if (bound == "launch")
    return record.axis_word("mode") == "graph" ? Ceiling{"launch", "graph_time_s", false}
                                               : Ceiling{"launch", "eager_queued_time_s", false};
  if (bound == "memory")
    return record.interpretation->ceilings.memory_source.value_or("copy") == "read"
               ? Ceiling{"read", "bandwidth_Bps", true}
               : Ceiling{"copy", "bandwidth_Bps", true};
  if (bound == "compute") return Ceiling{"fp32_fma", "flop_per_s", true};
  return std::nullopt;
}

namespace diff_detail {

/// Fills row.base_normalized / new_normalized (diff.hpp), the process medians with the ceiling taken out, when
/// both records share a bound with a ceiling and both runs' headers carry it per process, one per process median;
/// leaves them empty otherwise. test_processes tests them once the noise floor is known.
void normalize_by_ceiling(const PointRef& b, const PointRef& n, DiffPoint& row) {
  const auto cb = ceiling_for(*b.record), cn = ceiling_for(*n.record);
  if (!cb || !cn || std::string(cb->ceiling) != cn->ceiling || std::string(cb->key) != cn->key) return;
  if (b.header == nullptr || n.header == nullptr) return;
  const std::vector<double> kb = b.header->process_calibration(cb->ceiling, cb->key),
                            kn = n.header->process_calibration(cn->ceiling, cn->key);
  if (kb.size() != row.base_process_s.size() || kn.size() != row.new_process_s.size()) return;
  // As a time per process (1 / rate for a bandwidth or FLOP rate), taken out by covariance with the elasticity
  // fitted (the share of the time that moves with the ceiling), as the host probe is.
  auto as_time = [&](std::vector<double> k) {
    if (cb->rate)
      for (double& x : k) x = 1 / x;
    return k;
  };
  const CovariateAdjusted c = covariate_adjust(row.base_process_s, as_time(kb), row.new_process_s, as_time(kn));
  row.base_normalized = c.base;
  row.new_normalized = c.current;
  row.normalized_elasticity = c.elasticity;
  row.normalized_by = std::string(cb->ceiling) + "." + cb->key;
  const std::string gb = b.header->device_uuid(), gn = n.header->device_uuid();
  row.across_gpus = !gb.empty() && !gn.empty() && gb != gn;
}

/// The summary behind a sampleless record's time: timing.device (nvbench's GPU time), else timing.wall (Google
/// Benchmark's aggregates); nullptr without either.
const TimeSummary* summary_of(const PointRecord& r) {
  if (!r.timing) return nullptr;
  if (r.timing->device) return &*r.timing->device;
  return r.timing->wall ? &*r.timing->wall : nullptr;
}

/// Why two ok records cannot be compared because another process held the device while one was timed (case C23):
/// "another process held the device: base pid 4242 (python3, 2.1 GB)"; nullopt when neither side had a tenant.
std::optional<std::string> shared_device(const PointRecord& base, const PointRecord& current) {
  std::string sides;
  for (const auto& [side, rec] : {std::pair{"base", &base}, std::pair{"new", &current}}) {
    const DeviceState before = device_state_of(*rec, "before"), after = device_state_of(*rec, "after");
    if (before.tenant_count == 0 && after.tenant_count == 0) continue;
    sides += (sides.empty() ? "" : "; ") + std::string(side) + " " +
             (before.tenant_count > 0 ? before.tenants : after.tenants);
  }
  if (sides.empty()) return std::nullopt;
  return "another process held the device: " + sides;
}

/// Why a record without samples cannot be compared from its summary (summary_of: a mean, a standard deviation and
/// at least kMinSamples samples counted), or nullopt when it can.
std::optional<std::string> summary_problem(const PointRecord& r) {
  const TimeSummary* d = summary_of(r);
  if (!d || !std::isfinite(d->mean_time_s) || d->mean_time_s <= 0)
    return std::string("no timing samples, and no summary to compare (a mean, a standard deviation, a count)");
  if (!std::isfinite(d->stddev_time_s) || d->stddev_time_s < 0)
    return std::string(
        "no timing samples, and its summary holds no spread (a mean alone, as nvbench's batch "
        "measurement records): the diff cannot test it");
  if (d->count < static_cast<std::int64_t>(kMinSamples))
    return fmt::format("no timing samples, and its summary counts {} (fewer than {})", d->count, kMinSamples);
  return std::nullopt;
}

/// Compares two ok points that have no samples from their summaries (imported results; summary_test): fills row and
/// returns the p-value, or sets the verdict and reason and returns nullopt.
std::optional<double> compare_summaries(const PointRef& b, const PointRef& n, const DiffOptions& options,
                                        DiffPoint& row, Caveats& caveats) {
  const auto bp = summary_problem(*b.record), np = summary_problem(*n.record);
  if (bp || np) {
    row.verdict = Verdict::inconclusive;
    row.reason = bp ? "base: " + *bp : "new: " + *np;
    return std::nullopt;
  }
  const TimeSummary &bd = *summary_of(*b.record), &nd = *summary_of(*n.record);
  const double b_scale = time_scale(b, options, "base"), n_scale = time_scale(n, options, "new");
  const SummaryTest t = summary_test(bd.mean_time_s * b_scale, bd.stddev_time_s * b_scale, bd.count,
                                     nd.mean_time_s * n_scale, nd.stddev_time_s * n_scale, nd.count, 1 - options.alpha);
  row.base_samples = static_cast<std::size_t>(bd.count);
  row.new_samples = static_cast<std::size_t>(nd.count);
  row.base_median_s = b.record->timing->time_s;
  row.new_median_s = n.record->timing->time_s;
  row.ratio = t.ratio;
  row.p_value = t.p_value;
  row.gate = Gate::summaries;
  ++caveats.summaries_only;
  return row.p_value;
}

/// Compares the samples of an ok/ok point: fills row's statistics and gate, and returns its Mann-Whitney p for
/// the correction; or sets row's verdict and reason and returns nullopt when the samples cannot be compared.
std::optional<double> compare_samples(const PointRef& b, const PointRef& n, const DiffOptions& options, DiffPoint& row,
                                      Caveats& caveats) {
  const Samples bs = read_samples(*b.record), ns = read_samples(*n.record);
  const ProcessData bpd = read_processes(*b.record), npd = read_processes(*n.record);
  row.base_samples = bs.seconds.size();
  row.new_samples = ns.seconds.size();
  // Imported results without samples on both sides (another tool's summaries): compared from the summaries.
  const auto sampleless = [](const PointRecord& r) {
    return r.timing && r.timing->device_samples_s.empty() && r.timing->wall_samples_s.empty();
  };
  if (sampleless(*b.record) && sampleless(*n.record)) return compare_summaries(b, n, options, row, caveats);
  if (!bs.problem.empty() || !ns.problem.empty() || !bpd.problem.empty() || !npd.problem.empty()) {
    row.verdict = Verdict::inconclusive;
    row.reason = !bs.problem.empty()    ? "base: " + bs.problem
                 : !ns.problem.empty()  ? "new: " + ns.problem
                 : !bpd.problem.empty() ? "base: " + bpd.problem
                                        : "new: " + npd.problem;
    return std::nullopt;
  }
  caveats.mixed_sources += bs.source != ns.source;
  const auto method = [](const PointRecord& r) {
    const std::string name = r.timing ? r.timing->method_name() : std::string();
    return name.empty() ? std::string("unknown") : name;
  };
  if (method(*b.record) != method(*n.record)) ++caveats.mixed_methods[{method(*b.record), method(*n.record)}];
  row.base_median_s = median(bs.seconds);
  row.new_median_s = median(ns.seconds);
  const double b_scale = time_scale(b, options, "base"), n_scale = time_scale(n, options, "new");
  const auto scaled = [](std::vector<double> v, double scale) {
    for (double& x : v) x *= scale;
    return v;
  };
  const std::vector<double> bx = scaled(bs.seconds, b_scale), nx = scaled(ns.seconds, n_scale);
  row.ratio = hodges_lehmann_ratio(bx, nx, 1 - options.alpha);
  row.p_value = mann_whitney(bx, nx).p_value;
  row.gate = Gate::samples;
  if (bpd.pooled && npd.pooled) {
    const std::vector<double> bps = scaled(bpd.times, b_scale), nps = scaled(npd.times, n_scale);
    row.base_process_s = bps;  // tested in test_processes, with the run's noise floor
    row.new_process_s = nps;
    normalize_by_ceiling(b, n, row);
    row.process_counts = {bps.size(), nps.size()};
    row.gate = Gate::processes;
    // Host-sensitive and probed in every process on both sides: the host's speed taken out as well.
    if (row.host_sensitive) {
      if (!bpd.probes.empty() && !npd.probes.empty()) {
        row.host_adjusted = host_adjusted_tests(bps, bpd.probes, nps, npd.probes);
        row.gate = Gate::host_adjusted;
      } else {
        ++caveats.host_unprobed;
      }
    }
  } else {
    caveats.half_pooled += bpd.pooled != npd.pooled;
    caveats.host_unpooled += row.host_sensitive;
    caveats.cpu_unpooled += b.record->backend == "host" || n.record->backend == "host";
  }
  return row.p_value;
}

/// DiffNoise of the compared points: the sd of log process medians of each pooled side of each compared point
/// (`normalized`: of the bound-normalised medians, for their own floor).
DiffNoise measure_noise(const std::vector<DiffPoint>& rows, const DiffOptions& o, bool normalized) {
  DiffNoise noise;
  noise.assumed_rel = o.min_effect;
  std::vector<double> spreads;
  for (const DiffPoint& row : rows) {
    if (row.base_process_s.empty() || (normalized && row.base_normalized.empty())) continue;
    const std::array<const std::vector<double>*, 2> sides =
        normalized ? std::array<const std::vector<double>*, 2>{&row.base_normalized, &row.new_normalized}
                   : std::array<const std::vector<double>*, 2>{&row.base_process_s, &row.new_process_s};
    for (const std::vector<double>* times : sides) {
      if (times->size() < 2) continue;
      double mean = 0, ss = 0;
      for (double t : *times) mean += std::log(t);
      mean /= static_cast<double>(times->size());
      for (double t : *times) ss += (std::log(t) - mean) * (std::log(t) - mean);
      spreads.push_back(std::sqrt(ss / static_cast<double>(times->size() - 1)));
    }
  }
  noise.measured_points = spreads.size();
  if (!spreads.empty()) {
    std::sort(spreads.begin(), spreads.end());
    noise.median_rel = quantile_sorted(spreads, 0.5);
    noise.p90_rel = quantile_sorted(spreads, 0.9);
  }
  return noise;
}

}  // namespace diff_detail

}  // namespace labrun
