// labrun diff, the rendering of a DiffResult (diff.hpp): the JSON object, the aligned table and the markdown
// for a pull request. Nothing here decides anything: every verdict, count and warning comes from diff.cpp.
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

namespace labrun {
namespace {

/// A number for JSON output: json_real, or null when there is none.
Json optional_real(std::optional<double> v) { return v ? json_real(*v) : Json(); }

Json optional_text(const std::optional<std::string>& v) { return v ? Json(*v) : Json(); }

Json to_json(const DiffEnvironmentSide& e) {
  Json j = Json::object();
  for (const auto& [name, value] : e.text) j[name] = optional_text(value);
  for (const auto& [name, value] : e.numbers) j[name] = optional_real(value);
  return j;
}

Json to_json(const DiffResult::HostSide& h) {
  const auto text = [](const std::string& t) { return t.empty() ? Json() : Json(t); };
  return {{"cpu_model", text(h.cpu_model)},
          {"sync_wait", text(h.sync_wait)},
          {"load_average_1m", std::isfinite(h.load_average_1m) ? json_real(h.load_average_1m) : Json()}};
}

Json to_json(const DiffPoint& p) {
  Json host = nullptr;
  if (p.host_adjusted)
    host = {{"per_probe_ratio", json_real(p.host_adjusted->per_probe.ratio)},
            {"per_probe_p", json_real(p.host_adjusted->per_probe.p_value)},
            {"elasticity", json_real(p.host_adjusted->elasticity)},
            {"covariate_ratio", json_real(p.host_adjusted->covariate.ratio)},
            {"covariate_p", json_real(p.host_adjusted->covariate.p_value)},
            {"probe_ratio", json_real(p.host_adjusted->probe_ratio)},
            {"slope", json_real(p.host_adjusted->slope)},
            {"slope_se", json_real(p.host_adjusted->slope_se)},
            {"adjusted_ratio", json_real(p.host_adjusted->adjusted_ratio)},
            {"adjusted_log_se", json_real(p.host_adjusted->adjusted_log_se)},
            {"adjusted_df", json_real(p.host_adjusted->adjusted_df)},
            {"probes_overlap", p.host_adjusted->probes_overlap}};
  const auto count = [](std::optional<std::size_t> v) { return v ? Json(*v) : Json(); };
  return Json{{"id", p.id},
              {"key", p.key},
              {"variant", p.variant},
              {"axes", p.axes},
              {"base_status", to_string(p.base_status)},
              {"new_status", to_string(p.new_status)},
              {"verdict", to_string(p.verdict)},
              {"reason", optional_text(p.reason)},
              {"ratio", p.ratio ? json_real(p.ratio->ratio) : Json()},
              {"ratio_ci_low", p.ratio ? json_real(p.ratio->ci_low) : Json()},
              {"ratio_ci_high", p.ratio ? json_real(p.ratio->ci_high) : Json()},
              {"p_value", optional_real(p.p_value)},
              {"p_adjusted", optional_real(p.p_adjusted)},
              {"base_median_s", optional_real(p.base_median_s)},
              {"new_median_s", optional_real(p.new_median_s)},
              {"base_n", count(p.base_samples)},
              {"new_n", count(p.new_samples)},
              {"host_sensitive", p.host_sensitive},
              {"process_p", p.process ? json_real(p.process->p_value) : Json()},
              {"process_ratio", p.process ? json_real(p.process->ratio) : Json()},
              {"process_ratio_ci_low", p.process_interval ? json_real(p.process_interval->ci_low) : Json()},
              {"process_ratio_ci_high", p.process_interval ? json_real(p.process_interval->ci_high) : Json()},
              {"process_p_adjusted", optional_real(p.process_p_adjusted)},
              {"normalized_by", p.normalized ? Json(p.normalized_by) : Json()},
              {"normalized_ratio", p.normalized ? json_real(p.normalized->ratio) : Json()},
              {"normalized_elasticity", p.normalized ? json_real(p.normalized_elasticity) : Json()},
              {"normalized_ratio_ci_low", p.normalized_interval ? json_real(p.normalized_interval->ci_low) : Json()},
              {"normalized_ratio_ci_high", p.normalized_interval ? json_real(p.normalized_interval->ci_high) : Json()},
              {"base_processes", p.process ? Json(p.process_counts.first) : Json()},
              {"new_processes", p.process ? Json(p.process_counts.second) : Json()},
              {"host_adjusted", std::move(host)},
              {"gate", p.gate ? Json(to_string(*p.gate)) : Json()}};
}

Json to_json(const std::vector<DiffPointStub>& stubs) {
  Json j = Json::array();
  for (const auto& s : stubs) j.push_back(Json{{"id", s.id}, {"key", s.key}, {"status", to_string(s.status)}});
  return j;
}

// ---- Text cells ---------------------------------------------------------------------------------------------

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
  return "[" + fmt_change(row.ratio->ci_low) + ", " + fmt_change(row.ratio->ci_high) + "]";
}

/// The process-level interval "[-1.2%, +0.8%]", or "-" for a point not pooled on both sides.
std::string fmt_process_interval(const DiffPoint& row) {
  if (!row.process_interval) return "-";
  return "[" + fmt_change(row.process_interval->ci_low) + ", " + fmt_change(row.process_interval->ci_high) + "]";
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

std::vector<const DiffPoint*> rows_by_severity(const DiffResult& diff, bool all_rows) {
  std::vector<const DiffPoint*> rows;
  for (const auto& row : diff.points)
    if (all_rows || (row.verdict != Verdict::same && row.verdict != Verdict::not_compared)) rows.push_back(&row);
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
      s.matched, s.same, s.slower, s.faster, s.inconclusive, s.status_changed, s.not_compared, s.added, s.missing);
}

std::string options_line(const DiffOptions& o) {
  return fmt::format("min effect {:g}%, {:g}% intervals, Benjamini-Hochberg FDR {:g}%, fail on {}{}",
                     100 * o.min_effect, 100 * (1 - o.alpha), 100 * o.alpha, to_string(o.fail_on),
                     o.normalize ? ", times normalized by calibrated copy bandwidth" : "");
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

}  // namespace

Json to_json(const DiffResult& diff) {
  Json points = Json::array(), status_changes = Json::array(), warnings = Json::array();
  for (const auto& p : diff.points) points.push_back(to_json(p));
  for (const auto& c : diff.status_changes)
    status_changes.push_back(Json{{"id", c.id},
                                  {"key", c.key},
                                  {"base_status", to_string(c.base_status)},
                                  {"new_status", to_string(c.new_status)},
                                  {"reason", optional_text(c.reason)}});
  for (const auto& w : diff.warnings) warnings.push_back(w);
  const DiffSummary& s = diff.summary;
  const Json summary{{"matched", s.matched},
                     {"compared", s.compared},
                     {"same", s.same},
                     {"slower", s.slower},
                     {"faster", s.faster},
                     {"inconclusive", s.inconclusive},
                     {"status_changed", s.status_changed},
                     {"not_compared", s.not_compared},
                     {"new", s.added},
                     {"missing", s.missing},
                     {"host_sensitive_changes", s.host_sensitive_changes}};
  const Json noise{{"assumed_rel", json_real(diff.noise.assumed_rel)},
                   {"measured_points", diff.noise.measured_points},
                   {"median_rel", json_real(diff.noise.median_rel)},
                   {"p90_rel", json_real(diff.noise.p90_rel)}};
  const DiffOptions& o = diff.options;
  return Json{{"type", "diff"},
              {"schema_version", 1},
              {"options",
               {{"min_effect", o.min_effect},
                {"alpha", o.alpha},
                {"confidence", 1 - o.alpha},
                {"normalize", o.normalize},
                {"fail_on", to_string(o.fail_on)}}},
              {"environment",
               {{"warnings", std::move(warnings)},
                {"base", to_json(diff.base_environment)},
                {"new", to_json(diff.new_environment)}}},
              {"points", std::move(points)},
              {"new", to_json(diff.added)},
              {"missing", to_json(diff.missing)},
              {"status_changes", std::move(status_changes)},
              {"summary", summary},
              {"noise", noise},
              {"hosts",
               {{"probe_ratio", diff.host_probe_ratio ? json_real(*diff.host_probe_ratio) : Json()},
                {"probed_points", diff.host_probed_points},
                {"differ_points", diff.hosts_differ_points},
                {"base", to_json(diff.base_host)},
                {"new", to_json(diff.new_host)}}},
              {"regression", diff.regression}};
}

namespace {

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

namespace {

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

const Renderings<DiffResult>& diff_renderings() {
  static const Renderings<DiffResult> table({
      {"table", [](const DiffResult& d) { return diff_table(d); }},
      {"markdown", [](const DiffResult& d) { return diff_markdown(d); }},
      {"json", [](const DiffResult& d) { return to_json(d).dump(2) + "\n"; }},
  });
  return table;
}

}  // namespace labrun
