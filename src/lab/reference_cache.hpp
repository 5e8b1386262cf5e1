// A disk cache of host references, shared by the processes of one sweep: the first process of a lab.processes
// pool computes a point's reference from its seeded inputs, the others read it back, so the host pays for
// generating inputs and computing the reference once per point instead of once per process (issue 14). Only
// host-side numbers are cached (no device state is shared); the key names everything the reference depends on.
#pragma once

#include <optional>
#include <string>

#include "record.hpp"  // Json

namespace labrun {

/// The environment variable naming the cache folder. A pooled sweep sets it for its workers to
/// OUTPUT.processes/references unless it is set already; unset or empty: no caching.
inline constexpr const char* kReferenceCacheEnv = "LABRUN_REFERENCE_CACHE";

/// References on disk, one JSON file per key: {"key": KEY, "value": VALUE}. The file name is FNV-1a 64 of the key
/// (hex); a file whose key differs (a collision) or that does not parse is a miss. Writes are whole (a sibling
/// then rename), so a concurrent reader (--devices) never sees half a file. Never throws: a cache that cannot be
/// read or written is only slower.
class ReferenceCache {
 public:
  /// The cache at `dir`; "" is a cache that holds nothing and stores nothing.
  explicit ReferenceCache(std::string dir) : dir_(std::move(dir)) {}
  /// The cache the environment names (kReferenceCacheEnv), or a disabled one.
  static ReferenceCache from_env();
  bool enabled() const { return !dir_.empty(); }
  /// The value stored under `key`, or nullopt.
  std::optional<Json> load(const std::string& key) const;
  /// Stores `value` under `key` (creating the folder), replacing what was there: write_text_whole() of
  /// src/base/output_file.hpp, after removing partial files of writers that died; a path that is not a regular file is
  /// left alone.
  void store(const std::string& key, const Json& value) const;

 private:
  std::string path_of(const std::string& key) const;
  std::string dir_;
};

}  // namespace labrun
