// The seam between the lab pass and whatever runs a point (host CPU or a CUDA device): what a backend, an executor
// and a workload do. The pipeline in src/lab/lab.cpp sees only these interfaces; src/backends/ implements them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "check_outcome.hpp"
#include "kernel_time.hpp"
#include "trace_call.hpp"
#include <labrun/cost.hpp>

namespace labrun {

using Json = nlohmann::ordered_json;

enum class BackendKind { host, cuda };
const char* to_string(BackendKind kind);

/// Where one of a point's arrays lies in device memory, for the sanitizer sweep (docs/integrity.md "The sanitizer
/// sweep"), which names the array an address the tool reports falls in or next to.
struct ArrayExtent {
  std::string name;           ///< the Layout's name ("y"), or "memory from Launch::allocate #1 (4108 bytes)"
  std::string role;           ///< "input", "output", "scratch" or "allocate"
  std::uint64_t address = 0;  ///< its first byte: a device virtual address
  std::uint64_t bytes = 0;    ///< its size in bytes (the array's own: no guard, no rounding)
};

/// One variant prepared at one point on one backend: inputs generated, buffers allocated.
class Workload {
 public:
  virtual ~Workload() = default;
  /// One iteration. Host: computes. CUDA: enqueues on the backend's stream (blocking only where the variant
  /// itself needs a host-visible value; such waits are counted).
  virtual void run() = 0;
  /// Poisons the output (NaN), calls `iterate` once (which runs this workload in the point's mode), waits for
  /// completion, and compares the result with the reference: the experiment's comparisons, typed.
  virtual CheckOutcome check(const std::function<void()>& iterate) = 0;
  /// Cost of one iteration at this point (the experiment's cost model); Cost{} (all NaN) without a model.
  virtual Cost cost() const { return Cost{}; }

  // The integrity checks (docs/integrity.md), run by the lab outside every timed sample. A workload that does not
  // implement one says so with nullopt from integrity_support(), and the record says the check was not run.

