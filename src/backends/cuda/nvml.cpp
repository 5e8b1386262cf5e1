#include "nvml.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <utility>

#include "shared_library.hpp"

namespace labrun {

namespace {

// The few NVML entry points used, declared from nvml.h (NVML API reference, r580). nvmlReturn_t is an int
// enum with NVML_SUCCESS = 0; nvmlDevice_t an opaque pointer.
using NvmlDevice = void*;
using InitFn = int (*)();
using ShutdownFn = int (*)();
using ByUuidFn = int (*)(const char*, NvmlDevice*);
using ClockFn = int (*)(NvmlDevice, int, unsigned int*);
using TempFn = int (*)(NvmlDevice, int, unsigned int*);
using PowerFn = int (*)(NvmlDevice, unsigned int*);
using ReasonsFn = int (*)(NvmlDevice, unsigned long long*);
using DriverFn = int (*)(char*, unsigned int);
// nvmlProcessInfo_t (nvml.h r525 and later, the _v3 process queries): pid, usedGpuMemory, gpuInstanceId,
// computeInstanceId.
struct NvmlProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
using ProcessesFn = int (*)(NvmlDevice, unsigned int*, NvmlProcessInfo*);
struct NvmlUtilization {
  unsigned int gpu;     // percent of the last sample period in which a kernel ran
  unsigned int memory;  // percent of it in which device memory was read or written
};
using UtilizationFn = int (*)(NvmlDevice, NvmlUtilization*);
constexpr int kInsufficientSize = 7;                      // NVML_ERROR_INSUFFICIENT_SIZE
constexpr unsigned long long kValueNotAvailable = ~0ull;  // NVML_VALUE_NOT_AVAILABLE

constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM
constexpr int kTempGpu = 0;   // NVML_TEMPERATURE_GPU

}  // namespace

Nvml::Nvml(const std::string& uuid) {
  lib_ = open_first_library({"libnvidia-ml.so.1"}).handle;
  if (!lib_) {
    why_ = "libnvidia-ml.so.1 not found";
    return;
  }
  auto init = symbol<InitFn>(lib_, "nvmlInit_v2");
  auto by_uuid = symbol<ByUuidFn>(lib_, "nvmlDeviceGetHandleByUUID");
  if (!init || !by_uuid || init() != 0) {
    why_ = "nvmlInit_v2 failed";
    return;
  }
  NvmlDevice dev = nullptr;
  if (by_uuid(uuid.c_str(), &dev) != 0 || !dev) {
    why_ = "no NVML device with UUID " + uuid;
    if (auto shutdown = symbol<ShutdownFn>(lib_, "nvmlShutdown")) shutdown();
    return;
  }
  device_ = dev;
}

Nvml::~Nvml() {
  if (lib_) {
    if (device_)
      if (auto shutdown = symbol<ShutdownFn>(lib_, "nvmlShutdown")) shutdown();
    dlclose(lib_);
  }
}

std::string Nvml::driver_version() const {
  auto fn = symbol<DriverFn>(lib_, "nvmlSystemGetDriverVersion");
  char buf[96] = {0};
  if (!device_ || !fn || fn(buf, sizeof buf) != 0) return "unavailable";
  return buf;
}

Json Nvml::reason_names(unsigned long long mask) {
  static const std::pair<unsigned long long, const char*> kNames[] = {{0x1, "gpu_idle"},
                                                                      {0x2, "applications_clocks_setting"},
                                                                      {0x4, "sw_power_cap"},
                                                                      {0x8, "hw_slowdown"},
                                                                      {0x10, "sync_boost"},
                                                                      {0x20, "sw_thermal_slowdown"},
                                                                      {0x40, "hw_thermal_slowdown"},
                                                                      {0x80, "hw_power_brake_slowdown"},
                                                                      {0x100, "display_clock_setting"}};
  Json names = Json::array();
  for (const auto& [bit, name] : kNames)
    if (mask & bit) names.push_back(name);
  return names;
}

bool Nvml::is_throttle(unsigned long long mask) { return (mask & ~0x103ull) != 0; }

std::optional<std::vector<DeviceProcess>> Nvml::processes() const {
  if (!device_) return std::nullopt;
  std::vector<DeviceProcess> out;
  for (const auto& [name, kind] : {std::pair{"nvmlDeviceGetComputeRunningProcesses_v3", "compute"},
                                   std::pair{"nvmlDeviceGetGraphicsRunningProcesses_v3", "graphics"}}) {
    auto fn = symbol<ProcessesFn>(lib_, name);
    if (!fn) return std::nullopt;  // a driver older than r525: the tenants cannot be listed
    std::vector<NvmlProcessInfo> infos(16);
    unsigned int count = 0;
    int rc = kInsufficientSize;
    for (int attempt = 0; attempt < 4 && rc == kInsufficientSize; ++attempt) {
      count = static_cast<unsigned int>(infos.size());
      rc = fn(device_, &count, infos.data());
      if (rc == kInsufficientSize) infos.resize(std::max<std::size_t>(count + 16, infos.size() * 2));
    }
    if (rc != 0) return std::nullopt;
    for (unsigned int i = 0; i < count && i < infos.size(); ++i)
      out.push_back({static_cast<std::int64_t>(infos[i].pid),
                     infos[i].used_gpu_memory == kValueNotAvailable
                         ? std::nullopt
                         : std::optional<double>(static_cast<double>(infos[i].used_gpu_memory)),
                     kind});
  }
  return out;
}

Json Nvml::tenants() const {
  const auto listed = processes();
  if (!listed) return "unavailable";
  return tenants_json(*listed, ProcessTable::host());
}

Json Nvml::state() const {
  const Json na = "unavailable";
  Json s = {{"sm_clock_hz", na}, {"memory_clock_hz", na},           {"temperature_celsius", na},
            {"power_W", na},     {"clocks_event_reasons_mask", na}, {"clocks_event_reasons", na},
            {"throttled", na}};
  if (!device_) return s;
  unsigned int v = 0;
  if (auto clock = symbol<ClockFn>(lib_, "nvmlDeviceGetClockInfo")) {
    if (clock(device_, kClockSm, &v) == 0) s["sm_clock_hz"] = v * 1e6;
    if (clock(device_, kClockMem, &v) == 0) s["memory_clock_hz"] = v * 1e6;
  }
  if (auto temp = symbol<TempFn>(lib_, "nvmlDeviceGetTemperature"))
    if (temp(device_, kTempGpu, &v) == 0) s["temperature_celsius"] = v;
  if (auto power = symbol<PowerFn>(lib_, "nvmlDeviceGetPowerUsage"))
    if (power(device_, &v) == 0) s["power_W"] = v * 1e-3;
  auto reasons = symbol<ReasonsFn>(lib_, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!reasons) reasons = symbol<ReasonsFn>(lib_, "nvmlDeviceGetCurrentClocksThrottleReasons");
  unsigned long long mask = 0;
  if (reasons && reasons(device_, &mask) == 0) {
    s["clocks_event_reasons_mask"] = mask;
    s["clocks_event_reasons"] = reason_names(mask);
    s["throttled"] = is_throttle(mask);
  }
  s["tenants"] = tenants();
  NvmlUtilization u{};
  if (auto util = symbol<UtilizationFn>(lib_, "nvmlDeviceGetUtilizationRates"); util && util(device_, &u) == 0)
    s["utilization"] = {{"gpu", u.gpu / 100.0}, {"memory", u.memory / 100.0}};
  else s["utilization"] = na;
  return s;
}

}  // namespace labrun
