// The loop the experiments' host suites ran again and again: every host variant's check, as the lab runs it, at
// every dtype and shape, expected to pass (gemv, softmax, layout).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "check_outcome.hpp"
#include "test_util.hpp"

namespace labrun::test {

/// For each dtype of `dtypes`, (rows, cols) pair of `shapes` (element counts) and host variant of `variants`: builds
/// the inputs `generate(rows, cols, dtype)` once per dtype and shape, runs the experiment's check of the variant as
/// the lab runs it, `check(variant, inputs)` (a CheckOutcome), expects it to pass (printing its detail when it does
/// not) and hands it to `more(outcome, variant, rows, cols)` for the experiment's own expectations; all under a
/// SCOPED_TRACE "VARIANT DTYPE ROWSxCOLS" (the variant named by its namespace's to_string). Throws whatever
/// `generate`, `check` or `more` throw; a failed expectation is a test failure, not an exception.
template <class DTypes, class Shapes, class Variants, class Generate, class Check, class More>
void expect_host_checks(const DTypes& dtypes, const Shapes& shapes, const Variants& variants, Generate generate,
                        Check check, More more) {
  for (DType t : dtypes)
    for (const auto& [rows, cols] : shapes) {
      const auto in = generate(rows, cols, t);
      for (const auto v : variants) {
        SCOPED_TRACE(std::string(to_string(v)) + " " + to_string(t) + " " + std::to_string(rows) + "x" +
                     std::to_string(cols));
        const CheckOutcome c = check(v, in);
        EXPECT_TRUE(c.passed()) << detail_of(c).dump();
        more(c, v, rows, cols);
      }
    }
}

}  // namespace labrun::test
