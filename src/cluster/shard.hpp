// Sharding a sweep (issue 13): N disjoint subsets of its points whose union is the sweep, balanced by an
// estimate of each point's lab-pass time, deterministic for a given config. The shard of a point never depends
// on the machine: a Slurm array task computes its own shard from the config alone.
#pragma once

#include <string>
#include <vector>

#include "backend.hpp"
#include "config.hpp"
#include <labrun/point.hpp>
#include "registry.hpp"

namespace labrun {

/// Shard I of N (1-based), as `--shard I/N` writes it.
struct ShardSpec {
  int index = 1;
  int count = 1;
};

/// The largest N of --shard and of labrun slurm --shards.
inline constexpr int kMaxShards = 4096;

/// Parses "I/N" with 1 <= I <= N <= kMaxShards. @throws std::invalid_argument naming the option and value.
ShardSpec parse_shard(const std::string& text, const std::string& option = "--shard");

/// Seconds a point's lab pass is estimated to take on a backend of `kind`, from the experiment's cost model
/// (RegisteredExperiment::estimate) and the lab settings:
///   t_iter  = bytes / R_bytes + flop / R_flop, with R = 2e9 B/s and 5e8 flop/s on the host backend
///             (kHostEstimate*, src/lab/lab.hpp) and 3e12 B/s, 5e13 flop/s on a GPU (an H100/H200-class device);
///   setup   = working_set_bytes / 1e10 (inputs drawn and the reference computed on the host at ~1 GB/s, but
///             once per group of variants that share them, the experiments' input caches: on the H200, the
///             measured setup of the shipped 840-point sweep averaged working set / 8.5 GB/s per point);
///   warmup  = max(warmup_time_s, warmup_iterations x t_iter);
///   timing  = min(max_time_s, min_samples x max(min_sample_time_s, t_iter)) (most points meet the CI target
///             at min_samples), one t_iter more per sample with a cold L2;
///   total   = 5 ms (records, device state, interpretation) + setup + warmup + timing.
/// Checked on the H200 (results/h200/cluster/README.md).
/// A point that will not run (variant unsupported there, wrong mode, no implementation for `kind`, over the
/// host budget) costs 1 ms. Experiments without an estimate cost the lab's fixed part only.
double estimated_point_time_s(const Point& point, const RegisteredExperiment& experiment, const LabSettings& lab,
                              BackendKind kind);

/// The indivisible groups of `points` (in sweep order), as [first, last) index ranges covering them: consecutive
/// points that differ only in their variant share inputs (each experiment's input cache) and stay together, as do
/// the points of one lab.interleave window of the serial sweep (sampled round-robin together).
std::vector<std::pair<std::size_t, std::size_t>> indivisible_groups(const std::vector<Point>& points,
                                                                    const LabSettings& lab);

/// The shard (0-based) of every point: groups assigned greedily, largest estimated cost first (ties by sweep
/// order), each to the shard with the least estimated time so far (ties to the lowest shard): the LPT rule,
/// within 4/3 of the best balance (Graham, "Bounds on multiprocessing timing anomalies", 1969). Deterministic.
std::vector<int> assign_shards(const std::vector<Point>& points, const RegisteredExperiment& experiment,
                               const LabSettings& lab, int count, BackendKind kind);

/// The points of shard `spec` in sweep order (empty when N exceeds the groups: such a shard still runs and
/// writes a header).
std::vector<Point> shard_points(const std::vector<Point>& points, const RegisteredExperiment& experiment,
                                const LabSettings& lab, const ShardSpec& spec, BackendKind kind);

}  // namespace labrun
