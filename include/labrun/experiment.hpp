// The experiment SDK: the one header an experiment includes to declare itself to labrun. An author writes only
// what is theirs — axes, the arrays a point holds, input generation, the float64 reference, the check's bound,
// the cost model and the variants (a host function and a CUDA launcher each, either optional) — and labrun's lab
// pass does the rest: inputs generated once per input-defining axes and shared by a point's variants (with the
// reference, cached on disk across the processes of a pooled sweep), buffers allocated before any capture
// (case C12), outputs poisoned with NaN before the correctness iteration (case C07), synchronisation and copy
// back, the comparison with lab.tolerance_scale applied, the estimate a point is skipped by, and the kernel marks.
//
//   LABRUN_EXPERIMENT(rownorm) {                       // in rownorm.cpp (host compiler)
//     e.describe("row-wise L2 normalisation").docs("README.md");
//     e.int_axis("rows", "rows", 1, 1 << 20, 4096).int_axis("cols", "columns", 1, 1 << 16, 1024);
//     e.arrays([](const Args& a, Layout& l) { l.input("x", DType::f32, a.i64("rows") * a.i64("cols")); ... });
//     e.generate([](const Args& a, std::uint64_t seed, Arrays& in) { ... });
//     e.reference([](const Args& a, const Arrays& in, Reference& r) { ... });
//     e.check([](Compare& c) { c.elementwise("y", [&](std::int64_t i, double ref) { return bound; }); });
//     e.cost([](const Args& a, const Reference&) { return Cost::of(...); });
//     e.variant("naive", "one thread per row").host([](Launch& l) { ... });
//   }
//   LABRUN_CUDA_VARIANTS(rownorm) {                    // in rownorm.cu (nvcc)
//     e.cuda("naive", [](Launch& l) { kernel<<<grid, block, 0, l.stream()>>>(...); l.mark("naive", bytes); });
//   }
//
// Registration stores a function pointer at static initialisation and nothing else: the functions run from main,
// so no CUDA call can run before main. Compiles alone under nvcc's C++17 and the host's C++20.
// Guide: docs/your-kernel.md.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "cost.hpp"
#include "dtype.hpp"
#include "point.hpp"

struct CUstream_st;  // cudaStream_t, without the CUDA headers

namespace labrun {

class ReportView;  // labrun/report.hpp

/// Typed, read-only access to a point's axis values. Every accessor throws std::out_of_range naming the axis when
/// the point has none of that name, and std::invalid_argument when the value has another type.
class Args {
 public:
  explicit Args(const Point& point) : point_(&point) {}
  const Point& point() const { return *point_; }
  const std::string& experiment() const { return point_->experiment; }
  const std::string& variant() const { return point_->variant; }
  /// Value of an Integer axis.
  std::int64_t i64(const std::string& axis) const;
  /// Value of a Real (or Integer) axis.
  double real(const std::string& axis) const;
  /// Value of a Word axis.
  const std::string& word(const std::string& axis) const;
  /// A Word axis read as a dtype ("f32", "f16", "bf16", "f64"). @throws std::invalid_argument for another word.
  DType dtype(const std::string& axis = "dtype") const;
  /// The lab's launch mode: "eager" or "graph".
  const std::string& mode() const { return word("mode"); }

