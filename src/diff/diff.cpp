// labrun diff, the comparison: matches the points of two sets of runs, compares the environments, applies the
// statistics (stats.hpp) and the gates, and decides each point's verdict (docs/diff.md). Records are read only
// through the typed records of point_record.hpp; its outputs are diff_{table,markdown,json}.cpp.
#include "diff.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <set>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "config.hpp"
#include "format.hpp"
#include "merge.hpp"
#include "record.hpp"
#include "stats.hpp"
#include <labrun/status.hpp>

namespace labrun {
namespace {

/// Fewer samples than this on a side give `inconclusive` whatever the statistics say.
constexpr std::size_t kMinSamples = 3;
/// Relative gap between the two sides' calibrated ceilings that earns an environment warning.
constexpr double kCeilingTolerance = 0.05;
/// Relative gap between the two sides' median SM clocks that earns an environment warning.
constexpr double kClockTolerance = 0.02;
/// Host speed (calibrated eager launch time) differences above this are reported: 5%, the default minimum effect.
constexpr double kHostTolerance = 0.05;

// ---- One side of a diff ---------------------------------------------------------------------------------------

struct PointRef {
  const PointRecord* record = nullptr;
  const RunHeader* header = nullptr;  ///< the header of the point's run; nullptr for a run without one
};

struct Side {
  /// Headers that own at least one compared point (a header whose points were all replaced by a later
  /// shard's does not describe what is compared).
  std::vector<const RunHeader*> headers;
  std::size_t superseded = 0;      ///< headers with points, every one of them replaced by a later record
  std::vector<std::string> order;  ///< ids in order of first appearance
  std::unordered_map<std::string, PointRef> points;
  std::int64_t announced = 0;  ///< sum of the headers' point_count
  std::int64_t present = 0;    ///< point records, replaced ones included
  /// Each shard's own header of a merged run (shard_headers), owned here; its points refer to them.
  std::vector<std::unique_ptr<RunHeader>> shard_headers;
};

/// The header of each of a run's points, by position: the run's own, or, for a merged run whose shards kept their
/// host and processes (and whose points are still the shards' in order), each point's shard's (owned by `side`),
/// so that a cluster run is adjusted per node, not by one shard's numbers.
std::vector<const RunHeader*> point_headers(const Run& run, Side& side) {
  const RunHeader* own = run.has_header ? &run.header : nullptr;
  std::vector<const RunHeader*> out(run.points.size(), own);
  if (own == nullptr) return out;
  std::vector<ShardHeader> shards = shard_headers(*own);
  std::size_t total = 0;
  for (const ShardHeader& sh : shards) total += sh.points;
  if (shards.empty() || total != run.points.size()) return out;
  std::size_t at = 0;
  for (ShardHeader& sh : shards) {
    side.shard_headers.push_back(std::make_unique<RunHeader>(std::move(sh.header)));
    for (std::size_t i = 0; i < sh.points; ++i) out[at++] = side.shard_headers.back().get();
  }
  return out;
}

Side index_side(const std::vector<Run>& runs) {
  Side s;
  std::vector<const RunHeader*> all;
  std::unordered_set<const RunHeader*> had_points;
  for (const Run& run : runs) {
    const RunHeader* header = run.has_header ? &run.header : nullptr;
    const std::size_t first_shard = s.shard_headers.size();
    const std::vector<const RunHeader*> headers = point_headers(run, s);
    if (header != nullptr) {
      if (const double count = header->point_count(); std::isfinite(count))
        s.announced += static_cast<std::int64_t>(count);
      if (s.shard_headers.size() == first_shard) all.push_back(header);
      for (std::size_t k = first_shard; k < s.shard_headers.size(); ++k) all.push_back(s.shard_headers[k].get());
    }
    for (std::size_t i = 0; i < run.points.size(); ++i) {
      const PointRecord& p = run.points[i];
      const auto [it, inserted] = s.points.insert_or_assign(p.id, PointRef{&p, headers[i]});
      if (inserted) s.order.push_back(it->first);
      had_points.insert(headers[i]);
      ++s.present;
    }
  }
  std::unordered_set<const RunHeader*> owners;
  for (const auto& [id, ref] : s.points) owners.insert(ref.header);
  for (const RunHeader* h : all) {
    if (owners.contains(h)) s.headers.push_back(h);
    else if (had_points.contains(h)) ++s.superseded;
  }
  return s;
}

}  // namespace

// ---- The pieces labrun history shares (diff.hpp "Reading a point's times") -----------------------------------

Samples read_samples(const PointRecord& point) {
  Samples s;
  if (!point.timing) {
    s.problem = "no timing samples";
    return s;
  }
  const bool device = !point.timing->device_samples_s.empty();
  const std::vector<double>& list = device ? point.timing->device_samples_s : point.timing->wall_samples_s;
  s.source = device ? "device" : "wall";
  if (list.empty()) {
    s.problem = "no timing samples";
    return s;
  }
  for (std::size_t i = 0; i < list.size(); ++i) {
    const double x = list[i];
    if (!std::isfinite(x) || x <= 0) {
      s.problem = fmt::format("{} sample {} is not a finite positive time ({})", s.source, i, json_real(x).dump());
      return s;
    }
    s.seconds.push_back(x);
  }
  return s;
}

ProcessData read_processes(const PointRecord& point) {
  ProcessData d;
  if (!point.timing || !point.timing->processes) return d;
  const ProcessStats& block = *point.timing->processes;
  d.pooled = true;
  auto list = [&](const char* key, const std::vector<double>& in, std::vector<double>& out) {
    for (std::size_t i = 0; i < in.size(); ++i) {
      if (!std::isfinite(in[i]) || in[i] <= 0) {
        d.problem = fmt::format("timing.processes.{} entry {} is not a finite positive time ({})", key, i,
                                json_real(in[i]).dump());
        out.clear();
        return;
      }
      out.push_back(in[i]);
    }
  };
  list("time_s", block.time_s, d.times);
  if (d.problem.empty() && d.times.size() < 2)
    d.problem = fmt::format("timing.processes.time_s holds {} process median(s); pooling needs 2 or more",
                            d.times.size());
  if (d.problem.empty() && block.host_probe_time_s) {
    list("host_probe_time_s", *block.host_probe_time_s, d.probes);
    if (d.problem.empty() && d.probes.size() != d.times.size())
      d.problem = fmt::format("timing.processes.host_probe_time_s holds {} probes for {} processes", d.probes.size(),
                              d.times.size());
  }
  if (!d.problem.empty()) {
    d.times.clear();
    d.probes.clear();
  }
  return d;
}

namespace {

/// Factor that turns a point's seconds into the compared unit: 1, or with normalize the calibrated copy
/// bandwidth of the point's header (bytes/s), giving "bytes the device could have copied".
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

// ---- Environment comparison ---------------------------------------------------------------------------------

/// Distinct values of a header field over a side's headers, joined with " | "; empty when no header has it.
/// `read` gives a header's value, nullopt (or "") when it has none.
template <typename Read>
std::string describe_text(const Side& side, Read read) {
  std::vector<std::string> seen;
  for (const RunHeader* h : side.headers) {
    const std::optional<std::string> text = read(*h);
    if (!text || text->empty()) continue;
    if (std::find(seen.begin(), seen.end(), *text) == seen.end()) seen.push_back(*text);
  }
  std::string out;
  for (const auto& t : seen) out += (out.empty() ? "" : " | ") + t;
  return out;
}

/// Median over a side's headers of the calibrated quantity calibration.<ceiling>.<key>; nullopt if none has it.
std::optional<double> median_calibration(const Side& side, const char* ceiling, const char* key) {
  std::vector<double> values;
  for (const RunHeader* h : side.headers)
    if (const double v = h->calibration(ceiling, key); std::isfinite(v)) values.push_back(v);
  if (values.empty()) return std::nullopt;
  return median(values);
}

/// Median SM clock (Hz) read by the points just before and after their timing.
std::optional<double> median_sm_clock(const Side& side) {
  std::vector<double> values;
  for (const auto& [id, p] : side.points)
    for (const char* when : {"before", "after"})
      if (const double v = p.record->sm_clock_hz(when); std::isfinite(v) && v > 0) values.push_back(v);
  if (values.empty()) return std::nullopt;
  return median(values);
}

struct TextField {
  const char* name;   ///< key in the environment summary
  const char* label;  ///< words in a warning
  std::string (RunHeader::*read)() const;
};

struct CeilingField {
  const char* name;
  const char* label;
  const char* ceiling;  ///< calibration.<ceiling>.<key>
  const char* key;
  double unit;  ///< printed as value / unit
  const char* unit_name;
};

/// A text value for the environment summary: nullopt when empty.
std::optional<std::string> text_or_null(const std::string& t) { return t.empty() ? std::nullopt : std::optional(t); }

/// "unknown" for a value no header recorded, else the value.
const std::string& or_unknown(const std::string& t) {
  static const std::string kUnknown = "unknown";
  return t.empty() ? kUnknown : t;
}

/// compare_environment's state: the two sides, and where its warnings and the values compared go. Each step
/// appends to them in the order the summary and the warnings list them.
struct EnvironmentComparison {
  const Side& base;
  const Side& current;
  std::vector<std::string>& warnings;
  DiffEnvironmentSide& base_env;
  DiffEnvironmentSide& new_env;

