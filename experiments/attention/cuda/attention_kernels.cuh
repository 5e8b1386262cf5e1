// Kernels of the attention experiment and their host launchers (plain pointers, so callers compile with the host
// compiler). Every launch is asynchronous on `stream` and checked.
//
// Layout: Q, K, V, O are bh x S x D bf16, row-major (D contiguous), 256-byte aligned (cudaMalloc). The naive
// score buffers are bh x S x S f32 (row stride S); the softmax writes P as bf16 at the start of each score row,
// so P is bh x S x S bf16 with a row stride of 2 S elements (the same bytes). Offsets are 64-bit.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>

namespace labrun::attention::kernels {

/// dst[b, i, j] = src[b, i, j] * scale, or -inf where causal and j > i; src == dst (in place) is allowed.
/// bh x S x S f32; 16-byte vectors when S % 4 == 0. Requires 1 <= bh <= 65535, 1 <= S <= 16384.
void scale_mask(const float* src, float* dst, std::int64_t bh, std::int64_t seq, float scale, bool causal,
                cudaStream_t stream);

/// Row softmax of the bh x S x S f32 scores in place: each row (S f32, in registers) gives P = exp(x - max) *
/// (1 / sum) (expf, f32 sums) written as bf16 over the first 2 S bytes of the row. Rows of -inf are not
/// expected (the causal mask keeps j = 0). Requires 1 <= S <= 16384.
void softmax_rows(float* scores, std::int64_t bh, std::int64_t seq, cudaStream_t stream);

/// The fused forward pass: O = softmax(Q K^T * scale + mask) V per head, bf16 in and out, f32 accumulation, online
/// softmax with exp2 and scale_log2 = scale * log2(e). On a device of compute capability 9.0 at head_dim 128 (and a
/// build with sm_90a code: sm90::built()) the Hopper kernel (TMA, wgmma, 128-key tiles; flash_forward_sm90.cuh), else
/// FlashAttention-2's (mma.sync m16n8k16, 64-key tiles; flash_forward.cuh): flash_forward_name() says which. head_dim
/// 64 or 128; 1 <= bh <= 65535; any S >= 1 (tails masked and zero-filled). @throws std::invalid_argument for another
/// head_dim, std::runtime_error when the Hopper kernel's tensor maps cannot be encoded.
void flash_forward(const void* q, const void* k, const void* v, void* o, std::int64_t bh, std::int64_t seq,
                   int head_dim, bool causal, float scale_log2, cudaStream_t stream);

/// Sets the kernels' attributes (dynamic shared memory) once, before any graph capture.
void prepare(int head_dim);

/// The op name flash_forward's kernel is marked with on the current device: "flash_forward_sm90" (the Hopper kernel)
/// or "flash_forward" (the mma.sync kernel).
const char* flash_forward_name(int head_dim);

/// The Hopper kernel's host side (flash_forward_sm90a.cu, built with sm_90a code: CMakeLists.txt builds every
/// *_sm90a.cu for sm_90a too where the architectures include 90, and defines LABRUN_SM90A there).
namespace sm90 {
/// True when this build has the Hopper kernel's sm_90a code: CMAKE_CUDA_ARCHITECTURES named 90 or 90a (the default
/// is 90; `native`, `all` or `90-virtual` build without it, and tiled then runs the mma.sync kernel everywhere).
bool built();
/// True when the Hopper kernel runs head_dim on the current device: built(), head_dim 128, a device of compute
/// capability 9.0, and one block of it fits an SM (checked once a device; that first call also sets the kernel's
/// dynamic shared memory limit, so make it before any capture, as prepare() and flash_forward_name() do).
bool runs(int head_dim);
/// The tensor maps of one point's Q, K, V (flash_forward_sm90.cuh), encoded once in a variant's setup.
struct Sm90Maps;
/// Encodes the maps of q, k, v ([bh][seq][128] bf16, 16-byte aligned). @throws std::runtime_error when the driver
/// cannot encode them.
std::shared_ptr<const Sm90Maps> encode(const void* q, const void* k, const void* v, std::int64_t bh, std::int64_t seq);
/// flash_forward on the Hopper kernel with maps from encode() (runs() first): only the launch.
void forward(const Sm90Maps& maps, void* o, std::int64_t bh, std::int64_t seq, bool causal, float scale_log2,
             cudaStream_t stream);
}  // namespace sm90

/// Fills `bytes` of p with 0xff (NaN in bf16): the correctness check's poison.
void poison(void* p, std::size_t bytes, cudaStream_t stream);

}  // namespace labrun::attention::kernels
