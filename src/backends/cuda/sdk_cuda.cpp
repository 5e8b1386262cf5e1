// The experiment SDK's CUDA workload: the point's inputs on the device (generated there by the experiment's device
// generator, else copied from the host set; kept while the input key stays), outputs and scratch allocated before
// any capture (case C12), the variant's setup run once, each iteration enqueued on the backend's stream; the
// correctness iteration poisons the outputs (NaN bytes unless the Layout says otherwise), waits, copies them back
// (a chunked output only chunk by chunk, as the check reads it) and runs the experiment's check.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <memory>
#include <utility>
#include <vector>

#include "cuda_backend.hpp"
#include "cupti_trace.hpp"
#include "guards.hpp"
#include "integrity.cuh"
#include "sdk_registry.hpp"
#include "stream_pool.hpp"

namespace labrun {

namespace {

// The device copy of the input set of one input key: its buffers, the lab seed whose set they hold now (the point's,
// or the re-check's second set), and the content hash of each array of each set as loaded (lab.guard_inputs).
struct DeviceInputs {
  std::vector<DeviceBuffer> buffers;
  Arrays arrays;
  std::optional<std::uint64_t> loaded;                         ///< the lab seed of the set in the buffers
  std::map<std::uint64_t, std::vector<std::uint64_t>> hashes;  ///< by lab seed
};

// The hash of every array of `arrays`, in order.
std::vector<std::uint64_t> device_hashes(const Arrays& arrays, cudaStream_t stream) {
  std::vector<std::pair<const void*, std::size_t>> blocks;
  for (const auto& [name, v] : arrays.items()) blocks.emplace_back(v.data, v.bytes());
  return device_content_hashes(blocks, stream);
}

// One fenced device array (src/lab/guards.hpp): where its data starts, and how its guards read.
struct DeviceFence {
  FencedArray array;
  unsigned char* data = nullptr;
};

// The two guard regions of `f`: before, after.
std::vector<GuardRegion> regions_of(const DeviceFence& f) {
  return {GuardRegion{f.data - kGuardBytes, kGuardBytes},
          GuardRegion{f.data + f.array.bytes, f.array.after_guard_bytes()}};
}

// A device buffer for `bytes` (at least 16), fenced when `fences` is given: the guards filled on `stream`, the
// fence added; returns where the array starts.
void* device_array(std::size_t bytes, MemoryRole memory, std::vector<DeviceBuffer>& buffers,
                   std::vector<DeviceFence>* fences, const std::string& name, std::size_t elem_bytes,
                   cudaStream_t stream) {
  if (!fences) {
    buffers.emplace_back(std::max<std::size_t>(bytes, 16), memory);
    return buffers.back().get();
  }
  // The guards are the lab's memory: the point's work bytes stay what the unfenced array would take.
  const std::size_t total = fenced_allocation_bytes(bytes), counted = std::max<std::size_t>(bytes, 16);
  buffers.emplace_back(total, memory, total - counted);
  // elem_bytes 0: raw memory (Launch::allocate), its offsets in bytes.
  DeviceFence f{FencedArray{name, std::max<std::size_t>(elem_bytes, 1), bytes, elem_bytes == 0},
                buffers.back().as<unsigned char>() + kGuardBytes};
  fill_guard_regions(regions_of(f), stream);
  fences->push_back(f);
  return f.data;
}

// The first write found in the guards of `fences`: scanned on the device on `stream` (after the work queued there),
// one wait; refills the guards written.
std::optional<std::string> device_guard_write(const std::vector<DeviceFence>& fences, cudaStream_t stream) {
  std::vector<GuardRegion> regions;
  for (const DeviceFence& f : fences)
    for (const GuardRegion& r : regions_of(f)) regions.push_back(r);
  const auto found = scan_guard_regions(regions, stream);
  std::optional<std::string> first;
  std::vector<GuardRegion> written;
  for (std::size_t k = 0; k < fences.size(); ++k) {
    // The guard before: its last written byte is the one nearest the array; the guard after: its first.
    const GuardScan scan{found[2 * k].second, found[2 * k + 1].first};
    auto reason = guard_write_reason(fences[k].array, scan);
    if (!reason) continue;
    for (const GuardRegion& r : regions_of(fences[k])) written.push_back(r);
    if (!first) first = reason;
  }
  fill_guard_regions(written, stream);
  return first;
}

// Device buffers of one role, from a Layout (at least 16 bytes each), fenced when `fences` is given.
void allocate(const Layout& layout, Role role, MemoryRole memory, std::vector<DeviceBuffer>& buffers, Arrays& arrays,
              std::vector<DeviceFence>* fences = nullptr, cudaStream_t stream = nullptr) {
  for (const auto& e : layout.entries()) {
    if (e.role != role) continue;
    const std::size_t bytes = static_cast<std::size_t>(e.count) * e.elem.bytes;
    arrays.put(e.name,
               View{device_array(bytes, memory, buffers, fences, e.name, e.elem.bytes, stream), e.count, e.elem});
  }
}

class CudaLaunch : public Launch {
 public:
  CudaLaunch(const Args& args, const Reference& ref, LaunchContext& ctx, const Arrays& in, const Arrays& out,
             const Arrays& scratch, const Layout& layout = Layout(), bool fenced = false)
      : returned(layout), args_(args), ref_(ref), ctx_(ctx), in_(in), out_(out), scratch_(scratch), fenced_(fenced) {}
  const Args& args() const override { return args_; }
  const Reference& reference() const override { return ref_; }
  const View& in(const std::string& name) const override { return in_[name]; }
  const View& out(const std::string& name) const override { return out_[name]; }
  const View& scratch(const std::string& name) const override { return scratch_[name]; }
  CUstream_st* stream() const override { return ctx_.stream(); }
  int sm_count() const override { return ctx_.sm_count(); }
  int device() const override { return ctx_.device(); }
  void mark(const char* op, double bytes) override { ctx_.mark(op, bytes); }
  void read_to_host(void* host, const void* device_ptr, std::size_t bytes) override {
    ctx_.read_to_host(host, device_ptr, bytes);
  }
  void* allocate(std::size_t bytes) override {
    const std::string name = "memory from Launch::allocate #" + std::to_string(owned_.size() + 1) + " (" +
                             std::to_string(bytes) + " bytes)";
    void* data = device_array(bytes, MemoryRole::work, owned_, fenced_ ? &fences : nullptr, name, 0, ctx_.stream());
    allocated.push_back(ArrayExtent{name, "allocate", reinterpret_cast<std::uint64_t>(data), bytes});
    return data;
  }
  void* allocate_pinned(std::size_t bytes) override {
    pinned_.push_back(std::make_unique<PinnedBuffer>(std::max<std::size_t>(bytes, 16)));
    return pinned_.back()->as<void>();
  }
  std::shared_ptr<void> stream_alloc(std::size_t bytes) override {
    if (!pool_) pool_ = std::make_unique<CachingPool>(ctx_.device());
    auto buf = std::make_shared<PoolBuffer>(std::max<std::size_t>(bytes, 16), ctx_.stream());
    return std::shared_ptr<void>(buf, buf->get());
  }
  void returns(const std::string& name, const void* data) override { returned.set(name, data); }
  ReturnedOutputs returned;
  std::vector<DeviceFence> fences;     ///< Launch::allocate's blocks, fenced with lab.fences
  std::vector<ArrayExtent> allocated;  ///< Launch::allocate's blocks, where they lie

