#include "host_read.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>
#include <labrun/point.hpp>
#include "record.hpp"
#include "registry.hpp"

namespace labrun::host_read {

namespace {

// The one table of host_read's variants: name, one-line description. Both have a host implementation and
// declare both modes: item_per_step's graph points end capture_unsupported at run time (a host read cannot be
// captured), which is the finding.
struct VariantRow {
  Variant variant;
  const char* name;
  const char* description;
};
constexpr VariantRow kVariants[] = {
    {Variant::item_per_step, "item_per_step",
     "loss.item() after every step: the host reads each loss (a host sync per step; not capturable)"},
    {Variant::accumulate_on_device, "accumulate_on_device",
     "the losses stay in a device array, read once after the loop (one sync; in a graph, a copy node)"},
};

constexpr int kChunks = 64;
constexpr double kU = 0x1.0p-24;  // f32 unit roundoff

}  // namespace

const char* to_string(Variant v) {
  for (const auto& row : kVariants)
    if (row.variant == v) return row.name;
  return "?";
}

Variant parse_variant(const std::string& name) {
  for (const auto& row : kVariants)
    if (name == row.name) return row.variant;
  throw std::invalid_argument("unknown host_read variant '" + name + "'");
}

Params params_of(const Point& point) {
  Params p;
  p.variant = parse_variant(point.variant);
  p.steps = point.integer("steps");
  p.n = point.integer("n");
  p.mode = point.word("mode");
  if (p.steps < 0 || p.n < 0) throw std::invalid_argument("host_read: steps and n must be >= 0");
  return p;
}

std::vector<float> generate(std::int64_t n, std::uint64_t seed) {
  if (n < 0) throw std::invalid_argument("host_read: n must be >= 0");
  std::vector<float> x(static_cast<std::size_t>(n));
  parallel_chunks(n, kChunks, [&](int, std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      const std::uint64_t h = splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(i)));
      x[i] = static_cast<float>(0.25 + 1.75 * unit_interval(h));  // [0.25, 2): rounding cannot reach 0
    }
  });
  return x;
}

Reference reference(const std::vector<float>& x0, std::int64_t k) {
  if (k < 0) throw std::invalid_argument("host_read: steps must be >= 0");
  const std::int64_t n = static_cast<std::int64_t>(x0.size());
  std::vector<double> parts(kChunks, 0.0);
  parallel_chunks(n, kChunks, [&](int chunk, std::int64_t begin, std::int64_t end) {
    double s = 0;
    for (std::int64_t i = begin; i < end; ++i) s += x0[i];
    parts[chunk] = s;
  });
  double sum0 = 0;
  for (double s : parts) sum0 += s;  // chunk order: deterministic
  Reference ref;
  ref.n = n;
  ref.loss.resize(static_cast<std::size_t>(k));
  ref.elementwise_error.resize(static_cast<std::size_t>(k));
  double scale = 1, drift = 0, err = 0;  // a^{j+1}, d_{j+1}, E_j
  for (std::int64_t j = 0; j < k; ++j) {
    scale *= kDecay;
    drift = kDecay * drift + offset(j);
    const double loss = scale * sum0 + static_cast<double>(n) * drift;
    err = kDecay * err + kU * loss;
    ref.loss[j] = loss;
    ref.elementwise_error[j] = err;
  }
  return ref;
}

double tolerance(const Reference& ref, std::int64_t j, double scale) {
  const double n = static_cast<double>(ref.n);
  const double terms = std::ceil(std::log2(std::max(n, 2.0))) + std::ceil(std::sqrt(n)) + 1;
  return scale * (2 * ref.elementwise_error[j] + terms * kU * std::fabs(ref.loss[j])) + 1e-300;
}

Check compare(const Reference& ref, const float* losses, double scale) {
  const std::int64_t k = static_cast<std::int64_t>(ref.loss.size());
  const double inf = std::numeric_limits<double>::infinity();
  double worst = 0;
  std::int64_t worst_step = -1, mismatches = 0, nonfinite = 0;
  for (std::int64_t j = 0; j < k; ++j) {
    const double y = losses[j];
    double ratio;
    if (!std::isfinite(y)) {
      ++nonfinite;
      ratio = inf;  // case C07: NaN (the poison) and inf never pass
    } else {
      ratio = std::fabs(y - ref.loss[j]) / tolerance(ref, j, 1.0);
    }
    if (!(ratio <= scale)) ++mismatches;
    if (worst_step < 0 || ratio > worst) {
      worst = ratio;
      worst_step = j;
    }
  }
  Check c;
  c.value = worst;
  c.reference = 0;
  c.abs_error = worst;
  c.tolerance = scale;
  c.passed = nonfinite == 0 && worst <= scale;
  c.detail["metric"] = "max over steps of |loss - ref| / tolerance (docs/experiments/host_read.md)";
  c.detail["steps"] = k;
  c.detail["n"] = ref.n;
  c.detail["mismatches"] = mismatches;
  c.detail["nonfinite"] = nonfinite;
  if (worst_step >= 0) {
    c.detail["worst_step"] = worst_step;
    c.detail["worst_loss"] = json_real(losses[worst_step]);
    c.detail["worst_reference"] = json_real(ref.loss[worst_step]);
    c.detail["worst_tolerance"] = json_real(tolerance(ref, worst_step, scale));
    c.detail["final_loss"] = json_real(losses[k - 1]);
    c.detail["final_reference"] = json_real(ref.loss[k - 1]);
  }
  return c;
}

