#include "processes.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "interpret.hpp"
#include "lab.hpp"
#include "record.hpp"
#include "stats.hpp"

namespace labrun {

namespace {

// Element-wise median of objects of one shape: numbers become the median over the processes that have them;
// objects recurse; anything else is the first one's.
Json median_merge(const std::vector<const Json*>& parts) {
  const Json& first = *parts.front();
  if (first.is_object()) {
    Json out = Json::object();
    for (const auto& [key, value] : first.items()) {
      std::vector<const Json*> sub;
      for (const Json* p : parts)
        if (p->is_object() && p->contains(key)) sub.push_back(&(*p)[key]);
      out[key] = median_merge(sub);
    }
    return out;
  }
  if (first.is_number() && !first.is_boolean()) {
    // Equal values stay as written (an integer stays an integer, case C14); others become their median.
    if (std::all_of(parts.begin(), parts.end(), [&](const Json* p) { return *p == first; })) return first;
    std::vector<double> v;
    for (const Json* p : parts)
      if (p->is_number()) v.push_back(p->get<double>());
    return Json(summarize(v).median);
  }
  return first;
}

std::vector<double> reals(const Json& record, const char* key) {
  std::vector<double> out;
  const Json* a = json_find(record, {"timing", key});
  if (a && a->is_array())
    for (const auto& x : *a) out.push_back(real_from_json(x));
  return out;
}

Json pooled_point(const std::vector<const Json*>& recs, const Json& header, const LabSettings& lab) {
  const double spread_warning = 3 * lab.target_rel_ci;
  Json merged = *recs.front();
  std::vector<double> wall, device, submit, probe, medians, probe_medians;
  double syncs = 0;
  std::string stop = (*recs.front())["timing"].value("stop_reason", "");
  for (const Json* r : recs) {
    for (double x : reals(*r, "wall_samples_s")) wall.push_back(x);
    for (double x : reals(*r, "device_samples_s")) device.push_back(x);
    for (double x : reals(*r, "submit_samples_s")) submit.push_back(x);
    for (double x : reals(*r, "host_probe_samples_s")) probe.push_back(x);
    medians.push_back(real_from_json((*r)["timing"]["time_s"]));
    if (const Json* m = json_find(*r, {"timing", "host_probe", "median_time_s"}); m && m->is_number())
      probe_medians.push_back(m->get<double>());
    syncs += real_from_json((*r)["timing"]["host_syncs_per_iteration"]);
    if ((*r)["timing"].value("stop_reason", "") != stop) stop = "mixed";
  }
  if (wall.empty()) throw std::invalid_argument("point " + merged.value("id", "?") + " has no raw wall samples");
  Json& t = merged["timing"];
  t["stop_reason"] = stop;
  t["host_syncs_per_iteration"] = json_real(syncs / static_cast<double>(recs.size()));
  set_timing_samples(t, wall, device, submit, probe);
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  const double spread = *lo > 0 ? *hi / *lo - 1 : 0;
  t["processes"] = {{"count", recs.size()}, {"time_s", json_reals(medians)}, {"spread", json_real(spread)}};
  if (probe_medians.size() == recs.size())  // every process probed the host: its speed per process, in order
    t["processes"]["host_probe_time_s"] = json_reals(probe_medians);
  merged["device_state"]["after"] = (*recs.back())["device_state"]["after"];

  // The warnings of the pooled record, from its pooled statistics and first/last device state.
  const double l2 = json_number(header, {"environment", "device", "l2_bytes"});
  Json warnings = point_warnings(merged, lab, std::isfinite(l2) ? std::optional<double>(l2) : std::nullopt);
  if (spread > spread_warning)
    warnings.push_back(Json{{"kind", "process_spread"},
                            {"message", fmt::format("the {} processes' medians differ by {:.1f}% ({:.4g} to {:.4g} s): "
                                                    "variation between processes, inside the pooled samples",
                                                    recs.size(), 100 * spread, *lo, *hi)}});
  merged["warnings"] = warnings;
  merged["interpretation"] = interpret_point(merged, header);
  return merged;
}

}  // namespace

std::vector<Json> pool_processes(const std::vector<std::vector<Json>>& runs, const Json& argv, const LabSettings& lab) {
  if (runs.empty()) throw std::invalid_argument("no process results to pool");
  for (std::size_t k = 0; k < runs.size(); ++k)
    if (runs[k].empty() || runs[k].front().value("type", "") != "header")
      throw std::invalid_argument(fmt::format("process {} of {} wrote no header", k + 1, runs.size()));
  const std::size_t count = runs.size();

  Json header = runs.front().front();
  std::vector<const Json*> calibrations;
  Json per_process = Json::array();
  for (std::size_t k = 0; k < count; ++k) {
    const Json& h = runs[k].front();
    if (h.contains("calibration")) calibrations.push_back(&h["calibration"]);
    const Json* cpu = json_find(h, {"environment", "device", "host_thread_cpu"});
    per_process.push_back(Json{{"index", k + 1},
                               {"created_utc", h.value("created_utc", "")},
                               {"host_thread_cpu", cpu ? *cpu : Json(nullptr)},
                               {"calibration", h.contains("calibration") ? h["calibration"] : Json(nullptr)}});
  }
  if (!calibrations.empty()) header["calibration"] = median_merge(calibrations);
  header["argv"] = argv;
  header.erase("process");  // the first child's marker; the pooled run is all of them
  header["processes"] = {{"count", count}, {"runs", per_process}};

  std::vector<std::map<std::string, const Json*>> by_id(count);
  for (std::size_t k = 0; k < count; ++k)
    for (const auto& r : runs[k])
      if (r.value("type", "") == "point") by_id[k][r.value("id", "")] = &r;

  std::vector<Json> out{header};
  for (const auto& r : runs.front()) {
    if (r.value("type", "") != "point") continue;
    const std::string id = r.value("id", "");
    std::vector<const Json*> recs;
    for (std::size_t k = 0; k < count; ++k) {
      const auto it = by_id[k].find(id);
      if (it == by_id[k].end())
        throw std::invalid_argument(fmt::format("point {} is missing from process {} of {}", id, k + 1, count));
      recs.push_back(it->second);
    }
    const auto not_ok = std::find_if(recs.begin(), recs.end(), [](const Json* p) { return (*p)["status"] != "ok"; });
    if (not_ok == recs.end()) {
      out.push_back(pooled_point(recs, header, lab));
    } else {
      // The first process that did not say ok; its reason names it where the processes disagree.
      Json rec = **not_ok;
      const bool all_alike = std::all_of(recs.begin(), recs.end(), [&](const Json* p) {
        return (*p)["status"] == rec["status"] && (*p)["reason"] == rec["reason"];
      });
      if (!all_alike) {
        const std::string reason = rec["reason"].is_string() ? rec["reason"].get<std::string>() : "";
        rec["reason"] = fmt::format("process {} of {}: {}", not_ok - recs.begin() + 1, count, reason);
      }
      out.push_back(std::move(rec));
    }
  }
  return out;
}

}  // namespace labrun
