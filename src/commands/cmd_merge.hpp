// `labrun merge`: the shards of one sweep into one result file.
#pragma once

#include <string>
#include <vector>

#include "registry.hpp"

namespace labrun {

/// Merges `shards` (files; the CLI expands lists and folders) into `output`, written whole (a sibling renamed into
/// place), streaming each shard's lines; points in the serial sweep's order where this build can expand the config.
/// Returns kExitOk, or kExitUsage (2) with the reason on stderr and nothing written for a bad set of shards
/// (src/cluster/merge.hpp).
/// @throws OutputError when `output` exists without `force`, is not a regular file, is being written by another
/// labrun, or cannot be written (kExitOutput; FileClaim, src/base/output_file.hpp).
int cmd_merge(const std::vector<std::string>& shards, const std::string& output, bool force, bool allow_mixed_builds,
              const Registry& registry);

}  // namespace labrun
