#include "sweep.hpp"

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <map>
#include <stdexcept>

#include "config.hpp"  // nearest
#include "format.hpp"  // printable
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

namespace {

/// A sweep's axes in order, each with the values it takes.
using Axes = std::vector<std::pair<std::string, std::vector<AxisValue>>>;

/// The axes the config writes, in its order, then each experiment axis it does not write at its one default value.
Axes axes_with_defaults(const SweepConfig& config, const RegisteredExperiment& experiment) {
  Axes axes;
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
  return axes;
}

/// The variants a sweep runs: the config's list, or every variant of the experiment when it lists none.
std::vector<std::string> swept_variants(const SweepConfig& config, const RegisteredExperiment& experiment) {
  std::vector<std::string> variants = config.variants;
  if (variants.empty())
    for (const auto& v : experiment.variants()) variants.push_back(v.name());
  return variants;
}

/// Throws ConfigError when the sweep would expand to more than kMaxPoints points before excludes.
void check_point_count(const SweepConfig& config, const Axes& axes, const std::vector<std::string>& variants) {
  // Refuse before allocating: each range is capped, but their product is not.
  double product = static_cast<double>(variants.size());
  for (const auto& a : axes) product *= static_cast<double>(a.second.size());
  if (product > static_cast<double>(kMaxPoints))
    throw ConfigError(SourceLoc{config.path, 0, 0}, "axes",
                      "the sweep expands to " + to_string(AxisValue(product)) + " points before excludes, more than " +
                          std::to_string(kMaxPoints) + "; split it into several configs");
}

/// The exclude rules, grouped by the axes they name (the variant counting as one more axis, at position
/// axes.size()): a group is one mask over the combinations of its axes' value positions, set where one of its
/// rules lists every value. A point is excluded when a group's mask is set at the point's positions: one lookup
/// per group, where matches() searched every rule's values for every point. A sweep holds up to kMaxPoints
/// points and a rule up to kMaxRangeValues values: that search took two minutes for a 90-byte config (one rule
/// of 100000 values) and seconds for a 5 KB one (400 rules) in a release build (issue 12, found while fuzzing
/// the config path: fuzz/fuzz_config.cpp). A mask has at most kMaxPoints entries (the product of every axis'
/// size, checked by check_point_count). The same points as matches(), which stays the definition
/// (tests/test_fuzz_findings.cpp compares them).
class ExcludeMasks {
 public:
  ExcludeMasks(const Axes& axes, const std::vector<std::string>& variants, const std::string& experiment)
      : axes_(axes), variants_(variants), experiment_(experiment), variant_axis_(axes.size()) {}

  /// Sets the mask entries of every combination of values that `rule` lists.
  void add(const ExcludeRule& rule) {
    std::map<std::size_t, std::vector<std::size_t>> listed;
    if (list_positions(rule, listed)) mark(listed);
  }

  /// Whether the point at value positions `index` (one per axis) and variant position `variant` is excluded.
  bool excluded(const std::vector<std::size_t>& index, std::size_t variant) const {
    for (const auto& [key, group] : groups_) {
      std::size_t flat = 0;
      for (const std::size_t axis : group.axes)
        flat = flat * size_of(axis) + (axis == variant_axis_ ? variant : index[axis]);
      if (group.mask[flat]) return true;
    }
    return false;
  }

 private:
  struct Group {
    std::vector<std::size_t> axes;  // positions, ascending
    std::vector<char> mask;         // row-major over the axes' value positions
  };

  /// Number of values of `axis` (the variant axis: the number of variants).
  std::size_t size_of(std::size_t axis) const {
    return axis == variant_axis_ ? variants_.size() : axes_[axis].second.size();
  }

  /// value -> its positions on `axis` (one, unless a hand-built config repeats a value), built on first use.
  const std::map<AxisValue, std::vector<std::size_t>>& positions_of(std::size_t axis) {
    auto [it, made] = position_.try_emplace(axis);
    if (made)
      for (std::size_t i = 0; i < size_of(axis); ++i)
        it->second[axis == variant_axis_ ? AxisValue(variants_[i]) : axes_[axis].second[i]].push_back(i);
    return it->second;
  }

  /// The position of the axis named `key` (the variant axis for "variant").
  std::size_t axis_named(const std::string& key) const {
    if (key == "variant") return variant_axis_;
    std::size_t axis = 0;
    while (axis < axes_.size() && axes_[axis].first != key) ++axis;
    if (axis == axes_.size())  // never from parse_config, which checks the rule's axes (Point::at's error)
      throw std::out_of_range("point " + experiment_ + " has no axis '" + key + "'");
    return axis;
  }

  /// Fills `listed` (axis -> sorted positions of the values `rule` lists there); false when the rule matches no
  /// point (an axis where none of its values is swept).
  bool list_positions(const ExcludeRule& rule, std::map<std::size_t, std::vector<std::size_t>>& listed) {
    bool empty = false;
    for (const auto& [key, values] : rule.match) {
      const std::size_t axis = axis_named(key);
      const auto& where = positions_of(axis);
      std::vector<std::size_t> at;
      for (const auto& v : values)
        if (const auto found = where.find(v); found != where.end())
          at.insert(at.end(), found->second.begin(), found->second.end());
      std::sort(at.begin(), at.end());
      at.erase(std::unique(at.begin(), at.end()), at.end());
      const auto [it, first] = listed.emplace(axis, at);
      if (!first) {  // the same axis twice in one rule: both lists must hold the value
        std::vector<std::size_t> both;
        std::set_intersection(it->second.begin(), it->second.end(), at.begin(), at.end(), std::back_inserter(both));
        it->second = std::move(both);
      }
      empty = empty || it->second.empty();
    }
    return !empty;
  }

