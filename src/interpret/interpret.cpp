// interpret()'s first half: a point's quantities (times, bytes, rates, ceilings, fractions, shares), the suspect test
// and the bound class, as an Assessment; src/interpret/interpret_note.cpp writes the record and its note from it.
#include "interpret.hpp"
#include "interpret_parts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "lab_axes.hpp"
#include "record.hpp"

namespace labrun {

using namespace interpret_parts;

namespace interpret_parts {

// The point's timing, or an empty one (every quantity NaN, every word "") for a record without timing.
const Timing& timing_of(const PointRecord& point) {
  static const Timing kNoTiming;
  return point.timing ? *point.timing : kNoTiming;
}

// The text of both roofs' fractions, for the reasons and the notes that rule them out.
std::string roofs_text(const Quantities& q) {
  return "memory at " + format_percent(q.f_mem) + " of its ceiling, compute at " + format_percent(q.f_comp) +
         " of the FP32 ceiling";
}

// The launch share at which a point is launch-bound. Blocked samples measure submission over GPU time, and the
// loop is host-paced once the host needs longer to issue an iteration than the GPU needs to run it.
double launch_threshold(const Quantities& q) { return q.blocked && std::isfinite(q.submit) ? 1.0 : kT.launch_share; }

// Why a point has no time: its status, or a status "ok" without a valid time.
std::string untimed_why(const Quantities& q) {
  return q.status == Status::ok ? "no valid time (timing.time_s missing, non-finite or not positive)"
                                : std::string("status ") + to_string(q.status);
}

// The record's own reason as a suffix (": reason"), or "" when it has none.
std::string record_reason_suffix(const PointRecord& point) {
  const std::string record_reason = point.reason.value_or("");
  return record_reason.empty() ? "" : ": " + record_reason;
}

}  // namespace interpret_parts

namespace {

// The mode the point was timed in: timing.mode, else the lab axis when it is a word, else "eager".
std::string timing_mode(const PointRecord& point, const Timing& tm) {
  std::string mode = tm.mode;
  if (mode.empty() && point.axes.is_object()) {
    // A record whose timing does not say the mode: the lab axis, when it is a word.
    const auto it = point.axes.find(kModeAxis);
    if (it != point.axes.end() && it->is_string()) mode = it->get<std::string>();
  }
  if (mode.empty()) mode = "eager";
  return mode;
}

// The point's own quantities: status, timing and cost, as read from the record.
Quantities read_point(const PointRecord& point) {
  const Timing& tm = timing_of(point);
  Quantities q;
  q.status = point.status;
  q.what = (point.variant.empty() ? std::string("point") : point.variant) + " (" + format_axes(point.axes) + ")";

  q.time = tm.time_s;
  q.wall = median_of(tm.wall);
  q.device = median_of(tm.device);
  q.syncs = tm.host_syncs_per_iteration;
  q.method = tm.method;
  q.method_name = tm.method_name();
  q.blocked = q.method == TimingMethod::cuda_events_blocked;
  q.submit = median_of(tm.submit);
  q.probe = median_of(tm.host_probe);
  q.mode = timing_mode(point, tm);
  q.l2 = tm.l2;
  q.bytes = point.cost.bytes;
  q.compulsory_bytes = point.cost.compulsory_bytes;
  q.flop = point.cost.flop;
  q.launches = point.cost.launches;
  return q;
}

// The header's calibrated figures (a missing or non-positive one becomes NaN) and the ceilings made from them.
void read_calibration(const RunHeader& header, Quantities& q) {
  q.copy = header.calibration("copy", "bandwidth_Bps");
  q.read = header.calibration("read", "bandwidth_Bps");
  q.fp32 = header.calibration("fp32_fma", "flop_per_s");
  q.bf16 = header.calibration("bf16_gemm", "flop_per_s");
  q.launch_time = header.calibration("launch", q.mode == "graph" ? "graph_time_s" : "eager_time_s");
  q.theoretical_bw = header.theoretical_bandwidth_Bps();
  q.l2_bytes = header.l2_bytes();
  for (double* c : {&q.copy, &q.read, &q.fp32, &q.bf16, &q.launch_time, &q.theoretical_bw, &q.l2_bytes})
    if (!positive(*c)) *c = kNaN;

  // Ceilings. std::fmax ignores a NaN operand, so a missing figure falls back on the others.
  q.mem_ceiling = std::fmax(q.copy, q.read);
  q.mem_source = (std::isfinite(q.read) && !(q.copy > q.read)) ? "read" : "copy";
  q.peak_bw = std::fmax(q.mem_ceiling, q.theoretical_bw);
  q.peak_compute = std::fmax(q.fp32, q.bf16);
  q.calibrated = std::isfinite(q.mem_ceiling) && std::isfinite(q.fp32);
}

// The derived quantities: rates, fractions of the ceilings, shares and the time floor (docs/metrics.md
// "Interpretation").
void derive(Quantities& q) {
  q.timed = q.status == Status::ok && positive(q.time);
  if (q.timed) {
    q.bw = over(q.bytes, q.time);
    q.compulsory_bw = over(q.compulsory_bytes, q.time);
    q.flop_rate = over(q.flop, q.time);
    // Blocked samples measure the host's cost of issuing an iteration directly; otherwise the calibrated
    // empty-kernel launch time stands in for each launch.
    q.launch_share = q.blocked && std::isfinite(q.submit) ? over(q.submit, q.time)
                                                          : over(q.launches * q.launch_time, q.time);
  }
  q.intensity = over(q.flop, q.compulsory_bytes);
  q.f_mem = over(q.bw, q.mem_ceiling);
  q.f_copy = over(q.bw, q.copy);
  q.f_read = over(q.bw, q.read);
  q.f_theoretical = over(q.bw, q.theoretical_bw);
  q.f_comp = over(q.flop_rate, q.fp32);
  q.f_bf16 = over(q.flop_rate, q.bf16);
  if (std::isfinite(q.intensity) && q.calibrated) q.roof = std::min(q.mem_ceiling * q.intensity, q.fp32);
  q.f_roof = over(q.flop_rate, q.roof);
  q.ridge = over(q.fp32, q.mem_ceiling);
  // Blocked samples enqueue first and execute after, so their wall - device is the enqueue, not a stall.
  if (!q.blocked && positive(q.wall) && std::isfinite(q.device)) q.stall = (q.wall - q.device) / q.wall;
  q.per_launch = over(over(q.bytes, q.launches), q.mem_ceiling);
  q.l2_resident = q.l2 == "hot" && std::isfinite(q.compulsory_bytes) && positive(q.l2_bytes) &&
                  q.compulsory_bytes <= kT.l2_resident_multiple * q.l2_bytes;
  // Time floor: compulsory bytes at the highest bandwidth, flops at the highest compute rate. A hot, L2-resident
  // working set can beat the DRAM term, so the suspect test then uses the flop term alone.
  const double floor_flop = over(q.flop, q.peak_compute);
  q.floor = std::fmax(over(q.compulsory_bytes, q.peak_bw), floor_flop);
  q.suspect_floor = q.l2_resident ? floor_flop : q.floor;
}

// Every reason to distrust the time: faster than physics allows, or a clock that did not wait for the work.
std::vector<std::string> suspect_findings(const Quantities& q) {
  std::vector<std::string> suspects;
  if (q.method == TimingMethod::host_clock_unsynchronized)
    suspects.push_back(
        "timing.method is host_clock_unsynchronized: the host clock stopped when the work was "
        "enqueued, not when it finished, so the time measures the enqueue (lab.timing: "
        "unsynchronized is a teaching demo)");
  if (q.timed && positive(q.suspect_floor) && q.time < q.suspect_floor * (1 - kT.suspect_margin))
    suspects.push_back("the time " + format_time(q.time) + " is " + format_number(q.suspect_floor / q.time) +
                       "× below the physical floor " + format_time(q.suspect_floor) +
                       " (compulsory bytes at the peak bandwidth " + format_rate(q.peak_bw, "B/s") +
                       ", flops at the peak compute rate)");
  // Case C10: with L2 flushed before every sample, data must come from DRAM, so a compulsory bandwidth above
  // the measured memory ceiling (no margin) means the flush or the byte count is wrong.
  const double cold_bw = over(q.compulsory_bytes, q.time);
  if (q.timed && q.l2 == "cold" && positive(q.mem_ceiling) && std::isfinite(cold_bw) && cold_bw > q.mem_ceiling)
    suspects.push_back("cold L2, yet the compulsory bandwidth " + format_rate(cold_bw, "B/s") +
                       " exceeds the measured memory ceiling " + format_rate(q.mem_ceiling, "B/s") +
                       ": data cannot come from DRAM that fast");
  return suspects;
}

// The classifier's view of the shares and fractions: NaN counts as 0 (a negative stall as 0 too).
struct Levels {
  bool synced;
  double stall, lshare, fm, fc;
};

// The Levels of `q`.
Levels levels_of(const Quantities& q) {
  return Levels{std::isfinite(q.syncs) && q.syncs >= 1, std::isfinite(q.stall) ? std::max(0.0, q.stall) : 0.0,
                std::isfinite(q.launch_share) ? q.launch_share : 0.0, std::isfinite(q.f_mem) ? q.f_mem : 0.0,
                std::isfinite(q.f_comp) ? q.f_comp : 0.0};
}

// A verdict that places no class: bound "unknown", no confidence.
Verdict no_class(Case kind, std::string reason, std::string rule) {
  Verdict v;
  v.kind = kind;
  v.reason = std::move(reason);
  v.rule = std::move(rule);
  return v;
}

// The verdict for a host sync in every iteration with a visible host cost.
Verdict sync_verdict(const Levels& l) {
  const std::string rule = l.stall >= kT.sync_stall_share
                               ? fmt::format("host_syncs >= 1 and host_stall_share >= {}", kT.sync_stall_share)
                               : fmt::format("host_syncs >= 1 and launch_overhead_share + host_stall_share >= {}",
                                             kT.sync_host_share);
  return Verdict{Case::kSync, "sync", "strong",
                 "a host synchronization in every iteration: the host waits, and cannot queue the next launches "
                 "ahead",
                 rule};
}

// The verdict for a launch share at or above `threshold` (see launch_threshold()).
Verdict launch_verdict(double threshold) {
  return Verdict{Case::kLaunch, "launch", "strong",
                 threshold == 1.0 ? "the host takes longer to issue an iteration than the GPU takes to run it"
                                  : "the calibrated cost of its kernel launches is most of the time",
                 fmt::format("launch_overhead_share >= {}", threshold)};
}

// The verdict for the nearer roof (memory or compute, whichever fraction is larger), placed by `threshold`.
Verdict roof_verdict(const Levels& l, const char* confidence, const char* prefix, double threshold,
                     const char* suffix) {
  Verdict v;
  v.kind = Case::kRoof;
  v.bound = l.fm >= l.fc ? "memory" : "compute";
  v.confidence = confidence;
  v.rule = fmt::format("{}fraction_of_{}_ceiling >= {}{}", prefix, v.bound, threshold, suffix);
  v.reason = v.bound == "memory" ? "the achieved DRAM traffic is close to the calibrated memory ceiling"
                                 : "the achieved FLOP rate is close to the calibrated FP32 ceiling";
  return v;
}

// The verdict for a host sync in every iteration when nothing else explains the time.
Verdict weak_sync_verdict() {
  return Verdict{Case::kWeakSync, "sync", "weak",
                 "no roof reached and a host synchronization in every iteration: the sync is the structural cost "
                 "left, although the stall the clocks can see is small",
                 fmt::format("no roof >= {}; host_syncs >= 1 (weak)", kT.roof_fraction)};
}

// Is the work per launch too small to fill the GPU: a short time, or little ideal work per launch?
bool latency_sized(const Quantities& q) {
  return std::isfinite(q.time) &&
         (q.time < kT.latency_time_s || (std::isfinite(q.per_launch) && q.per_launch < kT.latency_per_launch_s));
}

// The verdict for too little work per launch (latency_sized()).
Verdict latency_verdict(const Quantities& q) {
  const std::string rule = q.time < kT.latency_time_s
                               ? fmt::format("no roof >= {} and time_s < {}", kT.roof_fraction, kT.latency_time_s)
                               : fmt::format("no roof >= {} and ideal_time_per_launch_s < {}", kT.roof_fraction,
                                             kT.latency_per_launch_s);
  return Verdict{Case::kLatency, "latency", "strong",
                 "too little work per launch to fill the GPU: fixed per-kernel costs (fill, drain, tail) dominate",
                 rule};
}

// The class of a timed, trustworthy, calibrated point: the first rule that fires, strongest first.
Verdict classify(const Quantities& q) {
  const Levels l = levels_of(q);
  if (l.synced && (l.stall >= kT.sync_stall_share || l.lshare + l.stall >= kT.sync_host_share)) return sync_verdict(l);
  const double lthreshold = launch_threshold(q);
  if (l.lshare >= lthreshold) return launch_verdict(lthreshold);
  if (l.fm >= kT.roof_fraction || l.fc >= kT.roof_fraction) return roof_verdict(l, "strong", "", kT.roof_fraction, "");
  if (l.synced) return weak_sync_verdict();
  if (latency_sized(q)) return latency_verdict(q);
  if (std::max(l.fm, l.fc) >= kT.weak_roof_fraction)
    return roof_verdict(l, "weak", "no other class; ", kT.weak_roof_fraction, " (weak)");
  return no_class(Case::kUnknown,
                  "below both roofs (" + roofs_text(q) + ") with no launch, sync or small-work explanation",
                  "no threshold met");
}

// The verdict of any point: untimed, suspect or uncalibrated points get no class; the others are classified.
Verdict decide(const Assessment& a, const PointRecord& point, const RunHeader& header) {
  const Quantities& q = a.q;
  if (!q.timed) return no_class(Case::kNotTimed, "not timed: " + untimed_why(q) + record_reason_suffix(point), "");
  if (a.suspect) return no_class(Case::kSuspect, "suspect: " + a.suspect_reason, "suspect");
  if (!q.calibrated) {
    const std::string backend = header.calibration_backend();
    return no_class(Case::kUncalibrated,
                    "no calibrated ceilings in the header" +
                        (backend.empty() ? std::string() : " (backend " + backend + ")") +
                        ": the bound cannot be placed against a roof",
                    "no calibration");
  }
  return classify(q);
}

// Computes everything about one point: its quantities, the suspect test, its verdict and its iteration time.
Assessment assess(const PointRecord& point, const RunHeader& header) {
  Assessment a;
  a.q = read_point(point);
  read_calibration(header, a.q);
  derive(a.q);
  std::vector<std::string> findings = suspect_findings(a.q);
  // Another process held the device (case C23): the time measures the sharing as well as the code.
  const DeviceState before = device_state_of(point, "before"), after = device_state_of(point, "after");
  if (before.tenant_count > 0 || after.tenant_count > 0)
    findings.push_back("another process held the device during timing (" +
                       (before.tenant_count > 0 ? before.tenants : after.tenants) + ")");
  for (const auto& s : findings) a.suspect_reason += (a.suspect_reason.empty() ? "" : "; and ") + s;
  a.suspect = !a.suspect_reason.empty();
  a.verdict = decide(a, point, header);
  a.iteration = iteration_time(point);
  return a;
}

}  // namespace

IterationTime iteration_time(const PointRecord& point) {
  const Timing& tm = timing_of(point);
  const double gpu = tm.time_s;
  const double submit = median_of(tm.submit);
  const bool blocked = tm.method == TimingMethod::cuda_events_blocked;
  const bool host_paced = blocked && std::isfinite(submit) && std::isfinite(gpu) && submit > gpu;
  const OptionalSummary& src = host_paced ? tm.submit : tm.device ? tm.device : tm.wall;
  return IterationTime{host_paced ? submit : gpu, src ? src->ci95_low_time_s : kNaN, src ? src->ci95_high_time_s : kNaN,
                       host_paced};
}

// Computing and rendering are apart: assess() decides, render() writes the record and its note.
Interpretation interpret(const PointRecord& point, const RunHeader& header) {
  return render(assess(point, header), point);
}

// ---------------------------------------------------------------------------------------------------------------
// JSON shims, kept until every caller is typed.

IterationTime iteration_time(const Json& point) { return iteration_time(point_from_json_tolerant(point)); }

Json interpret_point(const Json& point, const Json& header) {
  RunHeader h;
  if (header.is_object()) h.json = header;
  return to_json(interpret(point_from_json_tolerant(point), h));
}

}  // namespace labrun
