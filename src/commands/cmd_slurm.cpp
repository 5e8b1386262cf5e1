// `labrun slurm CONFIG --shards N`: its options (add_slurm_command) and cmd_slurm (slurm.hpp), which writes the
// job-array and merge scripts of src/cluster/slurm.hpp into the -o folder and, with --submit, submits them.
#include "slurm.hpp"

#include <sys/stat.h>

#include <CLI/CLI.hpp>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "command_inputs.hpp"
#include "commands.hpp"
#include "exit_codes.hpp"
#include "format.hpp"
#include "output_file.hpp"
#include "record.hpp"
#include "shard.hpp"

namespace labrun {

namespace {

namespace fs = std::filesystem;

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

int cmd_slurm(const SlurmPlan& p, bool submit, bool force) {
  check_plan(p);  // before anything is created
  // -o names a folder: an existing path that is not one (a regular file, a FIFO, a device, a symlink to a file) is
  // named as what it is (std::filesystem said "cannot create f: Success").
  struct stat st {};
  const bool existed = ::stat(p.dir.c_str(), &st) == 0;
  if (existed && !S_ISDIR(st.st_mode))
    throw OutputError("cannot write the scripts into " + printable(p.dir) + ": it is " +
                      describe_file_type(st.st_mode) + ", not a folder (-o names the folder for the job scripts)");
  std::error_code ec;
  fs::create_directories(p.dir, ec);
  if (ec || !fs::is_directory(p.dir))
    throw OutputError("cannot create the folder " + printable(p.dir) + ": " +
                      (ec ? ec.message() : std::string("it is not a folder")));
  // A folder this call made is removed again when the scripts cannot be written (a full disk): nothing is left
  // behind on failure.
  struct RemoveIfMade {
    const std::string& dir;
    bool made;
    bool keep = false;
    ~RemoveIfMade() {
      std::error_code ignored;
      if (made && !keep) fs::remove(dir, ignored);  // only when empty
    }
  } made{p.dir, !existed};
  const fs::path array = array_script_file(p);
  const fs::path merge = merge_script_file(p);
  // Both scripts as one writer of regular files (src/base/output_file.hpp): claimed, refused when they exist without
  // --force (before either is touched), written beside and renamed only when both were written whole (a full disk
  // never leaves an array without its merge job), executable.
  const FileClaim array_claim(array.string(), "labrun slurm"), merge_claim(merge.string(), "labrun slurm");
  write_texts_whole({{array.string(), array_script(p), force || array_claim.replace_empty()},
                     {merge.string(), merge_script(p), force || merge_claim.replace_empty()}},
                    0755);
  made.keep = true;
  std::printf("labrun slurm: %d shards of %s\n  %s\n  %s\n", p.shards, p.config.c_str(), array.c_str(), merge.c_str());
  if (!submit) {
    std::printf("submit with:\n  ARRAY=$(sbatch --parsable %s)\n  sbatch --dependency=afterok:${ARRAY%%%%;*} %s\n",
                single_quoted(array.string()).c_str(), single_quoted(merge.string()).c_str());
    std::printf("merged result: %s\n", merged_file(p).c_str());
    return kExitOk;
  }
  std::string array_id = capture("sbatch --parsable " + single_quoted(array.string()));
  array_id = array_id.substr(0, array_id.find(';'));  // "id;cluster" on a federation
  std::string merge_id = capture("sbatch --parsable --dependency=afterok:" + array_id + " " +
                                 single_quoted(merge.string()));
  merge_id = merge_id.substr(0, merge_id.find(';'));
  std::printf("submitted: array job %s (%d tasks), merge job %s (after every task succeeded)\n", array_id.c_str(),
              p.shards, merge_id.c_str());
  std::printf("when job %s is done: labrun report %s\n", merge_id.c_str(), single_quoted(merged_file(p)).c_str());
  return kExitOk;
}

namespace {

/// The slurm command's options as parsed: the plan's own, and those it passes to every task.
struct SlurmOptions {
  SlurmPlan plan;
  std::string config_path;
  std::string dir = "slurm";  ///< -o as given
  std::string only;
  std::vector<std::string> lab_overrides;
  std::string code_rev;
  bool submit = false;
  bool force = false;
};

// Adds the slurm command's options to `slurm` (in the order of its --help), parsed straight into `o`.
void add_slurm_options(CLI::App& slurm, SlurmOptions& o) {
  SlurmPlan& plan = o.plan;
  slurm.add_option("config", o.config_path, "sweep config")->required();
  slurm.add_option("--shards", plan.shards, "array tasks, one shard each")
      ->required()
      ->check(CLI::Range(1, kMaxShards));
  slurm.add_option("--partition", plan.partition, "Slurm partition");
  slurm.add_option("--gpus-per-task", plan.gpus_per_task, "GPUs per array task (0: none, host backend)")
      ->check(CLI::Range(0, 64));
  slurm.add_option("--time", plan.time, "time limit per task, as sbatch --time takes it");
  slurm.add_option("--account", plan.account, "Slurm account");
  slurm.add_option("--array-limit", plan.array_limit, "at most K tasks at once (--array=...%K)")
      ->check(CLI::Range(0, 100000));
  slurm.add_option("--device", plan.device, "the tasks' --device (default auto)");
  slurm.add_option("-o,--output", o.dir, "folder for the scripts, shards, logs and merged file (default ./slurm)")
      ->check(non_empty("the folder for the job scripts; leave -o out for ./slurm"));
  slurm.add_option("--only", o.only, "as for sweep: every task runs only the matching points")
      ->check(non_empty("a filter such as variant=index,n=1e7; leave --only out to run every point"));
  add_lab_option(slurm, o.lab_overrides, "as for sweep, KEY=VALUE, passed to every task");
  slurm.add_option("--code-rev", o.code_rev, "as for sweep, SHA[+dirty], passed to every task");
  slurm.add_flag("--submit", o.submit, "run sbatch for both and print the job ids");
  slurm.add_flag("--force", o.force, "replace the scripts of an earlier labrun slurm in the -o folder");
}

// The slurm command once parsed: the config checked as sweep loads it (--device auto), the plan completed, then
// cmd_slurm.
int run_slurm(SlurmOptions& o, const CommandContext& context) {
  const Registry registry = make_registry(context.hooks);
  const SweepInput in = load_sweep(o.config_path, o.lab_overrides, o.only, "auto", registry, context.hooks);
  SlurmPlan& plan = o.plan;
  plan.labrun = fs::read_symlink("/proc/self/exe").string();
  plan.config = fs::absolute(o.config_path).lexically_normal().string();
  plan.config_sha = in.config.sha256;
  plan.experiment = in.config.experiment;
  plan.dir = fs::absolute(o.dir).lexically_normal().string();
  if (!o.only.empty()) plan.extra.insert(plan.extra.end(), {"--only", o.only});
  if (!o.code_rev.empty()) plan.extra.insert(plan.extra.end(), {"--code-rev", o.code_rev});
  for (const auto& lab : o.lab_overrides) plan.extra.insert(plan.extra.end(), {"--lab", lab});
  return cmd_slurm(plan, o.submit, o.force);
}

}  // namespace

Command add_slurm_command(CLI::App& app, const CommandContext& context) {
  auto options = std::make_shared<SlurmOptions>();
  CLI::App* slurm = app.add_subcommand("slurm",
                                       "write (and --submit) a Slurm job array of the sweep's shards and a merge job");
  add_slurm_options(*slurm, *options);
  return {slurm, [options, &context] { return run_slurm(*options, context); }, {}};
}

}  // namespace labrun
