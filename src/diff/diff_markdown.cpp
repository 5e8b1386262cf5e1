// labrun diff's markdown for a pull request (`--format markdown`; diff_markdown, diff.hpp) as an Output.
#include "diff.hpp"

#include "diff.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format.hpp"
#include "interpret.hpp"  // format_time, display_width
#include "record.hpp"

#include "diff_text.hpp"
#include "output.hpp"
#include "text_output.hpp"

namespace labrun {
namespace {

using namespace diff_text;

std::string md_table(const std::vector<const DiffPoint*>& rows, bool with_reason) {
  std::string out = "| verdict | point | change | interval | processes | p (BH) | base | new | samples |";
  out += with_reason ? " reason |\n" : "\n";
  out += "|---|---|---:|---:|---:|---:|---:|---:|---:|";
  out += with_reason ? "---|\n" : "\n";
  for (const DiffPoint* r : rows) {
    const DiffPoint& row = *r;
    out += fmt::format("| {}{} | `{}` | {} | {} | {} | {} | {} | {} | {} |", to_string(row.verdict),
                       row.host_sensitive ? " *host*" : "", md_cell(key_or_dash(row.key)),
                       md_cell(fmt_change_cell(row)), fmt_interval(row), fmt_process_interval(row),
                       fmt_p(row.p_adjusted), fmt_seconds(row.base_median_s), fmt_seconds(row.new_median_s),
                       fmt_samples(row));
    out += with_reason ? " " + md_cell(row.reason.value_or("-")) + " |\n" : "\n";
  }
  return out;
}

std::string diff_markdown_unescaped(const DiffResult& diff) {
  const DiffSummary& s = diff.summary;
  std::string out = std::string("### labrun diff: ") + (diff.regression ? "**regression**" : "no regression") + "\n\n";
  out += summary_counts(s) + ".\n\n";
  out += "Verdicts: " + options_line(diff.options) + ". Ratio = new / base (Hodges-Lehmann); change = ratio - 1.\n\n";
  out += "The " + noise_line(diff.noise) + ".\n\n";
  if (!diff.warnings.empty()) {
    out += "> [!WARNING]\n> The environments differ; a time change may come from the machine, not the code.\n";
    for (const auto& w : diff.warnings) out += "> - " + md_cell(w) + "\n";
    out += "\n";
  }
  if (const std::size_t k = s.host_sensitive_changes; k > 0)
    out += fmt::format(
        "{} of the slower/faster verdicts are on host-sensitive points (sync- or launch-bound, timed "
        "live; marked *host* below): their times move with the host's speed as well as with the code. "
        "Where both sides probed the host in every process, the change also held with the host's speed "
        "taken out (docs/diff.md, \"Host-sensitive points\"); the environment warnings say whether the "
        "host's speed differed.\n\n",
        k);
  std::vector<const DiffPoint*> main_rows, inconclusive;
  for (const DiffPoint* row : rows_by_severity(diff, false))
    (row->verdict == Verdict::inconclusive ? inconclusive : main_rows).push_back(row);
  if (main_rows.empty())
    out += fmt::format("No point is slower, faster or changed status beyond the minimum effect of {:g}%.\n\n",
                       100 * diff.options.min_effect);
  else out += md_table(main_rows, false) + "\n";
  if (!inconclusive.empty())
    out += fmt::format("<details><summary>{} inconclusive point(s)</summary>\n\n", inconclusive.size()) +
           md_table(inconclusive, true) + "\n</details>\n\n";
  for (const auto& [name, points] : {std::pair{"new", &diff.added}, std::pair{"missing", &diff.missing}}) {
    if (points->empty()) continue;
    out += fmt::format("<details><summary>{} {} point(s)</summary>\n\n", points->size(), name);
    for (const auto& p : *points) out += "- `" + md_cell(key_or_dash(p.key)) + "` (" + to_string(p.status) + ")\n";
    out += "\n</details>\n\n";
  }
  return out;
}

}  // namespace

// Case H10: keys, reasons and file names come from files anyone can edit; shown escaped (printable).
std::string diff_markdown(const DiffResult& diff) { return printable(diff_markdown_unescaped(diff), true); }

std::unique_ptr<Output> make_diff_markdown_output() { return diff_text_output(diff_markdown); }

}  // namespace labrun
