// What the files of labrun diff share (diff.cpp matches the points and assembles the result; diff_environment.cpp
// compares the two sides' environments; diff_statistics.cpp tests a matched point's times; diff_verdicts.cpp
// decides its verdict). Nothing outside src/diff/diff*.cpp includes it.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "diff.hpp"

namespace labrun::diff_detail {

/// Fewer samples than this on a side give `inconclusive` whatever the statistics say.
constexpr std::size_t kMinSamples = 3;

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

/// Factor that turns a point's seconds into the compared unit: 1, or with normalize the calibrated copy bandwidth of
/// the point's header (bytes/s). @throws std::invalid_argument with --normalize and no calibrated bandwidth.
double time_scale(const PointRef& p, const DiffOptions& options, const char* side);

/// Median over a side's headers of the calibrated quantity calibration.<ceiling>.<key>; nullopt if none has it.
std::optional<double> median_calibration(const Side& side, const char* ceiling, const char* key);

/// Compares the two sides' environments; appends a warning to `warnings` for each difference and fills the values
/// compared into `base_env` and `new_env` (diff_environment.cpp).
void compare_environment(const Side& base, const Side& current, std::vector<std::string>& warnings,
                         DiffEnvironmentSide& base_env, DiffEnvironmentSide& new_env);

/// Host probes of the two sides within this fraction (3%) count as hosts alike: a host-sensitive point keeps the
/// process gate with the covariance and per-probe checks; beyond it the host-adjusted interval alone decides.
constexpr double kHostsAlike = 0.03;

/// Whether a host-sensitive point's sides ran on hosts whose probes differ by more than kHostsAlike
/// (diff_verdicts.cpp).
bool hosts_differ(const HostAdjusted& h);

/// The verdict of a compared point and its reason ("" when none), by the rule of docs/diff.md "Verdicts".
std::pair<Verdict, std::string> decide(const DiffPoint& row, const DiffOptions& o);

/// The reason two records cannot be compared because another process held the device during either; nullopt when
/// neither was shared.
std::optional<std::string> shared_device(const PointRecord& base, const PointRecord& current);

/// Compares the samples of an ok/ok point: fills row's statistics and gate, and returns its Mann-Whitney p for the
/// correction; or sets row's verdict and reason and returns nullopt when the samples cannot be compared.
std::optional<double> compare_samples(const PointRef& b, const PointRef& n, const DiffOptions& options, DiffPoint& row,
                                      Caveats& caveats);

/// DiffNoise of the compared points: the sd of log process medians of each pooled side of each compared point
/// (`normalized`: of the bound-normalised medians, for their own floor).
DiffNoise measure_noise(const std::vector<DiffPoint>& rows, const DiffOptions& o, bool normalized = false);

}  // namespace labrun::diff_detail
