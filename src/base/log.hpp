// Diagnostics of a run (what labrun does, restarts, warnings) through spdlog: levels, timestamps, and under
// Slurm the array job and task ids on every line, so the per-task log of a batch job reads on its own. The
// command's own result lines (a summary table, `labrun: invalid config: …` before exiting) stay plain.
//
// Standard error is the one place where text from outside (a result file's values, file names, a config's
// strings, command-line values) reaches the terminal inside labrun's messages: every byte written to it, the
// logger's lines included, goes through std::cerr and printable() (case H10), so no message can carry a terminal
// escape sequence, a C1 control or a bidirectional override however its text was put together.
#pragma once

#include <string>

#include <spdlog/spdlog.h>

namespace labrun {

/// Makes std::cerr write what it is given through printable(text, keep_lines = true) (src/base/format.hpp): ESC, the
/// other C0 and C1 controls but newline and tab, DEL and the Unicode format controls (U+202E) become visible
/// escapes such as `\x1b` and `\u202e`. Text is written at once, except an incomplete UTF-8 sequence at its end,
/// held until the rest of it arrives. labrun writes its messages to std::cerr only (not to stdio's stderr), so
/// this covers every message. Idempotent; run_cli() calls it first.
void escape_standard_error();

/// Sets up the default logger on stderr (through std::cerr, so escaped as above): "[2026-12-01T12:00:00.123Z] [labrun]
/// [info] message", with " job J task T" after "labrun" when SLURM_ARRAY_JOB_ID / SLURM_ARRAY_TASK_ID are set
/// (SLURM_JOB_ID alone: " job J"). `level` is one of trace, debug, info, warn, error, off. @throws
/// std::invalid_argument for another word.
void init_logging(const std::string& level);

/// The level init_logging() was given ("info" by default): workers are started with the same one.
const std::string& log_level();

/// True when stderr is a terminal: the per-point progress line is then printed as it is; otherwise (a batch
/// job's log) it goes through the logger, timestamped.
bool stderr_is_terminal();

}  // namespace labrun
