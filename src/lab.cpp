#include "lab.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "env.hpp"
#include "stats.hpp"
#include "status.hpp"

namespace labrun {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

Json axes_json(const Point& p) {
  Json axes = Json::object();
  for (const auto& [name, value] : p.axes) {
    if (const auto* i = std::get_if<std::int64_t>(&value)) axes[name] = *i;
    else if (const auto* d = std::get_if<double>(&value)) axes[name] = json_real(*d);
    else axes[name] = std::get<std::string>(value);
  }
  return axes;
}

Json check_json(const Check& c) {
  return Json{{"value", json_real(c.value)},
              {"reference", json_real(c.reference)},
              {"abs_error", json_real(c.abs_error)},
              {"tolerance", json_real(c.tolerance)},
              {"passed", c.passed},
              {"detail", c.detail}};
}

// Derived quantities of a timed point: achieved bandwidth and flop rate from the cost model.
Json derived_json(const Json& cost, double time_s) {
  Json d = Json::object();
  if (!(time_s > 0) || cost.empty()) return d;
  auto per_s = [&](const char* key) { return json_real(real_from_json(cost.at(key)) / time_s); };
  if (cost.contains("bytes")) d["bandwidth_Bps"] = per_s("bytes");
  if (cost.contains("compulsory_bytes")) d["compulsory_bandwidth_Bps"] = per_s("compulsory_bytes");
  if (cost.contains("flop")) d["flop_per_s"] = per_s("flop");
  return d;
}

Json fmt_warning(const std::string& kind, const std::string& message) {
  return Json{{"kind", kind}, {"message", message}};
}

std::string percent(double fraction) {
  if (!std::isfinite(fraction)) return "inf%";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f%%", fraction * 100);
  return buf;
}

}  // namespace

std::int64_t choose_batch(double iteration_time_s, double min_sample_time_s) {
  if (!(iteration_time_s > 0)) return 1;
  // The relative nudge keeps 1e-3 / 1e-6 (= 1000.0000000000001 in binary) from rounding up to 1001.
  const double b = std::ceil(min_sample_time_s / iteration_time_s * (1 - 1e-12));
  return static_cast<std::int64_t>(std::clamp(b, 1.0, 100000.0));
}

double median_ci_rel_halfwidth(std::vector<double> v) {
  return v.empty() ? std::numeric_limits<double>::infinity() : summarize(std::move(v)).ci_rel_halfwidth;
}

