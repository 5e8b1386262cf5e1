#include "log.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>
#include <utility>
#include <stdexcept>

#include <spdlog/sinks/stdout_sinks.h>

namespace labrun {

namespace {

std::string g_level = "info";

}  // namespace

void init_logging(const std::string& level) {
  static const std::pair<const char*, spdlog::level::level_enum> kLevels[] = {
      {"trace", spdlog::level::trace}, {"debug", spdlog::level::debug}, {"info", spdlog::level::info},
      {"warn", spdlog::level::warn},   {"error", spdlog::level::err},   {"off", spdlog::level::off}};
  const auto it = std::find_if(std::begin(kLevels), std::end(kLevels), [&](const auto& l) { return level == l.first; });
  if (it == std::end(kLevels))
    throw std::invalid_argument("--log-level: expected trace, debug, info, warn, error or off; got '" + level + "'");
  const spdlog::level::level_enum parsed = it->second;
  g_level = level;
  std::string who = "labrun";
  const char* array_job = std::getenv("SLURM_ARRAY_JOB_ID");
  const char* task = std::getenv("SLURM_ARRAY_TASK_ID");
  const char* job = std::getenv("SLURM_JOB_ID");
  if (array_job && task) who += std::string(" job ") + array_job + " task " + task;
  else if (job) who += std::string(" job ") + job;
  auto logger = spdlog::stderr_logger_st("labrun-" + std::to_string(::getpid()));
  logger->set_pattern("[%Y-%m-%dT%H:%M:%S.%eZ] [" + who + "] [%l] %v", spdlog::pattern_time_type::utc);
  logger->set_level(parsed);
  logger->flush_on(spdlog::level::trace);  // every line reaches the log at once: a killed job keeps them all
  spdlog::set_default_logger(logger);
}

const std::string& log_level() { return g_level; }

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

}  // namespace labrun
