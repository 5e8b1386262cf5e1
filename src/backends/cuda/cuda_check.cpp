#include "cuda_check.hpp"

#include <cstdio>

namespace labrun {

CudaError::CudaError(cudaError_t code, const char* call, const char* file, int line)
    : std::runtime_error(std::string(file) + ":" + std::to_string(line) + ": " + call +
                         " failed: " + cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")"),
      code_(code) {}

void cuda_check(cudaError_t code, const char* call, const char* file, int line) {
  if (code == cudaSuccess) return;
  (void)cudaGetLastError();  // clear the error unless it is sticky (then the context is lost anyway)
  throw CudaError(code, call, file, line);
}

void cuda_check_nothrow(cudaError_t code, const char* call, const char* file, int line) noexcept {
  if (code == cudaSuccess) return;
  (void)cudaGetLastError();
  // After a sticky error every release fails the same way: the point's record (device_fault) already names the
  // error, so only its first echo in a destructor is printed.
  static cudaError_t last_reported = cudaSuccess;
  if (code == last_reported) return;
  last_reported = code;
  std::fprintf(stderr, "labrun: %s:%d: %s failed: %s (later releases failing alike are not repeated)\n", file, line,
               call, cudaGetErrorName(code));
}

}  // namespace labrun
