// `labrun validate CONFIG`: checks a sweep config (with any --lab overrides) as sweep would load it, and says how
// many points it has; runs nothing.
#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "analysis.hpp"  // inside_when, describe_when
#include "exit_codes.hpp"
#include "format.hpp"
#include "lab.hpp"  // axes_json

namespace labrun {

namespace {

/// The validate command's options as parsed.
struct ValidateOptions {
  std::string config_path;
  std::vector<std::string> lab_overrides;
};

// How each claim of the hypothesis was read, and how many swept points of its `faster` variant its `when` holds; a
// warning for a claim whose `when` holds none (its verdict could only be inconclusive).
void print_hypotheses(const SweepInput& in) {
  const Json& list = in.config.hypothesis;
  if (!list.is_array()) return;
  for (std::size_t i = 0; i < list.size(); ++i) {
    const Json& h = list[i];
    const std::string faster = h.value("faster", ""), than = h.value("than", "");
    const Json when = h.contains("when") ? h["when"] : Json::object();
    std::size_t inside = 0;
    for (const Point& p : in.points)
      if (p.variant == faster && inside_when(axes_json(p), when)) ++inside;
    std::printf("  hypothesis[%zu]: %s faster than %s when %s: %zu swept point%s of %s\n", i, faster.c_str(),
                than.c_str(), describe_when(when).c_str(), inside, inside == 1 ? "" : "s", faster.c_str());
    if (inside == 0)
      spdlog::warn(
          "hypothesis[{}]: its `when` ({}) holds no swept point of {}: the report could only call it "
          "inconclusive (check the values against the axes)",
          i, describe_when(when), faster);
  }
}

// Loads the config as `labrun sweep` with --device auto would (its points, its lab section), and says it is valid.
int run_validate(const ValidateOptions& o, const CommandContext& context) {
  const Registry registry = make_registry(context.hooks);
  const SweepInput in = load_sweep(o.config_path, o.lab_overrides, "", "auto", registry, context.hooks);
  std::printf("%s: valid; experiment %s, %zu points\n", printable(o.config_path).c_str(), in.config.experiment.c_str(),
              in.points.size());
  print_hypotheses(in);
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
