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

/// One kernel, copy or memset that an audited eager iteration put on the GPU, as CUPTI's activity records time it
/// (`launches[]`, docs/integrity.md "The audit"): the variant's own work and a library's (cuBLAS, CUB) alike, whether
/// or not the variant marked it with Launch::mark.
struct LaunchTime {
  std::string name;  ///< a kernel's demangled name without its parameters; "memcpy DtoH", "memset", ...
  std::string kind;  ///< "kernel", "memcpy" or "memset"
  /// "lab" (the lab's stream), "legacy default", "per-thread default", a stream of the variant's in hex ("0x5581c0"),
  /// or "" when no recorded call launched it.
  std::string stream;
  std::string grid;   ///< a kernel's grid, "X x Y x Z" written "128x1x1"; "" for copies and memsets
  std::string block;  ///< a kernel's block, as grid
  double bytes = std::numeric_limits<double>::quiet_NaN();   ///< a copy's or memset's bytes; NaN for kernels
  double time_s = std::numeric_limits<double>::quiet_NaN();  ///< GPU time, end minus start, seconds
};

}  // namespace labrun
