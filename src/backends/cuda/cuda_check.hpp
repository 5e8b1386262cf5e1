// The one checking helper for CUDA runtime calls (after nvbench's cuda_call.cuh): a failed call throws
// CudaError carrying file:line, the call's text and the CUDA error name; LABRUN_CUDA_NOTHROW is the twin for
// destructors. The non-sticky error state is cleared (cudaGetLastError) before throwing.
#pragma once

#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace labrun {

class CudaError : public std::runtime_error {
 public:
  CudaError(cudaError_t code, const char* call, const char* file, int line);
  cudaError_t code() const { return code_; }
  /// e.g. "cudaErrorStreamCaptureUnsupported".
  const char* name() const { return cudaGetErrorName(code_); }

 private:
  cudaError_t code_;
};

/// Throws CudaError if `code` is not cudaSuccess.
void cuda_check(cudaError_t code, const char* call, const char* file, int line);
/// Logs to stderr instead of throwing (for destructors).
void cuda_check_nothrow(cudaError_t code, const char* call, const char* file, int line) noexcept;

}  // namespace labrun

#define LABRUN_CUDA(call) ::labrun::cuda_check((call), #call, __FILE__, __LINE__)
#define LABRUN_CUDA_NOTHROW(call) ::labrun::cuda_check_nothrow((call), #call, __FILE__, __LINE__)
/// After a kernel launch: launch-configuration errors surface here.
#define LABRUN_CUDA_LAUNCHED() ::labrun::cuda_check(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
