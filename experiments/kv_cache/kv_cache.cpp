#include "kv_cache.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>
#include <labrun/point.hpp>
#include "record.hpp"
#include "registry.hpp"

namespace labrun::kv_cache {

namespace {

// The one table of kv_cache's variants: name, one-line description. Both have a host implementation and run in
// both modes (no host sync: every step is one kernel with its shape known in advance).
struct VariantRow {
  Variant variant;
  const char* name;
  const char* description;
};
constexpr VariantRow kVariants[] = {
    {Variant::concat, "concat",
     "cache = cat(cache, new) every step: the whole cache and the token copied into a fresh buffer (ping-pong)"},
    {Variant::preallocated, "preallocated", "cache allocated at n1 once; each step writes the new token's slot"},
};

constexpr int kChunks = 64;

void require_dtype(DType t) {
  if (t == DType::f64) throw std::invalid_argument("kv_cache: dtype must be bf16, f16 or f32, got f64");
}

std::size_t words_of(std::size_t bytes) { return (bytes + 7) / 8 + 1; }  // one spare word: a valid pointer at 0

double element_value(Format f, std::uint32_t bits) {
  switch (f) {
    case Format::f32: return bits_float(bits);
    case Format::f16: return half_to_float(static_cast<std::uint16_t>(bits));
    case Format::bf16: return bf16_to_float(static_cast<std::uint16_t>(bits));
  }
  return 0;
}

std::uint32_t load_bits(const void* base, std::size_t elem_bytes, std::uint64_t i) {
  if (elem_bytes == 4) return static_cast<const std::uint32_t*>(base)[i];
  return static_cast<const std::uint16_t*>(base)[i];
}

void store_bits(void* base, std::size_t elem_bytes, std::uint64_t i, std::uint32_t bits) {
  if (elem_bytes == 4) static_cast<std::uint32_t*>(base)[i] = bits;
  else static_cast<std::uint16_t*>(base)[i] = static_cast<std::uint16_t>(bits);
}

}  // namespace

const char* to_string(Variant v) {
  for (const auto& row : kVariants)
    if (row.variant == v) return row.name;
  return "?";
}

Variant parse_variant(const std::string& name) {
  for (const auto& row : kVariants)
    if (name == row.name) return row.variant;
  throw std::invalid_argument("unknown kv_cache variant '" + name + "'");
}

Params params_of(const Point& point) {
  Params p;
  p.variant = parse_variant(point.variant);
  p.batch = point.integer("batch");
  p.layers = point.integer("layers");
  p.kv_heads = point.integer("kv_heads");
  p.head_dim = point.integer("head_dim");
  p.n0 = point.integer("n0");
  p.n1 = point.integer("n1");
  const auto dt = parse_dtype(point.word("dtype"));
  if (!dt) throw std::invalid_argument("unknown dtype '" + point.word("dtype") + "'");
  require_dtype(*dt);
  p.dtype = *dt;
  p.mode = point.word("mode");
  if (p.n1 < p.n0) throw std::invalid_argument("kv_cache: n1 must be >= n0");
  return p;
}

Format format_of(DType t) {
  switch (t) {
    case DType::f32: return Format::f32;
    case DType::f16: return Format::f16;
    case DType::bf16: return Format::bf16;
    case DType::f64: break;
  }
  throw std::invalid_argument("kv_cache: dtype must be bf16, f16 or f32");
}

double bytes_per_token(const Params& p) {
  return 2.0 * static_cast<double>(p.layers) * static_cast<double>(p.kv_heads) * static_cast<double>(p.head_dim) *
         static_cast<double>(p.batch) * static_cast<double>(dtype_bytes(p.dtype));
}

std::int64_t copied_tokens(std::int64_t n0, std::int64_t n1) {
  if (n1 <= n0) return 0;
  return (n1 - n0) * (n0 + n1 - 1) / 2;  // arithmetic series n0 + (n0 + 1) + ... + (n1 − 1); the product is even
}

double text_copy_bytes(const Params& p) {
  const double n0 = static_cast<double>(p.n0), n1 = static_cast<double>(p.n1);
  return bytes_per_token(p) * (n1 * n1 - n0 * n0) / 2;
}

Cost cost(const Params& p) {
  const double bpt = bytes_per_token(p);
  const double s = static_cast<double>(p.steps());
  const double c = static_cast<double>(copied_tokens(p.n0, p.n1));
  // concat: step n (n = n0..n1−1) reads the n-token old cache and the token, writes the (n + 1)-token new cache.
  Cost cost = p.variant == Variant::concat ? Cost::of(bpt * (c + s), bpt * (c + s), 2 * bpt * s, 0, s, 0)
                                           : Cost::of(bpt * s, bpt * s, 2 * bpt * s, 0, s, 0);
  cost.peak_work_bytes = peak_work_bytes(p);
  return cost;
}

double peak_work_bytes(const Params& p) {
  // Each buffer at least 16 bytes, as the CUDA workload allocates them (a valid pointer at n1 = 0).
  const double buffer = std::max(bytes_per_token(p) * static_cast<double>(p.n1), 16.0);
  return buffer * (p.variant == Variant::concat ? 2 : 1);
}

double working_set_bytes(const Params& p) {
  return bytes_per_token(p) * static_cast<double>(p.n0 + p.steps()) + peak_work_bytes(p);
}

std::size_t Inputs::prefill_bytes() const {
  return static_cast<std::size_t>(params.rows() * params.n0 * params.head_dim) * dtype_bytes(params.dtype);
}

std::size_t Inputs::token_bytes() const {
  return static_cast<std::size_t>(params.steps() * params.token_elements()) * dtype_bytes(params.dtype);
}

Inputs generate(const Params& p, std::uint64_t seed) {
  require_dtype(p.dtype);
  if (p.n1 < p.n0 || p.n0 < 0) throw std::invalid_argument("kv_cache: need 0 <= n0 <= n1");
  Inputs in;
  in.params = p;
  in.prefill.assign(words_of(in.prefill_bytes()), 0);
  in.tokens.assign(words_of(in.token_bytes()), 0);
  const Format f = format_of(p.dtype);
  const std::size_t s = dtype_bytes(p.dtype);
  const std::int64_t rows = p.rows(), D = p.head_dim, S = p.steps();
  // Prefill: element (r, t, d), t < n0, at (r·n0 + t)·D + d.
  parallel_chunks(rows, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      for (std::int64_t t = 0; t < p.n0; ++t)
        for (std::int64_t d = 0; d < D; ++d)
          store_bits(in.prefill.data(), s, static_cast<std::uint64_t>((r * p.n0 + t) * D + d),
                     value_bits(f, seed, final_index(p, r, t, d)));
  });
  // Token s: element (r, d) at (s·R + r)·D + d, its place in the final cache token n0 + s.
  parallel_chunks(S, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t st = begin; st < end; ++st)
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t d = 0; d < D; ++d)
          store_bits(in.tokens.data(), s, static_cast<std::uint64_t>((st * rows + r) * D + d),
                     value_bits(f, seed, final_index(p, r, p.n0 + st, d)));
  });
  return in;
}

