// Experiments and their variants. Registration is explicit, from main() (register_builtin), never during
// static initialisation, so no CUDA call can run before main.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "axis.hpp"
#include "backend.hpp"
#include "point.hpp"

namespace labrun {

/// Builds a variant's workload for a point on a backend.
/// @throws PointOutcome (skipped / not_supported) when the point cannot run there, with the reason.
using CreateFn = std::function<std::unique_ptr<Workload>(const Point&, Backend&, const LabSettings&)>;

/// nullopt if the variant supports the point's axis values (backend-independent), else the reason.
using SupportFn = std::function<std::optional<std::string>(const Point&)>;

struct VariantDecl {
  std::string name;
  std::string description;  ///< one line
  SupportFn unsupported;    ///< may be empty: supports everything
  std::map<BackendKind, CreateFn> implementations;  ///< a backend without an entry is not_supported
};

struct Experiment {
  std::string name;
  std::string description;
  std::vector<AxisDecl> axes;
  std::vector<VariantDecl> variants;

  const AxisDecl* find_axis(const std::string& axis) const;
  const VariantDecl* find_variant(const std::string& variant) const;
  VariantDecl* find_variant(const std::string& variant);
};

class Registry {
 public:
  /// Adds an experiment. @throws std::logic_error if the name is taken.
  Experiment& add(Experiment experiment);
  /// Adds (or replaces) one backend's implementation of a registered variant, e.g. the CUDA one.
  /// @throws std::logic_error if the experiment or variant is unknown.
  void implement(const std::string& experiment, const std::string& variant, BackendKind backend, CreateFn fn);
  const Experiment* find(const std::string& name) const;
  std::vector<std::string> names() const;
  const std::vector<Experiment>& experiments() const { return experiments_; }

 private:
  std::vector<Experiment> experiments_;
};

/// Registers every built-in experiment (host implementations) into `registry`. One line per experiment.
void register_builtin(Registry& registry);

}  // namespace labrun
