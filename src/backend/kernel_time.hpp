// One op's share of an eager iteration, as a backend attributes it (Backend::kernel_breakdown); the record writes
// it as `kernels[]` (its JSON codec is in src/records/point_record.hpp).
#pragma once

#include <limits>
#include <string>

namespace labrun {

/// One op of the eager per-kernel breakdown (`kernels[]`). NaN stands for a quantity the op does not have.
struct KernelTime {
  std::string op;                                            ///< the op's name, as the workload marked it
  double bytes = std::numeric_limits<double>::quiet_NaN();   ///< bytes the op moves
  double time_s = std::numeric_limits<double>::quiet_NaN();  ///< median over the breakdown's repetitions, seconds
  /// bytes / time_s in bytes per second; NaN where time_s is not positive (written as null).
  double bandwidth_Bps = std::numeric_limits<double>::quiet_NaN();
};

}  // namespace labrun
