#include "cublas_gemm.hpp"

#include <dlfcn.h>

#include <memory>
#include <vector>

#include "calibration.cuh"
#include "cuda_runtime.hpp"
#include "stats.hpp"

namespace labrun {

namespace {

// From cublas_api.h / library_types.h (CUDA 13): the handful of symbols and enum values used.
using Handle = void*;
using CreateFn = int (*)(Handle*);
using DestroyFn = int (*)(Handle);
using SetStreamFn = int (*)(Handle, cudaStream_t);
using GemmExFn = int (*)(Handle, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                         const void*, void*, int, int, int, int);
constexpr int kOpN = 0;              // CUBLAS_OP_N
constexpr int kBf16 = 14;            // CUDA_R_16BF
constexpr int kCompute32F = 68;      // CUBLAS_COMPUTE_32F
constexpr int kGemmDefault = -1;     // CUBLAS_GEMM_DEFAULT

}  // namespace

Json cublas_bf16_gemm(int n, int reps, cudaStream_t stream) {
  void* lib = nullptr;
  std::string tried;
  for (const char* name : {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13", "libcublas.so"}) {
    lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib) {
      tried = name;
      break;
    }
  }
  if (!lib) return Json{{"unavailable", "libcublas.so.13 not found"}};
  auto create = reinterpret_cast<CreateFn>(dlsym(lib, "cublasCreate_v2"));
  auto destroy = reinterpret_cast<DestroyFn>(dlsym(lib, "cublasDestroy_v2"));
  auto set_stream = reinterpret_cast<SetStreamFn>(dlsym(lib, "cublasSetStream_v2"));
  auto gemm = reinterpret_cast<GemmExFn>(dlsym(lib, "cublasGemmEx"));
  if (!create || !destroy || !set_stream || !gemm) return Json{{"unavailable", "cuBLAS symbols missing"}};
  Handle raw = nullptr;
  if (create(&raw) != 0) return Json{{"unavailable", "cublasCreate failed"}};
  // Destroyed on every path out, an allocation that throws included.
  const std::unique_ptr<void, DestroyFn> handle(raw, destroy);
  Handle h = handle.get();
  set_stream(h, stream);
  const std::size_t elems = static_cast<std::size_t>(n) * n;
  DeviceBuffer a(elems * 2), b(elems * 2), c(elems * 2);
  kernels::fill_random_bf16(a.get(), elems, 1, stream);
  kernels::fill_random_bf16(b.get(), elems, 2, stream);
  const float alpha = 1.0f, beta = 0.0f;
  int status = 0;
  auto run = [&] {
    status |= gemm(h, kOpN, kOpN, n, n, n, &alpha, a.get(), kBf16, n, b.get(), kBf16, n, &beta, c.get(), kBf16, n,
                   kCompute32F, kGemmDefault);
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
  if (status != 0) return Json{{"unavailable", "cublasGemmEx returned an error"}};
  const double time_s = summarize(t).median;
  const double flop = 2.0 * n * static_cast<double>(n) * n;
  return Json{{"n", n},
              {"flop", flop},
              {"time_s", time_s},
              {"flop_per_s", flop / time_s},
              {"library", tried},
              {"method", "cublasGemmEx bf16 x bf16 -> bf16, CUBLAS_COMPUTE_32F, random inputs; median of " +
                             std::to_string(reps) + " after 3 warmups"}};
}

}  // namespace labrun
