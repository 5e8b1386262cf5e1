// The rank experiment on the SDK (LABRUN_EXPERIMENT(rank)): axes, arrays, the mask generator, the exact chunked
// check, the cost model and the host variants. Formulas: docs/experiments/rank.md.
#include "rank.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>

namespace labrun::rank {

namespace {

constexpr VariantTable<Variant, 3> kVariants{{{
    {Variant::indexed_assign, "indexed_assign",
     "out.fill_(-1); out[mask] = arange(count): the count is read by the host (host sync; not capturable)"},
    {Variant::scan_select, "scan_select",
     "s = inclusive_scan(mask) (int64), out = where(mask, s - 1, -1): no host sync, static shapes, capturable"},
    {Variant::fused, "fused", "one single-pass exclusive scan writing out directly (speed of light: 9n bytes)"},
}}};

/// Elements per block of the generator's parallel split (2^16).
constexpr std::int64_t kBlock = std::int64_t{1} << 16;

std::int64_t ones(const std::uint8_t* mask, std::int64_t begin, std::int64_t end) {
  std::int64_t c = 0;
  for (std::int64_t i = begin; i < end; ++i) c += mask[i];
  return c;
}

constexpr const char* kHypotheses = R"(
- {faster: scan_select, than: indexed_assign, when: {n: [1e5, 1e7]}, by_at_least: 1.2}
- {faster: fused, than: scan_select, when: {n: [1e7, 1e9]}, by_at_least: 1.5}
)";

}  // namespace

const char* to_string(Variant v) { return kVariants.name(v); }

Variant parse_variant(const std::string& name) { return kVariants.of(name); }

std::int64_t generate(std::uint8_t* mask, std::int64_t n, double density, std::uint64_t seed) {
  if (n < 0) throw std::invalid_argument("rank: n must be >= 0");
  const std::int64_t blocks = (n + kBlock - 1) / kBlock;
  std::vector<std::int64_t> counts(static_cast<std::size_t>(blocks), 0);
  parallel_chunks(blocks, [&](int, std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t end = std::min(n, (b + 1) * kBlock);
      std::int64_t count = 0;
      for (std::int64_t i = b * kBlock; i < end; ++i) {
        const std::uint64_t h = counter_bits(seed, i);
        const std::uint8_t on = unit_interval(h) < density ? 1 : 0;
        mask[i] = on;
        count += on;
      }
      counts[static_cast<std::size_t>(b)] = count;
    }
  });
  return std::accumulate(counts.begin(), counts.end(), std::int64_t{0});
}

std::string seed_text(std::int64_t n, double density) {
  char d[40];
  std::snprintf(d, sizeof d, "%.17g", density);
  return "rank/" + std::to_string(n) + "/" + d;
}

std::vector<std::int64_t> reference(const std::uint8_t* mask, std::int64_t n) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(n));
  std::int64_t rank = 0;
  for (std::int64_t i = 0; i < n; ++i) out[static_cast<std::size_t>(i)] = mask[i] ? rank++ : kMaskedOut;
  return out;
}

std::int64_t reference_slice(const std::uint8_t* mask, std::int64_t begin, std::int64_t count, std::int64_t before,
                             std::int64_t* out) {
  // Two parallel passes with the same split: the ones of each part, then each part's ranks from their prefix.
  std::vector<std::int64_t> part(kDefaultChunks + 1, 0);
  parallel_chunks(count, [&](int k, std::int64_t b, std::int64_t e) {
    part[static_cast<std::size_t>(k) + 1] = ones(mask + begin, b, e);
  });
  std::partial_sum(part.begin(), part.end(), part.begin());
  parallel_chunks(count, [&](int k, std::int64_t b, std::int64_t e) {
    std::int64_t rank = before + part[static_cast<std::size_t>(k)];
    for (std::int64_t i = b; i < e; ++i) out[i] = mask[begin + i] ? rank++ : kMaskedOut;
  });
  return part.back();
}