  /// Each side's distinct values of `read` (describe_text), recorded in the summary under `name`; returns them
  /// as (base, new).
  template <typename Read>
  std::pair<std::string, std::string> record_text(const char* name, Read read) {
    std::string b = describe_text(base, read), n = describe_text(current, read);
    base_env.text.emplace_back(name, text_or_null(b));
    new_env.text.emplace_back(name, text_or_null(n));
    return {std::move(b), std::move(n)};
  }

  /// Different physical machines first, loudly: every point's time may carry the machine, not the code.
  void machines() {
    static const TextField kMachine[] = {{"gpu_uuid", "physical GPU (uuid)", &RunHeader::device_uuid},
                                         {"host", "host", &RunHeader::host_name}};
    for (const auto& f : kMachine) {
      const auto [b, n] = record_text(f.name, [&](const RunHeader& h) { return std::optional((h.*f.read)()); });
      if (!b.empty() && !n.empty() && b != n)
        warnings.push_back(fmt::format(
            "DIFFERENT MACHINES: the two sides ran on a different {} (base {}, new {}); a time may move with the "
            "machine, so pooled points are also compared with each process's calibrated ceiling for their bound "
            "taken out (the \"normalized\" gate, docs/diff.md)",
            f.label, b, n));
    }
  }

  /// The code under test ("project sha12[+dirty]"): summarised, not warned about (a diff compares two commits); a
  /// different project is warned about.
  void code() {
    record_text("code", [](const RunHeader& h) {
      return std::optional(h.code_project() + " " + h.code_sha().substr(0, 12) +
                           (h.code_dirty().value_or(false) ? "+dirty" : ""));
    });
    const auto project = [](const RunHeader& h) { return std::optional(h.code_project()); };
    const std::string b = describe_text(base, project), n = describe_text(current, project);
    if (b != n)
      warnings.push_back(fmt::format("code under test differs: base {}, new {} (runs of different repositories)",
                                     or_unknown(b), or_unknown(n)));
  }

