// A run's header line (make_header): the config, the command, the environment and calibration, the lab settings,
// and the warnings that hold for every point of the run.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "env.hpp"
#include "format.hpp"
#include "lab.hpp"
#include "record.hpp"
#include <labrun/status.hpp>

namespace labrun {

namespace {

Json fmt_warning(const std::string& kind, const std::string& message) {
  return Json{{"kind", kind}, {"message", message}};
}

}  // namespace

std::vector<Warning> unchecked_device(const Json& device) {
  std::vector<Warning> w;
  if (!device.is_object() || device.value("kind", "") != "cuda") return w;
  const Json nvml = device.value("nvml", Json());
  if (nvml != "available") {
    w.push_back({"nvml", "NVML is unavailable (" +
                             (nvml.is_string() ? nvml.get<std::string>() : std::string("not said")) +
                             "): the checks for another process on the device (case C23), for throttling and for "
                             "clock changes do not run; the host sync round-trip check does"});
    return w;
  }
  const Json state = device.value("state_at_start", Json());
  if (state.is_object() && state.value("tenants", Json()) == "unavailable")
    w.push_back({"nvml",
                 "NVML cannot list the processes on the device (a driver older than r525, or refused): the "
                 "check for another process on the device (case C23) does not run"});
  return w;
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
  h["lab"] = to_json(l);
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
  for (const Warning& w : unchecked_device(h["environment"]["device"])) {
    spdlog::warn("{}", w.message);
    h["warnings"].push_back(fmt_warning(w.kind, w.message));
  }
  if (const auto aid = slower_aid())
    h["warnings"].push_back(
        fmt_warning("slower_aid", "LABRUN_TESTAID_SLOWER adds a spin kernel of " + fmt::format("{:g}", aid->share) +
                                      " of its own device time to every eager iteration of variant '" + aid->variant +
                                      "' (test aid)"));
  if (l.timing == "unsynchronized")
    h["warnings"].push_back(fmt_warning("unsynchronized",
                                        "lab.timing: unsynchronized measures the enqueue, not the "
                                        "work (teaching demo)"));
  h["point_count"] = point_count;
  return h;
}

}  // namespace labrun
