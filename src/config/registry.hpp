// Experiments and their variants: what an experiment package declares to the lab (axes, variants, cost
// estimate, size axis, plots, report section, shipped hypotheses). Experiments store a definition function at
// static initialisation (labrun/experiment.hpp, src/lab/sdk_registry.hpp) and nothing else; the functions run from
// main() (register_builtin, register_cuda_experiments), so no CUDA call can run before main.
#pragma once

#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <labrun/axis.hpp>
#include <labrun/report.hpp>

#include "backend.hpp"
#include <labrun/point.hpp>

namespace labrun {

/// Builds a variant's workload for a point on a backend.
/// @throws PointOutcome (skipped / not_supported) when the point cannot run there, with the reason.
using CreateFn = std::function<std::unique_ptr<Workload>(const Point&, Backend&, const LabSettings&)>;

/// nullopt if the variant supports the point's axis values (backend-independent), else the reason.
using SupportFn = std::function<std::optional<std::string>(const Point&)>;

/// One variant of an experiment. `modes` lists the lab launch modes it runs in (lab_axes.hpp); a point in any
/// other mode is `not_supported` with a reason naming the modes it has. A capture that fails at run time is
/// still `capture_unsupported` (the variant declared graph mode but synchronises with the host).
struct VariantDecl {
  std::string name;
  std::string description;  ///< one line
  SupportFn unsupported;    ///< may be empty: supports every axis value
  std::map<BackendKind, CreateFn> implementations;  ///< a backend without an entry is not_supported
  std::vector<std::string> modes = {"eager", "graph"};
};

/// What a point will cost before it runs, from the experiment's own model: the lab skips a point whose working
/// set the backend cannot hold, or that would take too long on the host backend (lab.host_max_bytes,
/// lab.host_max_time_s), and never allocates to find out.
struct PointEstimate {
  double working_set_bytes = 0;  ///< memory the point's buffers take (inputs, outputs, scratch), bytes
  double bytes = 0;              ///< DRAM bytes one iteration moves, bytes
  double flop = 0;               ///< floating-point operations of one iteration
};
using EstimateFn = std::function<PointEstimate(const Point&)>;

/// A plot the experiment wants in its report: time per iteration against `x` (a numeric axis, log-scaled when
/// it spans >= 100x), one line per value of `series` ("variant" or an axis), one panel per combination of the
/// `facets` axes' values, one figure per combination of the remaining varying axes.
struct PlotSpec {
  std::string x;
  std::string series = "variant";
  std::vector<std::string> facets;
  std::string title;  ///< optional figure title prefix
};

/// An experiment's own report section: markdown appended after the generic sections' summary and verdicts, from
/// the typed view of the experiment's runs (labrun/report.hpp; the report builds it, src/report/report_view.hpp).
using ReportSectionFn = std::function<void(const ReportView&, std::ostream&)>;

/// An experiment package (experiments/<name>/): everything the lab needs to know about it.
struct Experiment {
  std::string name;
  std::string description;
  /// The experiment's axes, then the lab axes (mode, l2) that Registry::add appends to every experiment.
  std::vector<AxisDecl> axes;
  std::vector<VariantDecl> variants;
  /// The numeric axis that measures problem size (plots, the report's representative points, crossovers);
  /// empty when the experiment has none.
  std::string size_axis;
  /// Cost of a point before it runs; empty: every point is tried.
  EstimateFn estimate;
  /// Plots for the report; empty: one plot of time against size_axis per slice.
  std::vector<PlotSpec> plots;
  /// Optional report section: the experiment's own question answered from the data.
  ReportSectionFn report_section;
  /// The founding text's predictions, as YAML in the config's `hypothesis:` syntax (docs/config.md); used when
  /// a config of this experiment has no `hypothesis` of its own. Empty: none.
  std::string hypotheses;
  /// One paragraph for `labrun list` and the report: what the experiment asks and where its docs are.
  std::string docs;

  const AxisDecl* find_axis(const std::string& axis) const;
  const VariantDecl* find_variant(const std::string& variant) const;
  VariantDecl* find_variant(const std::string& variant);
};

class Registry {
 public:
  /// Adds an experiment and appends the lab axes (lab_axes()) to its axes.
  /// @throws std::logic_error if the name is taken, or the experiment declares a lab axis itself.
  Experiment& add(Experiment experiment);
  /// Adds (or replaces) one backend's implementation of a registered variant, e.g. the CUDA one.
  /// @throws std::logic_error if the experiment or variant is unknown.
  void implement(const std::string& experiment, const std::string& variant, BackendKind backend, CreateFn fn);
  /// Implements every variant of `experiment` on `backend` with the same factory (the factory dispatches on
  /// Point::variant). @throws std::logic_error if the experiment is unknown.
  void implement_all(const std::string& experiment, BackendKind backend, CreateFn fn);
  const Experiment* find(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::vector<Experiment>& experiments() const { return experiments_; }

 private:
  std::vector<Experiment> experiments_;
};

/// Registers every linked experiment (host implementations) into `registry`: register_linked_experiments
/// (src/lab/sdk_registry.hpp).
void register_builtin(Registry& registry);

/// Adds the CUDA implementations of every linked experiment: register_linked_cuda with the SDK's CUDA workload
/// (src/backends/cuda/sdk_cuda.cpp, linked only into CUDA builds).
void register_cuda_experiments(Registry& registry);

}  // namespace labrun
