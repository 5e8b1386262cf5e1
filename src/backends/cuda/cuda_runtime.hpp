// The thin CUDA runtime layer: RAII device memory, streams, events, and the per-stream context a workload
// launches through (host-sync counting and per-kernel marks). Nothing here knows about experiments.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "cuda_check.hpp"

namespace labrun {

/// What a device allocation holds, for the point's memory peak: a point's `input` buffers (shared input caches,
/// kept across the variants of one input set) are not counted in its peak; `work` is everything a variant
/// allocates for itself (outputs, scratch, library workspaces); `lab` is labrun's own (the cold-L2 flush buffer,
/// the host probe's word), never counted.
enum class MemoryRole { work, input, lab };

/// Device bytes held by DeviceBuffers, per role, and the peak of the work bytes since the last reset_peak()
/// (process-wide, thread-safe). The lab pass resets the peak before a point's setup and reads it after setup and
/// one iteration: that is the point's `memory.peak_work_bytes`. Counts requested bytes; cudaMalloc rounds each
/// allocation up (2 MiB pages for large ones), which memory.device_used_delta_bytes (cudaMemGetInfo) shows.
struct DeviceMemory {
  static std::size_t held_bytes(MemoryRole role);
  static std::size_t peak_work_bytes();
  /// Sets the peak to the work bytes held now.
  static void reset_peak();
  /// Called by the allocation types (DeviceBuffer, PoolBuffer): `bytes` added (positive) or released (negative).
  static void account(MemoryRole role, long long bytes);
};

/// Device memory from cudaMalloc, freed on destruction, counted in DeviceMemory under its role. Size in bytes.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes, MemoryRole role = MemoryRole::work);
  /// `bytes` of which `lab_bytes` are the lab's own (the guard regions of a fenced array, src/lab/guards.hpp) and
  /// counted as MemoryRole::lab, the rest under `role`: a point's measured work bytes stay what its arrays take.
  DeviceBuffer(std::size_t bytes, MemoryRole role, std::size_t lab_bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)), role_(o.role_),
        lab_bytes_(std::exchange(o.lab_bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* get() const { return ptr_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }
  MemoryRole role() const { return role_; }

 private:
  void release() noexcept;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  MemoryRole role_ = MemoryRole::work;
  std::size_t lab_bytes_ = 0;  ///< of bytes_, counted as MemoryRole::lab
};

/// Page-locked host memory (cudaMallocHost), so device->host copies are truly asynchronous.
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
};

/// Copies `bytes` from device memory to pageable host memory `host` after the work queued on `stream`, and waits:
/// through two page-locked staging buffers of the process (kStagingChunkBytes each, made at the first call), the
/// copy of one chunk overlapping the host's copy of the one before out to `host`. A plain cudaMemcpy into pageable
/// memory ran at 1.4 GB/s on the H200 machine (outputs of 2^26 elements: 2.4 GB in 1.78 s over 12 points),
/// a large part of the correctness check's and the re-check's time. Not thread-safe: the lab's thread only.
/// @throws CudaError on a failed copy.
void copy_to_host(void* host, const void* device, std::size_t bytes, cudaStream_t stream);
inline constexpr std::size_t kStagingChunkBytes = std::size_t{8} << 20;

/// Holds a stream behind a blocking kernel while the host queues work, so the queued work then runs back to
/// back at the GPU's pace instead of the host's launch rate (nvbench's blocking_kernel). Two ints of
/// host-mapped page-locked memory: the release flag the kernel polls and the flag it sets on timeout.
/// Every block() must be followed by unblock() before the stream is waited on.
class StreamBlocker {
 public:
  StreamBlocker();
  ~StreamBlocker();
  StreamBlocker(const StreamBlocker&) = delete;
  StreamBlocker& operator=(const StreamBlocker&) = delete;
  /// Clears both flags and launches the blocking kernel on `stream`; it gives up after `timeout_s` seconds.
  void block(cudaStream_t stream, double timeout_s);
  /// Lets the held stream run.
  void unblock();
  /// Whether the last block() ended by its timeout. Valid once the stream has been synchronized.
  bool timed_out() const;

 private:
  int* host_ = nullptr;    // [0] release, [1] timed out
  int* device_ = nullptr;  // device view of host_
};

/// A non-blocking stream (cudaStreamNonBlocking: no implicit ordering with the legacy default stream).
class Stream {
 public:
  Stream();
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return s_; }
  void synchronize() const { LABRUN_CUDA(cudaStreamSynchronize(s_)); }

 private:
  cudaStream_t s_ = nullptr;
};

/// A CUDA event with timing enabled.
class Event {
 public:
  Event();
  ~Event();
  Event(Event&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  void record(cudaStream_t s) { LABRUN_CUDA(cudaEventRecord(e_, s)); }
  void synchronize() { LABRUN_CUDA(cudaEventSynchronize(e_)); }
  cudaEvent_t get() const { return e_; }
  /// Seconds from `start` to this event; both must have completed (case C08: read only after the stop event
  /// completed — call synchronize() first).
  double seconds_since(const Event& start) const;

 private:
  cudaEvent_t e_ = nullptr;
};

/// What a workload launches through: its stream, a counter of the host synchronizations it performs
/// (case C09), and optional per-kernel marks for the kernel breakdown.
class LaunchContext {
 public:
  explicit LaunchContext(int device);
  int device() const { return device_; }
  cudaStream_t stream() const { return stream_.get(); }
  int sm_count() const { return sm_count_; }

  /// Copies `bytes` from device to pinned host memory and waits for the stream: a host synchronization,
  /// counted. Every variant that needs a host-visible value must read it through here.
  void read_to_host(void* host_pinned, const void* device, std::size_t bytes);
  std::int64_t host_syncs() const { return host_syncs_; }

  /// Kernel breakdown: while enabled, mark() records an event after each named op with its DRAM bytes.
  void begin_marks();
  void mark(const char* name, double bytes);
  /// Ends marking, waits, and returns (name, bytes, seconds) per op in launch order.
  std::vector<std::tuple<std::string, double, double>> end_marks();

  /// The pair of events that brackets a timed sample on this stream.
  Event& sample_start() { return sample_start_; }
  Event& sample_stop() { return sample_stop_; }

 private:
  int device_;
  int sm_count_ = 0;
  Stream stream_;
  std::int64_t host_syncs_ = 0;
  bool marking_ = false;
  std::vector<Event> events_;
  std::vector<std::pair<std::string, double>> names_;
  Event sample_start_, sample_stop_;
};

}  // namespace labrun
