#include "interpret.hpp"

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

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const InterpretThresholds& kT = kInterpretThresholds;

bool positive(double x) { return std::isfinite(x) && x > 0; }

// a / b when both are finite and b > 0, else NaN.
double over(double a, double b) { return (std::isfinite(a) && positive(b)) ? a / b : kNaN; }

// A finite value, or NaN (stored as null) when an input was missing or non-finite.
double finite_or_nan(double x) { return std::isfinite(x) ? x : kNaN; }

// The median of a timing summary; NaN when the record has none.
double median_of(const OptionalSummary& s) { return s ? s->median_time_s : kNaN; }

// The point's timing, or an empty one (every quantity NaN, every word "") for a record without timing.
const Timing& timing_of(const PointRecord& point) {
  static const Timing kNoTiming;
  return point.timing ? *point.timing : kNoTiming;
}

// SM clocks and throttle reasons recorded around the timing (device_state.before/after, through the record
// type's DeviceState view).
std::string clocks_text(const PointRecord& point) {
  const DeviceState before = device_state_of(point, "before"), after = device_state_of(point, "after");
  if (!before.recorded && !after.recorded) return "clocks were not recorded";
  std::vector<std::string> reasons;
  for (const DeviceState* s : {&before, &after})
    if (s->throttled) reasons.push_back(s->reasons.empty() ? "?" : s->reasons);
  if (!reasons.empty())
    return "throttle reasons were recorded (" + reasons.front() +
           "): the clock was not steady, so treat the point "
           "as a different experiment";
  if (std::isfinite(before.sm_clock_hz) && std::isfinite(after.sm_clock_hz))
    return fmt::format("SM clock {:.0f} MHz before and {:.0f} MHz after timing, no throttle reason",
                       before.sm_clock_hz / 1e6, after.sm_clock_hz / 1e6);
  return "no throttle reason recorded";
}

// Everything interpret() computes before classifying. SI units: s, bytes, FLOP, B/s, FLOP/s; shares and
// fractions are dimensionless. NaN marks a quantity whose inputs are missing or non-finite.
struct Quantities {
  std::string what, method_name, mode, l2, mem_source;  // method_name: timing.method as the record spells it
  Status status = Status::error;
  TimingMethod method = TimingMethod::other;
  double time = kNaN, wall = kNaN, device = kNaN, syncs = kNaN, submit = kNaN;
  double probe = kNaN;   // host probe: seconds per bare sync round trip, measured beside the samples (live only)
  bool blocked = false;  // GPU time measured on work queued behind a blocking kernel; submit = host enqueue time
  double bytes = kNaN, compulsory_bytes = kNaN, flop = kNaN, launches = kNaN;
  double copy = kNaN, read = kNaN, theoretical_bw = kNaN, fp32 = kNaN, bf16 = kNaN, launch_time = kNaN, l2_bytes = kNaN;
  double mem_ceiling = kNaN, peak_bw = kNaN, peak_compute = kNaN;
  double bw = kNaN, compulsory_bw = kNaN, flop_rate = kNaN, intensity = kNaN, roof = kNaN, ridge = kNaN;
  double f_mem = kNaN, f_copy = kNaN, f_read = kNaN, f_theoretical = kNaN, f_comp = kNaN, f_bf16 = kNaN, f_roof = kNaN;
  double floor = kNaN, suspect_floor = kNaN, launch_share = kNaN, stall = kNaN, per_launch = kNaN;
  bool timed = false, l2_resident = false, calibrated = false;
};

std::string ceiling_text(const Quantities& q) {
  std::string s = format_rate(q.bw, "B/s") + " = " + format_percent(q.f_mem) + " of the " +
                  format_rate(q.mem_ceiling, "B/s") + " " + q.mem_source + " ceiling";
  if (q.mem_source == "read" && std::isfinite(q.f_copy))
    s += " (" + format_percent(q.f_copy) + " of the " + format_rate(q.copy, "B/s") + " copy figure)";
  else if (q.mem_source == "copy" && std::isfinite(q.f_read))
    s += " (" + format_percent(q.f_read) + " of the " + format_rate(q.read, "B/s") + " read figure)";
  return s;
}

std::string compute_text(const Quantities& q) {
  return format_rate(q.flop_rate, "FLOP/s") + " = " + format_percent(q.f_comp) + " of the " +
         format_rate(q.fp32, "FLOP/s") + " FP32 FMA ceiling";
}

