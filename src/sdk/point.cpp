#include <labrun/point.hpp>

#include <algorithm>
#include <cstdio>
#include <stdexcept>

namespace labrun {

const AxisValue& Point::at(const std::string& name) const {
  for (const auto& [axis, value] : axes)
    if (axis == name) return value;
  throw std::out_of_range("point " + experiment + "/" + variant + " has no axis '" + name + "'");
}

std::int64_t Point::integer(const std::string& name) const { return std::get<std::int64_t>(at(name)); }

double Point::real(const std::string& name) const {
  const AxisValue& v = at(name);
  if (const auto* i = std::get_if<std::int64_t>(&v)) return static_cast<double>(*i);
  return std::get<double>(v);
}

const std::string& Point::word(const std::string& name) const { return std::get<std::string>(at(name)); }

std::string Point::key() const {
  auto sorted = axes;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out = experiment + "/" + variant + "/";
  for (std::size_t i = 0; i < sorted.size(); ++i) {
    if (i) out += ',';
    out += sorted[i].first + "=" + to_string(sorted[i].second);
  }
  return out;
}

std::string Point::label() const {
  std::string out;
  for (std::size_t i = 0; i < axes.size(); ++i) {
    if (i) out += ',';
    out += axes[i].first + "=" + to_string(axes[i].second);
  }
  return out;
}

std::uint64_t fnv1a64(const std::string& bytes) {
  std::uint64_t h = 14695981039346656037ull;
  for (unsigned char c : bytes) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::string Point::id() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(fnv1a64(key())));
  return buf;
}

}  // namespace labrun
