// Merging the shards of one sweep (`--shard I/N`) into one run: the one implementation behind `labrun merge`,
// `report` and `diff`, which read shard files directly through it (issue 13).
#pragma once

#include <string>
#include <vector>

#include "point_record.hpp"
#include "registry.hpp"

namespace labrun {

/// How shards are merged.
struct MergeOptions {
  /// Accept shards built from different labrun commits: every shard's build is listed in the header's `shards`
  /// and a `mixed_builds` header warning makes report and diff say so.
  bool allow_mixed_builds = false;
};

/// True for the header of one shard (it has `shard`: {index, count}).
bool is_shard(const RunHeader& header);

/// What the merge rules read of one shard: its file, its header, its points' (id, key) in file order; not the
/// points themselves, so that `labrun merge` can stream shards of any size.
struct ShardView {
  std::string file;
  const RunHeader* header = nullptr;  ///< nullptr: the file has no header
  std::vector<std::pair<std::string, std::string>> points;
};

/// The merged header (as merge_shards describes it) and the order of the shards (indices into `shards`, by shard
/// index). The one implementation of the rules below. @throws ResultError as merge_shards.
struct MergePlan {
  Json header;
  std::vector<std::size_t> order;
};
MergePlan plan_merge(const std::vector<ShardView>& shards, const MergeOptions& options = {});

/// Merges the runs of the N shards of one sweep into one run. Every run must be a shard (header `shard`), all
/// of one count N with each index 1..N once, of the same config (sha256), lab settings and --only filter
/// (RunHeader::only_filter), of the same build
/// unless options.allow_mixed_builds (RunHeader::code_key: the code under test's project, commit and dirty flag, and
/// labrun's version; for the labrun binary the code is labrun itself), and complete (as many points as its header's
/// point_count); no point id may be in two shards.
///
/// The merged header is the first shard's, without `shard`, with `point_count` the sum, `argv` of the first
/// shard, and `shards` = [{index, file, created_utc, hostname, device, uuid, backend, git_sha, git_dirty,
/// code: {project, git_sha, git_dirty}, calibration, host, sync_wait, processes, points}] in index order: each
/// shard keeps its own calibration, host (environment.host: CPU model, load), sync-wait mode and per-process block
/// (processes: calibrations and hosts of its processes), so that diff adjusts each point by its own shard's
/// (shard_headers). Points are in shard order, each shard's in its file order (a shard keeps
/// the sweep's order, so points of one shard stay in sweep order).
///
/// `shards` is taken by value: pass it with std::move to merge without a copy of every point.
/// @throws ResultError naming the file(s) for each rule broken; nothing is merged then.
Run merge_shards(std::vector<Run> shards, const MergeOptions& options = {});

/// One shard of a merged run, as its own header: the merged header with the shard's calibration, host,
/// sync_wait, processes and device (name, uuid) put back, and without `shards`; `points` is how many of the merged
/// run's points (the next ones, in order) are the shard's.
struct ShardHeader {
  RunHeader header;
  std::size_t points = 0;
};
/// The shards of a merged header (more than one in its `shards`, each with its `calibration`), in merge order;
/// empty for any other header, and for a merge written before shards kept their host and processes.
std::vector<ShardHeader> shard_headers(const RunHeader& merged);

/// Replaces, in `runs`, every set of shard runs (headers with `shard`) of one config by their merge_shards();
/// other runs are kept as they are, in order (the merged run takes the place of its first shard).
/// @throws ResultError as merge_shards.
void merge_shard_runs(std::vector<Run>& runs, const MergeOptions& options = {});

}  // namespace labrun
