// The lab settings (`lab:` in a config, `--lab KEY=VALUE` on the command line, `lab` in every record header),
// driven by one table: adding a setting is one line of LABRUN_LAB_SETTINGS. The struct's fields, the config
// parser's keys and checks, the header's `lab` object and `labrun list`'s help all come from it. Documented in
// docs/config.md ("lab"), which a test holds to the table.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace labrun {

/// How a setting's value is checked. Integer: an exact integer in [min, max] (C02). Real: a finite number
/// >= min (inclusive) or > min, and <= max. Word: one of `words`. Bool: the plain scalar true or false (a quoted
/// "true" is a string, refused). `max` bounds the settings whose larger values would keep a point running until
/// point_timeout_s, or past any session (case H09); `why_max` is said with the error.
struct LabRule {
  enum class Kind { Integer, Real, Word, Bool } kind = Kind::Integer;
  double min = 0;
  double max = static_cast<double>(std::numeric_limits<std::int64_t>::max());
  bool inclusive = true;
  std::vector<std::string> words;
  const char* why_max = "";
};

inline constexpr double kNoMax = std::numeric_limits<double>::infinity();
inline LabRule integer_at_least(double min, double max = static_cast<double>(std::numeric_limits<std::int64_t>::max()),
                                const char* why_max = "") {
  return LabRule{LabRule::Kind::Integer, min, max, true, {}, why_max};
}
inline LabRule real_at_least(double min, double max = kNoMax, const char* why_max = "") {
  return LabRule{LabRule::Kind::Real, min, max, true, {}, why_max};
}
inline LabRule real_above(double min, double max = kNoMax, const char* why_max = "") {
  return LabRule{LabRule::Kind::Real, min, max, false, {}, why_max};
}
inline LabRule one_of(std::vector<std::string> words) {
  return LabRule{LabRule::Kind::Word, 0, 0, true, std::move(words)};
}
inline LabRule boolean() { return LabRule{LabRule::Kind::Bool, 0, 0, true, {}}; }

// Why the upper bounds (case H09): each is far beyond any useful measurement and short of a value that never ends.
#define LABRUN_FINISH_ " (a larger value keeps every point running until point_timeout_s)"

// X(type, name, default, rule, description): one line per setting, in the header's order. Times in seconds,
// sizes in bytes.
#define LABRUN_LAB_SETTINGS(X)                                                                                         \
  X(std::int64_t, warmup_iterations, 5, integer_at_least(0, 1e6, " (warmup only has to reach steady state)"),          \
    "minimum warmup iterations before any timed sample")                                                               \
  X(double, warmup_time_s, 0.02, real_at_least(0, 60, LABRUN_FINISH_),                                                 \
    "most warmup time per point (s); warmup ends earlier at steady state")                                             \
  X(double, warmup_tolerance, 0.05, real_above(0, 1, " (a fraction)"),                                                 \
    "steady state: two consecutive warmup chunks' times per iteration agree within this fraction")                     \
  X(std::int64_t, min_samples, 10, integer_at_least(1, 1e6, LABRUN_FINISH_), "timed samples per point, at least")      \
  X(std::int64_t, max_samples, 200, integer_at_least(1, 1e6, LABRUN_FINISH_),                                          \
    "timed samples per point, at most (>= min_samples)")                                                               \
  X(double, max_time_s, 2.0, real_above(0, 3600, LABRUN_FINISH_),                                                      \
    "stop sampling a point after this much timed time (s)")                                                            \
  X(double, min_sample_time_s, 1e-3, real_at_least(0, 10, LABRUN_FINISH_),                                             \
    "a sample batches iterations until it lasts this long (s)")                                                        \
  X(std::uint64_t, seed, 20261129, integer_at_least(0), "seed of every input generator")                               \
  X(std::optional<double>, tolerance_scale, std::nullopt, real_above(0),                                               \
    "multiplies every derived correctness tolerance (>= 1 loosens); unset: 1")                                         \
  X(double, host_max_bytes, 32e6, real_at_least(0),                                                                    \
    "the host backend skips points whose estimated working set is larger (bytes)")                                     \
  X(double, host_max_time_s, 0.5, real_above(0, 3600, LABRUN_FINISH_),                                                 \
    "the host backend skips points whose iteration is estimated to take longer (s)")                                   \
  X(std::string, timing, "synchronized", one_of({"synchronized", "unsynchronized"}),                                   \
    "unsynchronized is a teaching demo of what not to do")                                                             \
  X(double, target_rel_ci, 0.01, real_above(0, 1, " (a fraction of the median)"),                                      \
    "stop sampling once the median's 95% CI is within +- this")                                                        \
  X(std::string, l2, "hot", one_of({"hot", "cold"}), "default of the lab axis l2 (cold: flushed before a sample)")     \
  X(double, delay_s, 0, real_at_least(0, 1, LABRUN_FINISH_),                                                           \
    "test aid: a spin kernel of this length added to every iteration (s)")                                             \
  X(std::int64_t, interleave, 1, integer_at_least(1, 1e6, " (points held at once)"),                                   \
    "points whose samples are taken round-robin")                                                                      \
  X(bool, blocking_kernel, true, boolean(), "queue sync-free samples behind a blocking kernel (CUDA)")                 \
  X(std::int64_t, processes, 1, integer_at_least(1, 16), "run the sweep in this many processes and pool them")         \
  X(double, point_timeout_s, 600, real_at_least(0, 86400, " (one day; 0: no limit)"),                                  \
    "a point running longer is recorded as timeout and its worker replaced (s); 0: no limit")                          \
  X(bool, profile, false, boolean(),                                                                                   \
    "profiler mode (--profile): correctness, then a few plain iterations in NVTX ranges named by the point key")       \
  X(std::string, stopping, "noise", one_of(stopping_criterion_names()),                                                \
    "the stopping criterion of a point's sampling (src/config/stopping.hpp; noise: the CI target and the caps)")       \
  X(bool, fences, true, boolean(),                                                                                     \
    "guard regions around outputs, scratch and allocate()d memory, checked after correctness and after timing")        \
  X(bool, guard_inputs, true, boolean(),                                                                               \
    "compare the inputs with the generated set after correctness and after timing, and restore them")                  \
  X(bool, recheck, true, boolean(),                                                                                    \
    "after timing, one iteration on a second input set (another seed), compared with its reference")                   \
  X(bool, audit, true, boolean(),                                                                                      \
    "record the CUDA API calls of a point's first iteration (CUPTI) and judge them: streams, host waits, allocations") \
  X(bool, launches, false, boolean(),                                                                                  \
    "with the audit, time every kernel, copy and memset of the audited iterations (CUPTI activity API): launches[]")   \
  X(std::string, sanitize, "none", one_of(sanitizer_tool_names()),                                                     \
    "sanitizer sweep (--sanitize): setup and correctness iteration under this compute-sanitizer tool; untimed")