 private:
  const Point* point_;
};

/// One row of an experiment's variant table: the enum value its code switches on, the name configs and records
/// use, and the one-line description `labrun list` prints.
template <class E>
struct VariantRow {
  E variant;
  const char* name;
  const char* description;
};

/// An experiment's variants keyed by its own enum E, written once (rows in declaration order):
///   constexpr VariantTable<Variant, 2> kVariants{{{{Variant::a, "a", "..."}, {Variant::b, "b", "..."}}}};
///   for (const auto& row : kVariants) e.variant(row.name, row.description).host(...);
template <class E, std::size_t N>
struct VariantTable {
  std::array<VariantRow<E>, N> rows;
  constexpr const VariantRow<E>* begin() const { return rows.data(); }
  constexpr const VariantRow<E>* end() const { return rows.data() + N; }
  /// The name of `v`; "?" for a value the table does not hold.
  constexpr const char* name(E v) const {
    for (const auto& r : rows)
      if (r.variant == v) return r.name;
    return "?";
  }
  /// The enum value named `variant`. @throws std::invalid_argument naming it when the table has no such row.
  E of(const std::string& variant) const {
    for (const auto& r : rows)
      if (variant == r.name) return r.variant;
    throw std::invalid_argument("unknown variant '" + variant + "'");
  }
  /// The enum value of the point's variant. @throws std::invalid_argument as of(name).
  E of(const Args& args) const { return of(args.variant()); }
};

/// Kind of element an array holds: a floating-point DType (decoded exactly by View::value) or raw bytes of a
/// fixed width (e.g. a u8 mask, i64 counts), which checks cannot decode.
struct Elem {
  std::size_t bytes = 4;
  std::optional<DType> dtype = DType::f32;
  static Elem of(DType t) { return Elem{dtype_bytes(t), t}; }
  template <class T>
  static Elem raw() {
    return Elem{sizeof(T), std::nullopt};
  }
};

/// One array of a point: `count` elements of `elem` at `data`, in host memory (host backend, the generator, the
/// reference and the check) or device memory (a CUDA launcher). 16-byte aligned. Not owning.
struct View {
  void* data = nullptr;
  std::int64_t count = 0;
  Elem elem;
  template <class T>
  T* as() const {
    return static_cast<T*>(data);
  }
  std::size_t bytes() const { return static_cast<std::size_t>(count) * elem.bytes; }
  /// Element i decoded exactly to double; host memory and a floating-point elem only.
  /// @throws std::logic_error for raw arrays.
  double value(std::int64_t i) const;
};

/// Where an array lives in a point: an input (generated, shared by the point's variants, read-only), an output
/// (poisoned before the correctness iteration, copied back and compared), scratch (a variant's work space), or
/// transient: memory a variant takes inside each iteration (Launch::stream_alloc, as an eager framework's
/// allocator does), counted in the working set the point is estimated and skipped by, allocated by no one; or
/// returned: an output the variant hands back (Launch::returns) instead of writing into a buffer of the lab's, as
/// an op that returns its input itself does (x.contiguous() of a contiguous x): allocated by no one, not counted in
/// the working set, not poisoned, copied back from where the variant pointed and compared as an output.
/// The lab's integrity checks (docs/integrity.md): outputs and scratch arrays sit between guard regions (a write
/// within 4 KiB outside one makes the point `incorrect`, lab.fences); inputs are compared with the generated set
/// (a write into one makes the point `incorrect`, lab.guard_inputs); after timing one iteration runs on a second
/// input set against its reference (lab.recheck), so a variant must compute from its inputs every iteration.
enum class Role { input, output, scratch, transient, returned };

/// The arrays a point holds, declared per point by Experiment::arrays: names, roles, element types and counts.
/// The lab allocates them (and estimates the working set from them before anything is allocated).
class Layout {
 public:
  struct Entry {
    std::string name;
    Role role;
    Elem elem;
    std::int64_t count;
    std::uint8_t poison = 0xff;  ///< an output's poison byte (Layout::poison)
    bool chunked = false;        ///< an output read back only in chunks (Layout::chunked)
  };
  Layout& input(const std::string& name, DType t, std::int64_t count) {
    return add(name, Role::input, Elem::of(t), count);
  }
  Layout& output(const std::string& name, DType t, std::int64_t count) {
    return add(name, Role::output, Elem::of(t), count);
  }
  Layout& scratch(const std::string& name, DType t, std::int64_t count) {
    return add(name, Role::scratch, Elem::of(t), count);
  }
  /// An output the variant hands back with Launch::returns (Role::returned).
  Layout& returned(const std::string& name, DType t, std::int64_t count) {
    return add(name, Role::returned, Elem::of(t), count);
  }
  /// An array of any role with a raw element type (e.g. `add("mask", Role::input, Elem::raw<std::uint8_t>(), n)`).
  /// @throws std::invalid_argument for a duplicate name or a negative count.
  Layout& add(const std::string& name, Role role, Elem elem, std::int64_t count);
  /// Sets the byte output `name` is poisoned with before the correctness iteration (default 0xff: NaN in every
  /// floating-point dtype, case C07). Choose one whose element no correct iteration writes: an integer output
  /// whose value for "none" is -1 (all 0xff bytes) would pass unwritten under the default.
  /// @throws std::out_of_range when `name` is not an output of the Layout.
  Layout& poison(const std::string& name, std::uint8_t byte);
  /// Marks output `name` as read back in chunks only: the lab never copies it to the host whole (an int64 output of
  /// 1e9 elements is 8 GB), and the check compares it with Compare::exact_chunks,
  /// which holds two chunks in host memory. @throws std::out_of_range when `name` is not an output of the Layout.
  Layout& chunked(const std::string& name);
  const std::vector<Entry>& entries() const { return entries_; }
  /// Bytes of the arrays of `role`.
  double bytes(Role role) const;

