// Warp-level tensor-core building blocks for sm_80 and later (Ampere, Ada, Hopper): asynchronous global -> shared
// copies (cp.async), shared -> register matrix loads (ldmatrix), the bf16 m16n8k16 MMA with f32 accumulation
// (mma.sync), and the XOR swizzle that lets ldmatrix read a row-major tile without bank conflicts. Header-only;
// compiles under nvcc's C++17 for sm_80 and later. Source of the instruction semantics and fragment layouts: the
// PTX ISA, "Warp-level matrix instructions" (mma.m16n8k16, ldmatrix) and "cp.async" (PTX ISA 8.x).
//
// Fragment layout of mma_bf16 (PTX ISA, "Matrix fragments for mma.m16n8k16"): lane l, g = l / 4, t = l % 4 holds
// the accumulator elements (row g, cols 2t, 2t + 1) in d[0], d[1] and (row g + 8, same cols) in d[2], d[3]; the
// A fragment a[0..3] holds A's (g, 2t..2t+1), (g + 8, 2t..), (g, 2t + 8..), (g + 8, 2t + 8..) as bf16 pairs, the
// low half the lower column; the B fragment b0, b1 holds B's (k = 2t..2t+1, n = g) and (k = 2t + 8.., n = g).
#pragma once

#include <cuda_bf16.h>

#include <cstring>

namespace labrun::kernels {

/// The shared-memory address of a generic pointer into shared memory (for the PTX instructions below).
__device__ __forceinline__ unsigned smem_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

/// Starts a 16-byte global -> shared copy (cp.async.cg: cached in L2 only); `src_bytes` 0 writes 16 zero bytes
/// instead (rows past the end of a tensor: `src` must still be a valid address, never read). dst and src 16-byte
/// aligned. Completes at cp_async_wait().
__device__ __forceinline__ void cp_async16(void* dst, const void* src, int src_bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(dst)), "l"(src), "r"(src_bytes)
               : "memory");
}
/// Closes the group of copies started since the last commit.
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
/// Waits until at most `Pending` committed groups of this thread are still in flight (0: all landed). The other
/// threads' copies are visible after a __syncthreads() that follows.
template <int Pending = 0>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending) : "memory");
}

/// Loads four 8x8 b16 matrices from shared memory: lane l gives the address of row l % 8 of matrix l / 8, and
/// receives one 32-bit pair of each matrix (r[i] from matrix i).
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}
/// ldmatrix_x4 with each 8x8 matrix transposed (a row-major [k][n] tile read as the column-major B operand).
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* p) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(p))
               : "memory");
}

/// d (16x8 f32) += A (16x16 bf16, row-major fragment a) · B (16x8 bf16, column-major fragment b0, b1).
__device__ __forceinline__ void mma_bf16_16816(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

/// Two floats rounded to bf16 (round to nearest even) in one 32-bit register: `lo` in the low half (the lower
/// column of an MMA fragment pair).
__device__ __forceinline__ unsigned pack_bf16(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  unsigned u;
  std::memcpy(&u, &h, sizeof u);
  return u;
}

/// Element offset of (row, col) in a row-major shared tile of `Cols` b16 elements a row (Cols a multiple of 64)
/// whose 16-byte chunks are XOR-swizzled by row % 8: the 8 row addresses of one ldmatrix 8x8 matrix (8
/// consecutive rows, one chunk column) fall in 8 different bank groups, so ldmatrix reads without conflicts.
template <int Cols>
__device__ __forceinline__ int swizzled(int row, int col) {
  static_assert(Cols % 64 == 0, "swizzled: a row must span at least 8 chunks of 16 bytes");
  return row * Cols + (((col >> 3) ^ (row & 7)) << 3) + (col & 7);
}

/// Copies rows [row0, row0 + Rows) of a row-major [rows][Cols] b16 global tensor (`rows` rows) into a swizzled
/// shared tile with cp_async16, `Threads` threads (threadIdx.x < Threads) sharing the 16-byte chunks; rows >= `rows`
/// are zero-filled (their source clamped to row rows - 1). Commit and wait are the caller's.
template <int Cols, int Rows, int Threads, class T>
__device__ __forceinline__ void load_tile_async(T* tile, const T* g, int row0, int rows) {
  static_assert(sizeof(T) == 2, "load_tile_async: b16 elements");
  constexpr int kChunks = Cols / 8;
#pragma unroll
  for (int c = static_cast<int>(threadIdx.x); c < Rows * kChunks; c += Threads) {
    const int r = c / kChunks, ch = c % kChunks, gr = row0 + r;
    const T* src = g + static_cast<std::size_t>(min(gr, rows - 1)) * Cols + ch * 8;
    cp_async16(tile + swizzled<Cols>(r, ch * 8), src, gr < rows ? 16 : 0);
  }
}

}  // namespace labrun::kernels
