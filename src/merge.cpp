#include "merge.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>

#include "record.hpp"

namespace labrun {

bool is_shard(const RunHeader& header) {
  return header.json.is_object() && header.json.contains("shard") && header.json["shard"].is_object();
}

namespace {

// shard.count (or shard.index) of a shard's header (docs/records.md: shard = {index, count}).
int shard_field(const Run& run, bool count) {
  const Json& s = run.header.json["shard"];
  const Json v = count ? s.value("count", Json()) : s.value("index", Json());
  if (!v.is_number_integer()) throw ResultError(run.file + ": its header's shard is not {index, count} integers");
  return v.get<int>();
}

}  // namespace

Run merge_shards(std::vector<Run> shards, const MergeOptions& options) {
  if (shards.empty()) throw ResultError("no shards to merge");
  for (const Run& r : shards)
    if (!r.has_header || !is_shard(r.header))
      throw ResultError(r.file + ": not a shard (its header has no `shard`: it was not run with --shard I/N)");
  const Run& first = shards.front();
  const int count = shard_field(first, true);
  std::map<int, Run*> by_index;
  for (Run& r : shards) {
    const int index = shard_field(r, false), n = shard_field(r, true);
    if (n != count)
      throw ResultError(fmt::format("{} is shard {} of {}, but {} is one of {}: shards of different splits", r.file,
                                    index, n, first.file, count));
    if (index < 1 || index > count) throw ResultError(fmt::format("{}: shard index {} outside 1..{}", r.file, index, count));
    if (const auto it = by_index.find(index); it != by_index.end())
      throw ResultError(fmt::format("shard {} of {} is given twice: {} and {}", index, count, it->second->file, r.file));
    by_index[index] = &r;
    if (r.header.config_sha256() != first.header.config_sha256())
      throw ResultError(fmt::format("{}: points of another config (sha256 {}, not {} as in {})", r.file,
                                    r.header.config_sha256().substr(0, 12), first.header.config_sha256().substr(0, 12),
                                    first.file));
    if (r.header.lab().dump() != first.header.lab().dump())
      throw ResultError(r.file + ": run with other lab settings than " + first.file + " (--lab differs)");
    if (!options.allow_mixed_builds && r.header.git_sha() != first.header.git_sha())
      throw ResultError(fmt::format("{} was built from {}, {} from {}: shards of different labrun builds "
                                    "(--allow-mixed-builds merges them, and report and diff then warn)",
                                    r.file, r.header.git_sha().substr(0, 12), first.file,
                                    first.header.git_sha().substr(0, 12)));
    const double announced = r.header.point_count();
    if (std::isfinite(announced) && static_cast<double>(r.points.size()) != announced)
      throw ResultError(fmt::format("{}: shard {} of {} holds {} of its {:.0f} points (was it killed? `labrun sweep "
                                    "... --shard {}/{} --resume` finishes it)",
                                    r.file, index, count, r.points.size(), announced, index, count));
  }
  for (int i = 1; i <= count; ++i)
    if (!by_index.count(i)) throw ResultError(fmt::format("shard {} of {} is missing (given: {} shards)", i, count, shards.size()));

  Run out;
  out.file = first.file;
  out.has_header = true;
  Json header = first.header.json;
  header.erase("shard");
  Json list = Json::array();
  std::map<std::string, std::string> seen;  // point id -> file
  std::set<std::string> builds;
  std::size_t total = 0;
  for (const auto& [index, run] : by_index) {
    const RunHeader& h = run->header;
    builds.insert(h.git_sha());
    const Json* host = json_find(h.json, {"environment", "host", "hostname"});
    list.push_back(Json{{"index", index},
                        {"file", run->file},
                        {"created_utc", h.created_utc()},
                        {"hostname", host ? *host : Json(nullptr)},
                        {"device", h.device_name()},
                        {"uuid", h.device_uuid()},
                        {"backend", h.backend()},
                        {"git_sha", h.git_sha()},
                        {"git_dirty", h.git_dirty() ? Json(*h.git_dirty()) : Json(nullptr)},
                        {"calibration", h.calibration_json()},
                        {"points", run->points.size()}});
    for (const PointRecord& p : run->points) {
      if (const auto [it, fresh] = seen.emplace(p.id, run->file); !fresh)
        throw ResultError(fmt::format("point {} ({}) is in {} and in {}: shards overlap", p.id, p.key, it->second,
                                      run->file));
    }
    for (const Json& seg : run->segments) out.segments.push_back(seg);
    total += run->points.size();
  }
  for (const auto& [index, run] : by_index) {
    for (PointRecord& p : run->points) out.points.push_back(std::move(p));  // ours (taken by value): moved
  }
  header["point_count"] = total;
  header["shards"] = list;
  if (builds.size() > 1) {
    std::string all;
    for (const auto& b : builds) all += (all.empty() ? "" : ", ") + b.substr(0, 12);
    if (!header.contains("warnings") || !header["warnings"].is_array()) header["warnings"] = Json::array();
    header["warnings"].push_back(Json{{"kind", "mixed_builds"},
                                      {"message", "shards of different labrun builds were merged (" + all +
                                                      "): a difference between points may be the build's"}});
  }
  out.header = header_from_json(header);
  return out;
}

void merge_shard_runs(std::vector<Run>& runs, const MergeOptions& options) {
  std::map<std::string, std::vector<std::size_t>> groups;  // config sha -> shard runs
  std::vector<std::string> order;
  for (std::size_t i = 0; i < runs.size(); ++i)
    if (runs[i].has_header && is_shard(runs[i].header)) {
      const std::string key = runs[i].header.config_sha256();
      if (!groups.count(key)) order.push_back(key);
      groups[key].push_back(i);
    }
  if (groups.empty()) return;
  std::vector<Run> out;
  std::set<std::size_t> consumed;
  std::map<std::size_t, Run> merged_at;
  for (const auto& key : order) {
    std::vector<Run> parts;
    for (const std::size_t i : groups[key]) parts.push_back(std::move(runs[i]));  // consumed: not read again
    merged_at[groups[key].front()] = merge_shards(std::move(parts), options);
    consumed.insert(groups[key].begin(), groups[key].end());
  }
  for (std::size_t i = 0; i < runs.size(); ++i) {
    if (const auto it = merged_at.find(i); it != merged_at.end()) out.push_back(std::move(it->second));
    else if (!consumed.count(i)) out.push_back(std::move(runs[i]));
  }
  runs = std::move(out);
}

}  // namespace labrun
