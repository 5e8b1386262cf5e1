#include "interpret.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "record.hpp"

namespace labrun {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr const InterpretThresholds& kT = kInterpretThresholds;

const Json* child(const Json& j, std::initializer_list<const char*> path) { return json_find(j, path); }
double num(const Json& j, std::initializer_list<const char*> path) { return json_number(j, path); }

std::string word(const Json& j, std::initializer_list<const char*> path) {
  const Json* p = child(j, path);
  return (p && p->is_string()) ? p->get<std::string>() : std::string();
}

bool positive(double x) { return std::isfinite(x) && x > 0; }

// a / b when both are finite and b > 0, else NaN.
double over(double a, double b) { return (std::isfinite(a) && positive(b)) ? a / b : kNaN; }

// A JSON number for a finite value, null otherwise (an input was missing or non-finite).
Json opt(double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); }

// Three significant figures, for a value already scaled to [1, 1000).
std::string sig3(double v) {
  const double a = std::fabs(v);
  if (a >= 99.95) return fmt::format("{:.0f}", v);
  if (a >= 9.995) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string si(double v, const std::string& unit) {
  if (!std::isfinite(v)) return "n/a";
  static const char* const kUp[] = {"", "k", "M", "G", "T", "P", "E"};
  double a = std::fabs(v);
  int k = 0;
  while (a >= 999.5 && k < 6) {
    a /= 1000;
    v /= 1000;
    ++k;
  }
  return sig3(v) + " " + kUp[k] + unit;
}

std::string plural(double count, const std::string& one, const std::string& many) {
  return format_number(count) + " " + (count == 1 ? one : many);
}

}  // namespace

std::size_t display_width(const std::string& text) {
  std::size_t n = 0;
  for (unsigned char c : text) n += (c & 0xC0) != 0x80;  // count every byte but UTF-8 continuation bytes
  return n;
}

std::string format_time(double s) {
  if (!std::isfinite(s)) return "n/a";
  const double a = std::fabs(s);
  if (a == 0) return "0 s";
  if (a < 1e-6) return sig3(s * 1e9) + " ns";
  if (a < 1e-3) return sig3(s * 1e6) + " µs";
  if (a < 1) return sig3(s * 1e3) + " ms";
  return sig3(s) + " s";
}

std::string format_rate(double per_second, const std::string& unit) { return si(per_second, unit); }

std::string format_bytes(double bytes) { return si(bytes, "B"); }

std::string format_percent(double f) {
  if (!std::isfinite(f)) return "n/a";
  const double p = f * 100;
  const double a = std::fabs(p);
  if (a >= 9.95) return fmt::format("{:.0f}%", p);
  if (a >= 0.995) return fmt::format("{:.1f}%", p);
  if (a >= 0.00995) return fmt::format("{:.2g}%", p);
  return a == 0 ? "0%" : fmt::format("{:.1e}%", p);
}

std::string format_number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  const double a = std::fabs(v);
  if (a >= 1e4 && a < 1e18 && v == std::floor(v)) {
    // Integers: mantissa-exponent form when they have at most 3 significant digits (1e8, 2.5e7, 1.6e6).
    const int e = static_cast<int>(std::floor(std::log10(a)));
    const double m = v / std::pow(10.0, e);
    const double m3 = std::round(m * 100) / 100;
    if (std::fabs(m - m3) < 1e-9) return fmt::format("{}e{}", m3, e);
    return fmt::format("{:.0f}", v);
  }
  if (v == std::floor(v) && a < 1e4) return fmt::format("{:.0f}", v);
  std::string s = fmt::format("{:.3g}", v);
  // "3.2e+07" → "3.2e7", "1e-05" → "1e-5".
  const auto e = s.find('e');
  if (e != std::string::npos) {
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    const bool neg = !exp.empty() && exp[0] == '-';
    if (!exp.empty() && (exp[0] == '+' || exp[0] == '-')) exp.erase(0, 1);
    while (exp.size() > 1 && exp[0] == '0') exp.erase(0, 1);
    s = mant + "e" + (neg ? "-" : "") + exp;
  }
  return s;
}

std::string format_axis_value(const Json& v) {
  if (v.is_string()) {
    const auto& s = v.get_ref<const std::string&>();
    if (s == "NaN" || s == "Infinity" || s == "-Infinity") return format_number(real_from_json(v));
    return s;
  }
  // Integers beyond 2^53 are not exact as doubles: written out in full (case C14).
  if (v.is_number_unsigned() && v.get<std::uint64_t>() > (std::uint64_t{1} << 53)) return v.dump();
  if (v.is_number_integer() && !v.is_number_unsigned() && std::llabs(v.get<std::int64_t>()) > (std::int64_t{1} << 53))
    return v.dump();
  if (v.is_number()) return format_number(v.get<double>());
  return v.dump();
}

std::string format_axes(const Json& axes, const std::vector<std::string>& only) {
  std::string out;
  if (!axes.is_object()) return out;
  for (const auto& [k, v] : axes.items()) {
    if (!only.empty() && std::find(only.begin(), only.end(), k) == only.end()) continue;
    if (!out.empty()) out += ", ";
    out += k + "=" + format_axis_value(v);
  }
  return out;
}

