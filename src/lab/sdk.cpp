// The experiment SDK's host runtime: the public types of labrun/experiment.hpp, the static registration list, the
// shared input/reference state of an SDK experiment, its host workload, and its translation into the Registry.
#include "sdk_registry.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>

#include "build_info.hpp"
#include "record.hpp"
#include "reference_cache.hpp"

namespace labrun {

// ---- Args, View, Layout, Arrays, Reference ---------------------------------------------------------------

std::int64_t Args::i64(const std::string& axis) const {
  const AxisValue& v = point_->at(axis);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
  throw std::invalid_argument(point_->experiment + ": axis '" + axis + "' is not an integer axis");
}

double Args::real(const std::string& axis) const {
  const AxisValue& v = point_->at(axis);
  if (const auto* d = std::get_if<double>(&v)) return *d;
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  throw std::invalid_argument(point_->experiment + ": axis '" + axis + "' is not a numeric axis");
}

const std::string& Args::word(const std::string& axis) const {
  const AxisValue& v = point_->at(axis);
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  throw std::invalid_argument(point_->experiment + ": axis '" + axis + "' is not a word axis");
}

DType Args::dtype(const std::string& axis) const {
  const std::string& w = word(axis);
  const auto t = parse_dtype(w);
  if (!t) throw std::invalid_argument(point_->experiment + ": axis '" + axis + "' = '" + w + "' is not a dtype");
  return *t;
}

double View::value(std::int64_t i) const {
  if (!elem.dtype) throw std::logic_error("View::value: a raw array has no floating-point value");
  switch (*elem.dtype) {
    case DType::f32: return static_cast<const float*>(data)[i];
    case DType::f64: return static_cast<const double*>(data)[i];
    case DType::bf16: return bf16_to_float(static_cast<const std::uint16_t*>(data)[i]);
    case DType::f16: return half_to_float(static_cast<const std::uint16_t*>(data)[i]);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

Layout& Layout::add(const std::string& name, Role role, Elem elem, std::int64_t count) {
  if (count < 0) throw std::invalid_argument("array '" + name + "': count " + std::to_string(count) + " < 0");
  for (const auto& e : entries_)
    if (e.name == name) throw std::invalid_argument("array '" + name + "' declared twice");
  entries_.push_back({name, role, elem, count});
  return *this;
}

namespace {
Layout::Entry& output_entry(std::vector<Layout::Entry>& entries, const std::string& name, const char* what) {
  for (auto& e : entries)
    if (e.name == name && e.role == Role::output) return e;
  throw std::out_of_range(std::string("Layout::") + what + "(\"" + name + "\"): no output of that name (declare it first)");
}
}  // namespace

Layout& Layout::poison(const std::string& name, std::uint8_t byte) {
  output_entry(entries_, name, "poison").poison = byte;
  return *this;
}

Layout& Layout::chunked(const std::string& name) {
  output_entry(entries_, name, "chunked").chunked = true;
  return *this;
}

double Layout::bytes(Role role) const {
  double b = 0;
  for (const auto& e : entries_)
    if (e.role == role) b += static_cast<double>(e.count) * static_cast<double>(e.elem.bytes);
  return b;
}

const View& Arrays::operator[](const std::string& name) const {
  for (const auto& [n, v] : items_)
    if (n == name) return v;
  throw std::out_of_range("no array '" + name + "'");
}
View& Arrays::operator[](const std::string& name) {
  return const_cast<View&>(static_cast<const Arrays&>(*this)[name]);
}
bool Arrays::has(const std::string& name) const {
  for (const auto& [n, v] : items_)
    if (n == name) return true;
  return false;
}
void Arrays::put(const std::string& name, View view) {
  for (auto& [n, v] : items_)
    if (n == name) {
      v = view;
      return;
    }
  items_.emplace_back(name, view);
}

std::vector<double>& Reference::array(const std::string& name, std::int64_t count) {
  auto& a = arrays_[name];
  a.assign(static_cast<std::size_t>(std::max<std::int64_t>(count, 0)), 0.0);
  return a;
}
const std::vector<double>& Reference::array(const std::string& name) const {
  const auto it = arrays_.find(name);
  if (it == arrays_.end()) throw std::out_of_range("reference has no array '" + name + "'");
  return it->second;
}
double Reference::value(const std::string& name) const {
  const auto it = values_.find(name);
  if (it == values_.end()) throw std::out_of_range("reference has no value '" + name + "'");
  return it->second;
}
const Reference& Launch::reference() const {
  static const Reference none;
  return none;
}

double Reference::value_or(const std::string& name, double fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

// ---- Compare ------------------------------------------------------------------------------------------------

namespace {

// The output `name` of a check, or an error that names what the outputs are.
const View& output_of(const Arrays& out, const std::string& name, bool chunks = false) {
  if (out.has(name)) {
    const View& v = out[name];
    if (!chunks && !v.data && v.count > 0)
      throw std::invalid_argument("check: output '" + name + "' is chunked (Layout::chunked): compare it with exact_chunks");
    return v;
  }
  std::string names;
  for (const auto& [n, v] : out.items()) names += (names.empty() ? "" : ", ") + n;
  throw std::out_of_range("check: no output array '" + name + "' (outputs: " + (names.empty() ? "none" : names) +
                          "; declare it with l.output(...) in e.arrays)");
}

constexpr int kChunks = 64;
const double kInf = std::numeric_limits<double>::infinity();

}  // namespace

const CheckResult& Compare::elementwise(const std::string& array, const std::function<double(std::int64_t, double)>& bound,
                                        const std::string& ref_array) {
  const View& y = output_of(out_, array);
  const std::vector<double>& ref = ref_.array(ref_array.empty() ? array : ref_array);
  if (!y.elem.dtype) throw std::invalid_argument("elementwise check of raw array '" + array + "'");
  if (static_cast<std::int64_t>(ref.size()) != y.count)
    throw std::invalid_argument("elementwise check of '" + array + "': " + std::to_string(y.count) +
                                " outputs against " + std::to_string(ref.size()) + " reference values");
  struct Part {
    double worst = 0, max_abs = 0, max_rel = 0;
    std::int64_t worst_index = -1, mismatches = 0, not_finite = 0;
  };
  std::vector<Part> parts(kChunks);
  const double scale = scale_;
  parallel_chunks(y.count, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part p;
    for (std::int64_t i = begin; i < end; ++i) {
      const double v = y.value(i), r = ref[static_cast<std::size_t>(i)];
      double ratio;
      if (!std::isfinite(v)) {
        ++p.not_finite;
        ratio = kInf;  // case C07: NaN (the poison) and inf never pass
      } else {
        const double err = std::fabs(v - r);
        const double b = bound(i, r);
        ratio = err == 0 ? 0.0 : (b > 0 ? err / b : kInf);
        p.max_abs = std::max(p.max_abs, err);
        if (r != 0) p.max_rel = std::max(p.max_rel, err / std::fabs(r));
      }
      if (!(ratio <= scale)) ++p.mismatches;
      if (p.worst_index < 0 || ratio > p.worst) {
        p.worst = ratio;
        p.worst_index = i;
      }
    }
    parts[chunk] = p;
  });
  CheckResult c;
  c.kind = "elementwise";
  c.array = array;
  c.compared = y.count;
  c.scale = scale;
  for (const auto& p : parts) {  // chunk order: the first worst element in index order wins ties
    if (p.worst_index >= 0 && (c.worst_index < 0 || p.worst > c.worst)) {
      c.worst = p.worst;
      c.worst_index = p.worst_index;
    }
    c.max_abs_error = std::max(c.max_abs_error, p.max_abs);
    c.max_rel_error = std::max(c.max_rel_error, p.max_rel);
    c.mismatches += p.mismatches;
    c.not_finite += p.not_finite;
  }
  if (c.worst_index >= 0) {
    const std::int64_t i = c.worst_index;
    c.worst_value = y.value(i);
    c.worst_reference = ref[static_cast<std::size_t>(i)];
    c.worst_bound = bound(i, c.worst_reference);
  }
  c.passed = c.not_finite == 0 && c.worst <= scale;
  results_.push_back(std::move(c));
  return results_.back();
}

const CheckResult& Compare::elementwise_at(const std::string& array, const std::vector<std::int64_t>& indices,
                                           const std::function<double(std::int64_t, double)>& bound,
                                           const std::string& ref_array) {
  const View& y = output_of(out_, array);
  const std::vector<double>& ref = ref_.array(ref_array.empty() ? array : ref_array);
  if (!y.elem.dtype) throw std::invalid_argument("elementwise check of raw array '" + array + "'");
  const auto n = static_cast<std::int64_t>(indices.size());
  if (static_cast<std::int64_t>(ref.size()) != n)
    throw std::invalid_argument("elementwise check of '" + array + "' at " + std::to_string(n) + " elements against " +
                                std::to_string(ref.size()) + " reference values");
  for (const std::int64_t i : indices)
    if (i < 0 || i >= y.count)
      throw std::invalid_argument("elementwise check of '" + array + "': element " + std::to_string(i) +
                                  " outside its " + std::to_string(y.count));
  std::vector<std::int64_t> sorted(indices);
  std::sort(sorted.begin(), sorted.end());
  struct Part {
    double worst = 0, max_abs = 0, max_rel = 0;
    std::int64_t worst_k = -1, mismatches = 0, not_finite = 0, outside = 0, first_outside = -1;
  };
  std::vector<Part> parts(kChunks), scan(kChunks);
  const double scale = scale_;
  parallel_chunks(n, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part p;
    for (std::int64_t k = begin; k < end; ++k) {
      const double v = y.value(indices[static_cast<std::size_t>(k)]), r = ref[static_cast<std::size_t>(k)];
      double ratio = kInf;  // case C07: NaN (the poison) and inf never pass
      if (std::isfinite(v)) {
        const double err = std::fabs(v - r);
        const double b = bound(k, r);
        ratio = err == 0 ? 0.0 : (b > 0 ? err / b : kInf);
        p.max_abs = std::max(p.max_abs, err);
        if (r != 0) p.max_rel = std::max(p.max_rel, err / std::fabs(r));
      }
      if (!(ratio <= scale)) ++p.mismatches;
      if (p.worst_k < 0 || ratio > p.worst) {
        p.worst = ratio;
        p.worst_k = k;
      }
    }
    parts[chunk] = p;
  });
  // Every element finite, the ones the reference does not cover included.
  parallel_chunks(y.count, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part p;
    for (std::int64_t i = begin; i < end; ++i) {
      if (std::isfinite(y.value(i))) continue;
      ++p.not_finite;
      if (std::binary_search(sorted.begin(), sorted.end(), i)) continue;
      if (p.outside++ == 0) p.first_outside = i;
    }
    scan[chunk] = p;
  });
  CheckResult c;
  c.kind = "elementwise";
  c.array = array;
  c.compared = n;
  c.scale = scale;
  std::int64_t worst_k = -1, first_outside = -1;
  for (const auto& p : parts) {  // chunk order: the first worst element in reference order wins ties
    if (p.worst_k >= 0 && (worst_k < 0 || p.worst > c.worst)) {
      c.worst = p.worst;
      worst_k = p.worst_k;
    }
    c.max_abs_error = std::max(c.max_abs_error, p.max_abs);
    c.max_rel_error = std::max(c.max_rel_error, p.max_rel);
    c.mismatches += p.mismatches;
  }
  for (const auto& p : scan) {
    c.not_finite += p.not_finite;
    c.mismatches += p.outside;
    if (first_outside < 0) first_outside = p.first_outside;
  }
  if (worst_k >= 0) {
    c.worst_index = indices[static_cast<std::size_t>(worst_k)];
    c.worst_value = y.value(c.worst_index);
    c.worst_reference = ref[static_cast<std::size_t>(worst_k)];
    c.worst_bound = bound(worst_k, c.worst_reference);
  }
  if (first_outside >= 0 && !(c.worst == kInf)) {  // a non-finite element the reference does not cover
    c.worst = kInf;
    c.worst_index = first_outside;
    c.worst_value = y.value(first_outside);
    c.worst_reference = c.worst_bound = std::numeric_limits<double>::quiet_NaN();
  }
  c.passed = c.not_finite == 0 && c.worst <= scale;
  results_.push_back(std::move(c));
  return results_.back();
}

const CheckResult& Compare::exact(const std::string& array, const View& expected) {
  const View& y = output_of(out_, array);
  if (y.count != expected.count || y.elem.bytes != expected.elem.bytes)
    throw std::invalid_argument("exact check of '" + array + "': shapes differ");
  CheckResult c;
  c.kind = "exact";
  c.array = array;
  c.compared = y.count;
  c.scale = scale_;
  const std::size_t w = y.elem.bytes;
  const auto* a = static_cast<const unsigned char*>(y.data);
  const auto* b = static_cast<const unsigned char*>(expected.data);
  // Per chunk (combined in chunk order: the same counts and first index on every machine): one memcmp of the
  // chunk's bytes, element by element only where it differs.
  struct Part {
    std::int64_t mismatches = 0, first = -1;
  };
  std::vector<Part> parts(kChunks);
  parallel_chunks(y.count, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part& part = parts[static_cast<std::size_t>(chunk)];
    if (begin >= end || std::memcmp(a + begin * w, b + begin * w, static_cast<std::size_t>(end - begin) * w) == 0) return;
    for (std::int64_t i = begin; i < end; ++i) {
      if (std::memcmp(a + i * w, b + i * w, w) == 0) continue;
      if (part.mismatches++ == 0) part.first = i;
    }
  });
  for (const Part& part : parts) {
    if (part.mismatches > 0 && c.mismatches == 0) c.worst_index = part.first;
    c.mismatches += part.mismatches;
  }
  if (c.worst_index >= 0 && y.elem.dtype) {
    c.worst_value = y.value(c.worst_index);
    c.worst_reference = expected.value(c.worst_index);
    if (!std::isfinite(c.worst_value)) ++c.not_finite;
  }
  c.worst = c.mismatches > 0 ? kInf : 0.0;
  c.passed = c.mismatches == 0;
  results_.push_back(std::move(c));
  return results_.back();
}

