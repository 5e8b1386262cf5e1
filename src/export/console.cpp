// The cells both console outputs write (console.hpp).
#include "console.hpp"

#include <cmath>
#include <string>

#include "format.hpp"

namespace labrun::console_text {

std::string fmt_time(double t) { return std::isfinite(t) ? format_time(t) : "-"; }

std::string short_axes(const Json& axes) {
  std::string out;
  for (const auto& [k, v] : axes.items()) {
    if (!out.empty()) out += ' ';
    out += k + "=" + format_axis_value(v);  // as the report and --dry-run write it: density=0, not 0.0
  }
  return out;
}

}  // namespace labrun::console_text