namespace {

// What the classification decided, and the note's parts that depend on it.
struct Verdict {
  std::string bound = "unknown";
  std::string confidence;  // "strong", "weak" or empty (unknown)
  std::string reason;      // one line: why this class
  std::string rule;        // the threshold rule that fired
  std::string bound_text;  // note.bound
  std::string next;        // note.next_change
  std::string other;       // note.other_cause_checked
};

// SM clocks and throttle reasons recorded around the timing (device_state.before/after).
std::string clocks_text(const Json& point) {
  const Json* before = child(point, {"device_state", "before"});
  const Json* after = child(point, {"device_state", "after"});
  const bool b = before && before->is_object(), a = after && after->is_object();
  if (!b && !a) return "clocks were not recorded";
  std::vector<std::string> reasons;
  for (const Json* s : {before, after})
    if (s && s->is_object() && s->value("throttled", false) == true) {
      const Json* r = child(*s, {"clocks_event_reasons"});
      reasons.push_back(r ? r->dump() : "?");
    }
  if (!reasons.empty())
    return "throttle reasons were recorded (" + reasons.front() + "): the clock was not steady, so treat the point "
           "as a different experiment";
  const double mb = b ? num(*before, {"sm_clock_hz"}) : kNaN, ma = a ? num(*after, {"sm_clock_hz"}) : kNaN;
  if (std::isfinite(mb) && std::isfinite(ma))
    return fmt::format("SM clock {:.0f} MHz before and {:.0f} MHz after timing, no throttle reason", mb / 1e6,
                       ma / 1e6);
  return "no throttle reason recorded";
}

// Everything interpret_point computes before classifying. SI units: s, bytes, FLOP, B/s, FLOP/s; shares and
// fractions are dimensionless. NaN marks a quantity whose inputs are missing or non-finite.
struct Quantities {
  std::string what, status, method, mode, l2, mem_source;
  double time = kNaN, wall = kNaN, device = kNaN, syncs = kNaN, submit = kNaN;
  double probe = kNaN;   // host probe: seconds per bare sync round trip, measured beside the samples (live only)
  bool blocked = false;  // GPU time measured on work queued behind a blocking kernel; submit = host enqueue time
  double bytes = kNaN, cbytes = kNaN, flop = kNaN, launches = kNaN;
  double copy = kNaN, read = kNaN, theo = kNaN, fp32 = kNaN, bf16 = kNaN, launch_time = kNaN, l2_bytes = kNaN;
  double mem_ceiling = kNaN, peak_bw = kNaN, peak_compute = kNaN;
  double bw = kNaN, cbw = kNaN, fps = kNaN, ai = kNaN, roof = kNaN, ridge = kNaN;
  double f_mem = kNaN, f_copy = kNaN, f_read = kNaN, f_theo = kNaN, f_comp = kNaN, f_bf16 = kNaN, f_roof = kNaN;
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
  return format_rate(q.fps, "FLOP/s") + " = " + format_percent(q.f_comp) + " of the " +
         format_rate(q.fp32, "FLOP/s") + " FP32 FMA ceiling";
}

std::string launch_text(const Quantities& q) {
  if (q.blocked && std::isfinite(q.submit))
    return "host submission " + format_time(q.submit) + " per iteration (measured: " +
           plural(q.launches, "launch", "launches") + " enqueued behind a blocking kernel) = " +
           format_percent(q.launch_share) + " of the GPU time";
  return plural(q.launches, "launch", "launches") + " × " + format_time(q.launch_time) + " (calibrated " + q.mode +
         " launch) = " + format_time(q.launches * q.launch_time) + ", " + format_percent(q.launch_share) +
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
  std::string text = plural(q.syncs, "host sync", "host syncs") + " per iteration";
  if (q.syncs > 0 && positive(q.probe) && std::isfinite(q.time))
    text += "; a bare sync round trip (host probe) took " + format_time(q.probe) + ", the iteration " +
            format_number(std::round(q.time / q.probe * 10) / 10) + " of them";
  return text;
}

std::string l2_text(const Quantities& q) {
  if (q.l2.empty() || !std::isfinite(q.cbytes) || !positive(q.l2_bytes)) return "";
  if (q.l2_resident)
    return "hot L2 and a " + format_bytes(q.cbytes) + " working set under the " + format_bytes(q.l2_bytes) +
           " L2: data may come from cache, so rates above the DRAM ceiling are possible";
  if (q.l2 == "cold") return "L2 flushed before every sample (cold), so the data came from DRAM";
  return "the " + format_bytes(q.cbytes) + " working set exceeds the " + format_bytes(q.l2_bytes) +
         " L2, so the data streams from DRAM even with a hot L2";
}

Verdict classify(const Quantities& q) {
  Verdict v;
  const bool synced = std::isfinite(q.syncs) && q.syncs >= 1;
  const double stall = std::isfinite(q.stall) ? std::max(0.0, q.stall) : 0.0;
  const double lshare = std::isfinite(q.launch_share) ? q.launch_share : 0.0;
  const double fm = std::isfinite(q.f_mem) ? q.f_mem : 0.0, fc = std::isfinite(q.f_comp) ? q.f_comp : 0.0;
  const std::string roofs = "memory at " + format_percent(q.f_mem) + " of its ceiling, compute at " +
                            format_percent(q.f_comp) + " of the FP32 ceiling";

  if (synced && (stall >= kT.sync_stall_share || lshare + stall >= kT.sync_host_share)) {
    v.bound = "sync";
    v.confidence = "strong";
    v.rule = stall >= kT.sync_stall_share
                 ? fmt::format("host_syncs >= 1 and host_stall_share >= {}", kT.sync_stall_share)
                 : fmt::format("host_syncs >= 1 and launch_overhead_share + host_stall_share >= {}",
                               kT.sync_host_share);
    v.reason = "a host synchronization in every iteration: the host waits, and cannot queue the next launches ahead";
    v.bound_text = "sync-bound: " + sync_text(q) + "; " + stall_text(q) + ", and the launches the host cannot queue "
                   "ahead cost ≈ " + format_percent(q.launch_share) + " more";
    v.next = "keep the data-dependent size on the device (a device-side count, as index_device_count does) so the "
             "host never waits inside the iteration; the iteration can then be queued ahead and captured in a "
             "CUDA graph";
    v.other = "not memory- or compute-bound: " + roofs + "; launch overhead alone " + format_percent(q.launch_share) +
              " (below the " + format_percent(kT.launch_share) + " launch threshold)";
    return v;
  }
  // Blocked samples: the share is measured submission over GPU time, and the loop is host-paced (launch-bound)
  // once the host needs longer to issue an iteration than the GPU needs to run it.
  const double lthreshold = q.blocked && std::isfinite(q.submit) ? 1.0 : kT.launch_share;
  if (lshare >= lthreshold) {
    v.bound = "launch";
    v.confidence = "strong";
    v.rule = fmt::format("launch_overhead_share >= {}", lthreshold);
    v.reason = lthreshold == 1.0 ? "the host takes longer to issue an iteration than the GPU takes to run it"
                                 : "the calibrated cost of its kernel launches is most of the time";
    v.bound_text = "launch-bound: " + launch_text(q);
    v.next = q.mode == "graph"
                 ? "fuse kernels: even replayed from a graph, " + plural(q.launches, "launch", "launches") +
                       " cost " + format_time(q.launches * q.launch_time)
                 : "replay the iteration from a CUDA graph (calibrated " + format_time(q.launch_time) +
                       " per eager launch) or fuse its " + plural(q.launches, "kernel", "kernels") +
                       " into fewer";
    v.other = "not memory- or compute-bound: " + roofs + "; " + sync_text(q) + ", " + stall_text(q);
    return v;
  }
  // The nearer roof: memory or compute, whichever fraction is larger, with the rule that placed it.
  const auto nearer_roof = [&](const char* prefix, double threshold, const char* suffix) {
    v.bound = fm >= fc ? "memory" : "compute";
    v.rule = fmt::format("{}fraction_of_{}_ceiling >= {}{}", prefix, v.bound, threshold, suffix);
  };
  if (fm >= kT.roof_fraction || fc >= kT.roof_fraction) {
    v.confidence = "strong";
    nearer_roof("", kT.roof_fraction, "");
  } else if (synced) {
    v.bound = "sync";
    v.confidence = "weak";
    v.rule = fmt::format("no roof >= {}; host_syncs >= 1 (weak)", kT.roof_fraction);
    v.reason = "no roof reached and a host synchronization in every iteration: the sync is the structural cost "
               "left, although the stall the clocks can see is small";
    v.bound_text = "probably sync-bound (weak): " + sync_text(q) + "; " + stall_text(q) + "; launches ≈ " +
                   format_percent(q.launch_share) + "; " + roofs;
    v.next = "keep the data-dependent size on the device so the host never waits inside the iteration; compare "
             "with a variant that has no host sync at the same point";
    v.other = "not launch-bound (" + format_percent(q.launch_share) + " < " + format_percent(kT.launch_share) +
              "); no roof reached: " + roofs;
    return v;
  } else if (std::isfinite(q.time) &&
             (q.time < kT.latency_time_s || (std::isfinite(q.per_launch) && q.per_launch < kT.latency_per_launch_s))) {
    v.bound = "latency";
    v.confidence = "strong";
    v.rule = q.time < kT.latency_time_s
                 ? fmt::format("no roof >= {} and time_s < {}", kT.roof_fraction, kT.latency_time_s)
                 : fmt::format("no roof >= {} and ideal_time_per_launch_s < {}", kT.roof_fraction,
                               kT.latency_per_launch_s);
    v.reason = "too little work per launch to fill the GPU: fixed per-kernel costs (fill, drain, tail) dominate";
    v.bound_text = "latency-bound: " + format_time(q.time) + " for " + plural(q.launches, "launch", "launches") +
                   ", each worth ≈ " + format_time(q.per_launch) + " of streaming at the memory ceiling; " +
                   format_percent(q.f_mem) + " of the memory ceiling reached";
    v.next = "give each launch more work: larger problems or several batched per launch, and fewer, fused "
             "kernels (a graph removes launch cost but not each kernel's fill and drain)";
    v.other = "not launch-bound: " + launch_text(q) + " (below " + format_percent(lthreshold) + "); " +
              sync_text(q) + "; " + roofs;
    return v;
  } else if (std::max(fm, fc) >= kT.weak_roof_fraction) {
    v.confidence = "weak";
    nearer_roof("no other class; ", kT.weak_roof_fraction, " (weak)");
  } else {
    v.bound = "unknown";
    v.rule = "no threshold met";
    v.reason = "below both roofs (" + roofs + ") with no launch, sync or small-work explanation";
    v.bound_text = "no class: " + v.reason;
    v.next = "profile the kernels (Nsight Compute) to find the limiter, and check the cost model: work it does not "
             "count (e.g. a transcendental counted as one flop, extra passes) would hide the real roof";
    v.other = launch_text(q) + "; " + sync_text(q) + "; work per launch ≈ " + format_time(q.per_launch) +
              " of streaming, so not a small-work latency case";
    return v;
  }

  const std::string weak = v.confidence == "weak" ? " (weak: below the " + format_percent(kT.roof_fraction) +
                                                        " threshold, but the nearer roof)"
                                                  : "";
  if (v.bound == "memory") {
    v.reason = "the achieved DRAM traffic is close to the calibrated memory ceiling";
    v.bound_text = (v.confidence == "weak" ? "probably memory-bound" : "memory-bound") + weak + ": " +
                   ceiling_text(q);
    const double excess = over(q.bytes, q.cbytes);
    if (std::isfinite(excess) && excess > 1.05)
      v.next = "move fewer bytes: the variant issues " + format_bytes(q.bytes) + ", " + fmt::format("{:.1f}", excess) +
               "× the " + format_bytes(q.cbytes) + " compulsory traffic; fusing its passes into one could approach " +
               format_time(q.cbytes / q.mem_ceiling) + " at the same ceiling";
    else
      v.next = "it already moves only its compulsory bytes at " + format_percent(q.f_mem) +
               " of the ceiling: only fewer bytes (a narrower dtype, a bit-packed mask) can make it faster";
    v.other = "not compute-bound: " + compute_text(q) + "; not launch-bound: " + launch_text(q) + "; " +
              sync_text(q) + ", " + stall_text(q);
  } else {
    v.reason = "the achieved FLOP rate is close to the calibrated FP32 ceiling";
    v.bound_text = (v.confidence == "weak" ? "probably compute-bound" : "compute-bound") + weak + ": " +
                   compute_text(q);
    v.next = "do less arithmetic per element or use faster units: cheaper math (intrinsics, fewer transcendentals), "
             "lower precision, or tensor cores for matmul-shaped work";
    v.other = "not memory-bound: " + ceiling_text(q) + "; not launch-bound: " + launch_text(q) + "; " + sync_text(q);
  }
  return v;
}

}  // namespace