std::string launch_text(const Quantities& q) {
  if (q.blocked && std::isfinite(q.submit))
    return "host submission " + format_time(q.submit) +
           " per iteration (measured: " + format_count(q.launches, "launch", "launches") +
           " enqueued behind a blocking kernel) = " + format_percent(q.launch_share) + " of the GPU time";
  return format_count(q.launches, "launch", "launches") + " × " + format_time(q.launch_time) + " (calibrated " +
         q.mode + " launch) = " + format_time(q.launches * q.launch_time) + ", " + format_percent(q.launch_share) +
         " of the time";
}

std::string stall_text(const Quantities& q) {
  if (q.blocked) return "no host stall (no host sync; the GPU ran work queued ahead)";
  if (!std::isfinite(q.stall)) return "host stall unknown (no device timing)";
  return "host stall (wall − device) " + format_time(q.wall - q.device) + " = " + format_percent(q.stall) +
         " of the wall time";
}

std::string sync_text(const Quantities& q) {
  if (!std::isfinite(q.syncs)) return "host syncs not recorded";
  std::string text = format_count(q.syncs, "host sync", "host syncs") + " per iteration";
  if (q.syncs > 0 && positive(q.probe) && std::isfinite(q.time))
    text += "; a bare sync round trip (host probe) took " + format_time(q.probe) + ", the iteration " +
            format_number(std::round(q.time / q.probe * 10) / 10) + " of them";
  return text;
}