 private:
  std::vector<Entry> entries_;
};

/// Named arrays of one role, in declaration order.
class Arrays {
 public:
  /// @throws std::out_of_range naming the array when there is none of that name.
  const View& operator[](const std::string& name) const;
  View& operator[](const std::string& name);
  bool has(const std::string& name) const;
  void put(const std::string& name, View view);
  const std::vector<std::pair<std::string, View>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, View>> items_;
};

/// The float64 reference of a point: per-element arrays (e.g. "y", one double per output element) and named
/// scalars (e.g. "sum", "selected"). A reference of scalars only is cached on disk across a pooled sweep's
/// processes, so later processes generate no host inputs for it.
class Reference {
 public:
  /// A zeroed array of `count` doubles named `name` (replacing one of that name).
  std::vector<double>& array(const std::string& name, std::int64_t count);
  /// @throws std::out_of_range naming the array.
  const std::vector<double>& array(const std::string& name) const;
  void set(const std::string& name, double value) { values_[name] = value; }
  /// @throws std::out_of_range naming the value.
  double value(const std::string& name) const;
  double value_or(const std::string& name, double fallback) const;
  bool has_value(const std::string& name) const { return values_.count(name) != 0; }
  const std::map<std::string, std::vector<double>>& arrays() const { return arrays_; }
  const std::map<std::string, double>& values() const { return values_; }

 private:
  std::map<std::string, std::vector<double>> arrays_;
  std::map<std::string, double> values_;
};

/// What one comparison measured. Bounds are unscaled (the experiment's own); the lab multiplies them by
/// lab.tolerance_scale. kind "elementwise": worst = max over elements of |y − ref| / bound, at worst_index;
/// kind "scalar": one value against one reference, worst = |value − ref| / tolerance.
struct CheckResult {
  std::string kind;                                   ///< "elementwise" or "scalar"
  std::string array;                                  ///< the output compared
  bool passed = false;                                ///< worst <= scale and no non-finite value (case C07)
  double worst = 0;                                   ///< worst error over its bound (1 = at the bound), unscaled bound
  std::int64_t worst_index = -1;                      ///< element of the worst error (-1 for no element)
  double worst_value = 0;                             ///< the output there
  double worst_reference = 0;                         ///< the reference there
  double worst_bound = 0;                             ///< the bound there, unscaled (units of the output)
  std::int64_t compared = 0;                          ///< elements compared
  std::int64_t mismatches = 0;                        ///< elements over scale × bound (non-finite ones included)
  std::int64_t not_finite = 0;                        ///< NaN or infinite outputs
  double max_abs_error = 0;                           ///< max |y − ref| over finite outputs
  double max_rel_error = 0;                           ///< max |y − ref| / |ref| over finite outputs with ref != 0
  double scale = 1;                                   ///< lab.tolerance_scale the comparison used
  std::vector<std::pair<std::string, double>> notes;  ///< extra named numbers (e.g. how a tolerance was derived)
};

}  // namespace labrun
#include <labrun/detail/compare_state.hpp>  // IWYU pragma: export
namespace labrun {

/// The comparison of one correctness iteration: the point, its inputs, the variant's outputs (host copies), the
/// reference, and lab.tolerance_scale. An experiment's check function calls elementwise() and/or scalar(); the
/// point passes only when every comparison passes.
class Compare : public detail::CompareState {
 public:
  using CompareState::CompareState;
  const Args& args() const { return args_; }
  const Arrays& inputs() const { return in_(); }
  const Arrays& outputs() const { return out_; }
  const Reference& reference() const { return ref_; }
  double scale() const { return scale_; }
  /// True in the lab's re-check on fresh inputs (docs/integrity.md), which asks only whether the variant computed
  /// from the inputs it was given: elementwise() then compares a sample (at most about 65536 evenly spaced elements
  /// of each output, the first included), and a check may skip its own passes over whole outputs (softmax's row
  /// sums). False in the correctness iteration, where every element is compared.
  bool sampled() const { return sample_ > 0; }

