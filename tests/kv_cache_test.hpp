// The kv_cache point both the host tests (test_kv_cache.cpp) and the GPU tests (gpu/test_kv_cache_gpu.cpp) build.
#pragma once

#include <cstdint>
#include <string>

#include "point_test.hpp"

namespace labrun::test {

/// A kv_cache point at hot L2: `batch` sequences, `layers` layers of `kv_heads` heads of `head_dim` elements, the
/// cache grown from `n0` to `n1` tokens, in `dtype` ("bf16", "f16", "f32") and `mode` ("eager", "graph").
inline Point kv_cache_point(const std::string& variant, std::int64_t n0, std::int64_t n1, const std::string& dtype,
                            const std::string& mode, std::int64_t layers, std::int64_t kv_heads, std::int64_t head_dim,
                            std::int64_t batch) {
  return hot_point("kv_cache", variant,
                   {{"batch", batch},
                    {"layers", layers},
                    {"kv_heads", kv_heads},
                    {"head_dim", head_dim},
                    {"n0", n0},
                    {"n1", n1},
                    {"dtype", dtype}},
                   mode);
}

}  // namespace labrun::test
