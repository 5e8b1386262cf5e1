#include "rank.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>
#include <labrun/point.hpp>
#include "registry.hpp"
#include <labrun/status.hpp>

namespace labrun::rank {

namespace {

// The one table of rank's variants: name, one-line description, whether it has a host implementation, modes.
struct VariantRow {
  Variant variant;
  const char* name;
  const char* description;
};
constexpr VariantRow kVariants[] = {
    {Variant::indexed_assign, "indexed_assign",
     "out.fill_(-1); out[mask] = arange(count): the count is read by the host (host sync; not capturable)"},
    {Variant::scan_select, "scan_select",
     "s = inclusive_scan(mask) (int64), out = where(mask, s - 1, -1): no host sync, static shapes, capturable"},
    {Variant::fused, "fused", "one single-pass exclusive scan writing out directly (speed of light: 9n bytes)"},
};

constexpr int kChunks = 64;

std::int64_t blocks_of(std::int64_t n) { return (n + kPrefixBlock - 1) / kPrefixBlock; }

// block_prefix from per-block counts (counts[b] = ones in block b), and `selected`.
void finish_prefix(Inputs& in, const std::vector<std::int64_t>& counts) {
  in.block_prefix.assign(counts.size() + 1, 0);
  for (std::size_t b = 0; b < counts.size(); ++b) in.block_prefix[b + 1] = in.block_prefix[b] + counts[b];
  in.selected = in.block_prefix.back();
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
  throw std::invalid_argument("unknown rank variant '" + name + "'");
}

Params params_of(const Point& point) {
  Params p;
  p.variant = parse_variant(point.variant);
  p.n = point.integer("n");
  p.density = point.real("density");
  p.mode = point.word("mode");
  if (p.n < 0) throw std::invalid_argument("rank: n must be >= 0");
  return p;
}

Inputs generate(std::int64_t n, double density, std::uint64_t seed) {
  if (n < 0) throw std::invalid_argument("rank: n must be >= 0");
  Inputs in;
  in.n = n;
  in.mask.assign(static_cast<std::size_t>(n), 0);
  const std::int64_t blocks = blocks_of(n);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(blocks), 0);
  // Parallel over whole prefix blocks, so each block's count is computed by one thread.
  parallel_chunks(blocks, kChunks, [&](int, std::int64_t b0, std::int64_t b1) {
    for (std::int64_t b = b0; b < b1; ++b) {
      const std::int64_t end = std::min(n, (b + 1) * kPrefixBlock);
      std::int64_t count = 0;
      for (std::int64_t i = b * kPrefixBlock; i < end; ++i) {
        const std::uint64_t h = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)));
        const std::uint8_t on = unit_interval(h) < density ? 1 : 0;
        in.mask[static_cast<std::size_t>(i)] = on;
        count += on;
      }
      counts[static_cast<std::size_t>(b)] = count;
    }
  });
  finish_prefix(in, counts);
  return in;
}

Inputs from_mask(std::vector<std::uint8_t> mask) {
  Inputs in;
  in.n = static_cast<std::int64_t>(mask.size());
  in.mask = std::move(mask);
  std::vector<std::int64_t> counts(static_cast<std::size_t>(blocks_of(in.n)), 0);
  for (std::int64_t i = 0; i < in.n; ++i) {
    const std::uint8_t m = in.mask[static_cast<std::size_t>(i)];
    if (m > 1) throw std::invalid_argument("rank: mask bytes must be 0 or 1");
    counts[static_cast<std::size_t>(i / kPrefixBlock)] += m;
  }
  finish_prefix(in, counts);
  return in;
}

std::vector<std::int64_t> reference(const Inputs& in) {
  std::vector<std::int64_t> out(static_cast<std::size_t>(in.n));
  std::int64_t rank = 0;
  for (std::int64_t i = 0; i < in.n; ++i) out[static_cast<std::size_t>(i)] = in.mask[static_cast<std::size_t>(i)] ? rank++ : kMaskedOut;
  return out;
}

void Mismatches::merge(const Mismatches& o) {
  if (o.count == 0) return;
  if (count == 0 || o.first < first) {
    first = o.first;
    expected = o.expected;
    got = o.got;
  }
  count += o.count;
}

