// Hopper (sm_90a) tensor-core building blocks: mbarriers, TMA tile loads (cp.async.bulk.tensor) and their tensor
// maps, and warpgroup MMA (wgmma.mma_async) with shared-memory matrix descriptors for 128-byte-swizzled tiles.
// Header-only. The device functions compile only for sm_90a (nvcc -gencode arch=compute_90a,code=sm_90a): guard a
// kernel's body with `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, and launch it only on a device of compute capability
// 9.0 (is_sm90a_device()). Sources: the PTX ISA 8.x, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate"
// (wgmma, its register fragments and matrix descriptors), "mbarrier" and "cp.async.bulk.tensor"; the descriptor's
// bit fields as CUTLASS's cute::GmmaDescriptor (include/cute/arch/mma_sm90_desc.hpp) names them; the driver's
// cuTensorMapEncodeTiled (CUDA Driver API, "Tensor Map Object Management").
//
// Tile layout every descriptor here describes (what TMA writes with CU_TENSOR_MAP_SWIZZLE_128B for a box of 64 b16
// columns): a tile of rows of 128 bytes (64 bf16), row r at r * 128 B, its 16-byte chunk c at ((c ^ (r & 7)) * 16);
// the tile's base 1024-byte aligned (one swizzle atom is 8 rows x 128 B). A wider operand is several such tiles.
//
// Accumulator fragment of a 64 x N wgmma (f32, N / 2 registers a thread; PTX ISA, "Register fragment layout for
// wgmma .m64nNk16"): thread t of the warpgroup, warp w = t / 32, g = (t % 32) / 4, q = t % 4, holds element i at
// row 16 w + g + 8 ((i / 2) % 2), column 8 (i / 4) + 2 q + i % 2. The A operand from registers of a k16 step (4
// x bf16x2 a thread) has the same layout restricted to 16 columns, so the accumulator of one wgmma packed to bf16
// is the A operand of the next (FlashAttention-3's P = softmax(S) fed to P V).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace labrun::kernels {

// ---------------------------------------------------------------------------------------------- mbarrier

/// Initialises the mbarrier at shared address `bar` (8 bytes, 8-byte aligned) for `count` arrivals a phase.
/// Follow the initialisations with fence_mbarrier_init() and a __syncthreads().
__device__ __forceinline__ void mbar_init(std::uint32_t bar, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
/// Makes the initialised mbarriers visible to the async proxy (TMA) before its first use.
__device__ __forceinline__ void fence_mbarrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
/// One arrival that also expects `bytes` more transaction bytes (the TMA loads that complete on `bar`).
__device__ __forceinline__ void mbar_expect_tx(std::uint32_t bar, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
/// One arrival on `bar`.
__device__ __forceinline__ void mbar_arrive(std::uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
/// True when the phase of parity `parity` of `bar` has completed.
__device__ __forceinline__ bool mbar_try_wait(std::uint32_t bar, std::uint32_t parity) {
  std::uint32_t ok;
  asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(ok)
               : "r"(bar), "r"(parity)
               : "memory");
  return ok != 0;
}
/// Waits for the phase of parity `parity` of `bar`. A wait longer than `timeout_ns` (global timer) traps: a lost
/// arrival or a load that never lands fails the launch ("unspecified launch failure") instead of hanging the GPU.
__device__ __forceinline__ void mbar_wait(std::uint32_t bar, std::uint32_t parity,
                                          std::uint64_t timeout_ns = 4000000000ull) {
  if (mbar_try_wait(bar, parity)) return;
  std::uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t0));
  while (!mbar_try_wait(bar, parity)) {
    asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
    if (t - t0 > timeout_ns) __trap();  // no printf: a call in the kernel makes ptxas serialise every wgmma
  }
}

// ---------------------------------------------------------------------------------------------- TMA

/// Prefetches the tensor map (a __grid_constant__ kernel parameter) into the TMA unit's cache.
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<std::uint64_t>(map)) : "memory");
}
/// Loads the box at coordinates (c0, c1, c2) (innermost first, in elements) of the 3-D tensor `map` into shared
/// address `dst`; completes the box's bytes of the mbarrier `bar`'s transaction count. Coordinates past the tensor's
/// extent read as zeros (and still count their bytes).
__device__ __forceinline__ void tma_load_3d(std::uint32_t dst, const CUtensorMap* map, int c0, int c1, int c2,
                                            std::uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<std::uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(bar)
      : "memory");
}

/// True when device `device` runs sm_90a code (compute capability exactly 9.0: H100, H200).
inline bool is_sm90a_device(int device) {
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) return false;
  return major == 9 && minor == 0;
}

