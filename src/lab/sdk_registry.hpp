// The SDK's runtime seam: what the experiments registered at static initialisation (labrun/experiment.hpp's
// LABRUN_EXPERIMENT and LABRUN_CUDA_VARIANTS, listed by src/sdk/linked.hpp) becomes, from main, entries of a
// Registry; and the state the host and CUDA workloads of an SDK experiment share (inputs generated once per input
// key, the reference from memory, the sweep's disk cache or computed).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <labrun/experiment.hpp>

#include "backend.hpp"
#include "registry.hpp"

namespace labrun {

/// Host memory for one point's arrays of one role: allocated from a Layout (64-byte aligned, zeroed or not), each
/// fenced by guard regions (src/lab/guards.hpp) when asked.
class HostArrays {
 public:
  /// Allocates every entry of `layout` with role `role` (at least 16 bytes each). `zero`: fill with zeros.
  /// `fenced`: a guard region of kGuardBytes or more before and after each array, filled with kGuardByte (lab.fences).
  HostArrays(const Layout& layout, Role role, bool zero, bool fenced = false);
  HostArrays() = default;
  Arrays& arrays() { return arrays_; }
  const Arrays& arrays() const { return arrays_; }
  /// Fills every array with its Layout entry's poison byte (default 0xff: NaN in every floating-point dtype, the
  /// correctness poison, case C07).
  void poison();
  /// The first write found in a guard of a fenced array, as guard_write words it; nullopt when all are intact (or
  /// nothing is fenced). Refills the guards it found written.
  std::optional<std::string> fence_violation();
  /// content_hash of each array, in the order of arrays().
  std::vector<std::uint64_t> hashes() const;

 private:
  std::vector<std::shared_ptr<void>> blocks_;
  std::vector<std::uint8_t> poison_;  ///< per array, in the order of arrays_
  bool fenced_ = false;               ///< every array sits between guards
  Arrays arrays_;
};

/// Host memory a variant's setup takes with Launch::allocate, each block fenced as HostArrays' arrays are when asked.
class HostBlocks {
 public:
  explicit HostBlocks(bool fenced) : fenced_(fenced) {}
  /// A zeroed block of `bytes`, 64-byte aligned.
  void* allocate(std::size_t bytes);
  /// As HostArrays::fence_violation, naming a block "memory from Launch::allocate #N (B bytes)".
  std::optional<std::string> fence_violation();

 private:
  bool fenced_;
  std::vector<std::shared_ptr<void>> blocks_;
  std::vector<std::pair<void*, std::size_t>> data_;  ///< each block's first byte after its guard, and its bytes
};

/// Where a variant handed back each returned output of a point (Role::returned, Launch::returns), for the host and
/// CUDA workloads alike.
class ReturnedOutputs {
 public:
  explicit ReturnedOutputs(const Layout& layout);
  const std::vector<Layout::Entry>& entries() const { return entries_; }
  /// @throws std::out_of_range when `name` is not a returned output.
  void set(const std::string& name, const void* data);
  /// Where `name` was handed back; nullptr before that.
  const void* data(const std::string& name) const;
  /// A failed outcome naming the first returned output with elements that was never handed back (poisoned false);
  /// nullopt when none.
  std::optional<CheckOutcome> missing() const;
  /// Each returned output and the input of `inputs` whose memory it is ("" when none).
  std::map<std::string, std::string> inputs_aliased(const Arrays& inputs) const;

 private:
  std::vector<Layout::Entry> entries_;
  std::map<std::string, const void*> data_;
};

/// What the workloads of one SDK experiment share within a process: the definition, its CUDA side, the current
/// input set and reference (one at a time: the sweep puts variants innermost, so each set is made once), and a
/// slot for the CUDA side's device copy of the inputs.
class SdkExperiment {
 public:
  explicit SdkExperiment(std::shared_ptr<const ExperimentDef> def);
  ~SdkExperiment();  // waits for a prefetch still running
  SdkExperiment(const SdkExperiment&) = delete;
  SdkExperiment& operator=(const SdkExperiment&) = delete;
  const ExperimentDef& def() const { return *def_; }
  std::shared_ptr<const CudaDef> cuda;  ///< set when a LABRUN_CUDA_VARIANTS of this experiment was linked

