// labrun diff: the two sides' environments compared (GPU, code, host, calibrated ceilings, clocks, lab settings),
// each difference a warning (docs/diff.md "Environment").
#include <unordered_set>

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

namespace labrun::diff_detail {

/// Relative gap between the two sides' calibrated ceilings that earns an environment warning.
constexpr double kCeilingTolerance = 0.05;
/// Relative gap between the two sides' median SM clocks that earns an environment warning.
constexpr double kClockTolerance = 0.02;
/// Host speed (calibrated eager launch time) differences above this are reported: 5%, the default minimum effect.
constexpr double kHostTolerance = 0.05;

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

}  // namespace labrun::diff_detail
