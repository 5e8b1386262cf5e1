// The audit test aid (docs/integrity.md "The audit", cases C16-C18): an SDK experiment, y = 2x + 1 over n floats,
// whose CUDA variants do around their work what the audit must name: work on a stream of their own never joined, on
// the legacy default stream, a fork and join (legitimate), host waits and allocations inside the iteration, and a
// shared-memory race that only compute-sanitizer's racecheck sees. Host
// variants: only `correct` (the faults are CUDA calls). Linked into labrun_testaid only (audit.cpp, audit.cu); run
// with tests/aids/audit.yaml.
#pragma once

#include "variant_row.hpp"

namespace labrun::audit_aid {

/// What a variant does besides y = 2x + 1 on the lab's stream.
enum class Fault {
  none,           ///< nothing: correct
  own_stream,     ///< launches its kernel on a stream of its own, never joined (C16): `escaped`
  legacy_stream,  ///< launches its kernel on the legacy default stream (C16): `escaped`
  fork_join,      ///< forks onto a stream of its own and joins back with events: `ok`
  stream_sync,    ///< cudaStreamSynchronize after its kernel (C17): eager `ok` timed live with a warning; graph
                  ///< `capture_unsupported`
  device_sync,    ///< cudaDeviceSynchronize after its kernel (C17): as stream_sync
  sync_copy,      ///< a synchronous cudaMemcpy of y[0] to the host (C17): as stream_sync
  malloc_free,    ///< cudaMalloc + cudaFree of a temporary inside the iteration (C18): as stream_sync, warning
                  ///< "allocation"
  malloc_host,    ///< cudaMallocHost + cudaFreeHost inside the iteration (C18): as malloc_free
  late_escape,    ///< y = 2x + 1 on the lab's stream for its first 9 calls, then on a stream of its own, never
                  ///< joined (C16, after timing began): eager `escaped` by the audit of an iteration after timing;
                  ///< graph `ok` (the graph holds the call it captured)
  racy_shared,    ///< y = 2x + 1, and a block sum of x reduced in shared memory without __syncthreads between the
                  ///< steps (C22): y is right, so `ok` when timed; `sweep --sanitize racecheck` names the race
};

/// One row of the variant table.
using Row = aids::VariantRow<Fault>;

/// The variants in declaration order.
inline constexpr Row kVariants[] = {
    {"correct", Fault::none, "y = 2x + 1 on the lab's stream"},
    {"own_stream", Fault::own_stream, "its kernel on a stream of its own, never joined"},
    {"legacy_stream", Fault::legacy_stream, "its kernel on the legacy default stream"},
    {"fork_join", Fault::fork_join, "forks onto a stream of its own and joins back with events"},
    {"stream_sync", Fault::stream_sync, "cudaStreamSynchronize inside the iteration"},
    {"device_sync", Fault::device_sync, "cudaDeviceSynchronize inside the iteration"},
    {"sync_copy", Fault::sync_copy, "a synchronous cudaMemcpy to the host inside the iteration"},
    {"malloc_free", Fault::malloc_free, "cudaMalloc and cudaFree inside the iteration"},
    {"malloc_host", Fault::malloc_host, "cudaMallocHost and cudaFreeHost inside the iteration"},
    {"late_escape", Fault::late_escape, "its kernel on a stream of its own, never joined, from its 10th call"},
    {"racy_shared", Fault::racy_shared, "a shared-memory reduction without __syncthreads beside y = 2x + 1"},
};

}  // namespace labrun::audit_aid