  /// The device, host and software the runs name; labrun's version among them: a change is the measuring tool's,
  /// warned about.
  void texts() {
    static const TextField kText[] = {
        {"gpu", "GPU", &RunHeader::device_name},
        {"cpu_model", "host CPU model", &RunHeader::cpu_model},
        {"driver_version", "driver", &RunHeader::driver_version},
        {"runtime_version", "CUDA runtime", &RunHeader::runtime_version},
        {"build_type", "build type", &RunHeader::build_type},
        {"labrun_version", "labrun version (the measuring tool)", &RunHeader::labrun_version},
    };
    for (const auto& f : kText) {
      const auto [b, n] = record_text(f.name, [&](const RunHeader& h) { return std::optional((h.*f.read)()); });
      if (b != n) warnings.push_back(fmt::format("{} differs: base {}, new {}", f.label, or_unknown(b), or_unknown(n)));
    }
  }

  /// Records one number of both sides under `name` and warns when they differ by more than `tolerance`
  /// (relative), printing them as value / unit.
  void number(const char* name, const char* label, std::optional<double> b, std::optional<double> n, double tolerance,
              double unit, const char* unit_name) {
    base_env.numbers.emplace_back(name, b);
    new_env.numbers.emplace_back(name, n);
    if (!b || !n || *b <= 0 || *n <= 0) return;
    const double gap = std::max(*b, *n) / std::min(*b, *n) - 1;
    if (gap > tolerance)
      warnings.push_back(fmt::format("{} differs by {:.1f}% (more than {:.0f}%): base {:.4g} {}, new {:.4g} {}", label,
                                     100 * gap, 100 * tolerance, *b / unit, unit_name, *n / unit, unit_name));
  }

  /// The calibrated ceilings, the SM clock the points saw, and the host's and the GPU's launch costs.
  void numbers() {
    // Calibrated ceilings. The launch-time calibration measures the host, not the device: compared below.
    static const CeilingField kCeilings[] = {
        {"copy_bandwidth_Bps", "calibrated copy bandwidth", "copy", "bandwidth_Bps", 1e9, "GB/s"},
        {"read_bandwidth_Bps", "calibrated read bandwidth", "read", "bandwidth_Bps", 1e9, "GB/s"},
        {"fp32_fma_flop_per_s", "calibrated FP32 FMA rate", "fp32_fma", "flop_per_s", 1e12, "TFLOP/s"},
        {"bf16_gemm_flop_per_s", "calibrated BF16 GEMM rate", "bf16_gemm", "flop_per_s", 1e12, "TFLOP/s"},
    };
    for (const auto& f : kCeilings)
      number(f.name, f.label, median_calibration(base, f.ceiling, f.key), median_calibration(current, f.ceiling, f.key),
             kCeilingTolerance, f.unit, f.unit_name);
    number("median_sm_clock_hz", "median SM clock seen by the points", median_sm_clock(base), median_sm_clock(current),
           kClockTolerance, 1e6, "MHz");
    // The host's speed: on a virtualised host it moved 3.7-4.7 µs between back-to-back runs of one build
    // (docs/metrics.md, "Measured on the H200, 2026-11-29"), and points timed live that the host paces (sync- or
    // launch-bound) move with it.
    number("eager_launch_time_s",
           "host speed (calibrated eager launch time; moves sync- and launch-bound points timed live)",
           median_calibration(base, "launch", "eager_time_s"), median_calibration(current, "launch", "eager_time_s"),
           kHostTolerance, 1e-6, "µs");
    // The GPU side of an eager launch (empty kernels queued behind a blocking kernel): blocked eager points made of
    // short kernels pay it once per launch.
    number("eager_queued_launch_time_s",
           "GPU-side eager launch cost (calibrated, launches queued; moves eager points of short kernels)",
           median_calibration(base, "launch", "eager_queued_time_s"),
           median_calibration(current, "launch", "eager_queued_time_s"), kHostTolerance, 1e-6, "µs");
  }