/// Encodes `map` for a [outer][rows][inner] row-major bf16 tensor at `base` (global, 16-byte aligned; inner * 2 a
/// multiple of 16) read in boxes of 64 inner elements x `box_rows` rows (1..256) x 1, 128-byte swizzled in shared
/// memory (the layout above), rows past `rows` zero-filled. The driver's cuTensorMapEncodeTiled is fetched through the
/// runtime (cudaGetDriverEntryPointByVersion, CUDA 12.5 or later; no -lcuda). Returns the driver's result (CUDA_SUCCESS
/// when encoded; CUDA_ERROR_NOT_FOUND when the entry point is missing).
inline CUresult encode_bf16_tensor_map_3d(CUtensorMap* map, const void* base, std::uint64_t inner, std::uint64_t rows,
                                          std::uint64_t outer, std::uint32_t box_rows) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      fn = nullptr;
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn);
  }();
  if (!encode) return CUDA_ERROR_NOT_FOUND;
  cuuint64_t dims[3] = {inner, rows, outer};
  cuuint64_t strides[2] = {inner * 2, rows * inner * 2};  // bytes, of dims 1 and 2
  cuuint32_t box[3] = {64, box_rows, 1};
  cuuint32_t unit[3] = {1, 1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, box, unit,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
}

// ---------------------------------------------------------------------------------------------- wgmma

/// Orders this thread's register accesses before the warpgroup's next wgmma (wgmma.fence).
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
/// Closes the group of wgmma issued since the last commit.
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
/// Waits until at most `Pending` committed wgmma groups of the warpgroup are in flight (groups retire in order).
template <int Pending>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
}
/// Keeps the compiler from moving accesses of an accumulator or operand register across a wgmma issue or wait
/// (CUTLASS's warpgroup_fence_operand).
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ __forceinline__ void fence_operand(std::uint32_t& r) { asm volatile("" : "+r"(r)::"memory"); }

/// Matrix descriptor of a 128-byte-swizzled operand at shared address `saddr` (cute::GmmaDescriptor: start >> 4
/// in bits 0-13, leading byte offset >> 4 in 16-29, stride byte offset >> 4 in 32-45, base offset 0 since every
/// swizzle atom is 1024-byte aligned, layout 1 = SWIZZLE_128B in bits 62-63). K-major (rows hold the reduction
/// dimension): `lbo` unused (16), `sbo` = 1024 (8 rows x 128 B); a k16 step inside a 64-column tile adds 32 B to
/// saddr. MN-major (rows hold the reduction dimension's successive values, the other dimension contiguous):
/// `lbo` = bytes between 64-column tiles, `sbo` = 1024 (8 rows); a k16 step adds 16 rows = 2048 B.
__device__ __forceinline__ std::uint64_t sw128_desc(std::uint32_t saddr, std::uint32_t lbo, std::uint32_t sbo) {
  return static_cast<std::uint64_t>((saddr & 0x3FFFF) >> 4) | (static_cast<std::uint64_t>((lbo >> 4) & 0x3FFF) << 16) |
         (static_cast<std::uint64_t>((sbo >> 4) & 0x3FFF) << 32) | (1ull << 62);
}

#define LABRUN_WGMMA_ACC64(d)                                                                                 \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), \
      "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),  \
      "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), \
      "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), "+f"(d[32]), \
      "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), \
      "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), \
      "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), "+f"(d[56]), \
      "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63])
#define LABRUN_WGMMA_D64                                                                                       \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
  "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, "  \
  "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"

/// d (64 x 128 f32) = A (64 x 16 bf16) · B (16 x 128 bf16) + (scale_d ? d : 0), both operands in shared memory and
/// K-major (descriptors da, db), issued asynchronously for the warpgroup (wgmma_commit, wgmma_wait).
__device__ __forceinline__ void wgmma_m64n128k16_ss(float (&d)[64], std::uint64_t da, std::uint64_t db, int scale_d) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " LABRUN_WGMMA_D64 ", %64, %65, p, 1, 1, 0, 0;\n}\n"
      : LABRUN_WGMMA_ACC64(d)
      : "l"(da), "l"(db), "r"(scale_d));
}
/// d (64 x 128 f32) += A (64 x 16 bf16, from registers a0..a3 in the fragment layout above) · B (16 x 128 bf16,
/// shared memory, MN-major: descriptor db, transposed by the instruction), issued asynchronously.
__device__ __forceinline__ void wgmma_m64n128k16_rs_mn(float (&d)[64], std::uint32_t a0, std::uint32_t a1,
                                                       std::uint32_t a2, std::uint32_t a3, std::uint64_t db) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %69, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 " LABRUN_WGMMA_D64
      ", {%64, %65, %66, %67}, %68, p, 1, 1, 1;\n}\n"
      : LABRUN_WGMMA_ACC64(d)
      : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "l"(db), "r"(1));
}

#undef LABRUN_WGMMA_ACC64
#undef LABRUN_WGMMA_D64

}  // namespace labrun::kernels
