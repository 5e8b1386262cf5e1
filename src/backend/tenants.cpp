// Other processes on the device (tenants.hpp).
#include "tenants.hpp"

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <fmt/format.h>

namespace labrun {

ProcessTable ProcessTable::host() {
  ProcessTable t;
  t.self = static_cast<std::int64_t>(::getpid());
  t.parent_of = [](std::int64_t pid) -> std::int64_t {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so read after the last ')'.
    const auto close = text.rfind(')');
    if (close == std::string::npos) return 0;
    std::istringstream rest(text.substr(close + 1));
    std::string state;
    std::int64_t ppid = 0;
    rest >> state >> ppid;
    return rest ? ppid : 0;
  };
  t.name_of = [](std::int64_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/comm");
    std::string name;
    std::getline(in, name);
    return name;
  };
  return t;
}

Json tenants_json(const std::vector<DeviceProcess>& processes, const ProcessTable& table) {
  std::set<std::int64_t> ours{table.self};  // labrun's process and its ancestors, up to init
  for (std::int64_t pid = table.self, hops = 0; pid > 1 && hops < 64; ++hops) {
    pid = table.parent_of ? table.parent_of(pid) : 0;
    if (pid > 0) ours.insert(pid);
  }
  std::map<std::int64_t, Json> by_pid;
  for (const DeviceProcess& p : processes) {
    if (ours.count(p.pid)) continue;
    auto [it, fresh] = by_pid.emplace(p.pid, Json());
    Json& t = it->second;
    if (fresh) {
      const std::string name = table.name_of ? table.name_of(p.pid) : std::string();
      t = {{"pid", p.pid},
           {"name", name.empty() ? Json() : Json(name)},
           {"used_memory_bytes", p.used_memory_bytes ? Json(*p.used_memory_bytes) : Json()},
           {"kind", p.kind}};
    } else if (t["kind"] != p.kind) {
      t["kind"] = t["kind"].get<std::string>() + "+" + p.kind;
      if (p.used_memory_bytes && t["used_memory_bytes"].is_null()) t["used_memory_bytes"] = *p.used_memory_bytes;
    }
  }
  Json out = Json::array();
  for (auto& [pid, t] : by_pid) out.push_back(std::move(t));
  return out;
}

std::string tenants_text(const Json& tenants) {
  if (!tenants.is_array()) return "";
  std::string text;
  for (const Json& t : tenants) {
    if (!t.is_object() || !t.contains("pid")) continue;
    std::string what = t.contains("name") && t["name"].is_string() ? t["name"].get<std::string>() : "name unreadable";
    if (t.contains("used_memory_bytes") && t["used_memory_bytes"].is_number())
      what += fmt::format(", {:.1f} GB", t["used_memory_bytes"].get<double>() / 1e9);
    text += (text.empty() ? "" : ", ") + fmt::format("pid {} ({})", t["pid"].dump(), what);
  }
  return text;
}

}  // namespace labrun
