// `labrun slurm`: a sweep as a Slurm job array (one shard per array task) and a merge job that runs after every
// task succeeded (--dependency=afterok). labrun writes and submits the scripts; Slurm schedules, retries and
// throttles (docs/cluster.md).
#pragma once

#include <string>
#include <vector>

namespace labrun {

/// What the job array and the merge job are made of. Paths are absolute (the jobs run from any directory).
struct SlurmPlan {
  std::string labrun;                    ///< the labrun binary the tasks run
  std::string config;                    ///< the sweep config
  std::string config_sha;                ///< its sha256: names the files, so another config never replaces them
  std::string experiment;                ///< for the job name
  std::string dir;                       ///< where the scripts, shards, logs and the merged file go
  int shards = 1;                        ///< array tasks 0..shards-1 run shards 1..shards
  int array_limit = 0;                   ///< %K: at most K tasks at once (0: no limit)
  int gpus_per_task = 1;                 ///< --gpus-per-task (0: none requested, e.g. the host backend)
  std::string partition, time, account;  ///< passed through when set
  std::string device = "auto";           ///< the tasks' --device
  std::vector<std::string> extra;        ///< --only / --lab arguments passed to every task
};

/// Refuses a plan whose values could end a line or a word of a script (case H19: shell injection through an #SBATCH
/// line, which sbatch reads but bash runs the next line of): --partition a comma-separated list of names
/// ([A-Za-z0-9_.-]), --account one name, --time one of sbatch's forms (M, M:S, H:M:S, D-H, D-H:M, D-H:M:S, or
/// UNLIMITED / INFINITE), the -o folder's absolute path and the experiment's name without whitespace, control
/// characters or '%' (an #SBATCH --output path is split at whitespace and expands '%'). Values written in a bash
/// word are single-quoted instead (single_quoted). @throws std::invalid_argument naming the flag and the rule.
void check_plan(const SlurmPlan& plan);

/// The file names of a plan, under plan.dir: <experiment>-<sha12>-shard-<I>-of-<N>.jsonl, ...-merged.jsonl.
std::string shard_file(const SlurmPlan& plan, const std::string& index);
std::string merged_file(const SlurmPlan& plan);

/// The job-array script: #SBATCH --array=0-(N-1)[%K], one log per task beside its shard (--output), each task
/// running `labrun sweep CONFIG --shard $((SLURM_ARRAY_TASK_ID+1))/N -o SHARD_FILE --force` (a resubmitted task
/// replaces its own shard only).
std::string array_script(const SlurmPlan& plan);

/// The merge job's script: `labrun merge -o MERGED SHARD_FILES... --force`, one CPU, no GPU; submitted with
/// --dependency=afterok:<array job id>.
std::string merge_script(const SlurmPlan& plan);

/// The two scripts' files under plan.dir: <base>-array.sbatch and <base>-merge.sbatch.
std::string array_script_file(const SlurmPlan& plan);
std::string merge_script_file(const SlurmPlan& plan);

/// `word` in single quotes for a bash script or command line (a ' in it written '\'').
std::string single_quoted(const std::string& word);

}  // namespace labrun
