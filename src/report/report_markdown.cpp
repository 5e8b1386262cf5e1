#include "report_markdown.hpp"
#include "report_summary.hpp"
#include "report_view.hpp"

#include <algorithm>
#include <functional>
#include <cmath>
#include <initializer_list>
#include <map>
#include <ostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis.hpp"
#include "format.hpp"
#include "record.hpp"

namespace labrun {

namespace {

using C = ReportContext;

std::string cell(const std::string& s) { return C::cell(s); }
std::string code(const std::string& s) { return C::code(s); }
std::string ratio_text(double r) { return C::ratio_text(r); }
std::string counts_text(const std::map<std::string, int>& m) { return C::counts_text(m); }

// Reads of the analysis (analyze()'s JSON output, not records): a word (a number as its JSON text) or a number.
std::string word(const Json& j, std::initializer_list<const char*> path) {
  const Json* p = json_find(j, path);
  if (!p) return "";
  if (p->is_string()) return p->get<std::string>();
  if (p->is_number() || p->is_boolean()) return p->dump();
  return "";
}
double num(const Json& j, std::initializer_list<const char*> path) { return json_number(j, path); }
bool flag(const Json& j, const char* key) { return j.is_object() && j.value(key, false); }
const Json& at(const Json& j, const char* key) {
  static const Json null;
  return j.is_object() && j.contains(key) ? j[key] : null;
}

bool positive(double x) { return std::isfinite(x) && x > 0; }

/// The winners table's rows at most; a run with more groups shows its widest margins (index.html has them all).
constexpr std::size_t kMaxWinnerRows = 20;

/// report.md's size at most, in characters: under GitHub's 65,536 for a comment, with room for a heading around it.
/// Sections beyond the ones a reader needs first are added while they fit; the others are named, and left to
/// index.html and points.csv.
constexpr std::size_t kMaxReportChars = 60000;

// ---- Hypothesis verdicts ------------------------------------------------------------------------------------

std::string when_text(const Json& when) {
  return when_phrases(when, {format_axis_value, " ∈ [", "]", " ∈ {", "}", "everywhere"});
}

// The verdict as the heading shows it. A run on the host backend never gets a GPU verdict: the analysis' own
// "host_only" (with its host_verdict), or, from an analysis that does not know about hosts, its verdict
// reported as what the host's timings say.
std::string verdict_text(const Json& h, bool host_run) {
  const std::string v = word(h, {"verdict"});
  if (v == "host_only" || host_run) {
    std::string said = v == "host_only" ? word(h, {"host_verdict"}) : v;
    if (said.empty()) said = "n/a";
    return "**host only** (the host's timings say: " + said + ")";
  }
  return "**" + v + "**";
}

void hypotheses_section(const ReportContext& c, std::ostream& md) {
  md << "## Hypothesis verdicts\n\n";
  const Json& hyps = at(c.analysis(), "hypotheses");
  if (!hyps.is_array() || hyps.empty()) {
    md << "No run's config states a hypothesis.\n\n";
    return;
  }
  const auto& t = kInterpretThresholds;
  md << "Each hypothesis from the config is tested at every *matching point*: both variants ran ok (and are not "
        "suspect) with the same axes, inside `when` (ranges inclusive). The ratio is time(`than`) / time(`faster`). "
     << "**confirmed** when the ratio reaches `by_at_least` at ≥ " << format_percent(t.confirm_fraction)
     << " of the matching points; **refuted** when it does at fewer than " << format_percent(t.refute_fraction)
     << "; **inconclusive** in between or with no matching point.";
  bool any_host = false;
  for (const auto& h : hyps) {
    const std::size_t run = static_cast<std::size_t>(num(h, {"run"}));
    any_host = any_host || word(h, {"verdict"}) == "host_only" || (run < c.runs().size() && c.runs()[run].host_backend);
  }
  if (any_host)
    md << " **host only**: the run ran on the host backend (CPU), so its timings cannot confirm or refute a "
          "prediction about a GPU; the verdict the host's timings would give is shown in parentheses.";
  md << "\n\n";
  int k = 0;
  for (const auto& h : hyps) {
    ++k;
    const std::size_t run = static_cast<std::size_t>(num(h, {"run"}));
    if (run >= c.runs().size()) continue;
    const ReportRun& r = c.runs()[run];
    const std::vector<std::string>& varying = r.varying;
    const std::string fa = word(h, {"faster"}), th = word(h, {"than"});
    md << "### H" << k << ": " << code(fa) << " faster than " << code(th) << " by ≥ "
       << format_number(num(h, {"by_at_least"})) << "× when " << when_text(at(h, "when")) << " — "
       << verdict_text(h, r.host_backend) << "\n\n";
    md << "Run " << run << " (" << code(r.file_name()) << "): " << word(h, {"reason"}) << ".";
    if (r.host_backend || word(h, {"verdict"}) == "host_only")
      md << " These are the host CPU's timings: the prediction is untested on a GPU.";
    if (num(h, {"matched"}) > 0) {
      md << " time(" << th << ") / time(" << fa << "): min " << ratio_text(num(h, {"ratio_min"})) << " at "
         << format_axes(at(at(h, "min_point"), "axes"), varying) << "; median " << ratio_text(num(h, {"ratio_median"}))
         << "; max " << ratio_text(num(h, {"ratio_max"})) << " at "
         << format_axes(at(at(h, "max_point"), "axes"), varying) << ".";
    }
    if (num(h, {"skipped"}) > 0) {
      std::map<std::string, int> why;
      if (at(h, "skipped_because").is_object())
        for (const auto& [w, n] : h["skipped_because"].items()) why[w] = n.is_number() ? n.get<int>() : 0;
      md << " Left out: " << word(h, {"skipped"}) << " matching points where a side did not give a "
         << "usable time (" << counts_text(why) << ").";
    }
    md << "\n\n";
    const Json& pts = at(h, "points");
    if (pts.is_array() && !pts.empty()) {
      md << "| point | " << th << " / " << fa << " | meets " << format_number(num(h, {"by_at_least"})) << "× |\n"
         << "|---|---:|:---:|\n";
      std::size_t shown = 0;
      for (const auto& p : pts) {
        if (++shown > 60) break;
        md << "| " << cell(format_axes(at(p, "axes"), varying)) << " | " << ratio_text(num(p, {"ratio"})) << " | "
           << (flag(p, "passed") ? "yes" : "**no**") << " |\n";
      }
      if (pts.size() > 60) md << "\n(" << pts.size() - 60 << " more points in the analysis.)\n";
      md << "\n";
    }
  }
}

// ---- Experiments' own sections ------------------------------------------------------------------------------

void experiment_sections(const ReportContext& c, std::ostream& md) {
  std::set<const RegisteredExperiment*> done;
  for (const auto& r : c.runs())
    if (r.experiment && r.experiment->def->report_fn() && done.insert(r.experiment).second)
      r.experiment->def->report_fn()(report_view(c, r.experiment->name()), md);
}

// ---- Plots, winners, crossovers -----------------------------------------------------------------------------

void plots_section(const Json& plots, std::size_t not_drawn, std::size_t max_plots, std::ostream& md) {
  md << "## Plots\n\n";
  if (plots.is_null()) {
    md << "Plots were not requested (--no-plots).\n\n";
    return;
  }
  if (plots.empty()) {
    md << "No plots were drawn (python3 with matplotlib was not available, or plotting failed).\n\n";
    return;
  }
  if (not_drawn > 0)
    md << not_drawn << " more time plot(s) were not drawn: the first " << max_plots
       << " are below (`labrun report --max-plots N` draws more; 0 draws all).\n\n";
  for (const auto& p : plots) {
    const std::string file = word(p, {"file"});
    const std::string title = p.contains("title") && p["title"].is_string() ? word(p, {"title"}) : file;
    md << "### " << title << "\n\n![" << title << "](" << file << ")\n\n";
  }
}

void winners_section(const ReportContext& c, std::ostream& md, bool html) {
  md << "## Winners\n\n"
        "The fastest variant at each point (same axes), its margin over the runner-up (time ratio), and whether the "
        "margin is beyond the noise (the medians' 95% confidence intervals do not overlap).\n\n";
  for (const auto& run : c.runs()) {
    std::vector<const Json*> gs;
    std::map<std::string, int> wins;
    for (const Json* g : c.groups(run.number))
      if (at(*g, "runner_up").is_string()) {
        gs.push_back(g);
        wins[word(*g, {"winner"})]++;
      }
    md << c.run_heading(run.number);
    if (gs.empty()) {
      md << "No point has two usable variants to compare.\n\n";
      continue;
    }
    md << "Wins: " << counts_text(wins) << " (of " << gs.size() << " points).";
    if (gs.size() > kMaxWinnerRows) {  // the widest margins; every point is in index.html's winner map
      std::stable_sort(gs.begin(), gs.end(), [](const Json* a, const Json* b) {
        return num(*a, {"margin_ratio"}) > num(*b, {"margin_ratio"});
      });
      gs.resize(kMaxWinnerRows);
      md << " The " << kMaxWinnerRows << " widest margins below"
         << (html ? "; every point in index.html's winner map." : " (index.html's winner map holds every point).");
    }
    md << "\n\n| point | winner | time | runner-up | time | margin | beyond noise "
          "|\n|---|---|---:|---|---:|---:|:---:|\n";
    for (const Json* g : gs)
      md << "| " << cell(format_axes(at(*g, "axes"), run.varying)) << " | " << word(*g, {"winner"}) << " | "
         << format_time(num(*g, {"winner_time_s"})) << " | " << word(*g, {"runner_up"}) << " | "
         << format_time(num(*g, {"runner_up_time_s"})) << " | " << ratio_text(num(*g, {"margin_ratio"})) << " | "
         << (flag(*g, "significant") ? "yes" : "no") << " |\n";
    md << "\n";
  }
}

// Significant crossovers, most decisive first (the smaller of the two end ratios, largest first): the first 15
// in a table; index.html lists them all.
void crossover_tables(std::vector<const Json*> sig, std::ostream& md, bool html) {
  std::stable_sort(sig.begin(), sig.end(), [](const Json* a, const Json* b) {
    return std::min(num(*a, {"ratio_below"}), num(*a, {"ratio_above"})) >
           std::min(num(*b, {"ratio_below"}), num(*b, {"ratio_above"}));
  });
  const std::size_t top = std::min<std::size_t>(15, sig.size());
  if (sig.size() == 1) md << " It is:\n\n";
  else md << " The " << top << " most decisive (largest margin at both ends):\n\n";
  auto table = [&](std::size_t to) {
    md << "| axis | between | at ≈ | faster below → above | margin below | margin above | other axes |\n"
       << "|---|---|---:|---|---:|---:|---|\n";
    for (std::size_t i = 0; i < to; ++i) {
      const Json& x = *sig[i];
      const Json& between = at(x, "between");
      const bool two = between.is_array() && between.size() == 2;
      md << "| " << word(x, {"axis"}) << " | " << (two ? format_axis_value(between[0]) : "") << " – "
         << (two ? format_axis_value(between[1]) : "") << " | " << format_number(num(x, {"at"})) << " | "
         << word(x, {"faster_below"}) << " → " << word(x, {"faster_above"}) << " | "
         << ratio_text(num(x, {"ratio_below"})) << " | " << ratio_text(num(x, {"ratio_above"})) << " | "
         << cell(format_axes(at(x, "fixed"))) << " |\n";
    }
    md << "\n";
  };
  table(top);
  if (sig.size() > top && html) md << "All " << sig.size() << " significant crossovers: index.html.\n\n";
  if (sig.size() > top && !html) md << sig.size() - top << " more (index.html lists them: run without --no-html).\n\n";
}

void crossovers_section(const ReportContext& c, std::ostream& md, bool html) {
  md << "## Crossovers\n\n"
        "For each numeric axis, pair of variants and slice (all other axes fixed): where the faster of the two "
        "changes between consecutive axis values, the crossing interpolated where log(time ratio) is zero (in "
        "log(axis) for sizes swept over decades, linearly otherwise). *Significant*: the confidence intervals are "
        "apart at both ends. Crossovers along the experiment's size axis come first.\n\n";
  for (const auto& run : c.runs()) {
    md << c.run_heading(run.number);
    const std::string& size = run.size_axis;
    std::vector<const Json*> along, along_sig, other, other_sig;
    for (const Json* x : c.crossovers(run.number)) {
      const bool on_size = !size.empty() && word(*x, {"axis"}) == size;
      (on_size ? along : other).push_back(x);
      if (flag(*x, "significant")) (on_size ? along_sig : other_sig).push_back(x);
    }
    auto part = [&](const std::vector<const Json*>& all, const std::vector<const Json*>& sig) {
      md << all.size() << (all.size() == 1 ? " crossover, " : " crossovers, ") << sig.size() << " significant.";
      if (sig.empty()) {
        md << "\n\n";
        return;
      }
      crossover_tables(sig, md, html);
    };
    if (size.empty()) {
      part(other, other_sig);
      continue;
    }
    md << "**Along the size axis " << code(size) << ".** ";
    std::set<std::string> usable, swept;  // values of the size axis: with an ok point, and at all
    for (const auto& p : run.points) {
      swept.insert(p.axis_word(size));
      if (p.status == Status::ok) usable.insert(p.axis_word(size));
    }
    if (!std::count(run.varying.begin(), run.varying.end(), size))
      md << "The run does not vary " << code(size) << ".\n\n";
    else if (usable.size() < 2)
      md << "Only " << usable.size() << " of the " << swept.size() << " values of " << code(size)
         << " swept have points that ran ok (the others were skipped or not supported here): no crossover can be "
            "found along it.\n\n";
    else if (along.empty())
      md << "None: in every slice, the faster of each pair of variants stays the faster from the smallest to the "
            "largest "
         << code(size) << ".\n\n";
    else part(along, along_sig);
    md << "**Along the other axes.** ";
    part(other, other_sig);
  }
}

// ---- Roofline -----------------------------------------------------------------------------------------------

void roofline_section(const ReportContext& c, const Json& plots, std::ostream& md) {
  if (std::none_of(c.runs().begin(), c.runs().end(), has_ceilings)) return;  // all "n/a": no section
  md << "## Roofline\n\n"
        "Each point's achieved FLOP/s against its arithmetic intensity (flop per compulsory byte), under the roofs "
        "min(memory ceiling × intensity, compute ceiling) (Williams, Waterman and Patterson, \"Roofline\", CACM "
        "2009): the memory ceiling is the larger of the calibrated copy and read bandwidths, the compute ceiling "
        "the calibrated FP32 FMA rate. Per variant, over its usable points (ok, not suspect): the median "
        "intensity, the median (and best) fraction of the memory ceiling and of the roofline, and the bound "
        "classes.\n\n";
  for (const auto& run : c.runs()) {
    if (!has_ceilings(run)) continue;  // the summary says so
    const double memory = C::memory_ceiling_Bps(run.header), compute = C::compute_ceiling_flop_per_s(run.header);
    md << c.run_heading(run.number);
    md << "Ceilings: memory " << format_rate(memory, "B/s") << " (" << C::memory_ceiling_source(run.header)
       << "), compute " << format_rate(compute, "FLOP/s") << " (FP32 FMA)";
    if (positive(memory) && positive(compute))
      md << "; ridge point " << fmt::format("{:.3g}", compute / memory) << " flop/B";
    md << ".";
    const std::string png = "roofline_run" + std::to_string(run.number) + ".png";
    for (const auto& p : plots)
      if (word(p, {"file"}) == png) md << " Plot: [" << png << "](" << png << ").";
    md << "\n\n";
    md << "| variant | usable points | intensity (flop/B) | of memory ceiling | of roofline | bound classes |\n"
       << "|---|---:|---:|---:|---:|---|\n";
    for (const auto& v : run.variants) {
      std::vector<double> ai, fm, fr;
      std::map<std::string, int> bounds;
      int n = 0;
      for (const auto& p : run.points) {
        if (p.variant != v || !C::usable(p)) continue;
        const Interpretation& in = C::interpretation(p);
        ++n;
        bounds[in.bound]++;
        if (std::isfinite(in.arithmetic_intensity_flop_per_byte)) ai.push_back(in.arithmetic_intensity_flop_per_byte);
        if (std::isfinite(in.fraction_of.memory_ceiling)) fm.push_back(in.fraction_of.memory_ceiling);
        if (std::isfinite(in.fraction_of.roofline)) fr.push_back(in.fraction_of.roofline);
      }
      auto frac = [](const std::vector<double>& x) {
        if (x.empty()) return std::string("n/a");
        return format_percent(C::median(x)) + " (best " + format_percent(*std::max_element(x.begin(), x.end())) + ")";
      };
      const double mai = C::median(ai);
      md << "| " << cell(v) << " | " << n << " | " << (std::isfinite(mai) ? fmt::format("{:.3g}", mai) : "n/a") << " | "
         << frac(fm) << " | " << frac(fr) << " | " << counts_text(bounds) << " |\n";
    }
    md << "\n";
  }
}

// ---- Notes and tables ---------------------------------------------------------------------------------------

void note_block(const PointRecord& p, const std::vector<std::string>& varying, std::ostream& md) {
  const Interpretation& in = C::interpretation(p);
  const Note& n = in.note;
  md << "#### " << p.variant << ": " << format_axes(p.axes, varying) << "\n\n"
     << "- **Measured:** " << n.measured << "\n"
     << "- **Likely bound:** " << n.bound << "\n"
     << "- **Evidence:** " << n.evidence << "\n"
     << "- **Next change:** " << n.next_change << "\n"
     << "- **Other cause checked:** " << n.other_cause_checked << "\n";
  if (in.suspect) md << "- **Suspect:** " << in.suspect_reason.value_or("") << "\n";
  md << "\n";
}

void notes_section(const ReportContext& c, std::ostream& md) {
  std::vector<std::string> sizes;
  for (const auto& r : c.runs())
    if (!r.size_axis.empty() && std::find(sizes.begin(), sizes.end(), r.size_axis) == sizes.end())
      sizes.push_back(r.size_axis);
  std::string largest = "the largest value of the size axis";
  if (!sizes.empty()) {
    largest += " (";
    for (std::size_t i = 0; i < sizes.size(); ++i) largest += (i ? ", " : "") + code(sizes[i]);
    largest += ")";
  }
  md << "## Notes on selected points\n\n"
        "Five-part notes (measured; likely bound; evidence; next change; other cause checked) for one point per "
        "variant and mode: "
     << largest
     << ", the other axes near the middle of the sweep. Every point's note is in its record's "
        "\"interpretation\".\n\n";
  for (const auto& run : c.runs()) {
    md << c.run_heading(run.number);
    for (const PointRecord* p : c.representative_points(run.number)) note_block(*p, run.varying, md);
  }
}

// Every suspect point in one table (its note is in index.html and its record).
void suspect_section(const ReportContext& c, std::ostream& md) {
  md << "## Suspect points\n\n";
  std::size_t n = 0;
  for (const auto& run : c.runs())
    for (const auto& p : run.points)
      if (C::interpretation(p).suspect) {
        if (n++ == 0)
          md << "A time below the physical floor by more than " << format_percent(kInterpretThresholds.suspect_margin)
             << ", or taken with an unsynchronized host clock, is not a measurement of the work: it is left out of "
                "winners, crossovers and hypotheses.\n\n| variant | point | why |\n|---|---|---|\n";
        md << "| " << cell(p.variant) << " | " << cell(format_axes(p.axes, run.varying)) << " | "
           << cell(C::interpretation(p).suspect_reason.value_or("")) << " |\n";
      }
  md << (n == 0 ? "None: no point is faster than its physical floor, and every time was taken synchronized.\n\n"
                : "\n");
}

// Every point an integrity check failed (docs/integrity.md), with the check and its finding; then what did not run.
void integrity_section(const ReportContext& c, std::ostream& md) {
  md << "## Integrity checks\n\n";
  struct Named {
    const char* name;
    IntegrityCheck Integrity::*check;
  };
  static constexpr Named kChecks[] = {
      {"fences", &Integrity::fences}, {"inputs", &Integrity::inputs}, {"re-check", &Integrity::recheck}};
  std::size_t failed = 0, checked = 0, retimed = 0;
  std::map<std::string, int> off;
  for (const auto& run : c.runs())
    for (const auto& p : run.points) {
      if (!p.integrity) continue;
      ++checked;
      retimed += p.integrity->retimed.has_value();
      for (const Named& k : kChecks) {
        const IntegrityCheck& check = (*p.integrity).*(k.check);
        if (check.state == CheckState::off) ++off[std::string(k.name) + " off (" + check.reason.value_or("") + ")"];
        if (check.state != CheckState::failed) continue;
        if (failed++ == 0) md << "| variant | point | check | finding |\n|---|---|---|---|\n";
        md << "| " << cell(p.variant) << " | " << cell(format_axes(p.axes, run.varying)) << " | " << k.name << " | "
           << cell(check.reason.value_or("")) << " |\n";
      }
      // The audit: what it failed (escaped) or warned of (an undeclared host wait, an allocation: timed live).
      if (const auto& a = p.integrity->audit; a && (a->state == CheckState::failed || a->state == CheckState::warned)) {
        if (failed++ == 0) md << "| variant | point | check | finding |\n|---|---|---|---|\n";
        md << "| " << cell(p.variant) << " | " << cell(format_axes(p.axes, run.varying)) << " | audit ("
           << to_string(a->state) << ") | " << cell(a->reason.value_or("")) << " |\n";
      }
    }
  if (checked == 0) {
    const bool imported = std::all_of(c.runs().begin(), c.runs().end(),
                                      [](const ReportRun& r) { return r.header.json.contains("import"); });
    md << (imported ? "No point records them: the results were imported from another tool, which measured them "
                      "without labrun's integrity checks.\n\n"
                    : "No point records them (results from before the integrity checks).\n\n");
    return;
  }
  if (failed == 0)
    md << "None failed: no point wrote outside its arrays or into its inputs, failed its re-check, or was flagged by "
          "the "
          "audit.\n";
  md << "\n";
  if (!off.empty()) md << "Not checked: " << counts_text(off) << ".\n\n";
  if (retimed > 0)
    md << retimed << " points were timed again alone: their interleaved group's inputs changed during its timing.\n\n";
}

// The first mismatch a correctness reason names without the reference's side: "y[16384] = nan" of "y[16384] = nan vs
// reference 1.5 (...)"; "" when the reason has no such line.
std::string own_side(const std::string& reason) {
  const std::size_t vs = reason.find(" vs reference");
  return vs == std::string::npos ? "" : reason.substr(0, vs);
}

// Every point that failed (incorrect, device_fault, error, escaped, ...) with its reason, the mismatch line
// included; and where every variant of one point is incorrect with the same first mismatch, a hint that the
// reference may be what is wrong.
void failed_section(const ReportContext& c, std::ostream& md) {
  std::size_t failed = 0;
  for (const auto& run : c.runs()) {
    std::map<std::string, std::vector<const PointRecord*>> by_point;  // the point's other axes -> its variants
    for (const auto& p : run.points) {
      if (p.status != Status::skipped && p.status != Status::not_supported)  // the variants that ran
        by_point[format_axes(p.axes, run.varying)].push_back(&p);
      if (!is_failure(p.status)) continue;
      if (failed++ == 0) md << "## Failed points\n\n| variant | point | status | reason |\n|---|---|---|---|\n";
      md << "| " << cell(p.variant) << " | " << cell(format_axes(p.axes, run.varying)) << " | " << to_string(p.status)
         << " | " << cell(p.reason.value_or("")) << " |\n";
    }
    for (const auto& [axes, variants] : by_point) {
      if (variants.size() < 2) continue;
      const std::string first = variants.front()->reason ? own_side(*variants.front()->reason) : "";
      bool agree = !first.empty();
      for (const PointRecord* v : variants)
        agree = agree && v->status == Status::incorrect && v->reason && own_side(*v->reason) == first;
      if (agree)
        md << "\nAt " << cell(axes) << " all " << variants.size() << " variants agree with each other (" << cell(first)
           << ") but not with the reference: the reference may be the one that is wrong.\n";
    }
  }
  if (failed > 0) md << "\n";
}

void tables_section(const ReportContext& c, std::ostream& md) {
  md << "## Time and bandwidth by variant\n\n";
  for (const auto& run : c.runs()) {
    md << c.run_heading(run.number);
    const std::vector<const Json*> gs = c.groups(run.number);
    auto table = [&](const std::string& title, auto value) {
      md << title << "\n\n| point |";
      for (const auto& v : run.variants) md << " " << v << " |";
      md << "\n|---|";
      for (std::size_t k = 0; k < run.variants.size(); ++k) md << "---:|";
      md << "\n";
      for (const Json* g : gs) {
        md << "| " << cell(format_axes(at(*g, "axes"), run.varying)) << " |";
        for (const auto& v : run.variants) {
          const PointRecord* p = c.find(run.number, at(at(*g, "ids"), v.c_str()));
          md << " " << (p ? value(*p, word(*g, {"winner"}) == v) : std::string("–")) << " |";
        }
        md << "\n";
      }
      md << "\n";
    };
    table(
        "Median time per loop iteration: the measured time (GPU time, host syncs included), or, marked "
        "(submit), the host's submission time where it exceeds the GPU time, because an eager loop cannot be fed "
        "faster; the winner in bold; a status where the point was not timed:",
        [](const PointRecord& p, bool winner) {
      if (p.status != Status::ok) return std::string(to_string(p.status));
      // What a loop of the iteration costs: an eager point the host cannot feed shows its submission time.
      const IterationTime it = C::iteration_time(p);
      const std::string t = format_time(it.time_s) + (it.host_paced ? " (submit)" : "");
      return (winner ? "**" + t + "**" : t) + (C::interpretation(p).suspect ? " (suspect)" : "");
        });
    table(
        "Achieved bandwidth (bytes issued / GPU time; `time_s`, not the loop time above) and its fraction of the "
        "memory ceiling:",
        [](const PointRecord& p, bool) {
      if (p.status != Status::ok) return std::string("–");
      const Interpretation& in = C::interpretation(p);
      return format_rate(in.achieved_bandwidth_Bps, "B/s") + " (" + format_percent(in.fraction_of.memory_ceiling) + ")";
        });
    const auto measured = [](const PointRecord& p) {
      const Json* m = p.memory.is_object() ? &p.memory : nullptr;
      return m && m->contains("peak_work_bytes") ? (*m)["peak_work_bytes"].get<double>() : std::nan("");
    };
    bool any_memory = false;
    for (const auto& p : run.points) any_memory = any_memory || std::isfinite(measured(p));
    if (any_memory)
      table(
          "Device memory at its peak over setup and one iteration, beyond the inputs (`memory.peak_work_bytes`), "
          "and in parentheses what the cost model predicts (`cost.peak_work_bytes`):",
          [&](const PointRecord& p, bool) {
        const double m = measured(p);
        if (!std::isfinite(m)) return std::string("–");
        const double predicted = p.cost.peak_work_bytes;
        return format_bytes(m) + (std::isfinite(predicted) ? " (" + format_bytes(predicted) + ")" : "");
          });
  }
}

}  // namespace

std::string render_report(const ReportContext& c, const std::vector<std::string>& paths, const Json& plots,
                          std::size_t not_drawn, std::size_t max_plots, bool html) {
  std::ostringstream head;
  head << "# labrun report\n\nFrom ";
  for (std::size_t i = 0; i < paths.size(); ++i) head << (i ? ", " : "") << code(paths[i]);
  head << ": " << c.runs().size() << (c.runs().size() == 1 ? " run, " : " runs, ") << c.point_count() << " points."
       << (html ? " The HTML view of every point (filters, winner map, roofline, notes): `index.html` beside this file."
                : "")
       << "\n\n";
  using Section = std::function<void(std::ostream&)>;
  // What a reader needs first, always written.
  const std::vector<Section> first = {
      [&](std::ostream& md) { summary_section(c, md); },
      [&](std::ostream& md) { failed_section(c, md); },
      [&](std::ostream& md) { hypotheses_section(c, md); },
      [&](std::ostream& md) { winners_section(c, md, html); },
      [&](std::ostream& md) { experiment_sections(c, md); },
      [&](std::ostream& md) { plots_section(plots, not_drawn, max_plots, md); },
  };
  // Then, in order, each while the report stays under kMaxReportChars; a section that would pass it is named.
  const std::vector<std::pair<std::string, Section>> then = {
      {"Crossovers", [&](std::ostream& md) { crossovers_section(c, md, html); }},
      {"Roofline", [&](std::ostream& md) { roofline_section(c, plots, md); }},
      {"Integrity checks", [&](std::ostream& md) { integrity_section(c, md); }},
      {"Suspect points", [&](std::ostream& md) { suspect_section(c, md); }},
      {"Notes on selected points", [&](std::ostream& md) { notes_section(c, md); }},
      {"Time and bandwidth by variant", [&](std::ostream& md) { tables_section(c, md); }},
  };
  std::string out = head.str();
  for (const Section& section : first) {
    std::ostringstream md;
    section(md);
    out += md.str();
  }
  std::vector<std::string> left;
  for (const auto& [name, section] : then) {
    std::ostringstream md;
    section(md);
    if (out.size() + md.str().size() <= kMaxReportChars) out += md.str();
    else left.push_back(name);
  }
  if (!left.empty()) {
    out +=
        "## Left to index.html\n\nSo that this file fits a pull-request comment, these sections are in "
        "`index.html` (and every point's numbers in `points.csv`, its note in its record's \"interpretation\"): ";
    for (std::size_t i = 0; i < left.size(); ++i) out += (i ? ", " : "") + left[i];
    out += ".\n";
  }
  return printable(out, true);  // case H10: record text shown escaped
}

}  // namespace labrun