  /// Output `array` against reference array `ref_array` (default: the same name), element by element:
  /// passes iff |y_i − ref_i| <= scale · bound(i, ref_i) for every i and no y_i is NaN or infinite. Runs in
  /// parallel chunks; the first worst element in index order wins ties. When sampled(), only every s-th element
  /// (i = 0, s, 2s, ...; s = ceil(count / sample)) is compared and `compared` says how many. @throws std::out_of_range
  /// for a missing array, std::invalid_argument when the counts differ or the output is raw.
  const CheckResult& elementwise(const std::string& array, const std::function<double(std::int64_t, double)>& bound,
                                 const std::string& ref_array = "");
  /// Output `array` at the elements `indices` only, against reference array `ref_array` (default: the same name)
  /// that holds one value per index, in the order of `indices` (a reference smaller than the output, e.g. sampled
  /// rows of a large point): passes iff |y[indices[k]] − ref[k]| <= scale · bound(k, ref[k]) for every k AND every
  /// element of the output, compared or not, is finite (case C07: a NaN or infinity anywhere never passes, so an
  /// element no thread wrote fails even where the reference does not look). `bound` gets the position k in the
  /// reference (so it can read parallel reference arrays), worst_index is an element of the output; compared =
  /// indices.size(), not_finite counts the whole output, mismatches the compared elements over their bound plus
  /// the non-finite elements outside the set (a worst among those has reference and bound NaN). Indices may come in
  /// any order. @throws std::out_of_range for a missing array, std::invalid_argument when the reference does not
  /// hold one value per index, an index is outside the output, or the output is raw.
  const CheckResult& elementwise_at(const std::string& array, const std::vector<std::int64_t>& indices,
                                    const std::function<double(std::int64_t, double)>& bound,
                                    const std::string& ref_array = "");
  /// Bitwise-exact comparison of output `array` with the same-named input-derived expectation `expected`
  /// (raw bytes; e.g. a copy): passes iff every byte matches; worst_index is the first differing element.
  const CheckResult& exact(const std::string& array, const View& expected);
  /// Bitwise-exact comparison of output `array` with an expectation made chunk by chunk, so that neither is ever
  /// whole in host memory (the comparison of a chunked output, Layout::chunked; any output otherwise):
  /// `expect(begin, count, expected)` writes the expected elements [begin, begin + count) into `expected`. It is
  /// called for consecutive chunks of at most kChunkBytes, in increasing order of begin from 0 (so it may carry a
  /// running state, e.g. a prefix count, from one chunk to the next), and never for an empty output. Results as
  /// exact(): passes iff every byte matches, worst_index is the first differing element; a raw element of 1, 2, 4
  /// or 8 bytes is reported there as a little-endian signed integer (worst_value, worst_reference).
  const CheckResult& exact_chunks(
      const std::string& array,
      const std::function<void(std::int64_t begin, std::int64_t count, void* expected)>& expect);
  /// Whether returned output `array` (Role::returned) is input `input`'s own memory: passes iff the variant handed
  /// back that input itself, no copy (as x.contiguous() of a contiguous x must). kind "same_buffer", with the note
  /// same_buffer = 1 or 0; compared = the output's elements; a failure counts them all as mismatches. Compares no
  /// values: pair it with exact().
  /// @throws std::out_of_range when `array` is not a returned output.
  const CheckResult& same_buffer(const std::string& array, const std::string& input);
  /// One value against one reference with an absolute tolerance (unscaled): passes iff |value − ref| <=
  /// scale · tolerance; NaN or infinite against a finite reference never passes (case C07).
  const CheckResult& scalar(const std::string& name, double value, double reference, double tolerance);
  /// The first element of output `array` (decoded) as a scalar compared with reference value `ref_value`.
  const CheckResult& scalar(const std::string& array, const std::string& ref_value, double tolerance);
  /// Attaches a named number to the last comparison (e.g. a term of the tolerance).
  void note(const std::string& name, double value);
};

/// What a variant's code sees while it is set up and while it runs: the point, its arrays (host memory on the
/// host backend, device memory on CUDA), the stream, and the lab's hooks. Everything an iteration needs must be
/// allocated at setup (case C12): through the Layout's scratch arrays or allocate().
class Launch {
 public:
  virtual ~Launch() = default;
  virtual const Args& args() const = 0;
  /// An input array. @throws std::out_of_range naming it.
  virtual const View& in(const std::string& name) const = 0;
  /// An output array. @throws std::out_of_range naming it.
  virtual const View& out(const std::string& name) const = 0;
  /// A scratch array of the Layout. @throws std::out_of_range naming it.
  virtual const View& scratch(const std::string& name) const = 0;
  /// The stream every launch goes on (CUDA); nullptr on the host backend.
  virtual CUstream_st* stream() const { return nullptr; }
  /// SMs of the device (CUDA); 0 on the host backend.
  virtual int sm_count() const { return 0; }
  /// The CUDA device ordinal; -1 on the host backend.
  virtual int device() const { return -1; }
  /// The point's float64 reference (its named values, e.g. a count the marks need); empty when none is known.
  virtual const Reference& reference() const;
  /// Names the op just enqueued and the DRAM bytes it moves, for the kernel breakdown (no-op on the host).
  virtual void mark(const char* op, double bytes) {
    (void)op;
    (void)bytes;
  }
  /// Copies `bytes` from device to `host` and waits for the stream: a host synchronization, counted (the lab
  /// records host syncs per iteration and a graph capture fails on it, as it would in a framework). `host` must
  /// come from allocate_pinned(). On the host backend a plain copy.
  virtual void read_to_host(void* host, const void* device_ptr, std::size_t bytes) = 0;
  /// Memory owned by the workload, freed with it: device memory on CUDA, host memory on the host, zeroed on the
  /// host, fenced by guard regions as the outputs are (lab.fences, docs/integrity.md). Setup only.
  virtual void* allocate(std::size_t bytes) = 0;
  /// Page-locked host memory owned by the workload (plain host memory on the host backend). Setup only.
  virtual void* allocate_pinned(std::size_t bytes) = 0;
  /// Stream-ordered memory from the device's caching pool (as an eager framework's allocator), freed
  /// stream-ordered when the last copy of the handle goes; usable inside an iteration. Host: heap memory.
  virtual std::shared_ptr<void> stream_alloc(std::size_t bytes) = 0;
  /// Hands back `data` as returned output `name` (Role::returned): memory the variant already has (an input, or
  /// memory of its setup) that is the iteration's result, `count` elements as declared. The last call before the
  /// correctness iteration ends counts (in graph mode, the one made while the graph was captured). Costs nothing.
  /// @throws std::out_of_range when `name` is not a returned output of the point.
  virtual void returns(const std::string& name, const void* data) = 0;
};

/// One iteration of a variant: enqueues its work (CUDA) or computes (host).
using Step = std::function<void(Launch&)>;
/// A variant's setup: runs once per point after the arrays are allocated, allocates what the iteration needs,
/// and returns the iteration.
using Setup = std::function<Step(Launch&)>;

}  // namespace labrun
#include <labrun/detail/variant_data.hpp>  // IWYU pragma: export
namespace labrun {

/// One variant as declared by the experiment: name, description, modes, support rule, host implementation.
class VariantDef : public detail::VariantData {
 public:
  VariantDef(std::string name, std::string description) : VariantData(std::move(name), std::move(description)) {}
  /// The host implementation: a Step (one function called every iteration) or a Setup (returns the Step).
  template <class F>
  VariantDef& host(F f) {
    host_ = detail::to_setup(std::move(f));
    return *this;
  }
  /// The launch modes it runs in (default eager and graph).
  VariantDef& modes(std::vector<std::string> m) {
    modes_ = std::move(m);
    return *this;
  }
  /// nullopt if the variant supports the point, else the reason (the point is then `not_supported`).
  VariantDef& unsupported(std::function<std::optional<std::string>(const Args&)> f) {
    unsupported_ = std::move(f);
    return *this;
  }
  using VariantData::modes;
};
/// Axis kinds as a config writes them.
enum class AxisType { integer, real, word };

}  // namespace labrun
#include <labrun/detail/experiment_data.hpp>  // IWYU pragma: export
namespace labrun {

/// An experiment as its author declares it (LABRUN_EXPERIMENT). Every function takes and returns plain values;
/// the setters return *this for chaining.
class ExperimentDef : public detail::ExperimentData {
 public:
  explicit ExperimentDef(std::string name) : ExperimentData(std::move(name)) {}

