// Other processes on the device (case C23, docs/cases.md): what NVML lists as holding a context on the GPU a point
// runs on, less labrun's own processes, as the record's device_state.<when>.tenants. Host logic: the CUDA backend
// gives it NVML's process list; the tests give it a fake one.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "record.hpp"

namespace labrun {

/// One process NVML lists on a device (nvmlDeviceGetComputeRunningProcesses_v3 / GraphicsRunningProcesses_v3).
struct DeviceProcess {
  std::int64_t pid = 0;
  std::optional<double> used_memory_bytes;  ///< nullopt where NVML does not say (NVML_VALUE_NOT_AVAILABLE)
  std::string kind;                         ///< "compute" or "graphics"
};

/// How the host's processes are read: labrun's own pid, each process's parent and name. host() reads /proc; tests
/// pass fakes.
struct ProcessTable {
  std::int64_t self = 0;
  std::function<std::int64_t(std::int64_t)> parent_of;  ///< the parent's pid; 0 when unknown
  std::function<std::string(std::int64_t)> name_of;     ///< /proc/PID/comm; "" when unreadable (another namespace)
  /// This process (getpid), /proc/PID/stat's ppid, /proc/PID/comm.
  static ProcessTable host();
};

/// The tenants among `processes`: every process but labrun's own and its ancestors (a supervisor or a parent sweep
/// that holds a context of its own), one entry per pid (a process listed for compute and graphics is one tenant,
/// its kinds joined), in pid order: [{pid, name (null when unreadable), used_memory_bytes (null when NVML does not
/// say), kind}].
Json tenants_json(const std::vector<DeviceProcess>& processes, const ProcessTable& table);

/// The tenants of a device_state.<when>.tenants array as a phrase: "pid 4242 (python3, 2.1 GB)", joined by ", ";
/// "" for none or for anything that is not such an array.
std::string tenants_text(const Json& tenants);

}  // namespace labrun
