// The expected fields of a cost model's Cost, checked by name: for the tests of each experiment's cost model.
#pragma once

#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <labrun/cost.hpp>

namespace labrun::test {

/// The fields of a Cost a test expects, in Cost's units (bytes, flop, counts per iteration); a field left out is not
/// checked. Written with designated initializers in Cost's order: `{.bytes_read = 4000, .launches = 1}`.
struct CostWant {
  std::optional<double> bytes_read, bytes_written, bytes, compulsory_bytes, flop, launches, host_syncs, peak_work_bytes;
};

/// Expects each field `want` names to equal `c`'s exactly (EXPECT_EQ); a failure names the field and `what`.
inline void expect_cost(const Cost& c, const CostWant& want, const std::string& what = "") {
  const auto field = [&](const char* name, double got, const std::optional<double>& expected) {
    if (expected) EXPECT_EQ(got, *expected) << name << " " << what;
  };
  field("bytes_read", c.bytes_read, want.bytes_read);
  field("bytes_written", c.bytes_written, want.bytes_written);
  field("bytes", c.bytes, want.bytes);
  field("compulsory_bytes", c.compulsory_bytes, want.compulsory_bytes);
  field("flop", c.flop, want.flop);
  field("launches", c.launches, want.launches);
  field("host_syncs", c.host_syncs, want.host_syncs);
  field("peak_work_bytes", c.peak_work_bytes, want.peak_work_bytes);
}

}  // namespace labrun::test