  ExperimentDef& describe(std::string one_line) {
    description_ = std::move(one_line);
    return *this;
  }
  /// Where its documentation is (shown by `labrun list` and the report).
  ExperimentDef& docs(std::string path) {
    docs_ = std::move(path);
    return *this;
  }
  ExperimentDef& int_axis(std::string name, std::string description, double min, double max, std::int64_t fallback);
  ExperimentDef& real_axis(std::string name, std::string description, double min, double max, double fallback);
  ExperimentDef& word_axis(std::string name, std::string description, std::vector<std::string> words,
                           std::string fallback);
  /// The numeric axis that measures problem size (plots, crossovers); default: the first integer axis.
  ExperimentDef& size_axis(std::string axis) {
    size_axis_ = std::move(axis);
    return *this;
  }
  ExperimentDef& plot(Plot p) {
    plots_.push_back(std::move(p));
    return *this;
  }
  /// The founding hypotheses, as YAML in the config's `hypothesis:` syntax (docs/config.md).
  ExperimentDef& hypotheses(std::string yaml) {
    hypotheses_ = std::move(yaml);
    return *this;
  }

  /// The arrays a point holds (called before anything is allocated; its byte count is the working set).
  ExperimentDef& arrays(std::function<void(const Args&, Layout&)> f) {
    arrays_ = std::move(f);
    return *this;
  }
  /// Axes that define the inputs (default: every experiment axis): points that agree on them share one input
  /// set and its seed; variants and the lab axes never count.
  ExperimentDef& inputs_depend_on(std::vector<std::string> axes) {
    input_axes_ = std::move(axes);
    return *this;
  }
  /// Axes that define the reference besides the input axes (e.g. a parameter of the computation).
  ExperimentDef& reference_depends_on(std::vector<std::string> axes) {
    ref_axes_ = std::move(axes);
    return *this;
  }
  /// The text an input set's seed is drawn from: seed = splitmix64(lab.seed ^ fnv1a64(text)). Default: the
  /// experiment's name, "/", and the input axes as "a=1,b=f32". Set it only to keep the inputs an experiment drew
  /// before it moved onto the SDK, so that its results stay comparable point for point across the move.
  ExperimentDef& seed_text(std::function<std::string(const Args&)> f) {
    seed_text_ = std::move(f);
    return *this;
  }
  /// Fills the input arrays (host memory, allocated from the Layout) from `seed`. Must be reproducible for a
  /// seed and never produce all zeros (timing on zeros flatters a kernel).
  ExperimentDef& generate(std::function<void(const Args&, std::uint64_t seed, Arrays& inputs)> f) {
    generate_ = std::move(f);
    return *this;
  }
  /// The float64 reference of the inputs.
  ExperimentDef& reference(std::function<void(const Args&, const Arrays& inputs, Reference& ref)> f) {
    reference_ = std::move(f);
    return *this;
  }
  /// The correctness comparison (Compare::elementwise / scalar / exact). Default: none, and no point passes.
  ExperimentDef& check(std::function<void(Compare&)> f) {
    check_ = std::move(f);
    return *this;
  }
  /// The per-iteration cost model. `ref` holds the reference's values when known; before a point runs (the
  /// estimate) it is empty, so use value_or. peak_work_bytes left NaN is filled with the Layout's output and
  /// scratch bytes.
  ExperimentDef& cost(std::function<Cost(const Args&, const Reference& ref)> f) {
    cost_ = std::move(f);
    return *this;
  }
  /// Adds a variant; implement it with .host(...) here and LABRUN_CUDA_VARIANTS in a .cu file.
  VariantDef& variant(std::string name, std::string description);
  /// The experiment's own report section: markdown written from the typed view of its runs (labrun/report.hpp).
  ExperimentDef& report_section(std::function<void(const ReportView&, std::ostream&)> f) {
    report_ = std::move(f);
    return *this;
  }
};

/// The CUDA side of an experiment (LABRUN_CUDA_VARIANTS, in a .cu file): a launcher per variant, and an optional
/// device-side input generator.
class CudaDef {
 public:
  explicit CudaDef(std::string experiment) : experiment_(std::move(experiment)) {}
  const std::string& experiment() const { return experiment_; }
  /// The CUDA implementation of `variant`: a Step (enqueues one iteration on l.stream()) or a Setup.
  template <class F>
  CudaDef& cuda(const std::string& variant, F f) {
    launchers_.emplace_back(variant, detail::to_setup(std::move(f)));
    return *this;
  }
  /// Fills the input arrays on the device from the seed, as generate() would on the host (same values), and
  /// returns true; false: the lab generates on the host and copies (e.g. a dtype the device generator lacks).
  CudaDef& generate_on_device(std::function<bool(Launch&, std::uint64_t seed)> f) {
    device_generate_ = std::move(f);
    return *this;
  }
  const std::vector<std::pair<std::string, Setup>>& launchers() const { return launchers_; }
  const std::function<bool(Launch&, std::uint64_t)>& device_generator() const { return device_generate_; }

