#include "slurm.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "exit_codes.hpp"
#include "output_file.hpp"
#include "record.hpp"

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

// Runs `command` (sbatch ...) and returns its stdout, trimmed. @throws std::runtime_error on failure.
std::string capture(const std::string& command) {
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw std::runtime_error("cannot run " + command);
  std::string out;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe)) out += buffer;
  const int status = ::pclose(pipe);
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  if (status != 0) throw std::runtime_error(command + " failed: " + out);
  return out;
}

}  // namespace

std::string shard_file(const SlurmPlan& p, const std::string& index) {
  return (fs::path(p.dir) / (base(p) + "-shard-" + index + "-of-" + std::to_string(p.shards) + ".jsonl")).string();
}

std::string merged_file(const SlurmPlan& p) { return (fs::path(p.dir) / (base(p) + "-merged.jsonl")).string(); }

std::string array_script(const SlurmPlan& p) {
  std::string s = common_header(p, "labrun-" + base(p));
  s += fmt::format("#SBATCH --array=0-{}{}\n", p.shards - 1, p.array_limit > 0 ? "%" + std::to_string(p.array_limit) : "");
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

int cmd_slurm(const SlurmPlan& p, bool submit, bool force) {
  std::error_code ec;
  fs::create_directories(p.dir, ec);
  if (!fs::is_directory(p.dir, ec)) throw OutputError("cannot create " + p.dir + ": " + ec.message());
  const fs::path array = fs::path(p.dir) / (base(p) + "-array.sbatch");
  const fs::path merge = fs::path(p.dir) / (base(p) + "-merge.sbatch");
  // Both scripts as one writer of regular files (src/output_file.hpp): claimed, refused when they exist without
  // --force (before either is touched), written beside and renamed only when both were written whole (a full disk
  // never leaves an array without its merge job), executable.
  const FileClaim array_claim(array.string(), "labrun slurm"), merge_claim(merge.string(), "labrun slurm");
  write_texts_whole({{array.string(), array_script(p), force || array_claim.replace_empty()},
                     {merge.string(), merge_script(p), force || merge_claim.replace_empty()}},
                    0755);
  std::printf("labrun slurm: %d shards of %s\n  %s\n  %s\n", p.shards, p.config.c_str(), array.c_str(), merge.c_str());
  if (!submit) {
    std::printf("submit with:\n  ARRAY=$(sbatch --parsable %s)\n  sbatch --dependency=afterok:${ARRAY%%%%;*} %s\n",
                q(array.string()).c_str(), q(merge.string()).c_str());
    std::printf("merged result: %s\n", merged_file(p).c_str());
    return kExitOk;
  }
  std::string array_id = capture("sbatch --parsable " + q(array.string()));
  array_id = array_id.substr(0, array_id.find(';'));  // "id;cluster" on a federation
  std::string merge_id = capture("sbatch --parsable --dependency=afterok:" + array_id + " " + q(merge.string()));
  merge_id = merge_id.substr(0, merge_id.find(';'));
  std::printf("submitted: array job %s (%d tasks), merge job %s (after every task succeeded)\n", array_id.c_str(),
              p.shards, merge_id.c_str());
  std::printf("when job %s is done: labrun report %s\n", merge_id.c_str(), q(merged_file(p)).c_str());
  return kExitOk;
}

}  // namespace labrun
