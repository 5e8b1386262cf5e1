// labrun diff's aligned table (`--format table`, the default; diff_table, diff.hpp) as an Output.
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

std::string diff_table_unescaped(const DiffResult& diff, bool all_rows) {
  std::string out;
  for (const auto& w : diff.warnings) out += "warning: " + w + "\n";
  const std::vector<const DiffPoint*> rows = rows_by_severity(diff, all_rows);
  if (!rows.empty()) {
    std::vector<std::vector<std::string>> cells = {
        {"verdict", "change", "interval", "processes", "p(BH)", "base", "new", "samples", "point", "reason"}};
    for (const DiffPoint* r : rows) {
      const DiffPoint& row = *r;
      cells.push_back({std::string(to_string(row.verdict)) + (row.host_sensitive ? " (host)" : ""),
                       fmt_change_cell(row), fmt_interval(row), fmt_process_interval(row), fmt_p(row.p_adjusted),
                       fmt_seconds(row.base_median_s), fmt_seconds(row.new_median_s), fmt_samples(row),
                       key_or_dash(row.key), printable(row.reason.value_or(""))});
    }
    std::vector<std::size_t> width(cells.front().size(), 0);
    for (const auto& line : cells)
      for (std::size_t c = 0; c < line.size(); ++c) width[c] = std::max(width[c], display_width(line[c]));
    for (const auto& line : cells) {
      std::string text;
      for (std::size_t c = 0; c < line.size(); ++c) {
        const bool last = c + 1 == line.size();
        // Numbers right-aligned, words left-aligned; the last column is never padded.
        const bool right = c >= 1 && c <= 7;
        const std::string pad(width[c] - display_width(line[c]), ' ');
        text += last ? line[c] : right ? pad + line[c] + "  " : line[c] + pad + "  ";
      }
      while (!text.empty() && text.back() == ' ') text.pop_back();
      out += text + "\n";
    }
  }
  out += noise_line(diff.noise) + ".\n";
  out += summary_counts(diff.summary) + ". " + (diff.regression ? "REGRESSION" : "No regression") + " (" +
         options_line(diff.options) + ").\n";
  return out;
}

}  // namespace

// Case H10: keys, reasons and file names come from files anyone can edit; shown escaped (printable).
std::string diff_table(const DiffResult& diff, bool all_rows) {
  return printable(diff_table_unescaped(diff, all_rows), true);
}

std::unique_ptr<Output> make_diff_table_output() {
  return diff_text_output([](const DiffResult& diff) { return diff_table(diff); });
}

}  // namespace labrun
