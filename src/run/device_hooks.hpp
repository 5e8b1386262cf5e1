// What the binary's device layer adds to the host core (DeviceHooks): main() fills it, the commands call it, so
// that the host core compiles and is tested without nvcc.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "backend.hpp"
#include "registry.hpp"

namespace labrun {

/// What the binary's device layer adds to the host core. Empty functions: built without CUDA.
struct DeviceHooks {
  /// Opens CUDA device `index`; returns nullptr and sets `why` (with the CUDA error name) if it cannot.
  std::function<std::unique_ptr<Backend>(int index, std::string* why)> open_cuda;
  /// The number of CUDA devices visible (cudaGetDeviceCount), for --devices all.
  std::function<int()> device_count;
  /// Adds the CUDA implementations of the built-in experiments to a registry.
  std::function<void(Registry&)> register_cuda;
  /// Adds experiments beyond the linked ones (LABRUN_EXPERIMENT): the test aids of the labrun_testaid binary
  /// (tests/aids/), never labrun's own.
  std::function<void(Registry&)> register_extra;
  /// The CUDA sources a runner was built without ("rownorm.cu"; labrun_add_runner in a project that did not enable
  /// CUDA), for `list` and `sweep` to say; empty when none was left out.
  std::string left_out_cuda;
};

}  // namespace labrun
