// What labrun/experiment.hpp's Compare holds and how the lab makes one: the lab's side of the class an experiment's
// check reads (included by labrun/experiment.hpp only, after Args, Arrays, Reference and CheckResult).
#pragma once

namespace labrun::detail {

/// The state of a Compare and its constructor (the lab makes one per correctness iteration).
class CompareState {
 public:
  /// Copies elements [begin, begin + count) of output `array` into `host` (the lab's copy back of a chunk).
  using ChunkReader = std::function<void(const std::string& array, std::int64_t begin, std::int64_t count, void* host)>;
  /// The most bytes of one chunk of exact_chunks (of the output, and again of the expectation).
  static constexpr std::size_t kChunkBytes = std::size_t{32} << 20;

  /// `inputs` hands out the host inputs when the check first asks for them (a set generated on the device is
  /// generated on the host only if the check reads them).
  /// `returned`: the returned outputs (Role::returned) by name, each with the input whose memory the variant handed
  /// back as it ("" when none).
  /// `read`: where exact_chunks reads outputs from (the device, chunk by chunk); empty: from `outputs`' host memory.
  /// A chunked output (Layout::chunked) is in `outputs` with its count and elem but no data.
  /// `sample`: 0 compares every element; N > 0 (the lab's re-check on fresh inputs, docs/integrity.md) lets
  /// elementwise() compare at most about N evenly spaced elements of each output (sampled() is then true).
  CompareState(const Args& args, std::function<const Arrays&()> inputs, const Arrays& outputs, const Reference& ref,
               double scale, std::map<std::string, std::string> returned = {}, ChunkReader read = {},
               std::int64_t sample = 0)
      : args_(args), in_(std::move(inputs)), out_(outputs), ref_(ref), scale_(scale), returned_(std::move(returned)),
        read_(std::move(read)), sample_(sample) {}

  /// Every comparison made so far, in order.
  const std::vector<CheckResult>& results() const { return results_; }

 protected:
  const Args& args_;
  std::function<const Arrays&()> in_;
  const Arrays& out_;
  const Reference& ref_;
  double scale_;
  std::map<std::string, std::string> returned_;
  ChunkReader read_;
  std::int64_t sample_ = 0;
  std::vector<CheckResult> results_;
};

}  // namespace labrun::detail
