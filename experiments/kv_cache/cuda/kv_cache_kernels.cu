#include "kv_cache/cuda/kv_cache_kernels.cuh"

#include <algorithm>
#include <stdexcept>

#include "cuda_check.hpp"

namespace labrun::kv_cache::kernels {

namespace {

// Most blocks one launch uses; grid-stride loops cover the rest.
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;
constexpr int kMaxGridY = 65535;

template <class U>
__global__ void __launch_bounds__(kBlock) concat_kernel(const U* __restrict__ old, const U* __restrict__ tok,
                                                        U* __restrict__ out, std::int64_t rows, std::int64_t n,
                                                        std::int64_t w) {
  const std::int64_t old_len = n * w, len = old_len + w;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const U* src = old + r * old_len;
    const U* t = tok + r * w;
    U* dst = out + r * len;
    for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; j < len; j += stride)
      dst[j] = j < old_len ? src[j] : t[j - old_len];
  }
}

template <class U>
__global__ void __launch_bounds__(kBlock) copy_rows_kernel(const U* __restrict__ src, std::int64_t src_stride,
                                                           U* __restrict__ dst, std::int64_t dst_stride,
                                                           std::int64_t rows, std::int64_t len) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  for (std::int64_t r = blockIdx.y; r < rows; r += gridDim.y)
    for (std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; j < len; j += stride)
      dst[r * dst_stride + j] = src[r * src_stride + j];
}

template <class U>
__global__ void __launch_bounds__(kBlock) write_slot_kernel(const U* __restrict__ tok, U* __restrict__ cache,
                                                            std::int64_t rows, std::int64_t capacity, std::int64_t t,
                                                            std::int64_t w) {
  const std::int64_t total = rows * w;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  for (std::int64_t g = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; g < total; g += stride) {
    const std::int64_t r = g / w, j = g - r * w;
    cache[(r * capacity + t) * w + j] = tok[g];
  }
}

__device__ __forceinline__ void store(void* base, int elem_bytes, std::int64_t i, std::uint32_t bits) {
  if (elem_bytes == 4) static_cast<std::uint32_t*>(base)[i] = bits;
  else static_cast<std::uint16_t*>(base)[i] = static_cast<std::uint16_t>(bits);
}

__global__ void __launch_bounds__(kBlock) generate_kernel(Format f, int elem_bytes, std::int64_t rows,
                                                          std::int64_t n0, std::int64_t n1, std::int64_t D,
                                                          std::uint64_t seed, void* prefill, void* tokens) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  const std::int64_t start = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  const std::int64_t pre = rows * n0 * D, tok = (n1 - n0) * rows * D;
  for (std::int64_t i = start; i < pre; i += stride) {  // P[r][t][d] at (r·n0 + t)·D + d
    const std::int64_t r = i / (n0 * D), rem = i - r * n0 * D;
    const std::int64_t t = rem / D, d = rem - t * D;
    store(prefill, elem_bytes, i, value_bits(f, seed, static_cast<std::uint64_t>((r * n1 + t) * D + d)));
  }
  for (std::int64_t i = start; i < tok; i += stride) {  // T[s][r][d] at (s·rows + r)·D + d, token n0 + s
    const std::int64_t s = i / (rows * D), rem = i - s * rows * D;
    const std::int64_t r = rem / D, d = rem - r * D;
    store(tokens, elem_bytes, i, value_bits(f, seed, static_cast<std::uint64_t>((r * n1 + n0 + s) * D + d)));
  }
}

// Units per token row (D elements) and which unit type moves them.
enum class Unit { u16, u32, u128 };
Unit unit_of(std::size_t elem_bytes, std::int64_t D, std::int64_t* units_per_token) {
  if (elem_bytes != 2 && elem_bytes != 4) throw std::invalid_argument("kv_cache kernels: elements of 2 or 4 bytes");
  const std::int64_t bytes = D * static_cast<std::int64_t>(elem_bytes);
  if (bytes % 16 == 0) {
    *units_per_token = bytes / 16;
    return Unit::u128;
  }
  *units_per_token = D;
  return elem_bytes == 4 ? Unit::u32 : Unit::u16;
}

