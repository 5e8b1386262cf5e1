// The experiments a runner knows: each author's definition (labrun/experiment.hpp's ExperimentDef: axes, variants,
// plots, report section, shipped hypotheses) with what the lab adds (lab axes, estimate, workload factories).
// Experiments store a definition function at static initialisation (labrun/experiment.hpp, src/lab/sdk_registry.hpp)
// and nothing else; the functions run from main() (register_builtin, register_cuda_experiments), so no CUDA call can
// run before main.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <labrun/axis.hpp>
#include <labrun/experiment.hpp>

#include "backend.hpp"
#include "lab_settings.hpp"
#include <labrun/point.hpp>

namespace labrun {

/// Builds a variant's workload for a point on a backend.
/// @throws PointOutcome (skipped / not_supported) when the point cannot run there, with the reason.
using CreateFn = std::function<std::unique_ptr<Workload>(const Point&, Backend&, const LabSettings&)>;

/// What a point will cost before it runs, from the experiment's own model: the lab skips a point whose working
/// set the backend cannot hold, or that would take too long on the host backend (lab.host_max_bytes,
/// lab.host_max_time_s), and never allocates to find out.
struct PointEstimate {
  double working_set_bytes = 0;  ///< memory the point's buffers take (inputs, outputs, scratch), bytes
  double bytes = 0;              ///< DRAM bytes one iteration moves, bytes
  double flop = 0;               ///< floating-point operations of one iteration
};
using EstimateFn = std::function<PointEstimate(const Point&)>;

/// The registered form of an ExperimentDef (labrun/experiment.hpp): the definition as its author built it (variants
/// with their modes and support rules, plots, report section, hypotheses, docs), and what the lab adds to it: the
/// lab axes after the experiment's own, the resolved size axis, the estimate, and each variant's workload factory
/// per backend. A variant's modes are the lab launch modes it runs in (lab_axes.hpp); a point in any other mode is
/// `not_supported` with a reason naming the modes it has. A capture that fails at run time is still
/// `capture_unsupported` (the variant declared graph mode but synchronises with the host).
struct RegisteredExperiment {
  std::shared_ptr<const ExperimentDef> def;  ///< never null
  /// The experiment's axes (ExperimentDef::axes), then the lab axes (mode, l2) that Registry::add appends.
  std::vector<AxisDecl> axes;
  /// The numeric axis that measures problem size (plots, the report's representative points, crossovers): the
  /// definition's size_axis, else its first integer axis; empty when it has none.
  std::string size_axis;
  /// Cost of a point before it runs; empty: every point is tried.
  EstimateFn estimate;
  /// Workload factories by variant, then backend; a backend without an entry is not_supported.
  std::map<std::string, std::map<BackendKind, CreateFn>> implementations;

  const std::string& name() const { return def->name(); }
  const std::vector<VariantDef>& variants() const { return def->variants(); }
  const AxisDecl* find_axis(const std::string& axis) const;
  const VariantDef* find_variant(const std::string& variant) const;
  /// The factory of `variant` on `backend`; nullptr when there is none.
  const CreateFn* implementation(const std::string& variant, BackendKind backend) const;
};

/// The registry's axis of an ExperimentDef axis (its kind, range or words, and default).
AxisDecl axis_decl(const ExperimentDef::AxisSpec& axis);

class Registry {
 public:
  /// Registers a definition: its axes (axis_decl) with the lab axes (lab_axes()) appended, its size axis
  /// resolved; no estimate and no implementations yet.
  /// @throws std::logic_error if the name is taken, or the experiment declares a lab axis itself.
  RegisteredExperiment& add(std::shared_ptr<const ExperimentDef> def);
  /// Adds (or replaces) one backend's implementation of a registered variant, e.g. the CUDA one.
  /// @throws std::logic_error if the experiment or variant is unknown.
  void implement(const std::string& experiment, const std::string& variant, BackendKind backend, CreateFn fn);
  /// Implements every variant of `experiment` on `backend` with the same factory (the factory dispatches on
  /// Point::variant). @throws std::logic_error if the experiment is unknown.
  void implement_all(const std::string& experiment, BackendKind backend, CreateFn fn);
  const RegisteredExperiment* find(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::vector<RegisteredExperiment>& experiments() const { return experiments_; }

 private:
  std::vector<RegisteredExperiment> experiments_;
};

/// Registers every linked experiment (host implementations) into `registry`: register_linked_experiments
/// (src/lab/sdk_registry.hpp).
void register_builtin(Registry& registry);

/// Adds the CUDA implementations of every linked experiment: register_linked_cuda with the SDK's CUDA workload
/// (src/backends/cuda/sdk_cuda.cpp, linked only into CUDA builds).
void register_cuda_experiments(Registry& registry);

}  // namespace labrun