 private:
  const Args& args_;
  const Reference& ref_;
  LaunchContext& ctx_;
  const Arrays &in_, &out_, &scratch_;
  bool fenced_;
  std::unique_ptr<CachingPool> pool_;  // declared before the buffers: released after them
  std::vector<DeviceBuffer> owned_;
  std::vector<std::unique_ptr<PinnedBuffer>> pinned_;
};

class SdkCudaWorkload : public Workload {
 public:
  SdkCudaWorkload(std::shared_ptr<SdkExperiment> exp, const Setup& setup, const Point& point, Backend& backend,
                  const LabSettings& lab)
      : exp_(std::move(exp)), point_(point), args_(point_), ctx_(launch_context(backend)), seed_(lab.seed),
        scale_(lab.tolerance_scale.value_or(1.0)), guard_inputs_(lab.guard_inputs) {
    // The reference first: from another process's cache entry it needs no host inputs (reference_cache.hpp).
    ref_ = exp_->reference(args_, seed_);
    const Layout layout = exp_->layout(args_);
    dev_ = device_inputs(layout);
    allocate(layout, Role::output, MemoryRole::work, buffers_, out_, lab.fences ? &fences_ : nullptr, ctx_.stream());
    allocate(layout, Role::scratch, MemoryRole::work, buffers_, scratch_, lab.fences ? &fences_ : nullptr,
             ctx_.stream());
    for (const auto& e : layout.entries()) {
      if (e.role == Role::output) poison_.push_back(e.poison);
      if (e.role == Role::output && e.chunked) chunked_.push_back(e);  // read back only by exact_chunks
      else if (e.role == Role::output || e.role == Role::returned)
        host_out_layout_.add(e.name, Role::output, e.elem, e.count);
    }
    launch_ = std::make_unique<CudaLaunch>(args_, *ref_, ctx_, dev_->arrays, out_, scratch_, layout, lab.fences);
    step_ = setup(*launch_);  // before any capture: occupancy look-ups, workspaces
  }

