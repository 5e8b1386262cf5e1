// Profiler mode's detection: whether labrun runs under an NVIDIA profiler (docs/profiling.md).
#pragma once

#include <optional>
#include <string>

namespace labrun {

/// The profiler this process runs under, from the environment the tools set in the processes they profile:
/// "Nsight Systems" (NSYS_PROFILING_SESSION_ID), "Nsight Compute" (NV_NSIGHT_INJECTION_TRANSPORT_TYPE), "nvprof"
/// (NVPROF_ID), or "a CUDA profiler (CUDA_INJECTION64_PATH)" for any other tool injected into the CUDA runtime;
/// nullopt when none is set. The variables are the ones GROMACS checks for the same purpose
/// (src/gromacs/gpu_utils/cudautils.cu). Never throws.
std::optional<std::string> profiler_detected();

}  // namespace labrun
