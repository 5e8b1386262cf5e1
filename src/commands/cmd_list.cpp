// `labrun list`: every experiment of the registry with its axes (range, default) and variants (backends).
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <cstdio>
#include <string>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "registry.hpp"

namespace labrun {

namespace {

// Prints each experiment of `registry`: its description, axes and variants.
int cmd_list(const Registry& registry, const std::string& left_out_cuda) {
  if (!left_out_cuda.empty())
    std::printf(
        "this runner was built without its CUDA sources %s (its project did not enable CUDA: add "
        "enable_language(CUDA); docs/your-kernel.md): their variants have the host backend only\n\n",
        left_out_cuda.c_str());
  for (const auto& e : registry.experiments()) {
    std::printf("%s: %s\n  axes:\n", e.name().c_str(), e.def->description().c_str());
    for (const auto& a : e.axes) {
      std::string range;
      if (!a.choices.empty()) {
        for (const auto& c : a.choices) {
          if (!range.empty()) range += '|';
          range += c;
        }
      } else {
        range = fmt::format("{} in [{}, {}]", a.kind == AxisKind::Integer ? "integer" : "number",
                            a.min ? to_string(AxisValue(*a.min)) : "-inf",
                            a.max ? to_string(AxisValue(*a.max)) : "inf");
      }
      std::printf("    %-12s %-32s default %-8s %s\n", a.name.c_str(), range.c_str(),
                  to_string(a.default_value).c_str(), a.description.c_str());
    }
    std::printf("  variants:\n");
    for (const auto& v : e.variants()) {
      std::string backends;
      if (const auto it = e.implementations.find(v.name()); it != e.implementations.end())
        for (const auto& [k, fn] : it->second) {
          if (!backends.empty()) backends += ',';
          backends += to_string(k);
        }
      std::printf("    %-20s [%s] %s\n", v.name().c_str(), backends.c_str(), v.description().c_str());
    }
  }
  return kExitOk;
}

}  // namespace

Command add_list_command(CLI::App& app, const CommandContext& context) {
  CLI::App* list = app.add_subcommand("list", "list experiments, their axes and variants");
  return {list, [&context] { return cmd_list(make_registry(context.hooks), context.hooks.left_out_cuda); }, {}};
}

}  // namespace labrun