  /// Lab settings (sample counts, L2 mode, an added delay...) change what a time means: each one that differs is
  /// warned about, in the order the headers first name them.
  /// Linear in the settings: each header's `lab` indexed once (an ordered_json object's find() is a linear scan, so
  /// a header of 80,000 settings took 31 s), at most kMaxLabWarnings warned about one by one, the rest counted.
  void lab_settings() {
    std::vector<std::string> lab_keys;
    std::unordered_set<std::string> seen;
    std::unordered_map<const RunHeader*, std::unordered_map<std::string, const Json*>> index;
    for (const Side* side : {&base, &current})
      for (const RunHeader* h : side->headers) {
        auto& settings = index[h];
        for (const auto& [key, value] : h->lab().items()) {
          settings.emplace(key, &value);
          if (seen.insert(key).second) lab_keys.push_back(key);
        }
      }
    constexpr std::size_t kMaxLabWarnings = 20;
    std::size_t differ = 0;
    for (const auto& key : lab_keys) {
      const auto read = [&](const RunHeader& h) -> std::optional<std::string> {
        const auto& settings = index.at(&h);
        const auto it = settings.find(key);
        if (it == settings.end()) return std::nullopt;
        return it->second->is_string() ? it->second->get<std::string>() : it->second->dump();
      };
      const std::string b = describe_text(base, read), n = describe_text(current, read);
      if (b == n) continue;
      if (++differ <= kMaxLabWarnings)
        warnings.push_back(fmt::format("lab setting {} differs: base {}, new {}", printable(key),
                                       b.empty() ? "unset" : printable(b), n.empty() ? "unset" : printable(n)));
    }
    if (differ > kMaxLabWarnings)
      warnings.push_back(fmt::format("{} more lab settings differ (the first {} are named above)",
                                     differ - kMaxLabWarnings, kMaxLabWarnings));
  }
};

/// Compares the two sides' environments; appends a warning to `warnings` for each difference and fills the
/// values compared into `base_env` and `new_env`.
void compare_environment(const Side& base, const Side& current, std::vector<std::string>& warnings,
                         DiffEnvironmentSide& base_env, DiffEnvironmentSide& new_env) {
  EnvironmentComparison c{base, current, warnings, base_env, new_env};
  c.machines();
  c.code();
  c.texts();
  c.numbers();
  c.lab_settings();
}

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

/// Host probes of the two sides within this fraction (3%) count as hosts alike: a host-sensitive point keeps the
/// process gate with the covariance and per-probe checks; beyond it the host-adjusted interval alone decides.
constexpr double kHostsAlike = 0.03;

bool hosts_differ(const HostAdjusted& h) { return std::fabs(std::log(h.probe_ratio)) > std::log1p(kHostsAlike); }

/// A host-sensitive point whose sides' hosts differ (hosts_differ): the verdict from the host-adjusted change's
/// interval alone (HostAdjusted, analysis of covariance; its width counts the elasticity's uncertainty): wholly
/// beyond the minimum effect, slower/faster; wholly inside, same; else inconclusive, naming the host difference
/// and the change that would have been called. The raw samples are not asked: they moved with the host.
std::pair<Verdict, std::string> decide_across_hosts(const HostAdjusted& h, const DiffOptions& o) {
  const double up = 1 + o.min_effect, down = 1 / up;
  const RatioEstimate a = host_adjusted_interval(h, 1 - o.alpha);
  if (a.ci_low > up) return {Verdict::slower, ""};
  if (a.ci_high < down) return {Verdict::faster, ""};
  if (a.ci_low >= down && a.ci_high <= up) return {Verdict::same, ""};
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
      h.probes_overlap ? ""
                       : fmt::format(
                             "; the hosts lie beyond the speeds either side's processes saw, so the elasticity "
                             "is taken anywhere in [{:.2f}, {:.2f}]",
                             b_lo, b_hi);
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
    // Pooled on both sides: the process is the unit of replication. A change must hold between the processes
    // (Welch on their medians' logs, BH over the pooled points, the geometric-mean ratio beyond the minimum effect
    // in the samples' direction) and in the samples; `same` needs the process-level interval inside the bounds.
    const RatioEstimate& pr = *row.process_interval;
    const double pp = *row.process_p_adjusted;
    if (significant && beyond) {
      const bool slower = r.ci_low > up;
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
    // `same` rests on the processes: their interval (raw, or with the machine taken out) inside the bounds. The
    // pooled samples' interval is not asked: it is narrower than the variation between processes it pools.
    const bool process_within = pr.ci_low >= down && pr.ci_high <= up;
    if (process_within) return {Verdict::same, ""};
    if (const auto& ni = row.normalized_interval; ni && ni->ci_low >= down && ni->ci_high <= up)
      return {Verdict::same, ""};  // decided with the machine taken out: row.gate says normalized
    if (within) {
      const double half = std::log(pr.ci_high / pr.ratio);
      const std::size_t n = std::min(row.process_counts.first, row.process_counts.second);
      const std::size_t need = processes_needed(half, std::log(pr.ratio), std::log(up), n);
      return {Verdict::inconclusive,
              fmt::format("the samples agree within {:g}%, but between processes the interval is [{:+.1f}%, {:+.1f}%]"
                          "{}",
                          100 * o.min_effect, 100 * (pr.ci_low - 1), 100 * (pr.ci_high - 1),
                          need > n ? fmt::format(": about {} processes per side (now {}) would decide it", need, n)
                                   : std::string(": more processes per side would decide it"))};
    }
  } else {
    if (significant && r.ci_low > up) return {Verdict::slower, ""};
    if (significant && r.ci_high < down) return {Verdict::faster, ""};
    if (within) return {Verdict::same, ""};
  }
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

/// Whether the point's compared time holds the host's work: timed live (not behind a blocking kernel) and
/// interpreted as sync- or launch-bound, or waiting on the host within an iteration (host_syncs_per_iteration >= 1,
/// whatever its bound: the stream idles while the host reads and launches). Such a time moves with the host's speed
/// as much as with the code.
bool host_sensitive(const PointRecord& record) {
  const bool blocked = record.timing && record.timing->method == TimingMethod::cuda_events_blocked;
  const std::string bound = record.interpretation ? record.interpretation->bound : "";
  const bool waits = record.timing && record.timing->host_syncs_per_iteration >= 1;  // NaN (not recorded): false
  return !blocked && (bound == "sync" || bound == "launch" || waits);
}

DiffPointStub point_stub(const PointRecord& record) { return {record.id, record.key, record.status}; }

void check_options(const DiffOptions& o) {
  if (!(o.min_effect >= 0) || !std::isfinite(o.min_effect))
    throw std::invalid_argument(fmt::format("min effect must be a finite fraction >= 0, got {}", o.min_effect));
  // Above 0.5 the "confidence" intervals would be narrower than 50%; below 1e-12 the interval's normal quantile
  // is beyond what the statistics are accurate for.
  if (!(o.alpha >= 1e-12 && o.alpha <= 0.5))
    throw std::invalid_argument(fmt::format("alpha must lie in [1e-12, 0.5] (e.g. 0.05 or 5%), got {}", o.alpha));
}

/// Counts of what the matched points were compared without (warned about once, at the end).
struct Caveats {
  std::size_t mixed_sources = 0;  ///< device samples against wall samples
  /// Points compared without a gate they would have had: a pooled record against an unpooled one;
  /// host-sensitive points of which a side is not pooled, or pooled without host probes (a run from before the probe).
  std::size_t half_pooled = 0, host_unpooled = 0, host_unprobed = 0;
  /// Host-backend points (backend "host") of which a side ran in one process: a shared CPU's speed moves from one
  /// run to the next by more than one run's samples show (results/host/diff-smoke: 20 of 20 A/A diffs exit 1).
  std::size_t cpu_unpooled = 0;
  std::map<std::pair<std::string, std::string>, std::size_t> mixed_methods;  ///< (base, new) timing.method -> points
  std::size_t summaries_only = 0;  ///< points compared from their summaries (imported results without samples)
};

}  // namespace

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

namespace {

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
DiffNoise measure_noise(const std::vector<DiffPoint>& rows, const DiffOptions& o, bool normalized = false) {
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

/// What a side's headers say of its host (DiffResult::HostSide): distinct CPU models and sync-wait modes, and the
/// median 1-minute load average over its processes.
DiffResult::HostSide describe_host(const Side& side) {
  DiffResult::HostSide h;
  std::vector<std::string> models, waits;
  std::vector<double> loads;
  const auto add = [](std::vector<std::string>& seen, const std::string& v) {
    if (!v.empty() && std::find(seen.begin(), seen.end(), v) == seen.end()) seen.push_back(v);
  };
  for (const RunHeader* header : side.headers) {
    add(models, header->cpu_model());
    add(waits, header->sync_wait());
    for (double l : header->load_averages_1m()) loads.push_back(l);
  }
  const auto join = [](const std::vector<std::string>& v) {
    std::string out;
    for (const std::string& x : v) out += (out.empty() ? "" : ", ") + x;
    return out;
  };
  h.cpu_model = join(models);
  h.sync_wait = join(waits);
  if (!loads.empty()) h.load_average_1m = median(loads);
  return h;
}

/// "CPU <model>, load <l>, sync wait <mode>" of one side, leaving out what was not recorded.
std::string host_words(const DiffResult::HostSide& h) {
  std::string out = "CPU " + (h.cpu_model.empty() ? std::string("unrecorded") : h.cpu_model);
  if (std::isfinite(h.load_average_1m)) out += fmt::format(", load {:.2f}", h.load_average_1m);
  if (!h.sync_wait.empty()) out += ", sync wait " + h.sync_wait;
  return out;
}

/// The host difference, said once and first (before the machine warnings): the median probe ratio over the
/// host-sensitive points, how many were judged across hosts, and what each side's headers say of its host
/// (docs/diff.md, "Across hosts").
void say_host_difference(DiffResult& result) {
  std::vector<double> ratios;
  for (const DiffPoint& row : result.points)
    if (row.host_adjusted) {
      ratios.push_back(row.host_adjusted->probe_ratio);
      result.hosts_differ_points += hosts_differ(*row.host_adjusted);
    }
  result.host_probed_points = ratios.size();
  if (ratios.empty()) return;
  std::sort(ratios.begin(), ratios.end());
  result.host_probe_ratio = quantile_sorted(ratios, 0.5);
  if (result.hosts_differ_points == 0) return;
  result.warnings.insert(
      result.warnings.begin(),
      fmt::format("HOSTS DIFFER: the host probe (one sync round trip) reads {:+.1f}% new against base (median over "
                  "{} host-sensitive points; {} beyond the {:g}% of hosts alike); base {}; new {}: those points are "
                  "judged on their change with the host's speed taken out (docs/diff.md, \"Across hosts\")",
                  100 * (*result.host_probe_ratio - 1), ratios.size(), result.hosts_differ_points, 100 * kHostsAlike,
                  host_words(result.base_host), host_words(result.new_host)));
}

void warn_caveats(const Caveats& c, std::vector<std::string>& warnings) {
  if (c.summaries_only > 0)
    warnings.push_back(fmt::format(
        "{} point(s) compared from summaries alone (imported results without samples: mean, standard deviation, "
        "count; a z-test on log means that takes the samples as independent, so its intervals may be too narrow): "
        "no process-level test, no host adjustment (docs/diff.md \"Imported results\")",
        c.summaries_only));
  if (c.mixed_sources > 0)
    warnings.push_back(
        fmt::format("{} point(s) compare device-timed samples with wall-clock samples", c.mixed_sources));
  if (c.half_pooled > 0)
    warnings.push_back(
        fmt::format("{} point(s) compare a record pooled from lab.processes with one that is not: the "
                    "process gate does not apply to them, and their samples are judged alone",
                    c.half_pooled));
  if (c.cpu_unpooled > 0)
    warnings.push_back(fmt::format(
        "HOST BACKEND: {} point(s) timed on the CPU in one process on a side; a shared CPU's speed moves between runs "
        "by more than one run's samples show, so slower/faster there may be the machine: pool processes "
        "(lab.host.processes: 3 or more) on both sides",
        c.cpu_unpooled));
  if (c.host_unpooled + c.host_unprobed > 0)
    warnings.push_back(fmt::format(
        "{} host-sensitive point(s) were compared without taking the host's speed out ({} not pooled from processes "
        "on both sides, {} without host probes on a side, e.g. a run from before the probe): a change of the host's "
        "speed alone can make them slower or faster",
        c.host_unpooled + c.host_unprobed, c.host_unpooled, c.host_unprobed));
  if (!c.mixed_methods.empty()) {
    std::string which;
    for (const auto& [pair, count] : c.mixed_methods)
      which += fmt::format("{}{} from {} to {}", which.empty() ? "" : "; ", count, pair.first, pair.second);
    warnings.push_back(
        "timing.method differs, so those times measure different things (blocked samples time the "
        "GPU only, live ones include the host's launches): " +
        which);
  }
}

}  // namespace

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

// ---- diff_results ---------------------------------------------------------------------------------------------

namespace {

/// Throws when one side ran on the host backend and the other on a CUDA device: a host-backend run and a GPU run
/// time different machines, so no verdict between them means anything.
void check_one_backend_kind(const std::vector<Run>& base_runs, const std::vector<Run>& new_runs) {
  auto backends = [](const std::vector<Run>& runs) {
    std::set<std::string> kinds;
    for (const auto& run : runs)
      for (const auto& p : run.points) kinds.insert(p.backend.rfind("cuda", 0) == 0 ? "cuda" : p.backend);
    return kinds;
  };
  const std::set<std::string> base_backends = backends(base_runs), new_backends = backends(new_runs);
  if ((base_backends.count("host") && new_backends.count("cuda")) ||
      (base_backends.count("cuda") && new_backends.count("host")))
    throw std::invalid_argument(
        "one side ran on the host backend and the other on a CUDA device: their times are of "
        "different machines and a diff of them means nothing (compare runs of one backend)");
}

/// What the result says of the two sides before any point: superseded runs, the environments and the hosts.
void describe_sides(const Side& base, const Side& current, DiffResult& result) {
  for (const Side* side : {&base, &current})
    if (side->superseded > 0)
      result.warnings.push_back(
          fmt::format("{} side: {} run(s) had every point replaced by a later record with the "
                      "same id (last record wins); their headers are left out of this comparison",
                      side == &base ? "base" : "new", side->superseded));
  compare_environment(base, current, result.warnings, result.base_environment, result.new_environment);
  result.base_host = describe_host(base);
  result.new_host = describe_host(current);
}

/// Mann-Whitney p-values of the compared points, waiting for the BH correction over all of them:
/// (position in DiffResult::points, p).
using PendingTests = std::vector<std::pair<std::size_t, double>>;

/// A matched point's row: its identity, both statuses and whether it is host-sensitive; nothing decided yet.
DiffPoint matched_row(const std::string& id, const PointRef& b, const PointRef& n) {
  DiffPoint row;
  row.id = id;
  row.key = n.record->key;
  row.variant = n.record->variant;
  row.axes = n.record->axes;
  row.base_status = b.record->status;
  row.new_status = n.record->status;
  row.host_sensitive = host_sensitive(*b.record) || host_sensitive(*n.record);
  return row;
}

/// The audit's finding of a point as the diff compares it (docs/integrity.md "The audit"): nullopt where the audit did
/// not run (older records, no CUPTI, the host backend), "" where it found nothing, else "warned: REASON".
std::optional<std::string> audit_finding(const PointRecord& r) {
  if (!r.integrity || !r.integrity->audit) return std::nullopt;
  const IntegrityCheck& a = *r.integrity->audit;
  if (a.state == CheckState::passed) return std::string();
  if (a.state != CheckState::warned && a.state != CheckState::failed) return std::nullopt;
  return std::string(to_string(a.state)) + ": " + a.reason.value_or("");
}

/// Appends a row to result.points for each point on both sides, in base order: a status change or a point not
/// timed on both sides decided at once, an ok/ok point with its samples compared. Returns the ok/ok points' tests.
PendingTests match_points(const Side& base, const Side& current, const DiffOptions& options, DiffResult& result,
                          Caveats& caveats) {
  PendingTests pending;
  for (const auto& id : base.order) {
    const auto found = current.points.find(id);
    if (found == current.points.end()) continue;
    const PointRef& b = base.points.at(id);
    const PointRef& n = found->second;
    DiffPoint row = matched_row(id, b, n);
    if (row.base_status != row.new_status) {
      row.verdict = Verdict::status_changed;
      row.reason = fmt::format("{} -> {}", to_string(row.base_status), to_string(row.new_status));
      result.status_changes.push_back({id, row.key, row.base_status, row.new_status, n.record->reason});
    } else if (const auto fb = audit_finding(*b.record), fn = audit_finding(*n.record);
               row.base_status == Status::ok && fb && fn && *fb != *fn) {
      // ok on both sides, but the audit found something on one side only (an undeclared host wait or allocation
      // appeared or went away): the code under test changed what it calls, a status change of its own.
      row.verdict = Verdict::status_changed;
      row.reason = "ok -> ok, audit " + (fb->empty() ? std::string("passed") : *fb) + " -> " +
                   (fn->empty() ? std::string("passed") : *fn);
      result.status_changes.push_back({id, row.key, row.base_status, row.new_status, row.reason});
    } else if (row.base_status != Status::ok) {
      row.verdict = Verdict::not_compared;
      row.reason = std::string("not timed: ") + to_string(row.base_status) + " on both sides";
    } else if (const auto shared = shared_device(*b.record, *n.record)) {
      row.verdict = Verdict::not_compared;  // case C23: the time measured another process too
      row.reason = *shared;
      row.shared = true;
    } else if (const auto p = compare_samples(b, n, options, row, caveats)) {
      pending.emplace_back(result.points.size(), *p);
    }
    result.points.push_back(std::move(row));
  }
  return pending;
}

/// The first family: the samples' Mann-Whitney p-values of every compared point, BH-corrected together into
/// each row's p_adjusted.
void correct_sample_family(const PendingTests& pending, DiffResult& result) {
  std::vector<double> raw(pending.size());
  std::transform(pending.begin(), pending.end(), raw.begin(), [](const auto& p) { return p.second; });
  const std::vector<double> adjusted = benjamini_hochberg(raw);
  for (std::size_t i = 0; i < pending.size(); ++i) result.points[pending[i].first].p_adjusted = adjusted[i];
}

/// The process-level tests of each point pooled on both sides (raw and bound-normalised medians), and the noise
/// floor they use; fills result.noise and each pooled row's process, normalized and process_family_p.
void test_processes(const DiffOptions& options, DiffResult& result) {
  // The process-level tests again, each side's variance of log process medians floored at the median over the
  // pooled points (a random-effects view: five processes estimate a point's own spread poorly, and a point whose
  // few processes happened to agree must not look surer than the run's processes are; docs/diff.md).
  result.noise = measure_noise(result.points, options);
  const double normalized_floor = measure_noise(result.points, options, true).median_rel;
  for (DiffPoint& row : result.points) {
    if (row.base_process_s.empty()) continue;
    row.process = welch_log_test(row.base_process_s, row.new_process_s, result.noise.median_rel);
    row.process_interval = welch_log_interval(*row.process, 1 - options.alpha);
    if (!row.base_normalized.empty()) {  // with the noise floor of the normalised medians
      row.normalized = welch_log_test(row.base_normalized, row.new_normalized, normalized_floor);
      row.normalized_interval = welch_log_interval(*row.normalized, 1 - options.alpha);
    }
    if (row.across_gpus && row.normalized) {  // the raw medians moved with the GPU: the normalised test stands for it
      row.process_family_p = row.normalized->p_value;
      continue;
    }
    row.process_family_p = row.host_adjusted
                               ? std::min(1.0, 3 * std::min({row.process->p_value, row.host_adjusted->per_probe.p_value,
                                                             row.host_adjusted->covariate.p_value}))
                               : row.process->p_value;
  }
}

/// The second family: the process-level p-values of the points pooled on both sides, corrected among themselves
/// into process_p_adjusted, with each one's selection-adjusted interval.
void correct_process_family(const PendingTests& pending, const DiffOptions& options, DiffResult& result) {
  std::vector<std::size_t> pooled;
  std::vector<double> process_raw;
  for (const auto& [position, p] : pending)
    if (const DiffPoint& row = result.points[position]; row.process_family_p) {
      pooled.push_back(position);
      process_raw.push_back(*row.process_family_p);
    }
  const std::vector<double> process_adjusted = benjamini_hochberg(process_raw);
  // The selected points' intervals at the false-coverage-rate level 1 - R alpha / m (Benjamini & Yekutieli, JASA
  // 100, 2005): R of the m pooled points passed BH; a verdict needs the whole adjusted interval beyond the bound.
  const std::size_t selected = static_cast<std::size_t>(
      std::count_if(process_adjusted.begin(), process_adjusted.end(), [&](double q) { return q <= options.alpha; }));
  const double fcr_confidence = pooled.empty() ? 1 - options.alpha
                                               : 1 - static_cast<double>(std::max<std::size_t>(selected, 1)) *
                                                         options.alpha / static_cast<double>(pooled.size());
  for (std::size_t i = 0; i < pooled.size(); ++i) {
    DiffPoint& row = result.points[pooled[i]];
    row.process_p_adjusted = process_adjusted[i];
    row.process_selected_interval = welch_log_interval(
        row.across_gpus && row.normalized ? *row.normalized : *row.process, fcr_confidence);
  }
}

/// Gives every host-adjusted row the sides' calibrated eager launch time ratio (HostAdjusted::launch_ratio), which
/// widens the elasticity an across-host interval allows (host_elasticity_range).
void set_launch_ratio(const Side& base, const Side& current, DiffResult& result) {
  const auto b = median_calibration(base, "launch", "eager_time_s");
  const auto n = median_calibration(current, "launch", "eager_time_s");
  if (!b || !n || !(*b > 0) || !(*n > 0)) return;
  for (DiffPoint& row : result.points)
    if (row.host_adjusted) row.host_adjusted->launch_ratio = *n / *b;
}

/// Each compared point's verdict and reason (decide), and its gate when only the bound-normalised medians made it
/// `same`.
void decide_compared(const PendingTests& pending, const DiffOptions& options, DiffResult& result) {
  for (const auto& [position, p] : pending) {
    DiffPoint& row = result.points[position];
    auto [verdict, reason] = decide(row, options);
    row.verdict = verdict;
    row.reason = reason.empty() ? std::nullopt : std::optional(reason);
    const double up = 1 + options.min_effect;
    const bool across_hosts = row.host_adjusted && hosts_differ(*row.host_adjusted);  // gate: host_adjusted
    if (!across_hosts && row.across_gpus && row.normalized) {
      row.gate = Gate::normalized;  // judged on the normalised medians alone
      continue;
    }
    if (verdict == Verdict::same && row.process_interval && !across_hosts &&
        !(row.process_interval->ci_low >= 1 / up && row.process_interval->ci_high <= up))
      row.gate = Gate::normalized;  // only the bound-normalised medians were inside the bounds
  }
}

/// The points of one side only: result.added (new only, in new order) and result.missing (base only).
void list_unmatched(const Side& base, const Side& current, DiffResult& result) {
  for (const auto& id : current.order)
    if (!base.points.contains(id)) result.added.push_back(point_stub(*current.points.at(id).record));
  for (const auto& id : base.order)
    if (!current.points.contains(id)) result.missing.push_back(point_stub(*base.points.at(id).record));
}

/// Warns of each side with fewer points than its headers announced; returns whether the new side is one.
bool warn_incomplete(const Side& base, const Side& current, std::vector<std::string>& warnings) {
  // A run killed part-way has fewer points than its headers announced: say so, and under --fail-on any count
  // it as a regression (a CI job that died must not pass as "no regression").
  bool incomplete = false;
  for (const Side* side : {&base, &current}) {
    if (side->present < side->announced) {
      warnings.push_back(fmt::format("{} run is incomplete: {} of the {} points its header(s) announce",
                                     side == &base ? "base" : "new", side->present, side->announced));
      incomplete = incomplete || side == &current;
    }
  }
  return incomplete;
}

/// Counts the verdicts into result.summary and sets result.regression (`incomplete`: the new side is).
void summarize(const DiffOptions& options, bool incomplete, DiffResult& result) {
  DiffSummary& s = result.summary;
  bool regression = options.fail_on == DiffOptions::FailOn::any && (incomplete || !result.missing.empty());
  for (const DiffPoint& row : result.points) {
    switch (row.verdict) {
      case Verdict::same: ++s.same; break;
      case Verdict::slower: ++s.slower; break;
      case Verdict::faster: ++s.faster; break;
      case Verdict::inconclusive: ++s.inconclusive; break;
      case Verdict::status_changed: ++s.status_changed; break;
      case Verdict::not_compared: ++s.not_compared; break;
    }
    s.shared += row.shared;
    if (row.shared && !options.allow_shared) regression = true;
    const bool changed = row.verdict == Verdict::slower || row.verdict == Verdict::faster;
    s.host_sensitive_changes += row.host_sensitive && changed;
    if (row.verdict == Verdict::slower) regression = true;
    if (row.verdict == Verdict::status_changed &&
        (options.fail_on == DiffOptions::FailOn::any || is_failure(row.new_status)))
      regression = true;
  }
  s.matched = result.points.size();
  s.compared = s.same + s.slower + s.faster + s.inconclusive;
  s.added = result.added.size();
  s.missing = result.missing.size();
  result.regression = regression;
}

}  // namespace

DiffResult diff_results(const std::vector<Run>& base_runs, const std::vector<Run>& new_runs,
                        const DiffOptions& options) {
  check_options(options);
  check_one_backend_kind(base_runs, new_runs);
  const Side base = index_side(base_runs);
  const Side current = index_side(new_runs);

  DiffResult result;
  result.options = options;
  describe_sides(base, current, result);
  Caveats caveats;
  const PendingTests pending = match_points(base, current, options, result, caveats);
  // Two families of tests, each corrected (BH) on its own: the samples of every compared point, and the
  // processes of the points pooled on both sides.
  correct_sample_family(pending, result);
  test_processes(options, result);
  correct_process_family(pending, options, result);
  set_launch_ratio(base, current, result);
  decide_compared(pending, options, result);
  warn_caveats(caveats, result.warnings);
  say_host_difference(result);

  list_unmatched(base, current, result);
  if (result.points.empty())
    throw std::invalid_argument("base and new have no point in common (different sweeps?): nothing to compare");
  const bool incomplete = warn_incomplete(base, current, result.warnings);
  summarize(options, incomplete, result);
  return result;
}

}  // namespace labrun
