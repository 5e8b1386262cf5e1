// What several commands read alike (command_inputs.hpp): result paths, one result file for diff or history, the
// registry, a sweep config's points and the options the commands share.
#include "command_inputs.hpp"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <filesystem>
#include <ostream>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "code_rev.hpp"
#include "merge.hpp"
#include "output_file.hpp"
#include "record.hpp"
#include "result_paths.hpp"
#include "sweep.hpp"

namespace labrun {

std::vector<std::string> result_paths(const std::string& arg) {
  try {
    // FILE.new-PID in a list: a write that was interrupted (src/base/output_file.hpp), refused as it is read.
    return expand_result_path(arg, refuse_partial_input);
  } catch (const ResultError& e) {
    throw std::invalid_argument(e.what());  // a bad argument: the usage exit, as every other option
  }
}

std::vector<std::string> result_paths(const std::vector<std::string>& args) {
  std::vector<std::string> files;  // each argument: a file, a comma-separated list or a folder
  for (const auto& arg : args)
    for (auto& f : result_paths(arg)) files.push_back(std::move(f));
  return files;
}

int bad_input_exit(const char* command, std::ostream& err, int code) {
  try {
    throw;
  } catch (const BadInput& e) {
    err << command << ": " << e.what() << "\n";
  } catch (const std::invalid_argument& e) {
    err << command << ": " << e.what() << "\n";
  }
  return code;
}

std::vector<Run> load_result_file(const std::string& path, const std::string& command, std::ostream& err,
                                  EmptyShard empty_shard) {
  ResultSet set;
  try {
    set = load_results({path}, LoadDepth::comparison);
  } catch (const ResultError& e) {
    throw BadInput(e.what());
  }
  for (const auto& warning : set.warnings) err << "labrun " << command << ": note: " << warning << "\n";
  std::size_t points = 0;
  for (const Run& run : set.runs) points += run.points.size();
  const bool lone_shard = set.runs.size() == 1 && is_shard(set.runs.front().header);
  if (points == 0 && !(empty_shard == EmptyShard::allow && lone_shard))
    throw BadInput(path + ": no point records (did the run stop after its header?)");
  return std::move(set.runs);
}

void add_effect_options(CLI::App& command, std::string& min_effect, const std::string& min_effect_help,
                        std::string& alpha, const std::string& alpha_help) {
  command.add_option("--min-effect", min_effect, min_effect_help);
  command.add_option("--alpha", alpha, alpha_help);
}

// CLI11's NonNegativeNumber said "not in range [0 - 1.79769e+308]" in 309 digits, and "-1" must not wrap to the
// largest size_t (case H10).
CLI::Validator count_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (!text.empty() && text.find_first_not_of("0123456789") == std::string::npos) return "";
        return "must be a non-negative integer (0, 1, 2, ...), got '" + text + "'";
      },
      "COUNT");
}

CLI::Validator non_empty(const std::string& what) {
  return CLI::Validator(
      [what](std::string& value) { return value.empty() ? "must not be empty: it takes " + what : std::string(); },
      "NONEMPTY");
}

void add_lab_option(CLI::App& command, std::vector<std::string>& overrides, const std::string& help) {
  command.add_option("--lab", overrides, help)
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

void apply_code_rev_option(const std::string& text) {
  set_code_rev_option(text);
  code_rev();
}

Registry make_registry(const DeviceHooks& hooks) {
  Registry r;
  register_builtin(r);
  if (hooks.register_cuda) hooks.register_cuda(r);
  if (hooks.register_extra) hooks.register_extra(r);
  return r;
}

SweepInput load_sweep(const std::string& config_path, const std::vector<std::string>& overrides,
                      const std::string& only, const std::string& device, const Registry& registry,
                      const DeviceHooks& hooks) {
  SweepInput in{load_config(config_path, registry), nullptr, {}, BackendKind::host};
  SweepConfig& config = in.config;
  config.lab = apply_lab_overrides(config.lab, overrides, registry);
  in.experiment = registry.find(config.experiment);
  in.points = expand(config, *in.experiment);
  if (!only.empty()) {
    in.points = filter_points(in.points, only);
    if (in.points.empty())
      throw std::invalid_argument("--only \"" + only + "\" matches none of the config's points (labrun sweep " +
                                  config_path + " --dry-run lists them)");
  }
  // The backend kind sharding and --dry-run estimate for, and whose lab section applies: the host for --device
  // cpu, a build without CUDA, or --device auto where no CUDA device is visible (as the worker will find).
  in.kind = device == "cpu" || device == "host" || !hooks.open_cuda ||
                    (device == "auto" && hooks.device_count && hooks.device_count() <= 0)
                ? BackendKind::host
                : BackendKind::cuda;
  if (const auto it = config.lab_by_backend.find(to_string(in.kind)); it != config.lab_by_backend.end())
    config.lab = apply_lab_overrides(it->second, overrides, registry);
  return in;
}

}  // namespace labrun
