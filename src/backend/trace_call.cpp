// AuditFindings::summary (trace_call.hpp).
#include "trace_call.hpp"

#include <algorithm>
#include <utility>

namespace labrun {

std::string AuditFindings::summary(const std::vector<std::string>& calls) {
  std::vector<std::pair<std::string, int>> counted;
  for (const auto& c : calls) {
    auto it = std::find_if(counted.begin(), counted.end(), [&](const auto& p) { return p.first == c; });
    if (it == counted.end()) counted.emplace_back(c, 1);
    else ++it->second;
  }
  std::string out;
  for (const auto& [name, n] : counted) {
    if (!out.empty()) out += ", ";
    out += name;
    if (n > 1) out += " (x" + std::to_string(n) + ")";
  }
  return out;
}

}  // namespace labrun
