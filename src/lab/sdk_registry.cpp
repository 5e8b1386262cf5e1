// The lab's side of the experiment SDK (sdk_registry.hpp): the shared input/reference state of an SDK experiment,
// its host workload, and its registration into the Registry from the definitions linked.hpp lists.
#include "sdk_registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include <pthread.h>
#include <sched.h>

#include <labrun/counter_rng.hpp>

#include "build_info.hpp"
#include "guards.hpp"
#include "linked.hpp"
#include "record.hpp"
#include "reference_cache.hpp"

namespace labrun {
// ---- HostArrays -------------------------------------------------------------------------------------------

namespace {

// A 64-byte aligned block of `bytes` (at least 16), zeroed or not; fenced: inside guard regions filled with
// kGuardByte, the returned pointer past the guard before. The shared_ptr owns the whole allocation.
std::pair<std::shared_ptr<void>, void*> host_block(std::size_t bytes, bool zero, bool fenced) {
  const std::size_t used = std::max<std::size_t>(bytes, 16);
  const std::size_t total = fenced ? fenced_allocation_bytes(bytes) : (used + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, total);
  if (!p) throw std::bad_alloc();
  std::shared_ptr<void> block(p, [](void* q) { std::free(q); });
  auto* data = static_cast<unsigned char*>(p) + (fenced ? kGuardBytes : 0);
  if (fenced) {
    std::memset(p, kGuardByte, kGuardBytes);
    std::memset(data + bytes, kGuardByte, total - kGuardBytes - bytes);
  }
  if (zero) std::memset(data, 0, fenced ? bytes : total);
  return {block, data};
}

// The first write into the guards of `array` (a fenced host block at `data`); refills them.
std::optional<std::string> host_guard_write(const FencedArray& array, void* data) {
  auto* p = static_cast<unsigned char*>(data);
  auto found = guard_write(array, p - kGuardBytes, p + array.bytes);
  if (found) {
    std::memset(p - kGuardBytes, kGuardByte, kGuardBytes);
    std::memset(p + array.bytes, kGuardByte, array.after_guard_bytes());
  }
  return found;
}

}  // namespace

HostArrays::HostArrays(const Layout& layout, Role role, bool zero, bool fenced) : fenced_(fenced) {
  for (const auto& e : layout.entries()) {
    if (e.role != role) continue;
    const std::size_t bytes = static_cast<std::size_t>(e.count) * e.elem.bytes;
    auto [block, data] = host_block(bytes, zero, fenced);
    blocks_.push_back(block);
    poison_.push_back(e.poison);
    arrays_.put(e.name, View{data, e.count, e.elem});
  }
}

void HostArrays::poison() {
  const auto& items = arrays_.items();
  for (std::size_t k = 0; k < items.size(); ++k)  // an empty array has no byte to poison (its guard begins there)
    if (items[k].second.bytes() > 0) std::memset(items[k].second.data, poison_[k], items[k].second.bytes());
}

std::optional<std::string> HostArrays::fence_violation() {
  std::optional<std::string> first;
  if (!fenced_) return first;
  for (const auto& [name, v] : arrays_.items()) {
    auto found = host_guard_write(FencedArray{name, v.elem.bytes, v.bytes()}, v.data);
    if (found && !first) first = found;
  }
  return first;
}

std::vector<std::uint64_t> HostArrays::hashes() const {
  std::vector<std::uint64_t> h;
  for (const auto& [name, v] : arrays_.items()) h.push_back(content_hash(v.data, v.bytes()));
  return h;
}

void* HostBlocks::allocate(std::size_t bytes) {
  auto [block, data] = host_block(bytes, true, fenced_);
  blocks_.push_back(block);
  data_.emplace_back(data, bytes);
  return data;
}

std::optional<std::string> HostBlocks::fence_violation() {
  std::optional<std::string> first;
  if (!fenced_) return first;
  for (std::size_t k = 0; k < data_.size(); ++k) {
    const auto [data, bytes] = data_[k];
    const std::string name = "memory from Launch::allocate #" + std::to_string(k + 1) + " (" + std::to_string(bytes) +
                             " bytes)";
    auto found = host_guard_write(FencedArray{name, 1, bytes, true}, data);
    if (found && !first) first = found;
  }
  return first;
}

// ---- SdkExperiment ----------------------------------------------------------------------------------------

Layout SdkExperiment::layout(const Args& args) const {
  if (!def_->arrays_fn())
    throw std::logic_error(def_->name() + ": the experiment declares no arrays (ExperimentDef::arrays)");
  Layout l;
  def_->arrays_fn()(args, l);
  return l;
}

namespace {

// "a=1,b=f32" over `axes` (every experiment axis when empty), in declaration order.
std::string axes_text(const ExperimentDef& def, const Args& args, const std::vector<std::string>& axes) {
  std::vector<std::string> names = axes;
  if (names.empty())
    for (const auto& a : def.axes()) names.push_back(a.name);
  std::string key;
  for (const auto& n : names) {
    if (!key.empty()) key += ",";
    key += n + "=" + to_string(args.point().at(n));
  }
  return key;
}

}  // namespace

std::string SdkExperiment::input_key(const Args& args) const { return axes_text(*def_, args, def_->input_axes()); }

std::uint64_t SdkExperiment::input_seed(const Args& args, std::uint64_t lab_seed) const {
  const std::string text = def_->seed_text_fn() ? def_->seed_text_fn()(args) : def_->name() + "/" + input_key(args);
  return splitmix64(lab_seed ^ fnv1a64(text));
}

// ---- SdkExperiment -----------------------------------------------------------------------------------------

// A set and references being made on a thread of its own (SdkExperiment::prefetch). The thread reads `this`'s
// const parts only (the definition's generator and reference); everything it hands back goes through `m`.
struct SdkExperiment::Prefetch {
  std::string key;  ///< the set's set_key
  std::mutex m;
  std::deque<std::pair<std::string, Point>> wanted;  ///< references still to make: their key, the point at
  bool cancelled = false;                            ///< dropped: make nothing more
  bool closed = false;                               ///< the thread takes no more requests
  std::shared_ptr<HostArrays> set;
  std::vector<std::uint64_t> hashes;
  std::vector<std::pair<std::string, std::shared_ptr<const Reference>>> refs;
  std::exception_ptr error;
  std::thread worker;
  ~Prefetch() {
    {
      std::lock_guard<std::mutex> lock(m);
      cancelled = true;
    }
    if (worker.joinable()) worker.join();
  }
};

SdkExperiment::SdkExperiment(std::shared_ptr<const ExperimentDef> def) : def_(std::move(def)) {}
SdkExperiment::~SdkExperiment() = default;

std::string SdkExperiment::set_key(const Args& args, std::uint64_t lab_seed) const {
  return input_key(args) + "/" + std::to_string(input_seed(args, lab_seed));
}

std::string SdkExperiment::reference_key(const Args& args, std::uint64_t lab_seed) const {
  std::string key = set_key(args, lab_seed);
  if (!def_->reference_axes().empty()) key += "/" + axes_text(*def_, args, def_->reference_axes());
  return key;
}

void SdkExperiment::prefetch(const Args& args, std::uint64_t lab_seed) {
  if (!def_->generate_fn() || !def_->reference_fn()) return;
  enter_input_key(args);  // a set of another key held now is released (as inputs() would)
  const std::string key = set_key(args, lab_seed);
  const std::string ref_key = reference_key(args, lab_seed);
  for (const auto& [k, r] : ref_slots_)
    if (k == ref_key) return;  // held already
  if (prefetch_ && prefetch_->key == key) {
    Prefetch& p = *prefetch_;
    std::lock_guard<std::mutex> lock(p.m);
    const auto same = [&](const auto& e) { return e.first == ref_key; };
    if (!p.closed && std::none_of(p.wanted.begin(), p.wanted.end(), same) &&
        std::none_of(p.refs.begin(), p.refs.end(), same))
      p.wanted.emplace_back(ref_key, args.point());
    return;  // closed: reference() makes it when asked
  }
  prefetch_.reset();  // another set: drop the running one
  auto p = std::make_unique<Prefetch>();
  p->key = key;
  p->wanted.emplace_back(ref_key, args.point());
  Prefetch* raw = p.get();
  p->worker = std::thread([this, raw, layout = layout(args), point = args.point(), lab_seed] {
    // Idle priority, best effort; the generator's and the reference's own threads inherit it.
    sched_param none{};
    pthread_setschedparam(pthread_self(), SCHED_IDLE, &none);
    try {
      auto set = std::make_shared<HostArrays>(layout, Role::input, false);
      generate_into(Args(point), lab_seed, set->arrays());
      std::vector<std::uint64_t> hashes = set->hashes();
      {
        std::lock_guard<std::mutex> lock(raw->m);
        raw->set = set;
        raw->hashes = std::move(hashes);
      }
      for (;;) {
        std::pair<std::string, Point> next;
        {
          std::lock_guard<std::mutex> lock(raw->m);
          if (raw->cancelled || raw->wanted.empty()) {
            raw->closed = true;
            return;
          }
          next = std::move(raw->wanted.front());
          raw->wanted.pop_front();
        }
        auto r = std::make_shared<Reference>();
        def_->reference_fn()(Args(next.second), set->arrays(), *r);
        std::lock_guard<std::mutex> lock(raw->m);
        raw->refs.emplace_back(std::move(next.first), std::move(r));
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(raw->m);
      raw->error = std::current_exception();
      raw->closed = true;
    }
  });
  prefetch_ = std::move(p);
}

void SdkExperiment::take_prefetch(const std::string& key) {
  if (!prefetch_) return;
  std::unique_ptr<Prefetch> p = std::move(prefetch_);
  if (key.empty() || p->key != key) return;  // dropped (its destructor waits for the thread)
  p->worker.join();                          // it ends once every queued reference is made
  if (p->error) std::rethrow_exception(p->error);
  const bool held = std::any_of(input_slots_.begin(), input_slots_.end(),
                                [&](const InputSlot& s) { return s.key == key; });
  if (p->set && !held) {
    if (input_slots_.size() >= kInputSlots) input_slots_.erase(input_slots_.begin());
    input_slots_.push_back(InputSlot{key, p->set, p->hashes});
  }
  for (const auto& made : p->refs) {  // not a structured binding: clang 14 lets no lambda capture one
    const bool have = std::any_of(ref_slots_.begin(), ref_slots_.end(),
                                  [&](const auto& s) { return s.first == made.first; });
    if (have) continue;
    if (ref_slots_.size() >= kReferenceSlots) ref_slots_.erase(ref_slots_.begin());
    ref_slots_.emplace_back(made.first, made.second);
  }
}

void SdkExperiment::enter_input_key(const Args& args) {
  const std::string key = input_key(args);
  if (key == input_key_) return;
  take_prefetch("");     // made for another key: dropped
  input_slots_.clear();  // release the old sets first: large sets are gigabytes
  ref_slots_.clear();
  input_key_ = key;
}

SdkExperiment::InputSlot& SdkExperiment::input_slot(const Args& args, std::uint64_t lab_seed) {
  enter_input_key(args);
  const std::string key = set_key(args, lab_seed);
  if (prefetch_ && prefetch_->key == key) take_prefetch(key);
  for (std::size_t k = 0; k < input_slots_.size(); ++k)
    if (input_slots_[k].key == key) {
      std::rotate(input_slots_.begin() + static_cast<std::ptrdiff_t>(k),
                  input_slots_.begin() + static_cast<std::ptrdiff_t>(k) + 1, input_slots_.end());
      return input_slots_.back();
    }
  if (input_slots_.size() >= kInputSlots) input_slots_.erase(input_slots_.begin());
  auto in = std::make_shared<HostArrays>(layout(args), Role::input, false);
  generate_into(args, lab_seed, in->arrays());
  input_slots_.push_back(InputSlot{key, in, in->hashes()});
  return input_slots_.back();
}

std::shared_ptr<const HostArrays> SdkExperiment::inputs(const Args& args, std::uint64_t lab_seed) {
  return input_slot(args, lab_seed).set;
}

std::shared_ptr<HostArrays> SdkExperiment::writable_inputs(const Args& args, std::uint64_t lab_seed) {
  return input_slot(args, lab_seed).set;
}

void SdkExperiment::generate_into(const Args& args, std::uint64_t lab_seed, Arrays& arrays) const {
  if (!def_->generate_fn()) throw std::logic_error(def_->name() + ": no input generator (ExperimentDef::generate)");
  def_->generate_fn()(args, input_seed(args, lab_seed), arrays);
}

std::vector<std::uint64_t> SdkExperiment::input_hashes(const Args& args, std::uint64_t lab_seed) {
  return input_slot(args, lab_seed).hashes;
}

std::optional<std::string> SdkExperiment::restore_inputs(const Args& args, std::uint64_t lab_seed, HostArrays& set,
                                                         const std::vector<std::uint64_t>& expected) const {
  const std::vector<std::uint64_t> now = set.hashes();
  if (now == expected) return std::nullopt;
  HostArrays fresh(layout(args), Role::input, false);
  generate_into(args, lab_seed, fresh.arrays());
  std::optional<std::string> first;
  const auto& items = set.arrays().items();
  for (std::size_t k = 0; k < items.size(); ++k) {
    if (k < expected.size() && now[k] == expected[k]) continue;
    const View& v = items[k].second;
    const View& g = fresh.arrays().items()[k].second;
    if (!first) first = input_change_reason(items[k].first, first_difference(v.data, g.data, v.count, v.elem.bytes));
    std::memcpy(v.data, g.data, v.bytes());
  }
  return first;
}

std::shared_ptr<const Reference> SdkExperiment::reference(const Args& args, std::uint64_t lab_seed) {
  enter_input_key(args);
  const std::string key = reference_key(args, lab_seed);
  for (const auto& [k, r] : ref_slots_)
    if (k == key) return r;
  if (const std::string set = set_key(args, lab_seed); prefetch_ && prefetch_->key == set) {
    take_prefetch(set);
    for (const auto& [k, r] : ref_slots_)
      if (k == key) return r;
  }
  if (ref_slots_.size() >= kReferenceSlots) ref_slots_.erase(ref_slots_.begin());
  // Another process of a pooled sweep may have computed it (reference_cache.hpp): then no host inputs are made.
  const ReferenceCache disk = ReferenceCache::from_env();
  const std::string disk_key = def_->name() + "/" + key + "/" + build_info().git_sha;
  if (const auto j = disk.load(disk_key)) {
    try {
      auto r = std::make_shared<Reference>();
      for (const auto& [name, v] : j->items()) r->set(name, json_number(v, {}));
      ref_slots_.emplace_back(key, r);
      return r;
    } catch (const std::exception&) {  // a malformed entry is a miss
    }
  }
  auto in = inputs(args, lab_seed);
  auto r = std::make_shared<Reference>();
  if (!def_->reference_fn()) throw std::logic_error(def_->name() + ": no reference (ExperimentDef::reference)");
  def_->reference_fn()(args, in->arrays(), *r);
  if (r->arrays().empty() && !r->values().empty()) {
    Json j = Json::object();
    for (const auto& [name, v] : r->values()) j[name] = json_real(v);
    disk.store(disk_key, j);
  }
  ref_slots_.emplace_back(key, r);
  return r;
}

Cost SdkExperiment::cost(const Args& args, const Reference& ref) const {
  if (!def_->cost_fn()) return Cost{};
  Cost c = def_->cost_fn()(args, ref);
  if (std::isnan(c.peak_work_bytes) && def_->arrays_fn()) {
    const Layout l = layout(args);
    c.peak_work_bytes = l.bytes(Role::output) + l.bytes(Role::scratch) + l.bytes(Role::transient);
  }
  return c;
}

CheckOutcome SdkExperiment::compare(const Args& args, const std::function<const Arrays&()>& inputs,
                                    const Arrays& outputs, const Reference& ref, double scale,
                                    const std::map<std::string, std::string>& returned,
                                    const Compare::ChunkReader& read, std::int64_t sample) const {
  if (!def_->check_fn()) throw std::logic_error(def_->name() + ": no check (ExperimentDef::check)");
  // The inputs are made on the host only if the check reads them (a device-generated set has no host copy).
  Compare c(args, inputs, outputs, ref, scale, returned, read, sample);
  def_->check_fn()(c);
  if (c.results().empty()) return check_error(def_->name() + ": the check compared nothing");
  CheckOutcome out;
  out.comparisons = c.results();
  out.poisoned = returned.empty();  // a returned output is the variant's memory (an input, say): not poisoned
  return out;
}

// ---- Returned outputs ---------------------------------------------------------------------------------------

ReturnedOutputs::ReturnedOutputs(const Layout& layout) {
  for (const auto& e : layout.entries())
    if (e.role == Role::returned) entries_.push_back(e);
}

void ReturnedOutputs::set(const std::string& name, const void* data) {
  for (const auto& e : entries_)
    if (e.name == name) {
      data_[name] = data;
      return;
    }
  throw std::out_of_range("Launch::returns(\"" + name +
                          "\"): no returned output of that name (declare it with l.returned(...) in e.arrays)");
}

const void* ReturnedOutputs::data(const std::string& name) const {
  const auto it = data_.find(name);
  return it == data_.end() ? nullptr : it->second;
}

std::optional<CheckOutcome> ReturnedOutputs::missing() const {
  for (const auto& e : entries_)
    if (e.count > 0 && !data(e.name))
      return check_error("the variant handed back no '" + e.name + "' (Launch::returns)", false);
  return std::nullopt;
}

std::map<std::string, std::string> ReturnedOutputs::inputs_aliased(const Arrays& inputs) const {
  std::map<std::string, std::string> m;
  for (const auto& e : entries_) {
    std::string& alias = m[e.name];
    for (const auto& [name, v] : inputs.items())
      if (data(e.name) && v.data == data(e.name)) alias = name;
  }
  return m;
}

// ---- The host workload ------------------------------------------------------------------------------------

namespace {

class HostLaunch : public Launch {
 public:
  HostLaunch(const Args& args, const Reference& ref, const Arrays& in, const Arrays& out, const Arrays& scratch,
             const Layout& layout, bool fenced)
      : returned(layout), blocks(fenced), args_(args), ref_(ref), in_(in), out_(out), scratch_(scratch) {}
  const Args& args() const override { return args_; }
  const Reference& reference() const override { return ref_; }
  const View& in(const std::string& name) const override { return in_[name]; }
  const View& out(const std::string& name) const override { return out_[name]; }
  const View& scratch(const std::string& name) const override { return scratch_[name]; }
  void read_to_host(void* host, const void* src, std::size_t bytes) override { std::memcpy(host, src, bytes); }
  void* allocate(std::size_t bytes) override { return blocks.allocate(bytes); }
  void* allocate_pinned(std::size_t bytes) override { return allocate(bytes); }
  std::shared_ptr<void> stream_alloc(std::size_t bytes) override {
    return std::shared_ptr<void>(new std::uint64_t[(bytes + 7) / 8 + 2],
                                 [](void* p) { delete[] static_cast<std::uint64_t*>(p); });
  }
  void returns(const std::string& name, const void* data) override { returned.set(name, data); }
  ReturnedOutputs returned;
  HostBlocks blocks;  ///< Launch::allocate's memory, fenced with lab.fences

 private:
  const Args& args_;
  const Reference& ref_;
  const Arrays &in_, &out_, &scratch_;
};

class SdkHostWorkload : public Workload {
 public:
  SdkHostWorkload(std::shared_ptr<SdkExperiment> exp, const Setup& setup, const Point& point, const LabSettings& lab)
      : exp_(std::move(exp)), point_(point), args_(point_), seed_(lab.seed), scale_(lab.tolerance_scale.value_or(1.0)) {
    in_ = exp_->writable_inputs(args_, seed_);
    in_hashes_ = exp_->input_hashes(args_, seed_);  // as generated: the held set's, taken with it
    ref_ = exp_->reference(args_, seed_);
    const Layout layout = exp_->layout(args_);
    out_ = HostArrays(layout, Role::output, true, lab.fences);
    scratch_ = HostArrays(layout, Role::scratch, true, lab.fences);
    launch_ = std::make_unique<HostLaunch>(args_, *ref_, in_->arrays(), out_.arrays(), scratch_.arrays(), layout,
                                           lab.fences);
    step_ = setup(*launch_);
  }
  void run() override { step_(*launch_); }
  CheckOutcome check(const std::function<void()>& iterate) override {
    return compare_after(iterate, *ref_, [this]() -> const Arrays& { return in_->arrays(); });
  }
  Cost cost() const override { return exp_->cost(args_, *ref_); }

  unsigned integrity_support() const override { return kFenceCheck | kInputCheck | kRecheck; }
  std::optional<std::string> fence_violation() override {
    auto out = out_.fence_violation();
    auto scratch = scratch_.fence_violation();
    auto blocks = launch_->blocks.fence_violation();
    return out ? out : scratch ? scratch : blocks;
  }
  std::optional<std::string> input_change() override { return exp_->restore_inputs(args_, seed_, *in_, in_hashes_); }
  std::optional<CheckOutcome> recheck(const std::function<void()>& iterate) override {
    // The second set into the arrays the variant reads, one iteration, then the first set generated back in place.
    const std::uint64_t fresh_seed = recheck_lab_seed(seed_);
    const auto ref = exp_->reference(args_, fresh_seed);
    const auto fresh = exp_->inputs(args_, fresh_seed);
    for (const auto& [name, v] : in_->arrays().items()) std::memcpy(v.data, fresh->arrays()[name].data, v.bytes());
    try {
      CheckOutcome outcome = compare_after(
          iterate, *ref, [&]() -> const Arrays& { return fresh->arrays(); }, kRecheckSampleElements);
      exp_->generate_into(args_, seed_, in_->arrays());
      return outcome;
    } catch (...) {
      exp_->generate_into(args_, seed_, in_->arrays());  // the next variant never sees the second set
      throw;
    }
  }

 private:
  // Poisons the outputs, runs `iterate` and compares the outputs (and the returned ones) with `ref` (`sample`:
  // Compare's).
  CheckOutcome compare_after(const std::function<void()>& iterate, const Reference& ref,
                             const std::function<const Arrays&()>& inputs, std::int64_t sample = 0) {
    out_.poison();
    iterate();
    const ReturnedOutputs& r = launch_->returned;
    if (auto missing = r.missing()) return *missing;
    Arrays out = out_.arrays();  // and the returned outputs where the variant pointed (host memory)
    for (const auto& e : r.entries()) out.put(e.name, View{const_cast<void*>(r.data(e.name)), e.count, e.elem});
    return exp_->compare(args_, inputs, out, ref, scale_, r.inputs_aliased(in_->arrays()), {}, sample);
  }

  std::shared_ptr<SdkExperiment> exp_;
  Point point_;
  Args args_;
  std::uint64_t seed_;
  double scale_;
  std::shared_ptr<HostArrays> in_;
  std::vector<std::uint64_t> in_hashes_;  // in_'s content hashes as generated
  std::shared_ptr<const Reference> ref_;
  HostArrays out_, scratch_;
  std::unique_ptr<HostLaunch> launch_;
  Step step_;
};

// Registers an SDK experiment: its definition, the estimate from its Layout and cost model, and the host
// implementations of its variants.
void register_sdk_experiment(Registry& registry, const std::shared_ptr<SdkExperiment>& exp) {
  const auto def = std::shared_ptr<const ExperimentDef>(exp, &exp->def());  // owned by `exp`
  RegisteredExperiment& e = registry.add(def);
  for (const auto& v : def->variants()) {
    if (!v.host_setup()) continue;
    const Setup setup = v.host_setup();
    e.implementations[v.name()][BackendKind::host] = [exp, setup](const Point& p, Backend&, const LabSettings& lab) {
      return std::unique_ptr<Workload>(new SdkHostWorkload(exp, setup, p, lab));
    };
  }
  e.estimate = [exp](const Point& p) {
    const Args args(p);
    const Layout l = exp->layout(args);
    const Cost c = exp->cost(args, Reference{});
    return PointEstimate{l.bytes(Role::input) + l.bytes(Role::output) + l.bytes(Role::scratch) +
                             l.bytes(Role::transient),
                         c.bytes, c.flop};
  };
}

}  // namespace

namespace {

// The SDK experiments of the latest registration, by name, for the CUDA side to find. By name, not by registry:
// a Registry may be moved after its host registration.
// Never destroyed: an SDK experiment may hold device memory (its shared inputs), which must not be freed during
// static teardown, after the CUDA runtime has unloaded (cudaErrorCudartUnloading); the process exit frees it.
std::map<std::string, std::shared_ptr<SdkExperiment>>& registered() {
  static auto* m = new std::map<std::string, std::shared_ptr<SdkExperiment>>;
  return *m;
}

}  // namespace

void validate_definition(const ExperimentDef& def) {
  std::vector<std::string> missing;
  if (!def.arrays_fn()) missing.push_back("e.arrays(...)");
  if (!def.generate_fn()) missing.push_back("e.generate(...)");
  if (!def.reference_fn()) missing.push_back("e.reference(...)");
  if (!def.check_fn()) missing.push_back("e.check(...)");
  if (def.variants().empty()) missing.push_back("e.variant(...)");
  if (missing.empty()) return;
  std::string list;
  for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
  throw std::logic_error("LABRUN_EXPERIMENT(" + def.name() + ") declares no " + list +
                         ": every experiment needs arrays, a generator, a reference, a check and a variant "
                         "(labrun/experiment.hpp, docs/your-kernel.md)");
}

void register_linked_experiments(Registry& registry) {
  Registrations& regs = registrations();
  for (const auto& [name, define] : regs.experiments) {
    auto def = std::make_shared<ExperimentDef>(name);
    define(*def);
    validate_definition(*def);
    auto exp = std::make_shared<SdkExperiment>(def);
    register_sdk_experiment(registry, exp);
    registered()[name] = exp;
  }
}

void register_linked_cuda(Registry& registry, const SdkCudaFactory& cuda) {
  Registrations& regs = registrations();
  for (const auto& [name, define] : regs.cuda) {
    const auto it = registered().find(name);
    if (it == registered().end() || !registry.find(name))
      throw std::logic_error("LABRUN_CUDA_VARIANTS(" + name + "): no LABRUN_EXPERIMENT(" + name + ") is linked");
    auto cdef = std::make_shared<CudaDef>(name);
    define(*cdef);
    it->second->cuda = cdef;
    for (const auto& [variant, setup] : cdef->launchers()) {
      std::string declared;
      bool found = false;
      for (const auto& v : it->second->def().variants()) {
        declared += (declared.empty() ? "" : ", ") + v.name();
        found = found || v.name() == variant;
      }
      if (!found)
        throw std::logic_error("LABRUN_CUDA_VARIANTS(" + name + "): e.cuda(\"" + variant +
                               "\"): no variant of that name is declared with e.variant(...) in LABRUN_EXPERIMENT(" +
                               name + ") (variants: " + declared + ")");
      std::shared_ptr<SdkExperiment> exp = it->second;
      const Setup s = setup;
      registry.implement(name, variant, BackendKind::cuda,
                         [exp, s, cuda](const Point& p, Backend& b, const LabSettings& lab) {
        return cuda(exp, s, p, b, lab);
      });
    }
  }
}

void register_builtin(Registry& registry) { register_linked_experiments(registry); }

std::shared_ptr<SdkExperiment> sdk_experiment(const Registry& registry, const std::string& name) {
  const auto it = registered().find(name);
  return it == registered().end() || !registry.find(name) ? nullptr : it->second;
}

}  // namespace labrun