namespace {
// A raw element of 1, 2, 4 or 8 bytes as a little-endian signed integer; 0 for other widths.
double raw_integer(const unsigned char* p, std::size_t w) {
  switch (w) {
    case 1: { std::int8_t v; std::memcpy(&v, p, 1); return v; }
    case 2: { std::int16_t v; std::memcpy(&v, p, 2); return v; }
    case 4: { std::int32_t v; std::memcpy(&v, p, 4); return v; }
    case 8: { std::int64_t v; std::memcpy(&v, p, 8); return static_cast<double>(v); }
    default: return 0;
  }
}
}  // namespace

const CheckResult& Compare::exact_chunks(const std::string& array,
                                         const std::function<void(std::int64_t, std::int64_t, void*)>& expect) {
  const View& y = output_of(out_, array, true);
  const std::size_t w = y.elem.bytes;
  CheckResult c;
  c.kind = "exact";
  c.array = array;
  c.compared = y.count;
  c.scale = scale_;
  const std::int64_t chunk = std::max<std::int64_t>(1, static_cast<std::int64_t>(kChunkBytes / w));
  const std::size_t buffer = static_cast<std::size_t>(std::min(chunk, y.count)) * w;
  std::vector<unsigned char> got(y.count > 0 ? buffer : 0), want(y.count > 0 ? buffer : 0);
  for (std::int64_t begin = 0; begin < y.count; begin += chunk) {
    const std::int64_t count = std::min(chunk, y.count - begin);
    if (read_) read_(array, begin, count, got.data());
    else std::memcpy(got.data(), static_cast<const unsigned char*>(y.data) + static_cast<std::size_t>(begin) * w,
                     static_cast<std::size_t>(count) * w);
    expect(begin, count, want.data());
    std::vector<std::int64_t> first(kChunks, -1), wrong(kChunks, 0);
    parallel_chunks(count, kChunks, [&](int k, std::int64_t b, std::int64_t e) {
      for (std::int64_t i = b; i < e; ++i) {
        if (std::memcmp(got.data() + i * w, want.data() + i * w, w) == 0) continue;
        if (wrong[k]++ == 0) first[k] = i;
      }
    });
    for (int k = 0; k < kChunks; ++k) {
      if (wrong[k] == 0) continue;
      if (c.worst_index < 0) {  // chunks and their parts in index order: the first mismatch
        const std::int64_t i = first[k];
        c.worst_index = begin + i;
        if (y.elem.dtype) {
          const View g{got.data(), count, y.elem}, x{want.data(), count, y.elem};
          c.worst_value = g.value(i);
          c.worst_reference = x.value(i);
        } else {
          c.worst_value = raw_integer(got.data() + i * w, w);
          c.worst_reference = raw_integer(want.data() + i * w, w);
        }
      }
      c.mismatches += wrong[k];
    }
  }
  if (c.worst_index >= 0 && y.elem.dtype && !std::isfinite(c.worst_value)) ++c.not_finite;
  c.worst = c.mismatches > 0 ? kInf : 0.0;
  c.passed = c.mismatches == 0;
  results_.push_back(std::move(c));
  return results_.back();
}

