#include <labrun/axis.hpp>

#include <charconv>
#include <cmath>
#include <system_error>

namespace labrun {

std::string to_string(const AxisValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* d = std::get_if<double>(&value)) {
    if (std::isnan(*d)) return "nan";
    if (std::isinf(*d)) return *d > 0 ? "inf" : "-inf";
    char buf[64];
    // Shortest text that reads back to the same double (std::to_chars round-trip guarantee).
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, *d);
    return ec == std::errc() ? std::string(buf, end) : std::string("?");
  }
  return std::get<std::string>(value);
}

const char* to_string(AxisKind kind) {
  switch (kind) {
    case AxisKind::Integer: return "an integer";
    case AxisKind::Real: return "a number";
    case AxisKind::Word: return "one of the words";
  }
  return "?";
}

}  // namespace labrun
