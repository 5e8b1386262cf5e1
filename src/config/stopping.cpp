#include "stopping.hpp"

#include <stdexcept>

namespace labrun {

// Each criterion's make function, defined in its own file (stopping_<name>.cpp).
std::unique_ptr<StoppingCriterion> make_noise_criterion(const LabSettings& lab);

const std::vector<StoppingCriterionInfo>& stopping_criteria() {
  static const std::vector<StoppingCriterionInfo> table = {
      {"noise",
       "at least min_samples; then stop once the median's 95% CI is within +-target_rel_ci (ci_target), at "
       "max_samples (max_samples) or after max_time_s of timed samples (max_time)",
       {"min_samples", "max_samples", "max_time_s", "target_rel_ci"},
       &make_noise_criterion},
  };
  return table;
}

std::vector<std::string> stopping_criterion_names() {
  std::vector<std::string> names;
  for (const StoppingCriterionInfo& c : stopping_criteria()) names.emplace_back(c.name);
  return names;
}

std::unique_ptr<StoppingCriterion> make_stopping_criterion(const LabSettings& lab) {
  for (const StoppingCriterionInfo& c : stopping_criteria())
    if (lab.stopping == c.name) return c.make(lab);
  throw std::invalid_argument("lab.stopping: no stopping criterion is named \"" + lab.stopping + "\"");
}

}  // namespace labrun
