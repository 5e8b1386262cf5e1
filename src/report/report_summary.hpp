// report.md's Summary section (one column per run: file, experiment, config, date, device, build, timing,
// calibration, processes, points, bound classes, suspect points, header warnings), and whether a run has the
// calibrated ceilings its roofline needs. src/report/report_markdown.cpp puts the section first.
#pragma once

#include <ostream>
#include <string>

#include "report_context.hpp"

namespace labrun {

/// Writes "## Summary": a table with a column per run of `context`, then a line per run on the host backend
/// (its figures are the host CPU's) and per run without ceilings (no_ceilings_text). Never throws on record
/// content (a field a record lacks shows as empty).
void summary_section(const ReportContext& context, std::ostream& md);

/// Whether `run`'s header holds a finite calibrated memory or compute ceiling (bytes/s, FLOP/s): without
/// either the roofline section leaves the run out.
bool has_ceilings(const ReportRun& run);

/// The line a run without ceilings gets in the summary, naming the calibration's backend.
std::string no_ceilings_text(const ReportRun& run);

}  // namespace labrun