const CheckResult& Compare::scalar(const std::string& name, double value, double reference, double tolerance) {
  CheckResult c;
  c.kind = "scalar";
  c.array = name;
  c.compared = 1;
  c.scale = scale_;
  c.worst_index = 0;
  c.worst_value = value;
  c.worst_reference = reference;
  c.worst_bound = tolerance;
  const bool finite = std::isfinite(value);
  c.not_finite = finite ? 0 : 1;
  const double err = std::fabs(value - reference);
  if (finite) {
    c.max_abs_error = err;
    if (reference != 0) c.max_rel_error = err / std::fabs(reference);
  }
  // NaN or inf against a finite reference never passes (case C07); the same non-finite value as the reference does.
  const bool same_nonfinite = !finite && (value == reference);
  c.worst = same_nonfinite ? 0.0 : (!finite || !std::isfinite(reference)) ? kInf : (err == 0 ? 0.0 : (tolerance > 0 ? err / tolerance : kInf));
  c.passed = c.worst <= scale_;
  c.mismatches = c.passed ? 0 : 1;
  results_.push_back(std::move(c));
  return results_.back();
}

const CheckResult& Compare::scalar(const std::string& array, const std::string& ref_value, double tolerance) {
  const View& y = output_of(out_, array);
  if (y.count < 1) throw std::invalid_argument("scalar check of empty output '" + array + "'");
  return scalar(array, y.value(0), ref_.value(ref_value), tolerance);
}

