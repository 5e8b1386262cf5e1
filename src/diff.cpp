#include "diff.hpp"

#include "config.hpp"
#include "interpret.hpp"
#include "record.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <numbers>
#include <numeric>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include <fmt/format.h>

#include "stats.hpp"

namespace labrun {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// Fewer samples than this on a side give `inconclusive` whatever the statistics say.
constexpr std::size_t kMinSamples = 3;
/// Relative gap between the two sides' calibrated ceilings that earns an environment warning.
constexpr double kCeilingTolerance = 0.05;
/// Relative gap between the two sides' median SM clocks that earns an environment warning.
constexpr double kClockTolerance = 0.02;
/// Host speed (calibrated eager launch time) differences above this are reported: 5%, the default minimum effect.
constexpr double kHostTolerance = 0.05;

/// Median of `values` (any order; Hyndman-Fan 7, i.e. the mean of the middle two for an even count).
double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return quantile_sorted(values, 0.5);
}

// ---- Reading records defensively: a malformed field gives "absent", never an exception --------------------

/// A path of object keys into a record, e.g. {"calibration", "copy", "bandwidth_Bps"}.
using Path = std::vector<std::string_view>;

const Json* find_path(const Json& j, const Path& path) {
  const Json* cur = &j;
  for (std::string_view key : path) {
    if (!cur->is_object()) return nullptr;
    const auto it = cur->find(std::string(key));
    if (it == cur->end()) return nullptr;
    cur = &*it;
  }
  return cur;
}

std::optional<double> finite_number(const Json* v) {
  if (v == nullptr) return std::nullopt;
  try {
    const double x = real_from_json(*v);
    if (std::isfinite(x)) return x;
  } catch (const std::invalid_argument&) {
  }
  return std::nullopt;
}

std::string string_or(const Json& record, const char* key, const std::string& fallback) {
  const Json* v = find_path(record, {key});
  return v != nullptr && v->is_string() ? v->get<std::string>() : fallback;
}

Json field_or_null(const Json& record, const char* key) {
  const Json* v = find_path(record, {key});
  return v != nullptr ? *v : Json();
}

/// A number for JSON output: json_real, or null when there is none.
Json optional_real(std::optional<double> v) { return v ? json_real(*v) : Json(); }

// ---- One side of a diff ---------------------------------------------------------------------------------------

struct PointRef {
  const Json* record = nullptr;
  const Json* header = nullptr;  ///< the header line above the point; nullptr if none came first
};

struct Side {
  /// Headers that own at least one compared point (a header whose points were all replaced by a later
  /// shard's does not describe what is compared).
  std::vector<const Json*> headers;
  std::size_t superseded = 0;  ///< headers with points, every one of them replaced by a later record
  std::vector<std::string> order;  ///< ids in order of first appearance
  std::unordered_map<std::string, PointRef> points;
};

Side index_side(const std::vector<Json>& records, const char* side) {
  Side s;
  const Json* header = nullptr;
  std::unordered_set<const Json*> had_points;
  for (const Json& r : records) {
    const std::string type = r.is_object() ? string_or(r, "type", "") : "";
    if (type == "header") {
      header = &r;
      s.headers.push_back(&r);
    } else if (type == "point") {
      const Json* id = find_path(r, {"id"});
      if (id == nullptr || !id->is_string())
        throw std::invalid_argument(std::string(side) + ": a point record has no string \"id\"");
      const auto [it, inserted] = s.points.insert_or_assign(id->get<std::string>(), PointRef{&r, header});
      if (inserted) s.order.push_back(it->first);
      had_points.insert(header);
    }
  }
  std::unordered_set<const Json*> owners;
  for (const auto& [id, ref] : s.points) owners.insert(ref.header);
  std::vector<const Json*> live;
  for (const Json* h : s.headers) {
    if (owners.contains(h)) live.push_back(h);
    else if (had_points.contains(h)) ++s.superseded;
  }
  s.headers = std::move(live);
  return s;
}

/// Timing samples of a point in seconds, or the reason there are none usable.
struct Samples {
  std::vector<double> seconds;
  std::string source;   ///< "device" or "wall"
  std::string problem;  ///< empty when every sample is a finite positive number
};

Samples read_samples(const Json& point) {
  Samples s;
  const Json* timing = find_path(point, {"timing"});
  const Json* device = timing != nullptr ? find_path(*timing, {"device_samples_s"}) : nullptr;
  const Json* list = nullptr;
  if (device != nullptr && !device->is_null()) {
    list = device;
    s.source = "device";
  } else if (timing != nullptr) {
    list = find_path(*timing, {"wall_samples_s"});
    s.source = "wall";
  }
  if (list == nullptr || !list->is_array() || list->empty()) {
    s.problem = "no timing samples";
    return s;
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    const Json& v = (*list)[i];
    double x = kNaN;
    try {
      x = real_from_json(v);
    } catch (const std::invalid_argument&) {
      s.problem = fmt::format("{} sample {} is not a number ({})", s.source, i, v.dump());
      return s;
    }
    if (!std::isfinite(x) || x <= 0) {
      s.problem = fmt::format("{} sample {} is not a finite positive time ({})", s.source, i, v.dump());
      return s;
    }
    s.seconds.push_back(x);
  }
  return s;
}

/// What a pooled lab.processes record says per process (timing.processes).
struct ProcessData {
  bool pooled = false;         ///< the record has a timing.processes block
  std::vector<double> times;   ///< each process's median (seconds), >= 2 of them, in process order
  std::vector<double> probes;  ///< each process's host probe median (seconds per round trip), same order; or none
  std::string problem;         ///< why a timing.processes block that is there cannot be used; empty if it can
};

