#include "shard.hpp"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <stdexcept>

#include "lab.hpp"
#include "lab_axes.hpp"

namespace labrun {

ShardSpec parse_shard(const std::string& text, const std::string& option) {
  int i = 0, n = 0;
  char slash = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &i, &slash, &n, &extra) != 3 || slash != '/' || i < 1 || n < 1 || i > n ||
      n > kMaxShards)
    throw std::invalid_argument(option + ": expected I/N with 1 <= I <= N <= " + std::to_string(kMaxShards) +
                                ", got '" + text + "'");
  return {i, n};
}

namespace {

std::string word_axis(const Point& p, const char* axis, const std::string& fallback) {
  for (const auto& [name, value] : p.axes)
    if (name == axis)
      if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return fallback;
}

// The point's identity without its variant: points that share it share inputs.
std::string inputs_key(const Point& p) {
  std::string k;
  for (const auto& [name, value] : p.axes) k += name + "=" + to_string(value) + ",";
  return k;
}

}  // namespace

double estimated_point_time_s(const Point& point, const RegisteredExperiment& experiment, const LabSettings& lab,
                              BackendKind kind) {
  constexpr double kFixed_s = 5e-3, kNotRun_s = 1e-3, kSetupRate_Bps = 1e10;
  const VariantDef* v = experiment.find_variant(point.variant);
  if (!v || !experiment.implementation(point.variant, kind)) return kNotRun_s;
  if (v->unsupported_fn() && v->unsupported_fn()(Args(point))) return kNotRun_s;
  const std::string mode = word_axis(point, kModeAxis, "eager");
  if (std::find(v->modes().begin(), v->modes().end(), mode) == v->modes().end()) return kNotRun_s;
  if (kind == BackendKind::host && mode != "eager") return kNotRun_s;
  const bool cold = word_axis(point, kL2Axis, lab.l2) == "cold";
  if (kind == BackendKind::host && cold) return kNotRun_s;
  PointEstimate e;
  if (experiment.estimate) e = experiment.estimate(point);
  const bool host = kind == BackendKind::host;
  const double rate_Bps = host ? kHostEstimateBandwidth_Bps : 3e12, rate_flops = host ? kHostEstimateFlopPerS : 5e13;
  const double t_iter = e.bytes / rate_Bps + e.flop / rate_flops;
  if (host && (e.working_set_bytes > lab.host_max_bytes || t_iter > lab.host_max_time_s)) return kNotRun_s;
  const double setup = e.working_set_bytes / kSetupRate_Bps;
  const double warmup = std::max(lab.warmup_time_s, static_cast<double>(lab.warmup_iterations) * t_iter);
  const double sample = std::max(lab.min_sample_time_s, t_iter) + (cold ? t_iter : 0.0);
  const double timing = std::min(lab.max_time_s, static_cast<double>(lab.min_samples) * sample);
  return kFixed_s + setup + warmup + timing;
}

std::vector<std::pair<std::size_t, std::size_t>> indivisible_groups(const std::vector<Point>& points,
                                                                    const LabSettings& lab) {
  std::vector<std::pair<std::size_t, std::size_t>> groups;
  const auto window = static_cast<std::size_t>(std::max<std::int64_t>(1, lab.interleave));
  std::string previous;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const std::string key = inputs_key(points[i]);
    // A new group where the inputs change, unless this point is inside an interleave window already begun.
    const bool starts = groups.empty() || (key != previous && i % window == 0);
    if (starts) groups.push_back({i, i + 1});
    else groups.back().second = i + 1;
    previous = key;
  }
  return groups;
}

std::vector<int> assign_shards(const std::vector<Point>& points, const RegisteredExperiment& experiment,
                               const LabSettings& lab, int count, BackendKind kind) {
  if (count < 1) throw std::invalid_argument("assign_shards: count < 1");
  const auto groups = indivisible_groups(points, lab);
  std::vector<double> cost(groups.size(), 0);
  for (std::size_t g = 0; g < groups.size(); ++g)
    for (std::size_t i = groups[g].first; i < groups[g].second; ++i)
      cost[g] += estimated_point_time_s(points[i], experiment, lab, kind);
  std::vector<std::size_t> order(groups.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return cost[a] > cost[b]; });
  std::vector<double> load(static_cast<std::size_t>(count), 0);
  std::vector<int> shard(points.size(), 0);
  for (const std::size_t g : order) {
    const auto least = static_cast<int>(std::min_element(load.begin(), load.end()) - load.begin());
    load[static_cast<std::size_t>(least)] += cost[g];
    for (std::size_t i = groups[g].first; i < groups[g].second; ++i) shard[i] = least;
  }
  return shard;
}

std::vector<Point> shard_points(const std::vector<Point>& points, const RegisteredExperiment& experiment,
                                const LabSettings& lab, const ShardSpec& spec, BackendKind kind) {
  const std::vector<int> shard = assign_shards(points, experiment, lab, spec.count, kind);
  std::vector<Point> out;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (shard[i] == spec.index - 1) out.push_back(points[i]);
  return out;
}

}  // namespace labrun
