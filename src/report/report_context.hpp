// What `labrun report` knows once its inputs are loaded: the runs (file, header, points with their stored
// interpretation, varying axes, variants, the experiment from the registry, its size axis), the cross-point
// analysis (analyze()), lookup of a point by run and id, and the text helpers every section shares. This is
// the type an experiment's report hook (ExperimentDef::report_section, src/config/registry.hpp) receives: it reads the
// context and writes markdown, and needs nothing else from the report.
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "analysis.hpp"   // analyze()
#include "interpret.hpp"  // IterationTime and the format_* helpers sections use
#include "point_record.hpp"
#include "registry.hpp"

namespace labrun {

/// One run as the report sees it: a header and the points after it in one file (a Run of load_results()).
struct ReportRun {
  std::size_t number = 0;  ///< position in the report, from 0: the `run` of points.csv and of the analysis
  std::string file;        ///< the file it came from, as given
  RunHeader header;        ///< {"type": "header"} alone for points that came before any header
  bool has_header = false;
  /// The run's points in file order. Every point has an interpretation: the one stored in its record (computed
  /// once, by the lab), or, for a record without one (files from before the lab stored it), interpret()'s.
  std::vector<PointRecord> points;
  std::vector<Json> segments;         ///< Run::segments: the workers that continued the file after the first
  std::vector<std::string> varying;   ///< axes with more than one value, in first-seen order
  std::vector<std::string> variants;  ///< in first-seen order
  /// The run's experiment in the registry: nullptr when the registry has none of that name (a removed or
  /// test-only experiment); the report is then generic.
  const RegisteredExperiment* experiment = nullptr;
  /// The numeric axis that measures problem size, or "" for none: the experiment's RegisteredExperiment::size_axis;
  /// for a run whose experiment is not in the registry, the varying numeric axis whose positive values span
  /// the largest ratio, if that is at least 100× (a size swept over decades).
  std::string size_axis;
  /// Whether the run ran on the host backend (header environment.backend "host", or, without one, every
  /// point's backend "host"): its times, bounds and verdicts are the host CPU's, not a GPU's.
  bool host_backend = false;

  /// The experiment's name: the header's config.experiment, else the first point's experiment; "" if none.
  std::string experiment_name() const;
  /// The file's name without its folder, e.g. "sweep-20261201T1030Z.jsonl".
  std::string file_name() const;
};

/// The loaded runs, the analysis, and lookups; immutable once built.
class ReportContext {
 public:
  /// Takes loaded results (load_results()) in their order: fills in interpret(point, header) for every point
  /// without a stored interpretation, finds each run's varying axes, variants, experiment (in `registry`; may
  /// be nullptr: no experiment is known) and size axis, and runs analyze(). Never throws on record content.
  ReportContext(ResultSet results, const Registry* registry);

  /// Every run, in input order; runs()[i].number == i.
  const std::vector<ReportRun>& runs() const { return runs_; }
  /// The runs whose experiment_name() is `experiment`, in order (for an experiment's report section).
  std::vector<const ReportRun*> runs_of(const std::string& experiment) const;
  /// Points over all runs.
  std::size_t point_count() const;
  /// What load_results() warned about (e.g. a dropped torn last line), one message each.
  const std::vector<std::string>& warnings() const { return warnings_; }
  /// The registry the runs' experiments were looked up in; may be nullptr.
  const Registry* registry() const { return registry_; }

  /// analyze() of the runs (src/interpret/interpret.hpp documents its shape): {runs, groups, crossovers, hypotheses},
  /// each entry naming its `run` by number.
  const Json& analysis() const { return analysis_; }
  /// The analysis' groups (points of one run with the same axes, by variant) of run `run`, in order.
  std::vector<const Json*> groups(std::size_t run) const;
  /// The analysis' crossovers of run `run`, in order.
  std::vector<const Json*> crossovers(std::size_t run) const;

