// One CUDA API call of an iteration as the audit reads it (src/lab/audit.hpp decides; the CUDA backend records,
// src/backends/cuda/cupti_trace.hpp): the seam between the recorder and the decisions, so the decisions are tested
// from synthetic sequences without a GPU.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kernel_time.hpp"

namespace labrun {

/// A stream as the trace names it: the handle's value (cudaStream_t as an integer). Two handles are special: the
/// legacy default stream (0, cudaStreamLegacy = 1) and the per-thread default stream (cudaStreamPerThread = 2).
using TraceStream = std::uint64_t;
inline constexpr TraceStream kLegacyStream = 0;
inline constexpr TraceStream kLegacyStreamHandle = 1;
inline constexpr TraceStream kPerThreadStream = 2;

/// One CUDA API call of an iteration, as far as the audit reads it.
struct TraceCall {
  enum class Kind {
    work,          ///< a kernel launch, copy or memset enqueued on `stream`
    event_record,  ///< cudaEventRecord(event, stream): the event completes after the work before it on `stream`
    stream_wait,   ///< cudaStreamWaitEvent(stream, event): later work on `stream` waits for the event
    sync,          ///< the host waits: for `stream` (scope stream), the device, `event`, or a synchronous copy
    alloc,         ///< memory allocated (cudaMalloc, cudaMallocHost, cuMemAlloc, ...)
    stream_alloc,  ///< stream-ordered allocation or free (cudaMallocAsync, cudaFreeAsync): no host wait, capturable
    free,          ///< memory freed (cudaFree, cudaFreeHost, ...; a free synchronises the device)
  };
  enum class SyncScope { stream, device, event, copy };
  Kind kind = Kind::work;
  std::string api;   ///< the function called: "cudaLaunchKernel", "cudaStreamSynchronize", "cuMemAlloc_v2", ...
  std::string name;  ///< work: the kernel's name (demangled) or "memcpy DtoH", "memset"; else empty
  TraceStream stream = kLegacyStream;
  std::uint64_t event = 0;  ///< event_record, stream_wait, sync of an event: the event handle
  SyncScope scope = SyncScope::stream;
  /// `stream` was made without cudaStreamNonBlocking: it and the legacy default stream wait for each other.
  bool blocking = false;
  /// Made by labrun's own API on the variant's behalf (Launch::read_to_host's copy and wait, stream_alloc's pool),
  /// so declared: never a finding.
  bool declared = false;
  /// CUPTI's correlation ids of the call (the runtime call's and the driver call's inside it; 0: none): an activity
  /// record of the work it launched carries one of them.
  std::uint32_t correlation = 0;
  std::uint32_t driver_correlation = 0;
};

/// One piece of GPU work as CUPTI's activity API records it (a kernel, a copy or a memset): what the launching call
/// does not know, its GPU time and, for a library's kernels, its shape.
struct TraceActivity {
  enum class Kind { kernel, memcpy, memset };
  Kind kind = Kind::kernel;
  std::string name;  ///< kernels: the name as CUDA reports it (mangled); copies: "memcpy DtoH", ...; "memset"
  std::uint32_t correlation = 0;  ///< the launching API call's correlation id
  std::uint64_t start_ns = 0;     ///< GPU timestamps, ns
  std::uint64_t end_ns = 0;
  int grid[3] = {0, 0, 0};  ///< kernels only
  int block[3] = {0, 0, 0};
  std::uint64_t bytes = 0;  ///< copies and memsets only
};

/// What the audit found in one iteration. Empty lists and no `escaped`: nothing.
struct AuditFindings {
  /// Work enqueued on another stream that the lab's stream does not wait for before the iteration ends (and that the
  /// host did not wait for either), named: "kernel add_one on stream 0x5581c0 (a stream of the variant's), which the
  /// lab's stream 0x5580a0 does not wait for before the iteration ends".
  std::optional<std::string> escaped;
  /// The undeclared host synchronisations, one entry per call ("cudaStreamSynchronize").
  std::vector<std::string> syncs;
  /// The allocations and frees, one entry per call ("cudaMalloc", "cudaFree").
  std::vector<std::string> allocations;
  /// The stream-ordered allocations and frees outside Launch::stream_alloc ("cudaMallocAsync"): no host wait, and a
  /// graph can hold them, but memory the iteration takes each time all the same (a warning).
  std::vector<std::string> stream_ordered;

  bool any() const { return escaped || !syncs.empty() || !allocations.empty() || !stream_ordered.empty(); }
  /// The calls of `calls` (syncs or allocations) as one phrase: "cudaStreamSynchronize" or "cudaMalloc (x2),
  /// cudaFree (x2)", in first-seen order.
  static std::string summary(const std::vector<std::string>& calls);
};

/// What the audit of a point's first iteration came to: its findings, or why it did not run (`not_run`: "lab.audit:
/// false", "CUPTI could not be loaded (...)").
struct IterationAudit {
  std::optional<AuditFindings> findings;
  std::string not_run;
  /// Set where the findings are another process's (ExecOptions::audited_elsewhere): "process 1 of 5 of the pool".
  std::string elsewhere;
  /// The GPU work of the iteration in start order, timed (launch_times(), src/lab/audit.hpp); empty where CUPTI's
  /// activity API did not record.
  std::vector<LaunchTime> launches;
};

/// A kernel's name as a reader wants it from its symbol (mangled, as CUDA reports it, or already demangled): the
/// demangled name without the leading return type ("void ") and without its parameter list, which is the
/// parentheses that close the name, so "(anonymous namespace)::scale<float>(float*, long)" reads
/// "(anonymous namespace)::scale<float>". "" for a null or empty symbol; a symbol that does not demangle is kept.
std::string kernel_name(const char* symbol);

}  // namespace labrun