/// Reads timing.processes: `time_s` must hold >= 2 finite positive times, and `host_probe_time_s`, where
/// present, one finite positive time per process. A block that breaks either is a problem, never dropped in
/// part: times and probes are paired by position.
ProcessData read_processes(const Json& point) {
  ProcessData d;
  const Json* block = find_path(point, {"timing", "processes"});
  if (block == nullptr || block->is_null()) return d;
  d.pooled = true;
  auto list = [&](const char* key, std::vector<double>& out) {
    const Json* a = find_path(*block, {key});
    if (a == nullptr || !a->is_array()) {
      d.problem = fmt::format("timing.processes.{} is not a list", key);
      return;
    }
    for (std::size_t i = 0; i < a->size(); ++i) {
      const auto x = finite_number(&(*a)[i]);
      if (!x || *x <= 0) {
        d.problem = fmt::format("timing.processes.{} entry {} is not a finite positive time ({})", key, i,
                                (*a)[i].dump());
        out.clear();
        return;
      }
      out.push_back(*x);
    }
  };
  list("time_s", d.times);
  if (d.problem.empty() && d.times.size() < 2)
    d.problem = fmt::format("timing.processes.time_s holds {} process median(s); pooling needs 2 or more", d.times.size());
  if (d.problem.empty() && block->contains("host_probe_time_s")) {
    list("host_probe_time_s", d.probes);
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

/// Factor that turns a point's seconds into the compared unit: 1, or with normalize the calibrated copy
/// bandwidth of the point's header (bytes/s), giving "bytes the device could have copied".
double time_scale(const PointRef& p, const DiffOptions& options, const char* side) {
  if (!options.normalize) return 1.0;
  const auto bw = p.header != nullptr ? finite_number(find_path(*p.header, {"calibration", "copy", "bandwidth_Bps"}))
                                      : std::nullopt;
  if (!bw || *bw <= 0)
    throw std::invalid_argument(fmt::format(
        "--normalize: {} point {} comes from a run without a calibrated copy bandwidth "
        "(calibration.copy.bandwidth_Bps); compare without --normalize",
        side, string_or(*p.record, "key", string_or(*p.record, "id", "?"))));
  return *bw;
}

// ---- Environment comparison ---------------------------------------------------------------------------------

/// Distinct values of a header field over a side's headers, joined; empty when no header has it.
std::string describe_text(const Side& side, const Path& path) {
  std::vector<std::string> seen;
  for (const Json* h : side.headers) {
    const Json* v = find_path(*h, path);
    if (v == nullptr) continue;
    const std::string text = v->is_string() ? v->get<std::string>() : v->dump();
    if (std::find(seen.begin(), seen.end(), text) == seen.end()) seen.push_back(text);
  }
  std::string out;
  for (const auto& t : seen) out += (out.empty() ? "" : " | ") + t;
  return out;
}

std::optional<double> median_over_headers(const Side& side, const Path& path) {
  std::vector<double> values;
  for (const Json* h : side.headers)
    if (const auto v = finite_number(find_path(*h, path))) values.push_back(*v);
  if (values.empty()) return std::nullopt;
  return median_of(values);
}

/// Median SM clock (Hz) read by the points just before and after their timing.
std::optional<double> median_sm_clock(const Side& side) {
  std::vector<double> values;
  for (const auto& [id, p] : side.points)
    for (const char* when : {"before", "after"})
      if (const auto v = finite_number(find_path(*p.record, {"device_state", when, "sm_clock_hz"})); v && *v > 0)
        values.push_back(*v);
  if (values.empty()) return std::nullopt;
  return median_of(values);
}

struct TextField {
  const char* name;   ///< key in the environment summary
  const char* label;  ///< words in a warning
  Path path;
};

struct NumberField {
  const char* name;
  const char* label;
  Path path;
  double unit;  ///< printed as value / unit
  const char* unit_name;
};

/// Compares the two sides' environments; appends a warning to `warnings` for each difference and returns
/// {"base": {...}, "new": {...}} with the values compared.
Json compare_environment(const Side& base, const Side& current, Json& warnings) {
  static const TextField kText[] = {
      {"gpu", "GPU", {"environment", "device", "name"}},
      {"driver_version", "driver", {"environment", "device", "driver_version"}},
      {"runtime_version", "CUDA runtime", {"environment", "device", "runtime_version"}},
      {"build_type", "build type", {"environment", "labrun", "build_type"}},
  };
  // Calibrated ceilings. The launch-time calibration measures the host, not the device: compared below.
  static const NumberField kCeilings[] = {
      {"copy_bandwidth_Bps", "calibrated copy bandwidth", {"calibration", "copy", "bandwidth_Bps"}, 1e9, "GB/s"},
      {"read_bandwidth_Bps", "calibrated read bandwidth", {"calibration", "read", "bandwidth_Bps"}, 1e9, "GB/s"},
      {"fp32_fma_flop_per_s", "calibrated FP32 FMA rate", {"calibration", "fp32_fma", "flop_per_s"}, 1e12, "TFLOP/s"},
      {"bf16_gemm_flop_per_s", "calibrated BF16 GEMM rate", {"calibration", "bf16_gemm", "flop_per_s"}, 1e12,
       "TFLOP/s"},
  };
  Json env_base = Json::object(), env_new = Json::object();
  for (const auto& f : kText) {
    const std::string b = describe_text(base, f.path), n = describe_text(current, f.path);
    env_base[f.name] = b.empty() ? Json() : Json(b);
    env_new[f.name] = n.empty() ? Json() : Json(n);
    if (b != n)
      warnings.push_back(fmt::format("{} differs: base {}, new {}", f.label, b.empty() ? "unknown" : b,
                                     n.empty() ? "unknown" : n));
  }
  const auto compare_numbers = [&](const char* name, const char* label, std::optional<double> b,
                                   std::optional<double> n, double tolerance, double unit, const char* unit_name) {
    env_base[name] = optional_real(b);
    env_new[name] = optional_real(n);
    if (!b || !n || *b <= 0 || *n <= 0) return;
    const double gap = std::max(*b, *n) / std::min(*b, *n) - 1;
    if (gap > tolerance)
      warnings.push_back(fmt::format("{} differs by {:.1f}% (more than {:.0f}%): base {:.4g} {}, new {:.4g} {}", label,
                                     100 * gap, 100 * tolerance, *b / unit, unit_name, *n / unit, unit_name));
  };
  for (const auto& f : kCeilings)
    compare_numbers(f.name, f.label, median_over_headers(base, f.path), median_over_headers(current, f.path),
                    kCeilingTolerance, f.unit, f.unit_name);
  compare_numbers("median_sm_clock_hz", "median SM clock seen by the points", median_sm_clock(base),
                  median_sm_clock(current), kClockTolerance, 1e6, "MHz");
  // The host's speed: on a virtualised host it moved 3.7-4.7 µs between back-to-back runs of one build
  // (results/h200/README.md), and points timed live that the host paces (sync- or launch-bound) move with it.
  compare_numbers("eager_launch_time_s",
                  "host speed (calibrated eager launch time; moves sync- and launch-bound points timed live)",
                  median_over_headers(base, {"calibration", "launch", "eager_time_s"}),
                  median_over_headers(current, {"calibration", "launch", "eager_time_s"}), kHostTolerance, 1e-6, "µs");
  // The GPU side of an eager launch (empty kernels queued behind a blocking kernel): blocked eager points made of
  // short kernels pay it once per launch.
  compare_numbers("eager_queued_launch_time_s",
                  "GPU-side eager launch cost (calibrated, launches queued; moves eager points of short kernels)",
                  median_over_headers(base, {"calibration", "launch", "eager_queued_time_s"}),
                  median_over_headers(current, {"calibration", "launch", "eager_queued_time_s"}), kHostTolerance, 1e-6,
                  "µs");

  // Lab settings (sample counts, L2 mode, an added delay...) change what a time means.
  std::vector<std::string> lab_keys;
  for (const Side* side : {&base, &current})
    for (const Json* h : side->headers)
      if (const Json* lab = find_path(*h, {"lab"}); lab != nullptr && lab->is_object())
        for (const auto& [key, value] : lab->items())
          if (std::find(lab_keys.begin(), lab_keys.end(), key) == lab_keys.end()) lab_keys.push_back(key);
  for (const auto& key : lab_keys) {
    const std::string b = describe_text(base, {"lab", key}), n = describe_text(current, {"lab", key});
    if (b != n)
      warnings.push_back(fmt::format("lab setting {} differs: base {}, new {}", key, b.empty() ? "unset" : b,
                                     n.empty() ? "unset" : n));
  }
  return Json{{"base", env_base}, {"new", env_new}};
}

// ---- Verdicts -------------------------------------------------------------------------------------------------

/// The verdict rule of an ok/ok point with usable samples (docs/diff.md "Verdicts"), in one place.
std::pair<std::string, std::string> decide(const RatioEstimate& r, double p_adjusted, std::size_t n_base,
                                           std::size_t n_new, const DiffOptions& o, std::optional<WelchLog> process,
                                           std::optional<HostAdjusted> host) {
  const double up = 1 + o.min_effect, down = 1 / up;
  if (n_base < kMinSamples || n_new < kMinSamples)
    return {"inconclusive",
            fmt::format("fewer than {} samples on a side ({} base, {} new)", kMinSamples, n_base, n_new)};
  const bool significant = p_adjusted <= o.alpha;
  const bool beyond = r.ci_low > up || r.ci_high < down;
  // A host-sensitive point whose processes all probed the host: the change must hold with the host's speed
  // taken out both ways (per probe, and by covariance), beyond the minimum effect in the same direction, and the
  // processes' medians must differ by one of the three tests at alpha / 3 (Bonferroni). A change of the host's
  // speed alone moves neither adjusted ratio beyond the minimum effect (docs/diff.md "Host-sensitive points").
  if (significant && beyond && process && host) {
    auto holds = [&](double ratio) { return r.ci_low > up ? ratio > up : ratio < down; };
    const double p_min = std::min({process->p_value, host->per_probe.p_value, host->covariate.p_value});
    const bool effect = holds(host->per_probe.ratio) && holds(host->covariate.ratio);
    const bool tested = 3 * p_min <= o.alpha;
    if (!(effect && tested)) {
      std::string why;
      if (!effect)
        why = fmt::format("with the host's speed taken out the change is {:+.1f}% per probe and {:+.1f}% by covariance "
                          "(elasticity {:.2f}), not both beyond the {:g}% minimum effect",
                          100 * (host->per_probe.ratio - 1), 100 * (host->covariate.ratio - 1), host->elasticity,
                          100 * o.min_effect);
      if (!tested)
        why += fmt::format("{}the processes' medians do not differ enough (smallest Welch p {:.3g} > alpha/3 = {:.3g})",
                           why.empty() ? "" : "; ", p_min, o.alpha / 3);
      return {"inconclusive", why};
    }
  }
  if (significant && beyond && process && !host && !(process->p_value <= o.alpha))
    return {"inconclusive",
            fmt::format("the processes' medians do not differ (Welch's t on their logs: ratio {:.4f}, p {:.3g} > alpha "
                        "{:g}): the change is within the variation between processes",
                        process->ratio, process->p_value, o.alpha)};
  if (significant && r.ci_low > up) return {"slower", ""};
  if (significant && r.ci_high < down) return {"faster", ""};
  if (r.ci_low >= down && r.ci_high <= up) return {"same", ""};
  if (!std::isfinite(r.ci_high))
    return {"inconclusive", fmt::format("too few samples for a {:g}% interval", 100 * (1 - o.alpha))};
  if (r.ci_low > up || r.ci_high < down)
    return {"inconclusive", fmt::format("beyond the minimum effect but not significant after correction "
                                        "(p_adjusted {:.3g} > alpha {:g})",
                                        p_adjusted, o.alpha)};
  return {"inconclusive", fmt::format("the interval [{:.4f}, {:.4f}] crosses a minimum-effect bound "
                                      "[{:.4f}, {:.4f}]: noise larger than the effect, or too few samples",
                                      r.ci_low, r.ci_high, down, up)};
}

/// Whether the point's compared time holds the host's work: timed live (not behind a blocking kernel) and
/// interpreted as sync- or launch-bound. Such a time moves with the host's speed as much as with the code.
bool host_sensitive(const Json& record) {
  const Json* method = find_path(record, {"timing", "method"});
  const Json* bound = find_path(record, {"interpretation", "bound"});
  const bool blocked = method && method->is_string() && *method == kBlockedTimingMethod;
  return !blocked && bound && bound->is_string() && (*bound == "sync" || *bound == "launch");
}

bool is_failure_status(const std::string& status) { return status == "incorrect" || status == "error"; }

Json point_stub(const Json& record, const std::string& id) {
  return Json{{"id", id}, {"key", field_or_null(record, "key")}, {"status", string_or(record, "status", "unknown")}};
}

void check_options(const DiffOptions& o) {
  if (!(o.min_effect >= 0) || !std::isfinite(o.min_effect))
    throw std::invalid_argument(fmt::format("min effect must be a finite fraction >= 0, got {}", o.min_effect));
  // Above 0.5 the "confidence" intervals would be narrower than 50%; below 1e-12 the interval's normal quantile
  // is beyond what the statistics are accurate for.
  if (!(o.alpha >= 1e-12 && o.alpha <= 0.5))
    throw std::invalid_argument(fmt::format("alpha must lie in [1e-12, 0.5] (e.g. 0.05 or 5%), got {}", o.alpha));
}

}  // namespace

// ---- Options --------------------------------------------------------------------------------------------------

const char* to_string(DiffOptions::FailOn fail_on) {
  return fail_on == DiffOptions::FailOn::any ? "any" : "slower";
}

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

Json diff_results(const std::vector<Json>& base_records, const std::vector<Json>& new_records,
                  const DiffOptions& options) {
  check_options(options);
  const Side base = index_side(base_records, "base");
  const Side current = index_side(new_records, "new");

  Json warnings = Json::array();
  for (const Side* side : {&base, &current})
    if (side->superseded > 0)
      warnings.push_back(fmt::format("{} side: {} run(s) had every point replaced by a later record with the same id "
                                     "(last record wins); their headers are left out of this comparison",
                                     side == &base ? "base" : "new", side->superseded));
  const Json environment = compare_environment(base, current, warnings);

  Json points = Json::array(), status_changes = Json::array();
  // Statistics of the ok/ok points with usable samples, waiting for the BH correction over all of them.
  struct Pending {
    std::size_t index;  ///< into `points`
    RatioEstimate estimate;
    double p_value;
    std::size_t n_base, n_new;
    std::optional<WelchLog> process;  ///< both sides pooled from >= 2 processes
    std::optional<HostAdjusted> host;  ///< the same with the host's speed out (host-sensitive, every process probed)
  };
  std::vector<Pending> pending;
  std::size_t mixed_sources = 0;
  // Points compared without a gate they would have had: a pooled record against an unpooled one; host-sensitive
  // points where a side is not pooled, or pooled without host probes (a run from before the probe).
  std::size_t half_pooled = 0, host_unpooled = 0, host_unprobed = 0;
  std::map<std::pair<std::string, std::string>, std::size_t> mixed_methods;  // (base, new) timing.method -> points

  for (const auto& id : base.order) {
    const auto found = current.points.find(id);
    if (found == current.points.end()) continue;
    const PointRef& b = base.points.at(id);
    const PointRef& n = found->second;
    const std::string b_status = string_or(*b.record, "status", "unknown");
    const std::string n_status = string_or(*n.record, "status", "unknown");
    Json row{{"id", id},
             {"key", field_or_null(*n.record, "key")},
             {"variant", field_or_null(*n.record, "variant")},
             {"axes", field_or_null(*n.record, "axes")},
             {"base_status", b_status},
             {"new_status", n_status},
             {"verdict", nullptr},
             {"reason", nullptr},
             {"ratio", nullptr},
             {"ratio_ci_low", nullptr},
             {"ratio_ci_high", nullptr},
             {"p_value", nullptr},
             {"p_adjusted", nullptr},
             {"base_median_s", nullptr},
             {"new_median_s", nullptr},
             {"base_n", nullptr},
             {"new_n", nullptr},
             {"host_sensitive", host_sensitive(*b.record) || host_sensitive(*n.record)},
             {"process_p", nullptr},
             {"process_ratio", nullptr},
             {"host_adjusted", nullptr},
             {"gate", nullptr}};
    if (b_status != n_status) {
      row["verdict"] = "status_changed";
      row["reason"] = fmt::format("{} -> {}", b_status, n_status);
      status_changes.push_back(Json{{"id", id},
                                    {"key", row["key"]},
                                    {"base_status", b_status},
                                    {"new_status", n_status},
                                    {"reason", field_or_null(*n.record, "reason")}});
    } else if (b_status != "ok") {
      row["verdict"] = "not_compared";
      row["reason"] = "not timed: " + b_status + " on both sides";
    } else {
      const Samples bs = read_samples(*b.record), ns = read_samples(*n.record);
      const ProcessData bpd = read_processes(*b.record), npd = read_processes(*n.record);
      row["base_n"] = bs.seconds.size();
      row["new_n"] = ns.seconds.size();
      if (!bs.problem.empty() || !ns.problem.empty() || !bpd.problem.empty() || !npd.problem.empty()) {
        row["verdict"] = "inconclusive";
        row["reason"] = !bs.problem.empty()    ? "base: " + bs.problem
                        : !ns.problem.empty()  ? "new: " + ns.problem
                        : !bpd.problem.empty() ? "base: " + bpd.problem
                                               : "new: " + npd.problem;
      } else {
        mixed_sources += bs.source != ns.source;
        const Json* bm = find_path(*b.record, {"timing", "method"});
        const Json* nm = find_path(*n.record, {"timing", "method"});
        const std::string bms = bm && bm->is_string() ? bm->get<std::string>() : "unknown";
        const std::string nms = nm && nm->is_string() ? nm->get<std::string>() : "unknown";
        if (bms != nms) ++mixed_methods[{bms, nms}];
        row["base_median_s"] = json_real(median_of(bs.seconds));
        row["new_median_s"] = json_real(median_of(ns.seconds));
        const double b_scale = time_scale(b, options, "base"), n_scale = time_scale(n, options, "new");
        std::vector<double> bx = bs.seconds, nx = ns.seconds;
        for (double& v : bx) v *= b_scale;
        for (double& v : nx) v *= n_scale;
        const RatioEstimate est = hodges_lehmann_ratio(bx, nx, 1 - options.alpha);
        const double p = mann_whitney(bx, nx).p_value;
        row["ratio"] = json_real(est.ratio);
        row["ratio_ci_low"] = json_real(est.ci_low);
        row["ratio_ci_high"] = json_real(est.ci_high);
        row["p_value"] = json_real(p);
        std::optional<WelchLog> process;
        std::optional<HostAdjusted> host;
        std::string gate = "samples";
        if (bpd.pooled && npd.pooled) {
          std::vector<double> bps = bpd.times, nps = npd.times;
          for (double& v : bps) v *= b_scale;
          for (double& v : nps) v *= n_scale;
          process = welch_log_test(bps, nps);
          gate = "processes";
          row["process_p"] = json_real(process->p_value);
          row["process_ratio"] = json_real(process->ratio);
          // Host-sensitive and probed in every process on both sides: the host's speed taken out as well.
          if (row["host_sensitive"] == true) {
            if (!bpd.probes.empty() && !npd.probes.empty()) {
              host = host_adjusted_tests(bps, bpd.probes, nps, npd.probes);
              gate = "host_adjusted";
              row["host_adjusted"] = {{"per_probe_ratio", json_real(host->per_probe.ratio)},
                                      {"per_probe_p", json_real(host->per_probe.p_value)},
                                      {"elasticity", json_real(host->elasticity)},
                                      {"covariate_ratio", json_real(host->covariate.ratio)},
                                      {"covariate_p", json_real(host->covariate.p_value)}};
            } else {
              ++host_unprobed;
            }
          }
        } else {
          half_pooled += bpd.pooled != npd.pooled;
          host_unpooled += row["host_sensitive"] == true;
        }
        row["gate"] = gate;
        pending.push_back(Pending{points.size(), est, p, bx.size(), nx.size(), process, host});
      }
    }
    points.push_back(std::move(row));
  }

  std::vector<double> raw(pending.size());
  std::transform(pending.begin(), pending.end(), raw.begin(), [](const Pending& p) { return p.p_value; });
  const std::vector<double> adjusted = benjamini_hochberg(raw);
  for (std::size_t i = 0; i < pending.size(); ++i) {
    Json& row = points[pending[i].index];
    row["p_adjusted"] = json_real(adjusted[i]);
    auto [verdict, reason] =
        decide(pending[i].estimate, adjusted[i], pending[i].n_base, pending[i].n_new, options, pending[i].process,
               pending[i].host);
    row["verdict"] = verdict;
    row["reason"] = reason.empty() ? Json() : Json(reason);
  }

  if (mixed_sources > 0)
    warnings.push_back(fmt::format("{} point(s) compare device-timed samples with wall-clock samples", mixed_sources));
  if (half_pooled > 0)
    warnings.push_back(fmt::format("{} point(s) compare a record pooled from lab.processes with one that is not: the "
                                   "process gate does not apply to them, and their samples are judged alone",
                                   half_pooled));
  if (host_unpooled + host_unprobed > 0)
    warnings.push_back(fmt::format(
        "{} host-sensitive point(s) were compared without taking the host's speed out ({} not pooled from processes "
        "on both sides, {} without host probes on a side, e.g. a run from before the probe): a change of the host's "
        "speed alone can make them slower or faster",
        host_unpooled + host_unprobed, host_unpooled, host_unprobed));
  if (!mixed_methods.empty()) {
    std::string which;
    for (const auto& [pair, count] : mixed_methods)
      which += fmt::format("{}{} from {} to {}", which.empty() ? "" : "; ", count, pair.first, pair.second);
    warnings.push_back("timing.method differs, so those times measure different things (blocked samples time the "
                       "GPU only, live ones include the host's launches): " + which);
  }

  Json added = Json::array(), missing = Json::array();
  for (const auto& id : current.order)
    if (!base.points.contains(id)) added.push_back(point_stub(*current.points.at(id).record, id));
  for (const auto& id : base.order)
    if (!current.points.contains(id)) missing.push_back(point_stub(*base.points.at(id).record, id));

  if (points.empty())
    throw std::invalid_argument("base and new have no point in common (different sweeps?): nothing to compare");
  // A run killed part-way has fewer points than its headers announced: say so, and under --fail-on any count
  // it as a regression (a CI job that died must not pass as "no regression").
  bool incomplete = false;
  for (const auto* side : {&base_records, &new_records}) {
    std::int64_t announced = 0, present = 0;
    for (const auto& r : *side) {
      if (string_or(r, "type", "") == "header" && r.contains("point_count") && r["point_count"].is_number_integer())
        announced += r["point_count"].get<std::int64_t>();
      if (string_or(r, "type", "") == "point") ++present;
    }
    if (present < announced) {
      warnings.push_back(fmt::format("{} run is incomplete: {} of the {} points its header(s) announce",
                                     side == &base_records ? "base" : "new", present, announced));
      incomplete = incomplete || side == &new_records;
    }
  }

  std::map<std::string, std::size_t> counts;
  std::size_t host_sensitive_changes = 0;
  for (const auto& row : points)
    host_sensitive_changes +=
        row["host_sensitive"] == true && (row["verdict"] == "slower" || row["verdict"] == "faster");
  bool regression = options.fail_on == DiffOptions::FailOn::any && (incomplete || !missing.empty());
  for (const auto& row : points) {
    const std::string verdict = row["verdict"].get<std::string>();
    ++counts[verdict];
    if (verdict == "slower") regression = true;
    if (verdict == "status_changed" &&
        (options.fail_on == DiffOptions::FailOn::any || is_failure_status(row["new_status"].get<std::string>())))
      regression = true;
  }
  Json summary{{"matched", points.size()},
               {"compared", counts["same"] + counts["slower"] + counts["faster"] + counts["inconclusive"]},
               {"same", counts["same"]},
               {"slower", counts["slower"]},
               {"faster", counts["faster"]},
               {"inconclusive", counts["inconclusive"]},
               {"status_changed", counts["status_changed"]},
               {"not_compared", counts["not_compared"]},
               {"new", added.size()},
               {"missing", missing.size()},
               {"host_sensitive_changes", host_sensitive_changes}};

  Json env_out{{"warnings", std::move(warnings)}, {"base", environment["base"]}, {"new", environment["new"]}};
  return Json{{"type", "diff"},
              {"schema_version", 1},
              {"options",
               {{"min_effect", options.min_effect},
                {"alpha", options.alpha},
                {"confidence", 1 - options.alpha},
                {"normalize", options.normalize},
                {"fail_on", to_string(options.fail_on)}}},
              {"environment", std::move(env_out)},
              {"points", std::move(points)},
              {"new", std::move(added)},
              {"missing", std::move(missing)},
              {"status_changes", std::move(status_changes)},
              {"summary", std::move(summary)},
              {"regression", regression}};
}

// ---- Renderers ------------------------------------------------------------------------------------------------

namespace {

double number_or_nan(const Json& v) {
  try {
    return real_from_json(v);
  } catch (const std::invalid_argument&) {
    return kNaN;
  }
}

/// A time in seconds with a readable unit, 3 significant digits; "-" when absent.
std::string fmt_seconds(const Json& v) {
  const double s = number_or_nan(v);
  return std::isfinite(s) ? format_time(s) : "-";  // the sweep's and the report's spelling (µs)
}


/// A ratio new/base as a signed change in percent: 1.102 -> "+10.2%".
std::string fmt_change(double ratio) {
  if (std::isnan(ratio)) return "-";
  if (std::isinf(ratio)) return "+inf%";
  return fmt::format("{:+.1f}%", 100 * (ratio - 1));
}

std::string fmt_interval(const Json& row) {
  if (row["ratio_ci_low"].is_null()) return "-";
  return "[" + fmt_change(number_or_nan(row["ratio_ci_low"])) + ", " + fmt_change(number_or_nan(row["ratio_ci_high"])) +
         "]";
}

std::string fmt_p(const Json& v) { return v.is_null() ? "-" : fmt::format("{:.2g}", number_or_nan(v)); }

std::string fmt_samples(const Json& row) {
  if (row["base_n"].is_null()) return "-";
  return fmt::format("{}/{}", row["base_n"].get<std::size_t>(), row["new_n"].get<std::size_t>());
}

std::string fmt_change_cell(const Json& row) {
  if (row["verdict"] == "status_changed")
    return row["base_status"].get<std::string>() + " -> " + row["new_status"].get<std::string>();
  return fmt_change(number_or_nan(row["ratio"]));
}

/// Severity order of the rows shown: status change, slower, faster, inconclusive; same and not_compared last.
int severity(const std::string& verdict) {
  static const std::map<std::string, int> kOrder = {{"status_changed", 0}, {"slower", 1},       {"faster", 2},
                                                    {"inconclusive", 3},   {"not_compared", 4}, {"same", 5}};
  const auto it = kOrder.find(verdict);
  return it != kOrder.end() ? it->second : 6;
}

std::vector<const Json*> rows_by_severity(const Json& diff, bool all_rows) {
  std::vector<const Json*> rows;
  for (const auto& row : diff["points"]) {
    const std::string v = row["verdict"].get<std::string>();
    if (all_rows || (v != "same" && v != "not_compared")) rows.push_back(&row);
  }
  // Within a verdict, the biggest change first (|log ratio|); rows without a ratio keep the sweep order.
  const auto size_of_change = [](const Json* row) {
    const double r = number_or_nan((*row)["ratio"]);
    return r > 0 ? std::fabs(std::log(r)) : 0.0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const Json* a, const Json* b) {
    const int sa = severity((*a)["verdict"].get<std::string>()), sb = severity((*b)["verdict"].get<std::string>());
    return sa != sb ? sa < sb : size_of_change(a) > size_of_change(b);
  });
  return rows;
}

std::string text_or_dash(const Json& v) { return v.is_string() ? v.get<std::string>() : v.is_null() ? "-" : v.dump(); }

/// "N matched: a same, b slower, ...; c new, d missing" from the summary block.
std::string summary_counts(const Json& s) {
  return fmt::format("{} matched: {} same, {} slower, {} faster, {} inconclusive, {} status changed, {} not compared; "
                     "{} new, {} missing",
                     s["matched"].get<std::size_t>(), s["same"].get<std::size_t>(), s["slower"].get<std::size_t>(),
                     s["faster"].get<std::size_t>(), s["inconclusive"].get<std::size_t>(),
                     s["status_changed"].get<std::size_t>(), s["not_compared"].get<std::size_t>(),
                     s["new"].get<std::size_t>(), s["missing"].get<std::size_t>());
}

std::string options_line(const Json& o) {
  return fmt::format("min effect {:g}%, {:g}% intervals, Benjamini-Hochberg FDR {:g}%, fail on {}{}",
                     100 * o["min_effect"].get<double>(), 100 * o["confidence"].get<double>(),
                     100 * o["alpha"].get<double>(), o["fail_on"].get<std::string>(),
                     o["normalize"].get<bool>() ? ", times normalized by calibrated copy bandwidth" : "");
}

/// Escapes a cell of a GitHub-flavoured markdown table.
std::string md_cell(std::string text) {
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out;
}

std::string md_table(const std::vector<const Json*>& rows, bool with_reason) {
  std::string out = "| verdict | point | change | interval | p (BH) | base | new | samples |";
  out += with_reason ? " reason |\n" : "\n";
  out += "|---|---|---:|---:|---:|---:|---:|---:|";
  out += with_reason ? "---|\n" : "\n";
  for (const Json* r : rows) {
    const Json& row = *r;
    out += fmt::format("| {}{} | `{}` | {} | {} | {} | {} | {} | {} |", row["verdict"].get<std::string>(),
                       row.value("host_sensitive", false) ? " *host*" : "",
                       md_cell(text_or_dash(row["key"])), md_cell(fmt_change_cell(row)), fmt_interval(row),
                       fmt_p(row["p_adjusted"]), fmt_seconds(row["base_median_s"]), fmt_seconds(row["new_median_s"]),
                       fmt_samples(row));
    out += with_reason ? " " + md_cell(text_or_dash(row["reason"])) + " |\n" : "\n";
  }
  return out;
}

}  // namespace

