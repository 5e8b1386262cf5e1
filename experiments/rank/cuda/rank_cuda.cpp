// The CUDA launchers of the rank experiment (LABRUN_CUDA_VARIANTS(rank)): each variant's setup takes what an
// iteration needs (case C12) — CUB's temporary storage, indexed_assign's device count and pinned host word,
// scan_select's grid — except indexed_assign's arange and index buffers, which an eager framework allocates per
// call from its caching allocator once the host knows the count: here they come from the stream-ordered pool
// (Launch::stream_alloc), as masking's `index` does.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include <labrun/experiment.hpp>

#include "rank/cuda/rank_kernels.cuh"
#include "rank/rank.hpp"

namespace labrun::rank {

namespace {

Step indexed_assign(Launch& setup) {
  const std::int64_t n = setup.args().i64("n");
  const std::size_t temp_bytes = std::max(kernels::count_temp_bytes(n), kernels::select_temp_bytes(n));
  void* temp = setup.allocate(temp_bytes);
  auto* count = static_cast<std::int64_t*>(setup.allocate(sizeof(std::int64_t)));
  auto* selected = static_cast<std::int64_t*>(setup.allocate(sizeof(std::int64_t)));
  auto* pinned = static_cast<std::int64_t*>(setup.allocate_pinned(sizeof(std::int64_t)));
  const auto* mask = setup.in("mask").as<const std::uint8_t>();
  auto* out = setup.out("out").as<std::int64_t>();
  return [=](Launch& l) {
    const double nn = static_cast<double>(n);
    const int sm = l.sm_count();
    cudaStream_t st = l.stream();
    // As eager `out.fill_(-1); out[mask] = torch.arange(mask.sum())` runs: the count sizes arange and the index
    // buffer, so the host must read it (the host synchronization), then allocate, then launch.
    kernels::fill(out, kMaskedOut, n, sm, st);
    l.mark("fill", 8 * nn);
    kernels::count(mask, n, count, temp, temp_bytes, st);
    l.mark("count", nn);
    l.read_to_host(pinned, count, sizeof(std::int64_t));
    l.mark("count_to_host", sizeof(std::int64_t));
    const std::int64_t c = *pinned;
    if (c < 0 || c > n) throw std::runtime_error("rank: device count " + std::to_string(c) + " outside [0, n]");
    const double cc = static_cast<double>(c);
    const auto ar = l.stream_alloc(static_cast<std::size_t>(8 * c));
    const auto idx = l.stream_alloc(static_cast<std::size_t>(8 * c));
    // The host's wake-up from the sync, the allocations and the next launch: not kernel time.
    l.mark("host_round_trip", 0);
    kernels::arange(static_cast<std::int64_t*>(ar.get()), c, sm, st);
    l.mark("arange", 8 * cc);
    kernels::select_indices(mask, n, static_cast<std::int64_t*>(idx.get()), selected, temp, temp_bytes, st);
    l.mark("select", nn + 8 * cc);
    kernels::scatter(out, static_cast<const std::int64_t*>(idx.get()), static_cast<const std::int64_t*>(ar.get()), c,
                     sm, st);
    l.mark("scatter", 24 * cc);
  };
}

Step scan_select(Launch& setup) {
  const std::int64_t n = setup.args().i64("n");
  const std::size_t temp_bytes = kernels::scan_temp_bytes(n);
  void* temp = setup.allocate(temp_bytes);
  const int grid = kernels::select_rank_grid(n, setup.sm_count());  // outside any capture
  const auto* mask = setup.in("mask").as<const std::uint8_t>();
  auto* out = setup.out("out").as<std::int64_t>();
  auto* s = setup.scratch("s").as<std::int64_t>();
  return [=](Launch& l) {
    const double nn = static_cast<double>(n);
    kernels::inclusive_count(mask, n, s, temp, temp_bytes, l.stream());
    l.mark("scan", 9 * nn);
    kernels::select_rank(mask, s, out, n, grid, l.stream());
    l.mark("select", 17 * nn);
  };
}

Step fused(Launch& setup) {
  const std::int64_t n = setup.args().i64("n");
  const std::size_t temp_bytes = kernels::fused_temp_bytes(n);
  void* temp = setup.allocate(temp_bytes);
  const auto* mask = setup.in("mask").as<const std::uint8_t>();
  auto* out = setup.out("out").as<std::int64_t>();
  return [=](Launch& l) {
    kernels::fused_rank(mask, n, out, temp, temp_bytes, l.stream());
    l.mark("scan", 9 * static_cast<double>(n));
  };
}

}  // namespace

LABRUN_CUDA_VARIANTS(rank) {
  e.cuda("indexed_assign", indexed_assign).cuda("scan_select", scan_select).cuda("fused", fused);
}

}  // namespace labrun::rank
