#include "backend.hpp"

#include "record.hpp"

namespace labrun {

const char* to_string(BackendKind kind) { return kind == BackendKind::host ? "host" : "cuda"; }

Json to_json(const ExecutorSetup& s) {
  Json j = Json::object();
  if (s.capture_time_s) j["capture_time_s"] = *s.capture_time_s;
  if (s.instantiate_time_s) j["instantiate_time_s"] = *s.instantiate_time_s;
  if (s.graph_nodes) j["graph_nodes"] = *s.graph_nodes;
  return j;
}

Json to_json(const PointMemory& m) {
  Json j = Json::object();
  j["peak_work_bytes"] = m.peak_work_bytes;
  j["input_bytes"] = m.input_bytes;
  if (m.device_used_delta_bytes) j["device_used_delta_bytes"] = json_real(*m.device_used_delta_bytes);
  return j;
}

}  // namespace labrun