const CheckResult& Compare::same_buffer(const std::string& array, const std::string& input) {
  const auto it = returned_.find(array);
  if (it == returned_.end())
    throw std::out_of_range("same_buffer check of '" + array + "': not a returned output (declare it with l.returned(...))");
  const View& y = output_of(out_, array);
  CheckResult c;
  c.kind = "same_buffer";
  c.array = array;
  c.compared = y.count;
  c.scale = scale_;
  c.passed = it->second == input;
  c.mismatches = c.passed ? 0 : y.count;
  c.worst = c.passed ? 0.0 : kInf;
  c.notes.emplace_back("same_buffer", c.passed ? 1 : 0);
  results_.push_back(std::move(c));
  return results_.back();
}

void Compare::note(const std::string& name, double value) {
  if (results_.empty()) throw std::logic_error("Compare::note before any comparison");
  results_.back().notes.emplace_back(name, value);
}

// ---- ExperimentDef ------------------------------------------------------------------------------------------

ExperimentDef& ExperimentDef::int_axis(std::string name, std::string description, double min, double max,
                                       std::int64_t fallback) {
  AxisSpec a;
  a.name = std::move(name);
  a.description = std::move(description);
  a.type = AxisType::integer;
  a.min = min;
  a.max = max;
  a.default_number = static_cast<double>(fallback);
  axes_.push_back(std::move(a));
  return *this;
}

