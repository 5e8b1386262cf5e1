#include "check_outcome.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include <labrun/point.hpp>

namespace labrun {

bool CheckOutcome::passed() const {
  return !comparisons.empty() &&
         std::all_of(comparisons.begin(), comparisons.end(), [](const CheckResult& r) { return r.passed; });
}

const CheckResult* CheckOutcome::reported() const {
  for (const auto& r : comparisons)
    if (!r.passed) return &r;
  const CheckResult* pick = nullptr;
  for (const auto& r : comparisons)
    if (!pick || r.worst > pick->worst) pick = &r;
  return pick;
}

double CheckOutcome::value() const {
  const CheckResult* r = reported();
  return r ? r->worst_value : 0;
}

double CheckOutcome::reference() const {
  const CheckResult* r = reported();
  return r ? r->worst_reference : 0;
}

double CheckOutcome::abs_error() const {
  const CheckResult* r = reported();
  if (!r) return 0;
  return std::isfinite(r->worst_value) ? std::fabs(r->worst_value - r->worst_reference)
                                       : std::numeric_limits<double>::infinity();
}

double CheckOutcome::tolerance() const {
  const CheckResult* r = reported();
  return r ? r->scale * r->worst_bound : 0;
}

CheckOutcome check_error(std::string error, std::optional<bool> poisoned) {
  CheckOutcome c;
  c.error = std::move(error);
  c.poisoned = poisoned;
  return c;
}

std::string describe_failure(const CheckOutcome& c) {
  auto num = [](double v) { return to_string(AxisValue(v)); };
  const CheckResult* r = c.reported();
  if (r && (r->kind == "elementwise" || r->kind == "exact")) {
    std::string s = r->array + "[" + std::to_string(r->worst_index) + "] = " + num(c.value()) + " vs reference " +
                    num(c.reference());
    if (r->kind == "elementwise")
      s += " (error " + num(c.abs_error()) + " > tolerance " + num(c.tolerance()) + " = bound x " + num(r->scale) + ")";
    s += "; " + std::to_string(r->mismatches) + " of " + std::to_string(r->compared) + " elements wrong, " +
         std::to_string(r->not_finite) + " non-finite; not timed";
    return s;
  }
  if (!r && !c.error.empty()) return c.error + "; not timed";
  return "result " + num(c.value()) + " vs reference " + num(c.reference()) + " (abs error " + num(c.abs_error()) +
         " > tolerance " + num(c.tolerance()) + "); not timed";
}

}  // namespace labrun
