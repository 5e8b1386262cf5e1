// The typed view of labrun/report.hpp built from the report's context: what an SDK experiment's report section
// receives (src/report/report_markdown.cpp calls ExperimentDef::report_section with it).
#pragma once

#include <string>

#include <labrun/report.hpp>

namespace labrun {

class ReportContext;  // src/report/report_context.hpp

/// The runs of `experiment` in `context` (ReportContext::runs_of), with their points, the analysis' groups and
/// crossovers, as plain values. Never throws on record content.
ReportView report_view(const ReportContext& context, const std::string& experiment);

}  // namespace labrun
