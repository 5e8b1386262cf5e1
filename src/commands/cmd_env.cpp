// `labrun env`: the environment record (host, backend, device) as JSON, as a sweep's header records it.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <memory>
#include <string>

#include "sweep_driver.hpp"
#include "command_inputs.hpp"
#include "commands.hpp"
#include "env.hpp"
#include "exit_codes.hpp"
#include "record.hpp"

namespace labrun {

namespace {

/// The env command's options as parsed.
struct EnvOptions {
  std::string device = "auto";
  std::string code_rev;
};

// Opens the device and prints the host's and the device's environment.
int run_env(const EnvOptions& o, const CommandContext& context) {
  apply_code_rev_option(o.code_rev);
  // The registry is made (and a failing registration reported) as for every command that opens a device.
  const Registry registry = make_registry(context.hooks);
  auto backend = open_backend(o.device, context.hooks);
  Json e = host_environment();
  e["backend"] = backend->name();
  e["device"] = backend->environment();
  std::printf("%s\n", e.dump(2).c_str());
  return kExitOk;
}

}  // namespace

Command add_env_command(CLI::App& app, const CommandContext& context) {
  auto options = std::make_shared<EnvOptions>();
  CLI::App* env = app.add_subcommand("env", "print the environment record as JSON");
  env->add_option("--device", options->device, "auto, cpu, cuda or cuda:N");
  env->add_option("--code-rev", options->code_rev, "the commit of the code under test, SHA[+dirty] (as sweep)");
  return {env, [options, &context] { return run_env(*options, context); }, {}};
}

}  // namespace labrun
