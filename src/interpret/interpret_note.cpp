// interpret()'s second half: the record of an assessed point (its quantities, ceilings, fractions, evidence)
// and its five-part note (measured, bound, evidence, next change, other cause checked). The first half,
// src/interpret/interpret.cpp, computes the Assessment.
#include "interpret_parts.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "lab_axes.hpp"
#include "record.hpp"

namespace labrun::interpret_parts {

namespace {

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

}  // namespace

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

}  // namespace labrun::interpret_parts
