// labrun diff, the comparison: matches the points of two sets of runs, compares the environments, applies the
// statistics (stats.hpp) and the gates, and decides each point's verdict (docs/diff.md). Records are read only
// through the typed records of point_record.hpp; its outputs are diff_{table,markdown,json}.cpp.
#include "diff.hpp"
#include "diff_parts.hpp"

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

using namespace diff_detail;

// ---- One side of a diff ---------------------------------------------------------------------------------------

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

using namespace diff_detail;

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
  // "N point(s) ...", when N > 0.
  const auto warn = [&](auto count, const char* what) {
    if (count > 0) warnings.push_back(fmt::format("{} point(s) {}", count, what));
  };
  warn(c.summaries_only,
       "compared from summaries alone (imported results without samples: mean, standard deviation, count; a z-test "
       "on log means that takes the samples as independent, so its intervals may be too narrow): no process-level "
       "test, no host adjustment (docs/diff.md \"Imported results\")");
  warn(c.mixed_sources, "compare device-timed samples with wall-clock samples");
  warn(c.half_pooled,
       "compare a record pooled from lab.processes with one that is not: the process gate does not apply to them, "
       "and their samples are judged alone");
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

/// Every process's calibration.launch.eager_time_s of a side (seconds), over its headers; empty unless every header
/// keeps its processes' calibrations (RunHeader::process_calibration).
std::vector<double> process_eager_launches(const Side& side) {
  std::vector<double> out;
  for (const RunHeader* h : side.headers) {
    const std::vector<double> v = h->process_calibration("launch", "eager_time_s");
    if (v.empty()) return {};
    out.insert(out.end(), v.begin(), v.end());
  }
  return out;
}

/// Gives every host-adjusted row the sides' calibrated eager launch time ratio (HostAdjusted::launch_ratio), which
/// widens the elasticity an across-host interval allows (host_elasticity_range), and whether the launch moved
/// beyond the processes' spread, the probe's way and further (HostAdjusted::launch_moved: Welch on the processes'
/// log eager launch, p < alpha).
void set_launch_ratio(const Side& base, const Side& current, const DiffOptions& options, DiffResult& result) {
  const auto b = median_calibration(base, "launch", "eager_time_s");
  const auto n = median_calibration(current, "launch", "eager_time_s");
  if (!b || !n || !(*b > 0) || !(*n > 0)) return;
  const std::vector<double> bl = process_eager_launches(base), nl = process_eager_launches(current);
  const bool tested = bl.size() >= 2 && nl.size() >= 2;
  const WelchLog moved = tested ? welch_log_test(bl, nl) : WelchLog{};
  for (DiffPoint& row : result.points) {
    if (!row.host_adjusted) continue;
    HostAdjusted& h = *row.host_adjusted;
    h.launch_ratio = *n / *b;
    const double dx = std::log(h.probe_ratio), dl = std::log(moved.ratio);
    h.launch_moved = tested && moved.p_value < options.alpha && dx * dl > 0 && std::abs(dl) > std::abs(dx);
  }
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
  set_launch_ratio(base, current, options, result);
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