  /// The point of run `run` with id `id`, or nullptr (no such run or id).
  const PointRecord* find(std::size_t run, const std::string& id) const;
  /// find() for an id given as JSON (as the analysis' `ids` hold them): nullptr unless it is a string.
  const PointRecord* find(std::size_t run, const Json& id) const;
  /// find() for a literal id (resolves what would be ambiguous between the two above).
  const PointRecord* find(std::size_t run, const char* id) const { return find(run, std::string(id)); }

  /// A representative point per variant and launch mode (lab axis kModeAxis) of run `run`, in first-seen
  /// order, among its ok, not suspect points: the largest value of the size axis; among those, the other
  /// numeric axes nearest the middle of their swept values and word axes at their most common value.
  std::vector<const PointRecord*> representative_points(std::size_t run) const;

  /// "### Run R (`file`)\n\n" when the report has more than one run, else "": the heading a per-run section
  /// puts before each run's part.
  std::string run_heading(std::size_t run) const;

  // ---- text helpers (markdown); numbers use format_time/format_rate/format_percent/format_number ----------

  /// A markdown table cell: pipes escaped, newlines flattened to spaces.
  static std::string cell(const std::string& text);
  /// Inline code: `text`.
  static std::string code(const std::string& text);
  /// The device a run's header names, as one line: name, architecture, SMs, L2, driver, CUDA runtime; the backend
  /// alone when the header has no device.
  static std::string device_text(const RunHeader& header);
  /// The code under test and the tool that measured it, as one line: "labrun 0.9 @ 1a2b3c4d5e (clean), Release, g++
  /// 12.2", or for a user's runner or an import, its project and commit first.
  static std::string build_text(const RunHeader& header);
  /// The calibrated ceilings as one line ("read 4.4 TB/s · copy 4.2 TB/s · FP32 FMA ... · launch ..."); "none" or
  /// "no ceilings (backend host): ..." where there are none.
  static std::string calibration_text(const RunHeader& header);
  /// A run's memory roof, bytes per second: the larger of its calibrated copy and read bandwidths (NaN when it has
  /// neither); memory_ceiling_source() names which ("read" or "copy"). The roofline of docs/metrics.md.
  static double memory_ceiling_Bps(const RunHeader& header);
  static std::string memory_ceiling_source(const RunHeader& header);
  /// A run's compute roof, FLOP/s: its calibrated FP32 FMA rate (NaN when none).
  static double compute_ceiling_flop_per_s(const RunHeader& header);
  /// A time ratio as "1.23×"; "n/a" when not finite.
  static std::string ratio_text(double ratio);
  /// Counts as "12 ok, 3 error" (largest first, ties in key order); "none" when empty.
  static std::string counts_text(const std::map<std::string, int>& counts);
  /// The median of `values` (stats.hpp summarize()); NaN when empty.
  static double median(std::vector<double> values);

  // ---- typed reads of a point -----------------------------------------------------------------------------

  /// The point's interpretation (every point of the context has one; a default one otherwise).
  static const Interpretation& interpretation(const PointRecord& point);
  /// What one loop iteration costs, with the 95% CI of its median, seconds (NaN where missing): the same rule
  /// as iteration_time() of src/interpret/interpret.hpp, on the typed record. Blocked samples whose host submission
  /// time exceeds the GPU time are host-paced (the submission's median and CI); otherwise timing.time_s with
  /// the device CI, or the wall CI without device timing.
  static IterationTime iteration_time(const PointRecord& point);
  /// Whether the point ran ok and its interpretation is not suspect.
  static bool usable(const PointRecord& point);

 private:
  std::vector<ReportRun> runs_;
  std::vector<std::string> warnings_;
  const Registry* registry_ = nullptr;
  Json analysis_;
  std::vector<std::unordered_map<std::string, std::size_t>> by_id_;  // per run: id -> position in points
};

}  // namespace labrun
