#include "rank/cuda/rank_kernels.cuh"

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/block/block_store.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <labrun/cuda.cuh>
#include <labrun/kernels/occupancy.cuh>

namespace labrun::rank::kernels {

namespace {

// The mask byte widened to int64: the scan's and the count's accumulation type (a count over up to 4e9
// elements overflows int32).
struct Widen {
  __host__ __device__ std::int64_t operator()(std::uint8_t m) const { return static_cast<std::int64_t>(m); }
};
using MaskIt = thrust::transform_iterator<Widen, const std::uint8_t*, std::int64_t, std::int64_t>;
MaskIt widened(const std::uint8_t* mask) { return MaskIt(mask, Widen{}); }

// Enough blocks for `per_thread` items per thread, at least 1, at most 8 per SM (then grid-stride).
int grid_for(std::int64_t items, std::int64_t per_thread, int sm_count) {
  const std::int64_t per_block = static_cast<std::int64_t>(kBlock) * per_thread;
  const std::int64_t blocks = (items + per_block - 1) / per_block;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(blocks, 8LL * sm_count)));
}

__global__ void __launch_bounds__(kBlock) fill_kernel(std::int64_t* out, std::int64_t value, std::int64_t n) {
  const std::int64_t vectors = n / 2;
  auto* ov = reinterpret_cast<longlong2*>(out);
  const longlong2 v = make_longlong2(value, value);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < vectors; i += stride)
    ov[i] = v;
  if (blockIdx.x == 0 && threadIdx.x == 0 && (n & 1)) out[n - 1] = value;
}

__global__ void __launch_bounds__(kBlock) arange_kernel(std::int64_t* out, std::int64_t count) {
  const std::int64_t vectors = count / 2;
  auto* ov = reinterpret_cast<longlong2*>(out);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < vectors; i += stride)
    ov[i] = make_longlong2(2 * i, 2 * i + 1);
  if (blockIdx.x == 0 && threadIdx.x == 0 && (count & 1)) out[count - 1] = count - 1;
}

__global__ void __launch_bounds__(kBlock)
    scatter_kernel(std::int64_t* out, const std::int64_t* idx, const std::int64_t* values, std::int64_t count) {
  const std::int64_t vectors = count / 2;
  const auto* iv = reinterpret_cast<const longlong2*>(idx);
  const auto* vv = reinterpret_cast<const longlong2*>(values);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * kBlock;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * kBlock + threadIdx.x; i < vectors; i += stride) {
    const longlong2 at = iv[i], v = vv[i];
    out[at.x] = v.x;
    out[at.y] = v.y;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0 && (count & 1)) out[idx[count - 1]] = values[count - 1];
}

// Elements per tile of select_rank: one 16-byte mask vector per thread.
constexpr int kTile = 16 * kBlock;
// int64 pairs (16-byte vectors of s and out) per thread per tile.
constexpr int kPairs = kTile / 2 / kBlock;

// Tiles of kTile elements, grid-stride over a grid of exactly the blocks that are resident at once
// (select_rank_grid): every block runs the same number of tiles, give or take one, and none waits for a second
// wave while others idle. The last, partial tile is done element by element by the last block.
__global__ void __launch_bounds__(kBlock)
    select_rank_kernel(const std::uint8_t* mask, const std::int64_t* s, std::int64_t* out, std::int64_t n) {
  __shared__ uint4 tile_mask[kBlock];  // kTile bytes
  const auto* pair_mask = reinterpret_cast<const unsigned short*>(tile_mask);
  const std::int64_t tiles = n / kTile;
  for (std::int64_t tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    const std::int64_t base = tile * kTile;
    tile_mask[threadIdx.x] = reinterpret_cast<const uint4*>(mask + base)[threadIdx.x];
    const auto* sv = reinterpret_cast<const longlong2*>(s + base);
    auto* ov = reinterpret_cast<longlong2*>(out + base);
    longlong2 v[kPairs];
#pragma unroll
    for (int k = 0; k < kPairs; ++k) v[k] = sv[k * kBlock + threadIdx.x];  // coalesced: a warp reads 512 B
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kPairs; ++k) {
      const int p = k * kBlock + threadIdx.x;
      const unsigned short m = pair_mask[p];  // the mask bytes of elements 2p and 2p + 1 of the tile
      ov[p] = make_longlong2((m & 0xff) ? v[k].x - 1 : -1, (m >> 8) ? v[k].y - 1 : -1);
    }
    __syncthreads();  // before the next tile overwrites tile_mask
  }
  if (blockIdx.x == gridDim.x - 1)
    for (std::int64_t i = tiles * kTile + threadIdx.x; i < n; i += kBlock) out[i] = mask[i] ? s[i] - 1 : -1;
}

