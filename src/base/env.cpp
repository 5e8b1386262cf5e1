#include "env.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <thread>

#include "build_info.hpp"
#include "code_rev.hpp"

namespace labrun {

namespace {

Json first_line_with(const std::string& path, const std::string& prefix) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(prefix, 0) == 0) {
      auto pos = line.find(prefix.back() == '=' ? '=' : ':');
      std::string v = line.substr(pos + 1);
      v.erase(0, v.find_first_not_of(" \t\""));
      while (!v.empty() && (v.back() == '"' || v.back() == ' ')) v.pop_back();
      return v;
    }
  }
  return nullptr;
}

/// The host's load when the process starts: the 1, 5 and 15 minute load averages (getloadavg(3)), and the clock of
/// the first CPU /proc/cpuinfo lists ("cpu MHz", in Hz), each null where the system does not say. A loaded or
/// slowed host shows here, per process of a pooled run (docs/records.md, "processes").
Json host_load() {
  double load[3];
  Json averages = nullptr;
  if (getloadavg(load, 3) == 3) averages = Json::array({load[0], load[1], load[2]});
  Json hz = nullptr;
  if (const Json mhz = first_line_with("/proc/cpuinfo", "cpu MHz"); mhz.is_string()) {
    char* end = nullptr;
    const std::string text = mhz.get<std::string>();
    const double v = std::strtod(text.c_str(), &end);
    if (end != text.c_str() && v > 0) hz = v * 1e6;
  }
  return Json{{"load_average", averages}, {"cpu_frequency_hz", hz}};
}

}  // namespace

Json host_environment() {
  const BuildInfo& b = build_info();
  Json env;
  env["labrun"] = {{"version", b.version},
                   {"git_sha", b.git_sha},
                   {"git_dirty", b.git_dirty},
                   {"build_type", b.build_type},
                   {"cxx_compiler", b.cxx_compiler},
                   {"cxx_flags", b.cxx_flags},
                   {"cuda_compiler", b.cuda_compiler},
                   {"cuda_flags", b.cuda_flags},
                   {"cuda_architectures", b.cuda_architectures}};
  // The code under test: the repository the runner was built from (labrun itself for the labrun binary).
  env["code"] = to_json(code_rev());
  char host[256] = {0};
  Json hostname = nullptr;
  if (gethostname(host, sizeof host - 1) == 0) hostname = std::string(host);
  utsname u{};
  Json kernel = nullptr;
  if (uname(&u) == 0) kernel = std::string(u.sysname) + " " + u.release + " " + u.machine;
  const char* cvd = std::getenv("CUDA_VISIBLE_DEVICES");
  env["host"] = {{"hostname", hostname},
                 {"os", first_line_with("/etc/os-release", "PRETTY_NAME=")},
                 {"kernel", kernel},
                 {"cpu_model", first_line_with("/proc/cpuinfo", "model name")},
                 {"logical_cpus", std::thread::hardware_concurrency()},
                 {"memory_total_bytes", nullptr},
                 {"cuda_visible_devices", cvd ? Json(cvd) : Json(nullptr)},
                 {"load", host_load()}};
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0)
    env["host"]["memory_total_bytes"] = static_cast<std::int64_t>(pages) * static_cast<std::int64_t>(page);
  return env;
}

std::string utc_timestamp(bool compact) {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32], out[40];
  std::strftime(buf, sizeof buf, compact ? "%Y%m%dT%H%M%S" : "%Y-%m-%dT%H:%M:%S", &tm);
  std::snprintf(out, sizeof out, "%s.%03dZ", buf, static_cast<int>(ms));
  return out;
}

}  // namespace labrun
