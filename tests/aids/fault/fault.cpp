#include "fault/fault.hpp"

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <thread>

namespace labrun::fault {

std::vector<float> inputs(std::int64_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed ^ static_cast<std::uint64_t>(n));
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> x(static_cast<std::size_t>(n));
  for (auto& v : x) v = u(rng);
  return x;
}

std::pair<double, double> reference_sum(const std::vector<float>& x) {
  double sum = 0, magnitude = 0;
  for (float v : x) {
    sum += v;
    magnitude += std::fabs(v);
  }
  const double tolerance = std::max(1e-6, static_cast<double>(x.size()) * std::ldexp(1.0, -23) * magnitude);
  return {sum, tolerance};
}

CheckOutcome check_sum(double value, const std::vector<float>& x) {
  const auto [reference, tolerance] = reference_sum(x);
  const Point point{"fault", "sum", {}};
  const Args args(point);
  const Arrays none;
  const Reference no_reference;
  Compare compare(
      args, [&]() -> const Arrays& { return none; }, none, no_reference, 1.0);
  compare.scalar("sum", value, reference, tolerance);
  CheckOutcome c;
  c.comparisons = compare.results();
  return c;
}

namespace {

class HostWorkload : public Workload {
 public:
  HostWorkload(std::string variant, std::int64_t n, std::uint64_t seed)
      : variant_(std::move(variant)), x_(inputs(n, seed)) {}

  void run() override {
    if (variant_ == "abort") std::abort();
    if (variant_ == "hang")
      while (true) std::this_thread::sleep_for(std::chrono::seconds(1));
    float s = 0;
    for (float v : x_) s += v;
    out_ = s;
  }

  CheckOutcome check(const std::function<void()>& iterate) override {
    out_ = std::numeric_limits<float>::quiet_NaN();
    iterate();
    return check_sum(out_, x_);
  }

  Cost cost() const override {
    const double n = static_cast<double>(x_.size());
    return Cost::of(4 * n, 0, 4 * n, n, 0, 0);
  }

 private:
  std::string variant_;
  std::vector<float> x_;
  float out_ = 0;
};

}  // namespace

void register_experiment(Registry& registry) {
  auto def = std::make_shared<ExperimentDef>("fault");
  def->describe("test aid: variants that crash, hang or break the device on purpose (fault isolation)")
      .docs("tests/aids/fault/fault.hpp")
      .int_axis("n", "elements of the summed f32 array", 1.0, 1e8, 1000)
      .size_axis("n");
  const std::pair<const char*, const char*> variants[] = {
      {"sum", "correct sum of n floats (the ordinary points)"},
      {"abort", "std::abort() in the first iteration: the worker dies of SIGABRT"},
      {"hang", "never returns: past lab.point_timeout_s the point is timeout"},
      {"illegal_address", "CUDA: a store to address 16 (cudaErrorIllegalAddress, sticky)"},
      {"trap", "CUDA: __trap() (cudaErrorLaunchFailure, sticky)"},
  };
  for (const auto& [name, description] : variants) def->variant(name, description).modes({"eager"});
  RegisteredExperiment& e = registry.add(def);
  auto host = [](const Point& point, Backend&, const LabSettings& lab) -> std::unique_ptr<Workload> {
    return std::make_unique<HostWorkload>(point.variant, point.integer("n"), lab.seed);
  };
  for (const char* name : {"sum", "abort", "hang"}) e.implementations[name][BackendKind::host] = host;
  e.estimate = [](const Point& point) {
    const double n = static_cast<double>(point.integer("n"));
    return PointEstimate{4 * n + 16, 4 * n, n};
  };
}

}  // namespace labrun::fault
