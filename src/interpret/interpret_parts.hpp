// What the two halves of src/interpret/ share: interpret.cpp computes a point's quantities and decides its
// verdict (an Assessment), interpret_note.cpp writes the record and the five-part note from it. Private to
// src/interpret/.
#pragma once

#include <cmath>
#include <limits>
#include <string>

#include "interpret.hpp"

namespace labrun::interpret_parts {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr const InterpretThresholds& kT = kInterpretThresholds;

inline bool positive(double x) { return std::isfinite(x) && x > 0; }

// a / b when both are finite and b > 0, else NaN.
inline double over(double a, double b) { return (std::isfinite(a) && positive(b)) ? a / b : kNaN; }

// A finite value, or NaN (stored as null) when an input was missing or non-finite.
inline double finite_or_nan(double x) { return std::isfinite(x) ? x : kNaN; }

// The median of a timing summary; NaN when the record has none.
inline double median_of(const OptionalSummary& s) { return s ? s->median_time_s : kNaN; }

// The point's timing, or an empty one (every quantity NaN, every word "") for a record without timing.
const Timing& timing_of(const PointRecord& point);

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

// The text of both roofs' fractions, for the reasons and the notes that rule them out.
std::string roofs_text(const Quantities& q);

// The launch share at which a point is launch-bound (1 for blocked samples, else kT.launch_share).
double launch_threshold(const Quantities& q);

// Why a point has no time: its status, or a status "ok" without a valid time.
std::string untimed_why(const Quantities& q);

// The record's own reason as a suffix (": reason"), or "" when it has none.
std::string record_reason_suffix(const PointRecord& point);

// The record of an assessed point and its five-part note (src/interpret/interpret_note.cpp).
Interpretation render(const Assessment& a, const PointRecord& point);

}  // namespace labrun::interpret_parts
