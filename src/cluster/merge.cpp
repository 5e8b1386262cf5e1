#include "merge.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <unordered_map>

#include <fmt/format.h>

#include "record.hpp"

namespace labrun {

bool is_shard(const RunHeader& header) {
  return header.json.is_object() && header.json.contains("shard") && header.json["shard"].is_object();
}

namespace {

// shard.count (or shard.index) of a shard's header (docs/records.md: shard = {index, count}).
int shard_field(const ShardView& v, bool count) {
  const Json& s = v.header->json["shard"];
  const Json value = count ? s.value("count", Json()) : s.value("index", Json());
  if (!value.is_number_integer()) throw ResultError(v.file + ": its header's shard is not {index, count} integers");
  return value.get<int>();
}

// The build a shard's points came from, for messages: "myrepo 0123456789ab+dirty, labrun 0.1.0".
std::string build_label(const RunHeader& h) {
  const std::string v = h.labrun_version();
  return fmt::format("{} {}{}{}", h.code_project(), h.code_sha().substr(0, 12),
                     h.code_dirty().value_or(false) ? "+dirty" : "", v.empty() ? "" : ", labrun " + v);
}

// A shard's --only filter for a message: `--only "n=1000"`, or "no --only filter".
std::string only_text(const RunHeader& h) {
  const std::string f = h.only_filter();
  return f.empty() ? "no --only filter" : "--only \"" + f + "\"";
}

// The value at `path` of a header's JSON, or null.
Json header_value(const Json& header, std::initializer_list<const char*> path) {
  const Json* v = json_find(header, path);
  return v ? *v : Json(nullptr);
}

// Throws unless shard `v` belongs to the same sweep as `first` (config, lab settings, --only filter, build unless
// `options` allows mixed builds) and holds every point its header announces. `index` and `count` are its
// shard.index and shard.count.
void check_same_sweep(const ShardView& v, const ShardView& first, int index, int count, const MergeOptions& options) {
  const RunHeader& h = *v.header;
  if (h.config_sha256() != first.header->config_sha256())
    throw ResultError(fmt::format("{}: points of another config (sha256 {}, not {} as in {})", v.file,
                                  h.config_sha256().substr(0, 12), first.header->config_sha256().substr(0, 12),
                                  first.file));
  if (h.lab().dump() != first.header->lab().dump())
    throw ResultError(v.file + ": run with other lab settings than " + first.file + " (--lab differs)");
  // --only picks the points before the split: shards of two filters are parts of two different sweeps.
  if (h.only_filter() != first.header->only_filter())
    throw ResultError(fmt::format("{} ran {}, {} ran {}: shards of one sweep run the same --only filter", v.file,
                                  only_text(h), first.file, only_text(*first.header)));
  // The code under test (project, commit, dirty flag) and labrun's version: for the labrun binary the code is
  // labrun itself (and a header of schema <= 2 has only labrun's commit, RunHeader::code_sha).
  if (!options.allow_mixed_builds && h.code_key() != first.header->code_key())
    throw ResultError(
        fmt::format("{} was built from {}, {} from {}: shards of different builds "
                    "(`labrun merge --allow-mixed-builds` merges them into one file, which report and diff read with a "
                    "warning)",
                    v.file, build_label(h), first.file, build_label(*first.header)));
  const double announced = h.point_count();
  if (std::isfinite(announced) && static_cast<double>(v.points.size()) != announced)
    throw ResultError(
        fmt::format("{}: shard {} of {} holds {} of its {:.0f} points (was it killed? `labrun sweep "
                    "... --shard {}/{} --resume` finishes it)",
                    v.file, index, count, v.points.size(), announced, index, count));
}

// The shards by shard.index (1..count, each once), as positions in `shards`; throws where one is not a shard, is
// of another split, is given twice or missing, or does not belong to the first one's sweep (check_same_sweep).
std::map<int, std::size_t> shards_by_index(const std::vector<ShardView>& shards, const MergeOptions& options) {
  for (const ShardView& v : shards)
    if (!v.header || !is_shard(*v.header))
      throw ResultError(v.file + ": not a shard (its header has no `shard`: it was not run with --shard I/N)");
  const ShardView& first = shards.front();
  const int count = shard_field(first, true);
  std::map<int, std::size_t> by_index;
  for (std::size_t k = 0; k < shards.size(); ++k) {
    const ShardView& v = shards[k];
    const int index = shard_field(v, false), n = shard_field(v, true);
    if (n != count)
      throw ResultError(fmt::format("{} is shard {} of {}, but {} is one of {}: shards of different splits", v.file,
                                    index, n, first.file, count));
    if (index < 1 || index > count)
      throw ResultError(fmt::format("{}: shard index {} outside 1..{}", v.file, index, count));
    if (const auto it = by_index.find(index); it != by_index.end())
      throw ResultError(
          fmt::format("shard {} of {} is given twice: {} and {}", index, count, shards[it->second].file, v.file));
    by_index[index] = k;
    check_same_sweep(v, first, index, count, options);
  }
  for (int i = 1; i <= count; ++i)
    if (!by_index.count(i))
      throw ResultError(fmt::format("shard {} of {} is missing (given: {} shards)", i, count, shards.size()));
  return by_index;
}

// The merged header's entry for shard `v` (number `index`): where, when, on what and from which build it ran.
Json shard_entry(const ShardView& v, int index) {
  const RunHeader& h = *v.header;
  return Json{{"index", index},
              {"file", v.file},
              {"created_utc", h.created_utc()},
              {"hostname", header_value(h.json, {"environment", "host", "hostname"})},
              {"device", h.device_name()},
              {"uuid", h.device_uuid()},
              {"backend", h.backend()},
              {"git_sha", h.git_sha()},
              {"git_dirty", h.git_dirty() ? Json(*h.git_dirty()) : Json(nullptr)},
              {"code", Json{{"project", h.code_project()},
                            {"git_sha", h.code_sha()},
                            {"git_dirty", h.code_dirty() ? Json(*h.code_dirty()) : Json(nullptr)}}},
              {"calibration", h.calibration_json()},
              {"host", header_value(h.json, {"environment", "host"})},
              {"sync_wait", header_value(h.json, {"environment", "device", "sync_wait"})},
              {"processes", header_value(h.json, {"processes"})},
              {"points", v.points.size()}};
}

}  // namespace

MergePlan plan_merge(const std::vector<ShardView>& shards, const MergeOptions& options) {
  if (shards.empty()) throw ResultError("no shards to merge");
  const std::map<int, std::size_t> by_index = shards_by_index(shards, options);
  MergePlan plan;
  Json header = shards.front().header->json;
  header.erase("shard");
  Json list = Json::array();
  std::unordered_map<std::string, std::size_t> seen;  // point id -> shard
  std::set<std::string> builds;
  std::size_t total = 0;
  for (const auto& [index, k] : by_index) {
    const ShardView& v = shards[k];
    plan.order.push_back(k);
    builds.insert(build_label(*v.header));
    list.push_back(shard_entry(v, index));
    for (const auto& [id, key] : v.points)
      if (const auto [it, fresh] = seen.emplace(id, k); !fresh)
        throw ResultError(
            fmt::format("point {} ({}) is in {} and in {}: shards overlap", id, key, shards[it->second].file, v.file));
    total += v.points.size();
  }
  header["point_count"] = total;
  header["shards"] = list;
  if (builds.size() > 1) {
    std::string all;
    for (const auto& b : builds) all += (all.empty() ? "" : ", ") + b;
    if (!header.contains("warnings") || !header["warnings"].is_array()) header["warnings"] = Json::array();
    header["warnings"].push_back(Json{{"kind", "mixed_builds"},
                                      {"message", "shards of different labrun builds were merged (" + all +
                                                      "): a difference between points may be the build's"}});
  }
  plan.header = std::move(header);
  return plan;
}

std::vector<ShardHeader> shard_headers(const RunHeader& merged) {
  const Json* shards = json_find(merged.json, {"shards"});
  if (shards == nullptr || !shards->is_array() || shards->size() < 2) return {};
  std::vector<ShardHeader> out;
  for (const Json& s : *shards) {
    if (!s.is_object() || !s.contains("processes") || !s.contains("host") || !s["points"].is_number_unsigned())
      return {};  // written before shards kept their host and processes: one header for all, as before
    Json h = merged.json;
    h.erase("shards");
    h["calibration"] = s.value("calibration", Json(nullptr));
    if (s["processes"].is_null()) h.erase("processes");
    else h["processes"] = s["processes"];
    if (h["environment"].is_object()) {
      Json& env = h["environment"];
      env["host"] = s["host"];
      if (env["device"].is_object()) {
        for (const char* key : {"uuid", "sync_wait"})
          if (s.contains(key)) env["device"][key] = s[key];
        if (s.contains("device")) env["device"]["name"] = s["device"];
      }
    }
    out.push_back({header_from_json(h), s["points"].get<std::size_t>()});
  }
  return out;
}

Run merge_shards(std::vector<Run> shards, const MergeOptions& options) {
  std::vector<ShardView> views;
  for (const Run& r : shards) {
    ShardView v;
    v.file = r.file;
    v.header = r.has_header ? &r.header : nullptr;
    for (const PointRecord& p : r.points) v.points.emplace_back(p.id, p.key);
    views.push_back(std::move(v));
  }
  MergePlan plan = plan_merge(views, options);
  Run out;
  out.file = shards.front().file;
  out.has_header = true;
  for (const std::size_t k : plan.order) {
    for (PointRecord& p : shards[k].points) out.points.push_back(std::move(p));  // ours (taken by value): moved
    for (Json& seg : shards[k].segments) out.segments.push_back(std::move(seg));
  }
  out.header = header_from_json(plan.header);
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
  // A file merged from shards, given together with shards of the same sweep: the same points twice.
  for (const Run& run : runs)
    if (run.has_header && !is_shard(run.header) && json_find(run.header.json, {"shards"}))
      if (const auto it = groups.find(run.header.config_sha256()); it != groups.end())
        throw ResultError(
            fmt::format("{} is a shard of the sweep merged in {}: give the merged file or the shards, "
                        "not both",
                        runs[it->second.front()].file, run.file));
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