ExperimentDef& ExperimentDef::real_axis(std::string name, std::string description, double min, double max,
                                        double fallback) {
  AxisSpec a;
  a.name = std::move(name);
  a.description = std::move(description);
  a.type = AxisType::real;
  a.min = min;
  a.max = max;
  a.default_number = fallback;
  axes_.push_back(std::move(a));
  return *this;
}

ExperimentDef& ExperimentDef::word_axis(std::string name, std::string description, std::vector<std::string> words,
                                        std::string fallback) {
  AxisSpec a;
  a.name = std::move(name);
  a.description = std::move(description);
  a.type = AxisType::word;
  a.words = std::move(words);
  a.default_word = std::move(fallback);
  axes_.push_back(std::move(a));
  return *this;
}

VariantDef& ExperimentDef::variant(std::string name, std::string description) {
  for (const auto& v : variants_)
    if (v.name() == name) throw std::logic_error(name_ + ": variant '" + name + "' declared twice");
  variants_.emplace_back(std::move(name), std::move(description));
  return variants_.back();
}

// ---- Static registration ----------------------------------------------------------------------------------

namespace {

struct Registrations {
  std::vector<std::pair<std::string, void (*)(ExperimentDef&)>> experiments;
  std::vector<std::pair<std::string, void (*)(CudaDef&)>> cuda;
};

Registrations& registrations() {
  static Registrations r;  // function-local: constructed on first use, whatever the order of static initialisers
  return r;
}

}  // namespace