  /// Sets, in the mask of the group of `listed`'s axes, every combination of the listed positions.
  void mark(const std::map<std::size_t, std::vector<std::size_t>>& listed) {
    std::vector<std::size_t> key;
    std::vector<const std::vector<std::size_t>*> lists;
    std::size_t size = 1;
    for (const auto& [axis, at] : listed) {
      key.push_back(axis);
      lists.push_back(&at);
      size *= size_of(axis);
    }
    Group& group = groups_[key];
    if (group.mask.empty()) group = Group{key, std::vector<char>(size, 0)};
    // Every combination of the listed positions, as an odometer.
    std::vector<std::size_t> pick(lists.size(), 0);
    while (true) {
      std::size_t flat = 0;
      for (std::size_t j = 0; j < lists.size(); ++j) flat = flat * size_of(key[j]) + (*lists[j])[pick[j]];
      group.mask[flat] = 1;
      std::size_t j = lists.size();
      while (j > 0 && ++pick[j - 1] == lists[j - 1]->size()) pick[--j] = 0;
      if (j == 0) break;
    }
  }

  const Axes& axes_;
  const std::vector<std::string>& variants_;
  const std::string& experiment_;
  const std::size_t variant_axis_;
  std::map<std::vector<std::size_t>, Group> groups_;
  // axis -> value -> its positions, built when a rule needs it (positions_of)
  std::map<std::size_t, std::map<AxisValue, std::vector<std::size_t>>> position_;
};

/// Every combination of the axes' values and the variants that `masks` does not exclude, as an odometer: the
/// first axis varies slowest, the variants fastest. Every axis holds at least one value.
std::vector<Point> unexcluded_points(const std::string& experiment, const Axes& axes,
                                     const std::vector<std::string>& variants, const ExcludeMasks& masks) {
  std::vector<Point> points;
  std::vector<std::size_t> index(axes.size(), 0);
  while (true) {
    for (std::size_t v = 0; v < variants.size(); ++v) {
      if (masks.excluded(index, v)) continue;
      Point p{experiment, variants[v], {}};
      for (std::size_t i = 0; i < axes.size(); ++i) p.axes.emplace_back(axes[i].first, axes[i].second[index[i]]);
      points.push_back(std::move(p));
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

/// expand() before its check that a point is left: every combination of the axes' values and the variants, less
/// the excluded ones.
std::vector<Point> expand_combinations(const SweepConfig& config, const RegisteredExperiment& experiment) {
  if (config.experiment != experiment.name())
    throw std::invalid_argument("config is for experiment '" + config.experiment + "', not '" + experiment.name() +
                                "'");
  const Axes axes = axes_with_defaults(config, experiment);
  const std::vector<std::string> variants = swept_variants(config, experiment);
  check_point_count(config, axes, variants);
  for (const auto& a : axes)
    if (a.second.empty()) return {};
  ExcludeMasks masks(axes, variants, experiment.name());
  for (const auto& rule : config.excludes) masks.add(rule);
  return unexcluded_points(experiment.name(), axes, variants, masks);
}

}  // namespace

std::vector<Point> expand(const SweepConfig& config, const RegisteredExperiment& experiment) {
  std::vector<Point> points = expand_combinations(config, experiment);
  if (points.empty() && !config.excludes.empty())  // case H10: a sweep that would run nothing and exit 0
    throw ConfigError(config.excludes.front().loc, "exclude",
                      "the exclude rules remove every point of the sweep: nothing would run (narrow the rules or "
                      "sweep more values)");
  return points;
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
  // Each term names an axis of the points and a value one of them has; else the nearest axis or value is suggested,
  // as a config's misspelt key is ("--only: unknown axis 'varient'; did you mean 'variant'?").
  if (!points.empty()) {
    std::vector<std::string> axis_names = {"variant"};
    for (const auto& a : points.front().axes) axis_names.push_back(a.first);
    for (const auto& [axis, text] : terms) {
      if (std::find(axis_names.begin(), axis_names.end(), axis) == axis_names.end()) {
        const auto best = nearest(axis, axis_names);
        std::string names;
        for (const auto& n : axis_names) names += (names.empty() ? "" : ", ") + n;
        throw std::invalid_argument("--only: unknown axis '" + printable(axis) + "'" +
                                    (best ? "; did you mean '" + *best + "'?" : "") + " (axes: " + names + ")");
      }
      std::vector<std::string> values;
      bool found = false;
      for (const auto& p : points) {
        const std::string v = axis == "variant" ? p.variant : to_string(p.at(axis));
        found = found || (axis == "variant" ? v == text : value_equals(p.at(axis), text));
        if (std::find(values.begin(), values.end(), v) == values.end()) values.push_back(v);
      }
      if (found) continue;
      const auto best = nearest(text, values);
      std::string shown;
      for (std::size_t i = 0; i < values.size() && i < 12; ++i) shown += (i ? ", " : "") + values[i];
      if (values.size() > 12) shown += ", ...";
      throw std::invalid_argument("--only: no point of the config has " + axis + "=" + printable(text) +
                                  (best ? "; did you mean '" + axis + "=" + *best + "'?" : "") +
                                  " (its values: " + shown + ")");
    }
  }
  std::vector<Point> out;
  for (const auto& p : points) {
    bool keep = true;
    for (const auto& [axis, text] : terms) {
      if (axis == "variant") {
        keep = keep && p.variant == text;
        continue;
      }
      keep = keep && value_equals(p.at(axis), text);
    }
    if (keep) out.push_back(p);
  }
  return out;
}

}  // namespace labrun
