// The cells and lines labrun diff's text outputs share (diff_table.cpp, diff_markdown.cpp): internal to src/diff/.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "diff.hpp"

namespace labrun::diff_text {

/// A time in seconds with a readable unit, 3 significant digits; "-" when absent.
std::string fmt_seconds(std::optional<double> s);
/// A ratio new/base as a signed change in percent: 1.102 -> "+10.2%".
std::string fmt_change(double ratio);
/// The point's ratio interval "[-1.2%, +0.8%]", "-" without a ratio.
std::string fmt_interval(const DiffPoint& row);
/// The process-level interval "[-1.2%, +0.8%]", or "-" for a point not pooled on both sides.
std::string fmt_process_interval(const DiffPoint& row);
/// "noise floor: assumed 5%; measured between processes: ...".
std::string noise_line(const DiffNoise& n);
/// A p-value with 2 significant digits, "-" when absent.
std::string fmt_p(std::optional<double> p);
/// Sample counts "base/new".
std::string fmt_samples(const DiffPoint& row);
/// The change column: the status change "ok -> failed", else fmt_change of the ratio.
std::string fmt_change_cell(const DiffPoint& row);
/// The rows shown (all, or those neither same nor not_compared, and the shared ones), worst first: status change,
/// slower, faster, inconclusive; the biggest change first within each.
std::vector<const DiffPoint*> rows_by_severity(const DiffResult& diff, bool all_rows);
/// The key as printable text, "-" when empty.
std::string key_or_dash(const std::string& key);
/// "N matched: a same, b slower, ...; c new, d missing" from the summary.
std::string summary_counts(const DiffSummary& s);
/// "min effect 5%, 95% intervals, Benjamini-Hochberg FDR 5%, fail on slower".
std::string options_line(const DiffOptions& o);
/// Escapes a cell of a GitHub-flavoured markdown table.
std::string md_cell(const std::string& raw);

}  // namespace labrun::diff_text
