// The parts of the sweep driver (src/run/sweep_driver.hpp) its files share; nothing outside src/run/sweep*.cpp includes
// it.
#pragma once

#include <string>
#include <vector>

#include "point_record.hpp"
#include "sweep_driver.hpp"

namespace labrun::sweep_detail {

// ---- sweep_resume.cpp: continuing a result file ---------------------------------------------------------------

/// Every point of `file`, each once, in file order (all its segments).
std::vector<PointRecord> points_of(const std::string& file);

/// The header of a result file that is to be continued. @throws std::invalid_argument (exit 2) when it is not a
/// labrun result file of one run with a header first and each point once, or load_results refuses it.
RunHeader header_to_continue(const std::string& file);

/// Appends "its WHAT is FILE_VALUE, this run's RUN_VALUE" to `mismatches` when the two differ.
void check_same(std::vector<std::string>& mismatches, const char* what, const std::string& file_value,
                const std::string& run_value);

/// Refuses to continue `file` over `mismatches` (OutputError), or with `force` continues and says what differs.
void refuse_mismatch(const std::string& file, const std::vector<std::string>& mismatches, bool force);

/// The supervisor's check before continuing `file`: the same experiment (always), config bytes, lab settings, code
/// under test and labrun version (or `force`). @throws OutputError, std::invalid_argument.
void check_resumable(const std::string& file, const SweepConfig& config, bool force);

/// Says on stderr that SIG`signal` stopped the sweep with `finished` of `total` points kept in `where`, and the
/// command that resumes it.
void print_interrupted(int signal, std::size_t finished, std::size_t total, const std::string& where,
                       const std::vector<std::string>& argv, const std::string& output);

// ---- sweep_driver.cpp: what every way of running shares
// ---------------------------------------------------------------

/// Whether any of `records` failed (is_failure of its status): the sweep's exit code is then kExitPointsFailed.
bool any_failed(const std::vector<PointRecord>& records);

/// The worker command line for `output` (a lane's file): fresh or continuing, process "I/K" or "".
std::vector<std::string> worker_argv(const SweepArgs& a, const std::string& output, bool fresh, bool force,
                                     const std::string& process);

/// The end of a sweep: the summary table of `points`, then `line` (where the results are); the exit code from the
/// points' statuses.
int finish(const SweepPlan& plan, const std::vector<PointRecord>& points, const std::string& line);

// ---- one file each ---------------------------------------------------------------------------------------------

/// A worker (args.worker set): runs the points its file does not hold yet (sweep_worker.cpp).
int run_worker(const SweepPlan& plan, const DeviceHooks& hooks);

/// lab.processes = K > 1: K lanes one after another, pooled into the output (sweep_pooled.cpp).
int run_pooled(const SweepPlan& plan);

/// The K of the process-I-of-K.jsonl files in a pooled run's folder `dir` (0: none there).
int pooled_count_in(const std::string& dir);

/// --devices: one child supervisor per device on its fixed shard, merged at the end (sweep_devices.cpp).
int run_devices(const SweepPlan& plan, const std::vector<int>& devices);

}  // namespace labrun::sweep_detail