std::string l2_text(const Quantities& q) {
  if (q.l2.empty() || !std::isfinite(q.compulsory_bytes) || !positive(q.l2_bytes)) return "";
  if (q.l2_resident)
    return "hot L2 and a " + format_bytes(q.compulsory_bytes) + " working set under the " + format_bytes(q.l2_bytes) +
           " L2: data may come from cache, so rates above the DRAM ceiling are possible";
  if (q.l2 == "cold") return "L2 flushed before every sample (cold), so the data came from DRAM";
  return "the " + format_bytes(q.compulsory_bytes) + " working set exceeds the " + format_bytes(q.l2_bytes) +
         " L2, so the data streams from DRAM even with a hot L2";
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

// ---- Computing: the quantities, the suspect test and the class -------------------------------------------------

// Which outcome placed the point; the renderer writes the note's bound, next change and other cause from it.
enum class Case { kNotTimed, kSuspect, kUncalibrated, kSync, kLaunch, kRoof, kWeakSync, kLatency, kUnknown };

// What the classification decided: the record's bound, confidence, reason and rule, and the case that fired.
struct Verdict {
  Case kind = Case::kUnknown;
  std::string bound = "unknown";
  std::string confidence;  // "strong", "weak" or empty (unknown)
  std::string reason;      // one line: why this class
  std::string rule;        // the threshold rule that fired
};

// Everything interpret() decides about a point, before any of it is written as the record and its note.
struct Assessment {
  Quantities q;
  bool suspect = false;
  std::string suspect_reason;  // every suspect finding, joined by "; and "
  Verdict verdict;
  IterationTime iteration{};
};

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

// ---- Rendering: the note and the record -----------------------------------------------------------------------

// The note's parts that depend on the verdict: note.bound, note.next_change and note.other_cause_checked.
struct Advice {
  std::string bound, next, other;
};

// The advice for a point without a time.
Advice untimed_advice(const Quantities& q) {
  Advice a;
  a.bound = "no class: the point has no time";
  a.other = "none: there is no measurement to check";
  if (q.status == Status::incorrect) a.next = "fix correctness first: the time of a wrong result means nothing";
  else if (q.status == Status::capture_unsupported)
    a.next =
        "make the variant capturable (no host-visible, data-dependent size inside the iteration), or compare "
        "it in eager mode";
  else a.next = "see the record's reason";
  return a;
}

// The advice for a suspect time.
Advice suspect_advice(const Quantities& q) {
  const bool unsync = q.method == TimingMethod::host_clock_unsynchronized;
  const std::string rate = std::isfinite(q.f_mem) && q.f_mem > 2 ? format_number(q.f_mem) + "× the memory ceiling"
                                                                 : format_percent(q.f_mem) + " of the memory ceiling";
  Advice a;
  a.bound = unsync && !(q.f_mem > 1) ? "no class: the clock did not wait for the work, so even a plausible-looking " +
                                           rate + " says nothing about it"
                                     : "no class: the time is not the work's (it would mean " + rate + ")";
  a.next = unsync ? "re-run with lab.timing: synchronized (device events on the work's stream), the default"
                  : "check the cost model's byte and flop counts and the timing (events on the work's stream, "
                    "synchronized before reading)";
  const bool below_floor = positive(q.floor) && q.time < q.floor;
  a.other = unsync ? (below_floor ? "the value is also " + format_number(q.floor / q.time) +
                                        "× below the physical floor " + format_time(q.floor)
                                  : "the value is not below the physical floor " + format_time(q.floor) +
                                        ", which shows that a plausible time is no proof of a measurement")
                   : "the floor uses the peak bandwidth " + format_rate(q.peak_bw, "B/s") + " and peak compute " +
                         format_rate(q.peak_compute, "FLOP/s") + ", which no real result can beat";
  return a;
}

// The advice for a sync-bound point (strong).
Advice sync_advice(const Quantities& q) {
  return Advice{.bound = "sync-bound: " + sync_text(q) + "; " + stall_text(q) +
                         ", and the launches the host cannot queue ahead cost ≈ " + format_percent(q.launch_share) +
                         " more",
                .next =
                    "keep the data-dependent size on the device (a device-side count) so the host never waits inside "
                    "the iteration; the iteration can then be queued ahead and captured in a CUDA graph",
                .other = "not memory- or compute-bound: " + roofs_text(q) + "; launch overhead alone " +
                         format_percent(q.launch_share) + " (below the " + format_percent(kT.launch_share) +
                         " launch threshold)"};
}

// The advice for a launch-bound point.
Advice launch_advice(const Quantities& q) {
  return Advice{.bound = "launch-bound: " + launch_text(q),
                .next = q.mode == "graph" ? "fuse kernels: even replayed from a graph, " +
                                                format_count(q.launches, "launch", "launches") + " cost " +
                                                format_time(q.launches * q.launch_time)
                                          : "replay the iteration from a CUDA graph (calibrated " +
                                                format_time(q.launch_time) + " per eager launch) or fuse its " +
                                                format_count(q.launches, "kernel", "kernels") + " into fewer",
                .other = "not memory- or compute-bound: " + roofs_text(q) + "; " + sync_text(q) + ", " + stall_text(q)};
}

// The advice for a memory- or compute-bound point, strong or weak.
Advice roof_advice(const Quantities& q, const Verdict& v) {
  const bool weak = v.confidence == "weak";
  const std::string weak_text =
      weak ? " (weak: below the " + format_percent(kT.roof_fraction) + " threshold, but the nearer roof)" : "";
  Advice a;
  if (v.bound == "memory") {
    a.bound = (weak ? "probably memory-bound" : "memory-bound") + weak_text + ": " + ceiling_text(q);
    const double excess = over(q.bytes, q.compulsory_bytes);
    if (std::isfinite(excess) && excess > 1.05)
      a.next = "move fewer bytes: the variant issues " + format_bytes(q.bytes) + ", " + fmt::format("{:.1f}", excess) +
               "× the " + format_bytes(q.compulsory_bytes) +
               " compulsory traffic; fusing its passes into one could approach " +
               format_time(q.compulsory_bytes / q.mem_ceiling) + " at the same ceiling";
    else
      a.next = "it already moves only its compulsory bytes at " + format_percent(q.f_mem) +
               " of the ceiling: only fewer bytes (a narrower dtype, a bit-packed mask) can make it faster";
    a.other = "not compute-bound: " + compute_text(q) + "; not launch-bound: " + launch_text(q) + "; " + sync_text(q) +
              ", " + stall_text(q);
  } else {
    a.bound = (weak ? "probably compute-bound" : "compute-bound") + weak_text + ": " + compute_text(q);
    a.next =
        "do less arithmetic per element or use faster units: cheaper math (intrinsics, fewer transcendentals), "
        "lower precision, or tensor cores for matmul-shaped work";
    a.other = "not memory-bound: " + ceiling_text(q) + "; not launch-bound: " + launch_text(q) + "; " + sync_text(q);
  }
  return a;
}

// The advice for a probably sync-bound point (weak).
Advice weak_sync_advice(const Quantities& q) {
  return Advice{.bound = "probably sync-bound (weak): " + sync_text(q) + "; " + stall_text(q) + "; launches ≈ " +
                         format_percent(q.launch_share) + "; " + roofs_text(q),
                .next =
                    "keep the data-dependent size on the device so the host never waits inside the iteration; "
                    "compare with a variant that has no host sync at the same point",
                .other = "not launch-bound (" + format_percent(q.launch_share) + " < " +
                         format_percent(kT.launch_share) + "); no roof reached: " + roofs_text(q)};
}

// The advice for a latency-bound point.
Advice latency_advice(const Quantities& q) {
  return Advice{.bound = "latency-bound: " + format_time(q.time) + " for " +
                         format_count(q.launches, "launch", "launches") + ", each worth ≈ " +
                         format_time(q.per_launch) + " of streaming at the memory ceiling; " + format_percent(q.f_mem) +
                         " of the memory ceiling reached",
                .next =
                    "give each launch more work: larger problems or several batched per launch, and fewer, fused "
                    "kernels (a graph removes launch cost but not each kernel's fill and drain)",
                .other = "not launch-bound: " + launch_text(q) + " (below " + format_percent(launch_threshold(q)) +
                         "); " + sync_text(q) + "; " + roofs_text(q)};
}

// The advice for a point no rule placed.
Advice unknown_advice(const Quantities& q, const Verdict& v) {
  return Advice{.bound = "no class: " + v.reason,
                .next =
                    "profile the kernels (Nsight Compute) to find the limiter, and check the cost model: work it "
                    "does not count (e.g. a transcendental counted as one flop, extra passes) would hide the real "
                    "roof",
                .other = launch_text(q) + "; " + sync_text(q) + "; work per launch ≈ " + format_time(q.per_launch) +
                         " of streaming, so not a small-work latency case"};
}

// The advice for the verdict's case.
Advice advice_for(const Quantities& q, const Verdict& v) {
  switch (v.kind) {
    case Case::kNotTimed: return untimed_advice(q);
    case Case::kSuspect: return suspect_advice(q);
    case Case::kUncalibrated:
      return Advice{.bound = "no class: " + v.reason,
                    .next = "run on a calibrated device backend (--device cuda) to classify the bound",
                    .other = "none: without ceilings no cause can be ruled out"};
    case Case::kSync: return sync_advice(q);
    case Case::kLaunch: return launch_advice(q);
    case Case::kRoof: return roof_advice(q, v);
    case Case::kWeakSync: return weak_sync_advice(q);
    case Case::kLatency: return latency_advice(q);
    case Case::kUnknown: break;
  }
  return unknown_advice(q, v);
}

// note.measured: the time, rates, launches and syncs, or why there is no time.
std::string measured_text(const Quantities& q, const PointRecord& point) {
  if (!q.timed) return q.what + ": not timed (" + untimed_why(q) + ")" + record_reason_suffix(point);
  const std::string source = q.method == TimingMethod::host_clock_unsynchronized ? "unsynchronized host clock"
                             : std::isfinite(q.device)                           ? "device events"
                                                                                 : "synchronized wall clock";
  return q.what + ": " + format_time(q.time) + " per iteration (median, " + source +
         (std::isfinite(q.device) && std::isfinite(q.wall) ? "; wall " + format_time(q.wall) : "") + "); " +
         format_rate(q.bw, "B/s") + " issued (" + format_bytes(q.bytes) + "), " + format_rate(q.compulsory_bw, "B/s") +
         " compulsory (" + format_bytes(q.compulsory_bytes) + "), " + format_rate(q.flop_rate, "FLOP/s") + "; " +
         format_count(q.launches, "launch", "launches") + " and " + sync_text(q);
}

// note.evidence: the numbers against the roofs, floor, launches, stall, syncs and L2; the reason when untimed.
std::string evidence_text(const Quantities& q, const Verdict& v) {
  if (!q.timed) return v.reason;
  // Quantities without a value (no calibrated ceilings on the host backend, 0/0 for an empty problem) read "n/a".
  auto number = [](double x) { return std::isfinite(x) ? format_number(x) : std::string("n/a"); };
  std::string text = "arithmetic intensity " + number(q.intensity) + " flop/B (ridge point " + number(q.ridge) +
                     " flop/B), roofline ceiling here " + format_rate(q.roof, "FLOP/s") + " (" +
                     format_percent(q.f_roof) + " reached); memory " + format_percent(q.f_mem) + " and compute " +
                     format_percent(q.f_comp) + " of their ceilings; time " + number(q.time / q.floor) +
                     "× the floor " + format_time(q.floor) +
                     (q.l2_resident ? " (its DRAM term is no hard floor for an L2-resident working set)" : "") +
                     "; launch overhead ≈ " + format_percent(q.launch_share) + "; " + stall_text(q) + "; " +
                     sync_text(q);
  const std::string l2 = l2_text(q);
  if (!l2.empty()) text += "; " + l2;
  return text;
}

// The five-part note of an assessed point.
Note note_of(const Assessment& a, const PointRecord& point) {
  const Advice advice = advice_for(a.q, a.verdict);
  std::string other = advice.other;
  if (a.q.timed) other += "; " + clocks_text(point);
  return Note{measured_text(a.q, point), advice.bound, evidence_text(a.q, a.verdict), advice.next, other};
}

// The ceilings the point was measured against; NaN is written as null.
Ceilings ceilings_of(const Quantities& q) {
  Ceilings c;
  c.memory_bandwidth_Bps = finite_or_nan(q.mem_ceiling);
  if (std::isfinite(q.mem_ceiling)) c.memory_source = q.mem_source;
  c.copy_bandwidth_Bps = finite_or_nan(q.copy);
  c.read_bandwidth_Bps = finite_or_nan(q.read);
  c.theoretical_bandwidth_Bps = finite_or_nan(q.theoretical_bw);
  c.peak_bandwidth_Bps = finite_or_nan(q.peak_bw);
  c.compute_flop_per_s = finite_or_nan(q.fp32);
  c.bf16_gemm_flop_per_s = finite_or_nan(q.bf16);
  c.peak_compute_flop_per_s = finite_or_nan(q.peak_compute);
  c.launch_time_s = finite_or_nan(q.launch_time);
  c.l2_bytes = finite_or_nan(q.l2_bytes);
  return c;
}

// The achieved rates as fractions of each ceiling; NaN is written as null.
Fractions fractions_of(const Quantities& q) {
  Fractions f;
  f.memory_ceiling = finite_or_nan(q.f_mem);
  f.copy = finite_or_nan(q.f_copy);
  f.read = finite_or_nan(q.f_read);
  f.theoretical = finite_or_nan(q.f_theoretical);
  f.compute_ceiling = finite_or_nan(q.f_comp);
  f.bf16_gemm = finite_or_nan(q.f_bf16);
  f.roofline = finite_or_nan(q.f_roof);
  return f;
}

// The numbers and the rule that decided; NaN is written as null.
Evidence evidence_of(const Quantities& q, const Verdict& v) {
  Evidence e;
  e.rule = v.rule;
  e.fraction_of_memory_ceiling = finite_or_nan(q.f_mem);
  e.fraction_of_compute_ceiling = finite_or_nan(q.f_comp);
  e.launch_overhead_share = finite_or_nan(q.launch_share);
  e.host_stall_share = finite_or_nan(q.stall);
  e.host_syncs_per_iteration = finite_or_nan(q.syncs);
  e.host_probe_time_s = finite_or_nan(q.probe);
  e.host_probe_recorded = true;
  e.ideal_time_per_launch_s = finite_or_nan(q.per_launch);
  e.time_s = finite_or_nan(q.time);
  e.time_floor_s = finite_or_nan(q.floor);
  return e;
}

// The record's measured quantities: times, rates, ceilings, fractions, floor and shares; NaN is written as null.
void write_quantities(const Assessment& a, Interpretation& out) {
  const Quantities& q = a.q;
  out.time_s = q.timed ? finite_or_nan(q.time) : kNaN;
  out.wall_time_s = finite_or_nan(q.wall);
  out.device_time_s = finite_or_nan(q.device);
  out.submit_time_s = finite_or_nan(q.submit);
  out.iteration_time_s = q.timed ? finite_or_nan(a.iteration.time_s) : kNaN;
  if (q.timed) out.iteration_time_basis = a.iteration.host_paced ? "host_submission" : "measured_time";
  if (!q.method_name.empty()) out.timing_method = q.method_name;
  out.achieved_bandwidth_Bps = finite_or_nan(q.bw);
  out.compulsory_bandwidth_Bps = finite_or_nan(q.compulsory_bw);
  out.flop_per_s = finite_or_nan(q.flop_rate);
  out.arithmetic_intensity_flop_per_byte = finite_or_nan(q.intensity);
  out.ceilings = ceilings_of(q);
  out.fraction_of = fractions_of(q);
  out.roofline_ceiling_flop_per_s = finite_or_nan(q.roof);
  out.ridge_point_flop_per_byte = finite_or_nan(q.ridge);
  out.time_floor_s = finite_or_nan(q.floor);
  out.launch_overhead_share = finite_or_nan(q.launch_share);
  out.host_stall_share = finite_or_nan(q.stall);
  out.host_syncs_per_iteration = finite_or_nan(q.syncs);
  out.ideal_time_per_launch_s = finite_or_nan(q.per_launch);
  out.l2_resident = q.l2_resident;
}

// The record of an assessed point (to_json(Interpretation) writes it field by field).
Interpretation render(const Assessment& a, const PointRecord& point) {
  Interpretation out;
  write_quantities(a, out);
  out.bound = a.verdict.bound;
  if (!a.verdict.confidence.empty()) out.confidence = a.verdict.confidence;
  out.reason = a.verdict.reason;
  out.evidence = evidence_of(a.q, a.verdict);
  out.suspect = a.suspect;
  if (a.suspect) out.suspect_reason = a.suspect_reason;
  out.note = note_of(a, point);
  return out;
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