IterationTime iteration_time(const Json& point) {
  const double gpu = num(point, {"timing", "time_s"});
  const double submit = num(point, {"timing", "submit", "median_time_s"});
  const bool blocked = word(point, {"timing", "method"}) == kBlockedTimingMethod;
  const bool host_paced = blocked && std::isfinite(submit) && std::isfinite(gpu) && submit > gpu;
  const Json* device = child(point, {"timing", "device"});
  const char* src = host_paced ? "submit" : (device && device->is_object()) ? "device" : "wall";
  return IterationTime{host_paced ? submit : gpu, num(point, {"timing", src, "ci95_low_time_s"}),
                       num(point, {"timing", src, "ci95_high_time_s"}), host_paced};
}

Json interpret_point(const Json& point, const Json& header) {
  Quantities q;
  const Json* axes_p = child(point, {"axes"});
  const Json axes = (axes_p && axes_p->is_object()) ? *axes_p : Json::object();
  q.status = word(point, {"status"});
  const std::string variant = word(point, {"variant"});
  q.what = (variant.empty() ? std::string("point") : variant) + " (" + format_axes(axes) + ")";

  q.time = num(point, {"timing", "time_s"});
  q.wall = num(point, {"timing", "wall", "median_time_s"});
  q.device = num(point, {"timing", "device", "median_time_s"});
  q.syncs = num(point, {"timing", "host_syncs_per_iteration"});
  q.method = word(point, {"timing", "method"});
  q.blocked = q.method == kBlockedTimingMethod;
  q.submit = num(point, {"timing", "submit", "median_time_s"});
  q.probe = num(point, {"timing", "host_probe", "median_time_s"});
  q.mode = word(point, {"timing", "mode"});
  if (q.mode.empty()) q.mode = word(point, {"axes", "mode"});
  if (q.mode.empty()) q.mode = "eager";
  q.l2 = word(point, {"timing", "l2"});
  q.bytes = num(point, {"cost", "bytes"});
  q.cbytes = num(point, {"cost", "compulsory_bytes"});
  q.flop = num(point, {"cost", "flop"});
  q.launches = num(point, {"cost", "launches"});

  q.copy = num(header, {"calibration", "copy", "bandwidth_Bps"});
  q.read = num(header, {"calibration", "read", "bandwidth_Bps"});
  q.fp32 = num(header, {"calibration", "fp32_fma", "flop_per_s"});
  q.bf16 = num(header, {"calibration", "bf16_gemm", "flop_per_s"});
  q.launch_time = num(header, {"calibration", "launch", q.mode == "graph" ? "graph_time_s" : "eager_time_s"});
  q.theo = num(header, {"environment", "device", "theoretical_bandwidth_Bps"});
  q.l2_bytes = num(header, {"environment", "device", "l2_bytes"});
  for (double* c : {&q.copy, &q.read, &q.fp32, &q.bf16, &q.launch_time, &q.theo, &q.l2_bytes})
    if (!positive(*c)) *c = kNaN;

  // Ceilings. std::fmax ignores a NaN operand, so a missing figure falls back on the others.
  q.mem_ceiling = std::fmax(q.copy, q.read);
  q.mem_source = (std::isfinite(q.read) && !(q.copy > q.read)) ? "read" : "copy";
  q.peak_bw = std::fmax(q.mem_ceiling, q.theo);
  q.peak_compute = std::fmax(q.fp32, q.bf16);
  q.calibrated = std::isfinite(q.mem_ceiling) && std::isfinite(q.fp32);

  // Derived quantities (formulas: docs/metrics.md "Interpretation").
  q.timed = q.status == "ok" && positive(q.time);
  if (q.timed) {
    q.bw = over(q.bytes, q.time);
    q.cbw = over(q.cbytes, q.time);
    q.fps = over(q.flop, q.time);
    // Blocked samples measure the host's cost of issuing an iteration directly; otherwise the calibrated
    // empty-kernel launch time stands in for each launch.
    q.launch_share = q.blocked && std::isfinite(q.submit) ? over(q.submit, q.time)
                                                          : over(q.launches * q.launch_time, q.time);
  }
  q.ai = over(q.flop, q.cbytes);
  q.f_mem = over(q.bw, q.mem_ceiling);
  q.f_copy = over(q.bw, q.copy);
  q.f_read = over(q.bw, q.read);
  q.f_theo = over(q.bw, q.theo);
  q.f_comp = over(q.fps, q.fp32);
  q.f_bf16 = over(q.fps, q.bf16);
  if (std::isfinite(q.ai) && q.calibrated) q.roof = std::min(q.mem_ceiling * q.ai, q.fp32);
  q.f_roof = over(q.fps, q.roof);
  q.ridge = over(q.fp32, q.mem_ceiling);
  // Blocked samples enqueue first and execute after, so their wall - device is the enqueue, not a stall.
  if (!q.blocked && positive(q.wall) && std::isfinite(q.device)) q.stall = (q.wall - q.device) / q.wall;
  q.per_launch = over(over(q.bytes, q.launches), q.mem_ceiling);
  q.l2_resident = q.l2 == "hot" && std::isfinite(q.cbytes) && positive(q.l2_bytes) &&
                  q.cbytes <= kT.l2_resident_multiple * q.l2_bytes;
  // Time floor: compulsory bytes at the highest bandwidth, flops at the highest compute rate. A hot, L2-resident
  // working set can beat the DRAM term, so the suspect test then uses the flop term alone.
  const double floor_flop = over(q.flop, q.peak_compute);
  q.floor = std::fmax(over(q.cbytes, q.peak_bw), floor_flop);
  q.suspect_floor = q.l2_resident ? floor_flop : q.floor;

  // Suspect: faster than physics allows, or a clock that did not wait for the work.
  std::vector<std::string> suspects;
  if (q.method == "host_clock_unsynchronized")
    suspects.push_back("timing.method is host_clock_unsynchronized: the host clock stopped when the work was "
                       "enqueued, not when it finished, so the time measures the enqueue (lab.timing: "
                       "unsynchronized is a teaching demo)");
  if (q.timed && positive(q.suspect_floor) && q.time < q.suspect_floor * (1 - kT.suspect_margin))
    suspects.push_back("the time " + format_time(q.time) + " is " + format_number(q.suspect_floor / q.time) +
                       "× below the physical floor " + format_time(q.suspect_floor) +
                       " (compulsory bytes at the peak bandwidth " + format_rate(q.peak_bw, "B/s") +
                       ", flops at the peak compute rate)");
  // Case C10: with L2 flushed before every sample, data must come from DRAM, so a compulsory bandwidth above
  // the measured memory ceiling (no margin) means the flush or the byte count is wrong.
  const double cold_bw = over(q.cbytes, q.time);
  if (q.timed && q.l2 == "cold" && positive(q.mem_ceiling) && std::isfinite(cold_bw) && cold_bw > q.mem_ceiling)
    suspects.push_back("cold L2, yet the compulsory bandwidth " + format_rate(cold_bw, "B/s") +
                       " exceeds the measured memory ceiling " + format_rate(q.mem_ceiling, "B/s") +
                       ": data cannot come from DRAM that fast");
  const bool suspect = !suspects.empty();
  std::string suspect_reason;
  for (const auto& s : suspects) suspect_reason += (suspect_reason.empty() ? "" : "; and ") + s;

  Verdict v;
  std::string measured;
  if (!q.timed) {
    const std::string why = q.status == "ok" ? "no valid time (timing.time_s missing, non-finite or not positive)"
                                             : "status " + (q.status.empty() ? std::string("missing") : q.status);
    const std::string record_reason = word(point, {"reason"});
    v.reason = "not timed: " + why + (record_reason.empty() ? "" : ": " + record_reason);
    v.bound_text = "no class: the point has no time";
    measured = q.what + ": not timed (" + why + ")" + (record_reason.empty() ? "" : ": " + record_reason);
    if (q.status == "incorrect")
      v.next = "fix correctness first: the time of a wrong result means nothing";
    else if (q.status == "capture_unsupported")
      v.next = "make the variant capturable (no host-visible, data-dependent size inside the iteration), or compare "
               "it in eager mode";
    else
      v.next = "see the record's reason";
    v.other = "none: there is no measurement to check";
  } else {
    const std::string source = q.method == "host_clock_unsynchronized" ? "unsynchronized host clock"
                               : std::isfinite(q.device)              ? "device events"
                                                                      : "synchronized wall clock";
    measured = q.what + ": " + format_time(q.time) + " per iteration (median, " + source +
               (std::isfinite(q.device) && std::isfinite(q.wall) ? "; wall " + format_time(q.wall) : "") + "); " +
               format_rate(q.bw, "B/s") + " issued (" + format_bytes(q.bytes) + "), " + format_rate(q.cbw, "B/s") +
               " compulsory (" + format_bytes(q.cbytes) + "), " + format_rate(q.fps, "FLOP/s") + "; " +
               plural(q.launches, "launch", "launches") + " and " + sync_text(q);
    if (suspect) {
      v.reason = "suspect: " + suspect_reason;
      v.rule = "suspect";
      const bool unsync = q.method == "host_clock_unsynchronized";
      const std::string rate = std::isfinite(q.f_mem) && q.f_mem > 2
                                   ? format_number(q.f_mem) + "× the memory ceiling"
                                   : format_percent(q.f_mem) + " of the memory ceiling";
      v.bound_text = unsync && !(q.f_mem > 1)
                         ? "no class: the clock did not wait for the work, so even a plausible-looking " + rate +
                               " says nothing about it"
                         : "no class: the time is not the work's (it would mean " + rate + ")";
      v.next = unsync ? "re-run with lab.timing: synchronized (device events on the work's stream), the default"
                      : "check the cost model's byte and flop counts and the timing (events on the work's stream, "
                        "synchronized before reading)";
      const bool below_floor = positive(q.floor) && q.time < q.floor;
      v.other = unsync ? (below_floor ? "the value is also " + format_number(q.floor / q.time) +
                                            "× below the physical floor " + format_time(q.floor)
                                      : "the value is not below the physical floor " + format_time(q.floor) +
                                            ", which shows that a plausible time is no proof of a measurement")
                       : "the floor uses the peak bandwidth " + format_rate(q.peak_bw, "B/s") +
                             " and peak compute " + format_rate(q.peak_compute, "FLOP/s") +
                             ", which no real result can beat";
    } else if (!q.calibrated) {
      const std::string backend = word(header, {"calibration", "backend"});
      v.reason = "no calibrated ceilings in the header" + (backend.empty() ? std::string() : " (backend " + backend + ")") +
                 ": the bound cannot be placed against a roof";
      v.rule = "no calibration";
      v.bound_text = "no class: " + v.reason;
      v.next = "run on a calibrated device backend (--device cuda) to classify the bound";
      v.other = "none: without ceilings no cause can be ruled out";
    } else {
      v = classify(q);
    }
  }

  Json evidence = Json::object();
  evidence["rule"] = v.rule;
  evidence["fraction_of_memory_ceiling"] = opt(q.f_mem);
  evidence["fraction_of_compute_ceiling"] = opt(q.f_comp);
  evidence["launch_overhead_share"] = opt(q.launch_share);
  evidence["host_stall_share"] = opt(q.stall);
  evidence["host_syncs_per_iteration"] = opt(q.syncs);
  evidence["host_probe_time_s"] = opt(q.probe);
  evidence["ideal_time_per_launch_s"] = opt(q.per_launch);
  evidence["time_s"] = opt(q.time);
  evidence["time_floor_s"] = opt(q.floor);

  std::string evidence_text;
  if (q.timed) {
    // Quantities without a value (no calibrated ceilings on the host backend, 0/0 at n = 0) read "n/a".
    auto number = [](double v) { return std::isfinite(v) ? format_number(v) : std::string("n/a"); };
    evidence_text = "arithmetic intensity " + number(q.ai) + " flop/B (ridge point " + number(q.ridge) +
                    " flop/B), roofline ceiling here " + format_rate(q.roof, "FLOP/s") + " (" +
                    format_percent(q.f_roof) + " reached); memory " + format_percent(q.f_mem) + " and compute " +
                    format_percent(q.f_comp) + " of their ceilings; time " + number(q.time / q.floor) +
                    "× the floor " + format_time(q.floor) +
                    (q.l2_resident ? " (its DRAM term is no hard floor for an L2-resident working set)" : "") +
                    "; launch overhead ≈ " + format_percent(q.launch_share) +
                    "; " + stall_text(q) + "; " + sync_text(q);
    const std::string l2 = l2_text(q);
    if (!l2.empty()) evidence_text += "; " + l2;
  } else {
    evidence_text = v.reason;
  }
  std::string other = v.other;
  if (q.timed) other += "; " + clocks_text(point);

  Json out = Json::object();
  out["time_s"] = opt(q.timed ? q.time : kNaN);
  out["wall_time_s"] = opt(q.wall);
  out["device_time_s"] = opt(q.device);
  out["submit_time_s"] = opt(q.submit);
  const IterationTime it = iteration_time(point);
  out["iteration_time_s"] = opt(q.timed ? it.time_s : kNaN);
  out["iteration_time_basis"] = !q.timed ? Json(nullptr) : Json(it.host_paced ? "host_submission" : "measured_time");
  out["timing_method"] = q.method.empty() ? Json(nullptr) : Json(q.method);
  out["achieved_bandwidth_Bps"] = opt(q.bw);
  out["compulsory_bandwidth_Bps"] = opt(q.cbw);
  out["flop_per_s"] = opt(q.fps);
  out["arithmetic_intensity_flop_per_byte"] = opt(q.ai);
  out["ceilings"] = {{"memory_bandwidth_Bps", opt(q.mem_ceiling)},
                     {"memory_source", std::isfinite(q.mem_ceiling) ? Json(q.mem_source) : Json(nullptr)},
                     {"copy_bandwidth_Bps", opt(q.copy)},
                     {"read_bandwidth_Bps", opt(q.read)},
                     {"theoretical_bandwidth_Bps", opt(q.theo)},
                     {"peak_bandwidth_Bps", opt(q.peak_bw)},
                     {"compute_flop_per_s", opt(q.fp32)},
                     {"bf16_gemm_flop_per_s", opt(q.bf16)},
                     {"peak_compute_flop_per_s", opt(q.peak_compute)},
                     {"launch_time_s", opt(q.launch_time)},
                     {"l2_bytes", opt(q.l2_bytes)}};
  out["fraction_of"] = {{"memory_ceiling", opt(q.f_mem)}, {"copy", opt(q.f_copy)},
                        {"read", opt(q.f_read)},          {"theoretical", opt(q.f_theo)},
                        {"compute_ceiling", opt(q.f_comp)}, {"bf16_gemm", opt(q.f_bf16)},
                        {"roofline", opt(q.f_roof)}};
  out["roofline_ceiling_flop_per_s"] = opt(q.roof);
  out["ridge_point_flop_per_byte"] = opt(q.ridge);
  out["time_floor_s"] = opt(q.floor);
  out["launch_overhead_share"] = opt(q.launch_share);
  out["host_stall_share"] = opt(q.stall);
  out["host_syncs_per_iteration"] = opt(q.syncs);
  out["ideal_time_per_launch_s"] = opt(q.per_launch);
  out["l2_resident"] = q.l2_resident;
  out["bound"] = v.bound;
  out["confidence"] = v.confidence.empty() ? Json(nullptr) : Json(v.confidence);
  out["reason"] = v.reason;
  out["evidence"] = evidence;
  out["suspect"] = suspect;
  out["suspect_reason"] = suspect ? Json(suspect_reason) : Json(nullptr);
  out["note"] = {{"measured", measured},
                 {"bound", v.bound_text},
                 {"evidence", evidence_text},
                 {"next_change", v.next},
                 {"other_cause_checked", other}};
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Across points.

namespace {

// One point as the cross-point analysis sees it.
struct Pt {
  int run = 0;
  const Json* rec = nullptr;
  std::string experiment, variant, id, key, status;
  Json axes;
  bool usable = false;
  double t = kNaN, lo = kNaN, hi = kNaN;
};

struct RunPoints {
  const Json* header = nullptr;
  std::vector<Pt> points;
};

// Axis values as comparable doubles (numbers and json_real strings), NaN for words.
double axis_number(const Json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    try {
      return real_from_json(v);
    } catch (const std::exception&) {
      return kNaN;
    }
  }
  return kNaN;
}

bool same_number(double a, double b) { return a == b || std::fabs(a - b) <= 1e-9 * std::max(std::fabs(a), std::fabs(b)); }

// Does axis value `v` satisfy one `when` condition: [lo, hi] (inclusive), a list of values, or one value?
bool matches(const Json& v, const Json& cond) {
  const double x = axis_number(v);
  if (cond.is_array()) {
    if (cond.size() == 2 && cond[0].is_number() && cond[1].is_number()) {
      const double lo = cond[0].get<double>(), hi = cond[1].get<double>();
      return std::isfinite(x) && (x >= lo || same_number(x, lo)) && (x <= hi || same_number(x, hi));
    }
    for (const auto& c : cond)
      if (matches(v, c)) return true;
    return false;
  }
  if (cond.is_number()) return std::isfinite(x) && same_number(x, cond.get<double>());
  if (cond.is_string() && v.is_string()) return cond.get<std::string>() == v.get<std::string>();
  if (cond.is_boolean() && v.is_boolean()) return cond == v;
  return false;
}

// The axes object with `drop` removed, as a canonical string (sorted keys).
std::string axes_key(const Json& axes, const std::string& drop = "") {
  std::map<std::string, std::string> m;
  if (axes.is_object())
    for (const auto& [k, v] : axes.items())
      if (k != drop) m[k] = v.dump();
  std::string s;
  for (const auto& [k, v] : m) s += k + "=" + v + ";";
  return s;
}

double median_of(std::vector<double> v) {
  if (v.empty()) return kNaN;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

bool apart(const Pt& fast, const Pt& slow) {
  return std::isfinite(fast.hi) && std::isfinite(slow.lo) && fast.hi < slow.lo;
}

Json point_ref(const Pt& p) { return Json{{"id", p.id}, {"key", p.key}, {"axes", p.axes}}; }

}  // namespace

Json analyze(const std::vector<Json>& records) {
  std::vector<RunPoints> runs;
  for (const auto& r : records) {
    if (!r.is_object()) continue;
    const std::string type = r.value("type", std::string());
    if (type == "header") {
      runs.push_back(RunPoints{&r, {}});
      continue;
    }
    if (type != "point") continue;
    if (runs.empty()) runs.push_back(RunPoints{});
    static const Json kNoHeader = Json::object();
    RunPoints& run = runs.back();
    Pt p;
    p.run = static_cast<int>(runs.size()) - 1;
    p.rec = &r;
    p.experiment = word(r, {"experiment"});
    p.variant = word(r, {"variant"});
    p.id = word(r, {"id"});
    p.key = word(r, {"key"});
    p.status = word(r, {"status"});
    const Json* ax = child(r, {"axes"});
    p.axes = (ax && ax->is_object()) ? *ax : Json::object();
    const Json interp = interpret_point(r, run.header ? *run.header : kNoHeader);
    // Variants are compared on what a loop of the iteration costs.
    const IterationTime it = iteration_time(r);
    p.t = it.time_s;
    p.lo = it.ci95_low_s;
    p.hi = it.ci95_high_s;
    p.usable = p.status == "ok" && positive(p.t) && interp["suspect"] == false;
    run.points.push_back(std::move(p));
  }

  Json out = Json::object();
  Json runs_j = Json::array(), groups_j = Json::array(), cross_j = Json::array(), hyp_j = Json::array();

  for (std::size_t ri = 0; ri < runs.size(); ++ri) {
    const RunPoints& run = runs[ri];
    const Json header = run.header ? *run.header : Json::object();
    const int rid = static_cast<int>(ri);

    // Axes that vary within the run: the only ones worth naming in tables and texts.
    std::map<std::string, std::set<std::string>> seen;
    std::vector<std::string> axis_order;
    for (const auto& p : run.points)
      for (const auto& [k, v] : p.axes.items()) {
        if (!seen.count(k)) axis_order.push_back(k);
        seen[k].insert(v.dump());
      }
    std::vector<std::string> varying;
    for (const auto& k : axis_order)
      if (seen[k].size() > 1) varying.push_back(k);

    std::size_t usable = 0;
    for (const auto& p : run.points) usable += p.usable;
    std::string experiment = word(header, {"config", "experiment"});
    if (experiment.empty() && !run.points.empty()) experiment = run.points.front().experiment;
    runs_j.push_back(Json{{"run", rid},
                          {"experiment", experiment},
                          {"config_path", word(header, {"config", "path"})},
                          {"device", word(header, {"environment", "device", "name"})},
                          {"created_utc", word(header, {"created_utc"})},
                          {"points", run.points.size()},
                          {"usable_points", usable},
                          {"varying_axes", varying}});

    // Groups: same experiment and axes, different variants.
    std::vector<std::string> group_order;
    std::unordered_map<std::string, std::vector<const Pt*>> groups;
    for (const auto& p : run.points) {
      const std::string g = p.experiment + "\x1f" + axes_key(p.axes);
      if (!groups.count(g)) group_order.push_back(g);
      groups[g].push_back(&p);
    }
    for (const auto& g : group_order) {
      const auto& members = groups[g];
      std::vector<const Pt*> ok;
      for (const Pt* p : members)
        if (p->usable) ok.push_back(p);
      std::stable_sort(ok.begin(), ok.end(), [](const Pt* a, const Pt* b) { return a->t < b->t; });
      Json times = Json::object(), ids = Json::object();
      for (const Pt* p : members) {
        times[p->variant] = p->usable ? Json(p->t) : Json(nullptr);
        ids[p->variant] = p->id;
      }
      Json gj{{"run", rid},
              {"experiment", members.front()->experiment},
              {"axes", members.front()->axes},
              {"times_s", times},
              {"ids", ids}};
      if (ok.size() >= 2) {
        gj["winner"] = ok[0]->variant;
        gj["winner_time_s"] = ok[0]->t;
        gj["runner_up"] = ok[1]->variant;
        gj["runner_up_time_s"] = ok[1]->t;
        gj["margin_ratio"] = ok[1]->t / ok[0]->t;
        gj["significant"] = apart(*ok[0], *ok[1]);
      } else {
        gj["winner"] = ok.empty() ? Json(nullptr) : Json(ok[0]->variant);
        gj["winner_time_s"] = ok.empty() ? Json(nullptr) : Json(ok[0]->t);
        gj["runner_up"] = nullptr;
        gj["runner_up_time_s"] = nullptr;
        gj["margin_ratio"] = nullptr;
        gj["significant"] = false;
      }
      groups_j.push_back(gj);
    }

    // Crossovers, per experiment of the run.
    std::vector<std::string> experiments;
    for (const auto& p : run.points)
      if (std::find(experiments.begin(), experiments.end(), p.experiment) == experiments.end())
        experiments.push_back(p.experiment);
    for (const auto& exp : experiments) {
      std::vector<const Pt*> pts;
      std::vector<std::string> variants;
      for (const auto& p : run.points)
        if (p.experiment == exp) {
          pts.push_back(&p);
          if (std::find(variants.begin(), variants.end(), p.variant) == variants.end()) variants.push_back(p.variant);
        }
      for (const auto& axis : varying) {
        // Numeric in every point of this experiment?
        bool numeric = true, integers = true;
        double lo = std::numeric_limits<double>::infinity(), hi = -lo;
        for (const Pt* p : pts) {
          auto it = p->axes.find(axis);
          if (it == p->axes.end() || !std::isfinite(axis_number(*it))) {
            numeric = false;
            break;
          }
          integers = integers && it->is_number_integer();
          lo = std::min(lo, axis_number(*it));
          hi = std::max(hi, axis_number(*it));
        }
        if (!numeric || !(hi > lo)) continue;
        const bool log_scale = integers && lo > 0 && hi / lo >= 100;
        // slice → variant → x → point
        std::vector<std::string> slice_order;
        std::map<std::string, std::map<std::string, std::map<double, const Pt*>>> slices;
        for (const Pt* p : pts) {
          if (!p->usable) continue;
          const std::string s = axes_key(p->axes, axis);
          if (!slices.count(s)) slice_order.push_back(s);
          slices[s][p->variant][axis_number(p->axes[axis])] = p;
        }
        std::vector<std::string> fixed_names;
        for (const auto& k : varying)
          if (k != axis) fixed_names.push_back(k);
        for (const auto& s : slice_order) {
          auto& by_variant = slices[s];
          for (std::size_t a = 0; a < variants.size(); ++a)
            for (std::size_t b = a + 1; b < variants.size(); ++b) {
              const auto ia = by_variant.find(variants[a]), ib = by_variant.find(variants[b]);
              if (ia == by_variant.end() || ib == by_variant.end()) continue;
              std::vector<std::pair<const Pt*, const Pt*>> common;
              for (const auto& [x, pa] : ia->second) {
                auto jb = ib->second.find(x);
                if (jb != ib->second.end()) common.emplace_back(pa, jb->second);
              }
              for (std::size_t i = 0; i + 1 < common.size(); ++i) {
                const auto [a0, b0] = common[i];
                const auto [a1, b1] = common[i + 1];
                const double y0 = std::log(a0->t / b0->t), y1 = std::log(a1->t / b1->t);
                if (!(y0 * y1 < 0)) continue;
                const double x0 = axis_number(a0->axes[axis]), x1 = axis_number(a1->axes[axis]);
                const double w = y0 / (y0 - y1);  // fraction of the way from x0 to x1 where the log ratio is 0
                const double at = log_scale ? std::exp(std::log(x0) + w * (std::log(x1) - std::log(x0)))
                                            : x0 + w * (x1 - x0);
                // y < 0: variant a is faster.
                const std::string below = y0 < 0 ? variants[a] : variants[b];
                const std::string above = y0 < 0 ? variants[b] : variants[a];
                const bool sig0 = y0 < 0 ? apart(*a0, *b0) : apart(*b0, *a0);
                const bool sig1 = y1 < 0 ? apart(*a1, *b1) : apart(*b1, *a1);
                const std::string fixed = format_axes(a0->axes, fixed_names);
                const double r0 = std::exp(std::fabs(y0)), r1 = std::exp(std::fabs(y1));
                const std::string text =
                    above + " overtakes " + below + " between " + axis + " " + format_axis_value(a0->axes[axis]) +
                    " and " + format_axis_value(a1->axes[axis]) + ", at ≈ " + format_number(at) +
                    (fixed.empty() ? "" : " (" + fixed + ")") + ": " + below + " " + fmt::format("{:.2f}", r0) +
                    "× faster at " + format_axis_value(a0->axes[axis]) + ", " + above + " " +
                    fmt::format("{:.2f}", r1) + "× faster at " + format_axis_value(a1->axes[axis]);
                Json fixed_j = Json::object();
                for (const auto& k : fixed_names)
                  if (a0->axes.contains(k)) fixed_j[k] = a0->axes[k];
                cross_j.push_back(Json{{"run", rid},
                                       {"experiment", exp},
                                       {"axis", axis},
                                       {"scale", log_scale ? "log" : "linear"},
                                       {"between", Json::array({a0->axes[axis], a1->axes[axis]})},
                                       {"at", at},
                                       {"faster_below", below},
                                       {"faster_above", above},
                                       {"ratio_below", r0},
                                       {"ratio_above", r1},
                                       {"fixed", fixed_j},
                                       {"significant", sig0 && sig1},
                                       {"text", text}});
              }
            }
        }
      }
    }

    // Hypotheses of this run's config.
    const Json* hyp = child(header, {"config", "hypothesis"});
    if (!hyp || hyp->is_null()) continue;
    const Json list = hyp->is_array() ? *hyp : Json::array({*hyp});
    for (std::size_t hi = 0; hi < list.size(); ++hi) {
      const Json& h = list[hi];
      Json hj{{"run", rid}, {"index", hi}};
      const std::string fa = word(h, {"faster"}), th = word(h, {"than"});
      const Json when = (h.is_object() && h.contains("when") && h["when"].is_object()) ? h["when"] : Json::object();
      double by = num(h, {"by_at_least"});
      if (!std::isfinite(by)) by = 1.0;
      hj["faster"] = fa;
      hj["than"] = th;
      hj["when"] = when;
      hj["by_at_least"] = by;
      if (fa.empty() || th.empty()) {
        hj["verdict"] = "inconclusive";
        hj["reason"] = "malformed hypothesis: it needs `faster` and `than` variant names";
        hj["matched"] = 0;
        hj["passed"] = 0;
        hj["skipped"] = 0;
        hj["points"] = Json::array();
        hyp_j.push_back(hj);
        continue;
      }
      std::vector<double> ratios;
      Json pts_j = Json::array(), counter = Json::array();
      std::size_t passed = 0, skipped = 0;
      std::map<std::string, int> skip_why;  // "variant status" → count
      const Pt *min_p = nullptr, *max_p = nullptr;
      double rmin = std::numeric_limits<double>::infinity(), rmax = -rmin;
      for (const auto& g : group_order) {
        const Pt *A = nullptr, *B = nullptr;
        for (const Pt* p : groups[g]) {
          if (p->variant == fa) A = p;
          if (p->variant == th) B = p;
        }
        if (!A || !B) continue;
        bool inside = true;
        for (const auto& [axis, cond] : when.items()) {
          auto it = A->axes.find(axis);
          if (it == A->axes.end() || !matches(*it, cond)) {
            inside = false;
            break;
          }
        }
        if (!inside) continue;
        if (!A->usable || !B->usable) {
          ++skipped;
          for (const Pt* p : {A, B})
            if (!p->usable) ++skip_why[p->variant + " " + (p->status == "ok" ? std::string("suspect") : p->status)];
          continue;
        }
        const double r = B->t / A->t;
        const bool pass = r >= by;
        passed += pass;
        ratios.push_back(r);
        Json pj{{"id_faster", A->id}, {"id_than", B->id}, {"key", A->key}, {"axes", A->axes}, {"ratio", r},
                {"passed", pass}};
        if (!pass) counter.push_back(pj);
        pts_j.push_back(pj);
        if (r < rmin) {
          rmin = r;
          min_p = A;
        }
        if (r > rmax) {
          rmax = r;
          max_p = A;
        }
      }
      const std::size_t matched = ratios.size();
      const double frac = matched ? static_cast<double>(passed) / static_cast<double>(matched) : kNaN;
      std::string verdict, reason;
      const std::string claim = fa + " faster than " + th + " by ≥ " + format_number(by) + "×";
      if (matched == 0) {
        verdict = "inconclusive";
        reason = "no point where both " + fa + " and " + th + " ran ok inside `when`" +
                 (skipped ? " (" + std::to_string(skipped) + " such points had one side not ok or suspect)" : "");
      } else if (frac >= kT.confirm_fraction) {
        verdict = "confirmed";
        reason = claim + " at " + std::to_string(passed) + " of " + std::to_string(matched) + " matching points (" +
                 format_percent(frac) + ", threshold " + format_percent(kT.confirm_fraction) + ")";
      } else if (frac < kT.refute_fraction) {
        verdict = "refuted";
        reason = claim + " at only " + std::to_string(passed) + " of " + std::to_string(matched) +
                 " matching points (" + format_percent(frac) + ", below " + format_percent(kT.refute_fraction) + ")";
      } else {
        verdict = "inconclusive";
        reason = "mixed evidence: " + claim + " at " + std::to_string(passed) + " of " + std::to_string(matched) +
                 " matching points (" + format_percent(frac) + ", between " + format_percent(kT.refute_fraction) +
                 " and " + format_percent(kT.confirm_fraction) + ")";
      }
      hj["verdict"] = verdict;
      hj["reason"] = reason;
      hj["matched"] = matched;
      hj["passed"] = passed;
      hj["skipped"] = skipped;
      hj["skipped_because"] = skip_why.empty() ? Json::object() : Json(skip_why);
      hj["fraction_passed"] = opt(frac);
      hj["ratio_min"] = matched ? Json(rmin) : Json(nullptr);
      hj["ratio_median"] = opt(median_of(ratios));
      hj["ratio_max"] = matched ? Json(rmax) : Json(nullptr);
      hj["min_point"] = min_p ? point_ref(*min_p) : Json(nullptr);
      hj["max_point"] = max_p ? point_ref(*max_p) : Json(nullptr);
      hj["counterexamples"] = counter;
      hj["points"] = pts_j;
      hyp_j.push_back(hj);
    }
  }
  out["runs"] = runs_j;
  out["groups"] = groups_j;
  out["crossovers"] = cross_j;
  out["hypotheses"] = hyp_j;
  return out;
}

Interpretation interpret(const PointRecord& point, const RunHeader& header) {
  return interpretation_from_json(interpret_point(to_json(point), header.json));
}

Json analyze(const ResultSet& results) {
  std::vector<Json> records;
  for (const auto& run : results.runs) {
    records.push_back(run.header.json);
    for (const auto& p : run.points) records.push_back(to_json(p));
  }
  return analyze(records);
}

}  // namespace labrun