std::int64_t expected_selected(std::int64_t n, double density) {
  return static_cast<std::int64_t>(density * static_cast<double>(n));
}

Cost cost(Variant v, std::int64_t n_elements, std::int64_t selected) {
  const double n = static_cast<double>(n_elements);
  const double c = static_cast<double>(selected);
  Cost k;
  switch (v) {
    case Variant::indexed_assign:
      // fill (w 8n), count (r n), arange (w 8c), select indices (r n, w 8c), scatter (r 16c, w 8c).
      // Launches: fill 1 + DeviceReduce 2 + arange 1 + DeviceSelect 2 + scatter 1; the count's copy to the host
      // is the host sync.
      k = Cost::of(
          {.read = n + n + 16 * c, .written = 8 * n + 24 * c, .compulsory = 9 * n, .launches = 7, .host_syncs = 1});
      k.peak_work_bytes = 8 * n + 16 * c;  // out, arange and indices
      break;
    case Variant::scan_select:
      // DeviceScan (r n, w 8n; 2 launches), select (r n + 8n, w 8n; 1 launch).
      k = Cost::of({.read = n + n + 8 * n, .written = 8 * n + 8 * n, .compulsory = 9 * n, .launches = 3});
      k.peak_work_bytes = 16 * n;  // out and the scan
      break;
    case Variant::fused:
      // One DeviceScan writing out through its output iterator (r n, w 8n; 2 launches).
      k = Cost::of({.read = n, .written = 8 * n, .compulsory = 9 * n, .launches = 2});
      k.peak_work_bytes = 8 * n;  // out
      break;
  }
  return k;
}

void host_run(Variant variant, const std::uint8_t* m, std::int64_t n, std::int64_t* out, std::int64_t* s,
              HostScratch& scratch) {
  switch (variant) {
    case Variant::indexed_assign: {
      std::fill(out, out + n, kMaskedOut);  // out.fill_(-1)
      std::int64_t count = 0;               // mask.sum() as int64
      for (std::int64_t i = 0; i < n; ++i) count += m[i];
      scratch.a.resize(static_cast<std::size_t>(count));  // arange(count)
      std::iota(scratch.a.begin(), scratch.a.end(), std::int64_t{0});
      scratch.b.resize(static_cast<std::size_t>(count));  // indices of the ones
      std::int64_t k = 0;
      for (std::int64_t i = 0; i < n; ++i)
        if (m[i]) scratch.b[static_cast<std::size_t>(k++)] = i;
      for (std::int64_t j = 0; j < count; ++j)  // out[idx] = arange
        out[scratch.b[static_cast<std::size_t>(j)]] = scratch.a[static_cast<std::size_t>(j)];
      break;
    }
    case Variant::scan_select: {
      std::int64_t acc = 0;  // s = inclusive_scan(mask)
      for (std::int64_t i = 0; i < n; ++i) s[i] = acc += m[i];
      for (std::int64_t i = 0; i < n; ++i) out[i] = m[i] ? s[i] - 1 : kMaskedOut;  // where(mask, s - 1, -1)
      break;
    }
    case Variant::fused: {
      std::int64_t acc = 0;  // exclusive scan, written directly
      for (std::int64_t i = 0; i < n; ++i) out[i] = m[i] ? acc++ : kMaskedOut;
      break;
    }
  }
}

