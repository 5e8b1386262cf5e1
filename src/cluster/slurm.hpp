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
