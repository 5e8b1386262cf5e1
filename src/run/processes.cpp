#include "processes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "integrity.hpp"
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

PointRecord pooled_point(const std::vector<const PointRecord*>& recs, const RunHeader& header, const LabSettings& lab) {
  const double spread_warning = 3 * lab.target_rel_ci;
  PointRecord merged = *recs.front();
  std::vector<double> wall, device, submit, probe, medians, probe_medians;
  double syncs = 0;
  std::string stop = recs.front()->timing ? recs.front()->timing->stop_reason : "";
  for (const PointRecord* r : recs) {
    if (!r->timing) throw std::invalid_argument("point " + merged.id + " says ok but has no timing");
    const Timing& t = *r->timing;
    wall.insert(wall.end(), t.wall_samples_s.begin(), t.wall_samples_s.end());
    device.insert(device.end(), t.device_samples_s.begin(), t.device_samples_s.end());
    submit.insert(submit.end(), t.submit_samples_s.begin(), t.submit_samples_s.end());
    probe.insert(probe.end(), t.host_probe_samples_s.begin(), t.host_probe_samples_s.end());
    medians.push_back(t.time_s);
    if (t.host_probe && std::isfinite(t.host_probe->median_time_s))
      probe_medians.push_back(t.host_probe->median_time_s);
    syncs += t.host_syncs_per_iteration;
    if (t.stop_reason != stop) stop = "mixed";
  }
  if (wall.empty()) throw std::invalid_argument("point " + merged.id + " has no raw wall samples");
  Timing& t = *merged.timing;
  t.stop_reason = stop;
  t.host_syncs_per_iteration = syncs / static_cast<double>(recs.size());
  set_timing_samples(t, wall, device, submit, probe);
  const auto [lo, hi] = std::minmax_element(medians.begin(), medians.end());
  const double spread = *lo > 0 ? *hi / *lo - 1 : 0;
  ProcessStats ps;
  ps.count = static_cast<std::int64_t>(recs.size());
  ps.time_s = medians;
  ps.spread = spread;
  if (probe_medians.size() == recs.size())  // every process probed the host: its speed per process, in order
    ps.host_probe_time_s = probe_medians;
  t.processes = ps;
  // Phase times summed over the processes: what the point cost the sweep (the summary line adds them up).
  if (merged.phases.is_object())
    for (std::size_t k = 1; k < recs.size(); ++k) {
      if (!recs[k]->phases.is_object()) continue;
      for (const auto& [name, phase] : recs[k]->phases.items()) {
        if (!phase.is_object() || !phase.contains("time_s") || !phase["time_s"].is_number()) continue;
        Json& into = merged.phases[name];
        if (into.is_object() && into.contains("time_s") && into["time_s"].is_number())
          into["time_s"] = into["time_s"].get<double>() + phase["time_s"].get<double>();
      }
    }
  if (merged.device_state.is_object() && recs.back()->device_state.is_object() &&
      recs.back()->device_state.contains("after"))
    merged.device_state["after"] = recs.back()->device_state["after"];

  // The warnings of the pooled record, from its pooled statistics and first/last device state.
  const double l2 = header.l2_bytes();
  merged.warnings = point_warnings(merged, lab, std::isfinite(l2) ? std::optional<double>(l2) : std::nullopt,
                                   header.calibration("sync", "round_trip_time_s"));
  // The audit's warnings are findings about the code, not statistics: the first process's, which audited the point.
  for (const Warning& w : recs.front()->warnings)
    if (is_audit_warning(w)) merged.warnings.push_back(w);
  if (spread > spread_warning)
    merged.warnings.push_back({"process_spread", fmt::format("the {} processes' medians differ by {:.1f}% ({:.4g} to "
                                                             "{:.4g} s): variation between processes, inside the "
                                                             "pooled samples",
                                                             recs.size(), 100 * spread, *lo, *hi)});
  merged.interpretation = interpret(merged, header);  // once per point: the processes left it to the pool
  return merged;
}

}  // namespace

