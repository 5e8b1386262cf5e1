// The commands of the labrun command line, one file each in src/commands/ (cmd_<name>.cpp). Each adds its CLI11
// subcommand with its options and help to the app and returns what runs it once the command line is parsed;
// run_cli (src/app/cli.cpp) adds them in the order `labrun --help` lists them, runs the chosen one and maps what
// it throws to an exit code.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "device_hooks.hpp"

namespace CLI {
class App;
}  // namespace CLI

namespace labrun {

/// What every command may need besides its own options.
struct CommandContext {
  const DeviceHooks& hooks;
  std::vector<std::string> argv;  ///< the whole command line, as a sweep records it in its header
};

/// One command: its subcommand and what runs it.
struct Command {
  CLI::App* subcommand = nullptr;
  /// Runs the command; returns its exit code. What it throws, run_cli maps to an exit code (ExitCode).
  std::function<int()> run;
  /// The log level the command asks for (sweep's -v, -q, --log-level); empty: "info".
  std::function<std::string()> log_level;
};

/// Adds a command's subcommand to `app`; `context` outlives the returned Command.
using AddCommand = Command (*)(CLI::App& app, const CommandContext& context);

Command add_sweep_command(CLI::App& app, const CommandContext& context);
Command add_validate_command(CLI::App& app, const CommandContext& context);
Command add_list_command(CLI::App& app, const CommandContext& context);
Command add_merge_command(CLI::App& app, const CommandContext& context);
Command add_slurm_command(CLI::App& app, const CommandContext& context);
Command add_diff_command(CLI::App& app, const CommandContext& context);
Command add_history_command(CLI::App& app, const CommandContext& context);
Command add_report_command(CLI::App& app, const CommandContext& context);
Command add_env_command(CLI::App& app, const CommandContext& context);

}  // namespace labrun