LABRUN_EXPERIMENT(rank) {
  e.describe("ranks of masked-in positions: out[mask] = arange(count) (host sync) vs cumsum-and-select vs fused scan")
      .docs("docs/experiments/rank.md")
      .int_axis("n", "elements of the mask and of the int64 output", 0, 4e9, 1000000)
      .real_axis("density", "fraction of mask bytes that are 1 (0: all false, 1: all true)", 0, 1, 0.5)
      .plot({"n", "variant", {"density"}, "time vs n"})
      .plot({"density", "variant", {"n"}, "time vs density"})
      .hypotheses(kHypotheses);
  // The mask; the output (poisoned with 0x5a bytes, not the default 0xff, which is -1: right at every masked-out
  // position; read back in chunks, so a check at n = 1e9 holds 64 MB of it on the host, not 8 GB); scan_select's
  // scan; indexed_assign's arange and index buffers, which it takes per iteration from the stream-ordered pool once
  // the host knows the count, as an eager framework does: transient, sized here by the count the estimate expects.
  e.arrays([](const Args& a, Layout& l) {
    const std::int64_t n = a.i64("n");
    if (n < 0) throw std::invalid_argument("rank: n must be >= 0");
    const Variant v = parse_variant(a.variant());
    l.add("mask", Role::input, Elem::raw<std::uint8_t>(), n);
    l.add("out", Role::output, Elem::raw<std::int64_t>(), n).poison("out", kPoisonByte).chunked("out");
    if (v == Variant::scan_select) l.add("s", Role::scratch, Elem::raw<std::int64_t>(), n);
    if (v == Variant::indexed_assign) {
      const std::int64_t c = expected_selected(n, a.real("density"));
      l.add("arange", Role::transient, Elem::raw<std::int64_t>(), c)
          .add("indices", Role::transient, Elem::raw<std::int64_t>(), c);
    }
  });
  e.inputs_depend_on({"n", "density"});
  e.seed_text([](const Args& a) { return seed_text(a.i64("n"), a.real("density")); });  // the pre-SDK masks
  e.generate([](const Args& a, std::uint64_t seed, Arrays& in) {
    generate(in["mask"].as<std::uint8_t>(), a.i64("n"), a.real("density"), seed);
  });
  // The reference is the selected count (what the cost model needs); the check computes the ranks chunk by chunk.
  e.reference([](const Args& a, const Arrays& in, Reference& r) {
    const std::int64_t n = a.i64("n");
    const auto* m = in["mask"].as<const std::uint8_t>();
    std::vector<std::int64_t> part(kDefaultChunks, 0);
    parallel_chunks(n, kDefaultChunks,
                    [&](int k, std::int64_t b, std::int64_t e) { part[static_cast<std::size_t>(k)] = ones(m, b, e); });
    r.set("selected", static_cast<double>(std::accumulate(part.begin(), part.end(), std::int64_t{0})));
  });
  // Exact: int64 equality of every element (ranks are integers, every variant computes them with integer adds).
  e.check([](Compare& c) {
    const auto* m = c.inputs()["mask"].as<const std::uint8_t>();
    std::int64_t before = 0;  // ones before the chunk: the chunks come in order
    c.exact_chunks("out", [&](std::int64_t begin, std::int64_t count, void* expected) {
      before += reference_slice(m, begin, count, before, static_cast<std::int64_t*>(expected));
    });
    c.note("selected", c.reference().value("selected"));
    c.note("n", static_cast<double>(c.args().i64("n")));
  });
  e.cost([](const Args& a, const Reference& ref) {
    const std::int64_t n = a.i64("n");
    const auto c = static_cast<std::int64_t>(
        ref.value_or("selected", static_cast<double>(expected_selected(n, a.real("density")))));
    return cost(parse_variant(a.variant()), n, c);
  });
  auto host = [](Launch& setup) -> Step {
    const Variant v = parse_variant(setup.args().variant());
    const auto* mask = setup.in("mask").as<const std::uint8_t>();
    auto* out = setup.out("out").as<std::int64_t>();
    std::int64_t* s = v == Variant::scan_select ? setup.scratch("s").as<std::int64_t>() : nullptr;
    const std::int64_t n = setup.args().i64("n");
    auto scratch = std::make_shared<HostScratch>();
    return [=](Launch&) { host_run(v, mask, n, out, s, *scratch); };
  };
  for (const auto& row : kVariants) e.variant(row.name, row.description).host(host);
}

}  // namespace labrun::rank
