// The kv_cache experiment on the SDK (LABRUN_EXPERIMENT(kv_cache)): axes, arrays, the input generator, the exact
// check, the cost model and the host variants. Formulas: docs/experiments/kv_cache.md.
#include "kv_cache.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <labrun/parallel.hpp>

namespace labrun::kv_cache {

namespace {

void store_bits(void* base, std::size_t elem_bytes, std::uint64_t i, std::uint32_t bits) {
  if (elem_bytes == 4) static_cast<std::uint32_t*>(base)[i] = bits;
  else static_cast<std::uint16_t*>(base)[i] = static_cast<std::uint16_t>(bits);
}

// The buffer step i of S writes (concat): the last step writes `cache`, the one before `other`, and so on.
void* step_buffer(std::int64_t i, std::int64_t S, void* cache, void* other) {
  return (S - 1 - i) % 2 == 0 ? cache : other;
}

}  // namespace

const char* to_string(Variant v) { return v == Variant::concat ? "concat" : "preallocated"; }

Params params_of(const Args& a) {
  const std::string& v = a.variant();
  if (v != "concat" && v != "preallocated") throw std::invalid_argument("unknown kv_cache variant '" + v + "'");
  const Params p{.variant = v == "concat" ? Variant::concat : Variant::preallocated,
                 .batch = a.i64("batch"),
                 .layers = a.i64("layers"),
                 .kv_heads = a.i64("kv_heads"),
                 .head_dim = a.i64("head_dim"),
                 .n0 = a.i64("n0"),
                 .n1 = a.i64("n1"),
                 .dtype = a.dtype(),
                 .mode = a.mode()};
  (void)format_of(p.dtype);  // bf16, f16 or f32
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
  Cost cost = p.variant == Variant::concat
                  ? Cost::of(
                        {.read = bpt * (c + s), .written = bpt * (c + s), .compulsory = 2 * bpt * s, .launches = s})
                  : Cost::of({.read = bpt * s, .written = bpt * s, .compulsory = 2 * bpt * s, .launches = s});
  // Each buffer at least 16 bytes, as the lab allocates them (a valid pointer at n1 = 0).
  const double buffer = std::max(bpt * static_cast<double>(p.n1), 16.0);
  cost.peak_work_bytes = buffer * (p.variant == Variant::concat ? 2 : 1);
  return cost;
}

void generate(const Params& p, const View& prefill, const View& tokens, std::uint64_t seed) {
  const Format f = format_of(p.dtype);
  if (p.n1 < p.n0 || p.n0 < 0) throw std::invalid_argument("kv_cache: need 0 <= n0 <= n1");
  const std::int64_t rows = p.rows(), D = p.head_dim, S = p.steps();
  if (prefill.count != rows * p.n0 * D || tokens.count != S * rows * D)
    throw std::invalid_argument("kv_cache: prefill and token table of other sizes than the point's");
  const std::size_t s = dtype_bytes(p.dtype);
  // Prefill: element (r, t, d), t < n0, at (r·n0 + t)·D + d.
  parallel_chunks(rows, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r)
      for (std::int64_t t = 0; t < p.n0; ++t)
        for (std::int64_t d = 0; d < D; ++d)
          store_bits(prefill.data, s, static_cast<std::uint64_t>((r * p.n0 + t) * D + d),
                     value_bits(f, seed, final_index(p, r, t, d)));
  });
  // Token s: element (r, d) at (s·R + r)·D + d, its place in the final cache token n0 + s.
  parallel_chunks(S, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t st = begin; st < end; ++st)
      for (std::int64_t r = 0; r < rows; ++r)
        for (std::int64_t d = 0; d < D; ++d)
          store_bits(tokens.data, s, static_cast<std::uint64_t>((st * rows + r) * D + d),
                     value_bits(f, seed, final_index(p, r, p.n0 + st, d)));
  });
}

