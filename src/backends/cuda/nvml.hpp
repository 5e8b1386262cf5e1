// NVML (clocks, temperature, power, clock-event reasons, the other processes on the device, utilization), loaded at run
// time with dlopen: the toolkit has no NVML header or library, and linking libnvidia-ml would stop labrun from starting
// on machines without a driver (seen on the project's machines: exit 127). Every reading degrades to "unavailable" when
// NVML is absent.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "record.hpp"
#include "tenants.hpp"

namespace labrun {

class Nvml {
 public:
  /// Loads libnvidia-ml.so.1 and finds the device whose UUID is `uuid` (CUDA's "GPU-xxxxxxxx-..." form).
  /// Never throws; available() says whether it worked and why_unavailable() why not.
  explicit Nvml(const std::string& uuid);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return device_ != nullptr; }
  const std::string& why_unavailable() const { return why_; }
  /// The kernel driver's version, e.g. "580.95.05", or "unavailable".
  std::string driver_version() const;
  /// Current sm_clock_hz, memory_clock_hz, temperature_celsius (NVML reports degrees Celsius; kept as read),
  /// power_W, clocks_event_reasons_mask and their names, throttled, tenants (tenants()) and utilization {gpu,
  /// memory} (fractions of NVML's last sample period, nvmlDeviceGetUtilizationRates); each field "unavailable"
  /// without NVML.
  Json state() const;
  /// The processes NVML lists on the device (compute and graphics, the _v3 queries); nullopt without NVML or
  /// with a driver that lacks the queries.
  std::optional<std::vector<DeviceProcess>> processes() const;
  /// The other processes on the device (tenants_json of processes(), labrun's own left out), or "unavailable".
  Json tenants() const;

  /// Names of the bits of an NVML clocks-event-reasons mask (nvml.h, nvmlClocksEventReason*).
  static Json reason_names(unsigned long long mask);
  /// True if the mask holds a reason that slows the clocks below what the load asks (anything but GpuIdle,
  /// ApplicationsClocksSetting and DisplayClockSetting).
  static bool is_throttle(unsigned long long mask);

 private:
  void* lib_ = nullptr;
  void* device_ = nullptr;
  std::string why_;
};

}  // namespace labrun