  void run() override { step_(*launch_); }

  CheckOutcome check(const std::function<void()>& iterate) override {
    ensure_loaded(*dev_, seed_);
    return compare_after(iterate, *ref_, seed_);
  }

  Cost cost() const override { return exp_->cost(args_, *ref_); }

  unsigned integrity_support() const override { return kFenceCheck | kInputCheck | kRecheck; }

  std::optional<std::string> fence_violation() override {
    std::vector<DeviceFence> all = fences_;
    all.insert(all.end(), launch_->fences.begin(), launch_->fences.end());
    return device_guard_write(all, ctx_.stream());
  }

  std::vector<ArrayExtent> extents() const override {
    std::vector<ArrayExtent> all;
    const auto add = [&](const Arrays& arrays, const char* role) {
      for (const auto& [name, v] : arrays.items())
        all.push_back(ArrayExtent{name, role, reinterpret_cast<std::uint64_t>(v.data), v.bytes()});
    };
    add(dev_->arrays, "input");
    add(out_, "output");
    add(scratch_, "scratch");
    all.insert(all.end(), launch_->allocated.begin(), launch_->allocated.end());
    return all;
  }

  std::optional<std::string> input_change() override {
    if (!guard_inputs_ || !dev_->loaded) return std::nullopt;
    const std::uint64_t seed = *dev_->loaded;
    const std::vector<std::uint64_t> expected = dev_->hashes[seed];
    const std::vector<std::uint64_t> now = device_hashes(dev_->arrays, ctx_.stream());  // after the queued work
    if (now == expected) return std::nullopt;
    // Where: the changed array against the host set (generated now if the device made the set), then the set
    // loaded again (shared with the point's other variants, which must see it as generated).
    std::optional<std::string> first;
    const auto host = exp_->inputs(args_, seed);
    const auto& items = dev_->arrays.items();
    for (std::size_t k = 0; k < items.size() && !first; ++k) {
      if (now[k] == expected[k]) continue;
      const View& v = items[k].second;
      std::vector<unsigned char> seen(v.bytes());
      copy_to_host(seen.data(), v.data, seen.size(), ctx_.stream());
      first = input_change_reason(items[k].first, first_difference(seen.data(), host->arrays()[items[k].first].data,
                                                                   v.count, v.elem.bytes));
    }
    load_set(*dev_, seed);
    return first;
  }

