// The scripts of `labrun slurm` (slurm.hpp): the job array, the merge job and the files they name. The command
// that writes and submits them, cmd_slurm, is src/commands/cmd_slurm.cpp.
#include "slurm.hpp"

#include <filesystem>
#include <regex>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "format.hpp"

namespace labrun {

namespace {

namespace fs = std::filesystem;

// A word for a bash script, in single quotes.
std::string q(const std::string& w) {
  std::string out = "'";
  for (char c : w) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

std::string base(const SlurmPlan& p) { return p.experiment + "-" + p.config_sha.substr(0, 12); }

std::string common_header(const SlurmPlan& p, const std::string& name) {
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=" + name + "\n";
  if (!p.partition.empty()) s += "#SBATCH --partition=" + p.partition + "\n";
  if (!p.account.empty()) s += "#SBATCH --account=" + p.account + "\n";
  if (!p.time.empty()) s += "#SBATCH --time=" + p.time + "\n";
  return s;
}

void require(const std::string& value, const std::regex& rule, const char* flag, const char* expected) {
  if (!value.empty() && !std::regex_match(value, rule))
    throw std::invalid_argument(std::string(flag) + ": \"" + printable(value) + "\" is not " + expected);
}

}  // namespace

void check_plan(const SlurmPlan& p) {
  static const std::regex name(R"([A-Za-z0-9_.-]+)"), names(R"([A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*)");
  static const std::regex time(
      R"((\d+|\d+:\d+|\d+:\d+:\d+|\d+-\d+|\d+-\d+:\d+|\d+-\d+:\d+:\d+|UNLIMITED|INFINITE|unlimited|infinite))");
  static const std::regex word(R"([^\s%,\x00-\x1f\x7f]+)");
  require(p.partition, names, "--partition", "a Slurm partition name or comma-separated list (letters, digits, _ . -)");
  require(p.account, name, "--account", "a Slurm account name (letters, digits, _ . -)");
  require(p.time, time, "--time", "a time sbatch takes: minutes, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or UNLIMITED");
  if (p.dir.empty()) throw std::invalid_argument("-o: must not be empty: it takes the folder for the job scripts");
  require(p.dir, word, "-o",
          "a folder path an #SBATCH line can hold and a shard's file name can carry: no whitespace, control "
          "character, '%' (Slurm splits and expands them there) or ',' (labrun reads a comma as a list of files)");
  require(p.experiment, name, "experiment", "a job name (letters, digits, _ . -)");
}

std::string shard_file(const SlurmPlan& p, const std::string& index) {
  return (fs::path(p.dir) / (base(p) + "-shard-" + index + "-of-" + std::to_string(p.shards) + ".jsonl")).string();
}

std::string merged_file(const SlurmPlan& p) { return (fs::path(p.dir) / (base(p) + "-merged.jsonl")).string(); }

std::string array_script(const SlurmPlan& p) {
  std::string s = common_header(p, "labrun-" + base(p));
  s += fmt::format("#SBATCH --array=0-{}{}\n", p.shards - 1,
                   p.array_limit > 0 ? "%" + std::to_string(p.array_limit) : "");
  s += "#SBATCH --ntasks=1\n";
  if (p.gpus_per_task > 0) s += "#SBATCH --gpus-per-task=" + std::to_string(p.gpus_per_task) + "\n";
  // One log per array task, beside the shards (%A: the array job id, %a: the task id; task a runs shard a+1).
  s += "#SBATCH --output=" + (fs::path(p.dir) / (base(p) + "-job%A-task%a.log")).string() + "\n";
  s += "# labrun: one shard of the sweep per array task; a resubmitted task replaces its own shard only.\n";
  s += "set -euo pipefail\n";
  s += "I=$((SLURM_ARRAY_TASK_ID + 1))\n";
  s += "OUT=" + q((fs::path(p.dir) / (base(p) + "-shard-")).string()) + "\"$I\"" +
       q("-of-" + std::to_string(p.shards) + ".jsonl") + "\n";
  s += "exec " + q(p.labrun) + " sweep " + q(p.config) + " --device " + q(p.device) + " --shard \"$I/" +
       std::to_string(p.shards) + "\" -o \"$OUT\" --force";
  for (const auto& e : p.extra) s += " " + q(e);
  s += "\n";
  return s;
}

std::string merge_script(const SlurmPlan& p) {
  std::string s = common_header(p, "labrun-" + base(p) + "-merge");
  s += "#SBATCH --ntasks=1\n";
  s += "#SBATCH --output=" + (fs::path(p.dir) / (base(p) + "-merge.log")).string() + "\n";
  s += "# labrun: runs after every array task succeeded (sbatch --dependency=afterok:<array job id>).\n";
  s += "set -euo pipefail\n";
  s += "exec " + q(p.labrun) + " merge -o " + q(merged_file(p)) + " --force";
  for (int i = 1; i <= p.shards; ++i) s += " " + q(shard_file(p, std::to_string(i)));
  s += "\n";
  return s;
}

std::string array_script_file(const SlurmPlan& p) { return (fs::path(p.dir) / (base(p) + "-array.sbatch")).string(); }

std::string merge_script_file(const SlurmPlan& p) { return (fs::path(p.dir) / (base(p) + "-merge.sbatch")).string(); }

std::string single_quoted(const std::string& word) { return q(word); }

}  // namespace labrun