Check compare(const Params& p, std::uint64_t seed, const void* cache) {
  const Format f = format_of(p.dtype);
  const std::size_t s = dtype_bytes(p.dtype);
  const std::int64_t total = p.rows() * p.n1 * p.head_dim;
  struct Part {
    std::int64_t mismatches = 0, nonfinite = 0, first = -1;
  };
  std::vector<Part> parts(kChunks);
  parallel_chunks(total, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    Part part;
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint32_t got = load_bits(cache, s, static_cast<std::uint64_t>(i));
      const std::uint32_t want = value_bits(f, seed, static_cast<std::uint64_t>(i));
      if (got == want) continue;
      ++part.mismatches;
      if (!std::isfinite(element_value(f, got))) ++part.nonfinite;
      if (part.first < 0) part.first = i;
    }
    parts[chunk] = part;
  });
  Part all;
  for (const auto& part : parts) {  // chunk order: the first mismatch in index order
    all.mismatches += part.mismatches;
    all.nonfinite += part.nonfinite;
    if (all.first < 0) all.first = part.first;
  }
  Check c;
  c.value = static_cast<double>(all.mismatches);
  c.reference = 0;
  c.abs_error = c.value;
  c.tolerance = 0;
  c.passed = all.mismatches == 0;
  c.detail["metric"] = "elements whose bits differ from the reference (an exact copy: tolerance 0)";
  c.detail["elements"] = total;
  c.detail["mismatches"] = all.mismatches;
  c.detail["nonfinite"] = all.nonfinite;
  c.detail["bytes_per_token"] = json_real(bytes_per_token(p));
  c.detail["generated_tokens"] = p.steps();
  if (all.first >= 0) {
    const std::int64_t i = all.first;
    const std::uint32_t got = load_bits(cache, s, static_cast<std::uint64_t>(i));
    const std::uint32_t want = value_bits(f, seed, static_cast<std::uint64_t>(i));
    c.detail["first_mismatch"] = Json{{"index", i},
                                      {"row", i / (p.n1 * p.head_dim)},
                                      {"token", (i / p.head_dim) % p.n1},
                                      {"expected_bits", want},
                                      {"actual_bits", got},
                                      {"expected", json_real(element_value(f, want))},
                                      {"actual", json_real(element_value(f, got))}};
  }
  return c;
}