  // The second set's host inputs and reference, made on a thread of its own while the GPU times the point.
  void prepare_recheck() override { exp_->prefetch(args_, recheck_lab_seed(seed_)); }

  // The second set stays loaded after the re-check: the variants of an interleaved group are re-checked one after
  // another on it, and whatever needs the point's own set next (a correctness iteration, the next point's setup)
  // loads it back first (ensure_loaded).
  std::optional<CheckOutcome> recheck(const std::function<void()>& iterate) override {
    const std::uint64_t fresh_seed = recheck_lab_seed(seed_);
    const auto ref = exp_->reference(args_, fresh_seed);
    ensure_loaded(*dev_, fresh_seed);
    return compare_after(iterate, *ref, fresh_seed, kRecheckSampleElements);
  }

 private:
  // Poisons the outputs, runs `iterate`, copies the outputs back and compares them with `ref`, the reference of the
  // set of lab seed `lab_seed` (the check reads that set's host inputs if it reads inputs; `sample`: Compare's).
  CheckOutcome compare_after(const std::function<void()>& iterate, const Reference& ref, std::uint64_t lab_seed,
                             std::int64_t sample = 0) {
    // Poison: each output's byte (default all-ones, NaN in every floating-point dtype), so an element no thread
    // wrote fails (C07).
    for (std::size_t k = 0; k < out_.items().size(); ++k) {
      const View& v = out_.items()[k].second;
      if (v.bytes() > 0)  // an empty array has no byte to poison (its guard begins there)
        LABRUN_CUDA(cudaMemsetAsync(v.data, poison_[k], v.bytes(), ctx_.stream()));
    }
    // Returned outputs are the variant's memory (an input, say): not poisoned.
    iterate();
    LABRUN_CUDA(cudaStreamSynchronize(ctx_.stream()));
    const ReturnedOutputs& r = launch_->returned;
    if (auto missing = r.missing()) return *missing;
    // Not a variant's sync: read outside the counted path, after the iteration completed. Into the host copy the
    // point's previous comparison used (the correctness iteration's, for the re-check): its pages are mapped already,
    // where fresh memory takes a page fault per 4 KiB (with a fresh copy, the re-check of one variant's 256 MiB output
    // took 0.15 s on the H100 machine).
    if (!host_out_) host_out_ = std::make_unique<HostArrays>(host_out_layout_, Role::output, false);
    HostArrays& host = *host_out_;
    for (const auto& [name, v] : out_.items())  // a chunked output stays on the device: exact_chunks reads it
      if (v.bytes() > 0 && host.arrays().has(name))
        copy_to_host(host.arrays()[name].data, v.data, v.bytes(), ctx_.stream());
    for (const auto& e : r.entries()) {  // from where the variant pointed
      const View& h = host.arrays()[e.name];
      copy_to_host(h.data, r.data(e.name), h.bytes(), ctx_.stream());
    }
    Arrays outputs = host.arrays();  // and the chunked outputs: count and elem, no host copy
    for (const auto& e : chunked_) outputs.put(e.name, View{nullptr, e.count, e.elem});
    // exact_chunks copies a chunk at a time from the device output (or a returned output where it points).
    auto read = [&](const std::string& name, std::int64_t begin, std::int64_t count, void* dst) {
      const void* src = out_.has(name) ? out_[name].data : r.data(name);
      const std::size_t w = outputs[name].elem.bytes;
      if (count > 0)
        copy_to_host(dst, static_cast<const char*>(src) + static_cast<std::size_t>(begin) * w,
                     static_cast<std::size_t>(count) * w, ctx_.stream());
    };
    std::shared_ptr<const HostArrays> in;
    auto inputs = [&]() -> const Arrays& {
      if (!in) in = exp_->inputs(args_, lab_seed);
      return in->arrays();
    };
    return exp_->compare(args_, inputs, outputs, ref, scale_, r.inputs_aliased(dev_->arrays), read, sample);
  }

