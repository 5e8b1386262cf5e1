// The host_read experiment on the SDK (LABRUN_EXPERIMENT(host_read)): axes, arrays, the input generator, the
// closed-form float64 reference, the per-step check, the cost model and the host variants.
// Formulas: docs/experiments/host_read.md.
#include "host_read.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include <labrun/counter_rng.hpp>
#include <labrun/parallel.hpp>

namespace labrun::host_read {

namespace {

constexpr double kU = 0x1.0p-24;  // f32 unit roundoff

}  // namespace

const char* to_string(Variant v) { return v == Variant::item_per_step ? "item_per_step" : "accumulate_on_device"; }

Params params_of(const Args& a) {
  const std::string& v = a.variant();
  if (v != "item_per_step" && v != "accumulate_on_device")
    throw std::invalid_argument("unknown host_read variant '" + v + "'");
  const Params p{.variant = v == "item_per_step" ? Variant::item_per_step : Variant::accumulate_on_device,
                 .steps = a.i64("steps"),
                 .n = a.i64("n"),
                 .mode = a.mode()};
  if (p.steps < 0 || p.n < 0) throw std::invalid_argument("host_read: steps and n must be >= 0");
  return p;
}

void generate(const View& x0, std::uint64_t seed) {
  if (x0.count < 0) throw std::invalid_argument("host_read: n must be >= 0");
  fill_uniform(x0.as<float>(), x0.count, seed, 0.25, 2.0);  // [0.25, 2]: rounding cannot reach 0
}

Losses reference(const View& x0v, std::int64_t k) {
  if (k < 0) throw std::invalid_argument("host_read: steps must be >= 0");
  const std::int64_t n = x0v.count;
  const float* x0 = x0v.as<const float>();
  std::vector<double> parts(kDefaultChunks, 0.0);
  parallel_chunks(n, [&](int chunk, std::int64_t begin, std::int64_t end) {
    double s = 0;
    for (std::int64_t i = begin; i < end; ++i) s += x0[i];
    parts[chunk] = s;
  });
  double sum0 = 0;
  for (double s : parts) sum0 += s;  // chunk order: deterministic
  Losses ref;
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

double bound(double elementwise_error, double loss, std::int64_t count) {
  const double n = static_cast<double>(count);
  const double terms = std::ceil(std::log2(std::max(n, 2.0))) + std::ceil(std::sqrt(n)) + 1;
  return 2 * elementwise_error + terms * kU * std::fabs(loss) + 1e-300;
}

void check(Compare& c) {
  const std::int64_t n = c.args().i64("n");
  const std::vector<double>& err = c.reference().array("elementwise_error");
  const CheckResult& r = c.elementwise("loss", [&](std::int64_t j, double ref) { return bound(err[j], ref, n); });
  const std::int64_t k = r.compared;
  c.note("steps", static_cast<double>(k));
  c.note("n", static_cast<double>(n));
  if (k > 0) {
    c.note("final_loss", c.outputs()["loss"].value(k - 1));
    c.note("final_reference", c.reference().array("loss")[k - 1]);
  }
}

Cost cost(const Params& p) {
  const double n = static_cast<double>(p.n), k = static_cast<double>(p.steps);
  Cost c;
  if (p.steps == 0) {
    c = Cost::of({.read = 0, .written = 0, .compulsory = 0});
  } else {
    const double read = k * 4 * n + 4 * k;  // x per step, and the losses' copies to the host
    const double written = k * (4 * n + 4);
    const bool item = p.variant == Variant::item_per_step;
    const double launches = item ? 3 * k : 2 * k + 1;
    const double syncs = item ? k : (p.mode == "graph" ? 0 : 1);
    c = Cost::of({.read = read,
                  .written = written,
                  .compulsory = 8 * n + 4 * k,
                  .flop = 3 * n * k,
                  .launches = launches,
                  .host_syncs = syncs});
  }
  c.peak_work_bytes = std::max(4 * n, 16.0) + std::max(4 * k, 16.0) + 4.0 * kMaxBlocks;
  return c;
}

void host_run(const float* x0, std::int64_t n, std::int64_t k, float* x, float* losses) {
  for (std::int64_t j = 0; j < k; ++j) {
    const float* src = j == 0 ? x0 : x;
    const float c = offset(j);
    double sum = 0;
    for (std::int64_t i = 0; i < n; ++i) {
      const float v = std::fma(kDecay, src[i], c);  // the kernels' fmaf
      x[i] = v;
      sum += v;
    }
    losses[j] = static_cast<float>(sum);
  }
}

LABRUN_EXPERIMENT(host_read) {
  e.describe("a device loop with the loss read by the host every step (.item()) vs accumulated on the device")
      .docs("docs/experiments/host_read.md")
      .int_axis("steps", "k: steps per iteration (an update and a reduction each)", 0, 1e6, 100)
      .int_axis("n", "elements of the vector each step updates and reduces", 0, 2147483648.0, 1000000)
      .size_axis("n")
      .plot({"n", "variant", {"steps"}, "time per loop vs n"})
      .plot({"steps", "variant", {"n"}, "time per loop vs steps"});
  e.arrays([](const Args& a, Layout& l) {
    const std::int64_t n = a.i64("n"), k = a.i64("steps");
    l.input("x0", DType::f32, n).output("loss", DType::f32, k);
    l.scratch("x", DType::f32, n).scratch("partials", DType::f32, kMaxBlocks);
  });
  // x0 depends on n only: the four points of one (k, n) share it (the config interleaves them); k sets the reference.
  e.inputs_depend_on({"n"}).reference_depends_on({"steps"});
  e.seed_text([](const Args& a) {  // the seeds drawn before the SDK, so earlier results compare point for point
    return "host_read/" + std::to_string(a.i64("n"));
  });
  e.generate([](const Args&, std::uint64_t seed, Arrays& in) { generate(in["x0"], seed); });
  e.reference([](const Args& a, const Arrays& in, Reference& r) {
    const Losses ref = reference(in["x0"], a.i64("steps"));
    r.array("loss", static_cast<std::int64_t>(ref.loss.size())) = ref.loss;
    r.array("elementwise_error", static_cast<std::int64_t>(ref.elementwise_error.size())) = ref.elementwise_error;
  });
  e.check(check);
  e.cost([](const Args& a, const Reference&) { return cost(params_of(a)); });
  // On the host a host read is a plain load: both variants run the same loop into the output.
  auto host = [](Launch& setup) -> Step {
    const std::int64_t n = setup.args().i64("n"), k = setup.args().i64("steps");
    const float* x0 = setup.in("x0").as<const float>();
    float* x = setup.scratch("x").as<float>();
    float* losses = setup.out("loss").as<float>();
    return [=](Launch&) { host_run(x0, n, k, x, losses); };
  };
  // Both declare both modes: item_per_step's graph points end capture_unsupported at run time (a host read cannot
  // be captured), which is the finding.
  e.variant("item_per_step",
            "loss.item() after every step: the host reads each loss (a host sync per step; not capturable)")
      .host(host);
  e.variant("accumulate_on_device",
            "the losses stay in a device array, read once after the loop (one sync; in a graph, a copy node)")
      .host(host);
}

}  // namespace labrun::host_read
