#include "profiler.hpp"

#include <cstdlib>

namespace labrun {

std::optional<std::string> profiler_detected() {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && *v != '\0';
  };
  if (set("NSYS_PROFILING_SESSION_ID")) return "Nsight Systems";
  if (set("NV_NSIGHT_INJECTION_TRANSPORT_TYPE")) return "Nsight Compute";
  if (set("NVPROF_ID")) return "nvprof";
  if (set("CUDA_INJECTION64_PATH")) return "a CUDA profiler (CUDA_INJECTION64_PATH)";
  return std::nullopt;
}

}  // namespace labrun
