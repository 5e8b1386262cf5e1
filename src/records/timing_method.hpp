// How a point's samples were timed (`timing.method` of its record), with its one name table (timing_method.cpp).
// Adding a kind of timing is a line of the enum, a row of the table, the lab pass's choice of it (timing_method_of
// in src/lab/lab.cpp) and its description in docs/metrics.md and docs/records.md.
#pragma once

#include <optional>
#include <string_view>

namespace labrun {

/// The timing method of a point's samples (docs/metrics.md, "Timing methods").
enum class TimingMethod {
  host_steady_clock,          ///< "host_steady_clock": the host's steady clock around finished work (host backend)
  host_clock_unsynchronized,  ///< "host_clock_unsynchronized": lab.timing unsynchronized, the enqueue (teaching demo)
  cuda_events,                ///< "cuda_events+synchronized_wall": CUDA events around live work, and the wall clock
  cuda_events_blocked,        ///< "cuda_events_blocked+synchronized_wall": CUDA events around work queued behind
                              ///< a blocking kernel (GPU time; the host's enqueue time as `submit`)
  nvbench_cold,   ///< "nvbench_cold": imported from nvbench, each sample one launch with L2 flushed (CUDA events)
  nvbench_batch,  ///< "nvbench_batch": imported from nvbench, the mean of launches back to back behind a blocking
                  ///< kernel
  gbench,         ///< "gbench": imported from Google Benchmark, each sample one repetition's mean real time over its
                  ///< iterations (the host's wall clock)
  other,          ///< a spelling this build does not know (a record of another version), kept as read
};

/// The method's spelling in records; "" for `other` (whose spelling the record keeps: Timing::other_method).
const char* to_string(TimingMethod method);

/// The method spelled `name` in records, or nullopt for any other text.
std::optional<TimingMethod> parse_timing_method(std::string_view name);

}  // namespace labrun
