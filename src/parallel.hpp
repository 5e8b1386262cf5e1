// Deterministic parallel loops for host-side input generation and references.
#pragma once

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace labrun {

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
      for (int c = static_cast<int>(t); c < chunks; c += static_cast<int>(threads))
        fn(c, std::min(n, c * per), std::min(n, (c + 1) * per));
    });
  for (auto& th : pool) th.join();
}

}  // namespace labrun
