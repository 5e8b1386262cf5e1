// labrun history's aligned table (`--format table`, the default; history_table, history.hpp) as an Output.
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

std::string history_table_unescaped(const HistoryResult& h) {
  std::ostringstream out;
  out << fmt::format("labrun history: {} commits ({}..{}), {} points, {} step(s) in {} group(s)\n", h.commits.size(),
                     short_sha(h.commits.front().sha), short_sha(h.commits.back().sha), h.series.size(), h.steps.size(),
                     h.groups.size());
  for (const auto& n : h.notes) out << "note: " << n << "\n";
  for (const auto& w : h.warnings) out << "warning: " << w << "\n";
  if (!h.groups.empty()) {
    out << fmt::format("{:<46} {:>6}  {:<18} {:<28} {}\n", "commits (last before..first after)", "points", "bound",
                       "change (median, range)", "label");
    for (const HistoryGroup& g : h.groups)
      out << fmt::format("{:<46} {:>6}  {:<18} {:<28} {}\n    {}\n", where(h, g.before, g.start, g.after),
                         g.steps.size(), group_bound(g), group_size(g), label(g), group_points(h, g));
  }
  for (const auto& c : h.status_changes)
    out << fmt::format("status: {} {} -> {} at {}\n", h.series[c.series].key, to_string(c.from), to_string(c.to),
                       short_sha(h.commits[c.after].sha));
  out << fmt::format(
      "noise floor {:.2f}% (median sd of log process medians); {} significant shift(s) below the {:g}% "
      "minimum effect not reported\n",
      100 * h.noise_floor, h.small_shifts, 100 * h.options.min_effect);
  if (h.newest.empty()) out << fmt::format("newest commit {}: no step\n", short_sha(h.commits.back().sha));
  else
    out << fmt::format("newest commit {}: {} group(s) with a step{}\n", short_sha(h.commits.back().sha),
                       h.newest.size(),
                       h.fail ? fmt::format(" (fail: --fail-on-newest {})", to_string(h.options.fail_on)) : "");
  return out.str();
}

}  // namespace

// Case H10: keys, reasons and file names come from files anyone can edit; shown escaped (printable).
std::string history_table(const HistoryResult& h) { return printable(history_table_unescaped(h), true); }

std::unique_ptr<Output> make_history_table_output() { return history_text_output(history_table); }

}  // namespace labrun