// fused: one single-pass scan with decoupled look-back (Merrill & Garland, "Single-pass Parallel Prefix Scan
// with Decoupled Look-back", NVIDIA 2016; CUB's TilePrefixCallbackOp and ScanTileState). A tile is one 16-byte
// vector of mask bytes per thread: each thread counts its 16 bytes, the block scans the counts with the tiles
// before it as prefix, and each thread writes its 16 ranks, transposed through shared memory so every warp
// store is 256 contiguous bytes. The mask is read once (16-byte loads) and the output written once: 9n bytes.
using TileState = cub::ScanTileState<std::int64_t>;
constexpr int kFusedItems = 16;
constexpr int kFusedTile = kFusedItems * kBlock;

__global__ void fused_init_kernel(TileState state, int tiles) { state.InitializeStatus(tiles); }

__global__ void __launch_bounds__(kBlock)
    fused_rank_kernel(const std::uint8_t* __restrict__ mask, std::int64_t* __restrict__ out, std::int64_t n,
                      TileState state) {
  using BlockScan = cub::BlockScan<std::int64_t, kBlock, cub::BLOCK_SCAN_WARP_SCANS>;
  using Prefix = cub::TilePrefixCallbackOp<std::int64_t, ::cuda::std::plus<>, TileState>;
  using Store = cub::BlockStore<std::int64_t, kBlock, kFusedItems, cub::BLOCK_STORE_WARP_TRANSPOSE>;
  __shared__ union {
    typename BlockScan::TempStorage scan;
    typename Store::TempStorage store;
  } smem;
  __shared__ typename Prefix::TempStorage prefix;
  const int tile = static_cast<int>(blockIdx.x);
  const std::int64_t base = static_cast<std::int64_t>(tile) * kFusedTile;
  const std::int64_t valid = n - base < kFusedTile ? n - base : kFusedTile;
  std::uint8_t m[kFusedItems];
  if (valid == kFusedTile) {
    const uint4 v = reinterpret_cast<const uint4*>(mask + base)[threadIdx.x];
    const unsigned int words[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
    for (int j = 0; j < kFusedItems; ++j) m[j] = static_cast<std::uint8_t>((words[j / 4] >> (8 * (j % 4))) & 0xff);
  } else {
#pragma unroll
    for (int j = 0; j < kFusedItems; ++j) {
      const std::int64_t i = static_cast<std::int64_t>(threadIdx.x) * kFusedItems + j;
      m[j] = i < valid ? mask[base + i] : 0;
    }
  }
  std::int64_t count = 0;
#pragma unroll
  for (int j = 0; j < kFusedItems; ++j) count += m[j];
  std::int64_t rank = 0;
  if (tile == 0) {
    std::int64_t aggregate = 0;
    BlockScan(smem.scan).ExclusiveSum(count, rank, aggregate);
    if (threadIdx.x == 0) state.SetInclusive(0, aggregate);
  } else {
    Prefix look_back(state, prefix, ::cuda::std::plus<>{}, tile);
    BlockScan(smem.scan).ExclusiveSum(count, rank, look_back);
  }
  __syncthreads();  // the store reuses the scan's shared memory
  std::int64_t r[kFusedItems];
#pragma unroll
  for (int j = 0; j < kFusedItems; ++j) {
    r[j] = m[j] ? rank : std::int64_t{-1};
    rank += m[j];
  }
  if (valid == kFusedTile) Store(smem.store).Store(out + base, r);
  else Store(smem.store).Store(out + base, r, static_cast<int>(valid));
}

std::int64_t fused_tiles(std::int64_t n) { return (n + kFusedTile - 1) / kFusedTile; }

/// CUB's two-phase call, `op(temp, bytes)`: with temp null it sets the temporary storage it needs, returned here as
/// at least 16 bytes (an empty input still gets a valid pointer); cub_launch runs it on `temp` (its stream is in op).
template <class Op>
std::size_t cub_temp_bytes(Op&& op) {
  std::size_t bytes = 0;
  LABRUN_CUDA_CHECK(op(nullptr, bytes));
  return std::max<std::size_t>(bytes, 16);
}
template <class Op>
void cub_launch(void* temp, std::size_t temp_bytes, Op&& op) {
  std::size_t bytes = temp_bytes;
  LABRUN_CUDA_CHECK(op(temp, bytes));
  LABRUN_CUDA_LAUNCHED();
}

// Each CUB algorithm written once, as op(temp, bytes) for cub_temp_bytes (sizing: null arrays, where the element
// count alone sets CUB's temporary storage) and for cub_launch (the real arrays and stream).
auto count_op(const std::uint8_t* mask, std::int64_t n, std::int64_t* result, cudaStream_t stream = nullptr) {
  return [=](void* t, std::size_t& b) { return cub::DeviceReduce::Sum(t, b, widened(mask), result, n, stream); };
}
auto select_op(const std::uint8_t* mask, std::int64_t n, std::int64_t* idx, std::int64_t* selected,
               cudaStream_t stream = nullptr) {
  return [=](void* t, std::size_t& b) {
    return cub::DeviceSelect::Flagged(t, b, thrust::counting_iterator<std::int64_t>(0), mask, idx, selected, n, stream);
  };
}
auto scan_op(const std::uint8_t* mask, std::int64_t n, std::int64_t* s, cudaStream_t stream = nullptr) {
  return [=](void* t, std::size_t& b) { return cub::DeviceScan::InclusiveSum(t, b, widened(mask), s, n, stream); };
}

}  // namespace