namespace detail {
Registrar::Registrar(const char* name, void (*define)(ExperimentDef&)) { registrations().experiments.emplace_back(name, define); }
Registrar::Registrar(const char* name, void (*define)(CudaDef&)) { registrations().cuda.emplace_back(name, define); }
}  // namespace detail

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
  if (!def_->arrays_fn()) throw std::logic_error(def_->name() + ": the experiment declares no arrays (ExperimentDef::arrays)");
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

namespace {

Json result_json(const CheckResult& r) {
  Json j = Json::object();
  j["kind"] = r.kind;
  j["array"] = r.array;
  j["worst_ratio"] = json_real(r.worst);
  j["worst_index"] = r.worst_index;
  j["worst_value"] = json_real(r.worst_value);
  j["worst_reference"] = json_real(r.worst_reference);
  j["worst_bound"] = json_real(r.worst_bound);
  j["compared"] = r.compared;
  j["mismatches"] = r.mismatches;
  j["not_finite"] = r.not_finite;
  j["max_abs_error"] = json_real(r.max_abs_error);
  j["max_rel_error"] = json_real(r.max_rel_error);
  j["tolerance_scale"] = json_real(r.scale);
  for (const auto& [name, v] : r.notes) j[name] = json_real(v);
  return j;
}

}  // namespace

Check SdkExperiment::compare(const Args& args, const std::function<const Arrays&()>& inputs, const Arrays& outputs,
                             const Reference& ref, double scale, const std::map<std::string, std::string>& returned,
                             const Compare::ChunkReader& read) const {
  if (!def_->check_fn()) throw std::logic_error(def_->name() + ": no check (ExperimentDef::check)");
  // The inputs are made on the host only if the check reads them (a device-generated set has no host copy).
  Compare c(args, inputs, outputs, ref, scale, returned, read);
  def_->check_fn()(c);
  Check out;
  if (c.results().empty()) {
    out.passed = false;
    out.detail["error"] = def_->name() + ": the check compared nothing";
    return out;
  }
  // The comparison reported: the first that failed, else the one closest to its bound.
  const CheckResult* pick = nullptr;
  for (const auto& r : c.results())
    if (!r.passed) {
      pick = &r;
      break;
    }
  if (!pick)
    for (const auto& r : c.results())
      if (!pick || r.worst > pick->worst) pick = &r;
  out.passed = std::all_of(c.results().begin(), c.results().end(), [](const CheckResult& r) { return r.passed; });
  out.value = pick->worst_value;
  out.reference = pick->worst_reference;
  out.abs_error = std::isfinite(pick->worst_value) ? std::fabs(pick->worst_value - pick->worst_reference) : kInf;
  out.tolerance = scale * pick->worst_bound;
  out.detail = result_json(*pick);
  if (c.results().size() > 1) {
    Json all = Json::array();
    for (const auto& r : c.results()) all.push_back(result_json(r));
    out.detail["checks"] = all;
  }
  out.detail["poisoned"] = returned.empty();  // a returned output is the variant's memory (an input, say): not poisoned
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
  throw std::out_of_range("Launch::returns(\"" + name + "\"): no returned output of that name (declare it with l.returned(...) in e.arrays)");
}

const void* ReturnedOutputs::data(const std::string& name) const {
  const auto it = data_.find(name);
  return it == data_.end() ? nullptr : it->second;
}