Mismatches compare_slice(const Inputs& in, const std::int64_t* out, std::int64_t begin, std::int64_t count) {
  if (begin < 0 || count < 0 || begin + count > in.n)
    throw std::invalid_argument("rank: compare_slice out of range");
  if (begin % kPrefixBlock != 0) throw std::invalid_argument("rank: compare_slice begin is not block-aligned");
  const std::int64_t end = begin + count;
  const std::int64_t b_begin = begin / kPrefixBlock, b_end = blocks_of(end);
  std::vector<Mismatches> parts(kChunks);
  parallel_chunks(b_end - b_begin, kChunks, [&](int chunk, std::int64_t c0, std::int64_t c1) {
    Mismatches m;
    for (std::int64_t b = b_begin + c0; b < b_begin + c1; ++b) {
      std::int64_t rank = in.block_prefix[static_cast<std::size_t>(b)];
      const std::int64_t stop = std::min(end, (b + 1) * kPrefixBlock);
      for (std::int64_t i = b * kPrefixBlock; i < stop; ++i) {
        const std::int64_t expected = in.mask[static_cast<std::size_t>(i)] ? rank++ : kMaskedOut;
        const std::int64_t got = out[i - begin];
        if (got != expected) {
          if (m.count == 0) {
            m.first = i;
            m.expected = expected;
            m.got = got;
          }
          ++m.count;
        }
      }
    }
    parts[static_cast<std::size_t>(chunk)] = m;
  });
  Mismatches total;
  for (const auto& m : parts) total.merge(m);
  return total;
}

Check check_of(const Inputs& in, const Mismatches& m) {
  Check c;
  c.value = static_cast<double>(m.count);
  c.reference = 0;
  c.abs_error = c.value;
  c.tolerance = 0;
  c.passed = m.count == 0;
  c.detail["n"] = in.n;
  c.detail["selected"] = in.selected;
  c.detail["mismatches"] = m.count;
  c.detail["comparison"] = "exact int64 equality of every element (tolerance 0)";
  if (m.count > 0) {
    c.detail["first_mismatch"] = m.first;
    c.detail["expected"] = m.expected;
    c.detail["got"] = m.got;
  }
  return c;
}

Check compare(const Inputs& in, const std::int64_t* out) { return check_of(in, compare_slice(in, out, 0, in.n)); }

Cost cost(const Params& p, std::int64_t selected) {
  const double n = static_cast<double>(p.n);
  const double c = static_cast<double>(selected);
  switch (p.variant) {
    case Variant::indexed_assign:
      // fill (w 8n), count (r n), arange (w 8c), select indices (r n, w 8c), scatter (r 16c, w 8c).
      // Launches: fill 1 + DeviceReduce 2 + arange 1 + DeviceSelect 2 + scatter 1; the count's copy to the host
      // is the host sync.
      return Cost::of(n + n + 16 * c, 8 * n + 24 * c, 9 * n, 0, 7, 1);
    case Variant::scan_select:
      // DeviceScan (r n, w 8n; 2 launches), select (r n + 8n, w 8n; 1 launch).
      return Cost::of(n + n + 8 * n, 8 * n + 8 * n, 9 * n, 0, 3, 0);
    case Variant::fused:
      // One DeviceScan writing out through its output iterator (r n, w 8n; 2 launches).
      return Cost::of(n, 8 * n, 9 * n, 0, 2, 0);
  }
  return Cost{};
}

double working_set_bytes(const Params& p, std::int64_t selected) {
  const double n = static_cast<double>(p.n), c = static_cast<double>(selected);
  const double base = n + 8 * n;  // mask and out
  switch (p.variant) {
    case Variant::indexed_assign: return base + 16 * c;  // arange and indices
    case Variant::scan_select: return base + 8 * n;      // the scan
    case Variant::fused: return base;
  }
  return base;
}

void host_run(Variant variant, const Inputs& in, std::int64_t* out, HostScratch& scratch) {
  const std::int64_t n = in.n;
  const std::uint8_t* m = in.mask.data();
  switch (variant) {
    case Variant::indexed_assign: {
      std::fill(out, out + n, kMaskedOut);                                  // out.fill_(-1)
      std::int64_t count = 0;                                               // mask.sum() as int64
      for (std::int64_t i = 0; i < n; ++i) count += m[i];
      scratch.a.resize(static_cast<std::size_t>(count));                    // arange(count)
      std::iota(scratch.a.begin(), scratch.a.end(), std::int64_t{0});
      scratch.b.resize(static_cast<std::size_t>(count));                    // indices of the ones
      std::int64_t k = 0;
      for (std::int64_t i = 0; i < n; ++i)
        if (m[i]) scratch.b[static_cast<std::size_t>(k++)] = i;
      for (std::int64_t j = 0; j < count; ++j)                              // out[idx] = arange
        out[scratch.b[static_cast<std::size_t>(j)]] = scratch.a[static_cast<std::size_t>(j)];
      break;
    }
    case Variant::scan_select: {
      scratch.a.resize(static_cast<std::size_t>(n));                        // s = inclusive_scan(mask)
      std::int64_t acc = 0;
      for (std::int64_t i = 0; i < n; ++i) scratch.a[static_cast<std::size_t>(i)] = acc += m[i];
      for (std::int64_t i = 0; i < n; ++i)                                  // where(mask, s - 1, -1)
        out[i] = m[i] ? scratch.a[static_cast<std::size_t>(i)] - 1 : kMaskedOut;
      break;
    }
    case Variant::fused: {
      std::int64_t acc = 0;                                                 // exclusive scan, written directly
      for (std::int64_t i = 0; i < n; ++i) out[i] = m[i] ? acc++ : kMaskedOut;
      break;
    }
  }
}

