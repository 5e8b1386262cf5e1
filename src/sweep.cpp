#include "sweep.hpp"

#include <cstdlib>
#include <stdexcept>

#include "lab_axes.hpp"

namespace labrun {

bool matches(const ExcludeRule& rule, const Point& point) {
  for (const auto& [key, values] : rule.match) {
    bool any = false;
    for (const auto& v : values) {
      if (key == "variant") {
        any = std::holds_alternative<std::string>(v) && std::get<std::string>(v) == point.variant;
      } else {
        any = point.at(key) == v;
      }
      if (any) break;
    }
    if (!any) return false;
  }
  return true;
}

std::vector<Point> expand(const SweepConfig& config, const Experiment& experiment) {
  if (config.experiment != experiment.name)
    throw std::invalid_argument("config is for experiment '" + config.experiment + "', not '" +
                                experiment.name + "'");
  std::vector<std::pair<std::string, std::vector<AxisValue>>> axes;
  for (const auto& a : config.axes) axes.emplace_back(a.name, a.values);
  for (const auto& decl : experiment.axes) {
    bool written = false;
    for (const auto& a : config.axes) written = written || a.name == decl.name;
    if (!written) {
      // lab.l2 is the default of an `l2` axis, so `lab: {l2: cold}` reaches experiments that sweep it.
      const AxisValue value = decl.name == kL2Axis ? AxisValue(config.lab.l2) : decl.default_value;
      axes.emplace_back(decl.name, std::vector<AxisValue>{value});
    }
  }
  std::vector<std::string> variants = config.variants;
  if (variants.empty())
    for (const auto& v : experiment.variants) variants.push_back(v.name);
  // Refuse before allocating: each range is capped, but their product is not.
  double product = static_cast<double>(variants.size());
  for (const auto& a : axes) product *= static_cast<double>(a.second.size());
  if (product > static_cast<double>(kMaxPoints))
    throw ConfigError(SourceLoc{config.path, 0, 0}, "axes",
                      "the sweep expands to " + to_string(AxisValue(product)) + " points before excludes, more than " +
                          std::to_string(kMaxPoints) + "; split it into several configs");

  std::vector<Point> points;
  std::vector<std::size_t> index(axes.size(), 0);
  for (const auto& a : axes)
    if (a.second.empty()) return points;
  while (true) {
    for (const auto& variant : variants) {
      Point p{experiment.name, variant, {}};
      for (std::size_t i = 0; i < axes.size(); ++i) p.axes.emplace_back(axes[i].first, axes[i].second[index[i]]);
      bool excluded = false;
      for (const auto& rule : config.excludes) excluded = excluded || matches(rule, p);
      if (!excluded) points.push_back(std::move(p));
    }
    // Odometer increment: the last axis varies fastest.
    std::size_t k = axes.size();
    while (k > 0) {
      --k;
      if (++index[k] < axes[k].second.size()) break;
      index[k] = 0;
      if (k == 0) return points;
    }
    if (axes.empty()) return points;
  }
}

namespace {

bool value_equals(const AxisValue& have, const std::string& text) {
  if (const auto* s = std::get_if<std::string>(&have)) return *s == text;
  const std::optional<double> want = parse_decimal(text);  // decimal only: no hex, no inf
  if (!want) return false;
  if (const auto* i = std::get_if<std::int64_t>(&have)) return static_cast<double>(*i) == *want;
  return std::get<double>(have) == *want;
}

}  // namespace

std::vector<Point> filter_points(const std::vector<Point>& points, const std::string& only) {
  std::vector<std::pair<std::string, std::string>> terms;
  std::size_t start = 0;
  while (start <= only.size()) {
    const std::size_t comma = only.find(',', start);
    const std::string term = only.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    const std::size_t eq = term.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == term.size())
      throw std::invalid_argument("--only: '" + term + "' is not of the form axis=value");
    terms.emplace_back(term.substr(0, eq), term.substr(eq + 1));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  std::vector<Point> out;
  for (const auto& p : points) {
    bool keep = true;
    for (const auto& [axis, text] : terms) {
      if (axis == "variant") {
        keep = keep && p.variant == text;
        continue;
      }
      bool known = false;
      for (const auto& a : p.axes) known = known || a.first == axis;
      if (!known) throw std::invalid_argument("--only: unknown axis '" + axis + "'");
      keep = keep && value_equals(p.at(axis), text);
    }
    if (keep) out.push_back(p);
  }
  return out;
}

}  // namespace labrun
