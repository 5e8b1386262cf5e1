// The cells and sentences labrun history's outputs share (history_text.hpp).
#include "history_text.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "history.hpp"
#include "format.hpp"
#include "output_file.hpp"
#include "spawn.hpp"

namespace labrun::history_text {

std::string short_sha(const std::string& sha) { return sha.substr(0, 10); }

std::string percent(double ratio) { return fmt::format("{:+.1f}%", 100 * (ratio - 1)); }

std::string label(const HistoryGroup& g) {
  std::string out = g.environment ? "environment" : g.tool ? "tool" : g.slower ? "slower" : "faster";
  if (g.kind == StepKind::drift) out += " (drift)";
  return out;
}

/// "a1b2c3d4e5" or, for a drift, "a1b2c3d4e5..f6a7b8c9d0 (drift over 5 commits)".
std::string where(const HistoryResult& h, std::size_t before, std::size_t start, std::size_t after) {
  std::string out = short_sha(h.commits[before].sha) + ".." + short_sha(h.commits[after].sha);
  if (start != after) out += fmt::format(" (drift from {})", short_sha(h.commits[start].sha));
  return out;
}

std::string group_size(const HistoryGroup& g) {
  if (g.steps.size() == 1) return percent(g.median_ratio);
  return fmt::format("{} (points {}..{})", percent(g.median_ratio), percent(g.min_ratio), percent(g.max_ratio));
}

std::string group_bound(const HistoryGroup& g) {
  if (g.bounds.size() == 1) return g.bound;
  std::string out = "mixed:";
  for (const auto& [b, n] : g.bounds) out += fmt::format(" {} {}", b, n);
  return out;
}

/// A group's points by key, at most four, then how many more ("4 points, bound unknown" named none).
std::string group_points(const HistoryResult& h, const HistoryGroup& g) {
  std::string named;
  for (std::size_t i = 0; i < g.steps.size() && i < 4; ++i)
    named += (i ? ", " : "") + h.series[h.steps[g.steps[i]].series].key;
  if (g.steps.size() > 4) named += fmt::format(" and {} more", g.steps.size() - 4);
  return named;
}

/// One line of a group: "all 60 launch-bound points +10.1% at a1b2c3d4e5 (last before 0f1e2d3c4b)".
std::string group_sentence(const HistoryResult& h, const HistoryGroup& g) {
  const std::size_t n = g.steps.size();
  const std::string who = n == 1 ? "point " + h.series[h.steps[g.steps.front()].series].key
                                 : fmt::format("{} {}points ({})", n, g.bounds.size() == 1 ? g.bound + "-bound " : "",
                                               group_points(h, g));
  std::string what = g.kind == StepKind::drift
                         ? fmt::format("drifted {} over {}..{}, complete by {}", group_size(g),
                                       short_sha(h.commits[g.start].sha), short_sha(h.commits[g.after].sha),
                                       short_sha(h.commits[g.after].sha))
                         : fmt::format("{} at {} (last commit before: {})", group_size(g),
                                       short_sha(h.commits[g.after].sha), short_sha(h.commits[g.before].sha));
  return who + " " + what + (g.environment ? " — environment" : g.tool ? " — tool (labrun changed)" : "");
}

std::string axes_only(const HistorySeries& s) {
  std::string out = "variant=" + s.variant;
  for (const auto& [name, value] : s.axes.items())
    out += "," + name + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  return out;
}

/// The "commits" array of the JSON: each commit's index, sha, files, environment (null where unknown) and labels.

}  // namespace labrun::history_text
