// The kv_cache experiment's kernels, their launchers and its CUDA variants (LABRUN_CUDA_VARIANTS). Every buffer is
// the SDK's (allocated before any capture, case C12): concat's two ping-pong buffers at n1 tokens stand for the
// fresh tensor torch.cat allocates each step, so an iteration moves what cat moves (a full copy per step) without
// timing an allocator. Each decode step is one kernel on the stream; nothing waits on the host, so both variants
// capture into a graph (n1 − n0 nodes). Layouts: kv_cache.hpp.
//
// The cache's elements are moved as raw bits: 16-byte units (uint4) when one token of one row, D·s bytes, is a
// multiple of 16 (D = 128 bf16 is 256 bytes), else one element at a time (2 or 4 bytes). cudaMalloc's 256-byte
// alignment and whole-token offsets keep every unit aligned. Indices are 64-bit. A launcher with nothing to move
// (rows or elements 0) launches nothing: kv_cache's steps always move at least one token.
#include "kv_cache/cuda/kv_cache_kernels.cuh"

#include <algorithm>
#include <stdexcept>
#include <type_traits>

#include <labrun/cuda.cuh>
#include <labrun/experiment.hpp>

namespace labrun::kv_cache::kernels {

namespace {

constexpr int kBlock = 256;  // threads per block of every kv_cache kernel

// Most blocks one launch uses; grid-stride loops cover the rest.
constexpr std::int64_t kMaxBlocks = std::int64_t{1} << 20;
constexpr int kMaxGridY = 65535;

template <class U>
__global__ void __launch_bounds__(kBlock)
    concat_kernel(const U* __restrict__ old, const U* __restrict__ tok, U* __restrict__ out, std::int64_t rows,
                  std::int64_t n, std::int64_t w) {
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
__global__ void __launch_bounds__(kBlock)
    write_slot_kernel(const U* __restrict__ tok, U* __restrict__ cache, std::int64_t rows, std::int64_t capacity,
                      std::int64_t t, std::int64_t w) {
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

__global__ void __launch_bounds__(kBlock)
    generate_kernel(Format f, int elem_bytes, std::int64_t rows, std::int64_t n0, std::int64_t n1, std::int64_t D,
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

namespace {

// One concat step (torch.cat along the token axis): out [rows][n + 1][D] from old [rows][n][D] and the token
// tok [rows][D]: out row r = old row r, then tok row r. One kernel; reads (n + 1)·rows·D elements, writes as many.
// `out` must not overlap `old` or `tok`.
void concat_step(std::size_t elem_bytes, const void* old, const void* tok, void* out, std::int64_t rows, std::int64_t n,
                 std::int64_t D, cudaStream_t stream) {
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

// One preallocated step: cache[r][t][:] = tok[r][:] for every row r, the cache at row stride `capacity` tokens.
// One kernel; reads and writes rows·D elements.
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

}  // namespace

}  // namespace labrun::kv_cache::kernels

namespace labrun::kv_cache {

namespace {

// A variant's setup, returning its iteration: the arrays and the bytes of the mark resolved once per point.
Step launcher(Launch& setup) {
  const Params p = params_of(setup.args());
  const std::size_t s = dtype_bytes(p.dtype);
  const std::int64_t rows = p.rows(), D = p.head_dim, S = p.steps(), n0 = p.n0, n1 = p.n1;
  const std::size_t token_bytes = static_cast<std::size_t>(p.token_elements()) * s;
  const void* prefill = setup.in("prefill").data;
  const auto* tokens = setup.in("tokens").as<const char>();
  void* cache = setup.out("cache").data;
  const double bytes = cost(p).bytes;
  if (p.variant == Variant::concat) {
    void* other = setup.out("other").data;
    // Step i writes the buffer the next step reads; the last step writes `cache`.
    auto buffer = [=](std::int64_t i) { return (S - 1 - i) % 2 == 0 ? cache : other; };
    return [=](Launch& l) {
      for (std::int64_t i = 0; i < S; ++i) {
        const std::int64_t n = n0 + i;  // tokens in the old cache
        const void* old = i == 0 ? prefill : buffer(i - 1);
        kernels::concat_step(s, old, tokens + i * token_bytes, buffer(i), rows, n, D, l.stream());
      }
      // One mark for the whole generation: per-step marks would give the breakdown n1 − n0 entries.
      l.mark("cat_steps", bytes);
    };
  }
  return [=](Launch& l) {
    for (std::int64_t i = 0; i < S; ++i)
      kernels::write_slot(s, tokens + i * token_bytes, cache, rows, n1, n0 + i, D, l.stream());
    l.mark("write_slot_steps", bytes);
  };
}

}  // namespace

LABRUN_CUDA_VARIANTS(kv_cache) {
  e.cuda("concat", launcher).cuda("preallocated", launcher);
  // The inputs are generated on the device from the seed, bit for bit as generate() on the host.
  e.generate_on_device([](Launch& l, std::uint64_t seed) {
    const Params p = params_of(l.args());
    kernels::generate(format_of(p.dtype), p.rows(), p.n0, p.n1, p.head_dim, seed, l.in("prefill").data,
                      l.in("tokens").data, l.stream());
    return true;
  });
}

}  // namespace labrun::kv_cache
