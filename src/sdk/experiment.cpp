// The implementation of labrun/experiment.hpp: the typed access to a point (Args), the arrays and the reference of a
// point (View, Layout, Arrays, Reference), the comparisons (Compare), the author's definition (ExperimentDef) and
// the static registration list (linked.hpp).
#include <labrun/experiment.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <stdexcept>

#include <labrun/parallel.hpp>

#include "linked.hpp"

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
  throw std::out_of_range(std::string("Layout::") + what + "(\"" + name +
                          "\"): no output of that name (declare it first)");
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
View& Arrays::operator[](const std::string& name) { return const_cast<View&>(static_cast<const Arrays&>(*this)[name]); }
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
      throw std::invalid_argument("check: output '" + name +
                                  "' is chunked (Layout::chunked): compare it with exact_chunks");
    return v;
  }
  std::string names;
  for (const auto& [n, v] : out.items()) names += (names.empty() ? "" : ", ") + n;
  throw std::out_of_range("check: no output array '" + name + "' (outputs: " + (names.empty() ? "none" : names) +
                          "; declare it with l.output(...) in e.arrays)");
}

constexpr int kChunks = 64;
const double kInf = std::numeric_limits<double>::infinity();

/// One chunk's share of an elementwise check: the worst ratio of error to bound and its position (an index of the
/// output, or of the reference for elementwise_at), the largest absolute and relative errors, the mismatches (ratio
/// above the scale) and the non-finite outputs.
struct ElementPart {
  double worst = 0, max_abs = 0, max_rel = 0;
  std::int64_t worst_at = -1, mismatches = 0, not_finite = 0;

  /// Adds output `v` against reference `r` at position `at`; `bound(at, r)` is the tolerance. Case C07: NaN (the
  /// poison) and inf never pass.
  void add(std::int64_t at, double v, double r, const std::function<double(std::int64_t, double)>& bound,
           double scale) {
    double ratio = kInf;
    if (!std::isfinite(v)) {
      ++not_finite;
    } else {
      const double err = std::fabs(v - r);
      const double b = bound(at, r);
      ratio = err == 0 ? 0.0 : (b > 0 ? err / b : kInf);
      max_abs = std::max(max_abs, err);
      if (r != 0) max_rel = std::max(max_rel, err / std::fabs(r));
    }
    if (!(ratio <= scale)) ++mismatches;
    if (worst_at < 0 || ratio > worst) {
      worst = ratio;
      worst_at = at;
    }
  }
};

/// Folds the chunks' parts into `c` (worst, largest errors, mismatches; not the non-finite count) in chunk order:
/// the first worst position wins ties. Returns the worst position, -1 when nothing was compared.
std::int64_t merge_parts(const std::vector<ElementPart>& parts, CheckResult& c) {
  std::int64_t worst_at = -1;
  for (const auto& p : parts) {
    if (p.worst_at >= 0 && (worst_at < 0 || p.worst > c.worst)) {
      c.worst = p.worst;
      worst_at = p.worst_at;
    }
    c.max_abs_error = std::max(c.max_abs_error, p.max_abs);
    c.max_rel_error = std::max(c.max_rel_error, p.max_rel);
    c.mismatches += p.mismatches;
  }
  return worst_at;
}

}  // namespace

