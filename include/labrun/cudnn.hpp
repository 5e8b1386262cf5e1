// cuDNN for experiments, loaded with dlopen at run time (no link-time dependency, so a runner still starts on
// machines without cuDNN): its fused scaled dot-product attention forward through the graph API, built once (the
// operation graph, the heuristics, the execution plan and its workspace) so that one run() is one
// cudnnBackendExecute, which a CUDA graph captures. Make the object in a variant's setup, never in an iteration
// (case C12); when available() is false, throw PointOutcome(Status::not_supported, unavailable_reason()) from the
// setup (labrun/status.hpp), and map Unsupported (no cuDNN engine for the shape) to not_supported too.
//
// Which library: the path in LABRUN_CUDNN_LIBRARY when set (and only it: a path that does not load makes cuDNN
// unavailable, naming it), else libcudnn.so.9 where the dynamic loader finds it. library() says which file and
// version loaded; the CUDA backend records it in the run's environment (`environment.device.cudnn`).
// Implemented in labrun's device library (CUDA builds); compiles alone under nvcc's C++17 and the host's C++20
// without the CUDA or cuDNN headers. Sources: cuDNN 9 Backend API ("Graph API", cudnn_graph.h), and the operation
// graph cudnn-frontend 1.23 builds for a causal SDPA on a cuDNN before 9.21 (CompositeSDPANode).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

struct CUstream_st;  // cudaStream_t, without the CUDA headers

namespace labrun::cudnn {

/// A cuDNN call failed or the library could not be loaded; what() names the call, the status and cuDNN's own
/// message (cudnnGetLastErrorString).
class CudnnError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
/// No cuDNN engine runs the graph for this shape on this GPU and library (every execution plan failed, or the
/// heuristics offered none): the point is not_supported, not failed.
class Unsupported : public CudnnError {
 public:
  using CudnnError::CudnnError;
};

/// The library loaded.
struct Library {
  std::string path;     ///< the file the entry points came from (dladdr of cudnnGetVersion)
  std::string version;  ///< "9.14.0", from cudnnGetVersion() = major * 10000 + minor * 100 + patch
  std::int64_t version_code = 0;
  std::string requested;  ///< LABRUN_CUDNN_LIBRARY when set, else "libcudnn.so.9"
};

/// Whether cuDNN loads here with every entry point used (for a clean not_supported instead of an exception).
/// Loads it once per process.
bool available();
/// Why not, when available() is false ("" otherwise).
std::string unavailable_reason();
/// The library loaded. @throws CudnnError when available() is false.
const Library& library();

/// The shape of one attention forward: Q, K, V and O bf16, [batch, heads, seq, dim] row-major (dim contiguous,
/// packed), f32 accumulation; O = softmax(scale · Q Kᵀ + mask) V, mask = −inf where causal and key
/// j > query i (top-left diagonal), P rounded to bf16 before P V (as the frontend's graph does).
struct SdpaShape {
  std::int64_t batch = 1, heads = 1, seq = 1;
  std::int64_t dim = 128;  ///< D, the head dimension
  bool causal = true;
  float scale = 1.0f;  ///< usually 1 / sqrt(dim)
};

/// cuDNN's fused attention forward (inference: no softmax statistics written) for one shape and one set of
/// device pointers, on one stream. The constructor builds everything: a cuDNN handle on `stream`, the operation
/// graph (matmul, scale, causal mask, softmax, matmul), the heuristics (mode A), the first execution plan that
/// finalizes (runtime-compiled engines compile here, not in run()), its workspace (device memory the lab tracks)
/// and the variant pack of the pointers. q, k, v and o must stay valid and 16-byte aligned for the object's life.
class Sdpa {
 public:
  /// @throws CudnnError when cuDNN is unavailable or a call fails; Unsupported when no engine runs the shape; a
  /// CUDA error when the workspace cannot be allocated.
  Sdpa(CUstream_st* stream, const SdpaShape& shape, const void* q, const void* k, const void* v, void* o);
  ~Sdpa();
  Sdpa(const Sdpa&) = delete;
  Sdpa& operator=(const Sdpa&) = delete;

  /// Enqueues one forward pass on the stream (cudnnBackendExecute; capturable). @throws CudnnError.
  void run();
  /// Device bytes of the plan's workspace (0 when the engine needs none).
  std::size_t workspace_bytes() const;
  /// The engine's global index (CUDNN_ATTR_ENGINE_GLOBAL_INDEX) of the plan chosen.
  std::int64_t engine() const;

 private:
  struct Impl;  // the descriptors, the handle and the workspace (src/backends/cuda/cudnn.cpp)
  std::unique_ptr<Impl> impl_;
};

}  // namespace labrun::cudnn
