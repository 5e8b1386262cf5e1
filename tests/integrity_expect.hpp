// What labrun must say of each variant of the integrity test aid (tests/aids/integrity/integrity.hpp), on either
// backend and in either mode: shared by the host tests (test_integrity.cpp) and the GPU tests
// (gpu/test_integrity_gpu.cpp), which run tests/aids/integrity.yaml with labrun_testaid and hold every point to it.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "integrity/integrity.hpp"
#include "record.hpp"

namespace labrun::test {

/// The reason a planted fault must be named with (a part of it), "" for a correct variant.
inline std::string expected_reason(integrity_aid::Fault f, std::int64_t n) {
  using F = integrity_aid::Fault;
  const std::string end = std::to_string(n);
  switch (f) {
    case F::none: return "";
    case F::past_end: return "wrote past the end of y (first at element " + end + ")";
    case F::before_start: return "wrote before the start of y (nearest at element -1)";
    case F::scratch_guard: return "wrote past the end of work (first at element " + end + ")";
    case F::allocated_guard: return "wrote past the end of memory from Launch::allocate #1";
    case F::writes_input: return "changed input x at element 0 (found after the correctness iteration)";
    case F::writes_input_late: return "changed input x at element 0 (found after timing)";
    case F::replays_cache:
    case F::setup_work: return "re-check on fresh inputs failed: y[";
    case F::tail_unwritten: return "y[" + std::to_string(n - 1) + "] = nan";
  }
  return "?";
}

/// The point lines of the result file `path`, in file order.
inline std::vector<Json> points_of(const std::string& path) {
  std::vector<Json> points;
  for (const Json& r : read_jsonl(path))
    if (r.value("type", "") == "point") points.push_back(r);
  return points;
}

/// The aid's row of `variant`, or nullptr.
inline const integrity_aid::Row* aid_row(const std::string& variant) {
  for (const auto& row : integrity_aid::kVariants)
    if (variant == row.name) return &row;
  return nullptr;
}

/// Holds every point line of `points` to what labrun must say (expected_reason): a planted fault `incorrect` with its
/// cause, every correct variant `ok` with every check passed; nothing crashed. `modes`: the modes that must run
/// (points of another mode may be not_supported). Returns the number of points held.
inline int expect_aid_points(const std::vector<Json>& points, const std::vector<std::string>& modes) {
  int held = 0;
  for (const Json& p : points) {
    if (p.value("type", "") != "point") continue;
    const std::string variant = p["variant"];
    const std::string mode = p["axes"].value("mode", "eager");
    const std::int64_t n = p["axes"]["n"];
    bool runs = false;
    for (const auto& m : modes) runs = runs || m == mode;
    const std::string where = variant + " n=" + std::to_string(n) + " " + mode;
    if (!runs) {
      EXPECT_EQ(p["status"], "not_supported") << where;
      continue;
    }
    const integrity_aid::Row* row = aid_row(variant);
    if (!row) {
      ADD_FAILURE() << "no such aid variant: " << where;
      continue;
    }
    ++held;
    const std::string reason = p["reason"].is_string() ? p["reason"].get<std::string>() : "";
    const std::string expected = expected_reason(row->fault, n);
    if (expected.empty()) {
      EXPECT_EQ(p["status"], "ok") << where << ": " << reason;
      for (const char* check : {"fences", "inputs", "recheck"})
        EXPECT_EQ(p["integrity"][check]["state"], "passed") << where << " " << check;
    } else {
      EXPECT_EQ(p["status"], "incorrect") << where << ": " << reason;
      EXPECT_NE(reason.find(expected), std::string::npos)
          << where << ": \"" << reason << "\" lacks \"" << expected << "\"";
    }
  }
  return held;
}

}  // namespace labrun::test
