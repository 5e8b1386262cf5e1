// The cells and lines labrun diff's text outputs share (diff_text.hpp).
#include "diff_text.hpp"

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

namespace labrun::diff_text {
namespace {

/// Severity order of the rows shown: status change, slower, faster, inconclusive; same and not_compared last.
int severity(Verdict verdict) {
  switch (verdict) {
    case Verdict::status_changed: return 0;
    case Verdict::slower: return 1;
    case Verdict::faster: return 2;
    case Verdict::inconclusive: return 3;
    case Verdict::not_compared: return 4;
    case Verdict::same: return 5;
  }
  return 6;
}

}  // namespace

/// A time in seconds with a readable unit, 3 significant digits; "-" when absent.
std::string fmt_seconds(std::optional<double> s) {
  return s && std::isfinite(*s) ? format_time(*s) : "-";  // the sweep's and the report's spelling (µs)
}

/// A ratio new/base as a signed change in percent: 1.102 -> "+10.2%".
std::string fmt_change(double ratio) {
  if (std::isnan(ratio)) return "-";
  if (std::isinf(ratio)) return "+inf%";
  return fmt::format("{:+.1f}%", 100 * (ratio - 1));
}

std::string fmt_interval(const DiffPoint& row) {
  if (!row.ratio) return "-";
  return fmt::format("[{}, {}]", fmt_change(row.ratio->ci_low), fmt_change(row.ratio->ci_high));
}

/// The process-level interval "[-1.2%, +0.8%]", or "-" for a point not pooled on both sides.
std::string fmt_process_interval(const DiffPoint& row) {
  if (!row.process_interval) return "-";
  return fmt::format("[{}, {}]", fmt_change(row.process_interval->ci_low), fmt_change(row.process_interval->ci_high));
}

/// "noise floor: assumed 5%; measured between processes: median 1.2%, 90th percentile 3.4% (1540 point-sides)".
std::string noise_line(const DiffNoise& n) {
  std::string out = fmt::format("noise floor: assumed {:g}% (the minimum effect)", 100 * n.assumed_rel);
  if (n.measured_points == 0) return out + "; not measured (no point pooled from lab.processes on both sides)";
  return out + fmt::format(
                   "; measured between processes (sd of log process medians): median {:.1f}%, 90th "
                   "percentile {:.1f}% over {} point-sides{}",
                   100 * n.median_rel, 100 * n.p90_rel, n.measured_points,
                   n.p90_rel > n.assumed_rel / 2 ? ": the noisiest points cannot be called same at this "
                                                   "minimum effect"
                                                 : "");
}

std::string fmt_p(std::optional<double> p) { return p ? fmt::format("{:.2g}", *p) : "-"; }

/// Sample counts "base/new".
std::string fmt_samples(const DiffPoint& row) {
  if (!row.base_samples) return "-";
  return fmt::format("{}/{}", *row.base_samples, row.new_samples.value_or(0));
}

std::string fmt_change_cell(const DiffPoint& row) {
  if (row.verdict == Verdict::status_changed)
    return std::string(to_string(row.base_status)) + " -> " + to_string(row.new_status);
  return fmt_change(row.ratio ? row.ratio->ratio : kNoValue);
}

std::vector<const DiffPoint*> rows_by_severity(const DiffResult& diff, bool all_rows) {
  std::vector<const DiffPoint*> rows;
  for (const auto& row : diff.points)
    // A shared point (case C23) is shown although not compared: it makes the regression unless --allow-shared.
    if (all_rows || row.shared || (row.verdict != Verdict::same && row.verdict != Verdict::not_compared))
      rows.push_back(&row);
  // Within a verdict, the biggest change first (|log ratio|); rows without a ratio keep the sweep order.
  const auto size_of_change = [](const DiffPoint* row) {
    const double r = row->ratio ? row->ratio->ratio : kNoValue;
    return r > 0 ? std::fabs(std::log(r)) : 0.0;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const DiffPoint* a, const DiffPoint* b) {
    const int sa = severity(a->verdict), sb = severity(b->verdict);
    return sa != sb ? sa < sb : size_of_change(a) > size_of_change(b);
  });
  return rows;
}

std::string key_or_dash(const std::string& key) { return key.empty() ? "-" : printable(key); }

/// "N matched: a same, b slower, ...; c new, d missing" from the summary.
std::string summary_counts(const DiffSummary& s) {
  return fmt::format(
             "{} matched: {} same, {} slower, {} faster, {} inconclusive, {} status changed, {} not compared; "
             "{} new, {} missing",
             s.matched, s.same, s.slower, s.faster, s.inconclusive, s.status_changed, s.not_compared, s.added,
             s.missing) +
         (s.shared > 0 ? fmt::format(" ({} not compared: another process held the device)", s.shared) : "");
}

std::string options_line(const DiffOptions& o) {
  return fmt::format("min effect {:g}%, {:g}% intervals, Benjamini-Hochberg FDR {:g}%, fail on {}{}{}",
                     100 * o.min_effect, 100 * (1 - o.alpha), 100 * o.alpha, to_string(o.fail_on),
                     o.normalize ? ", times normalized by calibrated copy bandwidth" : "",
                     o.allow_shared ? ", points measured beside another process allowed" : "");
}

/// Escapes a cell of a GitHub-flavoured markdown table.
std::string md_cell(const std::string& raw) {
  std::string text = raw;
  std::replace(text.begin(), text.end(), '\n', ' ');
  text = printable(text);
  std::string out;
  for (char ch : text) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n') out += ' ';
    else out += ch;
  }
  return out;
}

}  // namespace labrun::diff_text
