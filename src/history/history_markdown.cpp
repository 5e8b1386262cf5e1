// labrun history's markdown for an issue (`--format markdown`; history_markdown, history.hpp) as an Output; the report
// folder's history.md too.
#include "history.hpp"

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

#include "history_text.hpp"
#include "output.hpp"
#include "text_output.hpp"

namespace labrun {
namespace {

using namespace history_text;
namespace fs = std::filesystem;

std::string history_markdown_unescaped(const HistoryResult& h, const std::vector<std::string>& plots) {
  std::ostringstream md;
  const std::string newest = short_sha(h.commits.back().sha);
  if (h.fail) md << "## :red_circle: labrun history: a step at the newest commit " << newest << "\n\n";
  else if (!h.newest.empty())
    md << "## :large_orange_diamond: labrun history: a change at the newest commit " << newest << " (not failing)\n\n";
  else md << "## :white_check_mark: labrun history: no step at the newest commit " << newest << "\n\n";
  md << fmt::format(
      "{} commits ({}..{}), {} points: **{} step(s)** in **{} group(s)**; minimum effect {:g}%, false "
      "discovery rate {:g}, per-history false alarm rate {:g}, noise floor {:.2f}%.\n\n",
      h.commits.size(), short_sha(h.commits.front().sha), newest, h.series.size(), h.steps.size(), h.groups.size(),
      100 * h.options.min_effect, h.options.alpha, h.options.alpha_history, 100 * h.noise_floor);
  if (!h.notes.empty()) {
    md << "> [!NOTE]\n";
    for (const auto& n : h.notes) md << "> " << n << "\n";
    md << "\n";
  }
  if (!h.warnings.empty()) {
    md << "> [!WARNING]\n";
    for (const auto& w : h.warnings) md << "> " << w << "\n";
    md << "\n";
  }
  if (!h.groups.empty()) {
    md << "| # | commits (last before..first after) | points | bound | change (median, range) | label |\n"
          "|---|---|---|---|---|---|\n";
    for (std::size_t i = 0; i < h.groups.size(); ++i) {
      const HistoryGroup& g = h.groups[i];
      md << fmt::format("| {} | `{}` | {} | {} | {} | {} |\n", i + 1, where(h, g.before, g.start, g.after),
                        g.steps.size(), group_bound(g), group_size(g), label(g));
    }
    md << "\n";
    for (std::size_t i = 0; i < h.groups.size(); ++i) {
      const HistoryGroup& g = h.groups[i];
      md << fmt::format("### {}. {}\n\n", i + 1, group_sentence(h, g));
      if (i < plots.size() && !plots[i].empty()) md << fmt::format("![group {}]({})\n\n", i + 1, plots[i]);
      md << "<details><summary>" << g.steps.size() << " point(s)</summary>\n\n"
         << "| point | bound | change | interval | q | normalised | why environment or tool "
            "|\n|---|---|---|---|---|---|---|\n";
      for (std::size_t k : g.steps) {
        const HistoryStep& s = h.steps[k];
        const HistorySeries& se = h.series[s.series];
        md << fmt::format("| `{}` | {} | {} | [{}, {}] | {:.2g} | {} | {} |\n", se.key, se.bound, percent(s.ratio),
                          percent(s.ci_low), percent(s.ci_high), s.q_value,
                          s.normalized_ratio ? percent(*s.normalized_ratio) + " (" + s.normalized_by + ")" : "-",
                          !s.environment_reason.empty() ? s.environment_reason
                          : !s.tool_change.empty()      ? "labrun: " + s.tool_change
                                                        : "-");
      }
      md << "\n</details>\n\n";
    }
  }
  if (!h.status_changes.empty()) {
    md << "<details><summary>" << h.status_changes.size()
       << " status change(s)</summary>\n\n| point | from | to | at |\n|---|---|---|---|\n";
    for (const auto& c : h.status_changes)
      md << fmt::format("| `{}` | {} | {} | `{}` |\n", h.series[c.series].key, to_string(c.from), to_string(c.to),
                        short_sha(h.commits[c.after].sha));
    md << "\n</details>\n\n";
  }
  md << "<sub>labrun history (docs/history.md): binary segmentation of each point's log process medians, "
        "Benjamini–Hochberg over the points, "
     << h.small_shifts << " significant shift(s) below the minimum effect not shown.</sub>\n";
  return md.str();
}

}  // namespace

// Case H10: keys, reasons and file names come from files anyone can edit; shown escaped (printable).
std::string history_markdown(const HistoryResult& h, const std::vector<std::string>& plots) {
  return printable(history_markdown_unescaped(h, plots), true);
}

std::unique_ptr<Output> make_history_markdown_output() {
  return history_text_output([](const HistoryResult& h) { return history_markdown(h); });
}

}  // namespace labrun
