// `labrun merge -o OUT SHARD...`: the shards of one sweep (files or folders) into one result file, through
// merge_shards() (src/merge.hpp), the rules report and diff read shards by too.
#include "merge_cli.hpp"

#include <cstdio>
#include <map>

#include "exit_codes.hpp"
#include "merge.hpp"
#include "point_record.hpp"
#include "record.hpp"
#include "sweep.hpp"

namespace labrun {

namespace {

// The merged points in the serial sweep's order, when the header's config expands with this registry (the
// merged file then reads as a serial run's); else as merged.
void sweep_order(Run& run, const Registry& registry) {
  try {
    const Json& config = run.header.json["config"];
    SweepConfig c = parse_config(config["text"].get<std::string>(), config["path"].get<std::string>(), registry);
    const Experiment* e = registry.find(c.experiment);
    if (!e) return;
    std::map<std::string, std::size_t> position;
    std::size_t i = 0;
    for (const Point& p : expand(c, *e)) position.emplace(p.id(), i++);
    std::stable_sort(run.points.begin(), run.points.end(), [&](const PointRecord& a, const PointRecord& b) {
      const auto pa = position.find(a.id), pb = position.find(b.id);
      const std::size_t x = pa == position.end() ? SIZE_MAX : pa->second, y = pb == position.end() ? SIZE_MAX : pb->second;
      return x < y;
    });
  } catch (const std::exception&) {
    // An experiment or config this build cannot read: the shard order stays.
  }
}

}  // namespace

int cmd_merge(const std::vector<std::string>& shards, const std::string& output, bool force, bool allow_mixed_builds,
              const Registry& registry) {
  Run merged;
  try {
    ResultSet set = load_results(shards);
    for (const auto& w : set.warnings) std::fprintf(stderr, "labrun merge: warning: %s\n", w.c_str());
    MergeOptions options;
    options.allow_mixed_builds = allow_mixed_builds;
    merged = merge_shards(std::move(set.runs), options);
  } catch (const ResultError& e) {
    std::fprintf(stderr, "labrun merge: %s; nothing written\n", e.what());
    return kExitUsage;
  }
  sweep_order(merged, registry);
  write_run_whole(output, merged, force);
  const Json& list = merged.header.json["shards"];
  std::printf("labrun merge: %zu points from %zu shards -> %s\n", merged.points.size(), list.size(), output.c_str());
  for (const Json& s : list)
    std::printf("  shard %s: %s points on %s %s (%s)\n", s.value("index", Json()).dump().c_str(), s["points"].dump().c_str(),
                s["hostname"].is_string() ? s["hostname"].get<std::string>().c_str() : "?",
                s["backend"].get<std::string>().c_str(), s["device"].get<std::string>().c_str());
  return kExitOk;
}

}  // namespace labrun
