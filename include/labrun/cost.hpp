// The cost model of one iteration of a variant at a point: what the interpretation divides by the time.
#pragma once

#include <cmath>
#include <limits>

namespace labrun {

/// Compulsory and issued cost of one iteration, as the experiment's cost model counts it. NaN = not modelled.
/// Units: bytes (DRAM bytes as the variant's kernels issue them), flop (floating-point operations), counts.
struct Cost {
  static constexpr double kNone = std::numeric_limits<double>::quiet_NaN();
  double bytes_read = kNone;        ///< bytes the iteration's kernels read
  double bytes_written = kNone;     ///< bytes they write
  double bytes = kNone;             ///< bytes_read + bytes_written
  double compulsory_bytes = kNone;  ///< the computation's own bytes: each input read once, each output written once
  double flop = kNone;              ///< floating-point operations
  double launches = kNone;          ///< kernel launches (and copies) per iteration
  double host_syncs = kNone;        ///< host synchronizations per iteration
  /// Device bytes beyond the point's inputs that the variant holds at its peak over setup and one iteration
  /// (outputs, scratch, library workspaces), as the cost model predicts it; the lab pass measures the same
  /// (`memory.peak_work_bytes`, DeviceMemory in src/backends/cuda/cuda_runtime.hpp) and reports both.
  double peak_work_bytes = kNone;
  /// No field modelled (an experiment without a cost model).
  bool empty() const {
    return std::isnan(bytes_read) && std::isnan(bytes_written) && std::isnan(bytes) && std::isnan(compulsory_bytes) &&
           std::isnan(flop) && std::isnan(launches) && std::isnan(host_syncs) && std::isnan(peak_work_bytes);
  }
  /// One iteration's counts by name, for Cost::of: `Cost::of({.read = 4 * n, .written = 4 * n, .compulsory = 8 * n,
  /// .flop = 2 * n, .launches = 1})`. Bytes left out are not modelled (NaN); flop, launches and host_syncs left out
  /// are 0 (a copy kernel does no arithmetic and waits on no host).
  struct Counts {
    double read = kNone;        ///< bytes the iteration's kernels read (Cost::bytes_read)
    double written = kNone;     ///< bytes they write (Cost::bytes_written)
    double compulsory = kNone;  ///< each input read once, each output written once (Cost::compulsory_bytes)
    double flop = 0;            ///< floating-point operations
    double launches = 0;        ///< kernel launches (and copies)
    double host_syncs = 0;      ///< host synchronizations
  };
  /// The cost of `counts` (bytes = read + written).
  static Cost of(const Counts& counts) {
    return of(counts.read, counts.written, counts.compulsory, counts.flop, counts.launches, counts.host_syncs);
  }
  /// The same, positional (kept for existing code): `read` and `written` bytes (bytes = their sum) with the other
  /// fields as given.
  static Cost of(double read, double written, double compulsory, double flop, double launches, double syncs) {
    Cost c;
    c.bytes_read = read;
    c.bytes_written = written;
    c.bytes = read + written;
    c.compulsory_bytes = compulsory;
    c.flop = flop;
    c.launches = launches;
    c.host_syncs = syncs;
    return c;
  }
};

}  // namespace labrun