void check(Compare& c) {
  const Params p = params_of(c.args());
  const std::size_t tok = static_cast<std::size_t>(p.head_dim) * dtype_bytes(p.dtype);  // one token of one row
  const std::int64_t rows = p.rows(), S = p.steps(), total = rows * p.n1 * p.head_dim;
  // The cache the iteration must leave, from the inputs: the prefill's tokens (concat, when a step ran) and the
  // token table's, each at its place; every other byte the lab's poison (0xff), which no iteration may overwrite.
  std::vector<std::uint64_t> words((static_cast<std::size_t>(total) * dtype_bytes(p.dtype) + 7) / 8 + 1);
  auto* expected = reinterpret_cast<char*>(words.data());
  const auto* pre = static_cast<const char*>(c.inputs()["prefill"].data);
  const auto* tokens = static_cast<const char*>(c.inputs()["tokens"].data);
  const bool prefill_written = p.variant == Variant::concat && S > 0;
  parallel_chunks(rows, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t r = begin; r < end; ++r) {
      char* row = expected + static_cast<std::size_t>(r * p.n1) * tok;
      if (prefill_written)
        std::memcpy(row, pre + static_cast<std::size_t>(r * p.n0) * tok, static_cast<std::size_t>(p.n0) * tok);
      else std::memset(row, 0xff, static_cast<std::size_t>(p.n0) * tok);
      for (std::int64_t s = 0; s < S; ++s)
        std::memcpy(row + static_cast<std::size_t>(p.n0 + s) * tok,
                    tokens + static_cast<std::size_t>(s * rows + r) * tok, tok);
    }
  });
  const CheckResult& res = c.exact("cache", View{words.data(), total, Elem::of(p.dtype)});
  c.note("bytes_per_token", bytes_per_token(p));
  c.note("generated_tokens", static_cast<double>(S));
  if (res.worst_index >= 0) {
    c.note("first_mismatch_row", static_cast<double>(res.worst_index / (p.n1 * p.head_dim)));
    c.note("first_mismatch_token", static_cast<double>((res.worst_index / p.head_dim) % p.n1));
  }
}

void host_run(const Params& p, const void* prefill, const void* tokens_v, void* cache, void* other) {
  const std::size_t tok = static_cast<std::size_t>(p.head_dim) * dtype_bytes(p.dtype);  // one token of one row
  const std::int64_t rows = p.rows(), S = p.steps();
  const auto* tokens = static_cast<const char*>(tokens_v);
  if (p.variant == Variant::preallocated) {
    auto* out = static_cast<char*>(cache);
    for (std::int64_t s = 0; s < S; ++s) {
      const std::int64_t t = p.n0 + s;
      for (std::int64_t r = 0; r < rows; ++r)
        std::memcpy(out + (r * p.n1 + t) * tok, tokens + (s * rows + r) * tok, tok);
    }
    return;
  }
  for (std::int64_t s = 0; s < S; ++s) {
    const std::int64_t n = p.n0 + s;  // tokens in the old cache
    const auto* old = static_cast<const char*>(s == 0 ? prefill : step_buffer(s - 1, S, cache, other));
    auto* fresh = static_cast<char*>(step_buffer(s, S, cache, other));
    for (std::int64_t r = 0; r < rows; ++r) {
      std::memcpy(fresh + r * (n + 1) * tok, old + r * n * tok, static_cast<std::size_t>(n) * tok);
      std::memcpy(fresh + (r * (n + 1) + n) * tok, tokens + (s * rows + r) * tok, tok);
    }
  }
}