dim3 rows_grid(std::int64_t rows, std::int64_t len) {
  const std::int64_t y = std::max<std::int64_t>(1, std::min<std::int64_t>(rows, kMaxGridY));
  const std::int64_t x_wanted = std::max<std::int64_t>(1, (len + kBlock - 1) / kBlock);
  const std::int64_t x = std::max<std::int64_t>(1, std::min(x_wanted, kMaxBlocks / y));
  return dim3(static_cast<unsigned>(x), static_cast<unsigned>(y));
}

int flat_grid(std::int64_t total) {
  return static_cast<int>(std::max<std::int64_t>(1, std::min(kMaxBlocks, (total + kBlock - 1) / kBlock)));
}

template <class F>
void dispatch(Unit u, F&& f) {
  switch (u) {
    case Unit::u16: return f(static_cast<std::uint16_t*>(nullptr));
    case Unit::u32: return f(static_cast<std::uint32_t*>(nullptr));
    case Unit::u128: return f(static_cast<uint4*>(nullptr));
  }
}

}  // namespace

void generate(Format f, std::int64_t rows, std::int64_t n0, std::int64_t n1, std::int64_t D, std::uint64_t seed,
              void* prefill, void* tokens, cudaStream_t stream) {
  const std::int64_t total = std::max(rows * n0 * D, (n1 - n0) * rows * D);
  if (total <= 0) return;
  const int elem_bytes = f == Format::f32 ? 4 : 2;
  generate_kernel<<<std::min(flat_grid(total), 8192), kBlock, 0, stream>>>(f, elem_bytes, rows, n0, n1, D, seed,
                                                                          prefill, tokens);
  LABRUN_CUDA_LAUNCHED();
}

void concat_step(std::size_t elem_bytes, const void* old, const void* tok, void* out, std::int64_t rows,
                 std::int64_t n, std::int64_t D, cudaStream_t stream) {
  std::int64_t w = 0;
  const Unit u = unit_of(elem_bytes, D, &w);
  if (rows <= 0 || w <= 0) return;
  const dim3 grid = rows_grid(rows, (n + 1) * w);
  dispatch(u, [&](auto* typed) {
    using U = std::remove_pointer_t<decltype(typed)>;
    concat_kernel<U><<<grid, kBlock, 0, stream>>>(static_cast<const U*>(old), static_cast<const U*>(tok),
                                                  static_cast<U*>(out), rows, n, w);
    LABRUN_CUDA_LAUNCHED();
  });
}

void write_slot(std::size_t elem_bytes, const void* tok, void* cache, std::int64_t rows, std::int64_t capacity,
                std::int64_t t, std::int64_t D, cudaStream_t stream) {
  std::int64_t w = 0;
  const Unit u = unit_of(elem_bytes, D, &w);
  if (rows <= 0 || w <= 0) return;
  dispatch(u, [&](auto* typed) {
    using U = std::remove_pointer_t<decltype(typed)>;
    write_slot_kernel<U><<<flat_grid(rows * w), kBlock, 0, stream>>>(static_cast<const U*>(tok), static_cast<U*>(cache),
                                                                     rows, capacity, t, w);
    LABRUN_CUDA_LAUNCHED();
  });
}

void copy_rows(std::size_t elem_bytes, const void* src, std::int64_t src_tokens, void* dst, std::int64_t dst_tokens,
               std::int64_t rows, std::int64_t tokens, std::int64_t D, cudaStream_t stream) {
  std::int64_t w = 0;
  const Unit u = unit_of(elem_bytes, D, &w);
  if (rows <= 0 || tokens <= 0 || w <= 0) return;
  const dim3 grid = rows_grid(rows, tokens * w);
  dispatch(u, [&](auto* typed) {
    using U = std::remove_pointer_t<decltype(typed)>;
    copy_rows_kernel<U><<<grid, kBlock, 0, stream>>>(static_cast<const U*>(src), src_tokens * w, static_cast<U*>(dst),
                                                     dst_tokens * w, rows, tokens * w);
    LABRUN_CUDA_LAUNCHED();
  });
}

}  // namespace labrun::kv_cache::kernels