/// Settings of the lab pass. Every field comes from LABRUN_LAB_SETTINGS (defaults there).
struct LabSettings {
#define LABRUN_LAB_FIELD(type, name, default_value, rule, description) type name = default_value;
  LABRUN_LAB_SETTINGS(LABRUN_LAB_FIELD)
#undef LABRUN_LAB_FIELD
};

/// Iterations a point runs in profiler mode after its correctness check (each one sample of one iteration).
inline constexpr std::int64_t kProfileIterations = 5;

/// The settings of profiler mode (lab.profile; docs/profiling.md), from `lab`: under Nsight Compute, which
/// serializes kernels and replays each one, the blocking kernel would wait for launches that never come, and
/// adaptive sampling and time limits would multiply the profiler's work. So: no blocking kernel, one warmup
/// iteration, kProfileIterations samples of one iteration each, no time caps, no point timeout, one process, no
/// interleaving. `lab` unchanged when lab.profile is false.
LabSettings profile_settings(LabSettings lab);

/// The tools of lab.sanitize (sweep --sanitize): "none" (no sanitizer sweep), then compute-sanitizer's tools
/// memcheck, racecheck, initcheck and synccheck.
const std::vector<std::string>& sanitizer_tool_names();

/// The settings of a sanitizer sweep (lab.sanitize other than "none"; docs/integrity.md "The sanitizer sweep"), from
/// `lab`: under compute-sanitizer every kernel is instrumented (racecheck runs them many times slower), so nothing
/// runs that the check does not need: no blocking kernel, no warmup beyond the first iteration, no timing, one
/// process, no interleaving; the fences, input guard, re-check and audit off (the fences would hide a write past an
/// array's end inside the array's own allocation, where memcheck sees none; CUPTI and the sanitizer both take the
/// driver's callbacks). `lab` unchanged when lab.sanitize is "none".
LabSettings sanitize_settings(LabSettings lab);

/// The NVTX range a point runs in under profiler mode: its key with every '/' replaced by ':'
/// ("exp:variant:axis=1,..." for "exp/variant/axis=1,..."), since ncu's --nvtx-include reads '/' as the
/// nesting of push/pop ranges.
std::string profile_range_name(const std::string& key);

/// A checked value on its way into a setting.
using LabValue = std::variant<std::int64_t, double, std::string, bool>;

/// One row of the table: name, rule, description, and how to store a checked value / write it to JSON.
struct LabSettingInfo {
  const char* name;
  LabRule rule;
  const char* description;
  void (*assign)(LabSettings&, const LabValue&);
  nlohmann::ordered_json (*to_json)(const LabSettings&);
};

/// The table, in LABRUN_LAB_SETTINGS order.
const std::vector<LabSettingInfo>& lab_settings_table();
/// The row for `name`, or nullptr.
const LabSettingInfo* find_lab_setting(const std::string& name);
/// Every setting's name, in table order.
std::vector<std::string> lab_setting_names();
/// The `lab` object of a record header: every setting, in table order (unset optionals are null).
nlohmann::ordered_json to_json(const LabSettings& lab);

}  // namespace labrun