LABRUN_EXPERIMENT(kv_cache) {
  e.describe("KV-cache append over a decode from n0 to n1 tokens: torch.cat every step vs a preallocated cache")
      .docs("docs/experiments/kv_cache.md")
      .int_axis("batch", "B: sequences decoded together", 1, 4096, 1)
      .int_axis("layers", "L: transformer layers (each a K and a V cache)", 1, 1024, 36)
      .int_axis("kv_heads", "H: key/value heads per layer", 1, 1024, 2)
      .int_axis("head_dim", "D: elements per head", 1, 4096, 128)
      .int_axis("n0", "tokens in the cache before decoding (the prefill)", 0, 1048576, 128)
      .int_axis("n1", "tokens in the cache after decoding (n1 - n0 decode steps)", 0, 1048576, 384)
      .word_axis("dtype", "storage dtype of the cache", {"bf16", "f16", "f32"}, "bf16")
      .size_axis("n1")
      .plot({"n1", "variant", {"n0"}, "time per generation vs n1"});
  // The prefill and the token table; the final cache; concat's second ping-pong buffer (both at n1 tokens: the
  // fresh tensor torch.cat allocates each step, allocated once so an iteration moves what cat moves without timing
  // an allocator, case C12). A point with n1 < n0 is not supported and holds nothing.
  e.arrays([](const Args& a, Layout& l) {
    if (a.i64("n1") < a.i64("n0")) return;
    const Params p = params_of(a);
    l.input("prefill", p.dtype, p.rows() * p.n0 * p.head_dim).input("tokens", p.dtype, p.steps() * p.token_elements());
    l.output("cache", p.dtype, p.rows() * p.n1 * p.head_dim);
    if (p.variant == Variant::concat) l.output("other", p.dtype, p.rows() * p.n1 * p.head_dim);
  });
  e.inputs_depend_on({"batch", "layers", "kv_heads", "head_dim", "n0", "n1", "dtype"});
  e.seed_text([](const Args& a) {  // the seeds drawn before the SDK, so earlier results compare point for point
    return "kv_cache/" + std::to_string(a.i64("batch")) + "/" + std::to_string(a.i64("layers")) + "/" +
           std::to_string(a.i64("kv_heads")) + "/" + std::to_string(a.i64("head_dim")) + "/" +
           std::to_string(a.i64("n0")) + "/" + std::to_string(a.i64("n1")) + "/" + to_string(a.dtype());
  });
  e.generate(
      [](const Args& a, std::uint64_t seed, Arrays& in) { generate(params_of(a), in["prefill"], in["tokens"], seed); });
  // The reference is the generator itself (value_bits): the check assembles the expected cache from the inputs.
  e.reference([](const Args& a, const Arrays&, Reference& r) {
    const Params p = params_of(a);
    r.set("generated_tokens", static_cast<double>(p.steps()));
    r.set("bytes_per_token", bytes_per_token(p));
  });
  e.check(check);
  e.cost([](const Args& a, const Reference&) {
    if (a.i64("n1") < a.i64("n0")) return Cost::of({.read = 0, .written = 0, .compulsory = 0});
    return cost(params_of(a));
  });
  auto host = [](Launch& setup) -> Step {
    const Params p = params_of(setup.args());
    const void* prefill = setup.in("prefill").data;
    const void* tokens = setup.in("tokens").data;
    void* cache = setup.out("cache").data;
    void* other = p.variant == Variant::concat ? setup.out("other").data : nullptr;
    return [=](Launch&) { host_run(p, prefill, tokens, cache, other); };
  };
  auto unsupported = [](const Args& a) -> std::optional<std::string> {
    if (a.i64("n1") < a.i64("n0"))
      return "n1 (" + std::to_string(a.i64("n1")) + ") < n0 (" + std::to_string(a.i64("n0")) +
             "): a decode cannot shrink the cache";
    return std::nullopt;
  };
  // Both run in both modes: no host sync, every step one kernel with its shape known in advance.
  e.variant("concat",
            "cache = cat(cache, new) every step: the whole cache and the token copied into a fresh buffer (ping-pong)")
      .host(host)
      .unsupported(unsupported);
  e.variant("preallocated", "cache allocated at n1 once; each step writes the new token's slot")
      .host(host)
      .unsupported(unsupported);
}

}  // namespace labrun::kv_cache
