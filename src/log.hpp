// Diagnostics of a run (what labrun does, restarts, warnings) through spdlog: levels, timestamps, and under
// Slurm the array job and task ids on every line, so the per-task log of a batch job reads on its own. The
// command's own result lines (a summary table, `labrun: invalid config: …` before exiting) stay plain.
#pragma once

#include <string>

#include <spdlog/spdlog.h>

namespace labrun {

/// Sets up the default logger on stderr: "[2026-12-01T12:00:00.123Z] [labrun] [info] message", with
/// " job J task T" after "labrun" when SLURM_ARRAY_JOB_ID / SLURM_ARRAY_TASK_ID are set (SLURM_JOB_ID alone: " job
/// J"). `level` is one of trace, debug, info, warn, error, off. @throws std::invalid_argument for another word.
void init_logging(const std::string& level);

/// The level init_logging() was given ("info" by default): workers are started with the same one.
const std::string& log_level();

/// True when stderr is a terminal: the per-point progress line is then printed as it is; otherwise (a batch
/// job's log) it goes through the logger, timestamped.
bool stderr_is_terminal();

}  // namespace labrun