std::optional<Check> ReturnedOutputs::missing() const {
  for (const auto& e : entries_)
    if (e.count > 0 && !data(e.name)) {
      Check c;
      c.passed = false;
      c.detail["error"] = "the variant handed back no '" + e.name + "' (Launch::returns)";
      c.detail["poisoned"] = false;
      return c;
    }
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
    return std::shared_ptr<void>(new std::uint64_t[(bytes + 7) / 8 + 2], [](void* p) { delete[] static_cast<std::uint64_t*>(p); });
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
  Check check(const std::function<void()>& iterate) override {
    out_.poison();
    iterate();
    const ReturnedOutputs& r = launch_->returned;
    if (auto missing = r.missing()) return *missing;
    Arrays out = out_.arrays();  // and the returned outputs where the variant pointed (host memory)
    for (const auto& e : r.entries()) out.put(e.name, View{const_cast<void*>(r.data(e.name)), e.count, e.elem});
    return exp_->compare(args_, [this]() -> const Arrays& { return in_->arrays(); }, out, *ref_, scale_,
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

AxisDecl axis_decl(const ExperimentDef::AxisSpec& a) {
  AxisDecl d;
  d.name = a.name;
  d.description = a.description;
  switch (a.type) {
    case AxisType::integer:
      d.kind = AxisKind::Integer;
      d.min = a.min;
      d.max = a.max;
      d.default_value = static_cast<std::int64_t>(a.default_number);
      break;
    case AxisType::real:
      d.kind = AxisKind::Real;
      d.min = a.min;
      d.max = a.max;
      d.default_value = a.default_number;
      break;
    case AxisType::word:
      d.kind = AxisKind::Word;
      d.choices = a.words;
      d.default_value = a.default_word;
      break;
  }
  return d;
}

// The registry entry of an SDK experiment: axes, variants with their host implementations, the estimate.
Experiment to_experiment(const std::shared_ptr<SdkExperiment>& exp) {
  const ExperimentDef& def = exp->def();
  Experiment e;
  e.name = def.name();
  e.description = def.description();
  for (const auto& a : def.axes()) e.axes.push_back(axis_decl(a));
  for (const auto& v : def.variants()) {
    VariantDecl decl{v.name(), v.description(), {}, {}};
    decl.modes = v.modes();
    if (v.unsupported_fn()) {
      auto f = v.unsupported_fn();
      decl.unsupported = [f](const Point& p) { return f(Args(p)); };
    }
    if (v.host_setup()) {
      const Setup setup = v.host_setup();
      decl.implementations[BackendKind::host] = [exp, setup](const Point& p, Backend&, const LabSettings& lab) {
        return std::unique_ptr<Workload>(new SdkHostWorkload(exp, setup, p, lab));
      };
    }
    e.variants.push_back(std::move(decl));
  }
  e.size_axis = def.size_axis_name();
  if (e.size_axis.empty())
    for (const auto& a : def.axes())
      if (a.type == AxisType::integer) {
        e.size_axis = a.name;
        break;
      }
  e.estimate = [exp](const Point& p) {
    const Args args(p);
    const Layout l = exp->layout(args);
    const Cost c = exp->cost(args, Reference{});
    return PointEstimate{l.bytes(Role::input) + l.bytes(Role::output) + l.bytes(Role::scratch) + l.bytes(Role::transient),
                         c.bytes, c.flop};
  };
  for (const auto& p : def.plots()) e.plots.push_back(PlotSpec{p.x, p.series, p.facets, p.title});
  e.hypotheses = def.hypotheses_yaml();
  e.docs = def.docs_path();
  e.report_section = def.report_fn();  // reads the typed view of its runs (labrun/report.hpp)
  return e;
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
    registry.add(to_experiment(exp));
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
                         [exp, s, cuda](const Point& p, Backend& b, const LabSettings& lab) { return cuda(exp, s, p, b, lab); });
    }
  }
}

void register_builtin(Registry& registry) { register_linked_experiments(registry); }

std::shared_ptr<SdkExperiment> sdk_experiment(const Registry& registry, const std::string& name) {
  const auto it = registered().find(name);
  return it == registered().end() || !registry.find(name) ? nullptr : it->second;
}

std::string describe_failure(const Check& c) {
  const Json& d = c.detail;
  const std::string kind = d.is_object() ? d.value("kind", std::string()) : std::string();
  auto num = [](double v) { return to_string(AxisValue(v)); };
  if (kind == "elementwise" || kind == "exact") {
    const std::string array = d.value("array", std::string("output"));
    std::string s = array + "[" + std::to_string(d.value("worst_index", std::int64_t{-1})) + "] = " + num(c.value) +
                    " vs reference " + num(c.reference);
    if (kind == "elementwise")
      s += " (error " + num(c.abs_error) + " > tolerance " + num(c.tolerance) + " = bound x " +
           num(json_number(d, {"tolerance_scale"})) + ")";
    s += "; " + std::to_string(d.value("mismatches", std::int64_t{0})) + " of " +
         std::to_string(d.value("compared", std::int64_t{0})) + " elements wrong, " +
         std::to_string(d.value("not_finite", std::int64_t{0})) + " non-finite; not timed";
    return s;
  }
  if (d.is_object() && d.contains("error")) return d["error"].get<std::string>() + "; not timed";
  return "result " + num(c.value) + " vs reference " + num(c.reference) + " (abs error " + num(c.abs_error) +
         " > tolerance " + num(c.tolerance) + "); not timed";
}

}  // namespace labrun
