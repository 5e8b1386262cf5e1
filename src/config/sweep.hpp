// Sweep expansion: the Cartesian product of a config's axes, minus excluded combinations, in a fixed order.
#pragma once

#include <vector>

#include "config.hpp"
#include <labrun/point.hpp>
#include "registry.hpp"

namespace labrun {

/// Most points one sweep may expand to (before excludes).
inline constexpr std::size_t kMaxPoints = 1'000'000;

/// Expands `config` for `experiment` into points.
/// Order (golden-tested): axes in the order the config writes them, then the experiment's remaining axes
/// at their default values (an `l2` axis defaults to lab.l2); the first axis varies slowest; variants vary fastest
/// (innermost), in the order of `config.variants` or, when that is empty, of registration. Points matching an `exclude`
/// rule are dropped.
/// @throws std::invalid_argument if the config names an experiment other than `experiment`; ConfigError if
/// the product of the axes' sizes and the variants exceeds kMaxPoints, or if the exclude rules remove every point
/// (at the first rule's line: a 0-point sweep is a config mistake, case H10).
std::vector<Point> expand(const SweepConfig& config, const RegisteredExperiment& experiment);

/// True if `point` matches every key of `rule` ("variant" matches the point's variant).
bool matches(const ExcludeRule& rule, const Point& point);

/// Parses a `--only` filter "variant=index,n=1e7,density=0.7" and keeps the points whose values equal
/// every listed one (numbers compared by value, so n=1e7 matches 10000000).
/// @throws std::invalid_argument naming the term that is malformed or names an unknown axis.
std::vector<Point> filter_points(const std::vector<Point>& points, const std::string& only);

}  // namespace labrun