std::string diff_table(const Json& diff, bool all_rows) {
  std::string out;
  for (const auto& w : diff["environment"]["warnings"]) out += "warning: " + w.get<std::string>() + "\n";
  const std::vector<const Json*> rows = rows_by_severity(diff, all_rows);
  if (!rows.empty()) {
    std::vector<std::vector<std::string>> cells = {
        {"verdict", "change", "interval", "p(BH)", "base", "new", "n", "point", "reason"}};
    for (const Json* r : rows) {
      const Json& row = *r;
      cells.push_back({row["verdict"].get<std::string>() + (row.value("host_sensitive", false) ? " (host)" : ""),
                       fmt_change_cell(row), fmt_interval(row),
                       fmt_p(row["p_adjusted"]), fmt_seconds(row["base_median_s"]), fmt_seconds(row["new_median_s"]),
                       fmt_samples(row), text_or_dash(row["key"]),
                       row["reason"].is_null() ? "" : row["reason"].get<std::string>()});
    }
    std::vector<std::size_t> width(cells.front().size(), 0);
    for (const auto& line : cells)
      for (std::size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], display_width(line[c]));
    for (const auto& line : cells) {
      std::string text;
      for (std::size_t c = 0; c < line.size(); ++c) {
        const bool last = c + 1 == line.size();
        // Numbers right-aligned, words left-aligned; the last column is never padded.
        const bool right = c >= 1 && c <= 6;
        const std::string pad(width[c] - display_width(line[c]), ' ');
        text += last ? line[c] : right ? pad + line[c] + "  " : line[c] + pad + "  ";
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
  }
  out += summary_counts(diff["summary"]) + ". " + (diff["regression"].get<bool>() ? "REGRESSION" : "No regression") +
         " (" + options_line(diff["options"]) + ").\n";
  return out;
}

std::string diff_markdown(const Json& diff) {
  const bool regression = diff["regression"].get<bool>();
  const Json& s = diff["summary"];
  std::string out = std::string("### labrun diff: ") + (regression ? "**regression**" : "no regression") + "\n\n";
  out += summary_counts(s) + ".\n\n";
  out += "Verdicts: " + options_line(diff["options"]) + ". Ratio = new / base (Hodges-Lehmann); change = ratio - 1.\n\n";
  const Json& warnings = diff["environment"]["warnings"];
  if (!warnings.empty()) {
    out += "> [!WARNING]\n> The environments differ; a time change may come from the machine, not the code.\n";
    for (const auto& w : warnings) out += "> - " + md_cell(w.get<std::string>()) + "\n";
    out += "\n";
  }
  if (const std::size_t k = s.value("host_sensitive_changes", std::size_t{0}); k > 0)
    out += fmt::format("{} of the slower/faster verdicts are on host-sensitive points (sync- or launch-bound, timed "
                       "live; marked *host* below): their times move with the host's speed as well as with the code. "
                       "Where both sides probed the host in every process, the change also held with the host's speed "
                       "taken out (docs/diff.md, \"Host-sensitive points\"); the environment warnings say whether the "
                       "host's speed differed.\n\n",
                       k);
  std::vector<const Json*> main_rows, inconclusive;
  for (const Json* row : rows_by_severity(diff, false))
    ((*row)["verdict"] == "inconclusive" ? inconclusive : main_rows).push_back(row);
  if (main_rows.empty())
    out += fmt::format("No point is slower, faster or changed status beyond the minimum effect of {:g}%.\n\n",
                       100 * diff["options"]["min_effect"].get<double>());
  else
    out += md_table(main_rows, false) + "\n";
  if (!inconclusive.empty())
    out += fmt::format("<details><summary>{} inconclusive point(s)</summary>\n\n", inconclusive.size()) +
           md_table(inconclusive, true) + "\n</details>\n\n";
  for (const char* list : {"new", "missing"}) {
    const Json& points = diff[list];
    if (points.empty()) continue;
    out += fmt::format("<details><summary>{} {} point(s)</summary>\n\n", points.size(), list);
    for (const auto& p : points)
      out += "- `" + md_cell(text_or_dash(p["key"])) + "` (" + p["status"].get<std::string>() + ")\n";
    out += "\n</details>\n\n";
  }
  return out;
}

// ---- cmd_diff -------------------------------------------------------------------------------------------------

namespace {

/// A result file that cannot be diffed; the message names the file.
class BadInput : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Every record of one result file, after checking that it is one: JSONL, a header first, at least one
/// point, every record an object and every point with a string id. A torn last line (a killed run) is dropped
/// with a note on `err`: the complete records before it are still a valid result.
std::vector<Json> load_result_file(const std::string& path, std::ostream& err) {
  std::vector<Json> records;
  bool torn_tail = false;
  try {
    records = read_jsonl(path, &torn_tail);
  } catch (const std::runtime_error& e) {
    throw BadInput(e.what());
  }
  if (torn_tail) err << "labrun diff: note: " << path << ": dropped a torn last line (was the run killed?)\n";
  if (records.empty()) throw BadInput(path + ": empty; expected a labrun result file (JSON Lines, header first)");
  std::size_t points = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    const Json& r = records[i];
    if (!r.is_object()) throw BadInput(fmt::format("{}: record {} is not a JSON object", path, i + 1));
    const std::string type = string_or(r, "type", "");
    if (i == 0 && type != "header")
      throw BadInput(path + ": no header: the first line is not a {\"type\": \"header\"} record; is this a labrun "
                            "result file?");
    if (type != "point") continue;
    const Json* id = find_path(r, {"id"});
    if (id == nullptr || !id->is_string())
      throw BadInput(fmt::format("{}: point record {} has no string \"id\"", path, i + 1));
    ++points;
  }
  if (points == 0) throw BadInput(path + ": no point records (did the run stop after its header?)");
  return records;
}

std::vector<Json> load_side(const std::vector<std::string>& paths, std::ostream& err) {
  std::vector<Json> all;
  for (const auto& path : paths) {
    std::vector<Json> records = load_result_file(path, err);
    all.insert(all.end(), std::make_move_iterator(records.begin()), std::make_move_iterator(records.end()));
  }
  return all;
}

}  // namespace

int cmd_diff(const std::vector<std::string>& base_paths, const std::vector<std::string>& new_paths,
             const DiffOptions& options, const std::string& format, std::ostream& out, std::ostream& err) {
  if (format != "table" && format != "markdown" && format != "json") {
    err << "labrun diff: unknown format '" << format << "' (expected table, markdown or json)\n";
    return kDiffBadInput;
  }
  if (base_paths.empty() || new_paths.empty()) {
    err << "labrun diff: need at least one base and one new result file\n";
    return kDiffBadInput;
  }
  Json diff;
  try {
    const std::vector<Json> base = load_side(base_paths, err);
    const std::vector<Json> current = load_side(new_paths, err);
    diff = diff_results(base, current, options);
  } catch (const BadInput& e) {
    err << "labrun diff: " << e.what() << "\n";
    return kDiffBadInput;
  } catch (const std::invalid_argument& e) {
    err << "labrun diff: " << e.what() << "\n";
    return kDiffBadInput;
  }
  if (format == "json")
    out << diff.dump(2) << "\n";
  else if (format == "markdown")
    out << diff_markdown(diff);
  else
    out << diff_table(diff);
  return diff["regression"].get<bool>() ? kDiffRegression : kDiffNoRegression;
}

}  // namespace labrun
