// `labrun report`'s report.md: the generic sections every run gets, and the experiments' own sections
// (ExperimentDef::report_section) between the verdicts and the plots.
#pragma once

#include <string>
#include <vector>

#include "report_context.hpp"

namespace labrun {

/// The whole report.md for `context`, read from `paths` (named in its first line), linking `plots` (the
/// [{file, title}] draw_plots() returned; empty: a line saying none could be drawn; null: plots were not requested).
/// Sections, in order:
/// - Summary: per run its file, experiment, config, date, device, build, timing settings, calibration,
///   processes, point and bound-class counts, suspect points, header warnings; a line per run on the host
///   backend saying its figures are the host CPU's;
/// - Hypothesis verdicts (analysis "hypotheses"): confirmed / refuted / inconclusive for GPU runs; for a run on
///   the host backend "host only", with the verdict the host's timings give in parentheses (the analysis'
///   `host_verdict` where it gives verdict "host_only", else its verdict);
/// - each experiment's report_section, once per experiment that has one (in the order of its first run);
/// - Plots; Winners (analysis "groups"); Crossovers, those along each run's size axis first;
/// - Roofline: each run's ceilings and ridge point, and per variant its intensity and fractions of the roofs;
/// - Notes on selected points (ReportContext::representative_points) and Suspect points (five-part notes);
/// - Time and bandwidth by variant (tables over the groups).
/// `not_drawn` time plots were left out for the cap `max_plots` (ReportOptions::max_plots); the plots section
/// says so.
/// `html`: whether index.html is written beside it (ReportOptions::html); report.md points to it only then.
std::string render_report(const ReportContext& context, const std::vector<std::string>& paths, const Json& plots,
                          std::size_t not_drawn = 0, std::size_t max_plots = 0, bool html = true);

}  // namespace labrun
