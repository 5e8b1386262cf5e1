// The audit's recorder (docs/integrity.md "The audit"): the CUDA API calls the lab's thread makes while an iteration
// runs, taken with CUPTI's callback API, runtime and driver domains (a driver call made inside a runtime call is that
// runtime call's, so each call is seen once; a library's own launches, cuBLAS's or CUB's, are seen as whichever API
// it called), and the GPU work they launched with CUPTI's activity API (kernels, copies, memsets, with GPU times).
// libcupti is loaded at run time, as NVML and cuBLAS are: a runner starts where it is absent, and the audit then says
// it did not run.
#pragma once

#include <atomic>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "trace_call.hpp"

namespace labrun {

/// Records the calls of one thread between start() and stop(). One per process (CUPTI allows one subscriber).
class CallTracer {
 public:
  /// The process's tracer; loads CUPTI and tries a subscription on the first call (subscribed only while it
  /// records). LABRUN_CUPTI names the library's path
  /// (default: libcupti.so.13, then libcupti.so, where the dynamic loader finds them, then next to the CUDA toolkit
  /// at /usr/local/cuda/lib64 and /usr/local/cuda/targets/x86_64-linux/lib).
  static CallTracer& instance();
  /// Why the tracer cannot record ("libcupti.so.13 not found", "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED: a
  /// profiler holds CUPTI"), or nullopt when it can.
  const std::optional<std::string>& unavailable() const { return unavailable_; }
  /// Starts recording the calls of the calling thread. No effect where unavailable.
  /// `activity`: also record the GPU work with CUPTI's activity API (lab.launches). Once enabled, CUPTI's activity
  /// layer stays attached to the process: each later API call costs more on the host (docs/integrity.md).
  void start(bool activity = false);
  /// Stops and returns the calls recorded since start(), in host order. Where CUPTI's activity API records, it also
  /// waits for the device (cudaDeviceSynchronize: the iteration's work on every stream) and keeps the activity records
  /// of the work the iteration put on the GPU, for activity().
  std::vector<TraceCall> stop();
  /// The activity records (kernels, copies, memsets) of the last recording, any order; empty where the activity API
  /// did not record (a profiler holds it, or the library lacks it).
  const std::vector<TraceActivity>& activity() const { return activity_; }

  /// Called from CUPTI (internal).
  void on_call(int domain, unsigned cbid, const void* data);

 private:
  CallTracer();
  bool subscribe();       // false (unavailable_ set) when CUPTI refuses
  bool start_activity();  // false where the activity API does not record
  void stop_activity();
  bool activity_on_ = false;
  std::vector<TraceActivity> activity_;
  std::optional<std::string> unavailable_;
  std::vector<TraceCall> calls_;
  std::vector<std::pair<std::size_t, const void*>> unnamed_;  // runtime launches to name at stop(): index, stub
  std::atomic<bool> recording_{false};
  std::thread::id owner_;  // the thread whose calls are recorded
};

/// While one lives, the calls the calling thread makes are labrun's own on the variant's behalf (Launch::read_to_host,
/// Launch::stream_alloc): recorded as declared, never a finding. Nests.
class DeclaredCalls {
 public:
  DeclaredCalls();
  ~DeclaredCalls();
  DeclaredCalls(const DeclaredCalls&) = delete;
  DeclaredCalls& operator=(const DeclaredCalls&) = delete;
};

}  // namespace labrun