  /// Which checks this workload implements: a bitwise or of kFenceCheck, kInputCheck and kRecheck.
  virtual unsigned integrity_support() const { return 0; }
  static constexpr unsigned kFenceCheck = 1, kInputCheck = 2, kRecheck = 4;
  /// Case C19: reads the guard regions around the point's outputs, scratch arrays and Launch::allocate memory
  /// (filled with a pattern when they were allocated, lab.fences) and returns the first write found in one, as
  /// "wrote past the end of y (first at element 4206592)"; nullopt when every guard is intact. Refills the guards.
  virtual std::optional<std::string> fence_violation() { return std::nullopt; }
  /// Case C20: compares the point's inputs with the set that was generated for them and returns "changed input x
  /// at element 0" for the first changed one; nullopt when none changed. Restores the inputs it found changed, so
  /// the variants that run after this one see the generated set.
  virtual std::optional<std::string> input_change() { return std::nullopt; }
  /// Case C21, the re-check on fresh inputs: writes a second input set (the same shapes, another seed) into the
  /// point's input arrays, poisons the outputs, calls `iterate` once (the variant's Setup is not run again), waits,
  /// compares with the second set's reference, and writes the first set back. nullopt where it cannot.
  virtual std::optional<CheckOutcome> recheck(const std::function<void()>& iterate) {
    (void)iterate;
    return std::nullopt;
  }
  /// Starts, off the issuing thread and at idle priority, the host work recheck() will need (its second input set
  /// and that set's reference), so that it overlaps the timing instead of following it. The lab calls it before
  /// timing where the re-check runs in this process. Default: nothing (the host backend's timing is the CPU's).
  virtual void prepare_recheck() {}
  /// The point's device arrays: inputs, outputs, scratch and Launch::allocate memory, in that order; empty on a
  /// backend without device memory.
  virtual std::vector<ArrayExtent> extents() const { return {}; }
};

/// One timed sample: `iterations` back-to-back iterations.
struct Sample {
  double wall_time_s = 0;               ///< host steady clock, synchronized at both ends
  std::optional<double> device_time_s;  ///< CUDA events on the work's stream (absent on the host backend)
  std::int64_t iterations = 1;          ///< batch size; per-iteration times divide by this
  std::int64_t host_syncs = 0;          ///< host synchronizations the variant performed in the batch
  /// Blocked samples (ExecOptions::blocking) only: seconds the host spent enqueuing the batch (its launches
  /// and the two events) while a blocking kernel held the stream; the host's cost of issuing the work.
  std::optional<double> submit_time_s;
  /// Live samples on a device only: the host's speed right after the sample, as the median wall time of a few
  /// sync round trips (an empty kernel, a 4-byte device-to-host copy, a stream synchronize), in seconds per
  /// round trip. It moves with the host as a point that waits on the host does (docs/metrics.md "Host probe").
  std::optional<double> host_probe_time_s;
};

/// What setting up an executor's mode cost (`phases.warmup.mode_setup`); every member absent for a mode that
/// sets nothing up (eager).
struct ExecutorSetup {
  std::optional<double> capture_time_s;      ///< graph: host seconds capturing the iteration into a graph
  std::optional<double> instantiate_time_s;  ///< graph: host seconds instantiating the captured graph
  std::optional<std::int64_t> graph_nodes;   ///< graph: nodes of the captured graph
};

/// {capture_time_s, instantiate_time_s, graph_nodes}, the members present, in that order, as plain JSON numbers;
/// an empty object when none is.
nlohmann::ordered_json to_json(const ExecutorSetup& s);

/// The device memory a point allocated, as a backend with device memory measures it between memory_mark() and
/// memory_since_mark() (the record's `memory` but `predicted_peak_work_bytes`, which the lab adds).
struct PointMemory {
  /// DeviceMemory's work bytes at their peak over setup and one iteration, beyond what was held at the mark.
  std::size_t peak_work_bytes = 0;
  std::size_t input_bytes = 0;  ///< bytes of the point's inputs held now
  /// Device bytes used now minus at the mark (cudaMemGetInfo: allocator rounding and library allocations
  /// included); absent where either reading failed.
  std::optional<double> device_used_delta_bytes;
};

/// {peak_work_bytes, input_bytes[, device_used_delta_bytes]}: the bytes as JSON integers, the delta as json_real.
nlohmann::ordered_json to_json(const PointMemory& m);

/// Runs a workload in one mode ("eager" or "graph").
class Executor {
 public:
  virtual ~Executor() = default;
  /// One iteration as the mode issues it (eager: the variant's launches; graph: one replay).
  virtual void iterate() = 0;
  /// Blocks until everything issued so far has completed.
  virtual void wait() = 0;
  /// Times `batch` iterations as one sample. Synchronized unless the lab asked for the unsynchronized demo.
  virtual Sample sample(std::int64_t batch) = 0;
  /// Test aid (LABRUN_TESTAID_SLOWER, docs/diff.md "Across GPUs"): from now on every iteration the executor issues,
  /// sampled or not, ends with a spin kernel of `delay_s` seconds besides ExecOptions::delay_s. Eager mode only (a
  /// graph replays what it captured): returns false where the executor cannot add it.
  virtual bool add_delay(double delay_s) {
    (void)delay_s;
    return false;
  }
  /// What setting up the mode cost (e.g. capture_time_s); nothing by default.
  virtual ExecutorSetup setup_record() const { return ExecutorSetup{}; }
  /// The audit of the point's first iteration (docs/integrity.md "The audit"), once it ran: its findings, or why it
  /// did not run. Nullopt where the backend has no audit (the host backend makes no CUDA calls).
  virtual std::optional<IterationAudit> audit() const { return std::nullopt; }
  /// One more iteration, audited as the first was (eager mode; docs/integrity.md "The audit"), after timing and
  /// outside every sample, then waited for: a variant that changes what it calls after some calls is seen there.
  /// nullopt where there is nothing new to see (graph mode replays what was captured; the host backend).
  /// @throws PointOutcome(Status::escaped) as the first iteration's audit does.
  virtual std::optional<IterationAudit> audit_again() { return std::nullopt; }
};

/// How an executor issues and times iterations.
struct ExecOptions {
  std::string mode = "eager";  ///< "eager" or "graph"
  bool synchronized = true;    ///< false: the unsynchronized-timing teaching demo (host clock around enqueue)
  bool cold_l2 = false;        ///< flush L2 before every sample (case C10); the lab then uses batches of 1
  double delay_s = 0;          ///< test aid: a spin kernel of this length appended to every iteration
  /// Queue each sample behind a blocking kernel (nvbench's technique) when its iterations never synchronize
  /// with the host: device time is then the GPU's execution of back-to-back work, free of the host's launch
  /// rate, and the enqueue time is reported apart (Sample::submit_time_s).
  bool blocking = true;
  /// lab.audit: record the CUDA API calls of the first iteration and judge them (docs/integrity.md "The audit").
  bool audit = true;
  /// lab.launches: with the audit, also time the audited iterations' GPU work with CUPTI's activity API (launches[]).
  bool launches = false;
  /// Where set, this point was audited in another process (the first of a lab.processes pool), which found this: the
  /// executor takes it as its first iteration's audit instead of recording with CUPTI, which once attached stays in
  /// the process and slows its later graph launches and host waits (docs/integrity.md "The audit"), and does not
  /// audit again after timing.
  std::optional<AuditFindings> audited_elsewhere;
  /// Where audited_elsewhere comes from: "process 1 of 5 of the pool".
  std::string audited_where;
};

/// A device that runs points.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual BackendKind kind() const = 0;
  /// "host" or "cuda:N".
  virtual std::string name() const = 0;
  /// Device part of the environment record (name, memory, clocks...).
  virtual nlohmann::ordered_json environment() = 0;
  /// Measured ceilings at run start (e.g. copy bandwidth), recorded in the header.
  virtual nlohmann::ordered_json calibrate() = 0;
  /// nullopt if the mode can run here, else the reason it cannot.
  virtual std::optional<std::string> mode_unsupported(const std::string& mode) const = 0;
  /// An executor for `workload` in `mode`.
  /// @throws PointOutcome(capture_unsupported, CUDA error name) when graph capture fails.
  virtual std::unique_ptr<Executor> executor(Workload& workload, const ExecOptions& options) = 0;
  /// Per-kernel times of one eager iteration of `workload`, one entry per op in issue order; nullopt where the
  /// backend cannot attribute time to kernels (or the iteration marked no op).
  virtual std::optional<std::vector<KernelTime>> kernel_breakdown(Workload& workload) {
    (void)workload;
    return std::nullopt;
  }
  /// Device state read before and after a point's timing (clocks, temperature, power, clock-event
  /// reasons); null where the backend has none.
  virtual nlohmann::ordered_json device_state() { return nullptr; }
  /// Bytes of memory a point's buffers can take on this device (device memory on CUDA); nullopt if unknown.
  virtual std::optional<double> memory_bytes() const { return std::nullopt; }
  /// Bytes of that memory free right now (cudaMemGetInfo on CUDA; MemAvailable on the host); nullopt if unknown.
  /// The lab compares a point's footprint with it before the point allocates anything.
  virtual std::optional<double> free_memory_bytes() const { return std::nullopt; }
  /// Bytes a cold-L2 point needs besides its working set (the flush buffer, allocated on first use); 0 if none.
  virtual double flush_bytes() const { return 0; }
  /// A sticky error that broke the device (CUDA: an illegal address, a launch failure or a trap leaves every later
  /// call failing until the process exits), as "cudaErrorIllegalAddress: an illegal memory access was
  /// encountered"; nullopt while the device works. Asked after a point fails: such a point is `device_fault` and
  /// its worker is replaced (docs/records.md "Workers").
  virtual std::optional<std::string> sticky_error() { return std::nullopt; }
  /// Bytes of the last-level cache that back-to-back timing can keep data in (GPU L2); nullopt if unknown.
  virtual std::optional<double> cache_bytes() const { return std::nullopt; }
  /// Starts measuring a point's device memory: the peak of work bytes is reset to what is held now, and the
  /// device's used bytes are read (CUDA: DeviceMemory and cudaMemGetInfo). Called before the point's setup.
  virtual void memory_mark() {}
  /// What the point allocated since memory_mark(), read after setup and the first iteration; nullopt where the
  /// backend has no device memory (the host).
  virtual std::optional<PointMemory> memory_since_mark() { return std::nullopt; }
  /// Profiler ranges (NVTX on CUDA) around points and phases, so a trace of a sweep reads at a glance.
  virtual void range_push(const std::string& name) { (void)name; }
  virtual void range_pop() {}
};

}  // namespace labrun
