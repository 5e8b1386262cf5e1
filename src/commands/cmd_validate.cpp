// `labrun validate CONFIG`: checks a sweep config (with any --lab overrides) as sweep would load it, and says how
// many points it has; runs nothing.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"

namespace labrun {

namespace {

/// The validate command's options as parsed.
struct ValidateOptions {
  std::string config_path;
  std::vector<std::string> lab_overrides;
};

// Loads the config as `labrun sweep` with --device auto would (its points, its lab section), and says it is valid.
int run_validate(const ValidateOptions& o, const CommandContext& context) {
  const Registry registry = make_registry(context.hooks);
  const SweepInput in = load_sweep(o.config_path, o.lab_overrides, "", "auto", registry, context.hooks);
  std::printf("%s: valid; experiment %s, %zu points\n", o.config_path.c_str(), in.config.experiment.c_str(),
              in.points.size());
  return kExitOk;
}

}  // namespace

Command add_validate_command(CLI::App& app, const CommandContext& context) {
  auto options = std::make_shared<ValidateOptions>();
  CLI::App* validate = app.add_subcommand("validate", "check a sweep config; run nothing");
  validate->add_option("config", options->config_path, "sweep config")->required();
  add_lab_option(*validate, options->lab_overrides,
                 "check the config with these lab overrides too, KEY=VALUE (as sweep)");
  return {validate, [options, &context] { return run_validate(*options, context); }, {}};
}

}  // namespace labrun