HostState host_setup(const Params& p, const Inputs& in) {
  HostState st;
  const std::size_t s = dtype_bytes(p.dtype);
  const std::size_t cap = static_cast<std::size_t>(p.rows() * p.n1 * p.head_dim) * s;
  st.a.assign(words_of(cap), 0);
  if (p.variant == Variant::concat) {
    st.b.assign(words_of(cap), 0);
    return st;
  }
  const std::size_t row_in = static_cast<std::size_t>(p.n0 * p.head_dim) * s;
  const std::size_t row_out = static_cast<std::size_t>(p.n1 * p.head_dim) * s;
  auto* out = reinterpret_cast<char*>(st.a.data());
  const auto* pre = reinterpret_cast<const char*>(in.prefill.data());
  for (std::int64_t r = 0; r < p.rows(); ++r) std::memcpy(out + r * row_out, pre + r * row_in, row_in);
  return st;
}

const void* final_cache(const Params& p, const Inputs& in, const HostState& st) {
  if (p.variant == Variant::preallocated) return st.a.data();
  if (p.steps() == 0) return in.prefill.data();
  return (p.steps() % 2 == 1) ? st.a.data() : st.b.data();
}

const void* host_run(const Params& p, const Inputs& in, HostState& st) {
  const std::size_t tok = static_cast<std::size_t>(p.head_dim) * dtype_bytes(p.dtype);  // one token of one row
  const std::int64_t rows = p.rows();
  const auto* tokens = reinterpret_cast<const char*>(in.tokens.data());
  if (p.variant == Variant::preallocated) {
    auto* cache = reinterpret_cast<char*>(st.a.data());
    for (std::int64_t s = 0; s < p.steps(); ++s) {
      const std::int64_t t = p.n0 + s;
      for (std::int64_t r = 0; r < rows; ++r)
        std::memcpy(cache + (r * p.n1 + t) * tok, tokens + (s * rows + r) * tok, tok);
    }
    return final_cache(p, in, st);
  }
  for (std::int64_t s = 0; s < p.steps(); ++s) {
    const std::int64_t n = p.n0 + s;  // tokens in the old cache
    const char* old = s == 0 ? reinterpret_cast<const char*>(in.prefill.data())
                             : reinterpret_cast<const char*>((s % 2 == 1 ? st.a : st.b).data());
    char* fresh = reinterpret_cast<char*>((s % 2 == 0 ? st.a : st.b).data());
    for (std::int64_t r = 0; r < rows; ++r) {
      std::memcpy(fresh + r * (n + 1) * tok, old + r * n * tok, static_cast<std::size_t>(n) * tok);
      std::memcpy(fresh + (r * (n + 1) + n) * tok, tokens + (s * rows + r) * tok, tok);
    }
  }
  return final_cache(p, in, st);
}

std::string input_key(const Params& p) {
  return std::to_string(p.batch) + "/" + std::to_string(p.layers) + "/" + std::to_string(p.kv_heads) + "/" +
         std::to_string(p.head_dim) + "/" + std::to_string(p.n0) + "/" + std::to_string(p.n1) + "/" +
         to_string(p.dtype);
}

std::uint64_t input_seed(const Params& p, std::uint64_t lab_seed) {
  return splitmix64(lab_seed ^ fnv1a64("kv_cache/" + input_key(p)));
}

namespace {

// Host inputs shared by the variants of consecutive points with the same shape and seed.
class InputCache {
 public:
  std::shared_ptr<const Inputs> inputs(const Params& p, std::uint64_t seed) {
    const std::string key = input_key(p) + "/" + std::to_string(seed);
    if (key != key_ || !inputs_) {
      inputs_.reset();  // release the old set first
      inputs_ = std::make_shared<const Inputs>(generate(p, seed));
      key_ = key;
    }
    return inputs_;
  }