namespace {

// The axes that define a point's inputs, as text: what the seed hashes and the cache compares.
std::string input_key(const Params& p) {
  char density[40];
  std::snprintf(density, sizeof density, "%.17g", p.density);
  return std::to_string(p.n) + "/" + density;
}

}  // namespace

std::uint64_t input_seed(const Params& p, std::uint64_t lab_seed) {
  return splitmix64(lab_seed ^ fnv1a64("rank/" + input_key(p)));
}

std::shared_ptr<const Inputs> InputCache::inputs(const Params& p, std::uint64_t lab_seed) {
  const std::uint64_t s = input_seed(p, lab_seed);
  const std::string key = input_key(p) + "/" + std::to_string(s);
  if (key != key_ || !inputs_) {
    inputs_.reset();  // release the old mask first: at n = 1e9 it is 1 GB
    inputs_ = std::make_shared<const Inputs>(generate(p.n, p.density, s));
    key_ = key;
  }
  return inputs_;
}

namespace {

class HostWorkload : public Workload {
 public:
  HostWorkload(Params p, std::shared_ptr<const Inputs> in)
      : p_(p), in_(std::move(in)), out_(static_cast<std::size_t>(p.n), 0) {}
  void run() override { host_run(p_.variant, *in_, out_.data(), scratch_); }
  Check check(const std::function<void()>& iterate) override {
    std::fill(out_.begin(), out_.end(), kPoison);
    iterate();
    Check c = compare(*in_, out_.data());
    c.detail["poisoned"] = true;
    return c;
  }
  Cost cost() const override { return rank::cost(p_, in_->selected); }

 private:
  Params p_;
  std::shared_ptr<const Inputs> in_;
  std::vector<std::int64_t> out_;
  HostScratch scratch_;
};

constexpr const char* kHypotheses = R"(
- {faster: scan_select, than: indexed_assign, when: {n: [1e5, 1e7]}, by_at_least: 1.2}
- {faster: fused, than: scan_select, when: {n: [1e7, 1e9]}, by_at_least: 1.5}
)";

}  // namespace

void register_experiment(Registry& registry) {
  Experiment e;
  e.name = "rank";
  e.description = "ranks of masked-in positions: out[mask] = arange(count) (host sync) vs cumsum-and-select vs fused scan";
  e.axes = {
      {"n", AxisKind::Integer, "elements of the mask and of the int64 output", 0.0, 4e9, {}, std::int64_t{1000000}},
      {"density", AxisKind::Real, "fraction of mask bytes that are 1 (0: all false, 1: all true)", 0.0, 1.0, {}, 0.5},
  };
  auto cache = std::make_shared<InputCache>();
  auto host = [cache](const Point& point, Backend&, const LabSettings& lab) -> std::unique_ptr<Workload> {
    const Params p = params_of(point);
    return std::make_unique<HostWorkload>(p, cache->inputs(p, lab.seed));
  };
  for (const auto& row : kVariants) {
    VariantDecl decl{row.name, row.description, {}, {}};
    decl.implementations[BackendKind::host] = host;
    e.variants.push_back(std::move(decl));
  }
  e.size_axis = "n";
  e.estimate = [](const Point& point) {
    const Params p = params_of(point);
    const auto c = static_cast<std::int64_t>(p.density * static_cast<double>(p.n));
    const Cost k = cost(p, c);
    return PointEstimate{working_set_bytes(p, c), k.bytes, 0.0};
  };
  e.plots = {PlotSpec{"n", "variant", {"density"}, "time vs n"},
             PlotSpec{"density", "variant", {"n"}, "time vs density"}};
  e.hypotheses = kHypotheses;
  e.docs = "docs/experiments/rank.md";
  registry.add(std::move(e));
}

}  // namespace labrun::rank
