#include "cublas_gemm.hpp"

#include <optional>
#include <vector>

#include "calibration.cuh"
#include "cublas.hpp"
#include "cuda_runtime.hpp"
#include "stats.hpp"

namespace labrun {

Json cublas_bf16_gemm(int n, int reps, cudaStream_t stream) {
  if (!cublas::available()) return Json{{"unavailable", cublas::unavailable_reason()}};
  std::optional<cublas::Handle> handle;
  try {
    handle.emplace(stream);
  } catch (const cublas::CublasError& e) {
    return Json{{"unavailable", e.what()}};
  }
  const std::size_t elems = static_cast<std::size_t>(n) * n;
  DeviceBuffer a(elems * 2), b(elems * 2), c(elems * 2);
  lab_kernels::fill_random_bf16(a.get(), elems, 1, stream);
  lab_kernels::fill_random_bf16(b.get(), elems, 2, stream);
  bool failed = false;
  auto run = [&] {
    try {
      handle->gemm(cublas::Op::n, cublas::Op::n, n, n, n, 1.0f, a.get(), cublas::Type::bf16, n, b.get(),
                   cublas::Type::bf16, n, 0.0f, c.get(), cublas::Type::bf16, n);
    } catch (const cublas::CublasError&) {
      failed = true;
    }
  };
  Event e0, e1;
  for (int i = 0; i < 3; ++i) run();
  std::vector<double> t;
  for (int i = 0; i < reps; ++i) {
    e0.record(stream);
    run();
    e1.record(stream);
    e1.synchronize();
    t.push_back(e1.seconds_since(e0));
  }
  if (failed) return Json{{"unavailable", "cublasGemmEx returned an error"}};
  const double time_s = summarize(t).median;
  const double flop = 2.0 * n * static_cast<double>(n) * n;
  return Json{{"n", n},
              {"flop", flop},
              {"time_s", time_s},
              {"flop_per_s", flop / time_s},
              {"library", handle->library()},
              {"method", "cublasGemmEx bf16 x bf16 -> bf16, CUBLAS_COMPUTE_32F, random inputs; median of " +
                             std::to_string(reps) + " after 3 warmups"}};
}

}  // namespace labrun
