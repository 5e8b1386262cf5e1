#include "reference_cache.hpp"

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include <labrun/point.hpp>  // fnv1a64

#include "output_file.hpp"

namespace labrun {

namespace fs = std::filesystem;

ReferenceCache ReferenceCache::from_env() {
  const char* dir = std::getenv(kReferenceCacheEnv);
  return ReferenceCache(dir ? dir : "");
}

std::string ReferenceCache::path_of(const std::string& key) const {
  return (fs::path(dir_) / fmt::format("{:016x}.json", fnv1a64(key))).string();
}

std::optional<Json> ReferenceCache::load(const std::string& key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(path_of(key));
  if (!in) return std::nullopt;
  try {
    const Json j = Json::parse(in);
    if (!j.is_object() || !j.contains("key") || j["key"] != key || !j.contains("value")) return std::nullopt;
    return j["value"];
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

void ReferenceCache::store(const std::string& key, const Json& value) const {
  if (!enabled()) return;
  std::error_code ec;
  fs::create_directories(dir_, ec);
  const std::string path = path_of(key);
  // Written beside and renamed, as every labrun file (src/base/output_file.hpp); partial files of writers that died are
  // removed first. A cache is best-effort: a failure leaves no file, and the reference is computed again next time.
  remove_stale_siblings(path, false);
  try {
    write_text_whole(path, Json{{"key", key}, {"value", value}}.dump() + "\n");
  } catch (const std::exception&) {
  }
}

}  // namespace labrun