 private:
  std::string key_;
  std::shared_ptr<const Inputs> inputs_;
};

class HostWorkload : public Workload {
 public:
  HostWorkload(const Params& p, std::shared_ptr<const Inputs> in, std::uint64_t seed)
      : p_(p), in_(std::move(in)), seed_(seed), state_(host_setup(p_, *in_)) {}
  void run() override { host_run(p_, *in_, state_); }
  Check check(const std::function<void()>& iterate) override {
    // Poison (all-ones bits: NaN in f32, f16 and bf16) every slot an iteration writes: both concat buffers; the
    // preallocated cache's slots n0..n1-1 (its prefill slots are setup, never written by an iteration).
    if (p_.variant == Variant::preallocated) {
      poison_generated_slots();
    } else {
      std::fill(state_.a.begin(), state_.a.end(), ~std::uint64_t{0});
      std::fill(state_.b.begin(), state_.b.end(), ~std::uint64_t{0});
    }
    iterate();
    Check c = compare(p_, seed_, final_cache(p_, *in_, state_));
    c.detail["poisoned"] = p_.steps() > 0;
    return c;
  }
  Cost cost() const override { return kv_cache::cost(p_); }

 private:
  void poison_generated_slots() {
    const std::size_t tok = static_cast<std::size_t>(p_.head_dim) * dtype_bytes(p_.dtype);
    auto* cache = reinterpret_cast<char*>(state_.a.data());
    for (std::int64_t r = 0; r < p_.rows(); ++r)
      std::memset(cache + (r * p_.n1 + p_.n0) * tok, 0xff, static_cast<std::size_t>(p_.steps()) * tok);
  }

  Params p_;
  std::shared_ptr<const Inputs> in_;
  std::uint64_t seed_;
  HostState state_;
};

}  // namespace

void register_experiment(Registry& registry) {
  Experiment e;
  e.name = "kv_cache";
  e.description = "KV-cache append over a decode from n0 to n1 tokens: torch.cat every step vs a preallocated cache";
  e.axes = {
      {"batch", AxisKind::Integer, "B: sequences decoded together", 1.0, 4096.0, {}, std::int64_t{1}},
      {"layers", AxisKind::Integer, "L: transformer layers (each a K and a V cache)", 1.0, 1024.0, {}, std::int64_t{36}},
      {"kv_heads", AxisKind::Integer, "H: key/value heads per layer", 1.0, 1024.0, {}, std::int64_t{2}},
      {"head_dim", AxisKind::Integer, "D: elements per head", 1.0, 4096.0, {}, std::int64_t{128}},
      {"n0", AxisKind::Integer, "tokens in the cache before decoding (the prefill)", 0.0, 1048576.0, {},
       std::int64_t{128}},
      {"n1", AxisKind::Integer, "tokens in the cache after decoding (n1 - n0 decode steps)", 0.0, 1048576.0, {},
       std::int64_t{384}},
      {"dtype", AxisKind::Word, "storage dtype of the cache", {}, {}, {"bf16", "f16", "f32"}, std::string("bf16")},
  };
  auto cache = std::make_shared<InputCache>();
  auto host = [cache](const Point& point, Backend&, const LabSettings& lab) -> std::unique_ptr<Workload> {
    const Params p = params_of(point);
    const std::uint64_t seed = input_seed(p, lab.seed);
    return std::make_unique<HostWorkload>(p, cache->inputs(p, seed), seed);
  };
  auto unsupported = [](const Point& point) -> std::optional<std::string> {
    if (point.integer("n1") < point.integer("n0"))
      return "n1 (" + std::to_string(point.integer("n1")) + ") < n0 (" + std::to_string(point.integer("n0")) +
             "): a decode cannot shrink the cache";
    return std::nullopt;
  };
  for (const auto& row : kVariants) {
    VariantDecl decl{row.name, row.description, unsupported, {}};
    decl.implementations[BackendKind::host] = host;
    e.variants.push_back(std::move(decl));
  }
  e.size_axis = "n1";
  e.estimate = [](const Point& point) {
    if (point.integer("n1") < point.integer("n0")) return PointEstimate{0, 0, 0};
    const Params p = params_of(point);
    const Cost c = cost(p);
    return PointEstimate{working_set_bytes(p), c.bytes, c.flop};
  };
  e.plots = {PlotSpec{"n1", "variant", {"n0"}, "time per generation vs n1"}};
  e.docs = "docs/experiments/kv_cache.md";
  registry.add(std::move(e));
}

}  // namespace labrun::kv_cache