  /// The point's Layout (ExperimentDef::arrays). @throws std::logic_error when the experiment declares none.
  Layout layout(const Args& args) const;
  /// "axis=value,..." over the input-defining axes, and the seed of that input set for lab seed `lab_seed`.
  std::string input_key(const Args& args) const;
  std::uint64_t input_seed(const Args& args, std::uint64_t lab_seed) const;
  /// The host inputs of the point for lab seed `lab_seed` (generated on first use of their key and seed). Two sets of
  /// one input key are kept, the point's and the re-check's (recheck_lab_seed); a new input key releases both first.
  std::shared_ptr<const HostArrays> inputs(const Args& args, std::uint64_t lab_seed);
  /// inputs(), writable: the host workload's variant sees these arrays, and the integrity checks restore them.
  std::shared_ptr<HostArrays> writable_inputs(const Args& args, std::uint64_t lab_seed);
  /// Writes the set of (args, lab_seed) into `arrays` (the point's Layout's inputs) by running the generator.
  void generate_into(const Args& args, std::uint64_t lab_seed, Arrays& arrays) const;
  /// The content hashes of the set of (args, lab_seed) as generated, one per input array in Layout order.
  std::vector<std::uint64_t> input_hashes(const Args& args, std::uint64_t lab_seed);
  /// Case C20 on the host: compares `set`, a host set of (args, lab_seed) that a workload holds, with `expected`,
  /// its content hashes as generated (input_hashes); when an array changed, generates the set afresh, finds the
  /// first changed element, writes every changed array of `set` back and returns "changed input x at element N";
  /// nullopt when nothing changed. The workload's own set, not the one held here: the points of an interleaved
  /// group may hold sets of several input keys at once.
  std::optional<std::string> restore_inputs(const Args& args, std::uint64_t lab_seed, HostArrays& set,
                                            const std::vector<std::uint64_t>& expected) const;
  /// The reference of the point: from memory, else the sweep's disk cache (scalar references), else computed
  /// from inputs() and stored there. A few are kept per input key (both seeds, the reference axes' values).
  std::shared_ptr<const Reference> reference(const Args& args, std::uint64_t lab_seed);
  /// Starts making the host set of (args, lab_seed) and its reference at `args`' reference axes on a thread of its
  /// own at idle priority (SCHED_IDLE: it runs only on CPUs no other thread of the machine wants), for inputs() and
  /// reference() to take when they are asked for them: the re-check's second set and reference are made while the
  /// GPU times the point (or its interleaved group) instead of after. Further calls for the same set add their
  /// reference axes while the thread still runs; a call for another set, or another input key asked of inputs() or
  /// reference(), drops the running one (waiting for it). An error of the thread is thrown where the result is taken.
  void prefetch(const Args& args, std::uint64_t lab_seed);
  /// The cost model at the point with `ref`, its peak work bytes filled from the Layout when the model leaves it NaN.
  Cost cost(const Args& args, const Reference& ref) const;
  /// Runs the experiment's check: its comparisons, typed, as the outcome (an error outcome when it compared nothing).
  /// `returned`: the returned outputs with the input each one is ("" for none); poisoned is false with any.
  /// `read`: where Compare::exact_chunks reads outputs from (empty: `outputs`' host memory).
  /// `sample`: Compare's (0: every element; the re-check passes kRecheckSampleElements).
  CheckOutcome compare(const Args& args, const std::function<const Arrays&()>& inputs, const Arrays& outputs,
                       const Reference& ref, double scale, const std::map<std::string, std::string>& returned = {},
                       const Compare::ChunkReader& read = {}, std::int64_t sample = 0) const;

  /// The CUDA side's device input set (type-erased; src/backends/cuda/sdk_cuda.cpp) and its key.
  std::shared_ptr<void> device_inputs;
  std::string device_key;

 private:
  std::shared_ptr<const ExperimentDef> def_;
  // The host sets and references of the current input key (input_key_): at most kInputSlots sets (seeds) and
  // kReferenceSlots references, the most recently used last.
  static constexpr std::size_t kInputSlots = 2, kReferenceSlots = 4;
  struct InputSlot {
    std::string key;  ///< input_key/seed
    std::shared_ptr<HostArrays> set;
    std::vector<std::uint64_t> hashes;  ///< content hashes as generated
  };
  std::string input_key_;
  std::vector<InputSlot> input_slots_;
  std::vector<std::pair<std::string, std::shared_ptr<const Reference>>> ref_slots_;
  // The slot of (args, lab_seed), made (and generated) on first use.
  InputSlot& input_slot(const Args& args, std::uint64_t lab_seed);
  // Releases every held set and reference when `args` has another input key than the held ones.
  void enter_input_key(const Args& args);
  // The key of a held set ("input_key/seed") and of a held reference (that, then "/" and the reference axes).
  std::string set_key(const Args& args, std::uint64_t lab_seed) const;
  std::string reference_key(const Args& args, std::uint64_t lab_seed) const;
  // The running prefetch (sdk_registry.cpp); taken into the slots when its set is asked for, dropped otherwise.
  struct Prefetch;
  std::unique_ptr<Prefetch> prefetch_;
  // Waits for the prefetch and moves its set and references into the slots when it made the set `key`; drops it
  // otherwise (or with `key` empty). Rethrows the thread's error.
  void take_prefetch(const std::string& key);
};

/// Makes the CUDA workload of one SDK variant (src/backends/cuda/sdk_cuda.cpp, linked into CUDA builds).
using SdkCudaFactory = std::function<std::unique_ptr<Workload>(std::shared_ptr<SdkExperiment>, const Setup&,
                                                               const Point&, Backend&, const LabSettings&)>;

/// Checks that a definition has what every SDK experiment needs (arrays, generate, reference, check, a variant).
/// @throws std::logic_error naming what is missing and the experiment.
void validate_definition(const ExperimentDef& def);

/// Adds every experiment registered at static initialisation (LABRUN_EXPERIMENT) to
/// `registry` with its host implementations. Runs each definition once per call.
/// @throws std::logic_error for a duplicate experiment or variant name.
void register_linked_experiments(Registry& registry);

/// Adds the CUDA implementations of the experiments register_linked_experiments added to `registry`: each
/// LABRUN_CUDA_VARIANTS launcher through `cuda`.
/// @throws std::logic_error for a CUDA part whose experiment is not linked, or a launcher of an unknown variant.
void register_linked_cuda(Registry& registry, const SdkCudaFactory& cuda);

/// The SDK experiment `name` that register_linked_experiments added to `registry` (its definition, inputs and
/// reference as the lab uses them); nullptr if there is none.
std::shared_ptr<SdkExperiment> sdk_experiment(const Registry& registry, const std::string& name);

/// The factory of src/backends/cuda/sdk_cuda.cpp (CUDA builds only).
SdkCudaFactory sdk_cuda_factory();

}  // namespace labrun