void fill(std::int64_t* out, std::int64_t value, std::int64_t n, int sm, cudaStream_t stream) {
  if (n <= 0) return;
  fill_kernel<<<grid_for(n / 2 + 1, 1, sm), kBlock, 0, stream>>>(out, value, n);
  LABRUN_CUDA_LAUNCHED();
}

void arange(std::int64_t* out, std::int64_t count, int sm, cudaStream_t stream) {
  if (count <= 0) return;
  arange_kernel<<<grid_for(count / 2 + 1, 1, sm), kBlock, 0, stream>>>(out, count);
  LABRUN_CUDA_LAUNCHED();
}

void scatter(std::int64_t* out, const std::int64_t* idx, const std::int64_t* values, std::int64_t count, int sm,
             cudaStream_t stream) {
  if (count <= 0) return;
  scatter_kernel<<<grid_for(count / 2 + 1, 1, sm), kBlock, 0, stream>>>(out, idx, values, count);
  LABRUN_CUDA_LAUNCHED();
}

std::size_t count_temp_bytes(std::int64_t n) { return cub_temp_bytes(count_op(nullptr, n, nullptr)); }

void count(const std::uint8_t* mask, std::int64_t n, std::int64_t* result, void* temp, std::size_t temp_bytes,
           cudaStream_t stream) {
  cub_launch(temp, temp_bytes, count_op(mask, n, result, stream));
}

std::size_t select_temp_bytes(std::int64_t n) { return cub_temp_bytes(select_op(nullptr, n, nullptr, nullptr)); }

void select_indices(const std::uint8_t* mask, std::int64_t n, std::int64_t* idx, std::int64_t* selected, void* temp,
                    std::size_t temp_bytes, cudaStream_t stream) {
  cub_launch(temp, temp_bytes, select_op(mask, n, idx, selected, stream));
}

std::size_t scan_temp_bytes(std::int64_t n) { return cub_temp_bytes(scan_op(nullptr, n, nullptr)); }

void inclusive_count(const std::uint8_t* mask, std::int64_t n, std::int64_t* s, void* temp, std::size_t temp_bytes,
                     cudaStream_t stream) {
  if (n <= 0) return;
  cub_launch(temp, temp_bytes, scan_op(mask, n, s, stream));
}

int select_rank_grid(std::int64_t n, int sm_count) {
  const int per_sm = ::labrun::kernels::resident_blocks<&select_rank_kernel, kBlock>();
  const std::int64_t tiles = std::max<std::int64_t>(1, n / kTile);
  return static_cast<int>(std::min<std::int64_t>(tiles, static_cast<std::int64_t>(per_sm) * sm_count));
}

void select_rank(const std::uint8_t* mask, const std::int64_t* s, std::int64_t* out, std::int64_t n, int grid,
                 cudaStream_t stream) {
  if (n <= 0) return;
  select_rank_kernel<<<std::max(grid, 1), kBlock, 0, stream>>>(mask, s, out, n);
  LABRUN_CUDA_LAUNCHED();
}

std::size_t fused_temp_bytes(std::int64_t n) {
  std::size_t bytes = 0;
  LABRUN_CUDA_CHECK(TileState::AllocationSize(static_cast<int>(std::max<std::int64_t>(1, fused_tiles(n))), bytes));
  return std::max<std::size_t>(bytes, 16);
}

void fused_rank(const std::uint8_t* mask, std::int64_t n, std::int64_t* out, void* temp, std::size_t temp_bytes,
                cudaStream_t stream) {
  if (n <= 0) return;
  const std::int64_t tiles = fused_tiles(n);
  if (tiles > std::numeric_limits<int>::max()) throw std::invalid_argument("rank fused: too many tiles");
  TileState state;
  LABRUN_CUDA_CHECK(state.Init(static_cast<int>(tiles), temp, temp_bytes));
  const int init_blocks = static_cast<int>((tiles + kBlock - 1) / kBlock);
  fused_init_kernel<<<init_blocks, kBlock, 0, stream>>>(state, static_cast<int>(tiles));
  LABRUN_CUDA_LAUNCHED();
  fused_rank_kernel<<<static_cast<unsigned int>(tiles), kBlock, 0, stream>>>(mask, out, n, state);
  LABRUN_CUDA_LAUNCHED();
}

}  // namespace labrun::rank::kernels
