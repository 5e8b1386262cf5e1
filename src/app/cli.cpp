// The labrun command line (run_cli): the CLI11 app, each command's subcommand added by its own file in
// src/commands/ (commands.hpp), the chosen one run, and what it throws mapped to an exit code.
#include "cli.hpp"

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstring>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "build_info.hpp"
#include "sweep_driver.hpp"
#include "commands.hpp"
#include "config.hpp"
#include "interrupt.hpp"
#include "log.hpp"
#include "record.hpp"
#include "standard_output.hpp"

namespace labrun {

namespace {

// Checks the arguments before they are parsed; returns the exit code when one is refused (said on stderr), else
// nothing.
std::optional<int> refuse_arguments(int argc, char** argv) {
  // Every argument goes into the record header (JSON, UTF-8): a byte that is not UTF-8 (a Latin-1 file name)
  // is bad command-line input, refused before anything is read or written.
  for (int i = 1; i < argc; ++i)
    if (const auto bad = first_invalid_utf8(argv[i])) {
      std::cerr << fmt::format(
          "labrun: argument {} (byte {}) is not valid UTF-8; labrun records its arguments as UTF-8\n", i, *bad + 1);
      return kExitUsage;
    }
  // --lab takes one KEY=VALUE per occurrence: `--lab seed -1` would otherwise hand "-1" to the positional config
  // and blame the real config as unexpected. Said plainly before parsing.
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool joined = a.rfind("--lab=", 0) == 0;
    if (a != "--lab" && !joined) continue;
    const std::string value = joined ? a.substr(6) : (i + 1 < argc ? argv[i + 1] : "");
    if (value.find('=') == std::string::npos) {
      // Exit 3 as every other bad --lab value (it is checked as the same key under lab:).
      std::cerr << "labrun: invalid config: --lab takes KEY=VALUE, one setting per --lab; got '" << value << "'"
                << (!value.empty() && value[0] != '-' && !joined && i + 2 < argc
                        ? " (for the value " + std::string(argv[i + 2]) + ": --lab " + value + "=" + argv[i + 2] + ")"
                        : std::string())
                << "\n";
      return kExitConfig;
    }
  }
  return std::nullopt;
}

// What --version prints: the version, the build's commit (12 digits, dirty or not) and its build type.
std::string version_text() {
  return build_info().version + " (" + build_info().git_sha.substr(0, 12) + (build_info().git_dirty ? ", dirty" : "") +
         ", " + build_info().build_type + ")";
}

// Runs the chosen command with its log level, mapping every error it throws to a distinct exit code (ExitCode).
int run_command(const Command& command) {
  // "labrun: [what]MESSAGE" on stderr, and the exit code.
  const auto fail = [](const std::exception& e, int code, const char* what = "") {
    std::cerr << "labrun: " << what << e.what() << "\n";
    return code;
  };
  try {
    init_logging(command.log_level ? command.log_level() : "info");
    return command.run();
  } catch (const ConfigError& e) {
    return fail(e, kExitConfig, "invalid config: ");
  } catch (const OutputError& e) {
    return fail(e, kExitOutput);
  } catch (const DeviceError& e) {
    return fail(e, kExitDevice);
  } catch (const ToolMissing& e) {
    return fail(e, kExitTool);
  } catch (const std::invalid_argument& e) {
    return fail(e, kExitUsage);
  } catch (const Interrupted& e) {  // a signal while a result file was read (sweep --resume's check)
    std::cerr << "labrun: interrupted by SIG" << (sigabbrev_np(e.signal()) ? sigabbrev_np(e.signal()) : "?")
              << " while reading a result file\n";
    return 128 + e.signal();
  } catch (const std::exception& e) {
    return fail(e, kExitInternal, "internal error: ");
  }
}

}  // namespace

int run_cli(int argc, char** argv, const DeviceHooks& hooks) {
  // Every message goes to std::cerr, escaped there (src/base/log.hpp): a value echoed from the command line, a file or
  // a config never reaches the terminal raw.
  escape_standard_error();
  watch_standard_output();  // the reason of a failed write to standard output is kept (src/base/standard_output.hpp)
  if (const auto refused = refuse_arguments(argc, argv)) return *refused;
  CLI::App app{"labrun: GPU performance experiments with the measurement discipline built in"};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_text());
  // Each command adds its subcommand and options, in the order --help lists them.
  const CommandContext context{hooks, std::vector<std::string>(argv, argv + argc)};
  std::vector<Command> commands;
  for (const AddCommand add : {add_sweep_command, add_validate_command, add_list_command, add_merge_command,
                               add_slurm_command, add_diff_command, add_history_command, add_report_command,
                               add_export_command, add_import_command, add_env_command})
    commands.push_back(add(app, context));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    return rc == 0 ? kExitOk : kExitUsage;
  }
  for (const Command& command : commands)
    if (*command.subcommand) return run_command(command);
  return kExitUsage;  // not reached: the app requires one subcommand
}

}  // namespace labrun
