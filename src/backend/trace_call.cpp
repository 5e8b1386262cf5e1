// AuditFindings::summary (trace_call.hpp).
#include "trace_call.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
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

std::string kernel_name(const char* symbol) {
  if (!symbol || !*symbol) return "";
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> d(abi::__cxa_demangle(symbol, nullptr, nullptr, &status), std::free);
  std::string name = status == 0 && d ? d.get() : symbol;
  if (name.rfind("void ", 0) == 0) name = name.substr(5);
  // The parameter list: the '(' matching the last ')' (a name may hold "(anonymous namespace)" before it).
  if (!name.empty() && name.back() == ')') {
    int depth = 0;
    for (std::size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      else if (name[i] == '(' && --depth == 0) {
        if (i > 0) name.resize(i);
        break;
      }
    }
  }
  return name;
}

}  // namespace labrun
