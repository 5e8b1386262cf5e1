// The lab's side of the experiment SDK (sdk_registry.hpp): the shared input/reference state of an SDK experiment,
// its host workload, and its registration into the Registry from the definitions linked.hpp lists.
#include "sdk_registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>

#include <labrun/counter_rng.hpp>

#include "build_info.hpp"
#include "linked.hpp"
#include "record.hpp"
#include "reference_cache.hpp"

namespace labrun {
// ---- HostArrays -------------------------------------------------------------------------------------------

HostArrays::HostArrays(const Layout& layout, Role role, bool zero) {
  for (const auto& e : layout.entries()) {
    if (e.role != role) continue;
    const std::size_t bytes = std::max<std::size_t>(static_cast<std::size_t>(e.count) * e.elem.bytes, 16);
    const std::size_t rounded = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded);
    if (!p) throw std::bad_alloc();
    std::shared_ptr<void> block(p, [](void* q) { std::free(q); });
    if (zero) std::memset(p, 0, rounded);
    blocks_.push_back(block);
    poison_.push_back(e.poison);
    arrays_.put(e.name, View{p, e.count, e.elem});
  }
}

void HostArrays::poison() {
  const auto& items = arrays_.items();
  for (std::size_t k = 0; k < items.size(); ++k)
    std::memset(items[k].second.data, poison_[k], std::max<std::size_t>(items[k].second.bytes(), 1));
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

std::shared_ptr<const HostArrays> SdkExperiment::inputs(const Args& args, std::uint64_t lab_seed) {
  const std::uint64_t seed = input_seed(args, lab_seed);
  const std::string key = input_key(args) + "/" + std::to_string(seed);
  if (key != key_ || !inputs_) {
    inputs_.reset();  // release the old set first: large sets are gigabytes
    auto in = std::make_shared<HostArrays>(layout(args), Role::input, false);
    if (!def_->generate_fn()) throw std::logic_error(def_->name() + ": no input generator (ExperimentDef::generate)");
    def_->generate_fn()(args, seed, in->arrays());
    inputs_ = in;
    key_ = key;
  }
  return inputs_;
}

std::shared_ptr<const Reference> SdkExperiment::reference(const Args& args, std::uint64_t lab_seed) {
  const std::uint64_t seed = input_seed(args, lab_seed);
  std::string key = input_key(args) + "/" + std::to_string(seed);
  if (!def_->reference_axes().empty()) key += "/" + axes_text(*def_, args, def_->reference_axes());
  if (key == ref_key_ && ref_) return ref_;
  ref_.reset();
  // Another process of a pooled sweep may have computed it (reference_cache.hpp): then no host inputs are made.
  const ReferenceCache disk = ReferenceCache::from_env();
  const std::string disk_key = def_->name() + "/" + key + "/" + build_info().git_sha;
  if (const auto j = disk.load(disk_key)) {
    try {
      auto r = std::make_shared<Reference>();
      for (const auto& [name, v] : j->items()) r->set(name, json_number(v, {}));
      ref_ = r;
      ref_key_ = key;
      return ref_;
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
  ref_ = r;
  ref_key_ = key;
  return ref_;
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
                                    const Compare::ChunkReader& read) const {
  if (!def_->check_fn()) throw std::logic_error(def_->name() + ": no check (ExperimentDef::check)");
  // The inputs are made on the host only if the check reads them (a device-generated set has no host copy).
  Compare c(args, inputs, outputs, ref, scale, returned, read);
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
             const Layout& layout)
      : returned(layout), args_(args), ref_(ref), in_(in), out_(out), scratch_(scratch) {}
  const Args& args() const override { return args_; }
  const Reference& reference() const override { return ref_; }
  const View& in(const std::string& name) const override { return in_[name]; }
  const View& out(const std::string& name) const override { return out_[name]; }
  const View& scratch(const std::string& name) const override { return scratch_[name]; }
  void read_to_host(void* host, const void* src, std::size_t bytes) override { std::memcpy(host, src, bytes); }
  void* allocate(std::size_t bytes) override {
    blocks_.emplace_back(new std::uint64_t[(bytes + 7) / 8 + 2]());
    return blocks_.back().get();
  }
  void* allocate_pinned(std::size_t bytes) override { return allocate(bytes); }
  std::shared_ptr<void> stream_alloc(std::size_t bytes) override {
    return std::shared_ptr<void>(new std::uint64_t[(bytes + 7) / 8 + 2],
                                 [](void* p) { delete[] static_cast<std::uint64_t*>(p); });
  }
  void returns(const std::string& name, const void* data) override { returned.set(name, data); }
  ReturnedOutputs returned;

 private:
  const Args& args_;
  const Reference& ref_;
  const Arrays &in_, &out_, &scratch_;
  std::vector<std::unique_ptr<std::uint64_t[]>> blocks_;
};

class SdkHostWorkload : public Workload {
 public:
  SdkHostWorkload(std::shared_ptr<SdkExperiment> exp, const Setup& setup, const Point& point, const LabSettings& lab)
      : exp_(std::move(exp)), point_(point), args_(point_), scale_(lab.tolerance_scale.value_or(1.0)) {
    in_ = exp_->inputs(args_, lab.seed);
    ref_ = exp_->reference(args_, lab.seed);
    const Layout layout = exp_->layout(args_);
    out_ = HostArrays(layout, Role::output, true);
    scratch_ = HostArrays(layout, Role::scratch, true);
    launch_ = std::make_unique<HostLaunch>(args_, *ref_, in_->arrays(), out_.arrays(), scratch_.arrays(), layout);
    step_ = setup(*launch_);
  }
  void run() override { step_(*launch_); }
  CheckOutcome check(const std::function<void()>& iterate) override {
    out_.poison();
    iterate();
    const ReturnedOutputs& r = launch_->returned;
    if (auto missing = r.missing()) return *missing;
    Arrays out = out_.arrays();  // and the returned outputs where the variant pointed (host memory)
    for (const auto& e : r.entries()) out.put(e.name, View{const_cast<void*>(r.data(e.name)), e.count, e.elem});
    return exp_->compare(
        args_, [this]() -> const Arrays& { return in_->arrays(); }, out, *ref_, scale_,
        r.inputs_aliased(in_->arrays()));
  }
  Cost cost() const override { return exp_->cost(args_, *ref_); }

 private:
  std::shared_ptr<SdkExperiment> exp_;
  Point point_;
  Args args_;
  double scale_;
  std::shared_ptr<const HostArrays> in_;
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