Cost cost(const Params& p) {
  const double n = static_cast<double>(p.n), k = static_cast<double>(p.steps);
  Cost c;
  if (p.steps == 0) {
    c = Cost::of(0, 0, 0, 0, 0, 0);
  } else {
    const double read = k * 4 * n + 4 * k;  // x per step, and the losses' copies to the host
    const double written = k * (4 * n + 4);
    const bool item = p.variant == Variant::item_per_step;
    const double launches = item ? 3 * k : 2 * k + 1;
    const double syncs = item ? k : (p.mode == "graph" ? 0 : 1);
    c = Cost::of(read, written, 8 * n + 4 * k, 3 * n * k, launches, syncs);
  }
  c.peak_work_bytes = std::max(4 * n, 16.0) + std::max(4 * k, 16.0) + 4.0 * kMaxBlocks;
  return c;
}

double working_set_bytes(const Params& p) { return 4.0 * static_cast<double>(p.n) + cost(p).peak_work_bytes; }

void host_run(const std::vector<float>& x0, std::int64_t k, std::vector<float>& x, float* losses) {
  const std::size_t n = x0.size();
  if (x.size() != n) x.resize(n);
  for (std::int64_t j = 0; j < k; ++j) {
    const std::vector<float>& src = j == 0 ? x0 : x;
    const float c = offset(j);
    double sum = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const float v = std::fma(kDecay, src[i], c);  // the kernels' fmaf
      x[i] = v;
      sum += v;
    }
    losses[j] = static_cast<float>(sum);
  }
}

std::uint64_t input_seed(const Params& p, std::uint64_t lab_seed) {
  return splitmix64(lab_seed ^ fnv1a64("host_read/" + std::to_string(p.n)));
}

std::shared_ptr<const std::vector<float>> InputCache::inputs(const Params& p, std::uint64_t seed) {
  const std::uint64_t s = input_seed(p, seed);
  const std::string key = std::to_string(p.n) + "/" + std::to_string(s);
  if (key != key_ || !x0_) {
    x0_.reset();
    ref_.reset();
    x0_ = std::make_shared<const std::vector<float>>(generate(p.n, s));
    key_ = key;
    ref_steps_ = -1;
  }
  return x0_;
}

std::shared_ptr<const Reference> InputCache::reference_for(const Params& p, std::uint64_t seed) {
  auto x0 = inputs(p, seed);
  if (!ref_ || ref_steps_ != p.steps) {
    ref_ = std::make_shared<const Reference>(reference(*x0, p.steps));
    ref_steps_ = p.steps;
  }
  return ref_;
}

namespace {

class HostWorkload : public Workload {
 public:
  HostWorkload(const Params& p, std::shared_ptr<const std::vector<float>> x0, std::shared_ptr<const Reference> ref,
               double scale)
      : p_(p), x0_(std::move(x0)), ref_(std::move(ref)), scale_(scale), x_(x0_->size()),
        losses_(static_cast<std::size_t>(p.steps) + 1) {}
  void run() override { host_run(*x0_, p_.steps, x_, losses_.data()); }
  Check check(const std::function<void()>& iterate) override {
    std::fill(losses_.begin(), losses_.end(), std::numeric_limits<float>::quiet_NaN());  // poison
    iterate();
    Check c = compare(*ref_, losses_.data(), scale_);
    c.detail["poisoned"] = true;
    return c;
  }
  Cost cost() const override { return host_read::cost(p_); }

 private:
  Params p_;
  std::shared_ptr<const std::vector<float>> x0_;
  std::shared_ptr<const Reference> ref_;
  double scale_;
  std::vector<float> x_, losses_;
};

}  // namespace

void register_experiment(Registry& registry) {
  Experiment e;
  e.name = "host_read";
  e.description = "a device loop with the loss read by the host every step (.item()) vs accumulated on the device";
  e.axes = {
      {"steps", AxisKind::Integer, "k: steps per iteration (an update and a reduction each)", 0.0, 1e6, {},
       std::int64_t{100}},
      {"n", AxisKind::Integer, "elements of the vector each step updates and reduces", 0.0, 2147483648.0, {},
       std::int64_t{1000000}},
  };
  auto cache = std::make_shared<InputCache>();
  auto host = [cache](const Point& point, Backend&, const LabSettings& lab) -> std::unique_ptr<Workload> {
    const Params p = params_of(point);
    auto x0 = cache->inputs(p, lab.seed);
    auto ref = cache->reference_for(p, lab.seed);
    return std::make_unique<HostWorkload>(p, x0, ref, lab.tolerance_scale.value_or(1.0));
  };
  for (const auto& row : kVariants) {
    VariantDecl decl{row.name, row.description, {}, {}};
    decl.implementations[BackendKind::host] = host;
    e.variants.push_back(std::move(decl));
  }
  e.size_axis = "n";
  e.estimate = [](const Point& point) {
    const Params p = params_of(point);
    const Cost c = cost(p);
    return PointEstimate{working_set_bytes(p), c.bytes, c.flop};
  };
  e.plots = {PlotSpec{"n", "variant", {"steps"}, "time per loop vs n"},
             PlotSpec{"steps", "variant", {"n"}, "time per loop vs steps"}};
  e.docs = "docs/experiments/host_read.md";
  registry.add(std::move(e));
}

}  // namespace labrun::host_read
