// Test helpers of the attention experiment, shared by the host and GPU tests.
#pragma once

#include <cstdint>
#include <string>

#include "point_test.hpp"

namespace labrun::test_attention {

/// An attention point: batch b, heads h, sequence length s, head dimension d, causal 0 or 1, hot L2.
inline Point point(const std::string& variant, std::int64_t b, std::int64_t h, std::int64_t s, std::int64_t d,
                   std::int64_t causal, const std::string& mode = "eager") {
  return test::hot_point("attention", variant,
                         {{"seq", s}, {"batch", b}, {"heads", h}, {"head_dim", d}, {"causal", causal}}, mode);
}

}  // namespace labrun::test_attention
