// cuBLAS for experiments, loaded with dlopen at run time (no link-time dependency, so a runner still starts on
// machines without cuBLAS): the few entry points labrun uses, behind one RAII handle whose workspace is device
// memory the lab tracks (so a point's memory peak counts it, and graph capture never makes cuBLAS allocate). Make
// the Handle in a variant's setup, never in an iteration (case C12); when available() is false, throw
// PointOutcome(Status::not_supported, unavailable_reason()) from the setup (labrun/status.hpp). Column-major, as
// cuBLAS itself (cuBLAS documentation, "cublasGemmEx", "cublasGemmStridedBatchedEx"). Implemented in labrun's
// device library (CUDA builds); compiles alone under nvcc's C++17 and the host's C++20 without the CUDA headers.
#pragma once

#include <cstddef>
#include <memory>
#include <stdexcept>
#include <string>

struct CUstream_st;  // cudaStream_t, without the CUDA headers

namespace labrun::cublas {

/// A cuBLAS call failed or the library could not be loaded; what() names the call and the status code.
class CublasError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

enum class Op { n, t };              ///< CUBLAS_OP_N, CUBLAS_OP_T
enum class Type { f32, f16, bf16 };  ///< CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF

/// Whether libcublas.so.13 can be loaded here with every symbol labrun uses (for a clean not_supported or skip
/// instead of an exception). Loads it once per process.
bool available();
/// Why not, when available() is false ("" otherwise).
std::string unavailable_reason();

/// A cuBLAS handle on `stream` with a workspace of `workspace_bytes` of tracked device work memory
/// (cublasSetWorkspace, so cuBLAS allocates nothing of its own in a call or a captured graph).
/// @throws CublasError when libcublas.so.13 cannot be loaded or cublasCreate fails; a CUDA error when the
/// workspace cannot be allocated.
class Handle {
 public:
  explicit Handle(CUstream_st* stream, std::size_t workspace_bytes = 32u << 20);
  ~Handle();
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;

  /// C = alpha·op(A)·op(B) + beta·C; C is m×n (ldc >= m), op(A) m×k, op(B) k×n; f32 compute
  /// (CUBLAS_COMPUTE_32F), CUBLAS_GEMM_DEFAULT (tensor cores where the types allow). @throws CublasError.
  void gemm(Op opa, Op opb, int m, int n, int k, float alpha, const void* a, Type ta, int lda, const void* b, Type tb,
            int ldb, float beta, void* c, Type tc, int ldc);
  /// The same for `batch` matrices at element strides stride_a, stride_b, stride_c (cublasGemmStridedBatchedEx).
  /// @throws CublasError.
  void gemm_strided_batched(Op opa, Op opb, int m, int n, int k, float alpha, const void* a, Type ta, int lda,
                            long long stride_a, const void* b, Type tb, int ldb, long long stride_b, float beta,
                            void* c, Type tc, int ldc, long long stride_c, int batch);
  std::size_t workspace_bytes() const;
  /// The path dlopen loaded.
  const std::string& library() const;

 private:
  struct Workspace;  // the tracked device buffer (src/backends/cuda/cublas.cpp)
  void* handle_ = nullptr;
  std::unique_ptr<Workspace> workspace_;
};

}  // namespace labrun::cublas
