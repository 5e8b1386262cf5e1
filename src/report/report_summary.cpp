#include "report_summary.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "format.hpp"
#include "record.hpp"

namespace labrun {

namespace {

using C = ReportContext;

// The processes row: how many processes were pooled, and how far their medians of a point moved apart.
std::string processes_text(const ReportRun& r) {
  const double k = r.header.process_count();
  if (!std::isfinite(k) || k < 2) return "1 (one process: variation between processes not sampled)";
  std::vector<double> spread;
  int warned = 0;
  for (const auto& p : r.points) {
    if (p.timing && p.timing->processes && std::isfinite(p.timing->processes->spread))
      spread.push_back(p.timing->processes->spread);
    for (const auto& w : p.warnings) warned += w.kind == "process_spread";
  }
  return fmt::format(
      "{} pooled (lab.processes); the processes' medians of a point differ by a median {} "
      "(max {}); {} point(s) warned `process_spread`. Winners' and crossovers' intervals come "
      "from the pooled samples; `labrun diff` also compares the processes' medians",
      static_cast<int>(k), format_percent(C::median(spread)),
      format_percent(spread.empty() ? NAN : *std::max_element(spread.begin(), spread.end())), warned);
}

// The points row: how many, of how many variants, by status; whether the run is incomplete (fewer points than
// its header announced) and which workers wrote it.
std::string points_text(const ReportRun& r) {
  std::map<std::string, int> counts;
  for (const auto& p : r.points) counts[to_string(p.status)]++;
  std::string s = std::to_string(r.points.size()) + " (" + std::to_string(r.variants.size()) +
                  " variants): " + C::counts_text(counts);
  // A killed run holds fewer points than its header announced: say so, every figure below is partial.
  const double announced = r.header.point_count();
  if (std::isfinite(announced) && static_cast<double>(r.points.size()) < announced)
    s += fmt::format(
        " — **incomplete**: {} of the {:.0f} points the header announces (was the run killed? "
        "`labrun sweep CONFIG -o FILE --resume` runs the rest)",
        r.points.size(), announced);
  // Continued by later workers (a resume, a worker replaced after a fault): each segment's own environment.
  if (!r.segments.empty()) {
    std::set<std::string> devices;
    for (const auto& seg : r.segments)
      if (const Json* d = json_find(seg, {"environment", "device", "name"}); d && d->is_string())
        devices.insert(d->get<std::string>());
    s += fmt::format("; written by {} workers (the header's and {} segment{}", r.segments.size() + 1, r.segments.size(),
                     r.segments.size() == 1 ? "" : "s");
    if (!devices.empty()) {
      std::string names;
      for (const auto& d : devices) names += (names.empty() ? "" : ", ") + d;
      s += " on " + names;
    }
    s += ")";
  }
  return s;
}

// The bound-classes row: the points per class, and of those the weak ones.
std::string bound_classes_text(const ReportRun& r) {
  std::map<std::string, int> counts, weak;
  for (const auto& p : r.points) {
    const Interpretation& in = C::interpretation(p);
    counts[in.bound]++;
    if (in.confidence == "weak") weak[in.bound]++;
  }
  std::string s = C::counts_text(counts);
  if (!weak.empty()) s += " (of which weak: " + C::counts_text(weak) + ")";
  return s;
}

// The header-warnings row: the header's warnings' messages, "none" without any.
std::string header_warnings_text(const ReportRun& r) {
  std::string s;
  for (const auto& x : r.header.warnings()) {
    try {
      s += (s.empty() ? "" : "; ") + warning_from_json(x).message;
    } catch (const ResultError&) {  // not a {kind, message} object: nothing to show
    }
  }
  return s.empty() ? std::string("none") : s;
}

}  // namespace

void summary_section(const ReportContext& c, std::ostream& md) {
  const auto& runs = c.runs();
  md << "## Summary\n\n";
  md << "|  |";
  for (const auto& r : runs) md << " run " << r.number << " |";
  md << "\n|---|";
  for (std::size_t i = 0; i < runs.size(); ++i) md << "---|";
  md << "\n";
  auto row = [&](const std::string& label, auto fn) {
    md << "| " << label << " |";
    for (const auto& r : runs) md << " " << C::cell(fn(r)) << " |";
    md << "\n";
  };
  row("file", [](const ReportRun& r) { return C::code(r.file_name()); });
  row("experiment", [](const ReportRun& r) {
    const std::string d = r.header.description();
    return r.header.experiment() + (d.empty() ? "" : ": " + d);
  });
  row("config", [](const ReportRun& r) {
    const std::string sha = r.header.config_sha256();
    return r.header.config_path() + (sha.size() > 12 ? " (sha256 " + sha.substr(0, 12) + "…)" : "");
  });
  row("created (UTC)", [](const ReportRun& r) { return r.header.created_utc(); });
  row("device", [](const ReportRun& r) { return C::device_text(r.header); });
  row("build", [](const ReportRun& r) { return C::build_text(r.header); });
  row("timing", [](const ReportRun& r) {
    if (const Json* tool = json_find(r.header.json, {"import", "tool"}); tool && tool->is_string())
      return "by " + tool->get<std::string>() + " (each point's timing.method; docs/formats.md \"Import\")";
    std::string s = "lab.timing " + r.header.lab_timing() + ", L2 " + r.header.lab_l2();
    const double ci = r.header.lab_target_rel_ci();
    if (std::isfinite(ci)) s += ", median CI target ±" + format_percent(ci);
    return s;
  });
  row("calibration", [](const ReportRun& r) { return C::calibration_text(r.header); });
  row("processes", [](const ReportRun& r) { return processes_text(r); });
  row("points", points_text);
  row("bound classes", bound_classes_text);
  row("suspect points", [](const ReportRun& r) {
    int n = 0;
    for (const auto& p : r.points) n += C::interpretation(p).suspect;
    return std::to_string(n) + (n ? " (see \"Suspect points\")" : "");
  });
  row("header warnings", header_warnings_text);
  md << "\nBound classes, thresholds and formulas: docs/metrics.md, \"Interpretation\". A *weak* class is the "
        "nearer explanation when no threshold is met outright.\n\n";
  for (const auto& r : runs) {
    const std::string who = runs.size() > 1 ? "Run " + std::to_string(r.number) : std::string("This run");
    if (r.host_backend)
      md << "**" << who
         << " ran on the host backend (CPU):** its times, bound classes and hypothesis verdicts are the host "
            "CPU's; they exercise the experiment's code, and say nothing about a GPU.\n\n";
    if (!has_ceilings(r)) md << who << ": " << no_ceilings_text(r) << " (no roofline section).\n\n";
  }
}

bool has_ceilings(const ReportRun& run) {
  return std::isfinite(C::memory_ceiling_Bps(run.header)) || std::isfinite(C::compute_ceiling_flop_per_s(run.header));
}

std::string no_ceilings_text(const ReportRun& run) {
  const RunHeader& h = run.header;
  const std::string b = h.calibration_backend().empty() ? h.backend() : h.calibration_backend();
  return "No calibrated ceilings" + (b.empty() ? std::string() : " (backend " + b + ")") +
         ": the roofs cannot be placed, and bounds are not classified";
}

}  // namespace labrun
