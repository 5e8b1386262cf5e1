#include "cublas.hpp"

#include <mutex>

#include "shared_library.hpp"

namespace labrun::cublas {

namespace {

// From cublas_api.h / library_types.h (CUDA 13): the symbols and enum values used.
using RawHandle = void*;
using CreateFn = int (*)(RawHandle*);
using DestroyFn = int (*)(RawHandle);
using SetStreamFn = int (*)(RawHandle, cudaStream_t);
using SetWorkspaceFn = int (*)(RawHandle, void*, std::size_t);
using GemmExFn = int (*)(RawHandle, int, int, int, int, int, const void*, const void*, int, int, const void*, int, int,
                         const void*, void*, int, int, int, int);
using GemmStridedBatchedExFn = int (*)(RawHandle, int, int, int, int, int, const void*, const void*, int, int,
                                       long long, const void*, int, int, long long, const void*, void*, int, int,
                                       long long, int, int, int);
constexpr int kCompute32F = 68;   // CUBLAS_COMPUTE_32F
constexpr int kGemmDefault = -1;  // CUBLAS_GEMM_DEFAULT

struct Library {
  std::string path, why;
  CreateFn create = nullptr;
  DestroyFn destroy = nullptr;
  SetStreamFn set_stream = nullptr;
  SetWorkspaceFn set_workspace = nullptr;
  GemmExFn gemm_ex = nullptr;
  GemmStridedBatchedExFn gemm_strided_batched_ex = nullptr;
  bool ok() const { return why.empty(); }
};

const Library& library_once() {
  static Library lib;
  static std::once_flag once;
  std::call_once(once, [] {
    const OpenedLibrary so = open_first_library(
        {"libcublas.so.13", "/usr/local/cuda/lib64/libcublas.so.13", "libcublas.so"});
    if (!so.handle) {
      lib.why = "libcublas.so.13 not found";
      return;
    }
    lib.path = so.path;
    lib.create = symbol<CreateFn>(so.handle, "cublasCreate_v2");
    lib.destroy = symbol<DestroyFn>(so.handle, "cublasDestroy_v2");
    lib.set_stream = symbol<SetStreamFn>(so.handle, "cublasSetStream_v2");
    lib.set_workspace = symbol<SetWorkspaceFn>(so.handle, "cublasSetWorkspace_v2");
    lib.gemm_ex = symbol<GemmExFn>(so.handle, "cublasGemmEx");
    lib.gemm_strided_batched_ex = symbol<GemmStridedBatchedExFn>(so.handle, "cublasGemmStridedBatchedEx");
    if (!lib.create || !lib.destroy || !lib.set_stream || !lib.set_workspace || !lib.gemm_ex ||
        !lib.gemm_strided_batched_ex)
      lib.why = "cuBLAS symbols missing in " + lib.path;
  });
  return lib;
}

const Library& loaded() {
  const Library& lib = library_once();
  if (!lib.ok()) throw CublasError("cuBLAS unavailable: " + lib.why);
  return lib;
}

int op_code(Op op) { return op == Op::n ? 0 : 1; }
int type_code(Type t) {
  switch (t) {
    case Type::f32: return 0;    // CUDA_R_32F
    case Type::f16: return 2;    // CUDA_R_16F
    case Type::bf16: return 14;  // CUDA_R_16BF
  }
  return 0;
}

void check(int status, const char* call) {
  if (status != 0) throw CublasError(std::string(call) + " returned cuBLAS status " + std::to_string(status));
}

}  // namespace

bool available() { return library_once().ok(); }
std::string unavailable_reason() { return library_once().why; }

struct Handle::Workspace {
  DeviceBuffer buffer;
};

Handle::Handle(cudaStream_t stream, std::size_t workspace_bytes) {
  const Library& lib = loaded();
  workspace_ = std::make_unique<Workspace>(Workspace{DeviceBuffer(workspace_bytes)});
  check(lib.create(&handle_), "cublasCreate");
  try {
    check(lib.set_stream(handle_, stream), "cublasSetStream");
    check(lib.set_workspace(handle_, workspace_->buffer.get(), workspace_->buffer.bytes()), "cublasSetWorkspace");
  } catch (...) {
    lib.destroy(handle_);
    throw;
  }
}

Handle::~Handle() {
  if (handle_) library_once().destroy(handle_);
}

const std::string& Handle::library() const { return library_once().path; }

std::size_t Handle::workspace_bytes() const { return workspace_->buffer.bytes(); }

void Handle::gemm(Op opa, Op opb, int m, int n, int k, float alpha, const void* a, Type ta, int lda, const void* b,
                  Type tb, int ldb, float beta, void* c, Type tc, int ldc) {
  check(loaded().gemm_ex(handle_, op_code(opa), op_code(opb), m, n, k, &alpha, a, type_code(ta), lda, b, type_code(tb),
                         ldb, &beta, c, type_code(tc), ldc, kCompute32F, kGemmDefault),
        "cublasGemmEx");
}

void Handle::gemm_strided_batched(Op opa, Op opb, int m, int n, int k, float alpha, const void* a, Type ta, int lda,
                                  long long stride_a, const void* b, Type tb, int ldb, long long stride_b, float beta,
                                  void* c, Type tc, int ldc, long long stride_c, int batch) {
  check(loaded().gemm_strided_batched_ex(handle_, op_code(opa), op_code(opb), m, n, k, &alpha, a, type_code(ta), lda,
                                         stride_a, b, type_code(tb), ldb, stride_b, &beta, c, type_code(tc), ldc,
                                         stride_c, batch, kCompute32F, kGemmDefault),
        "cublasGemmStridedBatchedEx");
}

}  // namespace labrun::cublas