  // load_set unless `set` holds the set of `lab_seed` already.
  void ensure_loaded(DeviceInputs& set, std::uint64_t lab_seed) {
    if (set.loaded != lab_seed) load_set(set, lab_seed);
  }

  // Writes the input set of lab seed `lab_seed` into `set`'s buffers: by the experiment's device generator where it
  // has one, else copied from the host set. Waits for it; hashes it the first time (lab.guard_inputs).
  void load_set(DeviceInputs& set, std::uint64_t lab_seed) {
    set.loaded.reset();
    bool generated = false;
    if (exp_->cuda && exp_->cuda->device_generator()) {
      const Arrays none;
      CudaLaunch l(args_, *ref_, ctx_, set.arrays, none, none);
      generated = exp_->cuda->device_generator()(l, exp_->input_seed(args_, lab_seed));
    }
    if (!generated) {
      auto host = exp_->inputs(args_, lab_seed);
      for (const auto& [name, v] : set.arrays.items())
        if (v.bytes() > 0)
          LABRUN_CUDA(
              cudaMemcpyAsync(v.data, host->arrays()[name].data, v.bytes(), cudaMemcpyHostToDevice, ctx_.stream()));
    }
    LABRUN_CUDA(cudaStreamSynchronize(ctx_.stream()));
    set.loaded = lab_seed;
    if (guard_inputs_ && !set.hashes.count(lab_seed)) set.hashes[lab_seed] = device_hashes(set.arrays, ctx_.stream());
  }

  // The device copy of the point's input set, shared with the previous point's when the key is the same.
  std::shared_ptr<DeviceInputs> device_inputs(const Layout& layout) {
    const std::string key = exp_->input_key(args_) + "/" + std::to_string(exp_->input_seed(args_, seed_));
    if (exp_->device_inputs && exp_->device_key == key) {
      auto held = std::static_pointer_cast<DeviceInputs>(exp_->device_inputs);
      ensure_loaded(*held, seed_);  // a re-check may have left its second set there
      return held;
    }
    exp_->device_inputs.reset();  // free the old device copy before allocating the new one
    auto fresh = std::make_shared<DeviceInputs>();
    allocate(layout, Role::input, MemoryRole::input, fresh->buffers, fresh->arrays);
    load_set(*fresh, seed_);
    exp_->device_inputs = fresh;
    exp_->device_key = key;
    return fresh;
  }

  std::shared_ptr<SdkExperiment> exp_;
  Point point_;
  Args args_;
  LaunchContext& ctx_;
  std::uint64_t seed_;
  double scale_;
  bool guard_inputs_;
  std::shared_ptr<const Reference> ref_;
  std::shared_ptr<DeviceInputs> dev_;
  std::vector<DeviceBuffer> buffers_;
  std::vector<DeviceFence> fences_;  // the outputs' and scratch arrays' guards (lab.fences)
  Arrays out_, scratch_;
  Layout host_out_layout_;
  std::unique_ptr<HostArrays> host_out_;  // the host copy of the outputs, kept for the point's next comparison
  std::vector<std::uint8_t> poison_;      // per output, in the order of out_
  std::vector<Layout::Entry> chunked_;    // outputs read back only in chunks (Layout::chunked)
  std::unique_ptr<CudaLaunch> launch_;
  Step step_;
};

}  // namespace

SdkCudaFactory sdk_cuda_factory() {
  return [](std::shared_ptr<SdkExperiment> exp, const Setup& setup, const Point& point, Backend& backend,
            const LabSettings& lab) -> std::unique_ptr<Workload> {
    return std::make_unique<SdkCudaWorkload>(std::move(exp), setup, point, backend, lab);
  };
}

void register_cuda_experiments(Registry& registry) { register_linked_cuda(registry, sdk_cuda_factory()); }

}  // namespace labrun
