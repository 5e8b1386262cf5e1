#include "guards.hpp"

#include <algorithm>
#include <cstring>
#include <vector>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>

namespace labrun {

GuardScan scan_guards(const FencedArray& array, const std::uint8_t* before, const std::uint8_t* after) {
  GuardScan scan;
  const std::size_t after_bytes = array.after_guard_bytes();
  for (std::size_t k = 0; k < after_bytes && !scan.after_first; ++k)
    if (after[k] != kGuardByte) scan.after_first = k;
  for (std::size_t k = kGuardBytes; k-- > 0 && !scan.before_last;)
    if (before[k] != kGuardByte) scan.before_last = k;
  return scan;
}

std::optional<std::string> guard_write_reason(const FencedArray& array, const GuardScan& scan) {
  const auto elem = static_cast<std::int64_t>(array.raw ? 1 : std::max<std::size_t>(array.elem_bytes, 1));
  const std::string unit = array.raw ? " byte " : " element ";
  if (scan.after_first) {
    const auto byte = static_cast<std::int64_t>(array.bytes + *scan.after_first);
    return "wrote past the end of " + array.name + " (first at" + unit + std::to_string(byte / elem) + ")";
  }
  if (scan.before_last) {
    const auto byte = static_cast<std::int64_t>(*scan.before_last) - static_cast<std::int64_t>(kGuardBytes);  // < 0
    const std::int64_t element = (byte - elem + 1) / elem;                                                    // floor
    return "wrote before the start of " + array.name + " (nearest at" + unit + std::to_string(element) + ")";
  }
  return std::nullopt;
}

std::optional<std::string> guard_write(const FencedArray& array, const std::uint8_t* before,
                                       const std::uint8_t* after) {
  return guard_write_reason(array, scan_guards(array, before, after));
}

std::uint64_t content_hash(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  const auto words = static_cast<std::int64_t>((bytes + 7) / 8);
  constexpr int kChunks = 64;
  std::vector<std::uint64_t> part(kChunks, 0);
  parallel_chunks(words, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    std::uint64_t s = 0;
    for (std::int64_t i = begin; i < end; ++i) {
      std::uint64_t w = 0;
      const std::size_t at = static_cast<std::size_t>(i) * 8;
      std::memcpy(&w, p + at, std::min<std::size_t>(8, bytes - at));
      s += splitmix64(w ^ splitmix64(static_cast<std::uint64_t>(i)));
    }
    part[static_cast<std::size_t>(chunk)] = s;
  });
  std::uint64_t sum = 0;
  for (const std::uint64_t s : part) sum += s;
  return sum;
}

std::optional<std::int64_t> first_difference(const void* a, const void* b, std::int64_t count, std::size_t elem_bytes) {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  const std::size_t bytes = static_cast<std::size_t>(count) * elem_bytes;
  // Whole blocks by memcmp first: an input of gigabytes is compared at memory speed.
  constexpr std::size_t kBlock = std::size_t{1} << 16;
  for (std::size_t at = 0; at < bytes; at += kBlock) {
    const std::size_t n = std::min(kBlock, bytes - at);
    if (std::memcmp(x + at, y + at, n) == 0) continue;
    for (std::size_t k = at; k < at + n; ++k)
      if (x[k] != y[k]) return static_cast<std::int64_t>(k / std::max<std::size_t>(elem_bytes, 1));
  }
  return std::nullopt;
}

std::string input_change_reason(const std::string& input, std::optional<std::int64_t> element) {
  return "changed input " + input + (element ? " at element " + std::to_string(*element) : std::string());
}

std::uint64_t recheck_lab_seed(std::uint64_t lab_seed) {
  return splitmix64(lab_seed ^ 0x7265636865636b21ull);  // "recheck!"
}

}  // namespace labrun