Run pool_processes(const std::vector<Run>& runs, const Json& argv, const LabSettings& lab) {
  if (runs.empty()) throw std::invalid_argument("no process results to pool");
  for (std::size_t k = 0; k < runs.size(); ++k)
    if (!runs[k].has_header)
      throw std::invalid_argument(fmt::format("process {} of {} wrote no header", k + 1, runs.size()));
  const std::size_t count = runs.size();

  Json header = runs.front().header.json;
  std::vector<const Json*> calibrations;
  Json per_process = Json::array();
  for (std::size_t k = 0; k < count; ++k) {
    const RunHeader& h = runs[k].header;
    const Json& calibration = h.calibration_json();
    if (!calibration.is_null()) calibrations.push_back(&calibration);
    const Json& device = h.device();
    per_process.push_back(
        Json{{"index", k + 1},
             {"created_utc", h.created_utc()},
             {"host_thread_cpu",
              device.is_object() && device.contains("host_thread_cpu") ? device["host_thread_cpu"] : Json(nullptr)},
             {"calibration", calibration},
             // the process's host as it started: CPU model, load averages, clock (env.cpp)
             {"host", Json{{"cpu_model", h.cpu_model().empty() ? Json(nullptr) : Json(h.cpu_model())},
                           {"load", json_find(h.json, {"environment", "host", "load"})
                                        ? *json_find(h.json, {"environment", "host", "load"})
                                        : Json(nullptr)}}}});
    // The workers that continued this process's file (a resume, a replaced worker), each with its calibration.
    if (!runs[k].segments.empty()) {
      Json segments = Json::array();
      for (const Json& seg : runs[k].segments)
        segments.push_back(Json{{"created_utc", seg.value("created_utc", Json(nullptr))},
                                {"device", json_find(seg, {"environment", "device", "name"})
                                               ? *json_find(seg, {"environment", "device", "name"})
                                               : Json(nullptr)},
                                {"calibration", seg.value("calibration", Json(nullptr))}});
      per_process.back()["segments"] = segments;
    }
  }
  if (!calibrations.empty()) header["calibration"] = median_merge(calibrations);
  header["argv"] = argv;
  header.erase("process");  // the first child's marker; the pooled run is all of them
  header["processes"] = {{"count", count}, {"runs", per_process}};

  Run out;
  out.file = runs.front().file;
  out.has_header = true;
  out.header = header_from_json(header);
  std::vector<std::map<std::string, const PointRecord*>> by_id(count);
  for (std::size_t k = 0; k < count; ++k)
    for (const auto& r : runs[k].points) by_id[k][r.id] = &r;

  for (const auto& r : runs.front().points) {
    std::vector<const PointRecord*> recs;
    for (std::size_t k = 0; k < count; ++k) {
      const auto it = by_id[k].find(r.id);
      if (it == by_id[k].end())
        throw std::invalid_argument(fmt::format("point {} is missing from process {} of {}", r.id, k + 1, count));
      recs.push_back(it->second);
    }
    const auto not_ok = std::find_if(recs.begin(), recs.end(),
                                     [](const PointRecord* p) { return p->status != Status::ok; });
    if (not_ok == recs.end()) {
      out.points.push_back(pooled_point(recs, out.header, lab));
    } else {
      // The first process that did not say ok; its reason names it where the processes disagree.
      PointRecord rec = **not_ok;
      const bool all_alike = std::all_of(recs.begin(), recs.end(), [&](const PointRecord* p) {
        return p->status == rec.status && p->reason == rec.reason;
      });
      if (!all_alike)
        rec.reason = fmt::format("process {} of {}: {}", not_ok - recs.begin() + 1, count, rec.reason.value_or(""));
      out.points.push_back(std::move(rec));
    }
  }
  return out;
}

}  // namespace labrun