const CheckResult& Compare::elementwise(const std::string& array,
                                        const std::function<double(std::int64_t, double)>& bound,
                                        const std::string& ref_array) {
  const View& y = output_of(out_, array);
  const std::vector<double>& ref = ref_.array(ref_array.empty() ? array : ref_array);
  if (!y.elem.dtype) throw std::invalid_argument("elementwise check of raw array '" + array + "'");
  if (static_cast<std::int64_t>(ref.size()) != y.count)
    throw std::invalid_argument("elementwise check of '" + array + "': " + std::to_string(y.count) +
                                " outputs against " + std::to_string(ref.size()) + " reference values");
  std::vector<ElementPart> parts(kChunks);
  const double scale = scale_;
  // Sampled (the re-check on fresh inputs): every stride-th element only.
  const std::int64_t stride = sample_ > 0 && y.count > sample_ ? (y.count + sample_ - 1) / sample_ : 1;
  const std::int64_t positions = (y.count + stride - 1) / stride;
  parallel_chunks(positions, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    ElementPart p;
    for (std::int64_t j = begin; j < end; ++j)
      p.add(j * stride, y.value(j * stride), ref[static_cast<std::size_t>(j * stride)], bound, scale);
    parts[chunk] = p;
  });
  CheckResult c;
  c.kind = "elementwise";
  c.array = array;
  c.compared = positions;
  c.scale = scale;
  c.worst_index = merge_parts(parts, c);
  for (const auto& p : parts) c.not_finite += p.not_finite;
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
  std::vector<ElementPart> parts(kChunks);
  const double scale = scale_;
  parallel_chunks(n, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    ElementPart p;
    for (std::int64_t k = begin; k < end; ++k)
      p.add(k, y.value(indices[static_cast<std::size_t>(k)]), ref[static_cast<std::size_t>(k)], bound, scale);
    parts[chunk] = p;
  });
  // Every element finite, the ones the reference does not cover included.
  struct NotFiniteCount {
    std::int64_t count = 0, outside = 0, first_outside = -1;  // outside: not among `indices`
  };
  std::vector<NotFiniteCount> scan(kChunks);
  parallel_chunks(y.count, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    NotFiniteCount& p = scan[chunk];
    for (std::int64_t i = begin; i < end; ++i) {
      if (std::isfinite(y.value(i))) continue;
      ++p.count;
      if (std::binary_search(sorted.begin(), sorted.end(), i)) continue;
      if (p.outside++ == 0) p.first_outside = i;
    }
  });
  CheckResult c;
  c.kind = "elementwise";
  c.array = array;
  c.compared = n;
  c.scale = scale;
  const std::int64_t worst_k = merge_parts(parts, c);
  std::int64_t first_outside = -1;
  for (const auto& p : scan) {
    c.not_finite += p.count;
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
    if (begin >= end || std::memcmp(a + begin * w, b + begin * w, static_cast<std::size_t>(end - begin) * w) == 0)
      return;
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
// The signed integer of type T at `p` (unaligned), as a double.
template <class T>
double load_integer(const unsigned char* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return static_cast<double>(v);
}

// A raw element of 1, 2, 4 or 8 bytes as a little-endian signed integer; 0 for other widths.
double raw_integer(const unsigned char* p, std::size_t w) {
  switch (w) {
    case 1: return load_integer<std::int8_t>(p);
    case 2: return load_integer<std::int16_t>(p);
    case 4: return load_integer<std::int32_t>(p);
    case 8: return load_integer<std::int64_t>(p);
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
    else
      std::memcpy(got.data(), static_cast<const unsigned char*>(y.data) + static_cast<std::size_t>(begin) * w,
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
  c.worst = same_nonfinite                           ? 0.0
            : (!finite || !std::isfinite(reference)) ? kInf
                                                     : (err == 0 ? 0.0 : (tolerance > 0 ? err / tolerance : kInf));
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
    throw std::out_of_range("same_buffer check of '" + array +
                            "': not a returned output (declare it with l.returned(...))");
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

namespace {

// A numeric axis: its name, description, type (integer or real), bounds and the value it takes when a config
// does not sweep it.
detail::ExperimentData::AxisSpec numeric_axis(std::string name, std::string description, AxisType type, double min,
                                              double max, double fallback) {
  detail::ExperimentData::AxisSpec a;
  a.name = std::move(name);
  a.description = std::move(description);
  a.type = type;
  a.min = min;
  a.max = max;
  a.default_number = fallback;
  return a;
}

}  // namespace

ExperimentDef& ExperimentDef::int_axis(std::string name, std::string description, double min, double max,
                                       std::int64_t fallback) {
  axes_.push_back(numeric_axis(std::move(name), std::move(description), AxisType::integer, min, max,
                               static_cast<double>(fallback)));
  return *this;
}

ExperimentDef& ExperimentDef::real_axis(std::string name, std::string description, double min, double max,
                                        double fallback) {
  axes_.push_back(numeric_axis(std::move(name), std::move(description), AxisType::real, min, max, fallback));
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

Registrations& registrations() {
  static Registrations r;  // function-local: constructed on first use, whatever the order of static initialisers
  return r;
}

namespace detail {
Registrar::Registrar(const char* name, void (*define)(ExperimentDef&)) {
  registrations().experiments.emplace_back(name, define);
}
Registrar::Registrar(const char* name, void (*define)(CudaDef&)) { registrations().cuda.emplace_back(name, define); }
}  // namespace detail

}  // namespace labrun