namespace {

// The value of a word axis if the point has it, else `fallback` (lab-wide setting).
std::string axis_word(const Point& p, const std::string& axis, const std::string& fallback) {
  for (const auto& a : p.axes)
    if (a.first == axis) return std::get<std::string>(a.second);
  return fallback;
}

// Pops the profiler range on scope exit, including when a phase throws.
struct Range {
  Backend& b;
  Range(Backend& backend, const std::string& name) : b(backend) { b.range_push(name); }
  ~Range() { b.range_pop(); }
};

double number_or_nan(const Json& j, const char* key) {
  return (j.is_object() && j.contains(key) && j[key].is_number()) ? j[key].get<double>()
                                                                   : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace

Json point_warnings(const Json& rec, const LabSettings& lab, std::optional<double> cache_bytes) {
  Json w = Json::array();
  const Json& timing = rec.contains("timing") ? rec["timing"] : Json();
  if (timing.is_object()) {
    const double ci = real_from_json(timing["median_ci_rel_halfwidth"]);
    if (timing["stop_reason"] != "ci_target")
      w.push_back(fmt_warning("noise", "sampling stopped (" + timing["stop_reason"].get<std::string>() +
                                           ") with the median's 95% CI at +-" + percent(ci) + ", above the target +-" +
                                           percent(lab.target_rel_ci)));
    if (timing["wall"]["count"].get<std::int64_t>() < lab.min_samples)
      w.push_back(fmt_warning("few_samples", "fewer samples than lab.min_samples"));
    if (timing["l2"] == "hot" && cache_bytes && rec.contains("cost") && rec["cost"].contains("compulsory_bytes")) {
      const double bytes = real_from_json(rec["cost"]["compulsory_bytes"]);
      if (bytes > 0 && bytes < *cache_bytes)
        w.push_back(fmt_warning("l2_resident", "hot L2 and a working set of " + std::to_string(bytes / 1e6).substr(0, 6) +
                                                   " MB under the " + std::to_string(*cache_bytes / 1e6).substr(0, 6) +
                                                   " MB L2: repeated iterations read from cache, not DRAM"));
    }
  }
  const Json& st = rec["device_state"];
  for (const char* when : {"before", "after"})
    if (st[when].is_object() && st[when]["throttled"] == true)
      w.push_back(fmt_warning("throttle", std::string("clock-event reasons ") + st[when]["clocks_event_reasons"].dump() +
                                              " " + when + " timing"));
  if (st["before"].is_object() && st["after"].is_object()) {
    const double b = number_or_nan(st["before"], "sm_clock_hz"), a = number_or_nan(st["after"], "sm_clock_hz");
    if (std::isfinite(a) && std::isfinite(b) && std::fabs(a - b) > 0.02 * std::max(a, b))
      w.push_back(fmt_warning("clocks_changed", "SM clock " + std::to_string(static_cast<long>(b / 1e6)) + " MHz before, " +
                                                    std::to_string(static_cast<long>(a / 1e6)) + " MHz after timing"));
  }
  return w;
}

Json run_point(const Point& point, const Experiment& experiment, Backend& backend, const LabSettings& lab) {
  Json rec;
  rec["type"] = "point";
  rec["id"] = point.id();
  rec["key"] = point.key();
  rec["experiment"] = point.experiment;
  rec["variant"] = point.variant;
  rec["axes"] = axes_json(point);
  rec["backend"] = backend.name();
  rec["status"] = "error";
  rec["reason"] = nullptr;
  rec["warnings"] = Json::array();
  Json phases = Json::object();
  std::string phase = "environment";
  ExecOptions opts;
  opts.mode = axis_word(point, "mode", "eager");
  opts.synchronized = lab.timing != "unsynchronized";
  opts.cold_l2 = axis_word(point, "l2", lab.l2) == "cold";
  opts.delay_s = lab.delay_s;
  Range point_range(backend, point.variant + " " + point.label());
  auto finish = [&](Status s, const std::string& reason) {
    rec["status"] = to_string(s);
    rec["reason"] = reason.empty() ? Json(nullptr) : Json(reason);
    rec["phases"] = phases;
    return rec;
  };
  try {
    // environment: the device state as found, before any work of this point.
    auto t0 = Clock::now();
    rec["device_state"] = {{"before", backend.device_state()}, {"after", nullptr}};
    phases["environment"] = {{"time_s", seconds_since(t0)}};

    phase = "setup";
    t0 = Clock::now();
    std::unique_ptr<Workload> workload;
    {
      Range r(backend, "setup");
      const VariantDecl* variant = experiment.find_variant(point.variant);
      if (!variant) throw PointOutcome(Status::error, "unknown variant '" + point.variant + "'");
      if (variant->unsupported)
        if (auto why = variant->unsupported(point)) throw PointOutcome(Status::not_supported, *why);
      if (auto why = backend.mode_unsupported(opts.mode)) throw PointOutcome(Status::not_supported, *why);
      auto impl = variant->implementations.find(backend.kind());
      if (impl == variant->implementations.end())
        throw PointOutcome(Status::not_supported, std::string("variant '") + point.variant + "' has no " +
                                                      to_string(backend.kind()) + " implementation");
      workload = impl->second(point, backend, lab);
    }
    rec["cost"] = workload->cost();
    phases["setup"] = {{"time_s", seconds_since(t0)}};

    // warmup: first iteration timed apart (first-run cost: module load, allocation, capture), then until both
    // the iteration and the time minimums are met.
    phase = "warmup";
    t0 = Clock::now();
    std::unique_ptr<Executor> exec;
    double first_s = 0, steady_s = 0;
    std::int64_t warm = 1;
    {
      Range r(backend, "warmup");
      exec = backend.executor(*workload, opts);
      const double mode_setup_s = seconds_since(t0);
      auto t1 = Clock::now();
      exec->iterate();
      exec->wait();
      first_s = seconds_since(t1);
      t1 = Clock::now();
      std::int64_t since = 0;
      while (warm < lab.warmup_iterations || seconds_since(t0) < lab.warmup_time_s) {
        exec->iterate();
        ++warm;
        ++since;
        if (since % 64 == 0) exec->wait();  // bound the queue of unfinished work
      }
      exec->wait();
      steady_s = since > 0 ? seconds_since(t1) / static_cast<double>(since) : first_s;
      phases["warmup"] = {{"iterations", warm},
                          {"time_s", seconds_since(t0)},
                          {"mode_setup_time_s", mode_setup_s},
                          {"first_iteration_time_s", first_s},
                          {"steady_iteration_time_s", steady_s},
                          {"mode_setup", exec->setup_record()}};
    }

    // correctness: poisoned output, one iteration in the point's mode, compared with the reference.
    phase = "correctness";
    t0 = Clock::now();
    Check check;
    {
      Range r(backend, "correctness");
      check = workload->check([&] { exec->iterate(); });
    }
    rec["correctness"] = check_json(check);
    phases["correctness"] = {{"time_s", seconds_since(t0)}};
    if (!check.passed) {
      return finish(Status::incorrect, "result " + to_string(AxisValue(check.value)) + " vs reference " +
                                           to_string(AxisValue(check.reference)) + " (abs error " +
                                           to_string(AxisValue(check.abs_error)) + " > tolerance " +
                                           to_string(AxisValue(check.tolerance)) + "); not timed");
    }

    // timing: batches of back-to-back iterations (one iteration per sample with a cold L2), until the median's
    // 95% CI is within the target, or a sample or time cap is hit; never fewer than min_samples.
    phase = "timing";
    t0 = Clock::now();
    const std::int64_t batch = opts.cold_l2 ? 1 : choose_batch(steady_s, lab.min_sample_time_s);
    std::vector<double> wall, device;
    std::int64_t syncs = 0, iterations = 0;
    std::string stop;
    {
      Range r(backend, "timing");
      while (true) {
        const Sample s = exec->sample(batch);
        const double b = static_cast<double>(s.iterations);
        wall.push_back(s.wall_time_s / b);
        if (s.device_time_s) device.push_back(*s.device_time_s / b);
        syncs += s.host_syncs;
        iterations += s.iterations;
        const auto count = static_cast<std::int64_t>(wall.size());
        if (count < lab.min_samples) continue;
        if (median_ci_rel_halfwidth(device.empty() ? wall : device) <= lab.target_rel_ci) {
          stop = "ci_target";
          break;
        }
        if (count >= lab.max_samples) {
          stop = "max_samples";
          break;
        }
        if (seconds_since(t0) >= lab.max_time_s) {
          stop = "max_time";
          break;
        }
      }
    }
    const Summary primary = summarize(device.empty() ? wall : device);
    Json timing;
    timing["mode"] = opts.mode;
    timing["l2"] = opts.cold_l2 ? "cold" : "hot";
    timing["method"] = !opts.synchronized ? "host_clock_unsynchronized"
                       : device.empty()   ? "host_steady_clock"
                                          : "cuda_events+synchronized_wall";
    timing["batch"] = batch;
    timing["stop_reason"] = stop;
    timing["target_rel_ci"] = lab.target_rel_ci;
    timing["median_ci_rel_halfwidth"] = json_real(primary.ci_rel_halfwidth);
    timing["host_syncs_per_iteration"] = json_real(static_cast<double>(syncs) / static_cast<double>(iterations));
    timing["wall"] = to_json(summarize(wall), "time_s");
    timing["device"] = device.empty() ? Json(nullptr) : to_json(summarize(device), "time_s");
    Json ws = Json::array(), ds = Json::array();
    for (double v : wall) ws.push_back(json_real(v));
    for (double v : device) ds.push_back(json_real(v));
    timing["wall_samples_s"] = ws;
    timing["device_samples_s"] = device.empty() ? Json(nullptr) : ds;
    timing["time_s"] = json_real(primary.median);
    rec["timing"] = timing;
    rec["device_state"]["after"] = backend.device_state();
    if (opts.mode == "eager" && opts.delay_s == 0) {
      Json k = backend.kernel_breakdown(*workload, lab);
      if (!k.is_null()) rec["kernels"] = k;
    }
    phases["timing"] = {{"time_s", seconds_since(t0)}};

    // interpretation: derived quantities from the cost model; bound classification arrives with issue 5.
    phase = "interpretation";
    t0 = Clock::now();
    rec["derived"] = derived_json(rec["cost"], primary.median);
    rec["warnings"] = point_warnings(rec, lab, backend.cache_bytes());
    phases["interpretation"] = {{"time_s", seconds_since(t0)}};
    return finish(Status::ok, "");
  } catch (const PointOutcome& o) {
    rec["failed_phase"] = phase;
    return finish(o.status(), o.what());
  } catch (const std::exception& e) {
    rec["failed_phase"] = phase;
    return finish(Status::error, std::string(phase) + ": " + e.what());
  }
}

Json make_header(const SweepConfig& config, const std::vector<std::string>& argv, Backend& backend,
                 const Json& calibration, std::size_t point_count) {
  Json h;
  h["type"] = "header";
  h["schema_version"] = kRecordSchemaVersion;
  h["created_utc"] = utc_timestamp(false);
  h["argv"] = argv;
  h["config"] = {{"path", config.path},
                 {"sha256", config.sha256},
                 {"experiment", config.experiment},
                 {"description", config.description},
                 {"hypothesis", config.hypothesis},
                 {"text", config.text}};
  const LabSettings& l = config.lab;
  h["lab"] = {{"warmup_iterations", l.warmup_iterations},
              {"warmup_time_s", l.warmup_time_s},
              {"min_samples", l.min_samples},
              {"max_samples", l.max_samples},
              {"max_time_s", l.max_time_s},
              {"min_sample_time_s", l.min_sample_time_s},
              {"seed", l.seed},
              {"tolerance_scale", l.tolerance_scale ? Json(*l.tolerance_scale) : Json(nullptr)},
              {"host_max_n", l.host_max_n},
              {"timing", l.timing},
              {"target_rel_ci", l.target_rel_ci},
              {"l2", l.l2},
              {"delay_s", l.delay_s}};
  h["environment"] = host_environment();
  h["environment"]["backend"] = backend.name();
  h["environment"]["device"] = backend.environment();
  h["calibration"] = calibration;
  h["warnings"] = Json::array();
  if (h["environment"]["labrun"]["build_type"] != "Release")
    h["warnings"].push_back(fmt_warning("build_type", "labrun was built as " +
                                                          h["environment"]["labrun"]["build_type"].get<std::string>() +
                                                          ", not Release: timings include unoptimised host code"));
  if (l.delay_s > 0)
    h["warnings"].push_back(fmt_warning("delay", "lab.delay_s adds a spin kernel to every iteration (test aid)"));
  if (l.timing == "unsynchronized")
    h["warnings"].push_back(fmt_warning("unsynchronized", "lab.timing: unsynchronized measures the enqueue, not the "
                                                          "work (teaching demo)"));
  h["point_count"] = point_count;
  return h;
}

std::vector<Json> run_sweep(const std::vector<Point>& points, const Experiment& experiment, Backend& backend,
                            const LabSettings& lab, const std::function<void(const Json&)>& sink,
                            const std::function<void(std::size_t, std::size_t, const Json&)>& progress) {
  std::vector<Json> records;
  for (std::size_t i = 0; i < points.size(); ++i) {
    Json rec = run_point(points[i], experiment, backend, lab);
    sink(rec);
    if (progress) progress(i + 1, points.size(), rec);
    // Raw samples stay in the file; the summary keeps the rest.
    if (rec.contains("timing")) rec["timing"].erase("wall_samples_s");
    records.push_back(std::move(rec));
  }
  return records;
}

}  // namespace labrun
