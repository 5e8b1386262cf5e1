// The audit of one iteration (docs/integrity.md "The audit"): what a variant's iteration did besides its work on the
// lab's stream, decided from the sequence of CUDA API calls it made, in host order. The CUDA backend records that
// sequence with CUPTI's callback API (src/backends/cuda/cupti_trace.cpp); the decisions are here, host logic that the
// tests feed with synthetic sequences. Cases C16 (work on a stream the lab's stream never waits for), C17 (a host
// synchronisation the variant did not declare) and C18 (an allocation or free inside the iteration).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "trace_call.hpp"

namespace labrun {

/// How a stream reads in a finding: "the legacy default stream", "the per-thread default stream", "the lab's stream
/// 0x5580a0" or "stream 0x5581c0 (a stream of the variant's)".
std::string stream_words(TraceStream stream, TraceStream lab_stream);

/// The audit's decisions over `calls`, the API calls of one iteration in host order, the lab's stream being
/// `lab_stream` (a non-blocking stream: it never waits for the legacy default stream implicitly).
/// Escape: each stream's work is numbered; an event recorded on a stream carries what that stream has waited for so
/// far plus its own work; a stream that waits on the event inherits it; a host wait (stream, event, device, or a
/// synchronous copy, which waits for the legacy default stream) completes what it covers before the iteration goes
/// on. Work not covered at the end by what the lab's stream waited for or the host waited for escaped: the first
/// such item is named. A fork and join (work on a stream of the variant's, an event recorded there, the lab's stream
/// waiting on it) is not an escape. Syncs and allocations: every undeclared call of that kind, in order.
AuditFindings audit_iteration(const std::vector<TraceCall>& calls, TraceStream lab_stream);

/// The iteration's GPU work as the kernel breakdown lists it (`launches[]`): `activity` (CUPTI's records of the
/// iteration, any order) in GPU start order, each named (kernels demangled by kernel_name()), shaped, timed (end minus
/// start, ns to s) and placed on the stream of the call in `calls` whose correlation id it carries ("lab" for
/// `lab_stream`, "legacy default", "per-thread default", the handle in hex; "" when no call carries it).
std::vector<LaunchTime> launch_times(const std::vector<TraceCall>& calls, std::vector<TraceActivity> activity,
                                     TraceStream lab_stream);

}  // namespace labrun