 private:
  std::string experiment_;
  std::vector<std::pair<std::string, Setup>> launchers_;
  std::function<bool(Launch&, std::uint64_t)> device_generate_;
};

namespace detail {
/// Stores a definition function to be run from main (register_linked_experiments); nothing else.
struct Registrar {
  Registrar(const char* name, void (*define)(ExperimentDef&));
  Registrar(const char* name, void (*define)(CudaDef&));
};
}  // namespace detail

}  // namespace labrun

/// Defines experiment NAME: the braces that follow are the body of `void f(labrun::ExperimentDef& e)`.
#define LABRUN_EXPERIMENT(NAME)                                                                   \
  static void labrun_define_##NAME(::labrun::ExperimentDef& e);                                   \
  static const ::labrun::detail::Registrar labrun_registrar_##NAME(#NAME, &labrun_define_##NAME); \
  static void labrun_define_##NAME([[maybe_unused]] ::labrun::ExperimentDef& e)

/// The CUDA launchers of experiment NAME: the braces that follow are the body of `void f(labrun::CudaDef& e)`.
#define LABRUN_CUDA_VARIANTS(NAME)                                                                          \
  static void labrun_define_cuda_##NAME(::labrun::CudaDef& e);                                              \
  static const ::labrun::detail::Registrar labrun_cuda_registrar_##NAME(#NAME, &labrun_define_cuda_##NAME); \
  static void labrun_define_cuda_##NAME([[maybe_unused]] ::labrun::CudaDef& e)
