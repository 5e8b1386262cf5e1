// The stopping criterion `noise` (lab.stopping's default): the rule of every sweep before lab.stopping existed.
#include <cstdint>
#include <limits>
#include <vector>

#include "stats.hpp"
#include "stopping.hpp"

namespace labrun {

namespace {

// At least min_samples; then done once the 95% CI of the median of the primary samples (device times where the
// backend gives them, else wall times) is within +-target_rel_ci of it, or at max_samples, or once the samples took
// max_time_s in all; checked in that order, so a point that meets its target at the cap says ci_target.
class NoiseCriterion final : public StoppingCriterion {
 public:
  explicit NoiseCriterion(const LabSettings& lab)
      : min_samples_(lab.min_samples), max_samples_(lab.max_samples), max_time_s_(lab.max_time_s),
        target_rel_ci_(lab.target_rel_ci) {}

  void add_sample(const StoppingSample& s) override {
    wall_.push_back(s.wall_time_s);
    if (s.device_time_s) device_.push_back(*s.device_time_s);
    timed_s_ += s.duration_s;
    stop_ = decide();
  }

  bool is_finished() const override { return !stop_.empty(); }
  std::string stop_reason() const override { return stop_; }

 private:
  // The stop reason after the samples so far, or "".
  std::string decide() const {
    const auto count = static_cast<std::int64_t>(wall_.size());
    if (count < min_samples_) return "";
    if (median_ci_rel_halfwidth() <= target_rel_ci_) return "ci_target";
    if (count >= max_samples_) return "max_samples";
    if (timed_s_ >= max_time_s_) return "max_time";
    return "";
  }

  // The relative half-width of the median's 95% CI of the primary samples; +inf for none (Summary).
  double median_ci_rel_halfwidth() const {
    const std::vector<double>& primary = device_.empty() ? wall_ : device_;
    return primary.empty() ? std::numeric_limits<double>::infinity() : summarize(primary).ci_rel_halfwidth;
  }

  std::int64_t min_samples_, max_samples_;
  double max_time_s_, target_rel_ci_;
  std::vector<double> wall_, device_;
  double timed_s_ = 0;
  std::string stop_;
};

}  // namespace

/// The `noise` criterion with its parameters from `lab` (min_samples, max_samples, max_time_s, target_rel_ci).
std::unique_ptr<StoppingCriterion> make_noise_criterion(const LabSettings& lab) {
  return std::make_unique<NoiseCriterion>(lab);
}

}  // namespace labrun
