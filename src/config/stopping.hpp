// The stopping rule of a point's timing: when the lab pass has taken enough samples. An interface, after nvbench's
// stopping_criterion_base and its criterion manager: a criterion is registered by name in one table
// (stopping.cpp), reads its typed parameters from the lab settings (each checked as every lab setting is), is told
// each new sample and answers is_finished(). The lab setting `lab.stopping` names the one a sweep uses; `noise`
// (stopping_noise.cpp) is the default and the rule of every sweep before the setting existed.
//
// Adding a criterion: one file with its class and its make function, and one row of kStoppingCriteria (with the
// make function's declaration beside it); then its entry in docs/config.md ("Stopping criteria") and
// docs/metrics.md.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "lab_settings.hpp"

namespace labrun {

/// One timed sample as a criterion is told it. Seconds.
struct StoppingSample {
  double wall_time_s = 0;               ///< per iteration, the host's clock
  std::optional<double> device_time_s;  ///< per iteration, where the backend timed the device (CUDA events)
  double duration_s = 0;                ///< how long taking the sample lasted on the host (counts against max_time_s)
};

/// Decides when a point has been sampled enough. One object per point (make_stopping_criterion), told its samples
/// in order; is_finished() is asked after each.
class StoppingCriterion {
 public:
  virtual ~StoppingCriterion() = default;
  /// Told one new timed sample.
  virtual void add_sample(const StoppingSample& sample) = 0;
  /// Whether sampling is over after the samples told so far.
  virtual bool is_finished() const = 0;
  /// Why sampling stopped, for the record's timing.stop_reason ("ci_target", "max_samples", ...); "" while
  /// is_finished() is false.
  virtual std::string stop_reason() const = 0;
};

/// One row of the table of criteria.
struct StoppingCriterionInfo {
  const char* name;                     ///< the value of lab.stopping that picks it
  const char* description;              ///< for docs and `labrun list`
  std::vector<const char*> parameters;  ///< the lab settings it reads (its typed parameters)
  std::unique_ptr<StoppingCriterion> (*make)(const LabSettings& lab);  ///< a fresh one for a point
};

/// The table, the default (`noise`) first.
const std::vector<StoppingCriterionInfo>& stopping_criteria();

/// Every criterion's name, in table order: the words lab.stopping accepts.
std::vector<std::string> stopping_criterion_names();

/// A fresh criterion for one point: the one lab.stopping names, with its parameters from `lab`.
/// @throws std::invalid_argument for a name not in the table (a config's lab.stopping is checked as it is read;
/// only settings built in code can hold another).
std::unique_ptr<StoppingCriterion> make_stopping_criterion(const LabSettings& lab);

}  // namespace labrun
