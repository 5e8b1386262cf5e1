// Deterministic parallel loops for host-side input generation and references.
#pragma once

#include <sched.h>

#include <algorithm>
#include <cstdint>
#include <thread>
#include <utility>
#include <vector>

#include <labrun/counter_rng.hpp>

namespace labrun {

/// The CPUs this process may run on, read once, before anything pins the main thread (pin_this_thread()).
inline const cpu_set_t& process_cpu_mask() {
  static const cpu_set_t mask = [] {
    cpu_set_t m;
    CPU_ZERO(&m);
    if (sched_getaffinity(0, sizeof m, &m) != 0)
      for (int i = 0; i < CPU_SETSIZE; ++i) CPU_SET(i, &m);
    return m;
  }();
  return mask;
}

/// Pins the calling thread to the CPU it is on now and returns that CPU (-1 if it could not). Launch-bound
/// timings depend on the host core that issues the launches; pinning keeps it the same for a whole run.
inline int pin_this_thread() {
  (void)process_cpu_mask();
  const int cpu = sched_getcpu();
  if (cpu < 0) return -1;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  return sched_setaffinity(0, sizeof one, &one) == 0 ? cpu : -1;
}

/// The split of parallel_chunks and parallel_rows when none is given: 64 chunks, on any machine (enough to keep
/// 64 threads busy; fixed, so per-chunk results combined in chunk order are the same bits everywhere).
inline constexpr int kDefaultChunks = 64;

/// Calls fn(chunk, begin, end) for `chunks` contiguous slices of [0, n), on up to hardware_concurrency
/// threads. The split depends on n and `chunks` only, never on the thread count, so per-chunk results
/// combined in chunk order are bit-identical on every machine.
template <class Fn>
void parallel_chunks(std::int64_t n, int chunks, Fn&& fn) {
  const std::int64_t per = (n + chunks - 1) / chunks;
  const unsigned threads = std::max(1u, std::min<unsigned>(std::thread::hardware_concurrency(), chunks));
  if (n < (1 << 16) || threads == 1) {
    for (int c = 0; c < chunks; ++c) fn(c, std::min(n, c * per), std::min(n, (c + 1) * per));
    return;
  }
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < threads; ++t)
    pool.emplace_back([&, t] {
      // Workers run on every CPU of the process even when the issuing thread is pinned.
      sched_setaffinity(0, sizeof(cpu_set_t), &process_cpu_mask());
      for (int c = static_cast<int>(t); c < chunks; c += static_cast<int>(threads))
        fn(c, std::min(n, c * per), std::min(n, (c + 1) * per));
    });
  for (auto& th : pool) th.join();
}

/// parallel_chunks with the default split (kDefaultChunks).
template <class Fn>
void parallel_chunks(std::int64_t n, Fn&& fn) {
  parallel_chunks(n, kDefaultChunks, std::forward<Fn>(fn));
}

/// Fills out[0, n) with element i = T(uniform_at(seed, i, lo, hi)), uniform in [lo, hi) (a float type T may round
/// up to hi), in parallel: the same values on every machine and thread count. `out`: n elements of an arithmetic T.
template <class T>
void fill_uniform(T* out, std::int64_t n, std::uint64_t seed, double lo, double hi) {
  parallel_chunks(n, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) out[i] = static_cast<T>(uniform_at(seed, i, lo, hi));
  });
}

/// Calls fn(chunk, first_row, end_row) over whole rows of `cols` elements, split by elements so that a few long
/// rows still spread over the threads: chunk k of `chunks` takes the rows whose first element lies in its slice of
/// [0, rows * cols) (parallel_chunks). The split depends only on the shape, so per-chunk results combined in order
/// are identical on every machine. cols <= 0: chunk 0 takes every row, the others none.
template <class Fn>
void parallel_rows(std::int64_t rows, std::int64_t cols, int chunks, Fn&& fn) {
  if (cols <= 0) {
    for (int k = 0; k < chunks; ++k) fn(k, k == 0 ? 0 : rows, rows);
    return;
  }
  parallel_chunks(rows * cols, chunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    fn(chunk, std::min(rows, (begin + cols - 1) / cols), std::min(rows, (end + cols - 1) / cols));
  });
}

/// parallel_rows with the default split (kDefaultChunks).
template <class Fn>
void parallel_rows(std::int64_t rows, std::int64_t cols, Fn&& fn) {
  parallel_rows(rows, cols, kDefaultChunks, std::forward<Fn>(fn));
}

}  // namespace labrun
