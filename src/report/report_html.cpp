// The report folder's index.html (report_files.hpp): the report's data for labrun's view script
// (scripts/labrun_view.js, docs/html.md), written point by point so a report of 100,000 points never holds its page in
// memory.
#include <cmath>
#include <fstream>
#include <map>
#include <ostream>
#include <set>
#include <string>

#include <fmt/format.h>

#include "analysis.hpp"
#include "html_page.hpp"
#include "output_file.hpp"
#include "report_files.hpp"

namespace labrun {
namespace {

using C = ReportContext;

Json number(double x) { return std::isfinite(x) ? Json(x) : Json(nullptr); }

Json run_json(const ReportRun& r) {
  const RunHeader& h = r.header;
  std::map<std::string, int> statuses;
  for (const auto& p : r.points) statuses[to_string(p.status)]++;
  Json warnings = Json::array();
  for (const auto& w : h.warnings()) {
    try {
      const Warning x = warning_from_json(w);
      warnings.push_back(x.kind + ": " + x.message);
    } catch (const ResultError&) {  // not a {kind, message} object: nothing to show
    }
  }
  return Json{{"run", r.number},
              {"file", r.file_name()},
              {"experiment", r.experiment_name()},
              {"device", C::device_text(h)},
              {"driver", h.driver_version()},
              {"backend", h.backend()},
              {"code", C::build_text(h)},
              {"created_utc", h.created_utc()},
              {"lab", h.lab().dump()},
              {"statuses", C::counts_text(statuses)},
              {"ceilings_text", C::calibration_text(h)},
              {"memory_Bps", number(C::memory_ceiling_Bps(h))},
              {"compute_flop_per_s", number(C::compute_ceiling_flop_per_s(h))},
              {"warnings", warnings},
              {"varying", r.varying},
              {"variants", r.variants},
              {"size_axis", r.size_axis},
              {"host_backend", r.host_backend}};
}

std::string correctness_text(const PointRecord& p) {
  if (!p.correctness) return "";
  const CheckOutcome& o = p.correctness->outcome;
  if (!o.error.empty()) return o.error;
  if (!o.reported()) return "";
  if (!o.passed()) return p.reason.value_or("failed");
  return fmt::format("passed: worst element |error| {:.3g} within tolerance {:.3g} (value {:.6g}, reference {:.6g})",
                     o.abs_error(), o.tolerance(), o.value(), o.reference());
}

/// A page of more points than this embeds the five-part note only of its failed, suspect and representative points
/// (ReportContext::representative_points): a note is about 2 KB, and a 100,000-point page would otherwise hold
/// 270 MB. Every note stays in its record's interpretation.
constexpr std::size_t kMaxNotedPoints = 20000;

Json point_json(const ReportRun& r, const PointRecord& p, bool with_note) {
  const Interpretation& in = C::interpretation(p);
  const IterationTime t = C::iteration_time(p);
  Json warnings = Json::array();
  for (const auto& w : p.warnings) warnings.push_back(Json{{"kind", w.kind}, {"message", w.message}});
  Json kernels = Json::array();
  if (p.kernels)
    for (const auto& k : *p.kernels)
      kernels.push_back(Json{{"op", k.op}, {"time_s", number(k.time_s)}, {"bandwidth_Bps", number(k.bandwidth_Bps)}});
  const Note& n = in.note;
  return Json{{"run", r.number},
              {"id", p.id},
              {"variant", p.variant},
              {"axes", p.axes},
              {"status", to_string(p.status)},
              {"failed", is_failure(p.status)},
              {"reason", p.reason ? Json(*p.reason) : Json(nullptr)},
              {"time_s", number(t.time_s)},
              {"ci95_low_s", number(t.ci95_low_s)},
              {"ci95_high_s", number(t.ci95_high_s)},
              {"host_paced", t.host_paced},
              {"suspect", in.suspect},
              {"suspect_reason", in.suspect_reason ? Json(*in.suspect_reason) : Json(nullptr)},
              {"bound", in.bound},
              {"intensity_flop_per_byte", number(in.arithmetic_intensity_flop_per_byte)},
              {"flop_per_s", number(in.flop_per_s)},
              {"bandwidth_Bps", number(in.achieved_bandwidth_Bps)},
              {"of_memory", number(in.fraction_of.memory_ceiling)},
              {"of_roofline", number(in.fraction_of.roofline)},
              {"note", with_note ? Json{{"measured", n.measured},
                                        {"bound", n.bound},
                                        {"evidence", n.evidence},
                                        {"next_change", n.next_change},
                                        {"other_cause_checked", n.other_cause_checked}}
                                 : Json(nullptr)},
              {"correctness", correctness_text(p)},
              {"warnings", warnings},
              {"kernels", kernels}};
}

/// The analysis' hypotheses without their per-point lists (the points are in "points"), with `when` as text.
Json hypotheses_json(const ReportContext& c) {
  Json out = Json::array();
  const Json& hyps = c.analysis().contains("hypotheses") ? c.analysis()["hypotheses"] : Json::array();
  int k = 0;
  for (const Json& h : hyps) {
    Json x = h;
    x.erase("points");
    x.erase("counterexamples");
    x["number"] = ++k;
    x["when_text"] = describe_when(h.value("when", Json()));
    out.push_back(std::move(x));
  }
  return out;
}

/// The analysis' groups with a winner: {run, axes, winner, runner_up, margin_ratio, significant}.
Json groups_json(const ReportContext& c) {
  Json out = Json::array();
  const Json& groups = c.analysis().contains("groups") ? c.analysis()["groups"] : Json::array();
  for (const Json& g : groups) {
    if (!g.contains("winner") || !g["winner"].is_string()) continue;
    out.push_back(Json{{"run", g.value("run", Json())},
                       {"axes", g.value("axes", Json::object())},
                       {"winner", g["winner"]},
                       {"runner_up", g.value("runner_up", Json())},
                       {"margin_ratio", g.value("margin_ratio", Json())},
                       {"significant", g.value("significant", false)}});
  }
  return out;
}

class ReportHtml final : public Output {
 public:
  void report(ReportBuild& b, const std::filesystem::path& file) override {
    if (!b.options.html) return;
    const HtmlAssets assets = html_assets();
    b.err << html_assets_warning("report", assets);
    const ReportContext& c = b.context;
    std::ofstream f = open_for_write(file);
    write_html_page(f, "labrun report", assets, [&](std::ostream& out) {
      Json sources = Json::array();
      for (const auto& p : b.paths) sources.push_back(p);
      Json runs = Json::array();
      for (const auto& r : c.runs()) runs.push_back(run_json(r));
      out << "{\"kind\":\"report\",\"title\":" << html_json("labrun report") << ",\"sources\":" << html_json(sources)
          << ",\"runs\":" << html_json(runs) << ",\"hypotheses\":" << html_json(hypotheses_json(c))
          << ",\"groups\":" << html_json(groups_json(c))
          << ",\"crossovers\":" << html_json(c.analysis().value("crossovers", Json::array())) << ",\"points\":[";
      bool first = true;
      const bool all_notes = c.point_count() <= kMaxNotedPoints;
      for (const auto& r : c.runs()) {
        std::set<const PointRecord*> selected;
        if (!all_notes)
          for (const PointRecord* p : c.representative_points(r.number)) selected.insert(p);
        for (const auto& p : r.points) {
          const bool note = all_notes || selected.count(&p) || is_failure(p.status) || C::interpretation(p).suspect;
          out << (first ? "" : ",") << html_json(point_json(r, p, note));
          first = false;
        }
      }
      out << "]}";
    });
    close_or_throw(f, file);
  }
};

}  // namespace

std::unique_ptr<Output> make_report_html_output() { return std::make_unique<ReportHtml>(); }

}  // namespace labrun
